//! [`Pool`], the handle a user holds, and the builder's methods that start one: the pool's
//! public face, above the engine (`registry.rs`, `worker.rs` and the files they use), as Rayon's
//! `thread_pool` module sits above its `registry.rs`. The engine never names this file; the
//! handle, the global pool (`global.rs`), scopes and the task front ends call down into it.

use super::builder::{Builder, ThreadBuilder, ThreadSpawn};
use super::metrics::Metrics;
use super::registry::Registry;
use super::worker::WorkerThread;
use crate::broadcast::{broadcast_in, spawn_broadcast_in, BroadcastContext};
use crate::context::{tagged, Tag};
use crate::error::{BuildError, NoSuchWorker};
use crate::loom::sync::Arc;
use crate::scope::Scope;
use crate::unwind::Payload;
use std::panic::Location;

/// A pool of worker threads.
///
/// ```
/// let pool = threadlab::Pool::builder().threads(2).build()?;
/// let (a, b) = pool.install(|| threadlab::join(|| 1 + 1, || 2 + 2));
/// assert_eq!((a, b), (2, 4));
/// # Ok::<(), threadlab::BuildError>(())
/// ```
///
/// Dropping the pool returns at once, as dropping Rayon's `ThreadPool` does: its threads run
/// the work already queued (and what that work spawns), then exit by themselves. To wait for
/// them, call [`Pool::shutdown`] instead (see [`Drop`](#impl-Drop-for-Pool)).
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
        spawn_fn(
            &self.registry,
            Some(name),
            std::panic::Location::caller(),
            f,
        );
    }
}

/// The builder's methods that start a pool: they return the front end ([`Pool`]), so they live
/// beside it, and the builder's own file (what the engine reads: `Config`) does not name it.
impl Builder {
    /// Builds a pool whose workers run on scoped threads (`std::thread::scope`), each inside
    /// `wrapper`, which must call [`ThreadBuilder::run`]; `with_pool` gets the pool, which is
    /// dropped when it returns, and the threads are joined before this returns. So the workers
    /// may borrow from the caller's stack: a scoped thread-local set around `run`, say.
    ///
    /// # Errors
    /// As for [`Builder::build`], and as for [`Builder::spawn_handler`].
    ///
    /// ```
    /// let total = std::sync::atomic::AtomicUsize::new(0);
    /// let r = threadlab::Pool::builder().threads(2).build_scoped(
    ///     |thread| {
    ///         total.fetch_add(1, std::sync::atomic::Ordering::Relaxed); // borrows `total`
    ///         thread.run()
    ///     },
    ///     |pool| pool.install(|| 6 * 7),
    /// )?;
    /// assert_eq!((r, total.into_inner()), (42, 2));
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    pub fn build_scoped<W, F, R>(self, wrapper: W, with_pool: F) -> Result<R, BuildError>
    where
        W: Fn(ThreadBuilder) + Sync,
        F: FnOnce(&Pool) -> R,
    {
        std::thread::scope(|scope| {
            let wrapper = &wrapper;
            let pool = self
                .spawn_handler(|thread| {
                    let name = match thread.name() {
                        Some(name) => name.to_owned(),
                        None => format!("threadlab-{}", thread.index()),
                    };
                    let mut b = std::thread::Builder::new().name(name);
                    if let Some(size) = thread.stack_size {
                        b = b.stack_size(size);
                    }
                    b.spawn_scoped(scope, move || wrapper(thread))?;
                    Ok(())
                })
                .build()?;
            // The pool is dropped (its workers told to stop) before the scope joins them.
            let result =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| with_pool(&pool)));
            drop(pool);
            match result {
                Ok(r) => Ok(r),
                Err(p) => std::panic::resume_unwind(p),
            }
        })
    }
}

impl<S> Builder<S> {
    /// Starts the workers.
    ///
    /// # Errors
    /// 0 threads; more threads than the system's limits leave room for (checked before any
    /// starts: threads in the system, `RLIMIT_NPROC`, memory mappings; see `pool/limits.rs`);
    /// or the OS refusing to start a thread (the threads already started are stopped). The
    /// error's message says what to do.
    pub fn build(self) -> Result<Pool, BuildError>
    where
        S: ThreadSpawn,
    {
        let (mut config, mut spawn) = self.into_config();
        let handler = spawn.handler();
        if handler.is_some() {
            // The handler's threads only: no guests, no spare threads (see `spawn_handler`).
            config.custom_spawn = true;
            config.max_spare_threads = Some(0);
        }
        crate::context::route_hook_panics(to_workers_pool);
        let registry = Registry::start(config, handler)?;
        Ok(Pool::from_parts(registry))
    }
}

/// A fire-and-forget task on `registry`, tagged if there is anything to carry.
#[inline]
pub(crate) fn spawn_fn<F: FnOnce() + Send + 'static>(
    registry: &Registry,
    name: Option<&'static str>,
    location: &'static Location<'static>,
    f: F,
) {
    match Tag::capture_spawned(name, location) {
        None => registry.spawn(f),
        Some(tag) => spawn_with_tag(registry, tag, f),
    }
}

/// The tagged task, out of line: the untagged path stays as small as it was.
#[cold]
#[inline(never)]
fn spawn_with_tag<F: FnOnce() + Send + 'static>(registry: &Registry, tag: Tag, f: F) {
    registry.spawn(tagged(tag, f));
}

/// [`spawn_fn`] in FIFO order per spawning thread (`pool::fifo`).
pub(crate) fn spawn_fifo_fn<F: FnOnce() + Send + 'static>(
    registry: &Registry,
    location: &'static Location<'static>,
    f: F,
) {
    match Tag::capture_spawned(None, location) {
        None => registry.spawn_fifo(f),
        Some(tag) => registry.spawn_fifo(tagged(tag, f)),
    }
}

/// A spawn-context hook's panic on a worker goes to that worker's pool's panic handler
/// (`context::route_hook_panics`); elsewhere it is given back, to be printed.
fn to_workers_pool(payload: Payload) -> Result<(), Payload> {
    match WorkerThread::current() {
        Some(w) => {
            w.registry().handle_panic(payload);
            Ok(())
        }
        None => Err(payload),
    }
}

impl Pool {
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
}
