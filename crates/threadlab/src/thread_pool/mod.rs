//! The pool's public face, above the engine (`pool/`), as rayon-core's `thread_pool` module sits
//! above its `registry.rs` and Tokio's `runtime.rs` above its scheduler: [`Pool`], the handle a
//! user holds, with every method it has, here; [`Builder`], with every method it has, in
//! `builder.rs`; the functions on "the current pool" (Rayon's names, and the futures' front
//! ends) in `functions.rs`; Rayon's older `Configuration` in `configuration.rs`. The engine
//! never names this room; it calls down into the engine, `scope.rs`, `broadcast.rs` and `task/`.

mod builder;
mod configuration;
mod functions;
pub(crate) mod handle;

pub use builder::{Builder, CustomSpawn, DefaultSpawn, ThreadSpawn};
#[allow(deprecated)]
pub use configuration::{initialize, Configuration};
pub use functions::{
    block_on, broadcast, current_num_threads, current_thread_has_pending_tasks,
    current_thread_index, in_place_scope, in_place_scope_fifo, join_context, max_num_threads,
    scope, scope_fifo, spawn, spawn_broadcast, spawn_fifo, spawn_future, spawn_future_named,
    spawn_named, yield_local, yield_now, FnContext, ScopeFifo, Yield,
};
pub use handle::Pool;

use std::error::Error;
use std::future::Future;
use std::panic::Location;

