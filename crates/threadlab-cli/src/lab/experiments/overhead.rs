//! `overhead`: what the runtime itself costs, against Rayon, chili and Tokio — empty spawns in a
//! scope, the jobs workload (8 × 12,500), fib with a join at every level, a binary-tree sum with
//! a join at every node, and a trickle of one empty task every 200 µs (the runtime's CPU per
//! task, wake-up latency from submit to start) — and what the recorder costs (see
//! [`recorder_cost`]: ns per recorded event next to one read of the timestamp counter, a hook
//! when no recording is on, empty spawns with recording off and on). The kernels are
//! `programs::{join_kernels, implicit_tree, chain, trickle, recorder}`; the peers' pools and
//! Tokio's spawn-per-level versions are in `crate::lab::peers`.

use crate::baselines::dedicated_thread::DedicatedThread;
use crate::fmt::{fmt_ratio, fmt_secs, group_thousands};
use crate::lab::peers::each::{checked, join_runs, serial, timed, Run, RAYON, RUNTIMES, TOKIO};
use crate::lab::peers::{self, Rayon, Runtimes, Tokio};
use crate::lab::programs::chain;
use crate::lab::programs::implicit_tree::ImplicitTree;
use crate::lab::programs::join_kernels::Fib;
use crate::lab::programs::recorder::{per_call, rdtsc_ns};
use crate::lab::programs::trickle::trickle;
use crate::lab::report::{svg::Chart, table::Table};
use crate::lab::stats::percentile;
use crate::lab::{Ctx, ExpResult, Experiment, Outcome, Row, Size, Variant};
use std::cell::Cell;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};
use threadlab::trace::{self, hooks, Mode, TaskKind};
use threadlab::Pool;

/// The experiment.
pub struct Overhead;

/// The benchmarks' sizes.
struct Sizes {
    spawns: usize,
    fib_n: u64,
    tree_log: u32,
    trickle_tasks: usize,
    per_queue: u64,
}

impl Sizes {
    fn of(size: Size) -> Sizes {
        Sizes {
            spawns: size.pick(10_000, 1_000_000, 1_000_000),
            fib_n: size.pick(20, 32, 32),
            tree_log: size.pick(12, 22, 24),
            trickle_tasks: size.pick(50, 2_000, 2_000),
            per_queue: size.pick(250, 12_500, 12_500),
        }
    }

    /// The four timed benchmarks' names (the rows' configs), in table order.
    fn benches(&self) -> [String; 4] {
        [
            format!(
                "spawn {} empty tasks in a scope",
                group_thousands(self.spawns as u64)
            ),
            format!("jobs 8 × {}", group_thousands(self.per_queue)),
            format!("fib({}), join at every level", self.fib_n),
            format!("tree sum of 2^{} nodes, join at every node", self.tree_log),
        ]
    }
}

/// One pool size's trickle: per variant, its name, median wake-up (ns) and runtime CPU per
/// task (s).
type Trickles = Vec<(&'static str, f64, f64)>;

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
        let sizes = Sizes::of(ctx.size);
        let values: Vec<u64> = (0..1u64 << sizes.tree_log).collect();
        let mut out = Outcome::default();
        let mut findings = Vec::new();
        let mut recorder_finding = String::new();
        for &threads in &ctx.threads {
            let rt = Runtimes::new(threads)?;
            let secs = time(ctx, threads, &rt, &sizes, &values)?;
            let names = sizes.benches();
            out.tables
                .push(bench_table(ctx, threads, &names, &secs, &mut out.rows));
            out.charts.push(bench_chart(threads, &secs));
            let (table, trickles) =
                trickles(ctx, threads, &rt, sizes.trickle_tasks, &mut out.rows)?;
            out.tables.push(table);
            if threads == ctx.threads[0] {
                let rc = recorder_cost(ctx, &rt.tl, sizes.spawns)?;
                out.tables.push(rc.table);
                out.rows.extend(rc.rows);
                recorder_finding = rc.finding;
            }
            findings.push(finding(threads, sizes.fib_n, &secs, &trickles));
        }
        if ctx.size != Size::Full {
            out.notes.push(format!(
                "Quick size: a tree of 2^{} nodes instead of 2^24 (fib({}) as in full); run with --full for the issue's sizes.",
                sizes.tree_log, sizes.fib_n
            ));
        }
        out.notes.push("The serial fib and tree are the same kernels with each join replaced by the two calls in order, each result behind black_box (as in `workloads`): plain recursion lets LLVM turn fib's second call into a loop, which no forking version can do.".into());
        out.notes.push("chili has join only (no spawn), so its spawn and jobs cells are empty; Tokio's fib and tree use tokio::spawn at every level, as it has no fork-join.".into());
        findings.push(recorder_finding);
        out.finding = findings.join(" ");
        Ok(out)
    }
}

