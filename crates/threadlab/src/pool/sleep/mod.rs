//! The sleep protocol: how idle workers search, spin, park, get woken and (in an elastic pool)
//! retire, without losing a wake-up and without burning CPU while the pool is idle.
//!
//! The design and why no wake-up is lost (the packed state, the three rules, the fence pair,
//! the wake policies, work for one worker, parking) are in `README.md` beside this file, as
//! rayon-core keeps its `sleep/README.md`. The ideas are Go's (`runtime/proc.go`: spinning Ms,
//! `wakep`, the "nmspinning" handshake) and Tokio's (`scheduler/multi_thread/idle.rs`: packed
//! state, at most half the workers searching); the code is our own. Here: the state, the wake
//! side (`notify`, `wake_one`, `wake_specific`, `wake_all`); in `park.rs`, a worker going to
//! sleep and parking; in `retire.rs`, an elastic pool's workers retiring and starting again; in
//! `guests.rs`, seats lent to guests and guests waiting; in `monitor.rs`, the spare-thread
//! monitor's sleep. The loom models of all four are in `loom_models.rs`.

mod guests;
mod monitor;
mod park;
mod retire;

use std::sync::OnceLock;
use std::time::Duration;

use crate::loom::thread::Thread;

use crate::loom::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use crate::loom::sync::Mutex;
use crate::util::CachePadded;

/// One searcher in the packed state.
const SEARCHER: u64 = 1;
/// One sleeper in the packed state.
const SLEEPER: u64 = 1 << 32;

/// The pool-wide counts: searching workers in the low 32 bits, sleeping workers in the high 32.
#[derive(Copy, Clone, PartialEq, Eq)]
pub(crate) struct State(u64);

impl State {
    pub(crate) fn searching(self) -> u32 {
        self.0 as u32
    }
    pub(crate) fn sleeping(self) -> u32 {
        (self.0 >> 32) as u32
    }
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State")
            .field("searching", &self.searching())
            .field("sleeping", &self.sleeping())
            .finish()
    }
}

/// How long a sleeping worker parks under [`WakePolicy::Lazy`] before it searches again.
pub(crate) const LAZY_POLL: Duration = Duration::from_millis(1);

/// How new work wakes sleeping workers; chosen with
/// [`Builder::wake_policy`](crate::Builder::wake_policy). The lab's `rendezvous` experiment
/// compares them.
///
/// ```
/// use threadlab::{Pool, WakePolicy};
/// let pool = Pool::builder().threads(2).wake_policy(WakePolicy::Lazy).build()?;
/// assert_eq!(pool.block_on(async { 6 * 7 }), 42);
/// # Ok::<(), threadlab::BuildError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum WakePolicy {
    /// Wake one sleeper for new work only when no worker is searching; a woken future, which
    /// goes to the run-next slot of the awake worker that woke it, wakes nobody.
    #[default]
    Default,
    /// Wake one sleeper (if any) for every new task, woken futures included, as cats-effect and
    /// `ForkJoinPool` do.
    Eager,
    /// Never wake on submit; sleeping workers park for at most 1 ms and then look for work (as
    /// Kyo does).
    Lazy,
}

/// What kind of submission [`Sleep::notify`] is told about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Submit {
    /// Work pushed by a thread that will not run it itself (the injector, from outside the pool
    /// or another pool), or more work seen by the last searcher (rule 3): needs fence F1.
    External,
    /// Work a worker pushed onto its own deque (see [`Sleep::notify_local_work`]).
    Local,
    /// A woken future placed in the waking worker's run-next slot.
    RunNext,
    /// A task re-queued at the back (a yield, or its budget ran out) by a worker that will look
    /// there itself; `others_waiting` says whether other work is queued too.
    Yield {
        /// Other work was waiting when the task was re-queued.
        others_waiting: bool,
    },
}

/// Wake reasons handed to a parked worker.
const NOT_WOKEN: u32 = 0;
/// Woken for a specific reason (its latch was set, or shutdown): not counted as searching.
const WOKEN: u32 = 1;
/// Woken because of new work: the waker already counted it as searching.
const WOKEN_SEARCHING: u32 = 2;
/// The worker's seat is lent to a guest ([`Sleep::lend`]): it stays parked until the seat is
/// given back ([`Sleep::give_back`]).
const LENT: u32 = 3;

