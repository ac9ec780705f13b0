//! The pool as the scheduler of its future tasks: `Registry`'s [`Schedule`], which the task's
//! cell and wakers call (`crate::task::cell`, `crate::task::waker`), and the worker's side of
//! the run-next slots (`super::run_next`, where the slot, the budget and the grace are
//! explained): where a woken task goes, taking from a slot, stealing from another worker's.
//! No file of the engine names this one: what it adds are methods of `Registry` and
//! `WorkerThread`, and the trait's implementation, which the task code reaches through its
//! type parameter.

use std::ptr::NonNull;
use std::task::RawWakerVTable;
use std::time::Instant;

use crate::job::JobRef;
use crate::loom::sync::atomic::Ordering;
use crate::pool::registry::Registry;
use crate::pool::run_next::{RunNext, RUN_NEXT_BUDGET, RUN_NEXT_GRACE};
use crate::pool::sleep::Submit;
use crate::pool::worker::WorkerThread;
use crate::task::header::{job_ref, Header};
use crate::task::schedule::Schedule;
use crate::task::waker;
use crate::trace::hooks;
use crate::unwind::Payload;

/// The wakers' vtable of the pool's tasks: one address for all (`Schedule::waker_vtable`).
static WAKER_VTABLE: RawWakerVTable = waker::vtable::<Registry>();

impl Schedule for Registry {
    #[inline]
    fn waker_vtable() -> &'static RawWakerVTable {
        &WAKER_VTABLE
    }

    #[inline]
    fn task_spawned(&self) {
        self.count_futures(1);
    }

    #[inline]
    fn task_freed(&self) {
        self.count_futures(-1);
    }

    #[inline]
    fn push_spawned(&self, job: JobRef) {
        self.push(job);
    }

    #[inline]
    fn push_woken(&self, task: NonNull<Header>) {
        match WorkerThread::current() {
            Some(w) if std::ptr::eq(&**w.registry(), self) => w.push_woken(task),
            _ => self.inject(job_ref(task)),
        }
    }

    #[inline]
    fn push_yielded(&self, task: NonNull<Header>) {
        match WorkerThread::current() {
            Some(w) if std::ptr::eq(&**w.registry(), self) => w.push_yielded(job_ref(task)),
            _ => self.inject(job_ref(task)),
        }
    }

    #[inline]
    fn times_tasks(&self) -> bool {
        Registry::times_tasks(self)
    }

    #[inline]
    fn note_poll() {
        WorkerThread::note_poll();
    }

    #[inline]
    fn gone(&self) -> bool {
        Registry::gone(self)
    }

    fn handle_panic(&self, payload: Payload) {
        Registry::handle_panic(self, payload);
    }

    fn drop_user_value<T>(&self, value: T) {
        Registry::drop_user_value(self, value);
    }
}

impl WorkerThread {
    fn run_next(&self) -> &RunNext {
        &self.registry().run_next[self.index()]
    }

    /// A future woken by code running on this worker: into the run-next slot, unless the budget
    /// is spent (then to the back of the queue).
    pub(crate) fn push_woken(&self, task: NonNull<Header>) {
        let slot = self.run_next();
        // Relaxed: owner-only counter.
        if slot.streak.load(Ordering::Relaxed) >= RUN_NEXT_BUDGET {
            self.push_yielded(job_ref(task));
            return;
        }
        match slot.put(task) {
            Some(displaced) => self.push(job_ref(displaced)),
            None => self.registry().sleep.notify(Submit::RunNext),
        }
    }

    /// A task that yielded (woken during its own poll) or whose wake came after the budget ran
    /// out: to the back of the pool's queue, which this worker looks at after its own deque.
    pub(crate) fn push_yielded(&self, job: JobRef) {
        let registry = self.registry();
        let others_waiting = !registry.injector.is_empty() || !self.deque_is_empty();
        registry.push_injector(job);
        registry.sleep.notify(Submit::Yield { others_waiting });
    }

    /// Takes this worker's run-next task, counting the streak.
    #[inline]
    pub(crate) fn take_run_next(&self) -> Option<JobRef> {
        let slot = self.run_next();
        let task = slot.take()?;
        // Relaxed: owner-only counter.
        let streak = slot.streak.load(Ordering::Relaxed);
        slot.streak.store(streak + 1, Ordering::Relaxed);
        Some(job_ref(task))
    }

    /// This worker took work from elsewhere than its slot: the streak ends.
    #[inline]
    pub(crate) fn end_run_next_streak(&self) {
        let slot = self.run_next();
        // Relaxed: owner-only counter; the load keeps the common case to a read.
        if slot.streak.load(Ordering::Relaxed) != 0 {
            slot.streak.store(0, Ordering::Relaxed);
        }
    }

    /// True if this worker's own slot holds a task (its re-check before parking).
    pub(crate) fn has_run_next(&self) -> bool {
        self.run_next().is_occupied()
    }

    /// A searching worker's look at the other workers' slots: watches one occupied slot (if
    /// `may_watch`), and takes its task if the same placement is still there
    /// [`RUN_NEXT_GRACE`] later. Records the steal (victim → this thief).
    pub(crate) fn steal_run_next(
        &self,
        watch: &mut Option<SlotWatch>,
        now: Instant,
        may_watch: bool,
    ) -> Option<JobRef> {
        let slots = &self.registry().run_next;
        if let Some(w) = *watch {
            if now.duration_since(w.since) < RUN_NEXT_GRACE {
                return None;
            }
            *watch = None;
            let slot = &slots[w.victim];
            // Relaxed: a hint (see `RunNext::put`).
            if slot.placed.load(Ordering::Relaxed) == w.placed {
                if let Some(task) = slot.take() {
                    hooks::steal(w.victim);
                    return Some(job_ref(task));
                }
            }
            return None;
        }
        if !may_watch {
            return None;
        }
        let n = slots.len();
        for k in 1..n {
            let victim = (self.index() + k) % n;
            let slot = &slots[victim];
            if slot.is_occupied() {
                *watch = Some(SlotWatch {
                    victim,
                    // Relaxed: a hint.
                    placed: slot.placed.load(Ordering::Relaxed),
                    since: now,
                });
                break;
            }
        }
        None
    }
}

impl Registry {
    fn count_futures(&self, delta: i64) {
        match WorkerThread::current() {
            Some(w) if std::ptr::eq(&**w.registry(), self) => {
                // Our own worker's counter: single writer, a plain load and store.
                let c = &self.counters[w.index()].futures_net;
                // Relaxed: a statistic.
                c.store(c.load(Ordering::Relaxed) + delta, Ordering::Relaxed);
            }
            // Relaxed: a statistic; several threads add here, hence the RMW.
            _ => {
                self.futures_outside.fetch_add(delta, Ordering::Relaxed);
            }
        }
    }

    /// The alive future tasks: the workers' net counts plus the outside threads'.
    pub(crate) fn alive_futures(&self) -> u64 {
        // Relaxed: statistics; a snapshot taken while tasks come and go may be off by those.
        let inside: i64 = self
            .counters
            .iter()
            .map(|c| c.futures_net.load(Ordering::Relaxed))
            .sum();
        (inside + self.futures_outside.load(Ordering::Relaxed)).max(0) as u64
    }
}

/// What a searching worker remembers about the slot it is watching.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SlotWatch {
    victim: usize,
    placed: u64,
    since: Instant,
}
