//! The global pool, created on first use, and the free functions that run on "the current pool":
//! the pool of the worker calling them, else the global one. When `THREADLAB_TRACE` is set,
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
use crate::pool::builder::Builder;
use crate::pool::front::Pool;
use crate::pool::registry::Registry;
use crate::pool::worker::WorkerThread;

static GLOBAL: OnceLock<Pool> = OnceLock::new();

/// The global pool rebuilt in a child process after `fork()` (null: none yet). Each is leaked:
/// a later fork leaves it without threads in its own child, where it must not be dropped either.
static AFTER_FORK: AtomicPtr<Pool> = AtomicPtr::new(std::ptr::null_mut());

fn global_pool() -> &'static Pool {
    let pool = GLOBAL.get_or_init(|| {
        Builder::new()
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
        Builder::new().threads(threads).build().unwrap_or_else(|e| {
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

pub(crate) fn init_global<S: crate::pool::builder::ThreadSpawn>(
    builder: Builder<S>,
) -> Result<(), BuildError> {
    let mut err = None;
    let mut created = false;
    GLOBAL.get_or_init(|| {
        created = true;
        match builder.build() {
            Ok(pool) => pool,
            Err(e) => {
                err = Some(e);
                // A one-thread pool stands in so `GLOBAL` is never left half-initialised.
                Builder::new()
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

/// Runs `f` on the current pool (this worker's pool, else the global one), fire-and-forget.
/// A panic goes to that pool's panic handler.
///
/// ```
/// let (tx, rx) = std::sync::mpsc::channel();
/// threadlab::spawn(move || tx.send("done").unwrap());
/// assert_eq!(rx.recv().unwrap(), "done");
/// ```
#[track_caller]
pub fn spawn<F: FnOnce() + Send + 'static>(f: F) {
    crate::pool::front::spawn_fn(current_registry(), None, std::panic::Location::caller(), f);
}

/// The number of workers of the current pool (this worker's pool, else the global one).
///
/// ```
/// assert!(threadlab::current_num_threads() >= 1);
/// ```
pub fn current_num_threads() -> usize {
    current_registry().num_threads()
}

/// The index of the calling worker in its pool, or `None` outside any pool.
///
/// ```
/// assert_eq!(threadlab::current_thread_index(), None);
/// ```
pub fn current_thread_index() -> Option<usize> {
    // A spare thread (`Builder::max_spare_threads`) is none of the pool's workers.
    WorkerThread::current()
        .map(|w| w.index())
        .filter(|&i| i < current_registry().num_threads())
}

/// [`spawn`] with a name, which the recorder puts on the task's span
/// ([`crate::trace::ARG_TASK_NAME`]) and the doctor and `compare` quote.
///
/// ```
/// let (tx, rx) = std::sync::mpsc::channel();
/// threadlab::spawn_named("flush", move || tx.send(1).unwrap());
/// assert_eq!(rx.recv().unwrap(), 1);
/// ```
#[track_caller]
pub fn spawn_named<F: FnOnce() + Send + 'static>(name: &'static str, f: F) {
    crate::pool::front::spawn_fn(
        current_registry(),
        Some(name),
        std::panic::Location::caller(),
        f,
    );
}
