//! Guests: a thread outside the pool that runs the pool's work on a sleeping worker's seat
//! (lent seats), and such a guest parked while it waits (waiting guests).
//!
//! A thread outside the pool that calls `install` (or `join`, `scope` on the pool) may run the
//! work itself as the *guest* of a worker that sleeps in its main loop (`worker::run_as_guest`):
//! it borrows that worker's seat (deque, heartbeat flag, index), while the worker stays parked.
//! [`Sleep::lend`] takes the worker off the sleeper list (so no waker picks it, and the pool's
//! sleeper count no longer counts it as idle) and writes [`LENT`] into its wake word under the
//! list's lock. A worker that reads `LENT` keeps parking; one whose re-check before parking
//! found work while its seat was being lent sees `LENT` in `cancel_sleep` and parks too. So the
//! seat has one user at a time, and the pool computes on at most as many threads as it has
//! workers.
//!
//! While lent, the seat's latch wake-ups (`wake_specific`) go to the guest, which parks on its own
//! thread when it waits on a latch of the seat. [`Sleep::give_back`] is the worker's own "going to
//! sleep" run by the guest: back on the list (W2), fence (F2), re-check of the shared queues and of
//! the seat's own inbox and run-next slot (R2), and a wake of the worker if that found anything: a
//! job pushed while the seat was lent, whose pusher saw one sleeper fewer, is seen by the re-check
//! or its pusher sees the worker back (the fence pair of `README.md`). The guest then asks the busy
//! workers for work, as a worker going to sleep does (`crate::heartbeat`, step 5). The loom models
//! `loom_lend_and_give_back_vs_going_to_sleep` and `loom_guest_latch_wait_vs_set` check both
//! handshakes.
//!
//! Waiting guests:
//!
//! A guest whose `join` waits for a half another worker took runs other work meanwhile, like a
//! worker; when it finds none it parks on its own thread, but it is on no sleeper list (its
//! seat's sleeper is the worker it borrowed from, which must stay parked). So that it is not
//! left idle while a busy worker promotes work (a sort's guest once parked for a whole
//! millisecond beside a promoted half), a guest about to park counts itself in a separate
//! count ([`Sleep::guest_parks`], W2), asks the busy workers for work and re-checks the queues
//! after a fence (R2); a pusher that finds nobody searching and nobody on the sleeper list
//! unparks one waiting guest ([`Sleep::notify`] after F1). The count also makes
//! [`Sleep::idle_exists`] true, so a busy worker keeps its heartbeat flag up for the guest.
//! The guest's park has a timeout as a backstop (local pushes skip F1).
//!

use super::{Sleep, WakePolicy, LENT, NOT_WOKEN, SLEEPER};
use crate::loom::sync::atomic::{fence, Ordering};
use crate::loom::thread::Thread;

impl Sleep {
    /// The guest of lent seat `index` is about to park in a latch wait: it counts as idle
    /// ([`Sleep::idle_exists`]) and new work may wake it until [`Sleep::guest_unparks`]. The
    /// SeqCst increment is W2 of the fence pair with a pusher's F1 and [`Sleep::notify`]'s read
    /// (and of the heartbeat's handshake); the caller then fences, asks the busy workers for
    /// work and re-checks the queues (R2) before it parks. False, and nothing counted, for a
    /// seat that is no worker's (a spare thread's, `super::spare`): nobody lends it, so no
    /// waker could find its thread.
    pub(crate) fn guest_parks(&self, index: usize) -> bool {
        let Some(parker) = self.parkers.get(index) else {
            return false;
        };
        // Relaxed: the mark says who takes the count back (see `unmark_guest`); the count below
        // is what the handshake orders.
        parker.guest_waiting.store(true, Ordering::Relaxed);
        self.waiting_guests.fetch_add(1, Ordering::SeqCst);
        true
    }

    /// The guest of seat `index` stopped waiting (see [`Sleep::guest_parks`]), unless a waker
    /// already took its mark and count.
    pub(crate) fn guest_unparks(&self, index: usize) {
        self.unmark_guest(index);
    }

    /// Takes the waiting mark of seat `index`'s guest and, if it was there, its place in the
    /// count; true if it was. The guest and a waker may both try: the swap lets one of them
    /// win, so the count drops once, and a stream of pushes wakes a waiting guest once.
    pub(super) fn unmark_guest(&self, index: usize) -> bool {
        let Some(parker) = self.parkers.get(index) else {
            return false;
        };
        // Relaxed: the swap alone decides who won; the count is the ordered part.
        let marked = parker.guest_waiting.swap(false, Ordering::Relaxed);
        if marked {
            self.waiting_guests.fetch_sub(1, Ordering::SeqCst);
        }
        marked
    }

    /// True while the guest of seat `index` is parked in a latch wait (a hint for the monitor,
    /// `super::spare`: that guest waits, it is not blocked in a task).
    pub(crate) fn guest_waiting(&self, index: usize) -> bool {
        // Relaxed: a hint, re-read at every look of the monitor.
        self.parkers
            .get(index)
            .is_some_and(|p| p.guest_waiting.load(Ordering::Relaxed))
    }

    /// New work and no sleeper to take it: unparks one guest parked in a latch wait, if any
    /// (see "Waiting guests" in `guests.rs`).
    #[inline]
    pub(super) fn wake_a_waiting_guest(&self) {
        // Relaxed: ordered like the caller's state read (after F1, or none for a local push,
        // whose owner is awake and runs the job anyway).
        if self.waiting_guests.load(Ordering::Relaxed) > 0 {
            self.wake_waiting_guest();
        }
    }