/// The four benchmarks, each in its own interleaved rounds: the median seconds of each by
/// runtime (index into [`RUNTIMES`]; NaN where a runtime has no such benchmark).
fn time(
    ctx: &Ctx,
    threads: usize,
    rt: &Runtimes,
    sizes: &Sizes,
    values: &[u64],
) -> Result<[[f64; 5]; 4], String> {
    let fib = Fib(sizes.fib_n);
    let tree = ImplicitTree(values);
    let shared = Arc::new(values.to_vec());
    let (want_fib, want_tree) = (serial(&fib), values.iter().sum());
    // Tokio has no fork-join: its fib and tree spawn at every level.
    let (tokio, n, shared) = (&rt.rt, sizes.fib_n, &shared);
    let mut fib_runs = join_runs(&fib, rt, 1);
    fib_runs[TOKIO] = Some(Box::new(move || {
        timed(|| tokio.block_on(peers::tokio_fib(n)))
    }));
    let mut tree_runs = join_runs(&tree, rt, 1);
    tree_runs[TOKIO] = Some(Box::new(move || {
        timed(|| tokio.block_on(peers::tokio_tree(Arc::clone(shared), 0)))
    }));
    let by_bench = [
        spawn_variants(rt, sizes.spawns),
        job_variants(rt, sizes.per_queue),
        on_each("fib", want_fib, fib_runs),
        on_each("tree", want_tree, tree_runs),
    ];
    let mut secs = [[f64::NAN; 5]; 4];
    for (b, variants) in by_bench.into_iter().enumerate() {
        let (index, mut variants): (Vec<usize>, Vec<Variant<'_>>) = variants.into_iter().unzip();
        let samples = ctx.rounds(&format!("{threads} threads"), &mut variants)?;
        for (i, s) in index.into_iter().zip(samples) {
            secs[b][i] = s.median;
        }
    }
    Ok(secs)
}

/// A variant per runtime that has a run of `what`, each checked against `want`.
fn on_each<'a>(what: &str, want: u64, runs: [Option<Run<'a>>; 5]) -> Vec<(usize, Variant<'a>)> {
    runs.into_iter()
        .enumerate()
        .filter_map(|(i, run)| {
            let label = format!("{} {what}", RUNTIMES[i]);
            Some((i, checked(label, want, run?)))
        })
        .collect()
}

/// Empty spawns in a scope: threadlab, Rayon and Tokio (chili has no spawn).
fn spawn_variants(rt: &Runtimes, spawns: usize) -> Vec<(usize, Variant<'_>)> {
    let (tl, ry, rt) = (&rt.tl, &rt.ry, &rt.rt);
    vec![
        (
            1,
            Variant::timed("threadlab spawns", move || {
                crate::lab::tl::spawn_empty(tl, spawns)
            }),
        ),
        (
            2,
            Variant::timed("rayon spawns", move || {
                ry.scope(|s| (0..spawns).for_each(|_| s.spawn(|_| {})))
            }),
        ),
        (
            4,
            Variant::timed("tokio spawns", move || {
                rt.block_on(async {
                    let hs: Vec<_> = (0..spawns).map(|_| tokio::spawn(async {})).collect();
                    for h in hs {
                        let _ = h.await;
                    }
                })
            }),
        ),
    ]
}

/// Eight chains of `per_queue` self-requeueing jobs: on one thread, threadlab's global queue,
/// Rayon and Tokio.
fn job_variants(rt: &Runtimes, per_queue: u64) -> Vec<(usize, Variant<'_>)> {
    vec![
        (
            0,
            Variant::measured("serial jobs", move || {
                Ok(chain::run_one_thread(8, per_queue))
            }),
        ),
        (
            1,
            Variant::measured(
                "threadlab jobs",
                chains_of(per_queue, vec![crate::lab::tl::global_queue(&rt.tl); 8]),
            ),
        ),
        (
            2,
            Variant::measured(
                "rayon jobs",
                chains_of(per_queue, vec![Rayon(rt.ry.clone()); 8]),
            ),
        ),
        (
            4,
            Variant::measured(
                "tokio jobs",
                chains_of(per_queue, vec![Tokio(rt.rt.handle().clone()); 8]),
            ),
        ),
    ]
}

