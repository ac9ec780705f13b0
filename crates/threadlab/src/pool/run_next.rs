//! The run-next slot and the cooperative budget: a queue of the pool's (each worker reads its
//! own first, and the others' when searching), holding future tasks (`crate::task`).
//!
//! # The slot
//!
//! Each worker has one slot for the future it woke last. The worker takes from it before its
//! deque (`WorkerThread::find_work`), so a task woken by the task running now runs next, on the
//! same core, with what the two share still in cache: a producer and a consumer handing values
//! to each other run back to back on one worker with no queue operation and no wake-up. (Go's
//! `runnext` and Tokio's LIFO slot do the same.)
//!
//! Unlike Tokio's LIFO slot, which other workers cannot see (tokio-rs/tokio#4941: a task in it
//! waits for as long as the task running on its worker blocks, while other workers idle), the
//! slot is an atomic pointer that any worker can swap out. A thief does not take a task the
//! moment it appears, though: a searching worker takes a slot's task only after seeing the same
//! placement there for [`RUN_NEXT_GRACE`] (the slot's `placed` count did not move), i.e. when the
//! owner is stuck in a long task. Taking it sooner would make the two tasks of a ping-pong
//! change cores on every hand-off. Go's `runqsteal` makes the same choice with a 3 µs sleep
//! before it steals a running P's `runnext`.
//!
//! Only an awake worker steals, and under the default [`WakePolicy`](crate::WakePolicy) nobody
//! is woken for a task placed in a slot (its owner is awake and runs it next: a ping-pong of two
//! tasks then costs no wake-up at all). The price: a task woken by a poll that then keeps its
//! worker busy for long (blocking in an `async` task) waits for that poll unless some worker
//! is awake to take it. Under `Lazy` an idle worker looks within about a millisecond
//! (`tests/task_starve.rs` checks that it takes it); under `Eager` a sleeping worker is woken at
//! once, but a worker that was spinning at that moment and then runs dry parks without waiting
//! for the slot's grace.
//!
//! A task put in an occupied slot displaces the older one onto the deque (where thieves see it
//! at once), so a task that wakes several others shares them out as a spawn would.
//!
//! # The budget
//!
//! Polling run-next tasks one after the other could keep a pair of tasks that wake each other
//! on their worker for ever, while the work in its deque and in the injector waits. So the
//! worker counts the tasks it takes from its slot in a row (the `streak`, reset when it takes
//! work from anywhere else); when it reaches [`RUN_NEXT_BUDGET`], the next task it wakes goes
//! to the back of the pool's queue (the injector) instead of the slot, and the worker runs
//! whatever else is waiting before it comes back to it. Tokio's `MAX_LIFO_POLLS_PER_TICK` (3)
//! is the same idea. A task that wakes itself during its own poll always goes to the back
//! ([`WorkerThread::push_yielded`]), like Go's `Gosched`, which puts the goroutine on the
//! global queue.
//!
//! A re-queued task wakes another worker only when other work is waiting too: when it is the
//! only runnable task, its own worker will pick it up at once, and a wake-up would only make a
//! sleeper search in vain (see `Submit::Yield` in `crate::pool::sleep`).
//!
//! # The count of future tasks
//!
//! The pool counts its alive future tasks for [`Metrics`](crate::Metrics): a task cell adds one
//! when spawned and takes one away when freed (`crate::task::cell`), on its worker's own counter
//! when that is where it happens (a plain load and store), else on a shared one.

use std::ptr::NonNull;
use std::time::Duration;

use crate::loom::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, Ordering};
use crate::task::header::Header;

/// Tasks a worker takes from its run-next slot in a row before a woken task goes to the back
/// of the queue instead.
pub(crate) const RUN_NEXT_BUDGET: u32 = 32;

/// How long a task must sit in another worker's slot before a searching worker takes it: a few
/// times a hand-off between two tasks (well under a microsecond), well under a spin
/// (`SPIN_BEFORE_PARK`, 10 µs).
pub(crate) const RUN_NEXT_GRACE: Duration = Duration::from_micros(4);

/// One worker's run-next slot.
pub(crate) struct RunNext {
    task: AtomicPtr<Header>,
    /// Placements so far (written by the owner only): a thief that sees the same count twice,
    /// [`RUN_NEXT_GRACE`] apart, knows the task has waited that long.
    pub(super) placed: AtomicU64,
    /// Tasks the owner took from the slot in a row (owner only).
    pub(super) streak: AtomicU32,
}

impl Default for RunNext {
    fn default() -> Self {
        RunNext {
            task: AtomicPtr::new(std::ptr::null_mut()),
            placed: AtomicU64::new(0),
            streak: AtomicU32::new(0),
        }
    }
}

impl RunNext {
    /// Owner: puts `task` in the slot; returns the task it displaced.
    #[inline]
    pub(super) fn put(&self, task: NonNull<Header>) -> Option<NonNull<Header>> {
        // Relaxed: owner-only counter; thieves use it as a hint (a stale read only makes a
        // steal happen a little early or late).
        let placed = self.placed.load(Ordering::Relaxed);
        self.placed.store(placed + 1, Ordering::Relaxed);
        // Only the owner makes the slot non-empty; thieves only empty it. So a slot seen empty
        // stays empty until this store, and a plain store replaces the swap (one atomic
        // read-modify-write fewer per wake-up). Relaxed load: the owner's own last write, or a
        // thief's null (nothing to acquire from an empty slot). Release store: publishes the
        // task (its SCHEDULED state) to whoever swaps it out, pairing with the Acquire of
        // `take`'s swap.
        if self.task.load(Ordering::Relaxed).is_null() {
            self.task.store(task.as_ptr(), Ordering::Release);
            return None;
        }
        // Occupied: a thief may empty it meanwhile, so the swap decides who gets the old task.
        // Release as above; Acquire pairs with the Release of the `put` that placed the task
        // we get back (our own, so it is free with AcqRel).
        NonNull::new(self.task.swap(task.as_ptr(), Ordering::AcqRel))
    }

    /// Owner or thief: takes the task, if any. The swap makes sure one of them gets it.
    #[inline]
    pub(super) fn take(&self) -> Option<NonNull<Header>> {
        // Relaxed peek first, so an empty slot costs a load (the common case in fork-join).
        if self.task.load(Ordering::Relaxed).is_null() {
            return None;
        }
        // Acquire: pairs with the Release of `put`.
        NonNull::new(self.task.swap(std::ptr::null_mut(), Ordering::AcqRel))
    }

    /// True if a task waits in the slot. SeqCst: read in the owner's re-check before it parks,
    /// after fence F2 (see `crate::pool::sleep`); only the owner writes it, so it is its own
    /// latest write in practice.
    pub(crate) fn is_occupied(&self) -> bool {
        !self.task.load(Ordering::SeqCst).is_null()
    }
}
