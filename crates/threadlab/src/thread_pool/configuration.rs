//! [`Configuration`], [`initialize`] and [`Pool::new`]: the configuration interface Rayon had
//! before its `ThreadPoolBuilder`, kept (deprecated, as in Rayon) so that ported programs
//! build. Each is a thin layer over [`Builder`]: a `Configuration` holds one, and its errors are
//! the builder's [`BuildError`](crate::BuildError), boxed.

#![allow(deprecated)]

use std::any::Any;
use std::error::Error;

use super::builder::Builder;
use super::handle::Pool;

/// A pool's configuration in the older style: [`Builder`]'s settings under Rayon's older names,
/// built with [`Configuration::build`], [`Pool::new`] or [`initialize`] (the global pool).
///
/// ```
/// #![allow(deprecated)]
/// let pool = threadlab::Configuration::new()
///     .threads(2)
///     .thread_name(|i| format!("old-style-{i}"))
///     .build()?;
/// assert_eq!(pool.current_num_threads(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[deprecated(note = "use `Pool::builder()`")]
#[derive(Debug, Default)]
pub struct Configuration {
    builder: Builder,
}

impl Configuration {
    /// The default configuration, as [`Builder::new`].
    pub fn new() -> Configuration {
        Configuration::default()
    }

    fn with(self, set: impl FnOnce(Builder) -> Builder) -> Configuration {
        Configuration {
            builder: set(self.builder),
        }
    }

    /// Starts the pool, as [`Builder::build`].
    ///
    /// # Errors
    /// The builder's [`BuildError`](crate::BuildError), boxed.
    pub fn build(self) -> Result<Pool, Box<dyn Error + 'static>> {
        Ok(self.builder.build()?)
    }

    /// As [`Builder::thread_name`].
    pub fn thread_name(self, f: impl FnMut(usize) -> String + 'static) -> Configuration {
        self.with(|b| b.thread_name(f))
    }

    /// As [`Builder::threads`] (Rayon's `num_threads`): 0 means the default count.
    pub fn threads(self, n: usize) -> Configuration {
        self.with(|b| b.threads(n))
    }

    /// As [`Builder::panic_handler`].
    pub fn panic_handler(
        self,
        handler: impl Fn(Box<dyn Any + Send>) + Send + Sync + 'static,
    ) -> Configuration {
        self.with(|b| b.panic_handler(handler))
    }

    /// As [`Builder::stack_size`].
    pub fn stack_size(self, bytes: usize) -> Configuration {
        self.with(|b| b.stack_size(bytes))
    }

    /// Rayon's hint that a pool's own workers take their oldest task first. Rayon deprecated
    /// it, and neither runtime promises an order among tasks that may run in parallel; a
    /// threadlab worker keeps taking its newest task (warm in cache) and thieves the oldest,
    /// so the configuration is unchanged. For first-in-first-out order where it is promised,
    /// use [`scope_fifo`](crate::scope_fifo) and [`spawn_fifo`](crate::spawn_fifo).
    pub fn breadth_first(self) -> Configuration {
        self
    }

    /// As [`Builder::start_handler`].
    pub fn start_handler(self, handler: impl Fn(usize) + Send + Sync + 'static) -> Configuration {
        self.with(|b| b.start_handler(handler))
    }

    /// As [`Builder::exit_handler`].
    pub fn exit_handler(self, handler: impl Fn(usize) + Send + Sync + 'static) -> Configuration {
        self.with(|b| b.exit_handler(handler))
    }
}

/// Makes `configuration` the global pool, as [`Builder::build_global`].
///
/// # Errors
/// The builder's [`BuildError`](crate::BuildError), boxed; also when the global pool already
/// exists.
///
/// ```
/// #![allow(deprecated)]
/// // The global pool exists already after any parallel call; a second one is refused.
/// threadlab::join(|| (), || ());
/// assert!(threadlab::initialize(threadlab::Configuration::new()).is_err());
/// ```
#[deprecated(note = "use `Pool::builder().build_global()`")]
pub fn initialize(configuration: Configuration) -> Result<(), Box<dyn Error + 'static>> {
    Ok(configuration.builder.build_global()?)
}
