//! [`Builder`], with every method it has: the settings, `build` (which starts the engine,
//! `Registry::start`), `build_scoped` and `build_global`; and how the workers' threads are
//! started ([`ThreadSpawn`]). What the setters set is the engine's `Config`
//! (`pool/config.rs`), which never names the builder.

use std::any::Any;
use std::time::Duration;

use super::handle::Pool;
use crate::error::BuildError;
use crate::pool::config::{Config, ThreadBuilder};
use crate::pool::registry::Registry;
use crate::pool::sleep::WakePolicy;
use crate::pool::worker::WorkerThread;
use crate::unwind::Payload;

/// Configures and starts a [`Pool`](crate::Pool).
///
/// ```
/// let pool = threadlab::Pool::builder()
///     .threads(2)
///     .thread_name(|i| format!("worker-{i}"))
///     .panic_handler(|_payload| eprintln!("a task panicked"))
///     .build()?;
/// assert_eq!(pool.current_num_threads(), 2);
/// # Ok::<(), threadlab::BuildError>(())
/// ```
pub struct Builder<S = DefaultSpawn> {
    spawn: S,
    config: Config,
}

impl<S> std::fmt::Debug for Builder<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let c = &self.config;
        f.debug_struct("Builder")
            .field("threads", &c.threads)
            .field("pin_to_cores", &c.pin_to_cores)
            .field("stack_size", &c.stack_size)
            .field("wake_policy", &c.wake_policy)
            .field("keep_alive", &c.keep_alive)
            .field("time_histograms", &c.time_histograms)
            .field("max_spare_threads", &c.max_spare_threads)
            .field("guests", &c.guests)
            .field("use_current_thread", &c.use_current_thread)
            .field("spawn_handler", &std::any::type_name::<S>())
            .finish_non_exhaustive()
    }
}

/// [`Builder::new`]. Only for the default spawn type, so that `Builder::default()` needs no
/// type annotation (as `Builder::new()`).
impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

impl Builder {
    /// A builder with the defaults: `available_parallelism()` threads (which honours cgroup CPU
    /// quotas), no pinning, the OS's stack size, panics printed to stderr and counted, the
    /// default [`WakePolicy`].
    pub fn new() -> Self {
        Builder {
            spawn: DefaultSpawn,
            config: Config::default(),
        }
    }
}

impl<S> Builder<S> {
    /// Starts the workers' threads with `handler` instead of `std::thread::spawn`: it gets one
    /// [`ThreadBuilder`] per worker, during [`Builder::build`], and must start a thread that
    /// calls [`ThreadBuilder::run`] (which returns when the pool is dropped), or return an
    /// error. So a program can start the threads its own way (a thread pool of its platform, a
    /// thread-local set around `run`, a scoped thread: see [`Builder::build_scoped`]).
    ///
    /// What the pool does on threads of its own is left out with a handler: work from outside
    /// the pool always runs on the workers' threads (never on the caller's as a guest, see
    /// [`Pool::install`](crate::Pool::install)), no spare thread is started (see [`Builder::max_spare_threads`]),
    /// and [`Builder::keep_alive`] is refused (an elastic pool restarts threads itself).
    /// Dropping the pool tells the workers to stop without joining their threads: the handler
    /// started them, the program joins them.
    ///
    /// # Errors
    /// [`Builder::build`] returns the handler's error (the threads already started stop), and
    /// refuses a handler with `keep_alive`.
    ///
    /// ```
    /// let mut handles = Vec::new();
    /// let pool = threadlab::Pool::builder()
    ///     .threads(2)
    ///     .spawn_handler(|thread| {
    ///         handles.push(std::thread::Builder::new().spawn(|| thread.run())?);
    ///         Ok(())
    ///     })
    ///     .build()?;
    /// assert_eq!(pool.install(|| threadlab::current_thread_index().is_some()), true);
    /// drop(pool);
    /// for h in handles {
    ///     h.join().unwrap();
    /// }
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    pub fn spawn_handler<F>(self, handler: F) -> Builder<CustomSpawn<F>>
    where
        F: FnMut(ThreadBuilder) -> std::io::Result<()>,
    {
        Builder {
            spawn: CustomSpawn(handler),
            config: self.config,
        }
    }

    /// Calls `handler(index)` on each worker's thread when it starts, before it runs any work
    /// (and again on a restarted thread of an elastic pool): per-thread set-up, such as a
    /// thread-local. A panic in it goes to the panic handler; the worker runs on.
    ///
    /// Setting it also keeps work from outside the pool on the workers' threads (no guest runs
    /// it on the caller's, see [`Pool::install`](crate::Pool::install)), which the handler did not set up.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    /// let started = Arc::new(AtomicUsize::new(0));
    /// let s = Arc::clone(&started);
    /// let pool = threadlab::Pool::builder()
    ///     .threads(2)
    ///     .start_handler(move |_index| {
    ///         s.fetch_add(1, Ordering::SeqCst);
    ///     })
    ///     .build()?;
    /// pool.broadcast(|_| ()); // both workers have started
    /// assert_eq!(started.load(Ordering::SeqCst), 2);
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    pub fn start_handler(mut self, handler: impl Fn(usize) + Send + Sync + 'static) -> Self {
        self.config.start_handler = Some(Box::new(handler));
        self
    }

