//! Analysis of a [`Trace`]: the doctor ([`Trace::diagnose`]) and the comparison of two captures
//! ([`compare`]).
//!
//! The doctor answers the four questions the first seed asks of a profile — are the threads used
//! effectively, is the work evenly distributed, which threads wait on locks, how do context
//! switches affect throughput — each with the figure behind it, and names the pitfalls it finds
//! (oversubscription, thread creation, lock contention, imbalance, park/wake churn, fruitless
//! spinning, long tasks, preemption) with a suggestion. The comparison lines up two captures per
//! zone, task kind and lock, sorted by the absolute difference of the total time, the way the
//! fourth seed compares 2 against 5 workers in Unity's Profile Analyzer.
//!
//! ```
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
//! One mechanism per file:
//! - `states.rs`: one pass per thread: time per state (running, searching, spinning, parked,
//!   waiting on a lock, other; preempted from the OS), span self times, lock spans, counts.
//! - `locks.rs`: per named lock, hold and wait summaries and the threads that waited most.
//! - `groups.rs`: threads grouped by name (imbalance, thread creation), spans per zone/task kind.
//! - `runtime.rs`: cross-thread figures (wake-up and spawn latency, steal and park rates) and the
//!   OS view (runnable threads per CPU, preemption).
//! - `findings.rs`: the thresholds (named constants, each with its reason) and the findings;
//!   `answers.rs`: the four answers.
//! - `allocs.rs`: allocations per zone and task (`alloc::Counting`), the allocation-heavy
//!   finding; `frames.rs`: frame figures (late frames against a target, what ran in them).
//! - `compare.rs`: two captures side by side; `render.rs`: the text form of both.

mod allocs;
mod answers;
mod compare;
mod findings;
mod frames;
mod groups;
mod locks;
mod render;
mod runtime;
mod states;
mod stats;

pub use allocs::{AllocStats, ALLOC_HEAVY_MIN, ALLOC_HEAVY_SHARE};
pub use compare::{compare, CompareRow, Comparison, RuntimeRow, NOISE_RELATIVE};
pub use findings::*;
pub use frames::{FrameReport, FrameTarget, LateFrame, TOP_NAMES};
pub use groups::{Busiest, GroupStats, LongTask, SpanStats};
pub use locks::LockStats;
pub use render::fmt_ns;
pub use runtime::{OsStats, RuntimeStats};
pub use states::ThreadStats;
pub use stats::Summary;

use crate::trace::Trace;

/// What the doctor says of a trace without instrumentation: the findings it cannot make.
///
/// ```
/// let d = threadlab::trace::TraceBuilder::new().build().diagnose();
/// assert!(d.to_string().contains(threadlab::analysis::NEEDS_INSTRUMENTATION));
/// ```
pub const NEEDS_INSTRUMENTATION: &str = "observed from outside: long tasks, fruitless spinning, \
     imbalance of task work and lock hold times need an instrumented run (threadlab::trace::start); \
     futex waits are shown as locks, so a condition variable's waiters count as lock waits";

/// What the doctor found in a trace: figures per thread, group, lock and span, the runtime's
/// and the OS's figures, the four answers and the findings. `Display` prints all of it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Diagnosis {
    /// Length of the recording.
    pub duration_ns: u64,
    /// Events in the trace.
    pub events: usize,
    /// Events dropped by the flight recorder or past the recording's memory cap.
    pub dropped: u64,
    /// Per thread, in the trace's order.
    pub threads: Vec<ThreadStats>,
    /// Per group of threads (names equal but for digits), by name.
    pub groups: Vec<GroupStats>,
    /// Per lock name, most waited-for first.
    pub locks: Vec<LockStats>,
    /// Per zone name and task kind, most self time first.
    pub spans: Vec<SpanStats>,
    /// Tasks far longer than their kind's median while other workers sat idle.
    pub long_tasks: Vec<LongTask>,
    /// The pool's figures.
    pub runtime: RuntimeStats,
    /// The OS's figures.
    pub os: OsStats,
    /// The first seed's four questions, answered.
    pub answers: Vec<Answer>,
    /// The pitfalls found.
    pub findings: Vec<Finding>,
    /// Allocations per zone name and task kind, most first (empty unless the program counted
    /// them with `threadlab::alloc::Counting`).
    pub allocs: Vec<AllocStats>,
}

impl Diagnosis {
    /// Whether a finding names `pitfall`.
    pub fn has(&self, pitfall: Pitfall) -> bool {
        self.findings.iter().any(|f| f.pitfall == pitfall)
    }

    /// The figures of lock `name`, if it was used.
    pub fn lock(&self, name: &str) -> Option<&LockStats> {
        self.locks.iter().find(|l| l.name == name)
    }

    /// The figures of group `name` (e.g. `threadlab-worker-N`).
    pub fn group(&self, name: &str) -> Option<&GroupStats> {
        self.groups.iter().find(|g| g.name == name)
    }

    /// Whether the trace holds anything only an instrumented run records (tasks, zones, spins,
    /// steals, lock holds); `false` for a trace observed from outside (`threadlab run -- CMD`),
    /// whose findings are then limited to the OS's view (see [`NEEDS_INSTRUMENTATION`]).
    ///
    /// ```
    /// let d = threadlab::trace::TraceBuilder::new().build().diagnose();
    /// assert!(!d.instrumented());
    /// ```
    pub fn instrumented(&self) -> bool {
        self.threads
            .iter()
            .any(|t| t.tasks + t.zones + t.spins + t.steal_attempts + t.spawns > 0)
            || self.locks.iter().any(|l| l.hold.count > 0)
    }
}

impl Trace {
    /// Diagnoses the trace: where each thread's time went, the locks, the scheduler's and the
    /// OS's figures, the four answers and the pitfalls found (see the [`analysis`](self) module).
    /// Never panics, whatever the events (a loaded file may hold anything).
    ///
    /// ```
    /// use threadlab::analysis::Pitfall;
    /// let queue = threadlab::sync::Mutex::named("queue", 0);
    /// let rec = threadlab::trace::start();
    /// *queue.lock() += 1;
    /// let d = rec.stop().diagnose();
    /// assert_eq!(d.lock("queue").unwrap().hold.count, 1);
    /// assert!(!d.has(Pitfall::LockContention), "one uncontended acquisition");
    /// ```
    pub fn diagnose(&self) -> Diagnosis {
        let end = self.duration_ns();
        let walks: Vec<states::Walk> = self
            .threads()
            .iter()
            .map(|t| states::walk(t, end, states::TaskArgKeys::of(self)))
            .collect();
        let os = runtime::os(self, &walks);
        let on_cpu = os.active_ns >= OS_MIN_WINDOW_NS;
        let mut d = Diagnosis {
            duration_ns: self.duration_ns(),
            events: self.event_count(),
            dropped: self.dropped_events(),
            groups: groups::groups(self, &walks, on_cpu),
            locks: locks::locks(self, &walks),
            spans: groups::spans(self, &walks),
            long_tasks: groups::long_tasks(self, &walks),
            runtime: runtime::runtime(self, &walks),
            os,
            threads: Vec::new(),
            answers: Vec::new(),
            findings: Vec::new(),
            allocs: allocs::allocs(self),
        };
        d.threads = walks.into_iter().map(|w| w.stats).collect();
        d.findings = findings::findings(&d);
        d.findings.extend(allocs::finding(&d.allocs));
        d.answers = answers::answers(&d, &d.findings);
        d
    }
}

#[cfg(test)]
mod tests;
