//! Futures on the same workers as the fork-join work: [`Pool::spawn_future`],
//! [`Pool::block_on`], [`spawn_future`], [`block_on`], and [`JoinHandle`].
//!
//! A spawned future is a task: one allocation (`cell`) holding a packed state word (`state`),
//! the future, later its output, and the JoinHandle's waker. A task is queued as an ordinary
//! job (a `JobRef` whose run polls the future once), so futures share the deques, the
//! injector, stealing and the sleep protocol with `join`, `scope` and `spawn`, and one pool
//! serves a program that mixes both. Its waker (`waker`) re-queues it: into the run-next slot of
//! the worker that woke it (`crate::pool::run_next`, stealable by idle workers after a short
//! grace), into the injector when woken from outside the pool, or at the back of the queue when
//! it woke itself or its worker's budget of run-next polls is spent (`crate::pool::run_next`,
//! "The budget"). The design follows
//! the multi-threaded executors of Go (`runnext`, `runqsteal`), Tokio (task state word, LIFO
//! slot, `MAX_LIFO_POLLS_PER_TICK`) and *Rendezvous Benchmark Analysis*'s account of Kyo; see each file.
//!
//! Waking a parked worker for a woken task is the [`WakePolicy`](crate::WakePolicy)'s decision
//! (`crate::pool::sleep`, "Wake policies"): the default wakes nobody for a task placed in a
//! run-next slot, because the worker that placed it is awake and runs it next.
//!
//! Each poll is a task span of kind [`TaskKind::Future`](crate::trace::TaskKind::Future) in the
//! recorder, with an arrow from the wake (or spawn) that queued it.

pub(crate) mod block_on;
pub(crate) mod cell;
mod join_handle;
#[cfg(loom)]
pub mod state;
#[cfg(not(loom))]
pub(crate) mod state;
mod waker;

use std::future::Future;

pub use join_handle::JoinHandle;

use crate::context::{Tag, Tagged};
use crate::pool::front::Pool;
use crate::pool::registry::Registry;
use std::panic::Location;

impl Pool {
    /// Runs `future` on the pool's workers and returns its [`JoinHandle`] (itself a future, or
    /// [`JoinHandle::join`] to block). Dropping the handle detaches the task.
    ///
    /// ```
    /// let pool = threadlab::Pool::builder().threads(2).build()?;
    /// let h = pool.spawn_future(async { 1 });
    /// assert_eq!(pool.block_on(h), 1);
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    #[track_caller]
    pub fn spawn_future<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        spawn_tagged(self.registry(), None, Location::caller(), future)
    }

    /// Runs `future` to completion on one of the pool's workers and returns its output
    /// (re-raising its panic). The worker polls it and runs the pool's other work between
    /// polls, so it may wait for tasks of the same pool, even on a one-worker pool; the
    /// calling thread, if it is not one of this pool's workers, waits as in [`Pool::install`].
    /// Inside the future, [`spawn_future`] and the other free functions use this pool.
    ///
    /// ```
    /// let pool = threadlab::Pool::builder().threads(1).build()?;
    /// let sum = pool.block_on(async {
    ///     let a = threadlab::spawn_future(async { 2 });
    ///     let b = threadlab::spawn_future(async { 3 });
    ///     a.await + b.await
    /// });
    /// assert_eq!(sum, 5);
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    pub fn block_on<F>(&self, future: F) -> F::Output
    where
        F: Future + Send,
        F::Output: Send,
    {
        Registry::in_worker(self.registry(), |w, _| block_on::on_worker(w, future))
    }
}

/// Runs `future` on the current pool (this worker's pool, else the global one) and returns its
/// [`JoinHandle`].
///
/// ```
/// let h = threadlab::spawn_future(async { "hi" });
/// assert_eq!(h.join(), "hi");
/// ```
#[track_caller]
pub fn spawn_future<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    spawn_tagged(
        crate::global::current_registry(),
        None,
        Location::caller(),
        future,
    )
}

/// Runs `future` to completion on this thread and returns its output. On a worker, the worker
/// runs other work of its pool between polls (no deadlock when the future waits for tasks of
/// that pool); on any other thread, the thread sleeps between polls, and tasks spawned with
/// [`spawn_future`] inside go to the global pool.
///
/// ```
/// let n = threadlab::block_on(async {
///     let h = threadlab::spawn_future(async { 20 });
///     h.await + 1
/// });
/// assert_eq!(n, 21);
/// ```
pub fn block_on<F: Future>(future: F) -> F::Output {
    block_on::block_on_here(future)
}

/// A future on `registry`, tagged with its name, location and spawn context when there is any
/// to carry (`crate::context`): each poll then runs inside the tag.
#[inline]
fn spawn_tagged<F>(
    registry: &crate::loom::sync::Arc<Registry>,
    name: Option<&'static str>,
    location: &'static Location<'static>,
    future: F,
) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    match Tag::capture(name, location) {
        None => JoinHandle::new(cell::spawn(registry, future)),
        Some(tag) => spawn_with_tag(registry, tag, future),
    }
}

/// The tagged future, out of line: the untagged path stays as small as it was.
#[cold]
#[inline(never)]
fn spawn_with_tag<F>(
    registry: &crate::loom::sync::Arc<Registry>,
    tag: Tag,
    future: F,
) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    JoinHandle::new(cell::spawn(registry, Tagged::new(tag, future)))
}

/// [`spawn_future`] with a name, which the recorder puts on every poll's task span
/// ([`crate::trace::ARG_TASK_NAME`]) and the doctor and `compare` quote.
///
/// ```
/// let h = threadlab::spawn_future_named("fetch", async { 3 });
/// assert_eq!(h.join(), 3);
/// ```
#[track_caller]
pub fn spawn_future_named<F>(name: &'static str, future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    spawn_tagged(
        crate::global::current_registry(),
        Some(name),
        Location::caller(),
        future,
    )
}

impl Pool {
    /// [`Pool::spawn_future`] with a name, which the recorder puts on every poll's task span
    /// ([`crate::trace::ARG_TASK_NAME`]) and the doctor and `compare` quote.
    ///
    /// ```
    /// let pool = threadlab::Pool::builder().threads(1).build()?;
    /// let h = pool.spawn_future_named("fetch", async { 1 });
    /// assert_eq!(pool.block_on(h), 1);
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    #[track_caller]
    pub fn spawn_future_named<F>(&self, name: &'static str, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        spawn_tagged(self.registry(), Some(name), Location::caller(), future)
    }
}
