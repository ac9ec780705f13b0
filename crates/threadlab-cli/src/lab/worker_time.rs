//! Where a pool's workers spend their CPU in a recorded run: inside tasks, between tasks, or on
//! the way into and out of parks (the rendezvous experiment's park/wake share). Uses only the
//! recorder's public trace model.

use threadlab::trace::{EventKind, TaskKind, Trace};

/// Where the workers' CPU time went in a recorded run, summed over the worker tracks.
///
/// Each worker's timeline is cut at its events: time between `ParkBegin` and `ParkEnd` is
/// parked (off CPU, not counted); time inside a task span is *task*; time inside a spin span,
/// from a `ParkEnd` to the next task, and from the end of a task to a park or spin that follows
/// without another task in between is *park/wake* (the way into a park and back out of it); the
/// rest of the awake time (taking the next task from a queue) is *scheduling*.
///
/// Wall time is not CPU time on a busy machine: a thread that the OS preempts records nothing
/// while it waits for a CPU, and that wait would land in whatever it was doing. So the time the
/// OS says the thread spent runnable but not running (the `OsSched` samples' `runqueue_ns`,
/// from `/proc/thread-self/schedstat`, at least one per millisecond of activity) is taken out
/// between each pair of samples, from the longest intervals first (a preemption is one long
/// silence, not a spread of short ones).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Breakdown {
    /// Awake (not parked, not preempted) time, ns.
    pub awake_ns: f64,
    /// Inside task spans, ns.
    pub task_ns: f64,
    /// Spinning, and between a task and a park or a park and a task, ns.
    pub park_wake_ns: f64,
    /// The rest: between two tasks with no park in between, ns.
    pub sched_ns: f64,
    /// Preemption taken out (runnable, waiting for a CPU), ns.
    pub preempted_ns: f64,
    /// Future polls (task spans of kind `Future`).
    pub polls: u64,
    /// Parks.
    pub parks: u64,
    /// Wake-ups sent (`Wake` events, on any thread).
    pub wakes: u64,
}

/// What a stretch of a worker's timeline was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Parked,
    Task,
    ParkWake,
    Sched,
    /// Awake between tasks; becomes `Sched` or `ParkWake` by what comes next.
    Pending,
}

impl Breakdown {
    /// Park/wake time as a share of the awake time (0–1; 0 when nothing was awake).
    pub fn park_wake_share(&self) -> f64 {
        if self.awake_ns > 0.0 {
            self.park_wake_ns / self.awake_ns
        } else {
            0.0
        }
    }

    /// Computes the breakdown of `trace`.
    pub fn of(trace: &Trace) -> Breakdown {
        let mut b = Breakdown::default();
        for track in trace.threads() {
            b.wakes += track
                .events()
                .iter()
                .filter(|e| matches!(e.kind, EventKind::Wake { .. }))
                .count() as u64;
            if track.worker().is_some() {
                b.add_worker(track.events(), trace.duration_ns());
            }
        }
        b
    }

    fn add_worker(&mut self, events: threadlab::trace::Events<'_>, end: u64) {
        // A worker that was parked when the recording started shows a ParkEnd first, or no
        // task or spin at all.
        let first_park = events.iter().find_map(|e| match e.kind {
            EventKind::ParkBegin => Some(false),
            EventKind::ParkEnd => Some(true),
            _ => None,
        });
        let active = events
            .iter()
            .any(|e| matches!(e.kind, EventKind::TaskBegin { .. } | EventKind::SpinBegin));
        let mut parked = first_park.unwrap_or(!active);
        let mut depth = 0u32;
        let mut spinning = false;
        // After a ParkEnd until the next task: the way back from a park.
        let mut waking = false;
        // Intervals (start, end, class); `pending_from` indexes the unresolved ones.
        let mut intervals: Vec<(u64, u64, Class)> = Vec::with_capacity(events.len() + 1);
        let mut pending_from = 0usize;
        let resolve = |intervals: &mut Vec<(u64, u64, Class)>, from: usize, to: Class| {
            for iv in &mut intervals[from..] {
                if iv.2 == Class::Pending {
                    iv.2 = to;
                }
            }
        };
        let mut samples: Vec<(u64, u64)> = Vec::new();
        let mut last = 0u64;
        let sentinel = threadlab::trace::Event {
            ts_ns: end,
            kind: EventKind::InjectorPush,
        };
        for e in events.iter().chain(std::iter::once(sentinel)) {
            let t = e.ts_ns.max(last);
            let class = if parked {
                Class::Parked
            } else if depth > 0 {
                Class::Task
            } else if spinning || waking {
                Class::ParkWake
            } else {
                Class::Pending
            };
            if t > last {
                intervals.push((last, t, class));
            }
            last = t;
            match e.kind {
                EventKind::TaskBegin { kind, .. } => {
                    if depth == 0 {
                        resolve(&mut intervals, pending_from, Class::Sched);
                        pending_from = intervals.len();
                        waking = false;
                    }
                    depth += 1;
                    if kind == TaskKind::Future {
                        self.polls += 1;
                    }
                }
                EventKind::TaskEnd => depth = depth.saturating_sub(1),
                EventKind::SpinBegin | EventKind::ParkBegin => {
                    resolve(&mut intervals, pending_from, Class::ParkWake);
                    pending_from = intervals.len();
                    if e.kind == EventKind::SpinBegin {
                        spinning = true;
                    } else {
                        parked = true;
                        self.parks += 1;
                    }
                }
                EventKind::SpinEnd => spinning = false,
                EventKind::ParkEnd => {
                    parked = false;
                    waking = true;
                }
                EventKind::OsSched { runqueue_ns, .. } => samples.push((t, runqueue_ns)),
                _ => {}
            }
        }
        resolve(&mut intervals, pending_from, Class::Sched);
        // Take each pair of samples' preemption out of the longest awake intervals between them.
        let mut cut = vec![0u64; intervals.len()];
        for pair in samples.windows(2) {
            let ((t0, rq0), (t1, rq1)) = (pair[0], pair[1]);
            let mut left = rq1.saturating_sub(rq0);
            // Intervals are in time order: those inside [t0, t1] form one range.
            let lo = intervals.partition_point(|iv| iv.0 < t0);
            let hi = intervals.partition_point(|iv| iv.1 <= t1).max(lo);
            let mut idx: Vec<usize> = (lo..hi)
                .filter(|&i| intervals[i].2 != Class::Parked)
                .collect();
            idx.sort_by_key(|&i| std::cmp::Reverse(intervals[i].1 - intervals[i].0));
            for i in idx {
                if left == 0 {
                    break;
                }
                let take = left.min(intervals[i].1 - intervals[i].0);
                cut[i] = take;
                left -= take;
            }
        }
        for (i, &(s, e, class)) in intervals.iter().enumerate() {
            let dt = (e - s - cut[i]) as f64;
            self.preempted_ns += cut[i] as f64;
            match class {
                Class::Parked => continue,
                Class::Task => self.task_ns += dt,
                Class::ParkWake => self.park_wake_ns += dt,
                Class::Sched | Class::Pending => self.sched_ns += dt,
            }
            self.awake_ns += dt;
        }
    }
}
