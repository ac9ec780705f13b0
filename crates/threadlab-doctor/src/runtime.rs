//! Figures that link threads: wake-up latency (a `Wake` of worker *w* to the end of *w*'s park
//! it ended), spawn-to-first-run latency (a `Spawn` to the `TaskBegin` with the same flow), and
//! the pool-wide rates (steals and failed steals per second, parks and wake-ups per task, the
//! share of the workers' CPU spent outside tasks); and the process's view from the OS
//! (runnable threads against CPUs, preemption).

use std::collections::HashMap;

use super::states::Walk;
use super::stats::{ratio, saturating_sum, Summary};
use threadlab_trace::{EventKind, Trace};

/// The scheduler's figures over all pool workers (zeros when the trace has none).
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct RuntimeStats {
    /// Threads that are pool workers. Spare threads are not counted (see `spare_threads`):
    /// this is what the pool's parallelism is bounded by (a pool of 2 whose spare thread ran
    /// while both workers were blocked in the kernel still ran at most 2 seats' work at once
    /// that was not waiting), and what `compare` lines up as the pool's size.
    pub workers: usize,
    /// Spare threads: threads the pool started to stand in for workers blocked in the kernel
    /// while work waited (`threadlab_trace::SPARE_ZONE` on their tracks).
    pub spare_threads: usize,
    /// Task spans, on all threads.
    pub tasks: u64,
    /// Successful steals.
    pub steals: u64,
    /// Steal attempts that found nothing.
    pub failed_steals: u64,
    /// Successful steals per second of recording.
    pub steals_per_sec: f64,
    /// Failed steal attempts per second of recording.
    pub failed_steals_per_sec: f64,
    /// Parks, on all threads.
    pub parks: u64,
    /// Parks per second of recording.
    pub parks_per_sec: f64,
    /// Wake-ups sent.
    pub wakes: u64,
    /// Parks per task run (0 without tasks).
    pub parks_per_task: f64,
    /// Wake-ups per task run.
    pub wakes_per_task: f64,
    /// Share of the workers' CPU time spent outside tasks (searching, spinning, parking and
    /// being woken), estimated: a worker's time in tasks is counted at its on-CPU share of
    /// runnable time (`schedstat` says how long it was preempted, not when).
    pub cpu_outside_tasks: f64,
    /// From a wake-up to the woken worker running (only wake-ups of a parked worker).
    pub wake_latency: Summary,
    /// From a spawn to the task's first run.
    pub spawn_to_run: Summary,
}

/// The process's figures from the OS samples of its recorded threads.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct OsStats {
    /// CPUs the process could use (from the trace; 0 if unknown).
    pub cpus: u32,
    /// Threads with OS samples.
    pub sampled_threads: usize,
    /// Time during which at least one sampled thread was alive.
    pub active_ns: u64,
    /// Average runnable threads over `active_ns`: (on-CPU + run-queue time) / active time.
    pub runnable_avg: f64,
    /// Average CPUs used over `active_ns`: on-CPU time / active time.
    pub cpus_used_avg: f64,
    /// Share of the runnable time spent waiting for a CPU.
    pub preempted_share: f64,
    /// Total time preempted.
    pub preempted_ns: u64,
    /// Involuntary context switches per second of active time.
    pub involuntary_per_sec: f64,
    /// Voluntary context switches (blocking) per second of active time.
    pub voluntary_per_sec: f64,
}

impl RuntimeStats {
    /// Whether the trace holds a pool: workers, spare threads or tasks. A program observed from
    /// outside has none, and its report shows no pool figures.
    ///
    /// ```
    /// use threadlab_doctor::Diagnose;
    /// let d = threadlab_trace::TraceBuilder::new().build().diagnose();
    /// assert!(!d.runtime.has_pool());
    /// ```
    pub fn has_pool(&self) -> bool {
        self.workers + self.spare_threads > 0 || self.tasks > 0
    }
}

