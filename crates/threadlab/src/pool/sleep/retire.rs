//! Retiring: the elastic pool.
//!
//! With a keep-alive ([`Builder::keep_alive`](crate::Builder::keep_alive)), a worker parked
//! that long with nobody waking it *retires*: its thread exits. A retired worker is a sleeper
//! whose wake-up starts a thread instead of unparking one:
//!
//! - it stays in the sleeper list and in the `sleeping` count, so a pusher's fence pair
//!   (`README.md`) works unchanged: a pusher that sees `sleeping > 0` and nobody searching calls
//!   `wake_one`, which takes a sleeper off the list, retired or not;
//! - the decision to retire is taken under the sleeper-list lock ([`Sleep::try_retire`]): if
//!   the worker is still in the list, it marks itself retired there and leaves; if it is not, a
//!   waker took it out meanwhile and left its reason, and it stays;
//! - a waker that takes a retired worker off the list (under the same lock) clears the mark and,
//!   after the lock, starts a thread for that seat (the `restart` function `Registry` installs,
//!   `super::seat`) with the wake's meaning: counted as searching for `wake_one`, not for
//!   `wake_specific` (work in its inbox) or `wake_all` (shutdown).
//!
//! So every wake-up that would have unparked a parked worker starts a retired one: the
//! retire/return race (a push right as the last worker retires) is the lock's: the retiring
//! worker's critical section comes before the waker's (the waker then restarts it) or after it
//! (the worker then finds itself off the list and stays). `loom_models.rs` models it, and a
//! guest giving a seat back while its worker retires (`loom_guest_gives_back_*`). If the OS
//! refuses the thread, the seat goes back on the list, still retired, and the next submission
//! tries again (said once on stderr, counted in the metrics).
//!
//! Go keeps idle threads forever (`stopm` parks an M on the idle list until `startm` hands it a
//! P; `runtime/proc.go`), and so do Rayon (rayon-core's `sleep` module: a sleeping worker blocks
//! on its condvar until woken or the pool ends) and Tokio's core workers; Tokio's *blocking*
//! pool is the precedent for retiring: an idle blocking thread waits on a condvar with a
//! timeout (`thread_keep_alive`, 10 s by default, `runtime/blocking/pool.rs`) and exits when it
//! times out with nothing to do, and a later `spawn_blocking` starts a new one.

use super::{Restart, Sleep, SEARCHER, SLEEPER};
use crate::loom::sync::atomic::Ordering;

/// Said once per process: a restart failed.
static RESTART_FAILED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

impl Sleep {
    /// Installs how retired workers are started again (an elastic pool, once, before any
    /// worker can retire).
    pub(crate) fn set_restart(&self, restart: Restart) {
        let _ = self.restart.set(restart);
    }

    /// The keep-alive ran out: retire if still in the sleeper list (nobody woke us), staying
    /// there, counted as sleeping, marked retired. False if a waker took us out: its reason is
    /// in our word.
    pub(super) fn try_retire(&self, index: usize) -> bool {
        let sleepers = self.lock_sleepers();
        let listed = sleepers.contains(&index);
        if listed {
            // Relaxed: only read and written under the sleeper-list lock, held here.
            self.parkers[index].retired.store(true, Ordering::Relaxed);
        }
        listed
    }

    /// Clears and returns the retired mark of a worker just taken off the sleeper list (under
    /// its lock).
    pub(super) fn take_retired(&self, index: usize) -> bool {
        // Relaxed: under the sleeper-list lock (see `Parker::retired`).
        let retired = self.parkers[index].retired.swap(false, Ordering::Relaxed);
        if retired {
            // SeqCst: made under the sleeper-list lock, so `wait_for_restarts` after a
            // `wake_all` (which takes that lock) sees it; pairs with the decrement in `restart`.
            self.restarts_in_flight.fetch_add(1, Ordering::SeqCst);
        }
        retired
    }

    /// Waits until every restart begun before this call's caller last held the sleeper-list
    /// lock has finished (its thread started and its handle stored, or given up). Short: a
    /// thread start.
    pub(crate) fn wait_for_restarts(&self) {
        // SeqCst: pairs with the increment in `take_retired` and the decrement in `restart`.
        while self.restarts_in_flight.load(Ordering::SeqCst) > 0 {
            crate::loom::thread::yield_now();
        }
    }

    /// Starts retired worker `index`. If the OS refuses a thread, puts it back in the sleeper
    /// list, retired, undoing the waker's count: the next wake-up tries again.
    #[cold]
    pub(super) fn restart(&self, index: usize, searching: bool) {
        let started = self.restart.get().is_some_and(|r| r(index, searching));
        if started {
            // SeqCst: pairs with `wait_for_restarts`; after the new handle was stored.
            self.restarts_in_flight.fetch_sub(1, Ordering::SeqCst);
            return;
        }
        let mut sleepers = self.lock_sleepers();
        sleepers.push(index);
        // Relaxed: under the sleeper-list lock (see `Parker::retired`).
        self.parkers[index].retired.store(true, Ordering::Relaxed);
        let delta = if searching {
            SLEEPER.wrapping_sub(SEARCHER)
        } else {
            SLEEPER
        };
        self.state.fetch_add(delta, Ordering::SeqCst);
        drop(sleepers);
        // SeqCst: as above.
        self.restarts_in_flight.fetch_sub(1, Ordering::SeqCst);
        // Relaxed: only decides whether to print.
        if !RESTART_FAILED.swap(true, std::sync::atomic::Ordering::Relaxed) {
            eprintln!(
                "threadlab: could not start a thread for a retired worker of an elastic pool; \
                 its work waits for the next submission to try again (printed once per process)"
            );
        }
    }
}
