//! The doctor's judgement: named pitfalls, each with the figure that crossed its threshold and a
//! suggestion; and the four questions of “Multithreading Isn’t Free”, each answered with the figure behind it.
//!
//! Every threshold is a named constant below with the reason for its value. They are set so that
//! the pitfalls the articles describe cross them by a wide margin and a well-behaved run on a noisy
//! 2-core VM stays well below them: judgements use the process's own figures (its runnable
//! threads, its lock waits, its threads' running time), never the machine's load.
//!
//! The [`Diagnosis`] lives here too: it holds the findings and the rules read it, so apart the two
//! files would import each other.
//!
//! (Over 800 lines: the rules, their thresholds and the type they judge, read together.)

use super::allocs::AllocStats;
use super::blocked::Blocked;
use super::groups::imbalance_basis;
use super::groups::{GroupStats, LongTask, SpanStats, LONG_TASK_OVER_MEDIAN};
use super::locks::LockStats;
use super::runtime::{OsStats, RuntimeStats};
use super::states::ThreadStats;
use super::stats::fmt_ns;
use super::stats::ratio;
use super::stats::saturating_sum;

/// Oversubscription: average runnable threads of the process per CPU above this. A process with
/// no more threads than CPUs has at most one runnable thread per CPU whatever else the machine
/// runs (other processes turn its running time into run-queue time but add no runnable thread of
/// its own); 1.5 leaves room for a transient extra thread and flags a process that keeps a third
/// of its runnable time waiting on its own threads.
pub const OVERSUBSCRIBED_RUNNABLE_PER_CPU: f64 = 1.5;

/// The OS-based judgements (oversubscription, preemption, a busy machine) need the sampled
/// threads to span at least this long. The kernel brings a running thread's on-CPU time up to
/// date only at scheduler ticks and switches (up to 4 ms apart at HZ=250), so over a shorter
/// window a single stale sample can make the figures say anything.
pub const OS_MIN_WINDOW_NS: u64 = 20_000_000;

/// Preemption: share of the threads' runnable time spent waiting for a CPU. Above a quarter,
/// scheduling delay outweighs the 10–20% run-to-run noise of a small shared VM.
pub const PREEMPTED_SHARE: f64 = 0.25;

/// Preemption is blamed on the process when its own runnable threads exceed the CPUs by this
/// factor (then at least 1 − 1/1.25 = 20% of its runnable time must wait whatever else runs);
/// below it, the waiting is other processes' doing ([`Pitfall::BusyMachine`]).
pub const SELF_PREEMPTION_RUNNABLE_PER_CPU: f64 = 1.25;

/// Thread creation: at least this many threads of one group started and exited during the
/// recording (a handful of helper threads is normal; dozens per operation is a pattern).
pub const THREAD_CREATION_MIN_THREADS: usize = 16;

/// Thread creation: the group's median work per thread is below this many intervals between two
/// thread starts. The interval is what starting one thread costs its creator (tens of µs on a VM;
/// “The overhead of spawning threads” (Matt Gallagher) measured about 1 s per 12,000 threads, 83 µs each, on a 2010 Mac Pro); a
/// thread that works less than that costs more to create than it gives back.
pub const THREAD_CREATION_WORK_PER_START: f64 = 1.0;

/// Lock contention: total wait above total hold × this. The lock is then a queue, not a
/// guard: threads spend longer asking for it than using it (the queue lock of “Multithreading Isn’t Free”: 214.89
/// ms wait against 94.86 ms hold, 2.3×).
pub const LOCK_WAIT_OVER_HOLD: f64 = 1.0;

/// Lock contention also when at least this share of the acquisitions waited for another
/// thread's hold (50%): the threads take turns at the lock instead of working side by side
/// (mutrace's "contended" count, Lennart Poettering, "Measuring Lock Contention"). Two threads
/// cannot wait longer than they hold (one waits while the other holds), so the wait/hold rule
/// alone never finds a lock that serialises two threads: a C program whose two threads took a
/// mutex 600 times, 591 of them after waiting, read 0.7× wait/hold.
pub const LOCK_CONTENDED_SHARE: f64 = 0.5;

