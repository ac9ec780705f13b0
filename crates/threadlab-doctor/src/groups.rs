//! Threads grouped by name (digits ignored: `threadlab-worker-0` and `-1` are one group,
//! `work-sharing #3` belongs to `work-sharing #N`, unnamed threads to `thread N`), and per
//! zone name or task kind, the spans' self times. Groups are what imbalance and thread
//! creation are judged on; spans are what `compare` lines up.
//!
//! Imbalance compares the work each thread of a group did: its running time, counted at its
//! on-CPU share of runnable time when the OS figures cover a long enough window. A thread that
//! sat preempted inside a task for 70 ms did not work 70 ms, and a machine shared with other
//! processes would otherwise make any loop look uneven.
//!
//! The capacity lost is measured against what the group could have done while its busiest
//! thread worked: one busiest thread's work on each of `min(threads, CPUs)` CPUs. With more
//! threads than CPUs a thread that waits leaves no CPU idle (four Go runtime threads on two CPUs
//! that kept both busy lost nothing), so the usual `1 − mean/max` of parallel profilers, which
//! assumes a CPU per thread, is its special case.
//!
//! Only the threads doing the group's work are its members. A thread that is not a pool worker,
//! started before every other thread of its group, then spent most of their lives parked and
//! ran far less than they did (see [`JOINER_PARKED_SHARE`]) is waiting for them (a `main` that
//! starts two workers and joins them, all three named after the program): it has no share of
//! their work to lack, and counting it would report its wait as a third of the group's
//! capacity lost.

use std::collections::BTreeMap;

use super::states::{SpanKey, ThreadStats, Walk};
use super::stats::{fmt_ns, median, ratio, saturating_sum, Summary};
use threadlab_trace::{NameId, Trace};

// The long-task thresholds live beside the code that finds long tasks (the doctor's other
// thresholds are in `findings.rs`).

/// Long task: a task's time minus the tasks nested in it (its zones are its own work) at least
/// this many times its kind's median...
pub const LONG_TASK_OVER_MEDIAN: f64 = 10.0;

/// ...and at least this long (1 ms: shorter tasks finish before imbalance is visible)...
pub const LONG_TASK_MIN_NS: u64 = 1_000_000;

/// ...among at least this many tasks of its kind (fewer give no meaningful median)...
pub const LONG_TASK_MIN_TASKS: u64 = 8;

/// ...while the other workers were idle at least half of the time it ran. An adaptive loop's
/// chunks differ in size by design, and a long task is harmless while everyone else is busy; it
/// blocks the pool when the others have nothing left to do.
pub const LONG_TASK_IDLE_SHARE: f64 = 0.5;

/// A thread that is no pool worker, started before every other thread of its group, was
/// parked for at least this share of the time from their first start to their last end and ran
/// less than this share of their mean running time is waiting for them, not a member of their
/// work (see the module doc). Half: a joining `main` is parked for all of it but the sampling
/// period that a thread observed from outside is seen late by (25 ms at 40 Hz) and runs next
/// to nothing, while a thread that takes its share of the work (the first of a pool's threads,
/// started first only because threads start one after another) runs about the mean.
pub const JOINER_PARKED_SHARE: f64 = 0.5;

/// A group of threads whose names differ only in their digits.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct GroupStats {
    /// The group's name (`threadlab-worker-N`).
    pub name: String,
    /// Threads in the group.
    pub threads: usize,
    /// Threads that did the group's work: all but one that only waited for the others (see
    /// [`JOINER_PARKED_SHARE`]). Work, imbalance and the busiest thread are over these.
    pub members: usize,
    /// The thread left out of `members` for waiting on the others, if one was: its name and
    /// tid, `main [4242]`.
    pub joiner: Option<String>,
    /// CPUs the members could run on at once: `min(members, CPUs)` (the members when the CPU
    /// count is unknown). The group's capacity is this many times the busiest member's work.
    pub capacity_cpus: usize,
    /// Of which exited during the recording.
    pub exited: usize,
    /// Time from the group's first event to its last.
    pub window_ns: u64,
    /// Running time (tasks and zones), summed.
    pub running_ns: u64,
    /// Lifetimes, summed.
    pub lifetime_ns: u64,
    /// The most running time of one thread.
    pub max_running_ns: u64,
    /// The most work of one thread: its running time, at its on-CPU share of runnable time
    /// when `work_on_cpu`.
    pub max_work_ns: u64,
    /// The mean work per member.
    pub mean_work_ns: f64,
    /// Whether work was counted at the threads' on-CPU share (OS figures over a long enough
    /// window), rather than as wall time.
    pub work_on_cpu: bool,
    /// Share of the group's capacity left unused: `1 - sum / (capacity_cpus × max)` over the
    /// members' work, at least 0 (0 = even; 0.5 = half of it lost waiting for one thread).
    /// With a CPU for each member this is the usual `1 - mean / max`.
    pub imbalance: f64,
    /// Median time between consecutive thread starts (the rate the group's threads were created).
    pub median_start_interval_ns: u64,
    /// Median work per thread: its running time, or its on-CPU time if it ran no span.
    pub median_work_ns: u64,
    /// Times the group's threads blocked (parks or voluntary switches).
    pub blocks: u64,
    /// Of those, the times that were not a lock wait already counted as one
    /// ([`ThreadStats::blocks_outside_lock_waits`]).
    pub blocks_outside_lock_waits: u64,
    /// The group's on-CPU time (threads with OS samples).
    pub on_cpu_ns: u64,
    /// The thread with the most work, and what it ran most (see [`Busiest`]).
    pub busiest: Option<Busiest>,
    /// Running time over lifetime.
    pub utilization: f64,
    /// Whether the group's threads are all spare threads ([`ThreadStats::spare`]): they run
    /// while workers are blocked and leave when the work runs out, so their load is uneven by
    /// design and imbalance is not judged on them.
    pub spare: bool,
}

