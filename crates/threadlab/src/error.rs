//! Errors of the pool's construction, and of submitting work to a worker that does not exist.

use std::fmt;

/// Why [`Builder::build`](crate::Builder::build) failed. The message says what to do.
///
/// ```
/// let err = threadlab::Pool::builder().threads(usize::MAX / 8).build().unwrap_err();
/// assert!(err.to_string().contains("no thread was started"));
/// ```
#[derive(Debug)]
pub struct BuildError {
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    ZeroThreads,
    Spawn {
        requested: usize,
        started: usize,
        source: std::io::Error,
    },
    GlobalAlreadyInitialized,
    CurrentThreadInPool,
    SpawnHandlerElastic,
    PinUnavailable {
        source: std::io::Error,
    },
    Pin {
        worker: usize,
        cpu: usize,
        source: std::io::Error,
    },
    Limit {
        requested: usize,
        fit: usize,
        limit: &'static str,
    },
}

impl BuildError {
    pub(crate) fn zero_threads() -> Self {
        BuildError {
            kind: Kind::ZeroThreads,
        }
    }

    pub(crate) fn spawn(requested: usize, started: usize, source: std::io::Error) -> Self {
        BuildError {
            kind: Kind::Spawn {
                requested,
                started,
                source,
            },
        }
    }

    pub(crate) fn limit(requested: usize, fit: usize, limit: &'static str) -> Self {
        BuildError {
            kind: Kind::Limit {
                requested,
                fit,
                limit,
            },
        }
    }

    pub(crate) fn pin_unavailable(source: std::io::Error) -> Self {
        BuildError {
            kind: Kind::PinUnavailable { source },
        }
    }

    pub(crate) fn pin(worker: usize, cpu: usize, source: std::io::Error) -> Self {
        BuildError {
            kind: Kind::Pin {
                worker,
                cpu,
                source,
            },
        }
    }

    pub(crate) fn spawn_handler_elastic() -> Self {
        BuildError {
            kind: Kind::SpawnHandlerElastic,
        }
    }

    pub(crate) fn current_thread_in_pool() -> Self {
        BuildError {
            kind: Kind::CurrentThreadInPool,
        }
    }

    pub(crate) fn global_already_initialized() -> Self {
        BuildError {
            kind: Kind::GlobalAlreadyInitialized,
        }
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::ZeroThreads => write!(
                f,
                "a pool needs at least one thread, but 0 were requested: pass threads(n) with n >= 1, \
                 or leave it out to use available_parallelism()"
            ),
            Kind::Spawn {
                requested,
                started,
                source,
            } => write!(
                f,
                "the OS refused to start worker thread {} of {requested} ({source}); the {started} \
                 already started were stopped. Ask for fewer threads (threads(n)), a smaller \
                 stack_size, or raise the limits (ulimit -u, /proc/sys/kernel/threads-max)",
                started + 1
            ),
            Kind::Limit {
                requested,
                fit,
                limit,
            } => write!(
                f,
                "{requested} threads were requested, but the system's limit {limit} leaves room \
                 for about {fit} more; no thread was started. Ask for fewer threads (threads(n)) \
                 or raise that limit"
            ),
            Kind::PinUnavailable { source } => write!(
                f,
                "pin_to_cores(true) was asked, but the CPUs this process may use could not be \
                 read ({source}); no thread was started. Build without pin_to_cores"
            ),
            Kind::Pin {
                worker,
                cpu,
                source,
            } => write!(
                f,
                "pin_to_cores(true): worker {worker} could not be pinned to CPU {cpu} ({source}); \
                 the threads started were stopped. Build without pin_to_cores, or check the \
                 process's CPU set (taskset -p, the container's cpuset)"
            ),
            Kind::SpawnHandlerElastic => write!(
                f,
                "spawn_handler and keep_alive were both set, but an elastic pool restarts its \
                 workers' threads itself, without the handler; no thread was started. Leave out \
                 one of them"
            ),
            // Rayon's words, as below.
            Kind::CurrentThreadInPool => write!(
                f,
                "The current thread is already part of another thread pool."
            ),
            // Rayon's words, which programs compare (rayon-core's `double_init_fail` test): the
            // global pool exists, either built before or created by a first parallel call.
            Kind::GlobalAlreadyInitialized => {
                write!(f, "The global thread pool has already been initialized.")
            }
        }
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            Kind::Spawn { source, .. }
            | Kind::PinUnavailable { source }
            | Kind::Pin { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// The worker index given to [`Pool::spawn_on`](crate::Pool::spawn_on) or
/// [`Pool::install_on`](crate::Pool::install_on) is not one of the pool's workers.
///
/// ```
/// let pool = threadlab::Pool::builder().threads(2).build()?;
/// let err = pool.spawn_on(5, || {}).unwrap_err();
/// assert_eq!((err.index(), err.threads()), (5, 2));
/// assert!(err.to_string().contains("0..=1"));
/// # Ok::<(), threadlab::BuildError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoSuchWorker {
    index: usize,
    threads: usize,
}

impl NoSuchWorker {
    pub(crate) fn new(index: usize, threads: usize) -> Self {
        NoSuchWorker { index, threads }
    }

    /// The index that was asked for.
    pub fn index(&self) -> usize {
        self.index
    }

    /// How many workers the pool has.
    pub fn threads(&self) -> usize {
        self.threads
    }
}

impl fmt::Display for NoSuchWorker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "there is no worker {} in this pool of {} worker(s): pass an index in 0..={} \
             (Pool::current_num_threads() tells the size)",
            self.index,
            self.threads,
            self.threads.saturating_sub(1)
        )
    }
}

impl std::error::Error for NoSuchWorker {}
