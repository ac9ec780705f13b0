//! [`ThreadPoolBuildError`]: why a pool could not be built, with Rayon's messages for the two
//! errors Rayon names, and threadlab's (which say what to do) for the rest.

use std::error::Error;
use std::fmt;

/// Why [`ThreadPoolBuilder::build`](crate::ThreadPoolBuilder::build) or
/// [`build_global`](crate::ThreadPoolBuilder::build_global) failed.
///
/// ```
/// rayon_core::join(|| (), || ()); // the global pool exists from here on
/// let err = rayon_core::ThreadPoolBuilder::new().build_global().unwrap_err();
/// assert_eq!(err.to_string(), "The global thread pool has already been initialized.");
/// ```
#[derive(Debug)]
pub struct ThreadPoolBuildError {
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    GlobalAlreadyInitialized,
    CurrentThreadAlreadyInPool,
    /// threadlab refused: the system's limits, a thread the OS would not start, a spawn
    /// handler's error.
    Threadlab(threadlab::BuildError),
}

/// Rayon's text for a second global pool.
const GLOBAL_ALREADY: &str = "The global thread pool has already been initialized.";
/// Rayon's text for `use_current_thread` on a thread that is already a pool's worker.
const ALREADY_IN_POOL: &str = "The current thread is already part of another thread pool.";

impl ThreadPoolBuildError {
    pub(crate) fn current_thread_already_in_pool() -> Self {
        ThreadPoolBuildError {
            kind: Kind::CurrentThreadAlreadyInPool,
        }
    }

    pub(crate) fn is_global_already_initialized(&self) -> bool {
        matches!(self.kind, Kind::GlobalAlreadyInitialized)
    }
}

impl From<threadlab::BuildError> for ThreadPoolBuildError {
    fn from(e: threadlab::BuildError) -> Self {
        // threadlab's error kinds are private; the one that means "the global pool exists" is
        // told by its message, Rayon's words (threadlab's `error.rs`). A test of this package
        // (`build_global` twice) fails if that text changes.
        let kind = if e.to_string() == GLOBAL_ALREADY {
            Kind::GlobalAlreadyInitialized
        } else {
            Kind::Threadlab(e)
        };
        ThreadPoolBuildError { kind }
    }
}

impl fmt::Display for ThreadPoolBuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::GlobalAlreadyInitialized => f.write_str(GLOBAL_ALREADY),
            Kind::CurrentThreadAlreadyInPool => f.write_str(ALREADY_IN_POOL),
            Kind::Threadlab(e) => fmt::Display::fmt(e, f),
        }
    }
}

impl Error for ThreadPoolBuildError {
    /// The OS error underneath (a thread that could not be started), as Rayon gives; none for
    /// the two errors of Rayon's own.
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match &self.kind {
            Kind::Threadlab(e) => e.source(),
            _ => None,
        }
    }
}