/// What the busiest thread of a group ran most: which zone and which task, so a finding can
/// say *which* piece of work held the group up.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Busiest {
    /// The thread's name.
    pub thread: String,
    /// The zone with the most self time on it, and that time.
    pub zone: Option<(String, u64)>,
    /// The task (its name, else its spawn location) with the most time on it, and that time.
    pub task: Option<(String, u64)>,
}

/// The zone with the most self time and the labelled task with the most time in `walk`.
fn busiest(trace: &Trace, walk: &Walk) -> Busiest {
    let mut zones: BTreeMap<NameId, u64> = BTreeMap::new();
    let mut tasks: BTreeMap<NameId, u64> = BTreeMap::new();
    for s in &walk.spans {
        match (s.key, s.label) {
            (SpanKey::Zone(n), _) => *zones.entry(n).or_default() += s.self_ns,
            (SpanKey::Task(_), Some(l)) => *tasks.entry(l).or_default() += s.duration_ns,
            (SpanKey::Task(_), None) => {}
        }
    }
    let top = |m: BTreeMap<NameId, u64>| {
        m.into_iter()
            .max_by_key(|&(_, t)| t)
            .map(|(n, t)| (trace.name(n).to_owned(), t))
    };
    Busiest {
        thread: walk.stats.name.clone(),
        zone: top(zones),
        task: top(tasks),
    }
}

/// The thread of `ws` that only waited for the others, if one did (see [`JOINER_PARKED_SHARE`]).
fn joiner(ws: &[&Walk]) -> Option<usize> {
    if ws.len() < 2 {
        return None;
    }
    let first = (0..ws.len()).min_by_key(|&i| ws[i].stats.first_ns)?;
    let others = || ws.iter().enumerate().filter(move |&(i, _)| i != first);
    let from = others().map(|(_, w)| w.stats.first_ns).min()?;
    let to = others().map(|(_, w)| w.stats.last_ns).max()?;
    let others_running = others()
        .map(|(_, w)| w.stats.running_ns as f64)
        .sum::<f64>();
    let others_mean = others_running / (ws.len() - 1) as f64;
    let j = &ws[first].stats;
    let waited = j.worker.is_none()
        && j.first_ns < from
        && to > from
        && ws[first].parked_within(from, to) as f64 >= JOINER_PARKED_SHARE * (to - from) as f64
        && (j.running_ns as f64) < JOINER_PARKED_SHARE * others_mean;
    waited.then_some(first)
}

