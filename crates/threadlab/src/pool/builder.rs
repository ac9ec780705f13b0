//! [`Builder`]: the pool's configuration.

use std::any::Any;

use crate::pool::registry::{PanicHandler, Registry};
use crate::pool::sleep::WakePolicy;
use crate::pool::Pool;
use crate::BuildError;

type NameFn = Box<dyn FnMut(usize) -> String>;

/// Configures and starts a [`Pool`].
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
#[derive(Default)]
pub struct Builder {
    threads: Option<usize>,
    name: Option<NameFn>,
    pin_to_cores: bool,
    stack_size: Option<usize>,
    panic_handler: Option<PanicHandler>,
    wake_policy: WakePolicy,
}

/// What `Registry::start` needs.
pub(crate) struct Config {
    pub(crate) threads: usize,
    name: Option<NameFn>,
    pub(crate) pin_to_cores: bool,
    pub(crate) stack_size: Option<usize>,
    pub(crate) panic_handler: Option<PanicHandler>,
    pub(crate) wake_policy: WakePolicy,
}

impl Config {
    /// Whether an `install` from outside the pool may run on the calling thread as the guest of
    /// a sleeping worker's seat (`worker::run_as_guest`): not when the builder asked for
    /// something of the workers' threads themselves (a name, a core, a stack size), which the
    /// caller's thread does not have; then such work always runs on a worker thread.
    pub(crate) fn guests_allowed(&self) -> bool {
        self.name.is_none() && !self.pin_to_cores && self.stack_size.is_none()
    }

    pub(crate) fn name(&mut self, index: usize) -> String {
        match &mut self.name {
            Some(f) => f(index),
            None => format!("threadlab-{index}"),
        }
    }
}

impl std::fmt::Debug for Builder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Builder")
            .field("threads", &self.threads)
            .field("pin_to_cores", &self.pin_to_cores)
            .field("stack_size", &self.stack_size)
            .field("wake_policy", &self.wake_policy)
            .finish_non_exhaustive()
    }
}

impl Builder {
    /// A builder with the defaults: `available_parallelism()` threads (which honours cgroup CPU
    /// quotas), no pinning, the OS's stack size, panics printed to stderr and counted, the
    /// default [`WakePolicy`].
    pub fn new() -> Self {
        Builder::default()
    }

    /// The number of worker threads; 0 is rejected by [`Builder::build`].
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = Some(n);
        self
    }

    /// Names the worker threads (`threadlab-<index>` by default).
    ///
    /// Setting it also keeps work from outside the pool (`install`, `scope`, `join` from a plain
    /// thread) on the workers' threads: otherwise such work may run on the calling thread as the
    /// guest of a sleeping worker (see [`Pool::install`](crate::Pool::install)).
    pub fn thread_name(mut self, f: impl FnMut(usize) -> String + 'static) -> Self {
        self.name = Some(Box::new(f));
        self
    }

    /// Pins worker `i` to CPU `i mod cores` (Linux `sched_setaffinity`).
    ///
    /// Setting it also keeps work from outside the pool (`install`, `scope`, `join` from a plain
    /// thread) on the workers' threads: otherwise such work may run on the calling thread as the
    /// guest of a sleeping worker (see [`Pool::install`](crate::Pool::install)).
    pub fn pin_to_cores(mut self, pin: bool) -> Self {
        self.pin_to_cores = pin;
        self
    }

    /// The stack size of each worker thread, in bytes.
    ///
    /// Setting it also keeps work from outside the pool (`install`, `scope`, `join` from a plain
    /// thread) on the workers' threads: otherwise such work may run on the calling thread as the
    /// guest of a sleeping worker (see [`Pool::install`](crate::Pool::install)).
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = Some(bytes);
        self
    }

    /// Receives the panics of fire-and-forget tasks (`spawn`) instead of printing them. Panics
    /// are counted either way ([`Metrics::panicked_tasks`](crate::Metrics::panicked_tasks)).
    pub fn panic_handler(
        mut self,
        handler: impl Fn(Box<dyn Any + Send>) + Send + Sync + 'static,
    ) -> Self {
        self.panic_handler = Some(Box::new(handler));
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
        self.wake_policy = policy;
        self
    }

    pub(crate) fn into_config(self) -> Config {
        Config {
            threads: self
                .threads
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
            name: self.name,
            pin_to_cores: self.pin_to_cores,
            stack_size: self.stack_size,
            panic_handler: self.panic_handler,
            wake_policy: self.wake_policy,
        }
    }

    /// Starts the workers.
    ///
    /// # Errors
    /// 0 threads; more threads than the system's limits leave room for (checked before any
    /// starts: threads in the system, `RLIMIT_NPROC`, memory mappings; see `pool/limits.rs`);
    /// or the OS refusing to start a thread (the threads already started are stopped). The
    /// error's message says what to do.
    pub fn build(self) -> Result<Pool, BuildError> {
        let (registry, threads) = Registry::start(self.into_config())?;
        Ok(Pool::from_parts(registry, threads))
    }

    /// Makes this configuration the global pool (used by the free functions `join`, `scope`,
    /// `spawn`, `for_each` outside any pool).
    ///
    /// # Errors
    /// As for [`Builder::build`], and if the global pool already exists.
    pub fn build_global(self) -> Result<(), BuildError> {
        crate::global::init_global(self)
    }
}
