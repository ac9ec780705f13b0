//! threadlab's doctor: what a [`Trace`](threadlab_trace::Trace) says about where the threads'
//! time went ([`Diagnose::diagnose`]), and the comparison of two captures ([`compare`]).
//!
//! It is built on the trace model of the `threadlab-trace` crate (threads, their events, names;
//! the runtime re-exports it as `threadlab::trace`), the way `tracing-subscriber` consumes what
//! `tracing-core` defines: the runtime records, `threadlab-trace` saves and loads; this crate
//! reads, and does not depend on the runtime. With the `serde` feature the diagnosis,
//! its findings and the comparison are `Serialize` (the `threadlab` command's `--json`).
//!
//! The doctor answers the four questions *Multithreading Isn't Free: Performance Pitfalls
//! Visualized* asks of a profile — are the threads used effectively, is the work evenly
//! distributed, which threads wait on locks, how do context switches affect throughput — each
//! with the figure behind it, and names the pitfalls it finds (oversubscription, thread
//! creation, lock contention, imbalance, park/wake churn, fruitless spinning, long tasks,
//! preemption, workers blocked in the kernel inside tasks) with a suggestion. The comparison
//! lines up two captures per zone, task kind and lock, sorted by the absolute difference of the
//! total time, the way the follow-up to *The Whipping Boy Approach to Job Scheduling* compares 2
//! against 5 workers in Unity's Profile Analyzer.
//!
//! ```
//! use threadlab_doctor::Diagnose;
//! let rec = threadlab::trace::start();
//! std::thread::spawn(|| {
//!     let _z = threadlab::zone!("work");
//! })
//! .join()
//! .unwrap();
//! let diagnosis = rec.stop().diagnose();
//! assert_eq!(diagnosis.answers.len(), 4);
//! println!("{diagnosis}");
//! ```
//!
//! One mechanism per file, and no file imports one that imports it back (checked by
//! `scripts/import-cycles crates/threadlab-doctor/src`):
//! - `diagnose.rs`: the entry point, [`diagnose`] (and `trace.diagnose()` through [`Diagnose`]).
//! - `blocked.rs`: spare threads' zones read back as the tasks that held the pool's workers
//!   blocked in the kernel (the blocked-workers finding is in `findings.rs`).
//! - `guests.rs`: a guest's install span (a caller that ran pool work in a sleeping worker's
//!   seat) read as that worker's, before the per-thread pass.
//! - `states.rs`: one pass per thread: time per state (running, searching, spinning, parked,
//!   waiting on a lock, other; preempted from the OS), span self times, lock spans, counts.
//! - `locks.rs`: per named lock, from the trace model's lock summaries: acquisitions, hold and
//!   wait summaries (holds exact or sampled), the waits per call site, the threads that waited
//!   most and those that held it while others waited.
//! - `groups.rs`: threads grouped by name (imbalance, thread creation), spans per zone/task kind,
//!   long tasks (with their thresholds).
//! - `runtime.rs`: cross-thread figures (wake-up and spawn latency, steal and park rates) and the
//!   OS view (runnable threads per CPU, preemption).
//! - `bounds.rs`: the physical bounds of every figure (CPUs used ≤ CPUs, shares in 0–1, no
//!   NaN), checked before the text form prints them.
//! - `findings.rs`: the [`Diagnosis`], the thresholds (named constants, each with its reason)
//!   and the findings; `answers.rs`: the four answers.
//! - `allocs.rs`: allocations per zone and task (`alloc::Counting`; the allocation-heavy
//!   finding is in `findings.rs`); `frames.rs`: frame figures (late frames against a target,
//!   what ran in them).
//! - `compare.rs`: two captures side by side; `render.rs`: the text form of both; `stats.rs`:
//!   summaries of durations and their formatting.

mod allocs;
mod answers;
mod blocked;
mod bounds;
mod compare;
mod diagnose;
mod findings;
mod frames;
mod groups;
mod guests;
mod locks;
mod render;
mod runtime;
mod states;
mod stats;

pub use allocs::AllocStats;
pub use blocked::{Blocked, BlockedTask};
pub use bounds::bounds_violations;
pub use compare::{compare, CompareLockRow, CompareRow, Comparison, RuntimeRow, NOISE_RELATIVE};
pub use diagnose::{diagnose, Diagnose};
pub use findings::*;
pub use frames::{frame_report, FrameReport, FrameTarget, LateFrame, TOP_NAMES};
pub use groups::{
    Busiest, GroupStats, LongTask, SpanStats, JOINER_PARKED_SHARE, LONG_TASK_IDLE_SHARE,
    LONG_TASK_MIN_NS, LONG_TASK_MIN_TASKS, LONG_TASK_OVER_MEDIAN,
};
pub use locks::{LockHolder, LockSite, LockStats};
pub use runtime::{OsStats, RuntimeStats};
pub use states::ThreadStats;
pub use stats::fmt_ns;
pub use stats::Summary;

#[cfg(test)]
mod tests;
