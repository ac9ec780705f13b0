//! The global pool: threadlab's, built by this package's configuration when this package is
//! the first to use it, and the two environment variables this package reads.
//!
//! Every free function that would start threadlab's global pool calls
//! [`ensure_outside_pool`] first. Once the global pool exists (whoever built it) that is one
//! load of a completed `Once`; before, and only on a thread outside every pool, it builds the
//! global pool as `ThreadPoolBuilder::new().build_global()` would. On a worker nothing is
//! built: Rayon's free functions run on the worker's own pool and leave the global pool alone.

use std::sync::{Once, OnceLock};

use crate::builder::ThreadPoolBuilder;

static GLOBAL: Once = Once::new();

/// Builds threadlab's global pool with this package's defaults unless it exists already, when
/// the caller is outside every pool.
#[inline]
pub(crate) fn ensure_outside_pool() {
    if !GLOBAL.is_completed() && threadlab::current_thread_index().is_none() {
        build_default_global();
    }
}

#[cold]
#[inline(never)]
fn build_default_global() {
    GLOBAL.call_once(|| {
        // The program's threadlab code, or an explicit `build_global`, may have built it first:
        // then that pool is the global one, as in Rayon, and this is not an error.
        if let Err(e) = ThreadPoolBuilder::new().build_global() {
            if !e.is_global_already_initialized() {
                panic!("rayon-core (threadlab): cannot start the global pool: {e}");
            }
        }
    });
}

/// The thread count `RAYON_NUM_THREADS` asks for, if it holds a positive number (read at each
/// build, as Rayon reads it).
pub(crate) fn rayon_num_threads() -> Option<usize> {
    std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
}

/// The name of the switch that turns threadlab's guest fast path on for this package's pools.
pub(crate) const GUESTS_ENV: &str = "THREADLAB_RAYON_GUESTS";

/// Whether `THREADLAB_RAYON_GUESTS` turns guests on: `1`, `true`, `yes` or `on` (any case),
/// read once per process.
pub(crate) fn guests_on() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        std::env::var(GUESTS_ENV).is_ok_and(|v| {
            matches!(
                v.trim().to_ascii_lowercase().as_str(),
                "1" | "true" | "yes" | "on"
            )
        })
    })
}