#[derive(Default)]
struct Parker {
    wake: AtomicU32,
    /// The seat's current thread (a restarted worker registers its new thread here).
    thread: Mutex<Option<Thread>>,
    /// The worker retired (its thread exited) and waits in the sleeper list to be restarted.
    /// Read and written only under the sleeper-list lock, which orders it: Relaxed.
    retired: AtomicBool,
    /// The worker sleeps with nothing on its stack (in its main loop, not in a latch wait), so
    /// its seat may be lent (unless it retired). Written and read under the sleeper-list lock
    /// only; an atomic only because `Sleep` is shared.
    lendable: AtomicBool,
    /// The guest of this lent seat is parked in a latch wait ([`Sleep::guest_parks`]): new work
    /// anywhere in the pool may wake it ([`Sleep::notify`]).
    guest_waiting: AtomicBool,
}

/// Starts a thread for retired worker `index`, counted as searching if the flag says so; false
/// if the OS refused (see `super::seat`; `retire.rs`).
pub(crate) type Restart = Box<dyn Fn(usize, bool) -> bool + Send + Sync>;

/// What happened in [`Sleep::sleep`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Woken {
    /// The worker actually parked (rather than cancelling after the re-check).
    pub(crate) parked: bool,
    /// The worker is now counted as searching.
    pub(crate) searching: bool,
    /// The park ended by its timeout ([`WakePolicy::Lazy`]), not because somebody woke it.
    pub(crate) timed_out: bool,
    /// The worker retired: its thread must leave (see `retire.rs`).
    pub(crate) retired: bool,
}

/// The idle-worker bookkeeping of one pool.
pub(crate) struct Sleep {
    state: CachePadded<AtomicU64>,
    /// Indices of the workers that are sleeping. Only touched on the slow paths (going to sleep,
    /// waking somebody), never by a push that finds a searcher.
    sleepers: Mutex<Vec<usize>>,
    parkers: Box<[CachePadded<Parker>]>,
    /// The guest thread of each lent seat ([`Sleep::lend`]), woken by [`Sleep::wake_specific`]
    /// when it waits on a latch. Locked only while the sleeper list's lock is held.
    guests: Mutex<Vec<Option<Thread>>>,
    num_workers: usize,
    policy: WakePolicy,
    /// Set by an elastic pool (`super::seat`): how a retired worker is started again.
    restart: OnceLock<Restart>,
    /// Retired workers taken off the sleeper list whose restart has not finished yet.
    restarts_in_flight: AtomicUsize,
    /// The pool's monitor (`super::spare`) sleeps until a worker leaves the sleeper list: set
    /// under the list's lock by [`Sleep::monitor_may_sleep`] when every worker is on it; taken
    /// (and the monitor rung) by whoever next takes a worker off the list or lends a seat, under
    /// the same lock. Relaxed everywhere: only read and written under that lock.
    monitor_asleep: AtomicBool,
    /// Rings the monitor awake.
    pub(crate) bell: crate::pool::bell::Bell,
    /// How many guests are parked in a latch wait (see "Waiting guests" in `guests.rs`).
    waiting_guests: CachePadded<AtomicUsize>,
}

impl Sleep {
    pub(crate) fn new(num_workers: usize, policy: WakePolicy) -> Self {
        Sleep {
            state: CachePadded::new(AtomicU64::new(0)),
            sleepers: Mutex::new(Vec::with_capacity(num_workers)),
            parkers: (0..num_workers).map(|_| CachePadded::default()).collect(),
            guests: Mutex::new((0..num_workers).map(|_| None).collect()),
            num_workers,
            policy,
            restart: OnceLock::new(),
            restarts_in_flight: AtomicUsize::new(0),
            monitor_asleep: AtomicBool::new(false),
            bell: crate::pool::bell::Bell::default(),
            waiting_guests: CachePadded::new(AtomicUsize::new(0)),
        }
    }

    /// The pool's wake policy.
    pub(crate) fn policy(&self) -> WakePolicy {
        self.policy
    }

