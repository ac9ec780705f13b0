//! The sleep protocol: how idle workers search, spin, park, and get woken, without losing a
//! wake-up and without burning CPU while the pool is idle.
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
//! # Parking
//!
//! Parking uses `std::thread::park`, which is a futex wait on Linux; the wake reason is handed
//! over in a per-worker word, so spurious returns from `park` are harmless. Nothing runs
//! periodically: an idle pool makes no system calls at all.

use std::sync::OnceLock;
use std::thread::Thread;

use crate::loom::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};
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

/// Wake reasons handed to a parked worker.
const NOT_WOKEN: u32 = 0;
/// Woken for a specific reason (its latch was set, or shutdown): not counted as searching.
const WOKEN: u32 = 1;
/// Woken because of new work: the waker already counted it as searching.
const WOKEN_SEARCHING: u32 = 2;

#[derive(Default)]
struct Parker {
    wake: AtomicU32,
    thread: OnceLock<Thread>,
}

/// What happened in [`Sleep::sleep`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Woken {
    /// The worker actually parked (rather than cancelling after the re-check).
    pub(crate) parked: bool,
    /// The worker is now counted as searching.
    pub(crate) searching: bool,
}

/// The idle-worker bookkeeping of one pool.
pub(crate) struct Sleep {
    state: CachePadded<AtomicU64>,
    /// Indices of the workers that are sleeping. Only touched on the slow paths (going to sleep,
    /// waking somebody), never by a push that finds a searcher.
    sleepers: Mutex<Vec<usize>>,
    parkers: Box<[CachePadded<Parker>]>,
    num_workers: usize,
}

impl Sleep {
    pub(crate) fn new(num_workers: usize) -> Self {
        Sleep {
            state: CachePadded::new(AtomicU64::new(0)),
            sleepers: Mutex::new(Vec::with_capacity(num_workers)),
            parkers: (0..num_workers).map(|_| CachePadded::default()).collect(),
            num_workers,
        }
    }

    /// Called by each worker on its own thread before it can be parked.
    pub(crate) fn register_thread(&self, index: usize) {
        let _ = self.parkers[index].thread.set(std::thread::current());
    }

    /// A snapshot of the packed counts (for metrics and debugging).
    pub(crate) fn state(&self) -> State {
        State(self.state.load(Ordering::SeqCst))
    }

    /// True when some worker is searching or sleeping, i.e. could take work. SeqCst: the load
    /// of the heartbeat handshake (`crate::heartbeat`, step 5).
    pub(crate) fn idle_exists(&self) -> bool {
        let state = self.state();
        state.searching() > 0 || state.sleeping() > 0
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

    /// Rule 2: work was just published; wake one sleeper if nobody is searching.
    #[inline]
    pub(crate) fn notify_work(&self) {
        // F1 of the fence pair: the push (before this call) is ordered before the state read.
        fence(Ordering::SeqCst);
        let state = self.state();
        if state.searching() == 0 && state.sleeping() > 0 {
            self.wake_one_searching();
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
        let state = self.state();
        if state.searching() == 0 && state.sleeping() > 0 {
            self.wake_one_searching();
        }
    }

    #[cold]
    #[inline(never)]
    fn wake_one_searching(&self) {
        let mut sleepers = self.lock_sleepers();
        if self.state().searching() > 0 {
            return; // somebody started searching meanwhile; it will find the work
        }
        let Some(index) = sleepers.pop() else { return };
        self.state
            .fetch_add(SEARCHER.wrapping_sub(SLEEPER), Ordering::SeqCst);
        // Set under the lock, so `cancel_sleep` reads it consistently (see there).
        self.parkers[index]
            .wake
            .store(WOKEN_SEARCHING, Ordering::Release);
        drop(sleepers);
        self.unpark(index);
    }

    /// Wakes worker `index` if it is sleeping (its latch was set). Not counted as searching.
    #[cold]
    #[inline(never)]
    pub(crate) fn wake_specific(&self, index: usize) {
        let mut sleepers = self.lock_sleepers();
        if let Some(pos) = sleepers.iter().position(|&i| i == index) {
            sleepers.swap_remove(pos);
            self.state.fetch_sub(SLEEPER, Ordering::SeqCst);
            self.parkers[index].wake.store(WOKEN, Ordering::Release);
            drop(sleepers);
            self.unpark(index);
        }
        // Not in the list: it has not registered yet (its re-check will see the set latch) or
        // somebody woke it already.
    }

    /// Wakes every sleeper (shutdown).
    #[cold]
    pub(crate) fn wake_all(&self) {
        let mut sleepers = self.lock_sleepers();
        let woken: Vec<usize> = sleepers.drain(..).collect();
        self.state
            .fetch_sub(SLEEPER * woken.len() as u64, Ordering::SeqCst);
        for &index in &woken {
            self.parkers[index].wake.store(WOKEN, Ordering::Release);
        }
        drop(sleepers);
        for index in woken {
            self.unpark(index);
        }
    }

    /// Puts worker `index` to sleep: announce, fence, re-check (`has_work` and the optional
    /// latch), then park until woken. `searching` says whether it currently counts as a
    /// searcher (its count moves to the sleepers in the same atomic step).
    #[cold]
    #[inline(never)]
    pub(crate) fn sleep(
        &self,
        index: usize,
        searching: bool,
        latch: Option<&crate::latch::CoreLatch>,
        has_work: impl Fn() -> bool,
        before_park: impl FnOnce(),
    ) -> Woken {
        {
            let mut sleepers = self.lock_sleepers();
            sleepers.push(index);
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
            let searching = self.cancel_sleep(index);
            if sleepy {
                if let Some(l) = latch {
                    l.wake_up();
                }
            }
            return Woken {
                parked: false,
                searching,
            };
        }
        before_park();
        let parker = &self.parkers[index];
        let reason = loop {
            // Acquire: pairs with the Release store of the waker, so whatever it published
            // before waking us is visible.
            let reason = parker.wake.swap(NOT_WOKEN, Ordering::Acquire);
            if reason != NOT_WOKEN {
                break reason;
            }
            crate::loom::thread::park();
        };
        if let Some(l) = latch {
            l.wake_up();
        }
        Woken {
            parked: true,
            searching: reason == WOKEN_SEARCHING,
        }
    }

    /// The re-check found something: take ourselves out of the sleeper list. If a waker already
    /// took us out, it also left its reason in our word (under the lock), which we consume.
    fn cancel_sleep(&self, index: usize) -> bool {
        let mut sleepers = self.lock_sleepers();
        if let Some(pos) = sleepers.iter().position(|&i| i == index) {
            sleepers.swap_remove(pos);
            self.state.fetch_sub(SLEEPER, Ordering::SeqCst);
            false
        } else {
            // Acquire: pairs with the waker's Release store (made under the same lock).
            self.parkers[index].wake.swap(NOT_WOKEN, Ordering::Acquire) == WOKEN_SEARCHING
        }
    }

    /// Unparks worker `index`, recording the wake on the waker's track (the arrow to the woken
    /// worker's next `park_end`).
    fn unpark(&self, index: usize) {
        crate::trace::hooks::wake(index);
        if let Some(thread) = self.parkers[index].thread.get() {
            thread.unpark();
        }
    }

    fn lock_sleepers(&self) -> crate::loom::sync::MutexGuard<'_, Vec<usize>> {
        self.sleepers.lock().unwrap_or_else(|e| e.into_inner())
    }
}
