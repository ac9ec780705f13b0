//! The sleep protocol: how idle workers search, spin, park, get woken and (in an elastic pool)
//! retire, without losing a wake-up and without burning CPU while the pool is idle.
//!
//! (Over 600 lines: about 190 of them are this design note, kept beside the code it justifies,
//! as rayon-core keeps `sleep/README.md` beside its sleep module; the loom models are in
//! `sleep_loom.rs`.)
//!
//! # States
//!
//! A worker is *running* (it has a task), *searching* (it has none and is looking through the
//! injector and the other deques), or *sleeping* (registered in the sleeper list, about to park
//! or parked). The pool-wide counts of searching and sleeping workers live in one packed atomic,
//! [`State`], so one read tells a pusher whether anybody needs waking. The ideas are Go's
//! (`runtime/proc.go`: spinning Ms, `wakep`, the "nmspinning" handshake) and Tokio's
//! (`scheduler/multi_thread/idle.rs`: packed state, at most half the workers searching,
//! `transition_worker_from_searching`); the code is our own.
//!
//! # Rules
//!
//! 1. At most about half the workers search at once ([`Sleep::try_start_searching`]); the others
//!    go straight to sleep, so an idle pool does not spend all its cores looking for work.
//! 2. New work wakes one sleeper only when nobody is searching ([`Sleep::notify_work`]): a searcher
//!    will find the work, so waking another would only add a futex call and a failed search.
//! 3. A woken worker starts out searching. When the *last* searcher finds work, it wakes the next
//!    sleeper if more work is visible, so parallelism spreads one worker at a time
//!    ([`Sleep::stop_searching`]).
//!
//! # The race, and the fence pair that closes it
//!
//! The lost wake-up: a pusher publishes work and reads "somebody is searching", so wakes nobody;
//! meanwhile that searcher, having looked at the queues just before the push, goes to sleep. The
//! work then waits with every worker asleep.
//!
//! The pattern (Go's "publish work → #StoreLoad → check spinners; stop spinning → #StoreLoad →
//! re-check queues"):
//!
//! ```text
//!   pusher                               worker going to sleep
//!   push job into a queue      (W1)      state: searching-1, sleeping+1   (W2)
//!   fence(SeqCst)              (F1)      fence(SeqCst)                    (F2)
//!   read state                 (R1)      re-check every queue             (R2)
//!   wake one if searching == 0           park only if R2 found nothing
//! ```
//!
//! The two SeqCst fences are totally ordered. If F1 comes first, W1 happens before R2, so the
//! worker's re-check sees the job and it does not park. If F2 comes first, W2 is visible to R1:
//! the pusher sees one more sleeper and, if no other searcher remains, wakes one. If another
//! searcher remains, that searcher will run the same sleep sequence (or the `stop_searching`
//! sequence, which has the same shape) after R1, so the argument applies to it in turn: the last
//! worker to stop searching always either sees the job or is seen by its pusher. Hence no
//! wake-up is lost.
//!
//! Work a worker pushes onto its own deque skips F1 ([`Sleep::notify_local_work`]): a missed
//! wake-up there costs parallelism for a moment, never progress, because the deque's owner is
//! awake and runs it.
//!
//! Latch waits (a worker in `join` whose second half was stolen) add a second handshake on the
//! latch word; see `crate::latch`.
//!
//! # The run-next slot
//!
//! A future woken on a worker goes to that worker's run-next slot (`crate::pool::run_next`),
//! not to its deque. Only a worker writes its own slot, and only while it runs code (a task,
//! or a `block_on`/`join` waiting on it), and it takes from its slot before anything else and
//! re-checks it before it parks. So work in a slot always has an awake owner that will run it:
//! as with [`Sleep::notify_local_work`], no wake-up is needed for progress, and the other
//! workers' re-check before parking ignores other workers' slots (otherwise two tasks handing a
//! value back and forth on one worker would keep every other worker from ever parking). A
//! searching worker may still take a task that has waited in a slot for a while (see there).
//!
//! # Wake policies
//!
//! [`WakePolicy`] chooses, in one place ([`Sleep::notify`]), what a submission does to the
//! sleepers; the protocol above is otherwise the same for all three:
//!
//! - `Default`: rules 1–3 above; a task placed in a run-next slot wakes nobody (its owner is
//!   awake), and a re-queued (yielding) task wakes somebody only when other work is waiting too.
//! - `Eager`: every new task (spawned, injected, woken, re-queued) wakes one sleeper if there is
//!   one, whether or not a worker is searching: what *Rendezvous Benchmark Analysis* found cats-effect's
//!   `notifyParked` and Java's `ForkJoinPool.signalWork` doing on every schedule.
//! - `Lazy`: no submission wakes anybody; a sleeping worker parks for at most
//!   [`LAZY_POLL`] and then searches again (the design *Rendezvous Benchmark Analysis* describes for Kyo:
//!   "all idle workers wake up every 1ms and attempt to steal"). Progress then never depends on
//!   a wake-up, at the price of a thousand wake-ups a second per idle worker.
//!
//! Latch wake-ups (`wake_specific`) and shutdown (`wake_all`) are not submissions and behave the
//! same under every policy.
//!
//! # Work for one worker
//!
//! A job in worker `i`'s inbox (`super::inbox`) can only be run by `i`, so its pusher must wake
//! `i` itself, not "one sleeper" ([`Sleep::notify_worker`]). Same fence pair, with worker `i`'s
//! own inbox in R2 (`i`'s re-check before parking looks at its inbox as well as the shared
//! queues):
//!
//! ```text
//!   pusher                               worker i going to sleep
//!   push job into inbox i      (W1)      lock; join sleeper list; sleeping+1 (W2); unlock
//!   fence(SeqCst)              (F1)      fence(SeqCst)                       (F2)
//!   read state                 (R1)      re-check the queues and inbox i     (R2)
//!   if sleeping > 0: wake_specific(i)    park only if R2 found nothing
//! ```
//!
//! If F1 comes first, R2 sees the job. If F2 comes first, R1 sees W2, and `wake_specific` then
//! takes the sleeper-list lock: W2 was made inside `i`'s critical section on that lock and R1
//! read it, so `i`'s critical section precedes the pusher's (the other order would make a
//! happens-before cycle), and the pusher finds `i` in the list and wakes it, unless somebody
//! else took `i` out first, which also wakes it. An awake `i` looks at its inbox before it can
//! sleep again. Hence no job in an inbox waits while its owner sleeps.
//!
//! # Lent seats
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
//! While lent, the seat's latch wake-ups (`wake_specific`) go to the guest, which parks on its
//! own thread when it waits on a latch of the seat. [`Sleep::give_back`] is the worker's own
//! "going to sleep" run by the guest: back on the list (W2), fence (F2), re-check of the shared
//! queues and of the seat's own inbox and run-next slot (R2), and a wake of the worker if that
//! found anything: a job pushed while the seat was lent, whose pusher saw one sleeper fewer, is
//! seen by the re-check or its pusher sees the worker back (the fence pair above). The guest
//! then asks the busy workers for work, as a worker going to sleep does (`crate::heartbeat`,
//! step 5). The loom models `loom_lend_and_give_back_vs_going_to_sleep` and
//! `loom_guest_latch_wait_vs_set` check both handshakes.
//!
//! # Waiting guests
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
//! # Parking
//!
//! Parking uses `std::thread::park`, which is a futex wait on Linux; the wake reason is handed
//! over in a per-worker word, so spurious returns from `park` are harmless. Nothing runs
//! periodically (except under [`WakePolicy::Lazy`]): an idle pool makes no system calls at all.
//!
//! # Retiring: the elastic pool
//!
//! With a keep-alive ([`Builder::keep_alive`](crate::Builder::keep_alive)), a worker parked
//! that long with nobody waking it *retires*: its thread exits. A retired worker is a sleeper
//! whose wake-up starts a thread instead of unparking one:
//!
//! - it stays in the sleeper list and in the `sleeping` count, so a pusher's fence pair above
//!   works unchanged: a pusher that sees `sleeping > 0` and nobody searching calls `wake_one`,
//!   which takes a sleeper off the list, retired or not;
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
//! (the worker then finds itself off the list and stays). `sleep_loom.rs` models it, and a
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

