//! `elastic` (*Multithreading Isn't Free*: "a flexible thread pool that scales up and down depending on the
//! workload", for battery life): bursts of small tasks separated by idle gaps, on a *fixed*
//! pool (workers live as long as the pool) and an *elastic* one
//! ([`threadlab::Builder::keep_alive`] shorter than the gaps: idle workers' threads exit and
//! the next burst starts them again).
//!
//! Measured per variant: the threads alive over time (sampled every millisecond from the
//! pool's own metric, [`threadlab::Metrics::alive_threads`], and checked against
//! `/proc/self/task` at the end of each gap), the most threads alive in the later half of the
//! gaps (the elastic pool's should be 0), the process's CPU time over the whole run, the
//! threads started, and the latency of a burst's first task after a gap: from the `spawn`
//! call to the task's first instruction, which for the elastic pool includes starting a
//! thread.

use crate::fmt::fmt_secs;
use crate::lab::report::{svg::Chart, table::Table};
use crate::lab::stats::median;
use crate::lab::{Ctx, ExpResult, Experiment, Outcome};
use crate::measure::process_cpu_time;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};
use threadlab::Pool;

/// The experiment.
pub struct Elastic;

const VARIANTS: [&str; 2] = ["fixed", "elastic"];

/// Sizes: bursts, tasks per burst, the idle gap, the elastic pool's keep-alive.
struct Plan {
    bursts: usize,
    tasks: usize,
    gap: Duration,
    keep_alive: Duration,
}

/// One variant's run.
struct Run {
    /// (seconds since the start, threads alive).
    alive: Vec<(f64, f64)>,
    /// Most threads alive in the later half of any gap (the pool's metric).
    alive_in_gap: usize,
    /// Most of the pool's threads listed in `/proc/self/task` at the end of any gap (Linux).
    os_threads_in_gap: Option<usize>,
    /// First task's latency after each gap, seconds.
    first_latency: Vec<f64>,
    /// Each burst's wall time, seconds.
    burst: Vec<f64>,
    cpu: f64,
    starts: u64,
    tasks_run: u64,
}

/// Some work for one task: about 20 µs of arithmetic.
fn work() -> u64 {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..4_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    x
}

/// The pool's worker threads listed by the OS now (their ids from the pool's metrics).
fn os_threads(pool: &Pool) -> Option<usize> {
    let tids: Vec<u64> = pool
        .metrics()
        .workers
        .iter()
        .filter(|w| w.alive)
        .map(|w| w.os_tid)
        .collect();
    let dir = std::fs::read_dir("/proc/self/task").ok()?;
    Some(
        dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u64>().ok())
            .filter(|t| tids.contains(t))
            .count(),
    )
}

fn run(pool: Pool, plan: &Plan) -> Run {
    let pool = Arc::new(pool);
    let t0 = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (pool, stop) = (Arc::clone(&pool), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut samples = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let n = pool.metrics().alive_threads();
                samples.push((t0.elapsed().as_secs_f64(), n as f64));
                std::thread::sleep(Duration::from_millis(1));
            }
            samples
        })
    };
    let cpu0 = process_cpu_time();
    let mut first_latency = Vec::new();
    let mut burst = Vec::new();
    let mut gaps = Vec::new();
    let mut os_in_gap: Option<usize> = None;
    for b in 0..plan.bursts {
        let start = Instant::now();
        let (tx, rx) = mpsc::channel::<Instant>();
        let (done_tx, done_rx) = mpsc::channel::<()>();
        for i in 0..plan.tasks {
            let (tx, done_tx) = (tx.clone(), done_tx.clone());
            let submitted = Instant::now();
            pool.spawn(move || {
                if i == 0 {
                    let _ = tx.send(submitted);
                }
                std::hint::black_box(work());
                let _ = done_tx.send(());
            });
            if i == 0 {
                // The first task's latency alone, before the rest of the burst competes.
                let submitted = rx.recv().expect("the first task ran");
                if b > 0 {
                    first_latency.push(submitted.elapsed().as_secs_f64());
                }
            }
        }
        drop(done_tx);
        for _ in 0..plan.tasks {
            done_rx.recv().expect("every task ran");
        }
        burst.push(start.elapsed().as_secs_f64());
        let gap_start = t0.elapsed().as_secs_f64();
        std::thread::sleep(plan.gap);
        gaps.push((
            gap_start + plan.gap.as_secs_f64() / 2.0,
            t0.elapsed().as_secs_f64(),
        ));
        if let Some(n) = os_threads(&pool) {
            os_in_gap = Some(os_in_gap.unwrap_or(0).max(n));
        }
    }
    let cpu = (process_cpu_time() - cpu0).as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let alive = sampler.join().expect("sampler");
    let alive_in_gap = alive
        .iter()
        .filter(|(t, _)| gaps.iter().any(|&(a, b)| *t >= a && *t <= b))
        .map(|&(_, n)| n as usize)
        .max()
        .unwrap_or(0);
    let m = pool.metrics();
    let starts = m.workers.iter().map(|w| w.starts).sum();
    let pool = Arc::into_inner(pool).expect("the sampler has finished");
    let report = pool.shutdown();
    Run {
        alive,
        alive_in_gap,
        os_threads_in_gap: os_in_gap,
        first_latency,
        burst,
        cpu,
        starts,
        tasks_run: report.tasks_run,
    }
}