    /// Calls `handler(index)` on each worker's thread as it exits (the pool dropped or shut
    /// down, or an elastic pool's idle worker retiring): per-thread clean-up. A panic in it goes
    /// to the panic handler. Dropping a pool does not wait for its threads: to know that the
    /// handlers ran, [`Pool::shutdown`](crate::Pool::shutdown) it.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    /// let exited = Arc::new(AtomicUsize::new(0));
    /// let e = Arc::clone(&exited);
    /// let pool = threadlab::Pool::builder()
    ///     .threads(2)
    ///     .exit_handler(move |_index| {
    ///         e.fetch_add(1, Ordering::SeqCst);
    ///     })
    ///     .build()?;
    /// pool.shutdown(); // joins the workers, which ran the handler
    /// assert_eq!(exited.load(Ordering::SeqCst), 2);
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    pub fn exit_handler(mut self, handler: impl Fn(usize) + Send + Sync + 'static) -> Self {
        self.config.exit_handler = Some(Box::new(handler));
        self
    }

    /// The number of worker threads; 0 means the default (as in Rayon): the
    /// `THREADLAB_NUM_THREADS` environment variable if it holds a positive number, else
    /// `available_parallelism()`.
    pub fn threads(mut self, n: usize) -> Self {
        self.config.threads = Some(n);
        self
    }

    /// Whether work from outside the pool may run on the calling thread as the *guest* of a
    /// sleeping worker (default: yes; see [`Pool::install`](crate::Pool::install)). A guest
    /// saves the call a thread switch (an empty `install` from `main` takes about 0.08 µs
    /// instead of the 10–15 µs of a wake-up and a hand-off), but the closure then runs on the
    /// caller's thread: it sees the caller's thread-locals and thread name, not a worker's.
    /// `guests(false)` keeps such work on the workers' own threads, as Rayon does, for programs
    /// that rely on the pool's thread identity (a thread-local set by a start handler, a
    /// `scoped_thread_local!` that must not leak into the pool). The environment variable
    /// `THREADLAB_GUESTS=0` turns guests off for every pool whose builder does not say.
    ///
    /// ```
    /// thread_local!(static MINE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });
    /// MINE.with(|m| m.set(true));
    /// let pool = threadlab::Pool::builder().threads(2).guests(false).build()?;
    /// // The closure runs on a worker's thread, whose `MINE` was never set.
    /// assert!(!pool.install(|| MINE.with(|m| m.get())));
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    pub fn guests(mut self, allowed: bool) -> Self {
        self.config.guests = Some(allowed);
        self
    }

    /// Makes the thread that calls [`build`](Builder::build) worker 0 of the pool, as Rayon's
    /// `use_current_thread`: the pool starts one thread fewer, and this thread runs the pool's
    /// work whenever it waits inside the pool (a `join`, a `scope`, an `install` into another
    /// pool, `yield_now`); calls into the pool from it run inline, as from any worker
    /// (`current_thread_index()` is `Some(0)`). It has no loop of its own: the other workers
    /// take what it spawns, and work it does not wait for runs on them. No start or exit handler
    /// runs for it.
    ///
    /// It stays worker 0 until the pool is dropped or shut down on this thread, or until the
    /// thread exits; then it runs what waits in its own queues and leaves. (Dropped on another
    /// thread, the pool leaves it attached until it exits.) [`Builder::build`] refuses it on a
    /// thread that is already part of a pool.
    ///
    /// ```
    /// let pool = threadlab::Pool::builder().threads(2).use_current_thread().build()?;
    /// assert_eq!(threadlab::current_thread_index(), Some(0));
    /// let (a, b) = threadlab::join(|| 1, || 2); // forks onto the pool from here
    /// assert_eq!(a + b, 3);
    /// drop(pool); // this thread leaves the pool
    /// assert_eq!(threadlab::current_thread_index(), None);
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    pub fn use_current_thread(mut self) -> Self {
        self.config.use_current_thread = true;
        self
    }

    /// Names the worker threads (`threadlab-<index>` by default).
    ///
    /// Setting it also keeps work from outside the pool (`install`, `scope`, `join` from a plain
    /// thread) on the workers' threads: otherwise such work may run on the calling thread as the
    /// guest of a sleeping worker (see [`Pool::install`](crate::Pool::install)).
    pub fn thread_name(mut self, f: impl FnMut(usize) -> String + 'static) -> Self {
        self.config.name = Some(Box::new(f));
        self
    }

