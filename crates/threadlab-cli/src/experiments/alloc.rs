//! `alloc` (fourth seed): workers doing work that allocates and frees many small objects, the
//! way Unity's VFX update did, through (a) one size-class allocator behind a lock (the seed's
//! persistent allocator: `threadlab::sync::Mutex::named("allocator", …)`, so the recorder sees
//! the lock), (b) a thread-caching allocator (each worker thread keeps its own free lists and
//! visits the shared, locked lists only in batches, as tcmalloc's thread caches do), and (c) the
//! system allocator (glibc's malloc, itself thread-caching), each with 2 and with 5 workers, and
//! with 1 as the baseline where nobody contends. The seed measured 0.06 ms with 2 workers against
//! 2.41 ms with 5 for the same update, the time going into the allocator's lock.
//!
//! The timed runs record nothing. Afterwards (a) runs again, smaller, with the recorder on and a
//! `zone!("alloc")` / `zone!("free")` around each allocator call, once with 2 and once with 5
//! workers; both captures are saved as `alloc-locked-2w.tltrace` and `alloc-locked-5w.tltrace`
//! in the report's directory, ready for `threadlab compare`.

use crate::fmt;
use crate::fmt::{fmt_secs, group_thousands};
use crate::lab::{Ctx, ExpResult, Experiment, Outcome};
use crate::measure::median_of;
use crate::report::{svg::Chart, svg::Series, table::Table};
use std::alloc::Layout;
use std::time::Instant;
use threadlab::sync::Mutex;
use threadlab::{CachePadded, Pool};

/// The experiment.
pub struct Alloc;

/// Variant names (results.json) in table order.
const VARIANTS: [&str; 3] = ["locked", "thread-cache", "system"];

/// The object sizes (bytes); each allocation picks one.
const CLASSES: [usize; 5] = [16, 32, 64, 128, 256];
/// Slabs the size-class allocator carves its blocks from.
const SLAB: usize = 64 << 10;
/// Blocks a thread cache moves to or from the shared lists at once.
const BATCH: usize = 32;
/// Objects a task keeps alive at a time (each allocation frees the one made `LIVE` before).
const LIVE: usize = 64;
/// Rounds of arithmetic on each new object: the "work" between allocations.
const WORK: usize = 16;

/// A size-class allocator on its own (no synchronisation): one free list per class, threaded
/// through the free blocks themselves; an empty list is refilled by carving a 64 KiB slab
/// from the system allocator. Slabs go back when it is dropped.
struct FreeLists {
    heads: [*mut u8; CLASSES.len()],
    slabs: Vec<*mut u8>,
}

// SAFETY: the pointers are blocks and slabs this structure owns; moving it moves them.
unsafe impl Send for FreeLists {}

fn slab_layout() -> Layout {
    Layout::from_size_align(SLAB, 4096).expect("slab layout")
}

impl FreeLists {
    fn new() -> Self {
        FreeLists {
            heads: [std::ptr::null_mut(); CLASSES.len()],
            slabs: Vec::new(),
        }
    }

    fn alloc(&mut self, class: usize) -> *mut u8 {
        if self.heads[class].is_null() {
            self.refill(class);
        }
        let p = self.heads[class];
        // SAFETY: `p` is a free block of this class; its first word holds the next free block.
        self.heads[class] = unsafe { p.cast::<*mut u8>().read() };
        p
    }

    /// # Safety
    /// `p` must be a block of class `class` from this allocator (directly or through a thread
    /// cache that drew from it) that nobody uses any more.
    unsafe fn free(&mut self, class: usize, p: *mut u8) {
        // SAFETY: the block is ours and unused (the caller's contract), at least 16 bytes and
        // 16-aligned, so its first word can hold the link.
        unsafe { p.cast::<*mut u8>().write(self.heads[class]) };
        self.heads[class] = p;
    }

    #[cold]
    fn refill(&mut self, class: usize) {
        // SAFETY: the layout has a non-zero size.
        let slab = unsafe { std::alloc::alloc(slab_layout()) };
        if slab.is_null() {
            std::alloc::handle_alloc_error(slab_layout());
        }
        self.slabs.push(slab);
        for offset in (0..SLAB).step_by(CLASSES[class]).rev() {
            // SAFETY: each block lies inside the fresh slab, which nobody else knows of.
            unsafe { self.free(class, slab.add(offset)) };
        }
    }
}