/// Groups the threads; `on_cpu` counts work at each thread's on-CPU share (see the module doc);
/// `cpus` is the CPUs the process could use (0: unknown).
pub(crate) fn groups(trace: &Trace, walks: &[Walk], on_cpu: bool, cpus: u32) -> Vec<GroupStats> {
    let mut by: BTreeMap<&str, Vec<&Walk>> = BTreeMap::new();
    for w in walks {
        by.entry(w.stats.group.as_str()).or_default().push(w);
    }
    by.into_iter()
        .map(|(name, ws)| {
            let ts: Vec<&ThreadStats> = ws.iter().map(|w| &w.stats).collect();
            let n = ts.len();
            let joiner = joiner(&ws);
            // The members: every thread but the one that waited for the others.
            let (mws, mts): (Vec<&Walk>, Vec<&ThreadStats>) = ws
                .iter()
                .zip(&ts)
                .enumerate()
                .filter(|&(i, _)| Some(i) != joiner)
                .map(|(_, (w, t))| (*w, *t))
                .unzip();
            let first = ts.iter().map(|t| t.first_ns).min().unwrap_or(0);
            let last = ts.iter().map(|t| t.last_ns).max().unwrap_or(0);
            let running: Vec<u64> = ts.iter().map(|t| t.running_ns).collect();
            let running_ns = saturating_sum(running.iter().copied());
            let max_running_ns = mts.iter().map(|t| t.running_ns).max().unwrap_or(0);
            let work_on_cpu = on_cpu && mts.iter().all(|t| t.os_sampled);
            let work: Vec<f64> = mts
                .iter()
                .map(|t| {
                    let runnable = t.on_cpu_ns.saturating_add(t.preempted_ns);
                    // No runnable time at all: a sleeping worker whose seat a guest used (its
                    // running time is the guest's, on another thread: `guests`); nothing says
                    // that work was preempted.
                    let share = if work_on_cpu && runnable > 0 {
                        ratio(t.on_cpu_ns as f64, runnable as f64)
                    } else {
                        1.0
                    };
                    t.running_ns as f64 * share
                })
                .collect();
            let max_work = work.iter().copied().fold(0.0, f64::max);
            let busiest_walk = work
                .iter()
                .zip(&mws)
                .filter(|(w, _)| **w == max_work && max_work > 0.0)
                .map(|(_, walk)| *walk)
                .next();
            let members = mts.len();
            let total_work = work.iter().sum::<f64>();
            let capacity_cpus = if cpus > 0 {
                members.min(cpus as usize)
            } else {
                members
            };
            let mut starts: Vec<u64> = ts.iter().map(|t| t.first_ns).collect();
            starts.sort_unstable();
            let intervals = starts.windows(2).map(|w| w[1] - w[0]).collect();
            let median_work = ts
                .iter()
                .map(|t| {
                    if t.tasks + t.zones > 0 {
                        t.running_ns
                    } else {
                        t.on_cpu_ns
                    }
                })
                .collect();
            let lifetime_ns = saturating_sum(ts.iter().map(|t| t.lifetime_ns));
            GroupStats {
                name: name.to_owned(),
                utilization: ratio(running_ns as f64, lifetime_ns as f64),
                threads: n,
                members,
                joiner: joiner.map(|i| format!("{} [{}]", ts[i].name, ts[i].tid)),
                capacity_cpus,
                exited: ts.iter().filter(|t| t.exited).count(),
                window_ns: last.saturating_sub(first),
                running_ns,
                lifetime_ns,
                max_running_ns,
                max_work_ns: max_work as u64,
                mean_work_ns: ratio(total_work, members as f64),
                work_on_cpu,
                imbalance: if max_work > 0.0 {
                    1.0 - ratio(total_work, capacity_cpus as f64 * max_work).min(1.0)
                } else {
                    0.0
                },
                median_start_interval_ns: median(intervals),
                median_work_ns: median(median_work),
                blocks: saturating_sum(ts.iter().map(|t| t.blocks())),
                blocks_outside_lock_waits: saturating_sum(
                    ts.iter().map(|t| t.blocks_outside_lock_waits()),
                ),
                on_cpu_ns: saturating_sum(ts.iter().filter(|t| t.os_sampled).map(|t| t.on_cpu_ns)),
                busiest: busiest_walk.map(|w| busiest(trace, w)),
                spare: ts.iter().all(|t| t.spare),
            }
        })
        .collect()
}

/// The self times of one zone name or task kind.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct SpanStats {
    /// `zone <name>` or `task <kind>`.
    pub name: String,
    /// Self times (duration minus nested zones and tasks).
    pub self_time: Summary,
    /// Total duration including nested spans.
    pub inclusive_ns: u64,
}

pub(crate) fn span_label(trace: &Trace, key: SpanKey) -> String {
    match key {
        SpanKey::Zone(n) => format!("zone {}", trace.name(n)),
        SpanKey::Task(k) => format!("task {k}"),
    }
}

/// Per zone name or task kind, most self time first.
pub(crate) fn spans(trace: &Trace, walks: &[Walk]) -> Vec<SpanStats> {
    let mut by: BTreeMap<String, (Vec<u64>, u64)> = BTreeMap::new();
    for w in walks {
        for s in &w.spans {
            let e = by.entry(span_label(trace, s.key)).or_default();
            e.0.push(s.self_ns);
            e.1 = e.1.saturating_add(s.duration_ns);
            // Named tasks also get a row of their own (`task spawn `flush``), a part of their
            // kind's row.
            if let (Some(l), true) = (s.label, s.named) {
                let label = format!("{} `{}`", span_label(trace, s.key), trace.name(l));
                let e = by.entry(label).or_default();
                e.0.push(s.self_ns);
                e.1 = e.1.saturating_add(s.duration_ns);
            }
        }
    }
    let mut out: Vec<SpanStats> = by
        .into_iter()
        .map(|(name, (selfs, inclusive_ns))| SpanStats {
            name,
            self_time: Summary::of(selfs),
            inclusive_ns,
        })
        .collect();
    out.sort_by_key(|s| std::cmp::Reverse(s.self_time.total_ns));
    out
}

