//! A worker going to sleep and parking: announce (W2), fence (F2), re-check (R2), park until a
//! waker leaves its reason in the worker's wake word (see "The race, and the fence pair that
//! closes it" and "Parking" in `README.md`); cancelling a sleep whose re-check found work; and
//! unparking (or restarting, `retire.rs`) a worker a waker took off the sleeper list.

use std::time::Instant;

use super::{
    Sleep, WakePolicy, Woken, LAZY_POLL, LENT, NOT_WOKEN, SEARCHER, SLEEPER, WOKEN_SEARCHING,
};
use crate::loom::sync::atomic::{fence, Ordering};

impl Sleep {
    /// Puts worker `index` to sleep: announce, fence, re-check (`has_work` and the optional
    /// latch), then park until woken. `searching` says whether it currently counts as a
    /// searcher (its count moves to the sleepers in the same atomic step). With `retire_at`,
    /// a worker still parked, unwoken, at that instant retires (`Woken::retired`; see
    /// `retire.rs`).
    #[cold]
    #[inline(never)]
    pub(crate) fn sleep(
        &self,
        index: usize,
        searching: bool,
        latch: Option<&crate::latch::CoreLatch>,
        retire_at: Option<Instant>,
        has_work: impl Fn() -> bool,
        before_park: impl FnOnce(),
    ) -> Woken {
        {
            let mut sleepers = self.lock_sleepers();
            sleepers.push(index);
            // Relaxed: under the lock, as every access (see `Parker::lendable`).
            self.parkers[index]
                .lendable
                .store(latch.is_none(), Ordering::Relaxed);
            let delta = if searching {
                SLEEPER.wrapping_sub(SEARCHER)
            } else {
                SLEEPER
            };
            // W2 of the fence pair.
            self.state.fetch_add(delta, Ordering::SeqCst);
        }
        // F2 of the fence pair.
        fence(Ordering::SeqCst);
        let sleepy = latch.map_or(true, |l| l.get_sleepy());
        // R2: re-check every queue.
        if !sleepy || has_work() {
            // `None`: a guest took our seat between our registration and our re-check; we must
            // not run until it gives the seat back, so we park like any sleeper (the guest's
            // `give_back` re-checks the queues on our behalf).
            if let Some(searching) = self.cancel_sleep(index) {
                if sleepy {
                    if let Some(l) = latch {
                        l.wake_up();
                    }
                }
                return Woken {
                    parked: false,
                    searching,
                    timed_out: false,
                    retired: false,
                };
            }
        }
        before_park();
        let parker = &self.parkers[index];
        let mut polled = false;
        let reason = loop {
            // Acquire: pairs with the Release store of the waker, so whatever it published
            // before waking us is visible. A load, then a Relaxed reset, rather than a swap: a
            // reason has one writer per sleep (the waker that took us off the sleeper list,
            // under its lock) and nobody writes it again until we re-register under that lock,
            // so consuming it needs no read-modify-write. (It also keeps the loom models
            // checkable: loom 0.7 mis-models a swap that follows another thread's plain store.)
            let reason = parker.wake.load(Ordering::Acquire);
            if reason != NOT_WOKEN && reason != LENT {
                parker.wake.store(NOT_WOKEN, Ordering::Relaxed);
                break reason;
            }
            if reason == LENT {
                // Our seat is lent to a guest: park until it is given back, without a keep-alive
                // meanwhile (we are off the sleeper list and may not retire; `give_back` unparks
                // an elastic pool's worker so that its keep-alive resumes).
                crate::loom::thread::park();
                continue;
            }
            // The keep-alive: past it, retire unless a waker took us off the list meanwhile
            // (then its reason is in our word, and the next turn reads it).
            let now = retire_at.map(|_| Instant::now());
            if let (Some(at), Some(now)) = (retire_at, now) {
                if now >= at {
                    if self.try_retire(index) {
                        return Woken {
                            parked: true,
                            searching: false,
                            timed_out: true,
                            retired: true,
                        };
                    }
                    continue;
                }
            }
            let until_retire = retire_at.zip(now).map(|(at, now)| at - now);
            if self.policy != WakePolicy::Lazy {
                match until_retire {
                    Some(left) => crate::loom::thread::park_timeout(left),
                    None => crate::loom::thread::park(),
                }
            } else if !polled {
                crate::loom::thread::park_timeout(
                    until_retire.map_or(LAZY_POLL, |l| l.min(LAZY_POLL)),
                );
                polled = true;
            } else {
                // The lazy policy's poll: leave the sleeper list and go look for work. A waker
                // that took us out of the list meanwhile left its reason, which this consumes.
                // (No seat is lent under this policy; were it, we would park on.)
                let Some(searching) = self.cancel_sleep(index) else {
                    continue;
                };
                if let Some(l) = latch {
                    l.wake_up();
                }
                return Woken {
                    parked: true,
                    searching,
                    timed_out: true,
                    retired: false,
                };
            }
        };
        if let Some(l) = latch {
            l.wake_up();
        }
        Woken {
            parked: true,
            searching: reason == WOKEN_SEARCHING,
            timed_out: false,
            retired: false,
        }
    }

    /// The re-check found something: take ourselves out of the sleeper list. If a waker already
    /// took us out, it also left its reason in our word (under the lock), which we consume.
    /// `None`: a guest took our seat ([`Sleep::lend`]); the caller must park until it is given
    /// back.
    pub(super) fn cancel_sleep(&self, index: usize) -> Option<bool> {
        let mut sleepers = self.lock_sleepers();
        if let Some(pos) = sleepers.iter().position(|&i| i == index) {
            sleepers.swap_remove(pos);
            self.state.fetch_sub(SLEEPER, Ordering::SeqCst);
            let ring = self.monitor_wanted();
            drop(sleepers);
            if ring {
                self.bell.ring();
            }
            Some(false)
        } else {
            // Acquire: pairs with the waker's Release store (made under the same lock, which
            // we hold); the reset is ours alone, as in `sleep`.
            let wake = &self.parkers[index].wake;
            let reason = wake.load(Ordering::Acquire);
            if reason == LENT {
                return None;
            }
            wake.store(NOT_WOKEN, Ordering::Relaxed);
            Some(reason == WOKEN_SEARCHING)
        }
    }

    /// Unparks worker `index`, or starts it again if it had `retired`, recording the wake on
    /// the waker's track (the arrow to the woken worker's next `park_end`). `searching`: the
    /// waker counted it as searching.
    pub(super) fn unpark(&self, index: usize, retired: bool, searching: bool) {
        crate::trace::hooks::wake(index);
        if retired {
            self.restart(index, searching);
            return;
        }
        self.unpark_thread(index);
    }

    /// Unparks the current thread of seat `index` (none yet: nothing to do).
    pub(super) fn unpark_thread(&self, index: usize) {
        let thread = self.parkers[index]
            .thread
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if let Some(thread) = thread {
            thread.unpark();
        }
    }
}
