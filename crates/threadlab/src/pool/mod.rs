//! The pool: a fixed set of long-lived workers that share work by stealing.
//!
//! The engine, below the public face (`thread_pool/`: `Pool`, `Builder`, the free functions),
//! which calls into it and which it never names:
//!
//! - [`config`]: what the builder's setters set and the engine starts from, and
//!   [`ThreadBuilder`], a worker's thread as a spawn handler gets it.
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
pub(crate) mod config;
pub(crate) mod fifo;
pub(crate) mod fork;
pub(crate) mod inbox;
pub(crate) mod limits;
pub(crate) mod metrics;
pub(crate) mod registry;
pub(crate) mod run_next;
pub(crate) mod schedule;
pub(crate) mod seat;
pub(crate) mod sleep;
pub(crate) mod spare;
pub(crate) mod worker;
pub(crate) mod worker_latch;

pub use config::ThreadBuilder;
pub use metrics::{Histogram, Metrics, WorkerMetrics};
pub use sleep::WakePolicy;
pub use spare::blocking;