impl Drop for FreeLists {
    fn drop(&mut self) {
        for &slab in &self.slabs {
            // SAFETY: allocated in `refill` with this layout, freed once.
            unsafe { std::alloc::dealloc(slab, slab_layout()) };
        }
    }
}

/// What a task allocates through.
trait Handle {
    fn alloc(&mut self, class: usize) -> *mut u8;
    /// # Safety
    /// `p` came from `alloc(class)` of this handle (or another handle of the same heap) and is
    /// not used any more.
    unsafe fn free(&mut self, class: usize, p: *mut u8);
}

/// One worker's thread cache: free blocks of each class, kept privately.
#[derive(Default)]
struct ThreadCache(std::cell::UnsafeCell<[Vec<*mut u8>; CLASSES.len()]>);

// SAFETY: slot `k` is only touched by worker `k`, by the one task it is running (`churn` never
// lets the worker run anything else meanwhile), so no two threads use a slot at once; the slots
// are dropped after every task finished (`run` waits for its scope).
unsafe impl Sync for ThreadCache {}

/// A heap shared by the tasks of one run.
enum Heap {
    /// (a) One allocator behind one lock.
    Locked(Mutex<FreeLists>),
    /// (b) Shared lists behind a lock, visited in batches by one cache per worker thread.
    Caching {
        central: Mutex<FreeLists>,
        caches: Vec<CachePadded<ThreadCache>>,
    },
    /// (c) The process's global allocator.
    System,
}

impl Heap {
    fn new(variant: &str, workers: usize) -> Heap {
        match variant {
            "locked" => Heap::Locked(Mutex::named("allocator", FreeLists::new())),
            "thread-cache" => Heap::Caching {
                central: Mutex::named("central-free-lists", FreeLists::new()),
                caches: (0..workers).map(|_| CachePadded::default()).collect(),
            },
            _ => Heap::System,
        }
    }

    /// A handle for one task, on the worker running it.
    fn handle(&self) -> Box<dyn Handle + '_> {
        match self {
            Heap::Locked(m) => Box::new(LockedHandle(m)),
            Heap::Caching { central, caches } => {
                let k = threadlab::current_thread_index()
                    .expect("Heap::handle: tasks run on the pool's workers")
                    % caches.len();
                // SAFETY: see `ThreadCache`: only this worker, in this task, uses slot `k` until
                // the handle is dropped at the end of the task.
                let lists = unsafe { &mut *caches[k].0.get() };
                Box::new(CacheHandle { central, lists })
            }
            Heap::System => Box::new(SystemHandle),
        }
    }
}

struct LockedHandle<'a>(&'a Mutex<FreeLists>);

impl Handle for LockedHandle<'_> {
    fn alloc(&mut self, class: usize) -> *mut u8 {
        self.0.lock().alloc(class)
    }
    unsafe fn free(&mut self, class: usize, p: *mut u8) {
        // SAFETY: forwarded contract; the heap's lists are the block's origin.
        unsafe { self.0.lock().free(class, p) }
    }
}

/// A worker's cache in use: allocations and frees stay in the worker's own lists; the shared
/// lists are visited `BATCH` blocks at a time, to refill an empty list or to return half of a
/// full one (tcmalloc's thread caches work this way).
struct CacheHandle<'a> {
    central: &'a Mutex<FreeLists>,
    lists: &'a mut [Vec<*mut u8>; CLASSES.len()],
}

impl Handle for CacheHandle<'_> {
    fn alloc(&mut self, class: usize) -> *mut u8 {
        if self.lists[class].is_empty() {
            let mut central = self.central.lock();
            for _ in 0..BATCH {
                let p = central.alloc(class);
                self.lists[class].push(p);
            }
        }
        self.lists[class].pop().unwrap_or(std::ptr::null_mut())
    }

    unsafe fn free(&mut self, class: usize, p: *mut u8) {
        self.lists[class].push(p);
        if self.lists[class].len() >= 2 * BATCH {
            let mut central = self.central.lock();
            for p in self.lists[class].drain(..BATCH) {
                // SAFETY: every block in a cache came from the shared lists and is free.
                unsafe { central.free(class, p) };
            }
        }
    }
}

struct SystemHandle;

fn class_layout(class: usize) -> Layout {
    Layout::from_size_align(CLASSES[class], 16).expect("class layout")
}

impl Handle for SystemHandle {
    fn alloc(&mut self, class: usize) -> *mut u8 {
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { std::alloc::alloc(class_layout(class)) };
        if p.is_null() {
            std::alloc::handle_alloc_error(class_layout(class));
        }
        p
    }
    unsafe fn free(&mut self, class: usize, p: *mut u8) {
        // SAFETY: allocated by `alloc` with the same layout (the caller's contract).
        unsafe { std::alloc::dealloc(p, class_layout(class)) };
    }
}

