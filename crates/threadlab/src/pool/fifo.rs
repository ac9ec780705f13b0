//! FIFO spawns: `spawn_fifo` and `Scope::spawn_fifo` run in spawn order per spawning thread.
//!
//! A worker's deque is LIFO for its owner (it pops its newest job, warm in cache) and FIFO for
//! thieves. A FIFO spawn keeps the deque and changes what its entries mean: the task goes into a
//! queue of the spawning seat ([`Fifo`]) and a *stub* goes onto the seat's deque in its place.
//! Whoever runs a stub, the owner popping its newest entry or a thief stealing its oldest, runs
//! the oldest task of that queue. One stub per task, so each task runs exactly once, and on one
//! seat with no thief the tasks run in the order they were spawned, interleaved with `spawn`'s
//! newest-first tasks as the stubs fall in the deque (Rayon's `fifo_order` and `mixed_*` tests
//! check both). This is rayon-core's design for `spawn_fifo` (its `JobFifo`, a queue per worker
//! entered through the deque); threadlab keeps one queue per seat in the registry for the free
//! and pool `spawn_fifo`, and one per seat in each scope for `Scope::spawn_fifo`.
//!
//! A stub is a [`JobRef`] whose data is the queue itself: no allocation per stub, and no
//! recorder events of its own (the task it runs records its span). A stub touches its queue only
//! before it runs the task: a scope's queues live as long as the scope, which the task it is
//! about to run still holds open.
//!
//! From threads that are no seat of the pool the tasks go into one more queue of the registry,
//! their stubs into the pool's injector: a worker may move a batch of the injector's jobs into
//! its deque and pop them newest first, and the stubs keep the spawn order all the same.

use std::collections::VecDeque;

use crate::job::{Job, JobRef};
use crate::loom::sync::Mutex;

/// The FIFO tasks of one seat (of the pool, or of one scope), oldest first.
pub(crate) struct Fifo {
    jobs: Mutex<VecDeque<JobRef>>,
}

impl Default for Fifo {
    fn default() -> Self {
        Fifo {
            jobs: Mutex::new(VecDeque::new()),
        }
    }
}

impl Fifo {
    /// Queues `job` and returns the stub the caller pushes onto the seat's deque in its place.
    ///
    /// # Safety
    /// The queue must stay where it is until the stub has run (the registry's queues live as
    /// long as the pool; a scope's until every task of the scope finished, which includes
    /// `job`).
    pub(crate) unsafe fn push(&self, job: JobRef) -> JobRef {
        self.lock().push_back(job);
        // SAFETY: the caller keeps `self` in place until the stub ran; stubs run once each and
        // pop one task each, so there is always a task for a stub.
        unsafe { JobRef::new(self) }
    }

    /// The lock: only pushes and pops happen under it, nothing to leave half done.
    fn lock(&self) -> crate::loom::sync::MutexGuard<'_, VecDeque<JobRef>> {
        self.jobs.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Job for Fifo {
    /// A stub: runs the oldest task of its queue.
    unsafe fn execute(this: *const ()) {
        // SAFETY: the stub's data is its queue, in place until the stub ran (`Fifo::push`).
        let fifo = unsafe { &*(this as *const Fifo) };
        let job = fifo
            .lock()
            .pop_front()
            .expect("Fifo stub: one task per stub");
        // The queue is not touched again: the task may end its scope, and with it the queue.
        // SAFETY: the task was queued once and is taken out once, here.
        unsafe { job.execute() };
    }
}