    /// Unparks one guest parked in a latch wait. The guest looks for work when it returns from
    /// its park, and parks again if it finds none.
    #[cold]
    #[inline(never)]
    pub(super) fn wake_waiting_guest(&self) {
        let sleepers = self.lock_sleepers();
        let guest = self
            .lock_guests()
            .iter()
            .enumerate()
            .find_map(|(i, g)| Some((i, g.as_ref()?)).filter(|_| self.unmark_guest(i)))
            .map(|(i, g)| (i, g.clone()));
        drop(sleepers);
        if let Some((index, thread)) = guest {
            crate::trace::hooks::wake(index);
            thread.unpark();
        }
    }

    /// Lends the seat of a worker that sleeps in its main loop to a guest (a thread outside the
    /// pool that runs an `install` itself, `Registry::in_worker_cold`): takes it off the sleeper
    /// list, so no waker picks it, and marks its wake word [`LENT`], so the worker keeps parking
    /// (also if its re-check before parking is still under way: `cancel_sleep` sees the mark).
    /// `None` if no such worker sleeps (or under the lazy policy, whose sleepers poll). The
    /// guest must call [`Sleep::give_back`] when it leaves.
    ///
    /// Everything the worker wrote to its seat before it joined the list happens before the
    /// guest's use of it (the list's lock); the worker touches its seat again only after
    /// `give_back` (see there).
    pub(crate) fn lend(&self, guest: Thread) -> Option<usize> {
        if self.policy == WakePolicy::Lazy {
            return None;
        }
        let mut sleepers = self.lock_sleepers();
        // The longest sleeper (wakers take the newest, whose cache is warmer). Relaxed: under the
        // lock (see `Parker::lendable`).
        let pos = sleepers.iter().position(|&i| {
            let p = &self.parkers[i];
            // A retired worker has no thread, hence no seat state to lend.
            p.lendable.load(Ordering::Relaxed) && !p.retired.load(Ordering::Relaxed)
        })?;
        let index = sleepers.remove(pos);
        self.state.fetch_sub(SLEEPER, Ordering::SeqCst);
        // Under the lock, like every reason; Relaxed suffices (the worker reads it under the lock
        // in `cancel_sleep`, or acts on it only by parking again).
        self.parkers[index].wake.store(LENT, Ordering::Relaxed);
        self.lock_guests()[index] = Some(guest);
        let ring = self.monitor_wanted();
        drop(sleepers);
        if ring {
            self.bell.ring();
        }
        Some(index)
    }

    /// The guest of seat `index` left: the worker goes back on the sleeper list (W2 of the fence
    /// pair, as if it had just gone to sleep), then, after the fence (F2), the guest re-checks
    /// on its behalf (R2: `has_work`, which must include the worker's own inbox and run-next
    /// slot); if that finds work, the worker is woken. So a job pushed while the seat was lent,
    /// whose pusher found nobody to wake, is not stranded.
    ///
    /// `has_work` must not read the seat's `WorkerThread` (on the worker's stack): once `index`
    /// is back on the list a waker may unpark the worker, which may retire and exit before the
    /// re-check runs (an elastic pool). It reads only what the registry holds for the seat.
    ///
    /// Release (the wake word's store, and the lock): the guest's writes to the seat happen
    /// before the worker's next use of it, which follows a waker's store of a reason under the
    /// same lock.
    pub(crate) fn give_back(&self, index: usize, has_work: impl Fn() -> bool) {
        {
            let mut sleepers = self.lock_sleepers();
            sleepers.push(index);
            self.lock_guests()[index] = None;
            // Relaxed: under the lock.
            self.parkers[index].lendable.store(true, Ordering::Relaxed);
            self.parkers[index].wake.store(NOT_WOKEN, Ordering::Release);
            // W2.
            self.state.fetch_add(SLEEPER, Ordering::SeqCst);
        }
        // F2.
        fence(Ordering::SeqCst);
        // R2.
        if has_work() {
            self.wake_specific(index);
        } else if self.restart.get().is_some() {
            // An elastic pool: the worker parked without its keep-alive while lent; unpark it
            // so that it reads its (cleared) word and resumes the keep-alive's count-down (not a
            // wake-up: nothing is recorded).
            self.unpark_thread(index);
        }
    }

    /// Only while holding the sleeper list's lock (the lock order).
    pub(super) fn lock_guests(&self) -> crate::loom::sync::MutexGuard<'_, Vec<Option<Thread>>> {
        self.guests.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::{Sleep, WakePolicy};

    /// A guest parked in a latch wait counts as idle until it stops waiting; a spare thread's
    /// seat (past the workers' seats) is no lent seat and is not counted (it once indexed past
    /// the workers' parkers and panicked).
    #[test]
    fn waiting_guests_count_as_idle_and_spare_seats_are_not_counted() {
        let sleep = Sleep::new(1, WakePolicy::Default);
        assert!(!sleep.idle_exists());
        assert!(!sleep.guest_parks(1), "a spare seat was counted as a guest");
        assert!(!sleep.idle_exists());
        sleep.guest_unparks(1);
        assert!(sleep.guest_parks(0));
        assert!(
            sleep.idle_exists(),
            "a waiting guest is not counted as idle"
        );
        assert!(sleep.guest_waiting(0));
        sleep.guest_unparks(0);
        assert!(!sleep.idle_exists(), "the guest's count was not taken back");
        assert!(!sleep.guest_waiting(0));
    }
}
