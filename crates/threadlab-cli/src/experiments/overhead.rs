//! `overhead`: what the runtime itself costs, against Rayon, chili and Tokio — empty spawns in a
//! scope, the jobs workload (8 × 12,500), fib with a join at every level, a binary-tree sum with
//! a join at every node, and a trickle of one empty task every 200 µs (the runtime's CPU per task,
//! wake-up latency from submit to start) — and what the recorder costs (`recorder_cost`).

use super::chain::{self, Rayon, Spawn, Tokio};
use crate::baselines::dedicated_thread::DedicatedThread;
use crate::lab::{Ctx, ExpResult, Experiment, Outcome, Row};
use crate::measure::{
    fmt_ratio, fmt_secs, group_thousands, median_secs, percentile, process_cpu_time,
    thread_cpu_time,
};
use crate::report::{svg::Chart, svg::Series, table::Table};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The experiment.
pub struct Overhead;

const VARIANTS: [&str; 5] = ["serial", "threadlab", "rayon", "chili", "tokio"];

/// The median of `repeat` timed runs of `f` after one untimed warm-up run, for every variant
/// alike: the first run in a fresh process pays for page faults (a deque growing to a million
/// entries, arena and stack memory touched for the first time) and for waking workers whose
/// CPUs went idle, which is not what a benchmark of the runtime's steady state should show. (In
/// one quick lab run without it, threadlab's empty spawns measured 146 ns per task in this
/// table and 38 ns in the recorder's table a few seconds later.)
fn warm_median(repeat: usize, mut f: impl FnMut()) -> f64 {
    f();
    median_secs(repeat, f)
}

/// Plain recursive fib: the serial baseline.
fn fib(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        fib(n - 1) + fib(n - 2)
    }
}

fn fib_rayon(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = rayon::join(|| fib_rayon(n - 1), || fib_rayon(n - 2));
    a + b
}

fn fib_chili(s: &mut chili::Scope<'_>, n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = s.join(|s| fib_chili(s, n - 1), |s| fib_chili(s, n - 2));
    a + b
}

fn fib_tokio(n: u64) -> std::pin::Pin<Box<dyn std::future::Future<Output = u64> + Send>> {
    Box::pin(async move {
        if n < 2 {
            return n;
        }
        let a = tokio::spawn(fib_tokio(n - 1));
        let b = fib_tokio(n - 2).await;
        a.await.unwrap_or(0) + b
    })
}

/// Sum of the implicit binary tree rooted at `i` (children `2i+1`, `2i+2`) over `v`.
pub fn tree(v: &[u64], i: usize) -> u64 {
    if i >= v.len() {
        return 0;
    }
    v[i] + tree(v, 2 * i + 1) + tree(v, 2 * i + 2)
}

fn tree_rayon(v: &[u64], i: usize) -> u64 {
    if i >= v.len() {
        return 0;
    }
    let (a, b) = rayon::join(|| tree_rayon(v, 2 * i + 1), || tree_rayon(v, 2 * i + 2));
    v[i] + a + b
}

fn tree_chili(s: &mut chili::Scope<'_>, v: &[u64], i: usize) -> u64 {
    if i >= v.len() {
        return 0;
    }
    let (a, b) = s.join(
        |s| tree_chili(s, v, 2 * i + 1),
        |s| tree_chili(s, v, 2 * i + 2),
    );
    v[i] + a + b
}