use crate::broadcast::{broadcast_in, spawn_broadcast_in, BroadcastContext};
use crate::context::{tagged, Tag};
use crate::error::NoSuchWorker;
use crate::loom::sync::Arc;
use crate::pool::metrics::Metrics;
use crate::pool::registry::Registry;
use crate::pool::worker::WorkerThread;
use crate::scope::Scope;
use crate::task::{spawn_tagged, JoinHandle};
use functions::{spawn_fifo_fn, spawn_fn};

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
    /// When no worker sleeps, when the builder turned guests off ([`Builder::guests`]), or
    /// when it set a thread name, a stack size, pinning or a start handler (promises of the
    /// workers' own threads), `op` is queued for a worker and the caller blocks until it
    /// finished.
    ///
    /// What a guest changes, and the one place threadlab's meaning differs from Rayon's by
    /// default: **`op` sees the caller's thread-locals and thread name**
    /// (`std::thread::current().name()`), not a worker's. Inside the pool's work everything
    /// else is as on a worker: [`current_thread_index`](crate::current_thread_index) is the
    /// seat's index, `join` and `scope` fork onto the pool, a broadcast reaches the seat, and
    /// [`join_context`](crate::join_context) reports the call as having come from outside
    /// (`migrated()`). A program that relies on running on the pool's own threads builds it
    /// with `guests(false)` (or sets `THREADLAB_GUESTS=0`).
    ///
    /// A recording does not change where `op` runs: it marks a
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
        spawn_fn(&self.registry, None, std::panic::Location::caller(), f);
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
        let job = match Tag::capture(None, location) {
            None => self.registry.spawn_job(kind, f),
            Some(tag) => self.registry.spawn_job(kind, tagged(tag, f)),
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

    /// The pool's explicit join: tells the workers to finish (as dropping the pool does), then
    /// waits until they ran the work already queued and what it spawned, and their threads
    /// (the monitor's and any spare thread's too) have exited; then reports. Use it where the
    /// threads must be gone before the program goes on: before `fork()`, before timing
    /// something else, before checking what the exit handlers did. (Dropping the pool returns
    /// at once; see [`Drop`](#impl-Drop-for-Pool).)
    ///
    /// Called from one of the pool's own workers it cannot wait for itself: it tells the workers
    /// to finish and returns. The threads of a spawn handler ([`Builder::spawn_handler`]) are
    /// the program's to join.
    ///
    /// [`Builder::spawn_handler`]: crate::Builder::spawn_handler
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    /// let exited = Arc::new(AtomicUsize::new(0));
    /// let e = Arc::clone(&exited);
    /// let pool = threadlab::Pool::builder()
    ///     .threads(2)
    ///     .exit_handler(move |_| {
    ///         e.fetch_add(1, Ordering::SeqCst);
    ///     })
    ///     .build()?;
    /// pool.spawn(|| ());
    /// let report = pool.shutdown(); // the workers have exited
    /// assert_eq!(exited.load(Ordering::SeqCst), 2);
    /// assert_eq!(report.tasks_run, 1);
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    pub fn shutdown(mut self) -> ShutdownReport {
        if self.stop() {
            let on_own_worker =
                WorkerThread::current().is_some_and(|w| Arc::ptr_eq(w.registry(), &self.registry));
            // From one of its own workers the pool cannot join itself; the threads exit on their
            // own.
            if !on_own_worker {
                self.registry.join_threads();
            }
        }
        let metrics = self.registry.metrics();
        ShutdownReport {
            panicked_tasks: metrics.panicked_tasks,
            tasks_run: metrics.tasks_run(),
        }
    }

    /// Tells the workers to finish and exit, once (and this thread leaves the pool if it is its
    /// worker 0, `Builder::use_current_thread`); false in a child made by `fork()`, where the
    /// pool has no threads (and its locks may be held by threads that are not in this process,
    /// `pool::fork`): its memory is leaked there.
    fn stop(&mut self) -> bool {
        if std::mem::replace(&mut self.stopped, true) || self.registry.forked_away() {
            return false;
        }
        self.registry.terminate();
        // The thread that built the pool with `use_current_thread` leaves its seat here.
        crate::pool::worker::detach_current(&self.registry);
        true
    }

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
        spawn_fn(
            &self.registry,
            Some(name),
            std::panic::Location::caller(),
            f,
        );
    }

    /// [`broadcast`](crate::broadcast()) on this pool.
    ///
    /// ```
    /// let pool = threadlab::Pool::builder().threads(3).build()?;
    /// let idx = pool.broadcast(|_| threadlab::current_thread_index().unwrap());
    /// assert_eq!(idx, [0, 1, 2]);
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    pub fn broadcast<OP, R>(&self, op: OP) -> Vec<R>
    where
        OP: Fn(BroadcastContext<'_>) -> R + Sync,
        R: Send,
    {
        broadcast_in(self.registry(), &op)
    }

    /// [`spawn_broadcast`](crate::spawn_broadcast) on this pool.
    ///
    /// ```
    /// use std::sync::{mpsc::channel, Mutex};
    /// let pool = threadlab::Pool::builder().threads(2).build()?;
    /// let (tx, rx) = channel();
    /// let tx = Mutex::new(tx);
    /// pool.spawn_broadcast(move |ctx| tx.lock().unwrap().send(ctx.index()).unwrap());
    /// let mut got: Vec<usize> = rx.iter().take(2).collect();
    /// got.sort();
    /// assert_eq!(got, [0, 1]);
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    pub fn spawn_broadcast<OP>(&self, op: OP)
    where
        OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
    {
        spawn_broadcast_in(self.registry(), op)
    }

    /// `join` on this pool.
    ///
    /// ```
    /// let pool = threadlab::Pool::builder().threads(2).build()?;
    /// assert_eq!(pool.join(|| 1, || 2), (1, 2));
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    pub fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        self.install(|| crate::join(a, b))
    }

    /// The index of the current thread among this pool's workers; `None` off this pool.
    ///
    /// ```
    /// let pool = threadlab::Pool::builder().threads(2).build()?;
    /// assert_eq!(pool.current_thread_index(), None);
    /// assert!(pool.install(|| pool.current_thread_index()).is_some());
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    pub fn current_thread_index(&self) -> Option<usize> {
        crate::broadcast::on(self.registry()).map(|w| self.registry().index_as(w.index()))
    }

    /// `yield_now` for a thread of this pool; `None` off it.
    ///
    /// ```
    /// let pool = threadlab::Pool::builder().threads(1).build()?;
    /// assert_eq!(pool.yield_now(), None);
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    pub fn yield_now(&self) -> Option<Yield> {
        crate::broadcast::on(self.registry())?;
        yield_now()
    }

    /// `yield_local` for a thread of this pool; `None` off it.
    ///
    /// ```
    /// let pool = threadlab::Pool::builder().threads(1).build()?;
    /// assert_eq!(pool.yield_local(), None);
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    pub fn yield_local(&self) -> Option<Yield> {
        crate::broadcast::on(self.registry())?;
        yield_local()
    }

    /// `scope_fifo` on this pool.
    ///
    /// ```
    /// let pool = threadlab::Pool::builder().threads(2).build()?;
    /// assert_eq!(pool.scope_fifo(|_| 4), 4);
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    pub fn scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R + Send,
        R: Send,
    {
        self.scope(op)
    }

    /// [`in_place_scope`] on this pool: the body runs on the calling thread (no `Send` bound),
    /// the tasks on this pool.
    ///
    /// ```
    /// let pool = threadlab::Pool::builder().threads(1).build()?;
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// pool.in_place_scope(|s| {
    ///     s.spawn(move |_| tx.send(5).unwrap());
    ///     // The body waits for its own task: the pool's only worker runs it.
    ///     assert_eq!(rx.recv().unwrap(), 5);
    /// });
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    pub fn in_place_scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R,
    {
        crate::scope::in_place_scope_in(self.registry(), op)
    }

    /// [`in_place_scope_fifo`] on this pool.
    ///
    /// ```
    /// let pool = threadlab::Pool::builder().threads(2).build()?;
    /// let rc = std::rc::Rc::new(4); // not Send
    /// assert_eq!(pool.in_place_scope_fifo(|_| *rc), 4);
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    pub fn in_place_scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R,
    {
        self.in_place_scope(op)
    }

    /// [`spawn_fifo`] on this pool: [`Pool::spawn`] in first-in-first-out order per
    /// spawning thread.
    ///
    /// ```
    /// let pool = threadlab::Pool::builder().threads(2).build()?;
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// pool.spawn_fifo(move || tx.send(2).unwrap());
    /// assert_eq!(rx.recv().unwrap(), 2);
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    #[track_caller]
    pub fn spawn_fifo<F: FnOnce() + Send + 'static>(&self, f: F) {
        spawn_fifo_fn(self.registry(), std::panic::Location::caller(), f)
    }

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
        Registry::in_worker(self.registry(), |w, _| {
            crate::task::block_on::on_worker(w, future)
        })
    }

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

