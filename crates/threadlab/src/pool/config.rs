//! `Config`, what a [`Builder`](crate::Builder)'s setters set and the engine reads when it
//! starts a pool (`Registry::start`), and [`ThreadBuilder`], one worker's thread as a spawn
//! handler gets it: the builder's side that the engine names, so that the engine never names
//! the builder (`thread_pool/builder.rs`).

use std::time::Duration;

use crate::pool::sleep::WakePolicy;
use crate::unwind::Payload;

type NameFn = Box<dyn FnMut(usize) -> String>;

/// A start or exit handler (`Builder::start_handler`, `Builder::exit_handler`).
pub(crate) type ThreadHandler = Box<dyn Fn(usize) + Send + Sync>;

/// A panic handler for fire-and-forget tasks (`Builder::panic_handler`).
pub(crate) type PanicHandler = Box<dyn Fn(Payload) + Send + Sync>;

/// Spare threads a pool may run at once unless the builder says otherwise
/// (`Builder::max_spare_threads`, `super::spare`).
pub(crate) const DEFAULT_MAX_SPARE_THREADS: usize = 32;

/// What the builder's setters set, and what `Registry::start` reads: one struct, so that a
/// builder that changes its spawn type (`spawn_handler`) keeps every setting by moving it.
#[derive(Default)]
pub(crate) struct Config {
    /// As set: `None` or 0 mean the default count ([`Config::threads`]).
    pub(crate) threads: Option<usize>,
    pub(crate) name: Option<NameFn>,
    pub(crate) pin_to_cores: bool,
    pub(crate) stack_size: Option<usize>,
    pub(crate) panic_handler: Option<PanicHandler>,
    pub(crate) wake_policy: WakePolicy,
    pub(crate) keep_alive: Option<Duration>,
    pub(crate) time_histograms: bool,
    /// As set: `None` means the default ([`Config::max_spare_threads`]).
    pub(crate) max_spare_threads: Option<usize>,
    /// The threads come from a spawn handler (`Builder::spawn_handler`).
    pub(crate) custom_spawn: bool,
    pub(crate) start_handler: Option<ThreadHandler>,
    pub(crate) exit_handler: Option<ThreadHandler>,
    /// As set by `Builder::guests`: `None` means the default ([`guests_by_default`]).
    pub(crate) guests: Option<bool>,
    /// The building thread becomes worker 0 (`Builder::use_current_thread`).
    pub(crate) use_current_thread: bool,
}

impl Config {
    /// The number of workers: the count set, else (also for 0, as in Rayon) the default.
    pub(crate) fn threads(&self) -> usize {
        match self.threads {
            Some(n) if n > 0 => n,
            _ => default_threads(),
        }
    }

    /// At most this many spare threads at once (see `Builder::max_spare_threads`).
    pub(crate) fn max_spare_threads(&self) -> usize {
        self.max_spare_threads.unwrap_or(DEFAULT_MAX_SPARE_THREADS)
    }

    /// Whether an `install` from outside the pool may run on the calling thread as the guest of
    /// a sleeping worker's seat (`worker::run_as_guest`): not when the builder asked for
    /// something of the workers' threads themselves (a name, a core, a stack size), which the
    /// caller's thread does not have; then such work always runs on a worker thread.
    pub(crate) fn guests_allowed(&self) -> bool {
        self.guests.unwrap_or_else(guests_by_default)
            && self.name.is_none()
            && !self.pin_to_cores
            && self.stack_size.is_none()
            && !self.custom_spawn
            && self.start_handler.is_none()
    }

    /// The builder named the threads (`Builder::thread_name`).
    pub(crate) fn has_name(&self) -> bool {
        self.name.is_some()
    }

    pub(crate) fn name(&mut self, index: usize) -> String {
        match &mut self.name {
            Some(f) => f(index),
            None => format!("threadlab-{index}"),
        }
    }
}

/// The default number of workers: `THREADLAB_NUM_THREADS` if it is a positive number (Rayon's
/// `RAYON_NUM_THREADS`), else `available_parallelism()` (which honours cgroup CPU quotas).
fn default_threads() -> usize {
    std::env::var("THREADLAB_NUM_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Whether guests are allowed when the builder does not say (`Builder::guests`): yes, unless
/// `THREADLAB_GUESTS` is `0`, `false`, `off` or `no`.
fn guests_by_default() -> bool {
    std::env::var("THREADLAB_GUESTS").map_or(true, |v| {
        !matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "0" | "false" | "off" | "no"
        )
    })
}

/// One worker's thread, to be started by a spawn handler
/// ([`Builder::spawn_handler`](crate::Builder::spawn_handler)): the thread calls
/// [`ThreadBuilder::run`].
pub struct ThreadBuilder {
    pub(crate) index: usize,
    /// The builder's name for the thread (`Builder::thread_name`), if it set one.
    pub(crate) name: Option<String>,
    pub(crate) stack_size: Option<usize>,
    pub(crate) body: Box<dyn FnOnce() + Send>,
}

impl std::fmt::Debug for ThreadBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThreadBuilder")
            .field("index", &self.index)
            .field("name", &self.name)
            .field("stack_size", &self.stack_size)
            .finish_non_exhaustive()
    }
}

impl ThreadBuilder {
    /// The worker's index in its pool.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The name the builder gave the worker ([`thread_name`](crate::Builder::thread_name)), for the
    /// thread the handler starts; `None` if it gave none (as in Rayon: the handler names its
    /// threads as it likes).
    ///
    /// ```
    /// let pool = threadlab::Pool::builder()
    ///     .threads(1)
    ///     .spawn_handler(|thread| {
    ///         assert_eq!(thread.name(), None);
    ///         std::thread::spawn(|| thread.run());
    ///         Ok(())
    ///     })
    ///     .build()?;
    /// # drop(pool);
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The stack size the builder asked for, if any.
    pub fn stack_size(&self) -> Option<usize> {
        self.stack_size
    }

    /// Runs the worker on the current thread until the pool is dropped.
    pub fn run(self) {
        (self.body)()
    }
}