/// One task's work: `ops` allocations, each freeing the object made `LIVE` allocations earlier,
/// with a little arithmetic on every new object. Returns how many freed objects did not hold
/// what was written into them (0 unless the allocator handed one block out twice).
fn churn(heap: &Heap, ops: usize, seed: u64) -> usize {
    let mut h = heap.handle();
    let mut live = [(std::ptr::null_mut::<u8>(), 0usize, 0u64); LIVE];
    let mut x = seed | 1;
    let mut acc = 0u64;
    let mut corrupt = 0;
    let mut release = |h: &mut Box<dyn Handle + '_>, (p, class, stamp): (*mut u8, usize, u64)| {
        // SAFETY: `p` is a live block of at least 16 bytes, aligned to 16, that we wrote.
        let seen = unsafe { p.cast::<u64>().read() };
        corrupt += usize::from(seen != stamp);
        let _z = threadlab::zone!("free");
        // SAFETY: the block came from this heap and is dropped from `live` right after.
        unsafe { h.free(class, p) };
    };
    for i in 0..ops {
        let slot = i % LIVE;
        if !live[slot].0.is_null() {
            release(&mut h, live[slot]);
        }
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let class = (x % CLASSES.len() as u64) as usize;
        let p = {
            let _z = threadlab::zone!("alloc");
            h.alloc(class)
        };
        // SAFETY: a fresh block of at least 16 bytes, aligned to 16.
        unsafe { p.cast::<u64>().write(x) };
        for _ in 0..WORK {
            acc = acc.wrapping_mul(0x5851_F42D_4C95_7F2D).wrapping_add(x);
        }
        live[slot] = (p, class, x);
    }
    for entry in live.into_iter().filter(|e| !e.0.is_null()) {
        release(&mut h, entry);
    }
    std::hint::black_box(acc);
    corrupt
}

/// Runs `ops` allocations in all, in `4 × workers` tasks on `pool`; seconds taken.
fn run(pool: &Pool, heap: &Heap, ops: usize) -> Result<f64, String> {
    let tasks = 4 * pool.current_num_threads();
    let per_task = ops / tasks;
    let corrupt = std::sync::atomic::AtomicUsize::new(0);
    let start = Instant::now();
    pool.scope(|s| {
        for t in 0..tasks {
            let corrupt = &corrupt;
            s.spawn(move |_| {
                let c = churn(heap, per_task, 0x9E37_79B9_7F4A_7C15 ^ t as u64);
                // Relaxed: read after the scope returned.
                corrupt.fetch_add(c, std::sync::atomic::Ordering::Relaxed);
            });
        }
    });
    let secs = start.elapsed().as_secs_f64();
    match corrupt.into_inner() {
        0 => Ok(secs),
        n => Err(format!(
            "{n} objects were overwritten: an allocator gave a block out twice"
        )),
    }
}

/// Runs (a) with the recorder on and saves the capture; returns its path and the trace.
fn record(
    workers: usize,
    ops: usize,
    dir: &std::path::Path,
) -> Result<(std::path::PathBuf, threadlab::trace::Trace), String> {
    let pool = crate::tl::pool(workers)?;
    let heap = Heap::new("locked", workers);
    let path = dir.join(format!("alloc-locked-{workers}w.tltrace"));
    let rec = threadlab::trace::try_start(threadlab::trace::Mode::Full)
        .map_err(|e| format!("cannot record the {workers}-worker run: {e}"))?;
    let result = run(&pool, &heap, ops);
    let trace = rec.stop();
    result?;
    trace
        .save(&path)
        .map_err(|e| format!("cannot save the {workers}-worker capture: {e}"))?;
    Ok((path, trace))
}

