//! threadlab: a work-stealing task runtime that shows where its threads' time goes.
//!
//! ```
//! use threadlab::prelude::*;
//!
//! fn fib(n: u64) -> u64 {
//!     if n < 2 {
//!         return n;
//!     }
//!     // Splits only when a worker is idle; otherwise about the cost of a function call.
//!     let (a, b) = threadlab::join(|| fib(n - 1), || fib(n - 2));
//!     a + b
//! }
//!
//! let v: Vec<u64> = (0..1_000).collect();
//! assert_eq!(v.par_iter().map(|x| x * x).sum::<u64>(), 332_833_500);
//! assert_eq!(fib(20), 6765);
//! ```
//!
//! Both run on the global pool, started on first use with a worker per available CPU; [`Pool::builder`]
//! makes pools of your own, and [`Pool::install`] runs a closure (and the `join`s and loops in
//! it) on one. To see where the time went, record: `THREADLAB_TRACE=run.pftrace ./program`,
//! or [`trace::start`] in code; the `threadlab-doctor` crate and the `threadlab` command read
//! the trace.
//!
//! The recorder lives here ([`trace`]: recording and its hooks); the event model and the file
//! formats (save and load) are the `threadlab-trace` crate, std only, re-exported as [`trace`]'s
//! model; the doctor that reads a trace and the comparison of two are the `threadlab-doctor`
//! crate, on the model alone, as `tracing-core` keeps the model and `tracing-subscriber` what
//! consumes it.
//!
//! The rooms, one mechanism each:
//! - `deque`: the Chase–Lev work-stealing deque each worker owns, and `injector`, the queue for
//!   work submitted from outside the pool (both public for the tests and benches but hidden:
//!   not part of the stable API).
//! - [`trace`]: the recorder (per-thread buffers, zones, OS thread stats), and the model and its
//!   Perfetto/JSON/`.tltrace` files from `threadlab-trace`.
//! - [`sync`]: a `Mutex` (and `Condvar`) that record hold and wait time per named lock.
//! - [`alloc`]: [`alloc::Counting`], a wrapper allocator that counts each thread's allocations
//!   so recordings attribute them to zones and tasks.
//! - [`serial`]: [`SerialQueue`], FIFO one-at-a-time queues on the pool's workers.
//! - `pool` ([`Pool`], [`Builder`]): the workers, their loop, the sleep protocol, metrics; with
//!   `job`, `latch`, `unwind` underneath and [`join()`], [`scope()`], [`spawn`], [`for_each`]
//!   on top; [`Pool::spawn_on`] and [`Pool::install_on`] reach one given worker.
//! - `heartbeat`: how `join` and the loops hand work to idle workers — only when one is idle,
//!   at most once per beat per worker, always the outermost pending work (heartbeat scheduling,
//!   Acar et al., PLDI 2018); when nobody is idle a `join` costs about a function call.
//! - `task`: futures on the same workers ([`Pool::spawn_future`], [`Pool::block_on`],
//!   [`spawn_future`], [`block_on()`], [`JoinHandle`]), with the [`WakePolicy`] knob.
//! - [`channel`]: bounded, rendezvous and unbounded MPMC channels with async, blocking and
//!   `try_` ends; a hand-off to a waiting task writes the value into its slot and wakes it
//!   into the current worker's run-next slot (Go's `chan` design).
//! - [`iter`] and [`prelude`]: Rayon-style parallel iterators (`par_iter().map(f).sum()`,
//!   `collect`, `par_sort`) on the same heartbeat-split engine as [`for_each`].
//! - `partition`: loops whose chunks go to chosen workers, for memory locality:
//!   [`for_each_static`] (OpenMP's `schedule(static)`) and [`for_each_affinity`] with an
//!   [`AffinityPartitioner`] (TBB's). [`CachePadded`] keeps per-thread data off shared lines.
//! - `pipeline`: [`Pipeline`], a source and stages (parallel, serial in order, serial out of
//!   order) with a bound on the items in flight, in the spirit of oneTBB's `parallel_pipeline`.
//!
//! # `fork()`
//!
//! A child process made by `fork()` has only the thread that called it, so the pools of the
//! parent have no workers there (Rayon users meet this as a child that hangs: rayon-rs/rayon
//! issue 708). In the child, the global pool (the free functions [`join()`], [`scope()`],
//! [`spawn`], [`spawn_future`], the parallel iterators) is rebuilt on first use, with the same
//! number of threads and otherwise the default configuration. A [`Pool`] built before the fork
//! panics in the child as soon as work is sent to it, saying that its threads did not survive
//! `fork()` and to build a new pool there; dropping it there returns at once (it is leaked). A
//! child that `fork()`s from inside a task (on a worker) should only `exec` or `_exit`.
//!
//! ```
//! # #[cfg(all(target_os = "linux", not(miri)))] {
//! threadlab::join(|| 1, || 2); // the parent uses the global pool
//! // SAFETY (of the example): the child only runs safe Rust and leaves with _exit.
//! let pid = unsafe { libc::fork() };
//! if pid == 0 {
//!     let (a, b) = threadlab::join(|| 1, || 2); // the child's own global pool
//!     unsafe { libc::_exit(if a + b == 3 { 0 } else { 1 }) };
//! }
//! let mut status = 0;
//! unsafe { libc::waitpid(pid, &mut status, 0) };
//! assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
//! # }
//! ```
#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]
#![deny(missing_debug_implementations)]
#![warn(missing_docs)]

