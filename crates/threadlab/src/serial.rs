//! Serial queues: FIFO, one task at a time, on the pool's workers, with no thread of their own.
//!
//! This is the dispatch-queue design of *The overhead of spawning threads* ("The overhead of spawning threads",
//! Cocoa with Love, on GCD's serial queues against a dedicated RunLoop thread per queue): many
//! serial queues can share a few workers, and an idle queue costs nothing.
//!
//! # Algorithm
//!
//! A queue is a `Mutex<(VecDeque<task>, scheduled)>`. The flag `scheduled` says that a *drain
//! task* for this queue exists, queued on the pool or running; there is never more than one.
//!
//! - `push` appends the task under the lock; if `scheduled` was false it sets it and, after
//!   unlocking, spawns one drain task on the pool.
//! - The drain task pops and runs up to [`BATCH`] tasks, one after the other. If the queue is
//!   empty it clears `scheduled` under the same lock that `push` takes, so a concurrent push
//!   either sees `scheduled == true` (and its task will be popped by this drain) or sees it false
//!   after the drain let go (and spawns a new drain). After a full batch it re-spawns itself
//!   instead of looping, so one busy queue does not monopolise a worker: the pool's other work
//!   (and other queues) gets a turn.
//!
//! One task at a time follows from "at most one drain task", and FIFO from one `VecDeque`
//! popped at the front by that single drain. Consecutive tasks are ordered by the queue's
//! mutex (the drain locks it after one task returns and before it pops the next) or, across a
//! re-spawn, by the pool's spawn, so task *n + 1* sees everything task *n* wrote.
//!
//! A task that panics does not wedge the queue: the drain first arranges for the remaining
//! tasks to run (re-spawning itself or clearing `scheduled`), then lets the panic go on to the
//! pool's panic handler, which counts it.

use std::collections::VecDeque;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use crate::loom::sync::{Arc, Mutex, MutexGuard};
use crate::pool::registry::Registry;
use crate::thread_pool::Pool;
use crate::trace::hooks::TaskSpan;
use crate::trace::TaskKind;

/// Tasks a drain task runs before it re-spawns itself to let other work run (GCD drains a
/// serial queue in similar bounded bursts for the same fairness reason).
pub const BATCH: usize = 64;

type Task = Box<dyn FnOnce() + Send + 'static>;

struct State {
    tasks: VecDeque<Task>,
    /// A drain task for this queue is queued or running (see the module docs).
    scheduled: bool,
}

struct Inner {
    registry: Arc<Registry>,
    state: Mutex<State>,
}

/// A FIFO queue whose tasks run one at a time on a pool's workers.
///
/// Cloning gives another handle to the same queue. Tasks pushed after the pool's workers exited
/// (it was shut down, or dropped and done with its queued work) are dropped without running.
///
/// ```
/// use std::sync::mpsc;
/// let pool = threadlab::Pool::builder().threads(2).build()?;
/// let queue = threadlab::SerialQueue::new(&pool);
/// let (tx, rx) = mpsc::channel();
/// for i in 0..5 {
///     let tx = tx.clone();
///     queue.push(move || tx.send(i).unwrap());
/// }
/// // One at a time, in the order pushed.
/// assert_eq!(rx.iter().take(5).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
/// # Ok::<(), threadlab::BuildError>(())
/// ```
#[derive(Clone)]
pub struct SerialQueue {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for SerialQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = self.inner.lock();
        f.debug_struct("SerialQueue")
            .field("queued", &st.tasks.len())
            .field("scheduled", &st.scheduled)
            .finish()
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic never happens while the lock is held (tasks run outside it), but recover
        // rather than propagate poison just in case.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl SerialQueue {
    /// A new, empty queue whose tasks will run on `pool`'s workers.
    pub fn new(pool: &Pool) -> SerialQueue {
        SerialQueue {
            inner: Arc::new(Inner {
                registry: Arc::clone(pool.registry()),
                state: Mutex::new(State {
                    tasks: VecDeque::new(),
                    scheduled: false,
                }),
            }),
        }
    }

    /// Appends `task`; it runs after every task pushed before it has finished, and never at the
    /// same time as another task of this queue. Returns at once.
    pub fn push<F: FnOnce() + Send + 'static>(&self, task: F) {
        let start_drain = {
            let mut st = self.inner.lock();
            st.tasks.push_back(Box::new(task));
            !std::mem::replace(&mut st.scheduled, true)
        };
        if start_drain {
            spawn_drain(Arc::clone(&self.inner));
        }
    }

    /// Tasks waiting to run (not counting one that is running now).
    pub fn len(&self) -> usize {
        self.inner.lock().tasks.len()
    }

    /// True when no task is waiting.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn spawn_drain(inner: Arc<Inner>) {
    let registry = Arc::clone(&inner.registry);
    // No span for the drain itself: each task it runs gets its own `serial` span.
    registry.push(registry.spawn_job(None, move || drain(inner)));
}

/// Runs up to [`BATCH`] tasks, then hands over (see the module docs).
fn drain(inner: Arc<Inner>) {
    for _ in 0..BATCH {
        let task = {
            let mut st = inner.lock();
            match st.tasks.pop_front() {
                Some(t) => t,
                None => {
                    st.scheduled = false;
                    return;
                }
            }
        };
        let span = TaskSpan::enter(TaskKind::Serial, None);
        let outcome = catch_unwind(AssertUnwindSafe(task));
        drop(span);
        if let Err(payload) = outcome {
            continue_later(inner);
            resume_unwind(payload);
        }
    }
    continue_later(inner);
}

/// After a batch or a panic: re-spawn the drain if tasks remain, else mark the queue idle.
#[cold]
#[inline(never)]
fn continue_later(inner: Arc<Inner>) {
    let more = {
        let mut st = inner.lock();
        if st.tasks.is_empty() {
            st.scheduled = false;
        }
        st.scheduled
    };
    if more {
        spawn_drain(inner);
    }
}