impl Experiment for Alloc {
    fn name(&self) -> &'static str {
        "alloc"
    }

    fn description(&self) -> &'static str {
        "The fourth seed's allocator contention: small allocations and frees under one locked \
         allocator, a thread-caching allocator and the system allocator, with 2 and 5 workers; \
         the locked runs are recorded for `threadlab compare`."
    }

    fn run(&self, ctx: &Ctx) -> ExpResult {
        let ops: usize = ctx.size.pick(20_000, 6_000_000, 60_000_000);
        let recorded_ops: usize = ctx.size.pick(5_000, 100_000, 400_000);
        // The seed's 2 and 5, and 1 as the uncontended baseline.
        let mut workers: Vec<usize> = vec![1, 2, 5];
        workers.extend(ctx.threads.iter().copied());
        workers.sort_unstable();
        workers.dedup();
        // secs[variant][worker count index]
        let mut secs = vec![vec![f64::NAN; workers.len()]; VARIANTS.len()];
        let mut rows = Vec::new();
        for (wi, &w) in workers.iter().enumerate() {
            let pool = crate::tl::pool(w)?;
            for (v, name) in VARIANTS.iter().enumerate() {
                ctx.step(format!("alloc: {name}, {w} workers"));
                let heap = Heap::new(name, w);
                run(&pool, &heap, ops / 10)?; // warm-up: slabs, caches, page faults
                let mut err = None;
                let s = median_of(ctx.repeat, || {
                    run(&pool, &heap, ops).unwrap_or_else(|e| {
                        err = Some(e);
                        f64::NAN
                    })
                });
                if let Some(e) = err {
                    return Err(e);
                }
                secs[v][wi] = s;
                for (metric, value, unit) in [
                    ("seconds", s, "s"),
                    ("ns_per_op", s * 1e9 / ops as f64, "ns"),
                ] {
                    rows.push(ctx.row(
                        name,
                        format!("{} allocations + frees", group_thousands(ops as u64)),
                        w,
                        metric,
                        value,
                        unit,
                    ));
                }
            }
        }
        let at = |w: usize| workers.iter().position(|&x| x == w).unwrap_or(0);
        let (i1, i2, i5) = (at(1), at(2), at(5));
        let mut headers: Vec<String> = vec!["allocator".into()];
        headers.extend(workers.iter().map(|&w| fmt::plural(w, "worker")));
        headers.push("5 ÷ 2 workers".into());
        let header_refs: Vec<&str> = headers.iter().map(String::as_str).collect();
        let mut table = Table::new(
            format!(
                "time for {} small allocations and frees (with a little work on each object), medians of {} runs; ns per operation in brackets",
                group_thousands(ops as u64),
                ctx.repeat
            ),
            &header_refs,
        );
        for (v, name) in VARIANTS.iter().enumerate() {
            let mut row = vec![(*name).to_string()];
            for &s in &secs[v] {
                row.push(format!("{} ({:.0})", fmt_secs(s), s * 1e9 / ops as f64));
            }
            row.push(fmt::fmt_ratio(secs[v][i5] / secs[v][i2]));
            table.row(row);
        }
        let mut chart = Chart::bars(
            "alloc",
            "alloc: time for the same allocations",
            workers.iter().map(|&w| fmt::plural(w, "worker")).collect(),
            "milliseconds",
        );
        for (v, name) in VARIANTS.iter().enumerate() {
            chart.series.push(Series {
                name: (*name).into(),
                points: secs[v]
                    .iter()
                    .enumerate()
                    .map(|(i, s)| (i as f64, s * 1e3))
                    .collect(),
            });
        }
        // The captures, after every timed run.
        let mut notes = Vec::new();
        let mut captures = Vec::new();
        for w in [2, 5] {
            ctx.step(format!("alloc: recording locked, {w} workers"));
            match record(w, recorded_ops, &ctx.out) {
                Ok((p, trace)) => {
                    captures.push(p.display().to_string());
                    // Its timeline in the report, beside the other capture's.
                    ctx.keep_trace(
                        &format!("alloc-locked-{w}w"),
                        &format!("the locked allocator, {w} workers"),
                        &trace,
                    );
                }
                Err(e) => notes.push(format!("No capture: {e}.")),
            }
        }
        let mut tables = vec![table];
        if captures.len() == 2 {
            match compare_captures(&captures[0], &captures[1]) {
                Ok(t) => tables.push(t),
                Err(e) => notes.push(format!("The captures could not be compared: {e}.")),
            }
            notes.push(format!(
                "Captures of the locked allocator ({} allocations, recorder on, zones \"alloc\" and \"free\" around each call, lock \"allocator\"): {} (2 workers) and {} (5 workers). Compare them with `threadlab compare {} {}`. No figure in the table was measured while recording.",
                group_thousands(recorded_ops as u64),
                captures[0],
                captures[1],
                captures[0],
                captures[1]
            ));
        }
        notes.push(format!(
            "Every task keeps {LIVE} objects of 16–256 bytes alive, frees the oldest for each new one, and does {WORK} multiply-adds on it; 4 tasks per worker share the work, so every column does the same total. This machine runs {} thread(s) at once: workers beyond that cannot contend more, they take turns (and one preempted while holding the lock makes the others wait).",
            std::thread::available_parallelism().map_or(1, |n| n.get())
        ));
        Ok(Outcome {
            finding: finding(&secs, i1, i2, i5),
            notes,
            rows,
            tables,
            charts: vec![chart],
        })
    }
}