pub(crate) fn runtime(trace: &Trace, walks: &[Walk]) -> RuntimeStats {
    let secs = trace.duration_ns() as f64 / 1e9;
    let mut r = RuntimeStats::default();
    let (mut cpu, mut in_tasks) = (0u64, 0.0f64);
    for w in walks {
        let s = &w.stats;
        r.tasks += s.tasks;
        r.steals += s.steals;
        r.failed_steals += s.steal_attempts.saturating_sub(s.steals);
        r.parks += s.parks;
        r.wakes += s.wakes_sent;
        if s.spare {
            r.spare_threads += 1;
        } else if s.worker.is_some() {
            r.workers += 1;
        }
        // A spare thread's CPU is the pool's too: it counts in the share outside tasks (its
        // zone is not read as a task, so its searching counts as outside them).
        if s.worker.is_some() && s.os_sampled {
            // Preemption is assumed to hit every runnable state alike, so the task spans got
            // the thread's on-CPU share of their wall time.
            let on_cpu_share = ratio(
                s.on_cpu_ns as f64,
                s.on_cpu_ns.saturating_add(s.preempted_ns) as f64,
            );
            cpu = cpu.saturating_add(s.on_cpu_ns);
            in_tasks += s.running_ns as f64 * on_cpu_share;
        }
    }
    r.steals_per_sec = ratio(r.steals as f64, secs);
    r.failed_steals_per_sec = ratio(r.failed_steals as f64, secs);
    r.parks_per_sec = ratio(r.parks as f64, secs);
    r.parks_per_task = ratio(r.parks as f64, r.tasks as f64);
    r.wakes_per_task = ratio(r.wakes as f64, r.tasks as f64);
    r.cpu_outside_tasks = ratio((cpu as f64 - in_tasks).max(0.0), cpu as f64);
    r.wake_latency = Summary::of(wake_latencies(trace, walks));
    r.spawn_to_run = Summary::of(spawn_latencies(trace));
    r
}

/// For each `Wake { woken }` that found worker `woken` parked: the time to that park's end.
fn wake_latencies(trace: &Trace, walks: &[Walk]) -> Vec<u64> {
    let mut out = Vec::new();
    for t in trace.threads() {
        for e in t.events() {
            let EventKind::Wake { woken } = e.kind else {
                continue;
            };
            let Some(parks) = trace.worker_thread(woken).and_then(|i| walks.get(i)) else {
                continue;
            };
            let parks = &parks.parks;
            // The last park that began at or before the wake-up; it must still be going on.
            let i = parks.partition_point(|p| p.0 <= e.ts_ns);
            if let Some(&(_, end)) = i.checked_sub(1).and_then(|i| parks.get(i)) {
                if end >= e.ts_ns {
                    out.push(end - e.ts_ns);
                }
            }
        }
    }
    out
}

fn spawn_latencies(trace: &Trace) -> Vec<u64> {
    let mut spawned = HashMap::new();
    for t in trace.threads() {
        for e in t.events() {
            if let EventKind::Spawn { flow } = e.kind {
                spawned.insert(flow, e.ts_ns);
            }
        }
    }
    let mut out = Vec::new();
    for t in trace.threads() {
        for e in t.events() {
            if let EventKind::TaskBegin {
                flow: Some(flow), ..
            } = e.kind
            {
                if let Some(&at) = spawned.get(&flow) {
                    out.push(e.ts_ns.saturating_sub(at));
                }
            }
        }
    }
    out
}

pub(crate) fn os(trace: &Trace, walks: &[Walk]) -> OsStats {
    let sampled: Vec<_> = walks
        .iter()
        .map(|w| &w.stats)
        .filter(|s| s.os_sampled)
        .collect();
    // The union of the sampled threads' lifetimes (from their births, for threads born during
    // the recording: their OS figures count from there).
    let mut spans: Vec<(u64, u64)> = sampled.iter().map(|s| (s.os_from_ns, s.last_ns)).collect();
    spans.sort_unstable();
    let mut active_ns = 0u64;
    let mut cur: Option<(u64, u64)> = None;
    for (a, b) in spans {
        match cur {
            Some((ca, cb)) if a <= cb => cur = Some((ca, cb.max(b))),
            _ => {
                if let Some((ca, cb)) = cur {
                    active_ns = active_ns.saturating_add(cb - ca);
                }
                cur = Some((a, b));
            }
        }
    }
    if let Some((ca, cb)) = cur {
        active_ns = active_ns.saturating_add(cb - ca);
    }
    let on_cpu = saturating_sum(sampled.iter().map(|s| s.on_cpu_ns));
    let preempted = saturating_sum(sampled.iter().map(|s| s.preempted_ns));
    let runnable = on_cpu.saturating_add(preempted);
    let secs = active_ns as f64 / 1e9;
    OsStats {
        cpus: trace.cpus(),
        sampled_threads: sampled.len(),
        active_ns,
        runnable_avg: ratio(runnable as f64, active_ns as f64),
        cpus_used_avg: ratio(on_cpu as f64, active_ns as f64),
        preempted_share: ratio(preempted as f64, runnable as f64),
        preempted_ns: preempted,
        involuntary_per_sec: ratio(
            saturating_sum(sampled.iter().map(|s| s.involuntary_switches)) as f64,
            secs,
        ),
        voluntary_per_sec: ratio(
            saturating_sum(sampled.iter().map(|s| s.voluntary_switches)) as f64,
            secs,
        ),
    }
}