/// The samples as a step line: a point at each change (the old and the new count at the same
/// time), every 10 ms and at both ends, instead of one marker per millisecond.
fn steps(samples: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut points: Vec<(f64, f64)> = Vec::new();
    let mut next_regular = 0.0;
    for (i, &(t, n)) in samples.iter().enumerate() {
        match points.last() {
            Some(&(_, prev)) if prev != n => {
                points.push((t, prev));
                points.push((t, n));
            }
            _ if points.is_empty() || t >= next_regular || i + 1 == samples.len() => {
                points.push((t, n));
                next_regular = t + 0.010;
            }
            _ => {}
        }
    }
    points
}

impl Experiment for Elastic {
    fn name(&self) -> &'static str {
        "elastic"
    }

    fn description(&self) -> &'static str {
        "Bursts separated by idle gaps on a fixed and an elastic pool (keep-alive shorter than the gaps): threads alive over time, CPU, the first task's latency after a gap"
    }

    fn run(&self, ctx: &Ctx) -> ExpResult {
        let plan = Plan {
            bursts: ctx.size.pick(3, 8, 20),
            tasks: ctx.size.pick(50, 400, 2_000),
            gap: Duration::from_millis(ctx.size.pick(60, 150, 1_000)),
            keep_alive: Duration::from_millis(ctx.size.pick(15, 40, 200)),
        };
        let threads = *ctx.threads.iter().max().unwrap_or(&2);
        let build = |elastic: bool| {
            let b = Pool::builder().threads(threads);
            let b = if elastic {
                b.keep_alive(plan.keep_alive)
            } else {
                b
            };
            b.build().map_err(|e| e.to_string())
        };
        let mut runs = Vec::new();
        for (v, name) in VARIANTS.iter().enumerate() {
            ctx.step(format!("elastic: {name} pool, {} bursts", plan.bursts));
            runs.push(run(build(v == 1)?, &plan));
        }
        let config = format!(
            "{} bursts of {} tasks, gaps {} ms, keep-alive {} ms",
            plan.bursts,
            plan.tasks,
            plan.gap.as_millis(),
            plan.keep_alive.as_millis()
        );
        let mut rows = Vec::new();
        let mut table = Table::new(
            format!("elastic: {config}, {threads} workers"),
            &[
                "variant",
                "threads alive in gaps (max)",
                "in /proc at gap ends (max)",
                "threads started",
                "first task after a gap (median)",
                "burst (median)",
                "process CPU",
            ],
        )
        .text_columns(1);
        let mut chart = Chart::lines(
            "elastic_threads_alive",
            &format!(
                "elastic: threads alive (keep-alive {} ms, gaps {} ms)",
                plan.keep_alive.as_millis(),
                plan.gap.as_millis()
            ),
            "seconds since the start",
            "threads alive",
        );
        let mut lat = [0.0; 2];
        for (v, r) in runs.iter_mut().enumerate() {
            let expected = (plan.bursts * plan.tasks) as u64;
            if r.tasks_run != expected {
                return Err(format!(
                    "{}: {} tasks ran, {expected} were spawned",
                    VARIANTS[v], r.tasks_run
                ));
            }
            let first = median(&mut r.first_latency.clone());
            let burst = median(&mut r.burst.clone());
            lat[v] = first;
            for (metric, value, unit) in [
                ("threads_alive_in_gap", r.alive_in_gap as f64, "threads"),
                ("thread_starts", r.starts as f64, "threads"),
                ("first_task_latency_us", first * 1e6, "us"),
                ("burst_ms", burst * 1e3, "ms"),
                ("cpu_ms", r.cpu * 1e3, "ms"),
            ] {
                rows.push(ctx.row(VARIANTS[v], &config, threads, metric, value, unit));
            }
            table.row(vec![
                VARIANTS[v].into(),
                r.alive_in_gap.to_string(),
                r.os_threads_in_gap
                    .map_or_else(|| "–".into(), |n| n.to_string()),
                r.starts.to_string(),
                fmt_secs(first),
                fmt_secs(burst),
                fmt_secs(r.cpu),
            ]);
            chart.add(VARIANTS[v], steps(&r.alive));
        }
        let finding = format!(
            "With a {} ms keep-alive the elastic pool had {} worker threads alive in the later half of its {} ms gaps (the fixed pool {}), started {} threads over {} bursts, and its first task after a gap started {} after its spawn against {} on the fixed pool ({:.1}×); process CPU {} elastic vs {} fixed.",
            plan.keep_alive.as_millis(),
            runs[1].alive_in_gap,
            plan.gap.as_millis(),
            runs[0].alive_in_gap,
            runs[1].starts,
            plan.bursts,
            fmt_secs(lat[1]),
            fmt_secs(lat[0]),
            lat[1] / lat[0],
            fmt_secs(runs[1].cpu),
            fmt_secs(runs[0].cpu),
        );
        Ok(Outcome {
            finding,
            notes: vec![
                "The first task's latency is timed from the spawn call to the task's first instruction, alone (the rest of the burst is spawned after it ran); the elastic pool's includes starting a thread. Threads alive are the pool's own metric (`Metrics::alive_threads`), sampled every millisecond; the /proc column counts the pool's threads the OS still lists at the end of each gap.".into(),
            ],
            rows,
            tables: vec![table],
            charts: vec![chart],
        })
    }
}
