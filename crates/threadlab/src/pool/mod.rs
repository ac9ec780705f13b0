//! The pool: a fixed set of long-lived workers that share work by stealing.
//!
//! - [`builder`]: configuration and start-up.
//! - [`configuration`]: Rayon's older configuration interface, over the builder.
//! - [`affinity`]: `pin_to_cores`: the CPUs a process may use, and pinning failures.
//! - [`fork`]: pools in a child process made by `fork()`.
//! - [`registry`]: what the workers share and how work enters the pool.
//! - [`limits`]: the system's limits on threads, checked before the workers start.
//! - [`inbox`]: work addressed to one worker (`spawn_on`, `install_on`, the partitioners).
//! - [`run_next`]: each worker's run-next slot (the future its last task woke) and the budget.
//! - [`worker`]: the worker thread's loop.
//! - [`sleep`]: the idle protocol (search, spin, park, wake, retire) and why no wake-up is lost.
//! - [`seat`]: what a worker is apart from its thread, so an elastic pool's idle workers can
//!   exit and start again.
//! - [`metrics`]: per-worker counters.

pub(crate) mod affinity;
pub(crate) mod builder;
pub(crate) mod configuration;
pub(crate) mod fork;
pub(crate) mod inbox;
pub(crate) mod limits;
pub(crate) mod metrics;
pub(crate) mod registry;
pub(crate) mod run_next;
pub(crate) mod seat;
pub(crate) mod sleep;
pub(crate) mod spare;
pub(crate) mod worker;

use crate::loom::sync::Arc;
use crate::scope::Scope;
use crate::NoSuchWorker;
pub use builder::{Builder, CustomSpawn, DefaultSpawn, ThreadBuilder, ThreadSpawn};
#[allow(deprecated)]
pub use configuration::{initialize, Configuration};
pub use metrics::{Histogram, Metrics, WorkerMetrics};
use registry::Registry;
pub use sleep::WakePolicy;
pub use spare::blocking;
use worker::WorkerThread;

/// A pool of worker threads.
///
/// ```
/// let pool = threadlab::Pool::builder().threads(2).build()?;
/// let (a, b) = pool.install(|| threadlab::join(|| 1 + 1, || 2 + 2));
/// assert_eq!((a, b), (2, 4));
/// # Ok::<(), threadlab::BuildError>(())
/// ```
///
/// Dropping the pool runs the work already queued, then joins the threads.
pub struct Pool {
    registry: Arc<Registry>,
    stopped: bool,
}

/// What [`Pool::shutdown`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ShutdownReport {
    /// Fire-and-forget tasks that panicked over the pool's life, and panics caught while
    /// dropping a task's value (a payload, a detached output or future; see
    /// [`Metrics::panicked_tasks`]).
    pub panicked_tasks: u64,
    /// Tasks the workers executed over the pool's life.
    pub tasks_run: u64,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("threads", &self.registry.num_threads())
            .field("sleep", &self.registry.sleep.state())
            .field("wake_policy", &self.registry.sleep.policy())
            .finish()
    }
}

impl Pool {
    /// A [`Builder`].
    pub fn builder() -> Builder {
        Builder::new()
    }

    pub(crate) fn from_parts(registry: Arc<Registry>) -> Self {
        Pool {
            registry,
            stopped: false,
        }
    }

    pub(crate) fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The number of worker threads.
    pub fn current_num_threads(&self) -> usize {
        self.registry.num_threads()
    }

    /// Runs `op` on one of the pool's workers and returns its value (re-raising its panic).
    /// From one of this pool's workers it runs inline; from another pool's worker, that worker
    /// keeps running its own pool's work while it waits.
    ///
    /// From any other thread, while a worker sleeps, `op` runs on the calling thread as that
    /// worker's guest: with its index ([`current_thread_index`](crate::current_thread_index)),
    /// its deque (the other workers steal from it as usual) and its place in the pool, while the
    /// worker itself stays asleep, so the pool never computes on more threads than it has
    /// workers, and the call costs no thread switch (chili and spice likewise run the caller's
    /// closure on the caller). Tasks `op` spawns and leaves behind run on the pool as usual.
    /// When no worker sleeps, or when the builder set a thread name, a stack size or pinning
    /// (promises of the workers' own threads), `op` is queued for a worker and the caller
    /// blocks until it finished. A recording does not change where `op` runs: it marks a
    /// guest's install span with the seat it holds ([`trace::ARG_GUEST_SEAT`]), and the doctor
    /// reads that span as the seat's worker's work.
    ///
    /// [`trace::ARG_GUEST_SEAT`]: crate::trace::ARG_GUEST_SEAT
    ///
    /// ```
    /// let pool = threadlab::Pool::builder().threads(2).build()?;
    /// assert_eq!(pool.install(|| 6 * 7), 42);
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    #[track_caller]
    pub fn install<OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce() -> R + Send,
        R: Send,
    {
        Registry::in_worker(&self.registry, |_, _| op())
    }