/// Lock contention needs at least this many waits: one or two are an accident of timing. (An
/// unfair lock, like std's, can starve a few threads for milliseconds while one thread takes it
/// again and again: a handful of long waits is contention too.)
pub const LOCK_MIN_WAITS: u64 = 3;

/// Lock contention needs the waits to add up to this share of the recording (1%): below it,
/// no thread lost enough time to matter.
pub const LOCK_MIN_WAIT_SHARE: f64 = 0.01;

/// Imbalance: the group left this share of its capacity unused (`GroupStats::imbalance`: with a
/// CPU for each thread, 1 − mean/max, the usual load-imbalance measure of parallel profilers). A
/// quarter of the group's capacity waiting for its slowest member is well beyond a stealing
/// pool's tail (one task) on any loop long enough to judge.
pub const IMBALANCE_SHARE: f64 = 0.25;

/// Imbalance is judged only in groups of at most this many threads per CPU: with more, the
/// threads do not run side by side (a thread per task, oversubscription), and those pitfalls
/// explain the uneven figures.
pub const IMBALANCE_MAX_THREADS_PER_CPU: usize = 4;

/// Imbalance is judged only on groups whose busiest thread ran at least this long: below 2 ms a
/// worker's wake-up (10–50 µs on a VM) is a visible share and the figure is noise, and threads
/// that mostly wait (a dedicated thread per queue) have no load to balance.
pub const IMBALANCE_MIN_RUNNING_NS: u64 = 2_000_000;

/// Park/wake churn: a group's threads blocked at least this many times each on average.
pub const CHURN_MIN_BLOCKS_PER_THREAD: u64 = 100;

/// Park/wake churn: less CPU than this per block. A futex park plus the wake-up that ends it cost
/// about 5–20 µs of CPU on a VM (the pools of “Rendezvous Benchmark Analysis” spent 49–70% of their CPU parking);
/// below 50 µs of CPU per block, blocking and waking is a large share of what the thread does.
pub const CHURN_MAX_CPU_PER_BLOCK_NS: u64 = 50_000;

/// Fruitless spinning: workers spent at least this share of their time spinning...
pub const SPIN_SHARE: f64 = 0.10;

/// ...over at least this many spins (a few are the normal end of a burst of work)...
pub const SPIN_MIN_SPINS: u64 = 20;

/// ...and at least this share of the spins ended in a park without finding work: the spin is
/// then pure CPU cost (a spin that often finds work is a cheap wake-up instead).
pub const SPIN_FRUITLESS_SHARE: f64 = 0.8;

/// Allocation-heavy: one zone or task name made at least this share of the allocations counted
/// in the recording's spans. Half of everything counted in one place is where a change (reuse a
/// buffer, allocate once outside the loop, an arena) pays most; the workers of the allocator-contention article spent
/// their time in the allocator's lock for exactly such a hot spot.
pub const ALLOC_HEAVY_SHARE: f64 = 0.5;

/// Allocation-heavy needs at least this many allocations in that name's spans: a few hundred
/// allocations cost well under a millisecond even on a locked allocator.
pub const ALLOC_HEAVY_MIN: u64 = 1000;

/// Blocked workers: a finding as soon as the pool started this many spare threads for the same
/// blocked tasks. The monitor starts one only after every awake worker has sat blocked in the
/// kernel inside a task, with no task finishing for two of its 50 ms ticks, while work waited
/// (or at once, when the task said so with `threadlab::blocking`): one is already a stall of
/// the whole pool that the program's own code caused, and, had the waited-for work been the
/// queued work (a barrier's last party, a receive's sender), a hang without it.
pub const BLOCKED_MIN_SPARE_THREADS: f64 = 1.0;