fn tree_tokio(
    v: Arc<Vec<u64>>,
    i: usize,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = u64> + Send>> {
    Box::pin(async move {
        if i >= v.len() {
            return 0;
        }
        let a = tokio::spawn(tree_tokio(Arc::clone(&v), 2 * i + 1));
        let b = tree_tokio(Arc::clone(&v), 2 * i + 2).await;
        v[i] + a.await.unwrap_or(0) + b
    })
}

/// What a trickle measured.
pub struct Trickle {
    /// CPU seconds per task used by every thread but the submitting one: the runtime's own cost
    /// of waking, running and going back to sleep.
    pub runtime_cpu: f64,
    /// CPU seconds per task of the whole process, the submitter's sleeps and wake-ups included.
    pub process_cpu: f64,
    /// Nanoseconds from submit to start, one per task.
    pub latencies: Vec<f64>,
}

/// Trickle: one empty task every `gap`, `tasks` times.
pub fn trickle<S: Spawn>(q: &S, tasks: usize, gap: Duration) -> Result<Trickle, String> {
    let lat: Arc<Vec<AtomicU64>> = Arc::new((0..tasks).map(|_| AtomicU64::new(0)).collect());
    let done = Arc::new(AtomicUsize::new(0));
    let cpu0 = process_cpu_time();
    let mine0 = thread_cpu_time();
    let t0 = Instant::now();
    for k in 0..tasks {
        let due = t0 + gap * k as u32;
        let now = Instant::now();
        if due > now {
            std::thread::sleep(due - now);
        }
        let (lat, done) = (Arc::clone(&lat), Arc::clone(&done));
        let submitted = Instant::now();
        q.spawn(Box::new(move || {
            // Relaxed: the value is read after `done` is seen complete (Release/Acquire below).
            lat[k].store(submitted.elapsed().as_nanos() as u64, Ordering::Relaxed);
            // Release pairs with the Acquire load in the wait loop.
            done.fetch_add(1, Ordering::Release);
        }))?;
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    // Acquire pairs with the tasks' Release increments.
    while done.load(Ordering::Acquire) < tasks {
        if Instant::now() > deadline {
            return Err("trickle: tasks did not all run within 60 s".into());
        }
        std::thread::sleep(Duration::from_micros(100));
    }
    let process = (process_cpu_time() - cpu0).as_secs_f64();
    let mine = (thread_cpu_time() - mine0).as_secs_f64();
    Ok(Trickle {
        runtime_cpu: (process - mine).max(0.0) / tasks as f64,
        process_cpu: process / tasks as f64,
        latencies: lat
            .iter()
            .map(|a| a.load(Ordering::Relaxed) as f64)
            .collect(),
    })
}

impl Experiment for Overhead {
    fn name(&self) -> &'static str {
        "overhead"
    }

    fn description(&self) -> &'static str {
        "The runtime's own costs — empty spawns, self-requeueing jobs, fib and tree-sum joins, \
         and a trickle of tasks (CPU per task, wake-up latency) — for threadlab, Rayon, chili and \
         Tokio."
    }

    fn run(&self, ctx: &Ctx) -> ExpResult {
        let spawns: usize = ctx.size.pick(10_000, 1_000_000, 1_000_000);
        let fib_n: u64 = ctx.size.pick(20, 32, 32);
        let tree_log: u32 = ctx.size.pick(12, 22, 24);
        let trickle_tasks: usize = ctx.size.pick(50, 2_000, 2_000);
        let per_queue: u64 = ctx.size.pick(250, 12_500, 12_500);
        let values: Vec<u64> = (0..1u64 << tree_log).collect();
        let expect_tree: u64 = values.iter().sum();
        let expect_fib = fib(fib_n);
        let mut rows = Vec::new();
        let mut tables = Vec::new();
        let mut charts = Vec::new();
        let mut findings = Vec::new();
        let mut recorder_finding = String::new();
        for &threads in &ctx.threads {
            let tl = crate::tl::shared_pool(threads)?;
            let ry = chain::rayon_pool(threads)?;
            let ch = chain::chili_pool(threads);
            let rt = chain::tokio_runtime(threads)?;
            let benches = [
                format!(
                    "spawn {} empty tasks in a scope",
                    group_thousands(spawns as u64)
                ),
                format!("jobs 8 × {}", group_thousands(per_queue)),
                format!("fib({fib_n}), join at every level"),
                format!("tree sum of 2^{tree_log} nodes, join at every node"),
            ];
            // secs[bench][variant]; NaN where a variant has no such operation.
            let mut secs = vec![[f64::NAN; 5]; benches.len()];
            let mut wrong = None;
            let mut check = |what: &str, got: u64, want: u64| {
                if got != want && wrong.is_none() {
                    wrong = Some(format!("{what} computed {got}, expected {want}"));
                }
            };
            let r = ctx.repeat;
            let timeout = Duration::from_secs(120);
            ctx.step(format!("overhead: empty spawns, {threads} threads"));
            secs[0][1] = warm_median(r, || crate::tl::spawn_empty(&tl, spawns));
            secs[0][2] = warm_median(r, || {
                ry.scope(|s| (0..spawns).for_each(|_| s.spawn(|_| {})))
            });
            secs[0][4] = warm_median(r, || {
                rt.block_on(async {
                    let hs: Vec<_> = (0..spawns).map(|_| tokio::spawn(async {})).collect();
                    for h in hs {
                        let _ = h.await;
                    }
                })
            });
            ctx.step(format!("overhead: jobs, {threads} threads"));
            secs[1][0] = warm_median(r, || {
                chain::run_one_thread(8, per_queue);
            });
            let mut job_err = None;
            let mut jobs = |q: &dyn Fn() -> Result<f64, String>| {
                // One untimed warm-up run, as in `warm_median`.
                let _ = q();
                let mut xs: Vec<f64> = (0..r)
                    .map(|_| {
                        q().unwrap_or_else(|e| {
                            job_err = Some(e);
                            f64::NAN
                        })
                    })
                    .collect();
                crate::measure::median(&mut xs)
            };
            secs[1][1] =
                jobs(&|| chain::run(&vec![crate::tl::global_queue(&tl); 8], per_queue, timeout));
            secs[1][2] = jobs(&|| chain::run(&vec![Rayon(ry.clone()); 8], per_queue, timeout));
            secs[1][4] =
                jobs(&|| chain::run(&vec![Tokio(rt.handle().clone()); 8], per_queue, timeout));
            if let Some(e) = job_err {
                return Err(e);
            }
            ctx.step(format!("overhead: fib({fib_n}), {threads} threads"));
            secs[2][0] = warm_median(r, || {
                check("serial fib", fib(std::hint::black_box(fib_n)), expect_fib)
            });
            secs[2][1] = warm_median(r, || {
                check("threadlab fib", crate::tl::fib(&tl, fib_n), expect_fib)
            });
            secs[2][2] = warm_median(r, || {
                check("rayon fib", ry.install(|| fib_rayon(fib_n)), expect_fib)
            });
            secs[2][3] = warm_median(r, || {
                check("chili fib", fib_chili(&mut ch.scope(), fib_n), expect_fib)
            });
            secs[2][4] = warm_median(r, || {
                check("tokio fib", rt.block_on(fib_tokio(fib_n)), expect_fib)
            });
            ctx.step(format!(
                "overhead: tree sum 2^{tree_log}, {threads} threads"
            ));
            let shared = Arc::new(values.clone());
            secs[3][0] = warm_median(r, || {
                check(
                    "serial tree",
                    tree(std::hint::black_box(&values), 0),
                    expect_tree,
                )
            });
            secs[3][1] = warm_median(r, || {
                check(
                    "threadlab tree",
                    crate::tl::tree_sum(&tl, &values),
                    expect_tree,
                )
            });
            secs[3][2] = warm_median(r, || {
                check(
                    "rayon tree",
                    ry.install(|| tree_rayon(&values, 0)),
                    expect_tree,
                )
            });
            secs[3][3] = warm_median(r, || {
                check(
                    "chili tree",
                    tree_chili(&mut ch.scope(), &values, 0),
                    expect_tree,
                )
            });
            secs[3][4] = warm_median(r, || {
                check(
                    "tokio tree",
                    rt.block_on(tree_tokio(Arc::clone(&shared), 0)),
                    expect_tree,
                )
            });
            if let Some(w) = wrong {
                return Err(w);
            }

            let mut table = Table::new(
                format!("median wall time, pools of {threads} threads; ratios vs Rayon (lower is better)"),
                &["benchmark", "serial", "threadlab", "rayon", "chili", "tokio", "threadlab/rayon", "chili/rayon", "tokio/rayon"],
            );
            for (b, name) in benches.iter().enumerate() {
                let s = secs[b];
                let mut cells = vec![name.clone()];
                cells.extend(s.iter().map(|v| fmt_secs(*v)));
                cells.extend([1, 3, 4].iter().map(|&i| fmt_ratio(s[i] / s[2])));
                table.row(cells);
                for (i, v) in VARIANTS
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| s[*i].is_finite())
                {
                    rows.push(Row {
                        experiment: "overhead".into(),
                        variant: (*v).into(),
                        config: name.clone(),
                        threads: if i == 0 { 1 } else { threads },
                        metric: "seconds".into(),
                        value: s[i],
                        unit: "s".into(),
                    });
                }
            }
            tables.push(table);
            let mut chart = Chart::bars(
                &format!("overhead-vs-rayon-{threads}t"),
                &format!("overhead: time relative to Rayon ({threads} threads)"),
                vec!["spawn".into(), "jobs".into(), "fib".into(), "tree".into()],
                "time / Rayon's time",
            );
            chart.log_y = true;
            for i in [0usize, 1, 3, 4] {
                chart.series.push(Series {
                    name: VARIANTS[i].into(),
                    points: (0..benches.len())
                        .map(|b| (b as f64, secs[b][i] / secs[b][2]))
                        .collect(),
                });
            }
            chart.hlines.push(("rayon = 1".into(), 1.0));
            charts.push(chart);

            // The trickle.
            let gap = Duration::from_micros(200);
            let dedicated =
                DedicatedThread::new("trickle").map_err(|e| format!("dedicated thread: {e}"))?;
            let mut tt = Table::new(
                format!("trickle: one empty task every 200 µs, {trickle_tasks} tasks; runtime CPU is every thread's but the submitter's (getrusage minus the submitter's CLOCK_THREAD_CPUTIME_ID), process CPU includes the submitter's sleeps"),
                &["variant", "runtime CPU/task", "process CPU/task", "wake-up p50", "p90", "p99"],
            );
            let mut p50s = Vec::new();
            for variant in ["threadlab", "rayon", "tokio", "dedicated-thread"] {
                ctx.step(format!("overhead: trickle, {variant}, {threads} threads"));
                let mut t = match variant {
                    "threadlab" => trickle(&crate::tl::global_queue(&tl), trickle_tasks, gap)?,
                    "rayon" => trickle(&Rayon(ry.clone()), trickle_tasks, gap)?,
                    "tokio" => trickle(&Tokio(rt.handle().clone()), trickle_tasks, gap)?,
                    _ => trickle(&dedicated.handle(), trickle_tasks, gap)?,
                };
                let lats = &mut t.latencies;
                let (p50, p90, p99) = (
                    percentile(lats, 50.0),
                    percentile(lats, 90.0),
                    percentile(lats, 99.0),
                );
                p50s.push((variant, p50, t.runtime_cpu));
                tt.row(vec![
                    variant.into(),
                    fmt_secs(t.runtime_cpu),
                    fmt_secs(t.process_cpu),
                    fmt_secs(p50 / 1e9),
                    fmt_secs(p90 / 1e9),
                    fmt_secs(p99 / 1e9),
                ]);
                for (metric, value, unit) in [
                    ("runtime_cpu_per_task", t.runtime_cpu * 1e9, "ns"),
                    ("process_cpu_per_task", t.process_cpu * 1e9, "ns"),
                    ("wakeup_p50", p50, "ns"),
                    ("wakeup_p90", p90, "ns"),
                    ("wakeup_p99", p99, "ns"),
                ] {
                    rows.push(Row {
                        experiment: "overhead".into(),
                        variant: variant.into(),
                        config: format!("trickle {trickle_tasks} × 200 µs"),
                        threads: if variant == "dedicated-thread" {
                            1
                        } else {
                            threads
                        },
                        metric: metric.into(),
                        value,
                        unit: unit.into(),
                    });
                }
            }
            tables.push(tt);
            if threads == ctx.threads[0] {
                let rc = super::recorder_cost::measure(ctx, &tl, spawns)?;
                tables.push(rc.table);
                rows.extend(rc.rows);
                recorder_finding = rc.finding;
            }
            let ratio = |b: usize| secs[b][1] / secs[b][2];
            findings.push(format!(
                "On {threads} thread(s), threadlab took {} Rayon's time for empty spawns, {} for the jobs chains, {} for fib({fib_n}) and {} for the tree sum (chili: {} on fib); on a trickle, threadlab's runtime spent {} of Rayon's CPU per task and its median wake-up was {} against Rayon's {} and Tokio's {}.",
                fmt_ratio(ratio(0)),
                fmt_ratio(ratio(1)),
                fmt_ratio(ratio(2)),
                fmt_ratio(ratio(3)),
                fmt_ratio(secs[2][3] / secs[2][2]),
                fmt_ratio(p50s[0].2 / p50s[1].2),
                fmt_secs(p50s[0].1 / 1e9),
                fmt_secs(p50s[1].1 / 1e9),
                fmt_secs(p50s[2].1 / 1e9),
            ));
        }
        let mut notes = Vec::new();
        if ctx.size != crate::lab::Size::Full {
            notes.push(format!(
                "Quick size: a tree of 2^{tree_log} nodes instead of 2^24 (fib({fib_n}) as in full); run with --full for the issue's sizes."
            ));
        }
        notes.push("chili has join only (no spawn), so its spawn and jobs cells are empty; Tokio's fib and tree use tokio::spawn at every level, as it has no fork-join.".into());
        findings.push(recorder_finding);
        Ok(Outcome {
            finding: findings.join(" "),
            notes,
            rows,
            tables,
            charts,
        })
    }
}
