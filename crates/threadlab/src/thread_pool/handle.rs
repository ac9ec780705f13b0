//! The [`Pool`] type alone, its methods being in `mod.rs`: the builder (which returns a `Pool`)
//! and the global pool name the type here, without importing the file of the methods, which
//! imports them (`Pool::builder`, the free functions `Pool`'s methods share).

use crate::loom::sync::Arc;
use crate::pool::registry::Registry;

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
    pub(super) registry: Arc<Registry>,
    pub(super) stopped: bool,
}