/// What the doctor says of a trace without instrumentation: the findings it cannot make.
///
/// ```
/// use threadlab_doctor::Diagnose;
/// let d = threadlab_trace::TraceBuilder::new().build().diagnose();
/// assert!(d.to_string().contains(threadlab_doctor::NEEDS_INSTRUMENTATION));
/// ```
pub const NEEDS_INSTRUMENTATION: &str = "observed from outside: long tasks, fruitless spinning, \
     imbalance of task work and every lock hold need an instrumented run \
     (threadlab::trace::start; `threadlab run` times the holds of a sample of pthread lock \
     acquisitions); \
     a futex wait seen only by sampling (not a pthread wait, which `threadlab run` times from \
     inside) is shown as a lock when several threads wait on that futex, so a condition \
     variable's waiters may count as lock waits";

/// What the doctor found in a trace: figures per thread, group, lock and span, the runtime's
/// and the OS's figures, the four answers and the findings. `Display` prints all of it.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
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
    /// The four questions of “Multithreading Isn’t Free”, answered.
    pub answers: Vec<Answer>,
    /// The pitfalls found.
    pub findings: Vec<Finding>,
    /// Allocations per zone name and task kind, most first (empty unless the program counted
    /// them with `threadlab::alloc::Counting`).
    pub allocs: Vec<AllocStats>,
    /// Spare threads, grouped by the blocked tasks they stood in for, longest first (empty
    /// when the pool started none).
    pub blocked: Vec<Blocked>,
}

impl Diagnosis {
    /// Whether a finding names `pitfall`.
    pub fn has(&self, pitfall: Pitfall) -> bool {
        self.finding(pitfall).is_some()
    }

    /// The first finding that names `pitfall`, if any (findings name a pitfall at most once
    /// per subject; the first is the one the report lists first).
    ///
    /// ```
    /// use threadlab_doctor::{Diagnose, Pitfall};
    /// let d = threadlab_trace::TraceBuilder::new().build().diagnose();
    /// assert!(d.finding(Pitfall::LongTask).is_none());
    /// ```
    pub fn finding(&self, pitfall: Pitfall) -> Option<&Finding> {
        self.findings.iter().find(|f| f.pitfall == pitfall)
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
    /// steals, every lock hold: sampled holds are an observer's); `false` for a trace observed
    /// from outside (`threadlab run -- CMD`), whose findings are then limited to the OS's view
    /// (see [`NEEDS_INSTRUMENTATION`]).
    ///
    /// ```
    /// use threadlab_doctor::Diagnose;
    /// let d = threadlab_trace::TraceBuilder::new().build().diagnose();
    /// assert!(!d.instrumented());
    /// ```
    pub fn instrumented(&self) -> bool {
        self.threads
            .iter()
            .any(|t| t.tasks + t.zones + t.spins + t.steal_attempts + t.spawns > 0)
            || self
                .locks
                .iter()
                .any(|l| l.hold.count > 0 && l.hold_samples.is_none())
    }
}

/// A named pitfall.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum Pitfall {
    /// More runnable threads than CPUs.
    Oversubscription,
    /// Threads created for work shorter than their creation.
    ThreadCreation,
    /// Threads wait for a lock longer than it is held.
    LockContention,
    /// Some threads of a group work much longer than the others.
    Imbalance,
    /// Threads block and wake up with little work in between.
    ParkWakeChurn,
    /// Workers spin without finding work.
    FruitlessSpinning,
    /// One task runs far longer than the others of its kind.
    LongTask,
    /// The process's own threads wait for CPUs.
    Preemption,
    /// Other processes take the CPUs (not the program's doing).
    BusyMachine,
    /// One zone or task makes most of the allocations (counted by `alloc::Counting`).
    AllocationHeavy,
    /// Every awake worker sat blocked in the kernel inside a task while work waited, and the
    /// pool started spare threads to run it.
    BlockedWorkers,
}

