//! `spawn_fifo`'s order on top of threadlab's `spawn`.
//!
//! A spawn's task goes to the spawning worker's deque, whose owner takes the newest first. For
//! first-in-first-out order, the task goes into a [`Fifo`] queue instead, and a *stub* task
//! into the pool in its place; whichever stub runs first runs the oldest task of the queue. One
//! stub per task, so every task runs exactly once, in the order the tasks were queued. This is
//! the way threadlab's `Scope::spawn_fifo` keeps a scope's order, and rayon-core's way too (a
//! FIFO queue per worker, entered through its deque).
//!
//! Which queue: a `ThreadPool`'s own for its `spawn_fifo` method; for the free `spawn_fifo`,
//! one per worker thread (lazily made; a worker of a pool is always in that pool, so the stubs
//! it spawns and the tasks they take are of one pool), and one for callers outside every pool
//! (whose tasks go to the global pool).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, OnceLock};

type Task = Box<dyn FnOnce() + Send>;

/// Tasks of `spawn_fifo` not started yet, oldest first.
#[derive(Default)]
pub(crate) struct Fifo {
    tasks: Mutex<VecDeque<Task>>,
}

impl Fifo {
    /// Queues `task` and hands `spawn` the stub that will run the oldest queued task.
    pub(crate) fn push<F>(self: &Arc<Self>, task: F, spawn: impl FnOnce(Box<dyn FnOnce() + Send>))
    where
        F: FnOnce() + Send + 'static,
    {
        self.lock().push_back(Box::new(task));
        let fifo = Arc::clone(self);
        spawn(Box::new(move || {
            let oldest = fifo
                .lock()
                .pop_front()
                .expect("Fifo: one queued task per stub");
            oldest()
        }));
    }

    /// Only pushes and pops happen under the lock: a panic cannot leave the queue half done.
    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Task>> {
        self.tasks.lock().unwrap_or_else(|e| e.into_inner())
    }
}

thread_local! {
    /// The queue of the free `spawn_fifo` called on this worker thread.
    static WORKER_FIFO: Arc<Fifo> = Arc::default();
}

/// The free `spawn_fifo`: the current pool (this worker's, else the global one), in order.
#[track_caller]
pub(crate) fn spawn_fifo_current<F>(task: F)
where
    F: FnOnce() + Send + 'static,
{
    if threadlab::current_thread_index().is_some() {
        WORKER_FIFO.with(|fifo| fifo.push(task, threadlab::spawn));
    } else {
        static OUTSIDE: OnceLock<Arc<Fifo>> = OnceLock::new();
        OUTSIDE
            .get_or_init(Arc::default)
            .push(task, threadlab::spawn);
    }
}
