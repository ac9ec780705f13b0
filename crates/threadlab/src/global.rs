//! The global pool, created on first use, and "the current pool" the free functions
//! (`thread_pool/functions.rs`) run on: the pool of the worker calling them, else the global
//! one. When `THREADLAB_TRACE` is set,
//! the first pool's start-up (this one's or a pool the program built) starts a recording first
//! (see `trace::save_env`).
//!
//! In a child process made by `fork()`, the global pool built before the fork has no threads
//! there (`pool::fork`): the child's first use builds another (with as many threads, and the
//! default configuration otherwise), one per generation of forks; the parent's is leaked.

use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::OnceLock;

use crate::error::BuildError;
use crate::loom::sync::Arc;
use crate::pool::registry::Registry;
use crate::pool::worker::WorkerThread;
use crate::thread_pool::handle::Pool;

static GLOBAL: OnceLock<Pool> = OnceLock::new();

/// The global pool rebuilt in a child process after `fork()` (null: none yet). Each is leaked:
/// a later fork leaves it without threads in its own child, where it must not be dropped either.
static AFTER_FORK: AtomicPtr<Pool> = AtomicPtr::new(std::ptr::null_mut());

fn global_pool() -> &'static Pool {
    let pool = GLOBAL.get_or_init(|| {
        Pool::builder()
            .build()
            .unwrap_or_else(|e| panic!("threadlab: cannot start the global pool: {e}"))
    });
    if pool.registry().forked_away() {
        return global_pool_after_fork(pool.current_num_threads());
    }
    pool
}

/// The global pool of a child process made by `fork()`: the one built in this generation of
/// forks, else a new one of `threads` workers.
#[cold]
#[inline(never)]
fn global_pool_after_fork(threads: usize) -> &'static Pool {
    // Acquire: pairs with the Release of the compare-exchange below, so the pool it points to
    // is fully built.
    let seen = AFTER_FORK.load(Ordering::Acquire);
    // SAFETY: a non-null pointer came from `Box::leak` below and is never freed.
    if let Some(pool) = unsafe { seen.as_ref() } {
        if !pool.registry().forked_away() {
            return pool;
        }
    }
    let built: &'static mut Pool = Box::leak(Box::new(
        Pool::builder()
            .threads(threads)
            .build()
            .unwrap_or_else(|e| {
                panic!("threadlab: cannot start the global pool after fork(): {e}")
            }),
    ));
    let built: *mut Pool = built;
    // Release: publishes the built pool to the Acquire loads above; Acquire on failure: we read
    // the winner's pool.
    match AFTER_FORK.compare_exchange(seen, built, Ordering::AcqRel, Ordering::Acquire) {
        // SAFETY: `built` is the leaked box, never freed.
        Ok(_) => unsafe { &*built },
        Err(winner) => {
            // Another thread of this child built one first: ours goes (its threads are joined).
            // SAFETY: `built` came from `Box::leak` above and was never published.
            drop(unsafe { Box::from_raw(built) });
            // SAFETY: the winner's pointer came from `Box::leak` and is never freed.
            unsafe { &*winner }
        }
    }
}

pub(crate) fn registry() -> &'static Arc<Registry> {
    global_pool().registry()
}

/// Makes the pool `build` returns the global pool (`Builder::build_global`), if there is none yet.
pub(crate) fn init_global(
    build: impl FnOnce() -> Result<Pool, BuildError>,
) -> Result<(), BuildError> {
    let mut err = None;
    let mut created = false;
    GLOBAL.get_or_init(|| {
        created = true;
        match build() {
            Ok(pool) => pool,
            Err(e) => {
                err = Some(e);
                // A one-thread pool stands in so `GLOBAL` is never left half-initialised.
                Pool::builder()
                    .threads(1)
                    .build()
                    .expect("threadlab: cannot start even one thread")
            }
        }
    });
    match (created, err) {
        (_, Some(e)) => Err(e),
        (true, None) => Ok(()),
        (false, None) => Err(BuildError::global_already_initialized()),
    }
}

pub(crate) fn current_registry() -> &'static Arc<Registry> {
    match WorkerThread::current() {
        Some(w) => w.registry(),
        None => registry(),
    }
}