impl Pitfall {
    /// A stable lower-case name (`lock-contention`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Pitfall::Oversubscription => "oversubscription",
            Pitfall::ThreadCreation => "thread-creation",
            Pitfall::LockContention => "lock-contention",
            Pitfall::Imbalance => "imbalance",
            Pitfall::ParkWakeChurn => "park-wake-churn",
            Pitfall::FruitlessSpinning => "fruitless-spinning",
            Pitfall::LongTask => "long-task",
            Pitfall::Preemption => "preemption",
            Pitfall::BusyMachine => "busy-machine",
            Pitfall::AllocationHeavy => "allocation-heavy",
            Pitfall::BlockedWorkers => "blocked-workers",
        }
    }
}

impl std::fmt::Display for Pitfall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A figure and, for a finding, the threshold it crossed.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Figure {
    /// What it measures.
    pub name: String,
    /// Its value, in `unit`.
    pub value: f64,
    /// `ratio`, `ns`, `threads/CPU`, …
    pub unit: &'static str,
    /// The threshold a finding's figure crossed; for an answer's figure, the threshold of the
    /// finding it bears on (the figure is worse at or above it).
    pub threshold: Option<f64>,
}

pub(crate) fn figure(name: &str, value: f64, unit: &'static str, threshold: Option<f64>) -> Figure {
    Figure {
        name: name.to_owned(),
        value,
        unit,
        threshold,
    }
}

/// Whether lock `l` is contended over a recording of `duration_ns`, and the figure that says
/// so (or says how far from it the lock is): enough waits ([`LOCK_MIN_WAITS`], adding up to
/// [`LOCK_MIN_WAIT_SHARE`] of the recording), then, with its holds known, waits longer than
/// its holds ([`LOCK_WAIT_OVER_HOLD`], figure `wait / hold`) or most acquisitions waiting for
/// another thread ([`LOCK_CONTENDED_SHARE`], figure `contended share`); with its holds unknown
/// (futex waits sampled from outside), enough waits alone (figure `wait / recording`).
pub(crate) fn lock_judged(l: &LockStats, duration_ns: u64) -> (bool, Figure) {
    let share = ratio(l.wait.total_ns as f64, duration_ns as f64);
    let enough = l.wait.count >= LOCK_MIN_WAITS && share >= LOCK_MIN_WAIT_SHARE;
    if l.hold.count == 0 {
        let f = figure(
            "wait / recording",
            share,
            "ratio",
            Some(LOCK_MIN_WAIT_SHARE),
        );
        return (enough, f);
    }
    let queue = l.wait.total_ns as f64 > LOCK_WAIT_OVER_HOLD * l.hold.total_ns as f64;
    let turns =
        !l.holders.is_empty() && l.contended_share.is_some_and(|c| c >= LOCK_CONTENDED_SHARE);
    if turns && !queue {
        let c = l.contended_share.unwrap_or(0.0);
        let f = figure("contended share", c, "ratio", Some(LOCK_CONTENDED_SHARE));
        return (enough, f);
    }
    let f = figure(
        "wait / hold",
        l.wait_over_hold,
        "ratio",
        Some(LOCK_WAIT_OVER_HOLD),
    );
    (enough && queue, f)
}

/// A pitfall found in a trace.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Finding {
    /// Which pitfall.
    pub pitfall: Pitfall,
    /// What it is about: `lock queue`, `threads thread N`, `process`.
    pub subject: String,
    /// One sentence with the figures.
    pub evidence: String,
    /// The figure that crossed the threshold.
    pub figure: Figure,
    /// What to do about it.
    pub suggestion: String,
}

/// One of the four questions of “Multithreading Isn’t Free”, answered.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Answer {
    /// The question.
    pub question: &'static str,
    /// The answer, with figures.
    pub answer: String,
    /// The figure behind it, or `None` when the trace holds too little to judge (a window
    /// shorter than the OS's accounting allows, no group working side by side, a lock whose
    /// hold time was not recorded): never drawn as 0.
    pub figure: Option<Figure>,
    /// Whether no finding bears on this question.
    pub ok: bool,
}