/// One timed run of a chain of `per_queue` jobs on each of `queues`.
fn chains_of<S: chain::Spawn>(
    per_queue: u64,
    queues: Vec<S>,
) -> impl FnMut() -> Result<f64, String> {
    move || chain::run(&queues, per_queue, Duration::from_secs(120))
}

/// The benchmarks' medians and their ratios to Rayon's, and the rows.
fn bench_table(
    ctx: &Ctx,
    threads: usize,
    names: &[String; 4],
    secs: &[[f64; 5]; 4],
    rows: &mut Vec<Row>,
) -> Table {
    let mut table = Table::new(
        format!("median wall time, pools of {threads} threads; ratios vs Rayon (lower is better)"),
        &[
            "benchmark",
            "serial",
            "threadlab",
            "rayon",
            "chili",
            "tokio",
            "threadlab/rayon",
            "chili/rayon",
            "tokio/rayon",
        ],
    );
    for (name, s) in names.iter().zip(secs) {
        let mut cells = vec![name.clone()];
        cells.extend(s.iter().map(|v| fmt_secs(*v)));
        cells.extend([1, 3, 4].iter().map(|&i| fmt_ratio(s[i] / s[RAYON])));
        table.row(cells);
        for (i, v) in RUNTIMES
            .iter()
            .enumerate()
            .filter(|(i, _)| s[*i].is_finite())
        {
            let t = if i == 0 { 1 } else { threads };
            rows.push(ctx.row(v, name, t, "seconds", s[i], "s"));
        }
    }
    table
}

/// Each runtime's time relative to Rayon's, per benchmark.
fn bench_chart(threads: usize, secs: &[[f64; 5]; 4]) -> Chart {
    let mut chart = Chart::bars(
        &format!("overhead-vs-rayon-{threads}t"),
        &format!("overhead: time relative to Rayon ({threads} threads)"),
        vec!["spawn".into(), "jobs".into(), "fib".into(), "tree".into()],
        "time / Rayon's time",
    );
    chart.log_y = true;
    for i in [0usize, 1, 3, 4] {
        chart.add_by_index(RUNTIMES[i], secs.iter().map(|s| s[i] / s[RAYON]));
    }
    chart.hlines.push(("rayon = 1".into(), 1.0));
    chart
}

/// The trickle, one run per variant: one empty task every 200 µs (the runtime's CPU per task,
/// the wake-up latency's percentiles), its table and rows.
fn trickles(
    ctx: &Ctx,
    threads: usize,
    rt: &Runtimes,
    tasks: usize,
    rows: &mut Vec<Row>,
) -> Result<(Table, Trickles), String> {
    let gap = Duration::from_micros(200);
    let dedicated =
        DedicatedThread::new("trickle").map_err(|e| format!("dedicated thread: {e}"))?;
    let mut table = Table::new(
        format!("trickle: one empty task every 200 µs, {tasks} tasks; runtime CPU is every thread's but the submitter's (getrusage minus the submitter's CLOCK_THREAD_CPUTIME_ID), process CPU includes the submitter's sleeps"),
        &["variant", "runtime CPU/task", "process CPU/task", "wake-up p50", "p90", "p99"],
    );
    let mut p50s = Vec::new();
    for variant in ["threadlab", "rayon", "tokio", "dedicated-thread"] {
        ctx.step(format!("overhead: trickle, {variant}, {threads} threads"));
        let mut t = match variant {
            "threadlab" => trickle(&crate::lab::tl::global_queue(&rt.tl), tasks, gap)?,
            "rayon" => trickle(&Rayon(rt.ry.clone()), tasks, gap)?,
            "tokio" => trickle(&Tokio(rt.rt.handle().clone()), tasks, gap)?,
            _ => trickle(&dedicated.handle(), tasks, gap)?,
        };
        let lats = &mut t.latencies;
        let (p50, p90, p99) = (
            percentile(lats, 50.0),
            percentile(lats, 90.0),
            percentile(lats, 99.0),
        );
        p50s.push((variant, p50, t.runtime_cpu));
        table.row(vec![
            variant.into(),
            fmt_secs(t.runtime_cpu),
            fmt_secs(t.process_cpu),
            fmt_secs(p50 / 1e9),
            fmt_secs(p90 / 1e9),
            fmt_secs(p99 / 1e9),
        ]);
        let t_threads = if variant == "dedicated-thread" {
            1
        } else {
            threads
        };
        let config = format!("trickle {tasks} × 200 µs");
        for (metric, value, unit) in [
            ("runtime_cpu_per_task", t.runtime_cpu * 1e9, "ns"),
            ("process_cpu_per_task", t.process_cpu * 1e9, "ns"),
            ("wakeup_p50", p50, "ns"),
            ("wakeup_p90", p90, "ns"),
            ("wakeup_p99", p99, "ns"),
        ] {
            rows.push(ctx.row(variant, &config, t_threads, metric, value, unit));
        }
    }
    Ok((table, p50s))
}

