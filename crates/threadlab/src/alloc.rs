//! Allocation accounting in recordings: a wrapper allocator a program installs as its
//! `#[global_allocator]`, so that each zone and task of a recording carries the allocations and
//! bytes it asked for, and the doctor can name allocation-heavy tasks.
//!
//! ```
//! use threadlab::alloc::Counting;
//! use std::alloc::System;
//!
//! // In a program: `#[global_allocator] static A: Counting<System> = Counting::new(System);`
//! static A: Counting<System> = Counting::new(System);
//! let (count, _bytes) = threadlab::alloc::thread_counts();
//! // Nothing counted here: `A` is not this doctest's global allocator.
//! assert_eq!(count, 0);
//! # let _ = &A;
//! ```
//!
//! How it works (Tracy's memory profiling reduced to counts: Tracy marks each allocation and
//! free with `TracyAlloc`/`TracyFree` placed in the allocator's overloads and keeps "memory
//! statistics of each zone" — Bartosz Taudul, "Tracy Profiler" manual, 2018–, "Memory
//! profiling"): every `alloc`, `alloc_zeroed` and `realloc` (a
//! reallocation counts as one allocation of its new size) adds one and its size to two counters
//! of the calling thread, plain `Cell<u64>`s in a `const` thread-local. Such a thread-local has
//! no destructor and needs no lazy initialisation, so the allocator never allocates, never
//! registers a destructor and never re-enters itself, not even while the thread exits; no
//! atomic and no shared cache line is touched. `dealloc` is not counted. When a recording is on
//! and the allocator has counted anything, each zone and task span writes the thread's two
//! counters next to its begin and its end record (one more record each); the decoder
//! turns the difference into an [`EventKind::Allocs`](crate::trace::EventKind::Allocs) event
//! right before the span's end, so a span's figures include its children's.
//!
//! Cost: two thread-local additions per allocation (measured: see `docs/recording.md`); with no
//! recording on, spans pay nothing more (the check sits behind the recorder's own on/off
//! branch).

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

/// A global allocator that forwards to `A` and counts each thread's allocations and bytes, for
/// recordings to attribute to zones and tasks (see the module doc).
///
/// ```
/// use std::alloc::System;
/// #[global_allocator]
/// static ALLOC: threadlab::alloc::Counting<System> = threadlab::alloc::Counting::new(System);
///
/// let rec = threadlab::trace::start();
/// {
///     let _z = threadlab::zone!("build");
///     let v: Vec<Box<u64>> = (0..100).map(Box::new).collect();
///     drop(v);
/// }
/// let trace = rec.stop();
/// let allocs: u64 = trace.threads().iter().flat_map(|t| t.events().iter()).filter_map(|e| match e.kind {
///     threadlab::trace::EventKind::Allocs { count, .. } => Some(count),
///     _ => None,
/// }).sum();
/// assert!(allocs >= 101);
/// ```
#[derive(Debug, Default)]
pub struct Counting<A> {
    inner: A,
}

impl<A> Counting<A> {
    /// Wraps `inner` (usually `std::alloc::System`).
    pub const fn new(inner: A) -> Counting<A> {
        Counting { inner }
    }
}

thread_local! {
    /// This thread's allocations and bytes so far: `const`, no destructor (see the module doc).
    static COUNTS: (Cell<u64>, Cell<u64>) = const { (Cell::new(0), Cell::new(0)) };
}

/// Set once a `Counting` allocator has counted an allocation: spans record counts from then on.
static ACTIVE: AtomicBool = AtomicBool::new(false);

#[inline(always)]
fn count(bytes: usize) {
    COUNTS.with(|(n, b)| {
        n.set(n.get() + 1);
        b.set(b.get() + bytes as u64);
        if n.get() == 1 {
            // Relaxed: a flag only; a span that misses it records no counts, which is what a
            // span did before the allocator was in use.
            ACTIVE.store(true, Ordering::Relaxed);
        }
    });
}

/// The calling thread's allocations and bytes counted so far by a [`Counting`] allocator
/// (`(0, 0)` when none is installed).
pub fn thread_counts() -> (u64, u64) {
    COUNTS.with(|(n, b)| (n.get(), b.get()))
}

/// Whether a [`Counting`] allocator is installed and has counted something.
#[inline(always)]
pub fn counting() -> bool {
    // Relaxed: see `count`.
    ACTIVE.load(Ordering::Relaxed)
}

// SAFETY: every method forwards to `inner` with the caller's own arguments, so `inner`'s
// guarantees are ours; counting touches only a `const`, destructor-free thread-local and one
// flag, and never allocates.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Counting<A> {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: forwarded with the caller's layout, which meets `GlobalAlloc::alloc`'s contract.
        unsafe { self.inner.alloc(layout) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: as in `alloc`.
        unsafe { self.inner.alloc_zeroed(layout) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `inner` through this allocator with this layout.
        unsafe { self.inner.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        // SAFETY: `ptr` came from `inner` through this allocator with `layout`; the caller
        // guarantees `new_size`'s contract.
        unsafe { self.inner.realloc(ptr, layout, new_size) }
    }
}
