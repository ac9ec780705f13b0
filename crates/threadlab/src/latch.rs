//! Latches: one-shot signals that a job (or a set of jobs) finished.
//!
//! The hazard (named in rayon-core's `latch.rs` too): the latch lives inside the waiter's stack
//! frame, and the moment `set` makes it visible the waiter may return and free it. So every `set`
//! copies what it needs (the registry, the worker to wake) *before* the store that publishes it,
//! and never touches `self` afterwards.
//!
//! [`CoreLatch`] has four states so a waiting worker can sleep: `UNSET` → (`SLEEPING`, announced
//! by the waiter just before it parks) → `SET`. A setter that swaps out `SLEEPING` wakes the
//! waiter; one that swaps out `UNSET` knows the waiter will see `SET` before it parks.

use crate::loom::sync::atomic::{AtomicUsize, Ordering};
use crate::loom::sync::{Arc, Condvar, Mutex};
use crate::pool::registry::Registry;

/// Something that can be set once.
pub(crate) trait Latch {
    /// Marks the latch as set and wakes its waiter.
    ///
    /// # Safety
    /// `this` must be live when the call starts; it may be freed by the waiter as soon as the
    /// latch is observably set, so implementations touch it no more after that.
    unsafe fn set(this: *const Self);
}

const UNSET: usize = 0;
const SLEEPING: usize = 1;
const SET: usize = 2;

/// The state shared by the latches a worker can wait on while running other work.
#[derive(Debug)]
pub(crate) struct CoreLatch {
    state: AtomicUsize,
}

impl CoreLatch {
    pub(crate) fn new() -> Self {
        CoreLatch {
            state: AtomicUsize::new(UNSET),
        }
    }

    /// True once set. Acquire: pairs with the SeqCst swap in `set`, so the job's result written
    /// before `set` is visible to the waiter.
    #[inline]
    pub(crate) fn probe(&self) -> bool {
        self.state.load(Ordering::Acquire) == SET
    }

    /// The waiter announces it is about to park; false if the latch was set meanwhile.
    /// SeqCst: totally ordered with the swap in `set_core` (same location), so exactly one of
    /// "setter sees SLEEPING and wakes" / "waiter sees SET and does not park" happens.
    pub(crate) fn get_sleepy(&self) -> bool {
        self.state
            .compare_exchange(UNSET, SLEEPING, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }

    /// The waiter woke up: back to UNSET unless it was set meanwhile.
    pub(crate) fn wake_up(&self) {
        let _ = self
            .state
            .compare_exchange(SLEEPING, UNSET, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// Sets a latch that stays alive while its setter uses it (it is held by an `Arc`, as in
    /// `block_on`'s waker), waking worker `target` of `registry` if it announced it was going
    /// to sleep.
    pub(crate) fn set_and_wake(&self, registry: &Registry, target: usize) {
        // SAFETY: `self` is a live reference for the whole call.
        if unsafe { Self::set_core(self) } {
            registry.wake_specific(target);
        }
    }

    /// Re-arms a set latch for its next wait (`block_on` waits on one latch between polls).
    /// Only the waiter calls it, after `probe` returned true, so no `SLEEPING` state is lost.
    /// SeqCst: in the same total order as the setter's swap and the waiter's `get_sleepy`.
    pub(crate) fn reset(&self) {
        self.state.store(UNSET, Ordering::SeqCst);
    }

    /// Sets; true if the waiter announced it was going to sleep (so it must be woken).
    ///
    /// # Safety
    /// `this` is live at the call; after the swap it may be freed.
    #[inline]
    pub(crate) unsafe fn set_core(this: *const Self) -> bool {
        // SAFETY: live at the call (caller's contract); not touched after the swap.
        let old = unsafe { (*this).state.swap(SET, Ordering::SeqCst) };
        old == SLEEPING
    }
}

/// A latch for a worker that waits while running other work (`join`, cross-pool `install`).
pub(crate) struct SpinLatch<'r> {
    pub(crate) core: CoreLatch,
    registry: &'r Arc<Registry>,
    target: usize,
    /// Set from another pool's worker: the setter keeps the registry alive itself.
    cross: bool,
}

impl<'r> SpinLatch<'r> {
    pub(crate) fn new(registry: &'r Arc<Registry>, target: usize) -> Self {
        SpinLatch {
            core: CoreLatch::new(),
            registry,
            target,
            cross: false,
        }
    }

    /// For a worker of `registry` waiting on a job that runs in another pool.
    pub(crate) fn cross(registry: &'r Arc<Registry>, target: usize) -> Self {
        SpinLatch {
            cross: true,
            ..SpinLatch::new(registry, target)
        }
    }

    #[inline]
    pub(crate) fn probe(&self) -> bool {
        self.core.probe()
    }
}

impl Latch for SpinLatch<'_> {
    #[inline]
    unsafe fn set(this: *const Self) {
        // SAFETY: `this` is live until the swap inside set_core; everything needed afterwards
        // is copied out first. A same-pool setter is a worker of the target's registry, which
        // holds it alive; a cross-pool setter clones the Arc.
        unsafe {
            let target = (*this).target;
            let keep_alive = if (*this).cross {
                Some(Arc::clone((*this).registry))
            } else {
                None
            };
            let registry: *const Registry = &**(*this).registry;
            if CoreLatch::set_core(&(*this).core) {
                (*registry).wake_specific(target);
            }
            drop(keep_alive);
        }
    }
}

/// A latch that blocks an OS thread outside the pool (`install` from a plain thread).
///
/// It blocks at once, without a spin first. A bounded spin (`spin_loop` for 5–50 µs, then the
/// condvar; with an atomic handshake so a setter that finds the waiter still spinning takes no
/// lock) was measured on the 2-core VM, loaded by other builds, and lost: an empty `install` on
/// a 1-worker pool went from about 10–20 µs to 40–65 µs, the 1,023-node tree of `lab workloads`
/// from about 24–50 µs to 125 µs, because the spinning caller takes a core from the workers it
/// waits for. Re-measure on a quiet machine with more cores before adding one.
#[derive(Debug)]
pub(crate) struct LockLatch {
    done: Mutex<bool>,
    cv: Condvar,
}

impl LockLatch {
    pub(crate) fn new() -> Self {
        LockLatch {
            done: Mutex::new(false),
            cv: Condvar::new(),
        }
    }

