//! [`Configuration`] and [`initialize`]: the interface Rayon had before its builder, kept
//! (deprecated, as in Rayon) so that older programs build. Each is a layer over
//! [`ThreadPoolBuilder`].

#![allow(deprecated)]

use std::any::Any;
use std::error::Error;
use std::fmt;

use crate::builder::ThreadPoolBuilder;
use crate::pool::ThreadPool;

/// A pool's settings in the older style, built by [`Configuration::build`],
/// [`ThreadPool::new`] or [`initialize`] (the global pool).
///
/// ```
/// #![allow(deprecated)]
/// let pool = rayon_core::Configuration::new().num_threads(2).build()?;
/// assert_eq!(pool.current_num_threads(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[deprecated(note = "Use `ThreadPoolBuilder`")]
#[derive(Default)]
pub struct Configuration {
    builder: ThreadPoolBuilder,
}

impl fmt::Debug for Configuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.builder.fmt(f)
    }
}

impl Configuration {
    /// The default settings, as [`ThreadPoolBuilder::new`].
    pub fn new() -> Configuration {
        Configuration::default()
    }

    fn with(self, set: impl FnOnce(ThreadPoolBuilder) -> ThreadPoolBuilder) -> Configuration {
        Configuration {
            builder: set(self.builder),
        }
    }

    /// Starts the pool, as [`ThreadPoolBuilder::build`].
    ///
    /// # Errors
    /// As [`ThreadPoolBuilder::build`], boxed.
    pub fn build(self) -> Result<ThreadPool, Box<dyn Error + 'static>> {
        Ok(self.builder.build()?)
    }

    /// As [`ThreadPoolBuilder::thread_name`].
    pub fn thread_name<F>(self, closure: F) -> Self
    where
        F: FnMut(usize) -> String + 'static,
    {
        self.with(|b| b.thread_name(closure))
    }

    /// As [`ThreadPoolBuilder::num_threads`].
    pub fn num_threads(self, num_threads: usize) -> Configuration {
        self.with(|b| b.num_threads(num_threads))
    }

    /// As [`ThreadPoolBuilder::panic_handler`].
    pub fn panic_handler<H>(self, panic_handler: H) -> Configuration
    where
        H: Fn(Box<dyn Any + Send>) + Send + Sync + 'static,
    {
        self.with(|b| b.panic_handler(panic_handler))
    }

    /// As [`ThreadPoolBuilder::stack_size`].
    pub fn stack_size(self, stack_size: usize) -> Self {
        self.with(|b| b.stack_size(stack_size))
    }

    /// As [`ThreadPoolBuilder::breadth_first`].
    pub fn breadth_first(self) -> Self {
        self.with(|b| b.breadth_first())
    }

    /// As [`ThreadPoolBuilder::start_handler`].
    pub fn start_handler<H>(self, start_handler: H) -> Configuration
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.with(|b| b.start_handler(start_handler))
    }

    /// As [`ThreadPoolBuilder::exit_handler`].
    pub fn exit_handler<H>(self, exit_handler: H) -> Configuration
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.with(|b| b.exit_handler(exit_handler))
    }
}

/// Makes `config` the global pool, as [`ThreadPoolBuilder::build_global`].
///
/// # Errors
/// As [`ThreadPoolBuilder::build_global`], boxed.
///
/// ```
/// #![allow(deprecated)]
/// rayon_core::join(|| (), || ()); // the global pool exists from here on
/// assert!(rayon_core::initialize(rayon_core::Configuration::new()).is_err());
/// ```
#[deprecated(note = "use `ThreadPoolBuilder::build_global`")]
pub fn initialize(config: Configuration) -> Result<(), Box<dyn Error>> {
    Ok(config.builder.build_global()?)
}