    /// Pins each worker's thread to one CPU: worker `i` to the `i mod n`-th of the `n` CPUs
    /// this process may use (`sched_getaffinity`: what `taskset` or a cpuset left it), with
    /// `sched_setaffinity`; [`WorkerMetrics::pinned_cpu`](crate::WorkerMetrics::pinned_cpu)
    /// says where. Linux only: elsewhere [`Builder::build`] returns an error, as it does when a
    /// worker could not be pinned (see `pool/affinity.rs`).
    ///
    /// Setting it also keeps work from outside the pool (`install`, `scope`, `join` from a plain
    /// thread) on the workers' threads: otherwise such work may run on the calling thread as the
    /// guest of a sleeping worker (see [`Pool::install`](crate::Pool::install)).
    pub fn pin_to_cores(mut self, pin: bool) -> Self {
        self.config.pin_to_cores = pin;
        self
    }

    /// The stack size of each worker thread, in bytes.
    ///
    /// Setting it also keeps work from outside the pool (`install`, `scope`, `join` from a plain
    /// thread) on the workers' threads: otherwise such work may run on the calling thread as the
    /// guest of a sleeping worker (see [`Pool::install`](crate::Pool::install)).
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.config.stack_size = Some(bytes);
        self
    }

    /// Receives the panics of fire-and-forget tasks (`spawn`) instead of printing them. Panics
    /// are counted either way ([`Metrics::panicked_tasks`](crate::Metrics::panicked_tasks)).
    pub fn panic_handler(
        mut self,
        handler: impl Fn(Box<dyn Any + Send>) + Send + Sync + 'static,
    ) -> Self {
        self.config.panic_handler = Some(Box::new(handler));
        self
    }

    /// How new work wakes sleeping workers (default: [`WakePolicy::Default`]); see
    /// [`WakePolicy`].
    ///
    /// ```
    /// let pool = threadlab::Pool::builder()
    ///     .threads(2)
    ///     .wake_policy(threadlab::WakePolicy::Eager)
    ///     .build()?;
    /// assert_eq!(pool.install(|| 1 + 1), 2);
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    pub fn wake_policy(mut self, policy: WakePolicy) -> Self {
        self.config.wake_policy = policy;
        self
    }

    /// Makes the pool *elastic*: a worker that has found no work for `idle` lets its thread exit,
    /// and work arriving later (a spawn, an `install`, a scope, a woken future, a serial queue's or
    /// a pipeline's task, `spawn_on`/`install_on` that worker) starts a thread for it again. No
    /// task waits for a retired worker while a wake-up would have reached a parked one: a retired
    /// worker is a sleeper whose wake-up starts a thread (see the sleep protocol's retirement,
    /// `pool/sleep/retire.rs`). [`Metrics::alive_threads`] counts the threads alive;
    /// [`WorkerMetrics::retirements`] and [`WorkerMetrics::starts`] count the exits and starts.
    ///
    /// **Off by default** (workers live as long as the pool, as in Rayon, Go and Tokio's core
    /// workers): an idle threadlab worker costs no CPU (it is parked on a futex, and nothing in
    /// the pool runs periodically), only its thread's memory, while a retired one costs a
    /// thread start (tens of microseconds) on the first task after the gap, and it loses what a
    /// program keeps per worker thread: its thread-locals, its OS thread id, whatever
    /// [`Pool::install_on`] set up on it (a restarted worker is pinned again if
    /// [`Builder::pin_to_cores`] asked for it). A program whose pool sits idle for long
    /// stretches (a tool that runs bursts, a library that must not hold threads between calls)
    /// opts in; Tokio's blocking pool, the nearest precedent, retires threads after 10 s.
    ///
    /// ```
    /// use std::time::Duration;
    /// let pool = threadlab::Pool::builder()
    ///     .threads(2)
    ///     .keep_alive(Duration::from_millis(50))
    ///     .build()?;
    /// assert_eq!(pool.install(|| 6 * 7), 42);
    /// // Idle for longer than the keep-alive, the workers' threads exit...
    /// while pool.metrics().alive_threads() > 0 {
    ///     std::thread::sleep(Duration::from_millis(10));
    /// }
    /// // ...and come back for new work.
    /// assert_eq!(pool.install(|| 6 * 7), 42);
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    ///
    /// Any `idle` is accepted: one so long that the idle stretch's end cannot be represented
    /// (`Duration::MAX`, say) means "never retire", as if the pool were not elastic.
    ///
    /// [`Metrics::alive_threads`]: crate::Metrics::alive_threads
    /// [`WorkerMetrics::retirements`]: crate::WorkerMetrics::retirements
    /// [`WorkerMetrics::starts`]: crate::WorkerMetrics::starts
    /// [`Pool::install_on`]: crate::Pool::install_on
    pub fn keep_alive(mut self, idle: Duration) -> Self {
        self.config.keep_alive = Some(idle);
        self
    }

    /// Times every task a worker takes from a queue and every poll of a future into per-worker
    /// histograms ([`WorkerMetrics::task_run_time`], [`WorkerMetrics::poll_time`]). Off by
    /// default: two clock reads per task (about 40 ns on the development VM) matter for tasks
    /// of a few hundred nanoseconds; off, it costs one predictable branch per task.
    ///
    /// ```
    /// let pool = threadlab::Pool::builder().threads(2).time_histograms(true).build()?;
    /// pool.spawn(|| ());
    /// // The worker counts the task just after it returned.
    /// while pool.metrics().task_run_time().count() == 0 {
    ///     std::thread::yield_now();
    /// }
    /// println!("median task: under {:?}", pool.metrics().task_run_time().quantile(0.5));
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    ///
    /// [`WorkerMetrics::task_run_time`]: crate::WorkerMetrics::task_run_time
    /// [`WorkerMetrics::poll_time`]: crate::WorkerMetrics::poll_time
    pub fn time_histograms(mut self, on: bool) -> Self {
        self.config.time_histograms = on;
        self
    }

    /// At most `n` spare threads at once (32 by default; 0: none). A spare thread stands in for
    /// workers blocked outside threadlab while work waits: when every worker that is awake sits
    /// inside a task blocked in the kernel (a `std::sync` lock or barrier, a channel's blocking
    /// receive, I/O, a sleep), work waits in the pool's queues and no task has finished for
    /// about a tenth of a second, the pool's monitor thread starts one, which takes the waiting
    /// work as a worker would and leaves once it finds none. So a task that waits for work
    /// queued behind it (a barrier's last party, a receive's sender) does not hang the pool.
    /// [`blocking`](crate::blocking) starts one at once, for code that knows it will block.
    /// Detection reads the threads' states from procfs (Linux); elsewhere only `blocking`
    /// starts spare threads. When every spare thread is in use too, the monitor says so on
    /// stderr, once per pool.
    ///
    /// ```
    /// use std::sync::{Arc, Barrier};
    /// // Three parties on two workers: the third task waits in the queue while the first two
    /// // block, until a spare thread runs it.
    /// let pool = threadlab::Pool::builder().threads(2).max_spare_threads(4).build()?;
    /// let barrier = Arc::new(Barrier::new(3));
    /// pool.scope(|s| {
    ///     for _ in 0..3 {
    ///         let b = Arc::clone(&barrier);
    ///         s.spawn(move |_| {
    ///             b.wait();
    ///         });
    ///     }
    /// });
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    pub fn max_spare_threads(mut self, n: usize) -> Self {
        self.config.max_spare_threads = Some(n);
        self
    }

    pub(crate) fn into_config(self) -> (Config, S) {
        (self.config, self.spawn)
    }
}