/// A task far longer than the others of its kind while other workers sat idle: the longest of
/// its kind that crossed the `LONG_TASK_*` thresholds.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct LongTask {
    /// `task <kind>`.
    pub name: String,
    /// The thread that ran it.
    pub thread: String,
    /// Its time minus the tasks nested in it (the zones inside it are its own work: a
    /// `tracing` span in a task is the task's work).
    pub self_ns: u64,
    /// The median of that time over its kind.
    pub median_ns: u64,
    /// Tasks of its kind.
    pub tasks: u64,
    /// Share of the other workers' time, while it ran, that they spent idle.
    pub others_idle: f64,
    /// Which task: its name (`spawn_named`), else its spawn location, if recorded.
    pub task: Option<String>,
    /// Whether `task` is the task's name (else its location).
    pub named: bool,
    /// The zone with the most self time inside it (e.g. a `tracing` span), if any.
    pub zone: Option<String>,
}

pub(crate) fn long_tasks(trace: &Trace, walks: &[Walk]) -> Vec<LongTask> {
    let mut by: BTreeMap<String, Vec<(usize, &super::states::Span)>> = BTreeMap::new();
    for (t, w) in walks.iter().enumerate() {
        for s in w.spans.iter().filter(|s| matches!(s.key, SpanKey::Task(_))) {
            by.entry(span_label(trace, s.key)).or_default().push((t, s));
        }
    }
    // The pool's workers, whose idleness says whether a long task held the pool up. A spare
    // thread is not one of them: it exists only while workers are blocked, and outside its
    // life it would count as busy.
    let workers: Vec<usize> = (0..walks.len())
        .filter(|&i| walks[i].stats.worker.is_some() && !walks[i].stats.spare)
        .collect();
    let mut out = Vec::new();
    for (name, spans) in by {
        let median_ns = median(spans.iter().map(|(_, s)| s.work_ns).collect());
        let floor = LONG_TASK_MIN_NS.max((LONG_TASK_OVER_MEDIAN * median_ns as f64) as u64);
        if (spans.len() as u64) < LONG_TASK_MIN_TASKS {
            continue;
        }
        let mut best: Option<LongTask> = None;
        for &(t, s) in spans.iter().filter(|(_, s)| s.work_ns >= floor) {
            let end = s.begin_ns.saturating_add(s.duration_ns);
            let others: Vec<usize> = workers.iter().copied().filter(|&i| i != t).collect();
            let idle: u64 = others
                .iter()
                .map(|&i| walks[i].idle_within(s.begin_ns, end))
                .sum();
            let others_idle = ratio(idle as f64, (s.duration_ns * others.len() as u64) as f64);
            let longer = best.as_ref().map_or(true, |b| s.work_ns > b.self_ns);
            if others_idle >= LONG_TASK_IDLE_SHARE && longer {
                best = Some(LongTask {
                    name: name.clone(),
                    thread: walks[t].stats.name.clone(),
                    self_ns: s.work_ns,
                    median_ns,
                    tasks: spans.len() as u64,
                    others_idle,
                    task: s.label.map(|l| trace.name(l).to_owned()),
                    named: s.named,
                    zone: s.top_zone.map(|z| trace.name(z).to_owned()),
                });
            }
        }
        out.extend(best);
    }
    out
}

/// The figures behind a group's imbalance in words: its members, who was left out and why,
/// the busiest member's work and the mean, and how work and capacity were counted. The finding
/// and the second question's answer both say it.
pub(crate) fn imbalance_basis(g: &GroupStats) -> String {
    let joiner = g.joiner.as_ref().map_or(String::new(), |j| {
        format!(" (not counting `{j}`, which started them and waited for them)")
    });
    let capacity = if g.capacity_cpus < g.members {
        format!(
            "; with {} CPUs for {} threads, the capacity is {} busiest threads' work",
            g.capacity_cpus, g.members, g.capacity_cpus
        )
    } else {
        String::new()
    };
    let on_cpu = if g.work_on_cpu {
        " (running time at each thread's on-CPU share)"
    } else {
        ""
    };
    format!(
        "of the {} threads of `{}`{joiner}, the busiest worked {} and the mean {}{on_cpu}{capacity}",
        g.members,
        g.name,
        fmt_ns(g.max_work_ns),
        fmt_ns(g.mean_work_ns as u64),
    )
}
