//! The global pool, created on first use, and the free functions that run on "the current pool":
//! the pool of the worker calling them, else the global one. When `THREADLAB_TRACE` is set,
//! the first pool's start-up (this one's or a pool the program built) starts a recording first
//! (see `trace::save_env`).

use std::sync::OnceLock;

use crate::loom::sync::Arc;
use crate::pool::registry::Registry;
use crate::pool::worker::WorkerThread;
use crate::{BuildError, Builder, Pool};

static GLOBAL: OnceLock<Pool> = OnceLock::new();

fn global_pool() -> &'static Pool {
    GLOBAL.get_or_init(|| {
        Builder::new()
            .build()
            .unwrap_or_else(|e| panic!("threadlab: cannot start the global pool: {e}"))
    })
}

pub(crate) fn registry() -> &'static Arc<Registry> {
    global_pool().registry()
}

pub(crate) fn init_global(builder: Builder) -> Result<(), BuildError> {
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
    crate::context::spawn_fn(current_registry(), None, std::panic::Location::caller(), f);
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
    WorkerThread::current().map(|w| w.index())
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
    crate::context::spawn_fn(
        current_registry(),
        Some(name),
        std::panic::Location::caller(),
        f,
    );
}