use std::sync::OnceLock;
use std::time::{Duration, Instant};

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
/// if the OS refused (see `super::seat`).
pub(crate) type Restart = Box<dyn Fn(usize, bool) -> bool + Send + Sync>;

/// Said once per process: a restart failed.
static RESTART_FAILED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// What happened in [`Sleep::sleep`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Woken {
    /// The worker actually parked (rather than cancelling after the re-check).
    pub(crate) parked: bool,
    /// The worker is now counted as searching.
    pub(crate) searching: bool,
    /// The park ended by its timeout ([`WakePolicy::Lazy`]), not because somebody woke it.
    pub(crate) timed_out: bool,
    /// The worker retired: its thread must leave (see "Retiring" in the module doc).
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
    /// How many guests are parked in a latch wait (see "Waiting guests" in the module doc).
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

    /// The monitor's question before it sleeps for good: is every worker on the sleeper list
    /// (idle or retired, no seat lent)? If so, it is marked asleep under the list's lock, and
    /// the next waker, lender or sleeper that cancels rings it ([`Sleep::monitor_wanted`]).
    pub(crate) fn monitor_may_sleep(&self) -> bool {
        let sleepers = self.lock_sleepers();
        let all = sleepers.len() == self.num_workers;
        if all {
            // Relaxed: under the sleeper-list lock (see the field).
            self.monitor_asleep.store(true, Ordering::Relaxed);
        }
        all
    }

    /// A worker leaves the sleeper list (the caller holds its lock): true if the monitor slept
    /// and must be rung (after the lock is dropped).
    fn monitor_wanted(&self) -> bool {
        // Relaxed: under the sleeper-list lock (see the field), which orders both accesses; the
        // store happens only when the monitor slept, so the common path writes nothing.
        let asleep = self.monitor_asleep.load(Ordering::Relaxed);
        if asleep {
            self.monitor_asleep.store(false, Ordering::Relaxed);
        }
        asleep
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

    /// Installs how retired workers are started again (an elastic pool, once, before any
    /// worker can retire).
    pub(crate) fn set_restart(&self, restart: Restart) {
        let _ = self.restart.set(restart);
    }

    /// A snapshot of the packed counts (for metrics and debugging).
    pub(crate) fn state(&self) -> State {
        State(self.state.load(Ordering::SeqCst))
    }

    /// True when some worker is searching or sleeping, i.e. could take work. SeqCst: the load
    /// of the heartbeat handshake (`crate::heartbeat`, step 5).
    /// A guest parked in a latch wait counts too (see "Waiting guests" in the module doc).
    pub(crate) fn idle_exists(&self) -> bool {
        let state = self.state();
        state.searching() > 0
            || state.sleeping() > 0
            || self.waiting_guests.load(Ordering::SeqCst) > 0
    }

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
    fn unmark_guest(&self, index: usize) -> bool {
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
            // The second fence of the pair (see the module doc): our decrement is ordered before
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
    /// for one worker" in the module doc).
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
    /// the sleepers (see the module doc).
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

    /// New work and no sleeper to take it: unparks one guest parked in a latch wait, if any
    /// (see "Waiting guests" in the module doc).
    #[inline]
    fn wake_a_waiting_guest(&self) {
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
    fn wake_waiting_guest(&self) {
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

    /// Puts worker `index` to sleep: announce, fence, re-check (`has_work` and the optional
    /// latch), then park until woken. `searching` says whether it currently counts as a
    /// searcher (its count moves to the sleepers in the same atomic step). With `retire_at`,
    /// a worker still parked, unwoken, at that instant retires (`Woken::retired`; see
    /// "Retiring" in the module doc).
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

    /// The keep-alive ran out: retire if still in the sleeper list (nobody woke us), staying
    /// there, counted as sleeping, marked retired. False if a waker took us out: its reason is
    /// in our word.
    fn try_retire(&self, index: usize) -> bool {
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
    fn take_retired(&self, index: usize) -> bool {
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

    /// The re-check found something: take ourselves out of the sleeper list. If a waker already
    /// took us out, it also left its reason in our word (under the lock), which we consume.
    /// `None`: a guest took our seat ([`Sleep::lend`]); the caller must park until it is given
    /// back.
    fn cancel_sleep(&self, index: usize) -> Option<bool> {
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

    /// Unparks worker `index`, or starts it again if it had `retired`, recording the wake on
    /// the waker's track (the arrow to the woken worker's next `park_end`). `searching`: the
    /// waker counted it as searching.
    fn unpark(&self, index: usize, retired: bool, searching: bool) {
        crate::trace::hooks::wake(index);
        if retired {
            self.restart(index, searching);
            return;
        }
        let thread = self.parkers[index]
            .thread
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if let Some(thread) = thread {
            thread.unpark();
        }
    }

    /// Only while holding the sleeper list's lock (the lock order).
    fn lock_guests(&self) -> crate::loom::sync::MutexGuard<'_, Vec<Option<Thread>>> {
        self.guests.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts retired worker `index`. If the OS refuses a thread, puts it back in the sleeper
    /// list, retired, undoing the waker's count: the next wake-up tries again.
    #[cold]
    fn restart(&self, index: usize, searching: bool) {
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

    fn lock_sleepers(&self) -> crate::loom::sync::MutexGuard<'_, Vec<usize>> {
        self.sleepers.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Loom models of the protocol (run by `.ci/run` with the lib's other `loom_*` tests): a lost
/// wake-up shows up as a deadlock, which loom reports.
#[cfg(all(test, loom))]
#[path = "sleep_loom.rs"]
mod loom_tests;

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