pub(crate) mod loom;

pub mod alloc;
mod arena;
mod asym;
mod broadcast;
pub mod channel;
pub mod context;

// Hidden: the pool's queues, public only for the tests (loom models, stress), the CLI's
// benches against crossbeam-deque and the lab's baselines. Users reach them through `Pool`; their
// API is not stable and may change in any release.
#[doc(hidden)]
pub mod deque;
#[doc(hidden)]
pub mod injector;
pub mod sync;
pub mod trace;
pub(crate) mod util;

mod error;
mod global;
mod heartbeat;
pub mod iter;
mod job;
mod join;
mod latch;
mod parallel;
mod partition;
mod pipeline;
mod pool;
pub mod prelude;
mod scope;
pub mod serial;
mod stack_job;
mod task;
mod thread_pool;
mod unwind;

/// Rayon's `vec` module: the parallel iterators of a `Vec` by value ([`vec::IntoIter`]) and of
/// [`par_drain`](crate::iter::ParallelDrainRange::par_drain) ([`vec::Drain`]).
///
/// ```
/// use threadlab::prelude::*;
/// let items: threadlab::vec::IntoIter<u8> = vec![1, 2, 3].into_par_iter();
/// assert_eq!(items.sum::<u8>(), 6);
/// ```
pub mod vec {
    pub use crate::iter::IntoIter;
    /// The items [`par_drain`](crate::iter::ParallelDrainRange::par_drain) removes from a `Vec`.
    /// threadlab moves them out when the call is made, so the `Vec`'s borrow ends there;
    /// Rayon's borrows it until the drain is dropped (hence the lifetime, kept for the name).
    pub type Drain<'data, T> = crate::iter::IntoIter<T>;
}

pub use broadcast::BroadcastContext;
pub use error::{BuildError, NoSuchWorker};
pub use iter::{range, range_inclusive};
pub use join::join;
pub use parallel::{for_each, for_each_chunk_mut, for_each_grain, for_each_mut};
pub use partition::{
    for_each_affinity, for_each_static, for_each_static_block, for_each_static_mut,
    AffinityPartitioner,
};
pub use pipeline::{Pipeline, PipelineReport};
pub use pool::{blocking, Histogram, Metrics, ThreadBuilder, WakePolicy, WorkerMetrics};
pub use scope::Scope;
pub use serial::SerialQueue;
pub use task::JoinHandle;
pub use thread_pool::{
    block_on, broadcast, current_num_threads, current_thread_has_pending_tasks,
    current_thread_index, in_place_scope, in_place_scope_fifo, join_context, max_num_threads,
    scope, scope_fifo, spawn, spawn_broadcast, spawn_fifo, spawn_future, spawn_future_named,
    spawn_named, yield_local, yield_now, FnContext, ScopeFifo, Yield,
};
#[allow(deprecated)]
pub use thread_pool::{initialize, Configuration};
pub use thread_pool::{Builder, CustomSpawn, DefaultSpawn, Pool, ShutdownReport, ThreadSpawn};
pub use util::CachePadded;

/// The task state word, public only for the loom model in `tests/loom_task.rs`.
#[cfg(loom)]
#[doc(hidden)]
pub use task::state as task_state;
