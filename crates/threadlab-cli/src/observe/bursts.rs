//! Thread creation in bursts: a program that creates a thread per task does so while it has
//! tasks, and idles or does other work in between, so one average over the process's whole life
//! says little. A burst is a run of births less than [`GAP_NS`] apart, of [`MIN_BIRTHS`] or more;
//! for each, the figures the doctor gives a recording of the same work: how many threads, the
//! median interval between two births, each thread's median work (its time on a CPU), and the
//! runnable threads per CPU over the burst (from its first birth to its last plus the median
//! interval: every thread's time on a CPU and runnable-but-waiting within that window,
//! interpolated between its readings, over the window's length and the CPUs allowed), with the
//! most threads alive at once.
//!
//! Exact when the tracer saw every birth and death (`births.rs`); from the samples alone, births
//! are estimated and threads living between two samples are missing (the report says which),
//! and the runnable threads are counted at the ticks instead (`runnable_at_ticks`).

use super::sampler::{Observed, ThreadLog};
use super::syscall::State;

/// Two births further apart than this end a burst.
pub const GAP_NS: u64 = 10_000_000;
/// Fewer births than this are not a burst.
pub const MIN_BIRTHS: usize = 16;

/// One burst of thread creation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Burst {
    /// Its first birth, ns since the observation began.
    pub begin_ns: u64,
    /// Its last birth plus the median interval: the window while births were frequent (a
    /// thread that outlives the burst, e.g. a helper started among the others, counts only
    /// within it).
    pub end_ns: u64,
    /// Threads born in it.
    pub threads: usize,
    /// Median interval between two births, ns.
    pub median_interval_ns: u64,
    /// Median time on a CPU of the threads born in it, ns (up to their last reading for a
    /// thread whose death was not seen).
    pub median_work_ns: u64,
    /// Threads runnable (on a CPU or waiting for one) on average over the burst, per CPU.
    pub runnable_per_cpu: f64,
    /// The most threads alive at once during the burst (all of the process's threads).
    pub most_alive: usize,
}

fn median(mut v: Vec<u64>) -> u64 {
    if v.is_empty() {
        return 0;
    }
    v.sort_unstable();
    v[v.len() / 2]
}

/// A thread's work: its whole time on a CPU if its death was seen, else its last reading.
fn work(t: &ThreadLog) -> u64 {
    t.end
        .map(|e| e.0)
        .or_else(|| t.samples.last().map(|s| s.on_cpu_ns))
        .unwrap_or(0)
}

/// A thread's cumulative time on a CPU and runnable-but-waiting at `ts`, interpolated between
/// what is known: zero at its birth, each sample, its final reading at its death.
fn runnable_at(t: &ThreadLog, ts: u64) -> f64 {
    let mut pts: Vec<(u64, u64)> = Vec::with_capacity(t.samples.len() + 2);
    if let Some(b) = t.born_ns.filter(|&b| b > 0) {
        pts.push((b, 0));
    }
    pts.extend(
        t.samples
            .iter()
            .map(|s| (s.ts_ns, s.on_cpu_ns + s.runqueue_ns)),
    );
    if let (Some(d), Some(e)) = (t.exited_ns, t.end) {
        pts.push((d, e.0 + e.1));
    }
    let Some(&(t0, v0)) = pts.first() else {
        return 0.0;
    };
    if ts <= t0 {
        return if t.born_ns.is_some_and(|b| b > 0) {
            0.0
        } else {
            v0 as f64
        };
    }
    for w in pts.windows(2) {
        let ((a, va), (b, vb)) = (w[0], w[1]);
        if ts <= b {
            if b == a {
                return vb as f64;
            }
            let f = (ts - a) as f64 / (b - a) as f64;
            return va as f64 + f * (vb as f64 - va as f64);
        }
    }
    pts.last().map_or(0.0, |p| p.1 as f64)
}