/// How a [`Builder`] starts its workers' threads: [`DefaultSpawn`] (threads of its own) or the
/// handler of [`Builder::spawn_handler`] ([`CustomSpawn`]). Implemented by those two only.
pub trait ThreadSpawn {
    /// The handler, if the threads come from one.
    #[doc(hidden)]
    fn handler(&mut self) -> Option<&mut dyn FnMut(ThreadBuilder) -> std::io::Result<()>>;
}

/// The pool starts its threads itself (the default).
#[derive(Debug, Default, Clone, Copy)]
pub struct DefaultSpawn;

impl ThreadSpawn for DefaultSpawn {
    fn handler(&mut self) -> Option<&mut dyn FnMut(ThreadBuilder) -> std::io::Result<()>> {
        None
    }
}

/// The threads come from a handler (see [`Builder::spawn_handler`]).
#[derive(Debug)]
pub struct CustomSpawn<F>(F);

impl<F: FnMut(ThreadBuilder) -> std::io::Result<()>> ThreadSpawn for CustomSpawn<F> {
    fn handler(&mut self) -> Option<&mut dyn FnMut(ThreadBuilder) -> std::io::Result<()>> {
        Some(&mut self.0)
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

/// The builder's method that makes the global pool: beside the global pool it sets.
impl<S> Builder<S> {
    /// Makes this configuration the global pool (used by the free functions `join`, `scope`,
    /// `spawn`, `for_each` outside any pool).
    ///
    /// # Errors
    /// As for [`Builder::build`], and if the global pool already exists.
    pub fn build_global(self) -> Result<(), BuildError>
    where
        S: ThreadSpawn,
    {
        crate::global::init_global(|| self.build())
    }
}
