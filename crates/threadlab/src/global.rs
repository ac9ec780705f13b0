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

use crate::broadcast::{broadcast_in, spawn_broadcast_in, BroadcastContext};
use crate::error::BuildError;
use crate::loom::sync::Arc;
use crate::pool::builder::{Builder, ThreadSpawn};
use crate::pool::front::Pool;
use crate::pool::registry::Registry;
use crate::pool::worker::WorkerThread;
use crate::scope::{scope_on_worker, Scope};

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

pub(crate) fn init_global<S: ThreadSpawn>(builder: Builder<S>) -> Result<(), BuildError> {
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

/// The index of the calling thread among its pool's workers, `Some(i)` with
/// `i < current_num_threads()` on every thread that runs the pool's work: a worker, the guest
/// of a sleeping worker (an `install` from outside, with that worker's index), a spare thread
/// (with the index of the blocked worker it stands in for, see
/// [`Builder::max_spare_threads`](crate::Builder::max_spare_threads)). `None` outside any pool.
///
/// ```
/// assert_eq!(threadlab::current_thread_index(), None);
/// let pool = threadlab::Pool::builder().threads(3).build()?;
/// let i = pool.install(|| threadlab::current_thread_index()).unwrap();
/// assert!(i < 3);
/// # Ok::<(), threadlab::BuildError>(())
/// ```
pub fn current_thread_index() -> Option<usize> {
    WorkerThread::current().map(|w| w.registry().index_as(w.index()))
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

/// Creates a scope on the current worker's pool (else the global one), runs `op` in it, and
/// returns after `op` and every task spawned in the scope finished. The first panic among them is
/// re-raised here.
///
/// While it waits for the scope's tasks, this worker runs other queued tasks: as with
/// [`join`](crate::join), do not hold a lock across `scope` that those tasks may ask for (a
/// [`threadlab::sync::Mutex`](crate::sync::Mutex) panics with its name; a `std::sync::Mutex`
/// deadlocks).
///
/// ```
/// let data = vec![1, 2, 3, 4];
/// let mut sums = [0; 2];
/// let (left, right) = sums.split_at_mut(1);
/// threadlab::scope(|s| {
///     s.spawn(|_| left[0] = data[..2].iter().sum());
///     s.spawn(|_| right[0] = data[2..].iter().sum());
/// });
/// assert_eq!(sums, [3, 7]);
/// ```
#[track_caller]
pub fn scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    match WorkerThread::current() {
        Some(w) => scope_on_worker(w, op),
        None => Registry::in_worker(registry(), |w, _| scope_on_worker(w, op)),
    }
}

/// Runs `op` on every worker of the current pool (the global pool outside any) and returns
/// the results in worker order. A panic in any call is re-raised here after all returned.
///
/// ```
/// let n = threadlab::broadcast(|ctx| ctx.num_threads()).len();
/// assert_eq!(n, threadlab::current_num_threads());
/// ```
pub fn broadcast<OP, R>(op: OP) -> Vec<R>
where
    OP: Fn(BroadcastContext<'_>) -> R + Sync,
    R: Send,
{
    broadcast_in(current_registry(), &op)
}

/// Queues `op` for every worker of the current pool (the global pool outside any) and
/// returns at once. A panic goes to the pool's panic handler, as a `spawn`'s does.
///
/// ```
/// use std::sync::mpsc::channel;
/// let (tx, rx) = channel();
/// let tx = std::sync::Mutex::new(tx);
/// threadlab::spawn_broadcast(move |ctx| tx.lock().unwrap().send(ctx.index()).unwrap());
/// let mut got: Vec<usize> = rx.iter().take(threadlab::current_num_threads()).collect();
/// got.sort();
/// assert_eq!(got, (0..threadlab::current_num_threads()).collect::<Vec<_>>());
/// ```
pub fn spawn_broadcast<OP>(op: OP)
where
    OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
{
    spawn_broadcast_in(current_registry(), op)
}

/// The builder's method that makes the global pool: beside the global pool it sets.
impl<S> Builder<S> {
    /// Makes this configuration the global pool (used by the free functions `join`, `scope`,
    /// `spawn`, `for_each` outside any pool).
    ///
    /// # Errors
    /// As for [`Builder::build`], and if the global pool already exists.
    pub fn build_global(self) -> Result<(), BuildError>
    where
        S: ThreadSpawn,
    {
        init_global(self)
    }
}