/// The findings, in order of the four questions (answered in `answers.rs`).
pub(crate) fn findings(d: &Diagnosis) -> Vec<Finding> {
    let mut out = Vec::new();
    let cpus = d.os.cpus as f64;
    let per_cpu = ratio(d.os.runnable_avg, cpus);
    let os_window = d.os.active_ns >= OS_MIN_WINDOW_NS;
    // Other processes kept this one's threads waiting for CPUs: uneven running times may be
    // their doing, which the imbalance and long-task findings then say.
    let busy_machine = os_window
        && cpus > 0.0
        && d.os.preempted_share >= PREEMPTED_SHARE
        && per_cpu <= SELF_PREEMPTION_RUNNABLE_PER_CPU;
    let caveat = if busy_machine {
        "; other processes held the CPUs meanwhile (see busy-machine), which alone can starve a \
         thread"
    } else {
        ""
    };
    // First: a pool whose every worker blocked stalled outright (or would have hung), and the
    // other figures of the run are measured around that stall.
    // Spare threads the program asked for (`threadlab::blocking`) are no stall.
    out.extend(
        d.blocked
            .iter()
            .filter(|b| !b.declared)
            .map(blocked_workers),
    );
    if os_window && cpus > 0.0 && per_cpu > OVERSUBSCRIBED_RUNNABLE_PER_CPU {
        out.push(Finding {
            pitfall: Pitfall::Oversubscription,
            subject: "process".into(),
            evidence: format!(
                "{:.1} threads were runnable on average on {} CPU(s) ({:.1} per CPU) over {}",
                d.os.runnable_avg,
                d.os.cpus,
                per_cpu,
                fmt_ns(d.os.active_ns)
            ),
            figure: figure(
                "runnable threads per CPU",
                per_cpu,
                "threads/CPU",
                Some(OVERSUBSCRIBED_RUNNABLE_PER_CPU),
            ),
            suggestion: "run the work on a pool with one thread per CPU \
                         (std::thread::available_parallelism) instead of a thread per task"
                .into(),
        });
    }
    for g in &d.groups {
        if g.exited < THREAD_CREATION_MIN_THREADS || g.median_start_interval_ns == 0 {
            continue;
        }
        let work_per_start = g.median_work_ns as f64 / g.median_start_interval_ns as f64;
        if work_per_start < THREAD_CREATION_WORK_PER_START {
            out.push(Finding {
                pitfall: Pitfall::ThreadCreation,
                subject: format!("threads {}", g.name),
                evidence: format!(
                    "{} threads of `{}` started and exited during the recording, one every {} \
                     (median), each working {} (median)",
                    g.exited,
                    g.name,
                    fmt_ns(g.median_start_interval_ns),
                    fmt_ns(g.median_work_ns)
                ),
                figure: figure(
                    "work per thread / interval between thread starts",
                    work_per_start,
                    "ratio",
                    Some(THREAD_CREATION_WORK_PER_START),
                ),
                suggestion: "keep threads alive and hand them work (a pool, or larger tasks per \
                             thread): creating a thread costs more than the work it does"
                    .into(),
            });
        }
    }
    for g in d.groups.iter().filter(|g| imbalance_judged(g, d.os.cpus)) {
        if cpus > 0.0 && g.imbalance >= IMBALANCE_SHARE {
            out.push(Finding {
                pitfall: Pitfall::Imbalance,
                subject: format!("threads {}", g.name),
                evidence: format!(
                    "{}: {:.0}% of the group's capacity waited on its slowest member{}{caveat}",
                    imbalance_basis(g),
                    100.0 * g.imbalance,
                    busiest_note(g)
                ),
                figure: figure(
                    "1 - work / (capacity × max work)",
                    g.imbalance,
                    "ratio",
                    Some(IMBALANCE_SHARE),
                ),
                suggestion: "split the work into more pieces than threads and let idle threads \
                             take them (work stealing, a dynamic schedule), or cut the long piece"
                    .into(),
            });
        }
    }
    for t in &d.long_tasks {
        out.push(Finding {
            pitfall: Pitfall::LongTask,
            subject: match (&t.task, t.named) {
                (Some(task), true) => format!("{} `{task}`", t.name),
                _ => t.name.clone(),
            },
            evidence: format!(
                "the longest `{}`{} ran {} on {} against a median of {} over {} tasks, while the \
                 other workers were idle {:.0}% of that time{caveat}",
                t.name,
                which_task(t),
                fmt_ns(t.self_ns),
                t.thread,
                fmt_ns(t.median_ns),
                t.tasks,
                100.0 * t.others_idle
            ),
            figure: figure(
                "longest / median task",
                ratio(t.self_ns as f64, t.median_ns.max(1) as f64),
                "ratio",
                Some(LONG_TASK_OVER_MEDIAN),
            ),
            suggestion: "split the long task (a nested join or parallel loop inside it) so idle \
                         workers can share it"
                .into(),
        });
    }
    for l in &d.locks {
        let (contended, lock_figure) = lock_judged(l, d.duration_ns);
        if contended {
            // Futex waits sampled from outside come without holds.
            let held = if l.hold.count == 0 {
                "its hold time not recorded (observed from outside)".to_owned()
            } else {
                format!(
                    "{} held over {} acquisitions ({:.1}× the hold time{})",
                    fmt_ns(l.hold.total_ns),
                    l.hold.count,
                    l.wait_over_hold,
                    l.sampled_note()
                )
            };
            out.push(Finding {
                pitfall: Pitfall::LockContention,
                subject: format!("lock {}", l.name),
                evidence: format!(
                    "threads waited {} for `{}` over {} waits{}; {held}; p99 wait {}{}",
                    fmt_ns(l.wait.total_ns),
                    l.name,
                    l.wait.count,
                    l.contended_note(),
                    fmt_ns(l.wait.p99_ns),
                    l.where_note()
                ),
                figure: lock_figure,
                suggestion: "take the lock less often (batch the work taken under it), shard it, \
                             or replace the shared queue by per-thread deques with stealing"
                    .into(),
            });
        }
    }
    for g in &d.groups {
        // A lock wait that blocked is already reported as a wait for its lock.
        let blocks = g.blocks_outside_lock_waits;
        let per_thread = blocks / g.threads.max(1) as u64;
        let work = if g.on_cpu_ns > 0 {
            g.on_cpu_ns
        } else {
            g.running_ns
        };
        let per_block = work / blocks.max(1);
        if per_thread >= CHURN_MIN_BLOCKS_PER_THREAD && per_block < CHURN_MAX_CPU_PER_BLOCK_NS {
            out.push(Finding {
                pitfall: Pitfall::ParkWakeChurn,
                subject: format!("threads {}", g.name),
                evidence: format!(
                    "the {} thread(s) of `{}` blocked {} times ({:.0}/s) other than waiting for \
                     a lock, with {} of CPU per block",
                    g.threads,
                    g.name,
                    blocks,
                    ratio(blocks as f64, g.window_ns as f64 / 1e9),
                    fmt_ns(per_block)
                ),
                figure: figure(
                    "CPU per block",
                    per_block as f64,
                    "ns",
                    Some(CHURN_MAX_CPU_PER_BLOCK_NS as f64),
                ),
                suggestion: "hand over work in batches, keep the exchange on one thread, or let \
                             a waiting thread spin briefly before it parks"
                    .into(),
            });
        }
    }
    let workers: Vec<_> = d.threads.iter().filter(|t| t.worker.is_some()).collect();
    let spin_ns = saturating_sum(workers.iter().map(|t| t.spinning_ns));
    let life_ns = saturating_sum(workers.iter().map(|t| t.lifetime_ns));
    let spins: u64 = workers.iter().map(|t| t.spins).sum();
    let fruitless: u64 = workers.iter().map(|t| t.fruitless_spins).sum();
    let spin_share = ratio(spin_ns as f64, life_ns as f64);
    let fruitless_share = ratio(fruitless as f64, spins as f64);
    if spins >= SPIN_MIN_SPINS
        && spin_share >= SPIN_SHARE
        && fruitless_share >= SPIN_FRUITLESS_SHARE
    {
        out.push(Finding {
            pitfall: Pitfall::FruitlessSpinning,
            subject: "pool workers".into(),
            evidence: format!(
                "workers spent {:.0}% of their time spinning ({}), and {:.0}% of {} spins ended \
                 in a park without finding work",
                100.0 * spin_share,
                fmt_ns(spin_ns),
                100.0 * fruitless_share,
                spins
            ),
            figure: figure("time spinning", spin_share, "ratio", Some(SPIN_SHARE)),
            suggestion: "spin for less time before parking (about one wake-up's cost), or let \
                         fewer workers search at once"
                .into(),
        });
    }
    if os_window && d.os.preempted_share >= PREEMPTED_SHARE && cpus > 0.0 {
        let own = per_cpu > SELF_PREEMPTION_RUNNABLE_PER_CPU;
        out.push(Finding {
            pitfall: if own {
                Pitfall::Preemption
            } else {
                Pitfall::BusyMachine
            },
            subject: "process".into(),
            evidence: format!(
                "threads waited {:.0}% of their runnable time for a CPU ({}; {:.0} involuntary \
                 switches/s) with {:.1} runnable threads of this process per CPU",
                100.0 * d.os.preempted_share,
                fmt_ns(d.os.preempted_ns),
                d.os.involuntary_per_sec,
                per_cpu
            ),
            figure: figure(
                "preempted share of runnable time",
                d.os.preempted_share,
                "ratio",
                Some(PREEMPTED_SHARE),
            ),
            suggestion: if own {
                "run no more busy threads than CPUs: the OS time-slices the rest, and every \
                 switch evicts caches"
                    .into()
            } else {
                "other processes took the CPUs during the recording: measure again on a quieter \
                 machine before drawing conclusions"
                    .into()
            },
        });
    }
    out
}

