//! The pool: a fixed set of long-lived workers that share work by stealing.
//!
//! - `front`: [`Pool`], the handle users hold, and the builder's `build`: the public face,
//!   above the engine (as Rayon's `thread_pool` sits above its `registry.rs`).
//! - [`builder`]: configuration and start-up.
//! - [`configuration`]: Rayon's older configuration interface, over the builder.
//! - [`affinity`]: `pin_to_cores`: the CPUs a process may use, and pinning failures.
//! - [`fifo`]: `spawn_fifo`'s per-seat queues, entered through stubs on the deques.
//! - [`fork`]: pools in a child process made by `fork()`.
//! - [`registry`]: what the workers share and how work enters the pool.
//! - [`limits`]: the system's limits on threads, checked before the workers start.
//! - [`inbox`]: work addressed to one worker (`spawn_on`, `install_on`, the partitioners).
//! - [`run_next`]: each worker's run-next slot (the future its last task woke) and the budget.
//! - [`worker`]: the worker thread's loop.
//! - [`sleep`]: the idle protocol (search, spin, park, wake, retire) and why no wake-up is lost.
//! - [`seat`]: what a worker is apart from its thread, so an elastic pool's idle workers can
//!   exit and start again.
//! - [`metrics`]: per-worker counters.

pub(crate) mod affinity;
pub(crate) mod bell;
pub(crate) mod builder;
pub(crate) mod configuration;
pub(crate) mod fifo;
pub(crate) mod fork;
pub(crate) mod front;
pub(crate) mod inbox;
pub(crate) mod limits;
pub(crate) mod metrics;
pub(crate) mod registry;
pub(crate) mod run_next;
pub(crate) mod seat;
pub(crate) mod sleep;
pub(crate) mod spare;
pub(crate) mod worker;
pub(crate) mod worker_latch;

pub use builder::{Builder, CustomSpawn, DefaultSpawn, ThreadBuilder, ThreadSpawn};
#[allow(deprecated)]
pub use configuration::{initialize, Configuration};
pub use front::{Pool, ShutdownReport};
pub use metrics::{Histogram, Metrics, WorkerMetrics};
pub use sleep::WakePolicy;
pub use spare::blocking;
