//! rayon-core's public API on threadlab's pool.
//!
//! Rayon's `rayon` crate (the parallel iterators, `par_sort`, `par_bridge`) is built on
//! `rayon-core` and uses nothing of it but its public API. This package has that API, under the
//! same names and signatures, and runs every call on threadlab's workers. One line in a
//! program's root `Cargo.toml` puts Rayon itself, and every dependency that uses it, on
//! threadlab:
//!
//! ```toml
//! [patch.crates-io]
//! rayon-core = { path = "…/threadlab/compat/rayon-core" }
//! ```
//!
//! Then a `par_iter` in the program or in any crate it depends on runs on threadlab's pool,
//! shows in `THREADLAB_TRACE=run.pftrace` recordings, and is read by `threadlab doctor`.
//!
//! ```
//! let v: Vec<u64> = (0..1_000).collect();
//! let (a, b) = rayon_core::join(|| v[..500].iter().sum::<u64>(), || v[500..].iter().sum::<u64>());
//! assert_eq!(a + b, 499_500);
//! // The same workers as threadlab's own free functions.
//! assert_eq!(rayon_core::current_num_threads(), threadlab::current_num_threads());
//! ```
//!
//! # The global pool
//!
//! The free functions ([`join`], [`scope`], [`spawn`], [`broadcast`], [`current_num_threads`], …)
//! run on the current thread's pool, else on threadlab's global pool: the same workers as the
//! program's own `threadlab::join` or `par_iter`. When this package is the first to use the
//! global pool, it builds it as [`ThreadPoolBuilder::new`] would (so `RAYON_NUM_THREADS` sets
//! its size); when [`ThreadPoolBuilder::build_global`] was called first, with that builder;
//! when the program's threadlab code started it first, it is threadlab's default pool (its size
//! from `THREADLAB_NUM_THREADS` or the CPUs available), and `RAYON_NUM_THREADS` is not read.
//!
//! # What differs from Rayon
//!
//! - **A panic in a spawned task never aborts.** With no
//!   [`panic_handler`](ThreadPoolBuilder::panic_handler), Rayon aborts the process when a task
//!   of [`spawn`] or [`ThreadPool::spawn`] panics; here the panic is printed on stderr and
//!   counted (threadlab's `Metrics::panicked_tasks`), and the pool works on. A program that
//!   relies on the abort to stop should install a panic handler that exits.
//! - **Guests are off unless asked for.** threadlab's own `Pool::install`, called from a thread
//!   outside the pool while a worker sleeps, runs the closure on the calling thread in that
//!   worker's place (a guest), which saves a thread switch (threadlab's docs give the figures).
//!   Rayon runs it on one of the pool's threads, and code can tell: the closure sees the
//!   caller's thread-locals and thread name. This package keeps Rayon's meaning by default for
//!   the pools it builds, the global one included. Setting the environment variable
//!   `THREADLAB_RAYON_GUESTS=1` (read once, at the first pool this package builds) turns the
//!   guest fast path on, for programs that want threadlab's entry speed and do not rely on
//!   running on a pool thread.
//!
//! What else a program can tell apart today is listed with the item it concerns:
//! [`ThreadPoolBuilder::breadth_first`], [`max_num_threads`] and thread names
//! ([`ThreadPoolBuilder::thread_name`]).
#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]
#![deny(missing_debug_implementations)]
#![warn(missing_docs)]

mod broadcast;
mod builder;
mod config;
mod error;
mod global;
mod pool;
mod scope;

pub use broadcast::{broadcast, spawn_broadcast, BroadcastContext};
pub use builder::{CustomSpawn, DefaultSpawn, ThreadBuilder, ThreadPoolBuilder, ThreadSpawn};
#[allow(deprecated)]
pub use config::{initialize, Configuration};
pub use error::ThreadPoolBuildError;
pub use pool::ThreadPool;
pub use scope::{in_place_scope, in_place_scope_fifo, scope, scope_fifo, Scope, ScopeFifo};

/// What a closure of [`join_context`] learns about where it runs: [`FnContext::migrated`] is
/// true when it runs on another thread than the one that called `join_context`.
pub use threadlab::FnContext;

/// What [`yield_now`] and [`yield_local`] did: [`Yield::Executed`] one pending task, or found
/// none ([`Yield::Idle`]).
pub use threadlab::Yield;

/// The most threads one pool may have.
///
/// threadlab's maximum (`threadlab::max_num_threads`): a builder asking for more is refused by
/// [`ThreadPoolBuilder::build`] with an error, as is a count the system's limits (threads in
/// the system, `RLIMIT_NPROC`, memory mappings) leave no room for; Rayon lowers the count to
/// its maximum instead.
///
/// ```
/// assert!(rayon_core::max_num_threads() >= rayon_core::current_num_threads());
/// ```
pub fn max_num_threads() -> usize {
    threadlab::max_num_threads()
}

/// The number of threads of the current thread's pool, else of the global pool (which this
/// starts if nothing has yet). Rayon's iterators split work into about this many pieces to start
/// with.
///
/// ```
/// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(3).build()?;
/// assert_eq!(pool.install(rayon_core::current_num_threads), 3);
/// # Ok::<(), rayon_core::ThreadPoolBuildError>(())
/// ```
pub fn current_num_threads() -> usize {
    global::ensure_outside_pool();
    threadlab::current_num_threads()
}

