//! Nested scopes cost no allocation and no system call in steady state: a scope's job arena takes
//! its chunks from the owner worker's cache (`src/arena.rs`, "Chunks outlive scopes"), so after a
//! warm-up run, further runs of a skynet-shaped nest (a scope per call, ten spawns per scope)
//! allocate nothing at all. A test binary of its own, because a counting global allocator counts
//! the whole process. Also a deep nest (depth 6, fan-out 10) returns the right sum on 1 and 2
//! workers.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use threadlab::Pool;

mod pool_support;
use pool_support::watchdog;

struct Counting;

static ALLOCS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged; only counts the calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // Relaxed: a statistic read after the work is joined.
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded from the caller.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded from the caller.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // Relaxed: as in `alloc`.
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded from the caller.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// The tests of this binary run one at a time: the allocation count is process-wide.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// skynet (atemerev/skynet): the call for `num` at `size` opens a scope, spawns `div` children,
/// each covering `size / div` numbers, and sums their results; a leaf returns its number.
/// Returns the sum and counts the scopes opened.
fn skynet(num: u64, size: u64, div: u64, scopes: &AtomicUsize) -> u64 {
    if size == 1 {
        return num;
    }
    scopes.fetch_add(1, Ordering::Relaxed);
    let mut sums = [0u64; 16];
    let child = size / div;
    threadlab::scope(|s| {
        for (i, slot) in sums[..div as usize].iter_mut().enumerate() {
            s.spawn(move |_| *slot = skynet(num + i as u64 * child, child, div, scopes));
        }
    });
    sums.iter().sum()
}

/// The sum of 0..10^depth, and the scopes of a fan-out-10 nest of that depth.
fn expected(depth: u32) -> (u64, usize) {
    let n = 10u64.pow(depth);
    (n * (n - 1) / 2, (0..depth).map(|d| 10usize.pow(d)).sum())
}

#[test]
fn deep_nest_returns_the_right_sum() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    watchdog(|| {
        let depth = if cfg!(miri) { 2 } else { 6 };
        for threads in [1, 2] {
            let pool = Pool::builder().threads(threads).build().unwrap();
            let scopes = AtomicUsize::new(0);
            let sum = pool.install(|| skynet(0, 10u64.pow(depth), 10, &scopes));
            assert_eq!(
                (sum, scopes.into_inner()),
                expected(depth),
                "{threads} workers"
            );
        }
    });
}

#[test]
fn nested_scopes_allocate_nothing_after_warm_up() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    watchdog(|| {
        let depth = if cfg!(miri) { 2 } else { 4 };
        for threads in [1, 2] {
            let pool = Pool::builder().threads(threads).build().unwrap();
            let scopes = AtomicUsize::new(0);
            let run = || pool.install(|| skynet(0, 10u64.pow(depth), 10, &scopes));
            // Warm-up: each worker's chunk cache fills to its deepest nest, deques grow. A cache
            // grows (one 64 KiB chunk, once) when its worker reaches a nest deeper than it ever
            // did: a worker waiting in one scope runs a stolen task that opens more (work while
            // waiting), and a caller from outside borrows whichever worker's seat slept longest,
            // so the deepest nest can come after the first runs (a backtrace of the one
            // allocation Miri saw after 3 warm-up runs: `ChunkCache::take` under
            // `WorkerThread::wait_until`). So: at least 3 runs, and until three runs in a row
            // allocate nothing (at most 30).
            let mut quiet = 0;
            for i in 0..30 {
                let before = ALLOCS.load(Ordering::Relaxed);
                run();
                quiet = if ALLOCS.load(Ordering::Relaxed) == before {
                    quiet + 1
                } else {
                    0
                };
                if i >= 2 && quiet >= 3 {
                    break;
                }
            }
            scopes.store(0, Ordering::Relaxed);
            let before = ALLOCS.load(Ordering::Relaxed);
            // Under Miri a run is 11 scopes: on 2 workers 5 runs made the 1% bound below round
            // to zero (a stricter test than the native one, which a single cache growth broke);
            // 20 runs give it the same meaning as natively. On 1 worker the bound is zero
            // whatever the count, so 5 runs there, as natively.
            let runs: usize = if cfg!(miri) && threads == 2 { 20 } else { 5 };
            for _ in 0..runs {
                assert_eq!(run(), expected(depth).0);
            }
            let allocs = ALLOCS.load(Ordering::Relaxed) - before;
            let scopes = scopes.into_inner();
            assert_eq!(scopes, runs * expected(depth).1);
            // Before the per-worker chunk cache every scope allocated a chunk (one `mmap`), so
            // this was at least `scopes` (5,555 scopes here). Now none is per scope. On 2 workers
            // a few still happen, more when the machine is loaded (seen: 1 in CI, up to 8 on a
            // loaded machine): a cache growing to a nest deeper than the warm-up reached (see
            // above), once per new depth; so on 2 workers, under 1% of the scopes allocate.
            let bound = if threads == 1 { 0 } else { scopes / 100 };
            assert!(
                allocs <= bound,
                "{threads} workers: {allocs} allocations for {scopes} nested scopes (at most \
                 {bound})"
            );
        }
    });
}