/// Dropping a pool tells its workers to finish and returns at once, without waiting for them
/// (Rayon's meaning): they run the work already queued, including tasks spawned after the drop
/// by that work (a task may keep using the pool through `threadlab::spawn` and the like), then
/// their threads exit by themselves, running the exit handler. The explicit join is
/// [`Pool::shutdown`].
///
/// ```
/// use std::sync::mpsc::channel;
/// let (tx, rx) = channel();
/// let (go, wait) = channel::<()>();
/// let pool = threadlab::Pool::builder().threads(1).build()?;
/// pool.spawn(move || {
///     wait.recv().unwrap(); // still running after the drop below
///     tx.send(7).unwrap();
/// });
/// drop(pool); // returns at once
/// go.send(()).unwrap();
/// assert_eq!(rx.recv().unwrap(), 7);
/// # Ok::<(), threadlab::BuildError>(())
/// ```
impl Drop for Pool {
    fn drop(&mut self) {
        self.stop();
    }
}

#[allow(deprecated)]
impl Pool {
    /// Starts a pool with `configuration`, as [`Configuration::build`].
    ///
    /// # Errors
    /// The builder's [`BuildError`](crate::BuildError), boxed.
    ///
    /// ```
    /// #![allow(deprecated)]
    /// let pool = threadlab::Pool::new(threadlab::Configuration::new().threads(2))?;
    /// assert_eq!(pool.install(|| 6 * 7), 42);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[deprecated(note = "use `Pool::builder()`")]
    pub fn new(configuration: Configuration) -> Result<Pool, Box<dyn Error + 'static>> {
        configuration.build()
    }
}