/// The index of the current thread in its pool, in `0..current_num_threads()`; `None` when the
/// current thread is not one of a pool's workers.
///
/// A thread that threadlab starts for a while to stand in for workers blocked in the kernel
/// (threadlab's spare threads) reads `None` too.
///
/// ```
/// assert_eq!(rayon_core::current_thread_index(), None);
/// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(2).build()?;
/// assert!(pool.install(|| rayon_core::current_thread_index()).unwrap() < 2);
/// # Ok::<(), rayon_core::ThreadPoolBuildError>(())
/// ```
pub fn current_thread_index() -> Option<usize> {
    threadlab::current_thread_index()
}

/// Whether the current worker has tasks of its own waiting (in its deque, its inbox, or its
/// run-next slot), on any pool; `None` off the pools.
///
/// ```
/// assert_eq!(rayon_core::current_thread_has_pending_tasks(), None);
/// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(1).build()?;
/// assert_eq!(pool.install(rayon_core::current_thread_has_pending_tasks), Some(false));
/// # Ok::<(), rayon_core::ThreadPoolBuildError>(())
/// ```
pub fn current_thread_has_pending_tasks() -> Option<bool> {
    threadlab::current_thread_has_pending_tasks()
}

/// Runs `a` and `b`, possibly at the same time, and returns both results.
///
/// `b` is offered to the pool's other workers as soon as `a` starts, as in Rayon, so `a` may
/// wait for something `b` does (both halves meeting at a barrier) while another worker is free.
/// Both closures always run; a panic in either is re-raised here once both finished (`a`'s when
/// both panic). Called from outside any pool, both run on the global pool and the caller waits.
///
/// ```
/// fn fib(n: u64) -> u64 {
///     if n < 2 {
///         return n;
///     }
///     let (a, b) = rayon_core::join(|| fib(n - 1), || fib(n - 2));
///     a + b
/// }
/// assert_eq!(fib(20), 6765);
/// ```
#[track_caller]
pub fn join<A, B, RA, RB>(oper_a: A, oper_b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    global::ensure_outside_pool();
    threadlab::join_context(|_| oper_a(), |_| oper_b())
}

/// [`join`] whose closures are told, through [`FnContext::migrated`], whether they run on
/// another thread than the caller's (stolen by another worker, or sent into the pool from
/// outside). Adaptive code uses it to split further only when a thief wanted the work.
///
/// ```
/// let (a, b) = rayon_core::join_context(|ctx| (1, ctx.migrated()), |_| 2);
/// assert_eq!((a.0, b), (1, 2));
/// ```
#[track_caller]
pub fn join_context<A, B, RA, RB>(oper_a: A, oper_b: B) -> (RA, RB)
where
    A: FnOnce(FnContext) -> RA + Send,
    B: FnOnce(FnContext) -> RB + Send,
    RA: Send,
    RB: Send,
{
    global::ensure_outside_pool();
    threadlab::join_context(oper_a, oper_b)
}

/// Runs `func` on the current thread's pool (else the global pool), fire-and-forget.
///
/// Nothing waits for it: to wait, use [`scope`]. A panic in `func` goes to the pool's panic
/// handler; with none, it is printed and counted and the pool works on (Rayon aborts).
///
/// ```
/// let (tx, rx) = std::sync::mpsc::channel();
/// rayon_core::spawn(move || tx.send(6 * 7).unwrap());
/// assert_eq!(rx.recv().unwrap(), 42);
/// ```
#[track_caller]
pub fn spawn<F>(func: F)
where
    F: FnOnce() + Send + 'static,
{
    global::ensure_outside_pool();
    threadlab::spawn(func)
}

/// [`spawn`], in first-in-first-out order: the tasks that one thread sends into a pool with
/// `spawn_fifo` start in the order they were sent, where `spawn`'s newest starts first on the
/// worker that spawned them.
///
/// ```
/// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(1).build()?;
/// let (tx, rx) = std::sync::mpsc::channel();
/// pool.install(|| {
///     for i in 0..4 {
///         let tx = tx.clone();
///         rayon_core::spawn_fifo(move || tx.send(i).unwrap());
///     }
/// });
/// assert_eq!(rx.iter().take(4).collect::<Vec<_>>(), [0, 1, 2, 3]);
/// # Ok::<(), rayon_core::ThreadPoolBuildError>(())
/// ```
#[track_caller]
pub fn spawn_fifo<F>(func: F)
where
    F: FnOnce() + Send + 'static,
{
    global::ensure_outside_pool();
    threadlab::spawn_fifo(func)
}

/// On a worker: runs one task that waits in the current pool, if there is one (its own first,
/// then others'). Off the pools: `None`.
///
/// ```
/// assert_eq!(rayon_core::yield_now(), None);
/// ```
pub fn yield_now() -> Option<Yield> {
    threadlab::yield_now()
}

/// On a worker: runs one task of its own queue, if there is one. Off the pools: `None`.
///
/// ```
/// assert_eq!(rayon_core::yield_local(), None);
/// ```
pub fn yield_local() -> Option<Yield> {
    threadlab::yield_local()
}
