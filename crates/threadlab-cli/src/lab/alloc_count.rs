//! A counting global allocator for the `threadlab` binary: every allocation (and every
//! reallocation, counted as one allocation of its new size) is passed to the system allocator
//! and counted, so the experiments can report allocations and bytes per message or per job
//! (*Rendezvous Benchmark Analysis*'s "allocation per message" chart; the allocator-contention article's allocator lock).
//!
//! Cost: counters are spread over [`SHARDS`] cache-line-sized slots; a thread picks its slot once
//! (a `const` thread-local, no destructor, so it never allocates) and adds to it with relaxed
//! `fetch_add`s, which stay on that core's cache line unless more than [`SHARDS`] threads
//! allocate at once. [`snapshot`] sums the slots. `THREADLAB_COUNT_ALLOCS=0` turns counting off
//! (one relaxed load and a branch remain), to measure what it costs (`lab overhead` both ways).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// Number of counter slots.
const SHARDS: usize = 16;

/// The allocator installed by `main.rs`.
pub struct Counting;

#[repr(align(64))]
struct Slot {
    allocs: AtomicU64,
    bytes: AtomicU64,
}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: Slot = Slot {
    allocs: AtomicU64::new(0),
    bytes: AtomicU64::new(0),
};
static SLOTS: [Slot; SHARDS] = [EMPTY; SHARDS];
static NEXT_SLOT: AtomicUsize = AtomicUsize::new(0);
static ENABLED: AtomicBool = AtomicBool::new(true);

thread_local! {
    static MY_SLOT: Cell<usize> = const { Cell::new(usize::MAX) };
}

#[inline]
fn count(bytes: usize) {
    // Relaxed: a switch read once per allocation; `set_enabled` happens before any measurement.
    if !ENABLED.load(Ordering::Relaxed) {
        return;
    }
    let slot = MY_SLOT
        .try_with(|s| {
            let mut i = s.get();
            if i == usize::MAX {
                // Relaxed: only hands out distinct-enough numbers; no data depends on it.
                i = NEXT_SLOT.fetch_add(1, Ordering::Relaxed) % SHARDS;
                s.set(i);
            }
            i
        })
        .unwrap_or(0);
    let s = &SLOTS[slot];
    // Relaxed: plain counters; `snapshot` runs after the measured work was joined (thread join,
    // latch or channel: each a happens-before edge), so it sees every increment made before.
    s.allocs.fetch_add(1, Ordering::Relaxed);
    s.bytes.fetch_add(bytes as u64, Ordering::Relaxed);
}

// SAFETY: every method forwards to `System` with the caller's own arguments, so `System`'s
// guarantees are ours; counting only touches atomics and a const thread-local, never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: forwarded with the caller's layout, which meets `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: as in `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` through this allocator with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        // SAFETY: `ptr` came from `System` through this allocator with `layout`; the caller
        // guarantees `new_size`'s contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Turns counting on or off for the whole process.
pub fn set_enabled(on: bool) {
    // Relaxed: called once at startup, before the threads that allocate exist.
    ENABLED.store(on, Ordering::Relaxed);
}

/// Whether allocations are counted.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Allocations and bytes counted so far in the whole process.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Allocations (reallocations included).
    pub allocs: u64,
    /// Bytes asked for by those allocations.
    pub bytes: u64,
}

impl Counts {
    /// What was counted between `earlier` and `self`.
    pub fn since(self, earlier: Counts) -> Counts {
        Counts {
            allocs: self.allocs.wrapping_sub(earlier.allocs),
            bytes: self.bytes.wrapping_sub(earlier.bytes),
        }
    }

    /// (allocations, bytes) per unit of `n` (NaN when counting is off or `n` is 0).
    pub fn per(self, n: u64) -> (f64, f64) {
        if !enabled() || n == 0 {
            return (f64::NAN, f64::NAN);
        }
        (self.allocs as f64 / n as f64, self.bytes as f64 / n as f64)
    }
}

/// The process's counts so far.
pub fn snapshot() -> Counts {
    let mut c = Counts::default();
    for s in &SLOTS {
        // Relaxed: see `count`.
        c.allocs += s.allocs.load(Ordering::Relaxed);
        c.bytes += s.bytes.load(Ordering::Relaxed);
    }
    c
}

/// Runs `f` and returns what it allocated (in the whole process while it ran).
pub fn measure<R>(f: impl FnOnce() -> R) -> (R, Counts) {
    let before = snapshot();
    let r = f();
    (r, snapshot().since(before))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_this_threads_allocations() {
        // Other tests of this binary allocate at the same time: the count is at least ours.
        let (v, c) = measure(|| {
            let mut v = Vec::new();
            for i in 0..100u64 {
                v.push(Box::new(i));
            }
            v
        });
        assert_eq!(v.len(), 100);
        assert!(c.allocs >= 100, "{c:?}");
        assert!(c.bytes >= 800, "{c:?}");
    }
}
