//! Inboxes: work addressed to one worker, which only that worker takes.
//!
//! [`Pool::spawn_on`](crate::Pool::spawn_on) and [`Pool::install_on`](crate::Pool::install_on)
//! put a job here, and so do the static and affinity partitioners (`crate::partition`) when they
//! hand a chunk to the worker that should run it. The idea is TBB's per-thread *mailbox* (the
//! affinity partitioner mails a task to the thread that ran it last time); unlike a deque, an
//! inbox is never stolen from, so whatever enters it runs on its owner.
//!
//! An inbox is a `VecDeque` behind a mutex with a length mirrored in an atomic beside it, like
//! the injector: the owner's "anything for me?" check costs one load and never takes the lock.
//!
//! # Taking part in the sleep protocol
//!
//! The owner looks at its inbox after its own deque and before stealing (`find_work`), and its
//! re-check before parking includes its inbox. A pusher publishes the job (the SeqCst length
//! store), then calls [`Sleep::notify_worker`](super::sleep::Sleep::notify_worker), which wakes
//! the owner if it is sleeping; `super::sleep` explains why this loses no wake-up. Other workers
//! ignore the inbox: work they cannot take must not keep them awake.
//!
//! # Shutdown
//!
//! A worker leaving its loop closes its inbox, but only when the inbox is empty (under its lock),
//! so nothing already in it is lost. A job pushed after that (by a task still running elsewhere
//! while the pool shuts down) goes to the injector instead and runs on whichever worker is
//! still there.

use std::collections::VecDeque;

use crate::job::JobRef;
use crate::latch::LockLatch;
use crate::loom::sync::atomic::{AtomicUsize, Ordering};
use crate::loom::sync::{Arc, Mutex, MutexGuard};
use crate::pool::registry::Registry;
use crate::pool::worker::WorkerThread;
use crate::pool::worker_latch::SpinLatch;
use crate::stack_job::StackJob;
use crate::trace::TaskKind;

struct Queue {
    jobs: VecDeque<JobRef>,
    /// The owner has exited; pushes are refused.
    closed: bool,
}

/// One worker's inbox.
pub(crate) struct Inbox {
    /// Mirror of `queue.jobs.len()`, written only under the lock, read without it.
    len: AtomicUsize,
    queue: Mutex<Queue>,
}

impl Default for Inbox {
    fn default() -> Self {
        Inbox {
            len: AtomicUsize::new(0),
            queue: Mutex::new(Queue {
                jobs: VecDeque::new(),
                closed: false,
            }),
        }
    }
}

impl Inbox {
    /// The queue, locked. `VecDeque`'s operations do not unwind midway, so a poisoned lock is
    /// simply taken over.
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn publish_len(&self, q: &Queue) {
        // SeqCst: the owner's re-check before parking (`is_empty`, after the sleep protocol's
        // SeqCst fence) must see a job whose pusher then saw no sleeper; see
        // `Sleep::notify_worker`.
        self.len.store(q.jobs.len(), Ordering::SeqCst);
    }

    /// Adds `job` at the back; gives it back if the owner has exited.
    pub(crate) fn push(&self, job: JobRef) -> Result<(), JobRef> {
        let mut q = self.lock();
        if q.closed {
            return Err(job);
        }
        q.jobs.push_back(job);
        self.publish_len(&q);
        Ok(())
    }

    /// Takes the oldest job (owner only).
    #[inline]
    pub(crate) fn pop(&self) -> Option<JobRef> {
        if self.is_empty() {
            return None;
        }
        let mut q = self.lock();
        let job = q.jobs.pop_front();
        self.publish_len(&q);
        job
    }

    /// Jobs waiting (read without the lock, for metrics).
    pub(crate) fn len(&self) -> usize {
        // Relaxed: a statistic.
        self.len.load(Ordering::Relaxed)
    }

    /// True when the inbox holds nothing (read without the lock).
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        // SeqCst: pairs with the SeqCst store in `publish_len`.
        self.len.load(Ordering::SeqCst) == 0
    }

    /// The owner is leaving its loop: refuse further pushes, unless a job is waiting (then
    /// returns false and the owner keeps running).
    pub(crate) fn close_if_empty(&self) -> bool {
        let mut q = self.lock();
        if q.jobs.is_empty() {
            q.closed = true;
        }
        q.closed
    }
}

impl Registry {
    /// Submits `job` to worker `index` (which must exist) and wakes it if it sleeps. If that
    /// worker has already exited (the pool is shutting down), any remaining worker runs it.
    pub(crate) fn push_to(&self, index: usize, job: JobRef) {
        self.refuse_if_forked_away();
        match self.inboxes[index].push(job) {
            Ok(()) => self.sleep.notify_worker(index),
            Err(job) => self.inject(job),
        }
    }

    /// Runs `op` on worker `index` (which must exist) and returns its value, re-raising its
    /// panic. On that worker it runs inline; a worker of this or another pool keeps running its
    /// own pool's work while it waits; any other thread blocks.
    pub(crate) fn in_worker_at<OP, R>(this: &Arc<Self>, index: usize, op: OP) -> R
    where
        OP: FnOnce() -> R + Send,
        R: Send,
    {
        match WorkerThread::current() {
            Some(w) if Arc::ptr_eq(w.registry(), this) && w.index() == index => op(),
            Some(w) => {
                let latch = if Arc::ptr_eq(w.registry(), this) {
                    SpinLatch::new(w.registry(), w.index())
                } else {
                    SpinLatch::cross(w.registry(), w.index())
                };
                let job = StackJob::new(TaskKind::Install, |_| op(), latch);
                this.push_to(index, job.as_job_ref());
                w.wait_until(&job.latch.core);
                job.into_result()
            }
            None => Self::in_worker_at_cold(this, index, op),
        }
    }

    /// From a thread outside every pool: mail the job and block on a latch.
    #[cold]
    fn in_worker_at_cold<OP, R>(this: &Arc<Self>, index: usize, op: OP) -> R
    where
        OP: FnOnce() -> R + Send,
        R: Send,
    {
        thread_local!(static LOCK_LATCH: LockLatch = LockLatch::new());
        LOCK_LATCH.with(|latch| {
            let job = StackJob::new(
                TaskKind::Install,
                |_| {
                    let r = op();
                    crate::pool::worker::caller_comes_back();
                    r
                },
                latch,
            );
            this.push_to(index, job.as_job_ref());
            latch.wait_and_reset();
            job.into_result()
        })
    }
}