    /// Called by each worker (each thread of a restarted worker too) on its own thread before
    /// it can be parked.
    pub(crate) fn register_thread(&self, index: usize) {
        *self.parkers[index]
            .thread
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(crate::loom::thread::current());
    }

    /// A snapshot of the packed counts (for metrics and debugging).
    pub(crate) fn state(&self) -> State {
        State(self.state.load(Ordering::SeqCst))
    }

    /// True when some worker is searching or sleeping, i.e. could take work. SeqCst: the load
    /// of the heartbeat handshake (`crate::heartbeat`, step 5).
    /// A guest parked in a latch wait counts too (see "Waiting guests" in `guests.rs`).
    pub(crate) fn idle_exists(&self) -> bool {
        let state = self.state();
        state.searching() > 0
            || state.sleeping() > 0
            || self.waiting_guests.load(Ordering::SeqCst) > 0
    }

    /// Rule 1: become a searcher unless about half the workers already are. The check and the
    /// increment are not one atomic step, so the bound is approximate (as in Tokio).
    pub(crate) fn try_start_searching(&self) -> bool {
        let state = self.state();
        if 2 * state.searching() as usize >= self.num_workers.max(2) {
            return false;
        }
        self.state.fetch_add(SEARCHER, Ordering::SeqCst);
        true
    }

    /// Rule 3: a searcher found work. Returns true when it was the last searcher; then the caller
    /// must re-check the queues (after the fence here) and call [`Sleep::notify_work`] if it
    /// sees more work.
    pub(crate) fn stop_searching(&self) -> bool {
        let prev = State(self.state.fetch_sub(SEARCHER, Ordering::SeqCst));
        debug_assert!(
            prev.searching() > 0,
            "stop_searching: negative searching count"
        );
        if prev.searching() == 1 && prev.sleeping() > 0 {
            // The second fence of the pair (`README.md`): our decrement is ordered before
            // the caller's re-check of the queues.
            fence(Ordering::SeqCst);
            return true;
        }
        false
    }

    /// Rule 2: work was just published by a thread that will not run it itself; wake one sleeper
    /// if nobody is searching (as the policy says).
    #[inline]
    pub(crate) fn notify_work(&self) {
        self.notify(Submit::External);
    }

    /// Work was just put into worker `index`'s inbox: wake that worker if it sleeps (see "Work
    /// for one worker" in `README.md`).
    #[inline]
    pub(crate) fn notify_worker(&self, index: usize) {
        // F1 of the fence pair: the inbox push (before this call) is ordered before the read.
        fence(Ordering::SeqCst);
        if self.state().sleeping() > 0 {
            self.wake_specific(index);
        }
    }

    /// Rule 2 for work pushed onto the pushing worker's *own* deque: the same check without the
    /// fence. This is the hot path of `join` and `spawn`, and the fence costs about as much as
    /// the rest of the push.
    ///
    /// Without F1 the pusher's state read may pass its push (a store-load reordering), so in a
    /// narrow window a worker going to sleep can miss the job while the pusher misses the
    /// sleeper. That loses parallelism, never progress: the job sits in the deque of a worker
    /// that is awake by definition (it just pushed it), which pops it (`join`, the worker loop) or
    /// re-checks its own deque before it parks; and the next push repeats the check. (Rayon's
    /// `new_internal_jobs` makes the same trade.) Work from outside the pool, whose pusher will
    /// not run it, always takes [`Sleep::notify_work`] with the fence.
    #[inline]
    pub(crate) fn notify_local_work(&self) {
        self.notify(Submit::Local);
    }