/// The blocked-workers finding of one group of spare threads.
fn blocked_workers(b: &Blocked) -> Finding {
    let names: Vec<String> = b
        .tasks
        .iter()
        .map(|t| match (&t.name, &t.location) {
            (Some(n), _) => format!("`{n}`"),
            (None, Some(at)) => format!("spawned at {at}"),
            (None, None) => t.kind.clone(),
        })
        .collect();
    let subject = match names.len() {
        0 => "pool workers".to_owned(),
        1 => format!("task {}", names[0]),
        _ => format!("tasks {}", names.join(", ")),
    };
    let seats: Vec<String> = b.seats.iter().map(|s| s.to_string()).collect();
    let seats = match seats.split_last() {
        Some((last, [])) => format!("worker {last}"),
        Some((last, rest)) => format!("workers {} and {last}", rest.join(", ")),
        None => "workers".to_owned(),
    };
    let inside = if b.tasks.is_empty() {
        "inside tasks whose start the recording missed".to_owned()
    } else {
        let tasks: Vec<String> = b.tasks.iter().map(|t| t.describe()).collect();
        format!("inside {}", tasks.join(" and "))
    };
    let held = if b.held_ns > 0 {
        format!(
            ", up to {} into the task before a spare thread arrived",
            fmt_ns(b.held_ns)
        )
    } else {
        String::new()
    };
    Finding {
        pitfall: Pitfall::BlockedWorkers,
        subject,
        evidence: format!(
            "{seats} sat blocked in the kernel {inside} while work waited in the pool{held}: {} \
             spare thread(s) stood in for them, for {} in all, and ran {} task(s)",
            b.spare_threads,
            fmt_ns(b.spare_ns),
            b.spare_tasks
        ),
        figure: figure(
            "spare threads started",
            b.spare_threads as f64,
            "threads",
            Some(BLOCKED_MIN_SPARE_THREADS),
        ),
        suggestion:
            "do not block inside pool tasks: wait with threadlab's channels, `block_on` or \
                     async code, or give blocking work threads of its own; where a task must \
                     block, wrap the blocking call in `threadlab::blocking` so the pool hands its \
                     seat to a spare thread at once"
                .into(),
    }
}

