//! threadlab: a work-stealing task runtime that shows where its threads' time goes.
//!
//! The rooms, one mechanism each:
//! - [`deque`]: the Chase–Lev work-stealing deque each worker owns.
//! - [`injector`]: the queue for work submitted from outside the pool.
//! - [`trace`]: the recorder (per-thread buffers, zones, OS thread stats, Perfetto/JSON export).
//! - [`sync`]: a `Mutex` (and `Condvar`) that record hold and wait time per named lock.
//! - [`analysis`]: the doctor ([`trace::Trace::diagnose`]) and the comparison of two captures.
//! - [`serial`]: [`SerialQueue`], FIFO one-at-a-time queues on the pool's workers.
//! - `pool` ([`Pool`], [`Builder`]): the workers, their loop, the sleep protocol, metrics; with
//!   `job`, `latch`, `unwind` underneath and [`join()`], [`scope()`], [`spawn`], [`for_each`]
//!   on top.
//! - `heartbeat`: how `join` and the loops hand work to idle workers — only when one is idle,
//!   at most once per beat per worker, always the outermost pending work (heartbeat scheduling,
//!   Acar et al., PLDI 2018); when nobody is idle a `join` costs about a function call.
#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]
#![warn(missing_docs)]

pub(crate) mod loom;

pub mod analysis;
mod arena;

pub mod deque;
pub mod injector;
pub mod sync;
pub mod trace;
pub(crate) mod util;

mod error;
mod global;
mod heartbeat;
mod job;
mod join;
mod latch;
mod parallel;
mod pool;
mod scope;
pub mod serial;
mod unwind;

pub use error::BuildError;
pub use global::{current_num_threads, current_thread_index, spawn};
pub use join::join;
pub use parallel::{for_each, for_each_chunk_mut, for_each_grain, for_each_mut};
pub use pool::{Builder, Metrics, Pool, ShutdownReport, WorkerMetrics};
pub use scope::{scope, Scope};
pub use serial::SerialQueue;