/// One pool size's sentence.
fn finding(threads: usize, fib_n: u64, secs: &[[f64; 5]; 4], trickles: &Trickles) -> String {
    let ratio = |b: usize| secs[b][1] / secs[b][RAYON];
    format!(
        "On {threads} thread(s), threadlab took {} Rayon's time for empty spawns, {} for the jobs chains, {} for fib({fib_n}) and {} for the tree sum (chili: {} on fib); on a trickle, threadlab's runtime spent {} of Rayon's CPU per task and its median wake-up was {} against Rayon's {} and Tokio's {}.",
        fmt_ratio(ratio(0)),
        fmt_ratio(ratio(1)),
        fmt_ratio(ratio(2)),
        fmt_ratio(ratio(3)),
        fmt_ratio(secs[2][3] / secs[2][RAYON]),
        fmt_ratio(trickles[0].2 / trickles[1].2),
        fmt_secs(trickles[0].1 / 1e9),
        fmt_secs(trickles[1].1 / 1e9),
        fmt_secs(trickles[2].1 / 1e9),
    )
}

// The recorder's own cost (`recorder_cost`), measured on the first pool size.

/// The fewest rounds a recorder figure is the median of, whatever `--repeat` says.
const RECORDER_MIN_ROUNDS: usize = 3;

/// What the recorder costs (see [`recorder_cost`]).
struct RecorderCost {
    /// The table for the report.
    table: Table,
    /// Rows for results.json.
    rows: Vec<Row>,
    /// One sentence for the finding.
    finding: String,
}

/// The recorder's figures: medians of the rounds, ns per call unless said.
struct RecorderFigures {
    /// Calls per run.
    n: u64,
    rounds: usize,
    /// Empty spawns per run, and the pool's threads.
    spawns: usize,
    threads: usize,
    empty: f64,
    hook_off: f64,
    event_flight: f64,
    event_full: f64,
    /// One rdtsc read (NaN off x86-64).
    tsc: f64,
    /// Seconds per run of the empty spawns, recording off and on.
    off: f64,
    on: f64,
    events_per_task: f64,
}

/// The recorder's own cost, measured on `pool`: ns per recorded event (Tracy publishes 2.25 ns
/// per zone), next to what one read of the timestamp counter costs on this machine (the floor
/// of any per-event timestamp); the cost of a hook when no recording is on; and the
/// empty-spawn benchmark with recording off and on. Each figure is a variant of the same
/// interleaved rounds (`ctx.rounds`), so drift on a shared machine hits them alike.
fn recorder_cost(ctx: &Ctx, pool: &Pool, spawns: usize) -> Result<RecorderCost, String> {
    let f = recorder_time(ctx, pool, spawns)?;
    Ok(RecorderCost {
        table: f.table(),
        rows: f.rows(ctx),
        finding: f.finding(),
    })
}