/// The allocation-heavy finding, if one name made most of the allocations.
pub(crate) fn allocation_heavy(stats: &[AllocStats]) -> Option<Finding> {
    let total: u64 = stats.iter().map(|s| s.count).sum();
    let top = stats.first()?;
    let share = top.count as f64 / total.max(1) as f64;
    if top.count < ALLOC_HEAVY_MIN || share < ALLOC_HEAVY_SHARE {
        return None;
    }
    Some(Finding {
        pitfall: Pitfall::AllocationHeavy,
        subject: format!("span {}", top.name),
        evidence: format!(
            "`{}` made {} of the {} allocations counted in spans ({:.0}%), {:.1} per span over \
             {} span(s), {} in all",
            top.name,
            top.count,
            total,
            100.0 * share,
            top.count as f64 / top.spans.max(1) as f64,
            top.spans,
            fmt_bytes(top.bytes)
        ),
        figure: figure(
            "share of counted allocations",
            share,
            "ratio",
            Some(ALLOC_HEAVY_SHARE),
        ),
        suggestion: "allocate less in it: reuse buffers across calls, allocate once outside the \
                     loop, or give it an arena; with many workers, a thread-caching allocator"
            .into(),
    })
}

/// Bytes as B, KiB, MiB or GiB with three significant digits.
fn fmt_bytes(b: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.3} {}", units[u])
    }
}