    /// The one place the [`WakePolicy`] branches: what a submission of kind `submit` does to
    /// the sleepers (see "Wake policies" in `README.md`).
    #[inline]
    pub(crate) fn notify(&self, submit: Submit) {
        match self.policy {
            WakePolicy::Lazy => {}
            WakePolicy::Eager => {
                if submit == Submit::External {
                    // F1 (the policy wakes more often, never less, than the default).
                    fence(Ordering::SeqCst);
                }
                if self.state().sleeping() > 0 {
                    self.wake_one(true);
                } else {
                    self.wake_a_waiting_guest();
                }
            }
            WakePolicy::Default => {
                match submit {
                    // F1 of the fence pair: the push (before this call) is ordered before the
                    // state read.
                    Submit::External => fence(Ordering::SeqCst),
                    Submit::Local
                    | Submit::Yield {
                        others_waiting: true,
                    } => {}
                    // The owner of the slot, or the re-queueing worker, is awake and runs it.
                    Submit::RunNext
                    | Submit::Yield {
                        others_waiting: false,
                    } => return,
                }
                let state = self.state();
                if state.searching() == 0 {
                    if state.sleeping() > 0 {
                        self.wake_one(false);
                    } else {
                        self.wake_a_waiting_guest();
                    }
                }
            }
        }
    }

    /// Wakes one sleeper as a searcher. Unless `always` (the eager policy), gives up if somebody
    /// started searching meanwhile: it will find the work.
    #[cold]
    #[inline(never)]
    fn wake_one(&self, always: bool) {
        let mut sleepers = self.lock_sleepers();
        if !always && self.state().searching() > 0 {
            return;
        }
        let Some(index) = sleepers.pop() else { return };
        self.state
            .fetch_add(SEARCHER.wrapping_sub(SLEEPER), Ordering::SeqCst);
        let retired = self.take_retired(index);
        if !retired {
            // Set under the lock, so `cancel_sleep` reads it consistently (see there).
            self.parkers[index]
                .wake
                .store(WOKEN_SEARCHING, Ordering::Release);
        }
        let ring = self.monitor_wanted();
        drop(sleepers);
        if ring {
            self.bell.ring();
        }
        self.unpark(index, retired, true);
    }

    /// Wakes worker `index` if it is sleeping (its latch was set, or its inbox got a job). Not
    /// counted as searching.
    #[cold]
    #[inline(never)]
    pub(crate) fn wake_specific(&self, index: usize) {
        let mut sleepers = self.lock_sleepers();
        if let Some(pos) = sleepers.iter().position(|&i| i == index) {
            sleepers.swap_remove(pos);
            self.state.fetch_sub(SLEEPER, Ordering::SeqCst);
            let retired = self.take_retired(index);
            if !retired {
                // Release: pairs with the parked worker's Acquire load of `wake` in its park loop.
                self.parkers[index].wake.store(WOKEN, Ordering::Release);
            }
            let ring = self.monitor_wanted();
            drop(sleepers);
            if ring {
                self.bell.ring();
            }
            self.unpark(index, retired, false);
            return;
        }
        // Not in the list: it has not registered yet (its re-check will see the set latch) or
        // somebody woke it already — or its seat is lent, and the guest may be waiting on a latch
        // of that seat (or for work addressed to it): wake the guest.
        // Relaxed: under the lock, where every reason is written.
        if self.parkers[index].wake.load(Ordering::Relaxed) == LENT {
            let guest = self.lock_guests()[index].clone();
            drop(sleepers);
            if let Some(t) = guest {
                t.unpark();
            }
        }
    }

    /// Wakes every sleeper (shutdown).
    #[cold]
    pub(crate) fn wake_all(&self) {
        let mut sleepers = self.lock_sleepers();
        let woken: Vec<(usize, bool)> = sleepers
            .drain(..)
            .map(|index| (index, self.take_retired(index)))
            .collect();
        // Shutdown rings the monitor itself (`Registry::terminate`); the mark is just cleared.
        let _ = self.monitor_wanted();
        self.state
            .fetch_sub(SLEEPER * woken.len() as u64, Ordering::SeqCst);
        for &(index, retired) in &woken {
            if !retired {
                // Release: pairs with the parked worker's Acquire load of `wake` in its park loop.
                self.parkers[index].wake.store(WOKEN, Ordering::Release);
            }
        }
        drop(sleepers);
        for (index, retired) in woken {
            self.unpark(index, retired, false);
        }
    }

    fn lock_sleepers(&self) -> crate::loom::sync::MutexGuard<'_, Vec<usize>> {
        self.sleepers.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Loom models of the protocol (run by `.ci/run` with the lib's other `loom_*` tests): a lost
/// wake-up shows up as a deadlock, which loom reports.
#[cfg(all(test, loom))]
mod loom_models;