    /// Blocks until set, then re-arms for the next use.
    pub(crate) fn wait_and_reset(&self) {
        let mut done = self.done.lock().unwrap_or_else(|e| e.into_inner());
        while !*done {
            done = self.cv.wait(done).unwrap_or_else(|e| e.into_inner());
        }
        *done = false;
    }
}

impl Latch for LockLatch {
    unsafe fn set(this: *const Self) {
        // SAFETY: the waiter cannot observe `done` (and free the latch) before we release the
        // mutex, and we notify while holding it.
        unsafe {
            let mut done = (*this).done.lock().unwrap_or_else(|e| e.into_inner());
            *done = true;
            (*this).cv.notify_all();
        }
    }
}

impl<L: Latch> Latch for &L {
    unsafe fn set(this: *const Self) {
        // SAFETY: the referent outlives the reference, which is live at the call.
        unsafe { L::set(*this) }
    }
}

/// Counts outstanding jobs of a scope; set when the count reaches zero. It starts at
/// [`CountLatch::BODY`], a bias that stands for the scope's body and for every job the body's
/// own worker spawned before the body returned (those are counted without atomics by the scope
/// and subtracted in one step by [`CountLatch::release`]).
pub(crate) struct CountLatch {
    pub(crate) core: CoreLatch,
    count: AtomicUsize,
    registry: *const Registry,
    target: usize,
}

// SAFETY: `registry` points to a Registry kept alive by the scope's owner (a worker of it) for the
// whole life of the latch; the other fields are atomics.
unsafe impl Send for CountLatch {}
// SAFETY: as above.
unsafe impl Sync for CountLatch {}

impl CountLatch {
    /// The initial bias: larger than any number of jobs, so the count cannot reach zero before
    /// the body released it.
    pub(crate) const BODY: usize = usize::MAX / 2;

    pub(crate) fn new(registry: &Arc<Registry>, target: usize) -> Self {
        CountLatch {
            core: CoreLatch::new(),
            count: AtomicUsize::new(Self::BODY),
            registry: &**registry,
            target,
        }
    }

    /// A latch set after exactly `n` (at least 1) calls of [`Latch::set`], with no body bias:
    /// the partitioners count the chunks of a loop with it.
    pub(crate) fn with_count(registry: &Arc<Registry>, target: usize, n: usize) -> Self {
        debug_assert!(n > 0, "CountLatch::with_count: a count of 0 is never set");
        CountLatch {
            count: AtomicUsize::new(n),
            ..CountLatch::new(registry, target)
        }
    }

    /// One more job to wait for. Relaxed: the increment happens before the job is pushed
    /// (which publishes it with Release), and the count cannot reach zero meanwhile because the
    /// caller is itself counted (the body, or a running job of the scope).
    #[inline]
    pub(crate) fn increment(&self) {
        self.count.fetch_add(1, Ordering::Relaxed);
    }
}

impl Latch for CountLatch {
    /// One job finished.
    #[inline]
    unsafe fn set(this: *const Self) {
        // SAFETY: forwarded.
        unsafe { Self::release(this, 1) }
    }
}

impl CountLatch {
    /// Subtracts `n`; the one that reaches zero sets the core latch and wakes the waiter.
    ///
    /// # Safety
    /// `this` is live at the call; it may be freed as soon as the count reaches zero.
    #[inline]
    pub(crate) unsafe fn release(this: *const Self, n: usize) {
        // SAFETY: live until the count reaches zero and the core is set; the fields we need
        // afterwards are copied first.
        unsafe {
            // AcqRel: the jobs' effects (Release) are visible to whoever takes the count to zero
            // (Acquire), which then publishes them through the core latch's SeqCst swap.
            if (*this).count.fetch_sub(n, Ordering::AcqRel) != n {
                return;
            }
            let registry = (*this).registry;
            let target = (*this).target;
            if CoreLatch::set_core(&(*this).core) {
                (*registry).wake_specific(target);
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::time::Duration;

    /// One latch, re-armed 200 times, set by another thread either at once or after a pause
    /// (so the waiter is surely blocked): every wait sees exactly its own round's value, so no
    /// round returns early on the previous round's `done`.
    #[test]
    fn lock_latch_reused_across_rounds() {
        let latch = Arc::new(LockLatch::new());
        let value = Arc::new(AtomicUsize::new(0));
        for round in 1..=200usize {
            let (l, v) = (Arc::clone(&latch), Arc::clone(&value));
            let t = std::thread::spawn(move || {
                if round % 4 == 0 {
                    std::thread::sleep(Duration::from_millis(1));
                }
                // Relaxed: published to the waiter by the latch's mutex.
                v.store(round, Ordering::Relaxed);
                // SAFETY: `l` keeps the latch alive for the whole call.
                unsafe { Latch::set(&*l) };
            });
            latch.wait_and_reset();
            // Relaxed: ordered after the store by the latch's mutex.
            assert_eq!(value.load(Ordering::Relaxed), round);
            let done = *latch.done.lock().unwrap();
            assert!(!done, "round {round}: the latch was not re-armed");
            t.join().unwrap();
        }
    }
}