/// The bursts of `o`, in time order.
pub fn bursts(o: &Observed) -> Vec<Burst> {
    // Threads present from the start (born at 0) were not created in a burst.
    let mut born: Vec<&ThreadLog> = o
        .threads
        .iter()
        .filter(|t| t.born_ns.is_some_and(|b| b > 0))
        .collect();
    born.sort_by_key(|t| t.born_ns);
    let mut groups: Vec<Vec<&ThreadLog>> = Vec::new();
    for t in born {
        let b = t.born_ns.unwrap_or(0);
        match groups.last_mut() {
            Some(g) if b - g.last().and_then(|l| l.born_ns).unwrap_or(0) < GAP_NS => g.push(t),
            _ => groups.push(vec![t]),
        }
    }
    // From the samples alone, the threads runnable at each tick (see `runnable_at_ticks`).
    let ticks = o.exact.is_none().then(|| runnable_at_ticks(o));
    groups
        .into_iter()
        .filter(|g| g.len() >= MIN_BIRTHS)
        .map(|g| {
            let births: Vec<u64> = g.iter().filter_map(|t| t.born_ns).collect();
            let begin_ns = births[0];
            let last_birth = births[births.len() - 1];
            let median_interval_ns = median(births.windows(2).map(|w| w[1] - w[0]).collect());
            let end_ns = last_birth + median_interval_ns;
            let len = end_ns.saturating_sub(begin_ns).max(1);
            // The mean count at the burst's ticks, from samples; else (or without a tick in it)
            // the threads' runnable time over the window.
            let at: Vec<u32> = ticks
                .iter()
                .flat_map(|t| t.range(begin_ns..=end_ns).map(|(_, &n)| n))
                .collect();
            let runnable = if at.is_empty() {
                o.threads
                    .iter()
                    .map(|t| (runnable_at(t, end_ns) - runnable_at(t, begin_ns)).max(0.0))
                    .sum::<f64>()
                    / len as f64
            } else {
                f64::from(at.iter().sum::<u32>()) / at.len() as f64
            };
            Burst {
                begin_ns,
                end_ns,
                threads: g.len(),
                median_interval_ns,
                median_work_ns: median(g.iter().map(|t| work(t)).collect()),
                runnable_per_cpu: runnable / f64::from(o.cpus.max(1)),
                most_alive: most_alive(o, begin_ns, end_ns),
            }
        })
        .collect()
}

/// How many of the process's threads were runnable (on a CPU or waiting for one) at each tick,
/// by the tick's time. From the samples alone, this is how a burst's runnable threads are
/// counted: a thread that lives between two ticks is missing from the samples, and so is its
/// time on a CPU, but every thread alive at a tick is read at that tick, so the mean of the
/// ticks' counts over a burst estimates the burst's mean number of runnable threads without
/// that loss (the ticks sample the count at times that do not depend on it). Interpolating the
/// seen threads' `schedstat` instead found 0.37 runnable threads per CPU in a burst of 3,024
/// threads where the program's own recording found 2.8.
fn runnable_at_ticks(o: &Observed) -> std::collections::BTreeMap<u64, u32> {
    let mut ticks = std::collections::BTreeMap::new();
    for t in &o.threads {
        for s in &t.samples {
            let n = ticks.entry(s.ts_ns).or_insert(0u32);
            if s.state == State::Runnable {
                *n += 1;
            }
        }
    }
    ticks
}

/// The most threads alive at once within `[a, b]`.
fn most_alive(o: &Observed, a: u64, b: u64) -> usize {
    let mut edges: Vec<(u64, i64)> = Vec::new();
    for t in &o.threads {
        let born = t.born_ns.unwrap_or(0);
        let died = t.exited_ns.unwrap_or(u64::MAX);
        if born > b || died < a {
            continue;
        }
        edges.push((born.max(a), 1));
        if died <= b {
            edges.push((died, -1));
        }
    }
    most_at_once(edges)
}