/// Which task a long-task finding is about: its name or spawn location, and its main zone.
fn which_task(t: &LongTask) -> String {
    let mut out = String::new();
    match (&t.task, t.named) {
        (Some(task), true) => out.push_str(&format!(" (`{task}`")),
        (Some(at), false) => out.push_str(&format!(" (spawned at {at}")),
        (None, _) => {}
    }
    if let Some(z) = &t.zone {
        out.push_str(if out.is_empty() { " (" } else { ", " });
        out.push_str(&format!("mostly in zone `{z}`"));
    }
    if !out.is_empty() {
        out.push(')');
    }
    out
}

/// Whether a group's imbalance is judged: at least two members side by side, not spare
/// threads (uneven by design), not far more threads than CPUs (then the oversubscription and
/// thread-creation findings explain uneven figures; an unknown CPU count counts as one), and a
/// busiest member that ran long enough.
pub(crate) fn imbalance_judged(g: &GroupStats, cpus: u32) -> bool {
    g.members >= 2
        && !g.spare
        && g.members <= IMBALANCE_MAX_THREADS_PER_CPU * (cpus as usize).max(1)
        && g.max_running_ns >= IMBALANCE_MIN_RUNNING_NS
}

/// What the busiest thread of an imbalanced group ran most, if the trace says.
fn busiest_note(g: &GroupStats) -> String {
    let Some(b) = &g.busiest else {
        return String::new();
    };
    let mut parts = Vec::new();
    if let Some((z, ns)) = &b.zone {
        parts.push(format!("zone `{z}` ({} self)", fmt_ns(*ns)));
    }
    if let Some((task, ns)) = &b.task {
        parts.push(format!("task `{task}` ({})", fmt_ns(*ns)));
    }
    if parts.is_empty() {
        return String::new();
    }
    format!(
        "; the busiest, {}, ran most {}",
        b.thread,
        parts.join(" and ")
    )
}
