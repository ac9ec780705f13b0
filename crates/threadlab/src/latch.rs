//! Latches: one-shot signals that a job (or a set of jobs) finished.
//!
//! The hazard (named in rayon-core's `latch.rs` too): the latch lives inside the waiter's stack
//! frame, and the moment `set` makes it visible the waiter may return and free it. So every `set`
//! copies what it needs (the registry, the worker to wake) *before* the store that publishes it,
//! and never touches `self` afterwards.
//!
//! [`CoreLatch`] has four states so a waiting worker can sleep: `UNSET` → (`SLEEPING`, announced
//! by the waiter just before it parks) → `SET`. A setter that swaps out `SLEEPING` wakes the
//! waiter; one that swaps out `UNSET` knows the waiter will see `SET` before it parks. The
//! latches that know their waiter's pool (`SpinLatch`, `CountLatch`) are the pool's, in
//! `crate::pool::worker_latch`: this file knows no pool.

use crate::loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use crate::loom::thread::Thread;

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

/// A latch that blocks an OS thread outside the pool (`install` from a plain thread): a flag and
/// the waiting thread's handle. The waiter parks until the flag is set; the setter stores the
/// flag, then unparks the waiter through a clone of its handle taken *before* the store (after
/// the store the latch may be re-armed or freed, so the setter touches it no more: the latch
/// hazard of the module doc). An `unpark` that arrives after its round ended only makes a later
/// `park` return early, and the waiter then looks at the flag again.
///
/// A mutex and a condition variable (rayon-core's `LockLatch`) cost more here: the setter
/// notified while holding the mutex, so the woken caller went straight back to sleep on that
/// mutex (two more `futex` calls and a context switch per call), and `notify_all` made a system
/// call even when the caller had not begun to wait. With the parker, a set that comes before
/// the caller parks costs no system call at all.
///
/// It blocks at once, without a spin first. A bounded spin (`spin_loop` for 5–50 µs, then the
/// condvar; with an atomic handshake so a setter that finds the waiter still spinning takes no
/// lock) was measured on the 2-core VM, loaded by other builds, and lost: an empty `install` on
/// a 1-worker pool went from about 10–20 µs to 40–65 µs, the 1,023-node tree of `lab workloads`
/// from about 24–50 µs to 125 µs, because the spinning caller takes a core from the workers it
/// waits for. Re-measure on a quiet machine with more cores before adding one.
#[derive(Debug)]
pub(crate) struct LockLatch {
    done: AtomicBool,
    /// The thread that waits: the one that made the latch (each outside thread has its own,
    /// in a thread-local).
    waiter: Thread,
}

impl LockLatch {
    /// A latch for the calling thread to wait on.
    pub(crate) fn new() -> Self {
        LockLatch {
            done: AtomicBool::new(false),
            waiter: crate::loom::thread::current(),
        }
    }

    /// Blocks until set, then re-arms for the next use. Only the thread that made the latch
    /// waits on it.
    pub(crate) fn wait_and_reset(&self) {
        // Acquire: pairs with the Release store in `set`, so what the job wrote before it set
        // the latch (its result) is visible once the flag is.
        while !self.done.load(Ordering::Acquire) {
            crate::loom::thread::park();
        }
        // Relaxed: only this thread reads the flag before the next set, and that set is ordered
        // after this store by the job's publication (the injector's or inbox's push).
        self.done.store(false, Ordering::Relaxed);
    }
}

impl Latch for LockLatch {
    unsafe fn set(this: *const Self) {
        // SAFETY: `this` is live at the call (the trait's contract); the handle is cloned before
        // the store below, which lets the waiter return and re-arm or free the latch.
        let waiter = unsafe { (*this).waiter.clone() };
        // SAFETY: still live: nothing has told the waiter yet. Release: pairs with the waiter's
        // Acquire load (the job's result is published). The latch is not touched after this.
        unsafe { (*this).done.store(true, Ordering::Release) };
        waiter.unpark();
    }
}

impl<L: Latch> Latch for &L {
    unsafe fn set(this: *const Self) {
        // SAFETY: the referent outlives the reference, which is live at the call.
        unsafe { L::set(*this) }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::loom::sync::Arc;
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
            // Relaxed: ordered after the store by the latch's Release/Acquire pair.
            assert_eq!(value.load(Ordering::Relaxed), round);
            let done = latch.done.load(Ordering::Relaxed);
            assert!(!done, "round {round}: the latch was not re-armed");
            t.join().unwrap();
        }
    }
}