/// Every figure a variant of the same interleaved rounds (at least three), its median.
fn recorder_time(ctx: &Ctx, pool: &Pool, spawns: usize) -> Result<RecorderFigures, String> {
    let n: u64 = ctx.size.pick(100_000, 2_000_000, 5_000_000);
    let flight = Some(Mode::FlightRecorder {
        bytes_per_thread: 1 << 20,
    });
    let event = |_| hooks::task_begin(TaskKind::Join);
    let events_per_task = Cell::new(0.0);
    let mut variants = vec![
        Variant::measured("an empty loop", || {
            per_call(n, None, |i| {
                black_box(i);
            })
        }),
        Variant::measured("a hook, recording off", || {
            per_call(n, None, |_| hooks::task_end())
        }),
        Variant::measured("an event, flight recorder", || per_call(n, flight, event)),
        Variant::measured("an event, full recording", || {
            per_call(n, Some(Mode::Full), event)
        }),
        Variant::timed("empty spawns, recording off", || {
            crate::lab::tl::spawn_empty(pool, spawns)
        }),
        Variant::measured("empty spawns, recording on", || {
            let rec = trace::try_start(Mode::Full).map_err(|e| e.to_string())?;
            let t = Instant::now();
            crate::lab::tl::spawn_empty(pool, spawns);
            let secs = t.elapsed().as_secs_f64();
            events_per_task.set(rec.stop().event_count() as f64 / spawns as f64);
            Ok(secs)
        }),
    ];
    #[cfg(target_arch = "x86_64")]
    variants.push(Variant::measured("an rdtsc read", || Ok(rdtsc_ns(n))));
    let samples = ctx.rounds_at_least(RECORDER_MIN_ROUNDS, "recorder", &mut variants)?;
    drop(variants);
    let median = |i: usize| samples.get(i).map_or(f64::NAN, |s| s.median);
    Ok(RecorderFigures {
        n,
        rounds: ctx.repeat.max(RECORDER_MIN_ROUNDS),
        spawns,
        threads: pool.current_num_threads(),
        empty: median(0),
        hook_off: median(1),
        event_flight: median(2),
        event_full: median(3),
        off: median(4),
        on: median(5),
        tsc: median(6),
        events_per_task: events_per_task.get(),
    })
}

impl RecorderFigures {
    /// `ns` above the empty loop's, written as a time.
    fn above_empty(&self, ns: f64) -> String {
        fmt_secs((ns - self.empty).max(0.0) / 1e9)
    }

    /// How much recording slowed the empty spawns, as a fraction.
    fn slowdown(&self) -> f64 {
        self.on / self.off - 1.0
    }

    fn table(&self) -> Table {
        let (n, runs, spawns) = (self.n, self.rounds, self.spawns);
        let mut table = Table::new(
            format!("the recorder's cost: {n} calls per run, median of {runs} runs; empty spawns: {spawns} in a scope, recording off and on; every figure's runs interleaved"),
            &["what", "cost", "note"],
        );
        let per_spawn = |secs: f64| fmt_secs(secs / spawns as f64);
        for (what, cost, note) in [
            (
                "one event, flight recorder (steady state)",
                self.above_empty(self.event_flight),
                "above an empty loop".to_string(),
            ),
            (
                "one event, full recording",
                self.above_empty(self.event_full),
                "includes first touches of fresh buffer memory".into(),
            ),
            (
                "one rdtsc read (this machine)",
                fmt_secs(self.tsc / 1e9),
                "the floor of any timestamped event".into(),
            ),
            (
                "a hook, recording off",
                self.above_empty(self.hook_off),
                "one relaxed load and a branch".into(),
            ),
            (
                "empty spawn, recording off",
                per_spawn(self.off),
                String::new(),
            ),
            (
                "empty spawn, recording on",
                per_spawn(self.on),
                format!(
                    "{:+.0}% ({:.1} events per task)",
                    self.slowdown() * 100.0,
                    self.events_per_task
                ),
            ),
        ] {
            table.row(vec![what.into(), cost, note]);
        }
        table
    }

    fn rows(&self, ctx: &Ctx) -> Vec<Row> {
        let above = |ns: f64| (ns - self.empty).max(0.0);
        let per_spawn = |secs: f64| secs * 1e9 / self.spawns as f64;
        [
            ("recorder_event_flight", above(self.event_flight), "ns"),
            ("recorder_event_full", above(self.event_full), "ns"),
            ("rdtsc", self.tsc, "ns"),
            ("recorder_hook_off", above(self.hook_off), "ns"),
            ("spawn_recording_off", per_spawn(self.off), "ns"),
            ("spawn_recording_on", per_spawn(self.on), "ns"),
            ("spawn_recording_slowdown", self.slowdown() * 100.0, "%"),
        ]
        .into_iter()
        .map(|(metric, value, unit)| {
            let threads = if metric.starts_with("spawn") {
                self.threads
            } else {
                1
            };
            ctx.row("threadlab", "recorder", threads, metric, value, unit)
        })
        .collect()
    }

    fn finding(&self) -> String {
        format!(
            "The recorder costs {} per event in steady state ({} of it the timestamp read alone) and {} per hook when off; recording slows empty spawns by {:.0}% ({} of the time, {:.1} events per task).",
            self.above_empty(self.event_flight),
            fmt_secs(self.tsc / 1e9),
            self.above_empty(self.hook_off),
            self.slowdown() * 100.0,
            fmt_ratio(self.on / self.off),
            self.events_per_task,
        )
    }
}