/// The most threads alive at once, given each birth as `(time, 1)` and each death as
/// `(time, -1)` (any order); at equal times a death counts before a birth.
pub(crate) fn most_at_once(mut edges: Vec<(u64, i64)>) -> usize {
    edges.sort_unstable();
    let (mut alive, mut most) = (0i64, 0i64);
    for (_, d) in edges {
        alive += d;
        most = most.max(alive);
    }
    most as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn life(tid: u64, born: u64, died: u64, on_cpu: u64, rq: u64) -> ThreadLog {
        ThreadLog {
            tid,
            name: "t".into(),
            born_ns: Some(born),
            exited_ns: Some(died),
            samples: Vec::new(),
            end: Some((on_cpu, rq)),
        }
    }

    /// The bursts of a process of `threads` on a machine of 2 CPUs.
    fn bursts_on_two_cpus(threads: Vec<ThreadLog>) -> Vec<Burst> {
        bursts(&Observed {
            threads,
            cpus: 2,
            ..Observed::default()
        })
    }

    #[test]
    fn two_bursts_split_by_a_gap_with_their_own_figures() {
        let mut threads = Vec::new();
        // 20 threads one every 40 µs, each alive 10 µs working 8 µs.
        for i in 0..20 {
            let b = 1_000_000 + i * 40_000;
            threads.push(life(100 + i, b, b + 10_000, 8_000, 0));
        }
        // 30 ms later, 16 threads one every 1 ms, each alive 3 ms, working 2 ms.
        for i in 0..16 {
            let b = 32_000_000 + i * 1_000_000;
            threads.push(life(200 + i, b, b + 3_000_000, 2_000_000, 0));
        }
        // A lone thread is no burst.
        threads.push(life(300, 90_000_000, 90_000_100, 50, 0));
        let b = bursts_on_two_cpus(threads);
        assert_eq!(b.len(), 2, "{b:?}");
        assert_eq!(
            (b[0].threads, b[0].median_interval_ns, b[0].median_work_ns),
            (20, 40_000, 8_000)
        );
        assert_eq!(b[0].most_alive, 1);
        assert_eq!((b[0].begin_ns, b[0].end_ns), (1_000_000, 1_800_000));
        // 20 × 8 µs over 800 µs on 2 CPUs.
        let want = 20.0 * 8_000.0 / 800_000.0 / 2.0;
        assert!((b[0].runnable_per_cpu - want).abs() < 1e-9, "{b:?}");
        assert_eq!(
            (b[1].threads, b[1].median_interval_ns, b[1].most_alive),
            (16, 1_000_000, 3)
        );
    }

    /// From the samples alone, a burst's runnable threads are the mean of the ticks' counts
    /// of runnable threads (all of the process's threads, seen or not at other ticks), not an
    /// interpolation of the few threads that lived across a tick.
    #[test]
    fn sampled_bursts_count_runnable_threads_at_the_ticks() {
        use crate::observe::sampler::Sample;
        let sample = |ts_ns: u64, state: State| Sample {
            ts_ns,
            state,
            cpu: 0,
            on_cpu_ns: 0,
            runqueue_ns: 0,
            slices: 0,
            switches: None,
        };
        // 20 threads born one every ms from 1 ms, each read at the ticks of 5, 10 and 15 ms
        // that fall within 4 ms after its birth: 4 threads at each tick, the oldest of them
        // asleep, the other 3 runnable. (Their `schedstat` figures are all zero: interpolating
        // them would find nobody runnable.)
        let mut threads = Vec::new();
        for i in 1..=20u64 {
            let born = i * 1_000_000;
            let samples: Vec<Sample> = [5_000_000u64, 10_000_000, 15_000_000]
                .into_iter()
                .filter(|&tick| born < tick && tick <= born + 4_000_000)
                .map(|tick| {
                    let oldest = born + 4_000_000 == tick;
                    sample(
                        tick,
                        if oldest {
                            State::Sleeping
                        } else {
                            State::Runnable
                        },
                    )
                })
                .collect();
            threads.push(ThreadLog {
                tid: 100 + i,
                name: "t".into(),
                born_ns: Some(born),
                exited_ns: None,
                samples,
                end: None,
            });
        }
        let b = bursts_on_two_cpus(threads);
        assert_eq!(b.len(), 1, "{b:?}");
        // 3 runnable at each tick, over 2 CPUs.
        let want = 3.0 / 2.0;
        assert!((b[0].runnable_per_cpu - want).abs() < 1e-9, "{b:?}");
    }
}