/// `threadlab compare` of the 2- and 5-worker captures of the locked allocator, as the fourth
/// seed compares Unity captures with 2 and 5 workers: the rows with the largest difference of
/// their total first (the allocation zone and the allocator's lock, when the lock contends).
fn compare_captures(two: &str, five: &str) -> Result<Table, String> {
    let load = |p: &str| threadlab::trace::Trace::load(p).map_err(|e| e.to_string());
    let cmp = threadlab::analysis::compare(&load(two)?, &load(five)?);
    let mut t = Table::new(
        "compare: the locked allocator's captures, 2 workers (A) against 5 (B); rows sorted by the absolute difference of their total; \"~\" = within run-to-run noise"
            .to_string(),
        &["zone / lock", "count A", "total A", "median A", "count B", "total B", "median B", "B − A", "relative"],
    );
    let ms = |ns: u64| fmt_secs(ns as f64 / 1e9);
    for r in cmp.rows.iter().take(8) {
        t.row(vec![
            r.name.clone(),
            group_thousands(r.a.count),
            ms(r.a.total_ns),
            ms(r.a.median_ns),
            group_thousands(r.b.count),
            ms(r.b.total_ns),
            ms(r.b.median_ns),
            format!(
                "{}{}",
                if r.diff_total_ns < 0 { "−" } else { "+" },
                ms(r.diff_total_ns.unsigned_abs())
            ),
            match r.relative {
                Some(x) => format!("{:+.0}%{}", x * 100.0, if r.noise { " ~" } else { "" }),
                None => "new".into(),
            },
        ]);
    }
    Ok(t)
}

/// The sentence: the locked allocator's 5-worker time against its 2-worker time (the seed's
/// comparison) and its 2-worker time against 1 worker's, then the locked allocator against the thread caches at 1, 2 and 5 workers (what
/// the lock costs with and without contention), then the other two allocators' 5 vs 2.
fn finding(secs: &[Vec<f64>], i1: usize, i2: usize, i5: usize) -> String {
    let five_vs_two = |v: usize| secs[v][i5] / secs[v][i2];
    let locked_vs_cache = |i: usize| secs[0][i] / secs[1][i];
    format!(
        "With one locked allocator, 5 workers took {} for the same allocations ({} vs {}: {}), and 2 workers took {}. The lock made the work take {} with 2 workers and {} with 5, against {} with a single worker, where nobody contends. 5 vs 2 workers: thread caches {}, system allocator {} (the seed: 0.06 ms with 2 workers vs 2.41 ms with 5).",
        fmt::longer(five_vs_two(0), "2 workers"),
        fmt_secs(secs[0][i5]),
        fmt_secs(secs[0][i2]),
        fmt::difference(five_vs_two(0)),
        fmt::longer(secs[0][i2] / secs[0][i1], "1 worker"),
        fmt::longer(locked_vs_cache(i2), "through thread caches"),
        fmt::fmt_ratio(locked_vs_cache(i5)),
        fmt::fmt_ratio(locked_vs_cache(i1)),
        fmt::fmt_ratio(five_vs_two(1)),
        fmt::fmt_ratio(five_vs_two(2)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_allocator_hands_each_block_to_one_owner() {
        let pool = crate::tl::pool(3).unwrap();
        for v in VARIANTS {
            let heap = Heap::new(v, 3);
            assert!(run(&pool, &heap, 30_000).is_ok(), "{v}");
        }
    }

    #[test]
    fn the_finding_states_the_ratios() {
        let secs = vec![
            vec![0.05, 0.1, 0.5],
            vec![0.05, 0.1, 0.1],
            vec![0.05, 0.1, 0.11],
        ];
        let f = finding(&secs, 0, 1, 2);
        assert!(
            f.contains("5 workers took 5.00× as long as 2 workers"),
            "{f}"
        );
        assert!(f.contains("about as long as through thread caches"), "{f}");
        assert!(
            f.contains("2 workers took 2.00× as long as 1 worker"),
            "{f}"
        );
        assert!(
            f.contains("5.00× with 5, against 1.00× with a single worker"),
            "{f}"
        );
    }
}