    /// Runs `f` on the pool, fire-and-forget. A panic goes to the panic handler.
    ///
    /// ```
    /// use std::sync::mpsc;
    /// let pool = threadlab::Pool::builder().threads(2).build()?;
    /// let (tx, rx) = mpsc::channel();
    /// pool.spawn(move || tx.send(5).unwrap());
    /// assert_eq!(rx.recv().unwrap(), 5);
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    #[track_caller]
    pub fn spawn<F: FnOnce() + Send + 'static>(&self, f: F) {
        crate::context::spawn_fn(&self.registry, None, std::panic::Location::caller(), f);
    }

    /// Runs `f` on worker `worker` (an index in `0..current_num_threads()`), fire-and-forget.
    /// The task waits in that worker's inbox, which no other worker takes from, until the worker
    /// gets to it (after the task it is running, before it steals), so it runs there even when
    /// other workers are idle. A panic goes to the panic handler.
    ///
    /// Only while the pool shuts down, if that worker has already exited, does the task run on
    /// another worker.
    ///
    /// ```
    /// use std::sync::mpsc;
    /// let pool = threadlab::Pool::builder().threads(2).build()?;
    /// let (tx, rx) = mpsc::channel();
    /// pool.spawn_on(1, move || tx.send(threadlab::current_thread_index()).unwrap())?;
    /// assert_eq!(rx.recv().unwrap(), Some(1));
    /// assert!(pool.spawn_on(2, || {}).is_err()); // no worker 2
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[track_caller]
    pub fn spawn_on<F: FnOnce() + Send + 'static>(
        &self,
        worker: usize,
        f: F,
    ) -> Result<(), NoSuchWorker> {
        self.check_worker(worker)?;
        let kind = Some(crate::trace::TaskKind::Spawn);
        let location = std::panic::Location::caller();
        let job = match crate::context::Tag::capture(None, location) {
            None => self.registry.spawn_job(kind, f),
            Some(tag) => self
                .registry
                .spawn_job(kind, crate::context::tagged(tag, f)),
        };
        self.registry.push_to(worker, job);
        Ok(())
    }

    /// Runs `op` on worker `worker` and returns its value (re-raising its panic), like
    /// [`Pool::install`] but on that worker. Use it to run per-thread set-up (pinning, first
    /// touch of memory a worker will own) or to reach data a worker caches.
    ///
    /// From that worker itself `op` runs inline; from another worker of this or another pool,
    /// the caller runs its own pool's work while it waits; from any other thread, the caller
    /// blocks. If the target worker is busy with a long task, `install_on` waits for it.
    ///
    /// ```
    /// let pool = threadlab::Pool::builder().threads(2).build()?;
    /// for w in 0..2 {
    ///     assert_eq!(pool.install_on(w, threadlab::current_thread_index)?, Some(w));
    /// }
    /// let err = pool.install_on(7, || ()).unwrap_err();
    /// assert!(err.to_string().contains("no worker 7"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn install_on<OP, R>(&self, worker: usize, op: OP) -> Result<R, NoSuchWorker>
    where
        OP: FnOnce() -> R + Send,
        R: Send,
    {
        self.check_worker(worker)?;
        Ok(Registry::in_worker_at(&self.registry, worker, op))
    }

    fn check_worker(&self, worker: usize) -> Result<(), NoSuchWorker> {
        let n = self.registry.num_threads();
        if worker < n {
            Ok(())
        } else {
            Err(NoSuchWorker::new(worker, n))
        }
    }

    /// A scope on this pool: tasks spawned in it may borrow from the caller, and `scope` returns
    /// after all of them finished. See [`crate::scope()`].
    ///
    /// ```
    /// let pool = threadlab::Pool::builder().threads(2).build()?;
    /// let mut halves = [0u64; 2];
    /// let (lo, hi) = halves.split_at_mut(1);
    /// pool.scope(|s| {
    ///     s.spawn(|_| lo[0] = (0..50).sum());
    ///     s.spawn(|_| hi[0] = (50..100).sum());
    /// });
    /// assert_eq!(halves[0] + halves[1], 4950);
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    #[track_caller]
    pub fn scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R + Send,
        R: Send,
    {
        Registry::in_worker(&self.registry, |w, _| crate::scope::scope_on_worker(w, op))
    }

    /// A snapshot of the per-worker counters.
    pub fn metrics(&self) -> Metrics {
        self.registry.metrics()
    }

    /// Runs the work already queued, joins the threads, and reports.
    pub fn shutdown(mut self) -> ShutdownReport {
        self.stop();
        let metrics = self.registry.metrics();
        ShutdownReport {
            panicked_tasks: metrics.panicked_tasks,
            tasks_run: metrics.tasks_run(),
        }
    }

    fn stop(&mut self) {
        if std::mem::replace(&mut self.stopped, true) {
            return;
        }
        // In a child made by fork(): no thread to stop or join, and the pool's locks may be held
        // by threads that are not in this process (`fork`). Its memory is leaked.
        if self.registry.forked_away() {
            return;
        }
        self.registry.terminate();
        let on_own_worker =
            WorkerThread::current().is_some_and(|w| Arc::ptr_eq(w.registry(), &self.registry));
        // From one of its own workers the pool cannot join itself; the threads exit on their own.
        if !on_own_worker {
            self.registry.join_threads();
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Pool {
    /// [`Pool::spawn`] with a name, which the recorder puts on the task's span
    /// ([`crate::trace::ARG_TASK_NAME`]) and the doctor and `compare` quote.
    ///
    /// ```
    /// let pool = threadlab::Pool::builder().threads(1).build()?;
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// pool.spawn_named("flush", move || tx.send(5).unwrap());
    /// assert_eq!(rx.recv().unwrap(), 5);
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    #[track_caller]
    pub fn spawn_named<F: FnOnce() + Send + 'static>(&self, name: &'static str, f: F) {
        crate::context::spawn_fn(
            &self.registry,
            Some(name),
            std::panic::Location::caller(),
            f,
        );
    }
}
