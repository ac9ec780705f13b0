//! `overhead`: what the runtime itself costs, against Rayon, chili and Tokio — empty spawns in a
//! scope, the jobs workload (8 × 12,500), fib with a join at every level, a binary-tree sum with
//! a join at every node, and a trickle of one empty task every 200 µs (the runtime's CPU per task,
//! wake-up latency from submit to start) — and what the recorder costs (`recorder_cost.rs`, beside this file).
//! The kernels are `programs::{join_kernels, implicit_tree, chain, trickle}`; the peers'
//! pools and Tokio's spawn-per-level versions are in `crate::lab::peers`.

mod recorder_cost;

use crate::baselines::dedicated_thread::DedicatedThread;
use crate::fmt::{fmt_ratio, fmt_secs, group_thousands};
use crate::lab::peers::{self, Rayon, Tokio};
use crate::lab::programs::trickle::trickle;
use crate::lab::programs::{chain, implicit_tree, join_kernels::fib, Chili, Serial, Threadlab};
use crate::lab::report::{svg::Chart, table::Table};
use crate::lab::stats::percentile;
use crate::lab::{Ctx, ExpResult, Experiment, Outcome, Variant};
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

/// The experiment.
pub struct Overhead;

const VARIANTS: [&str; 5] = ["serial", "threadlab", "rayon", "chili", "tokio"];

/// One timed run of a chain of `per_queue` jobs on each of `queues`.
fn chains<S: chain::Spawn>(per_queue: u64, queues: Vec<S>) -> impl FnMut() -> Result<f64, String> {
    move || chain::run(&queues, per_queue, Duration::from_secs(120))
}

/// `Ok` when a variant computed `want`.
fn expect(what: &str, got: u64, want: u64) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what} computed {got}, expected {want}"))
    }
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
        let shared = Arc::new(values.clone());
        let (want_tree, want_fib): (u64, u64) =
            (values.iter().sum(), fib::<Serial>(&mut (), fib_n));
        let mut out = Outcome::default();
        let mut findings = Vec::new();
        let mut recorder_finding = String::new();
        for &threads in &ctx.threads {
            let peers::Runtimes { tl, ry, ch, rt } = peers::Runtimes::new(threads)?;
            let benches = [
                format!(
                    "spawn {} empty tasks in a scope",
                    group_thousands(spawns as u64)
                ),
                format!("jobs 8 × {}", group_thousands(per_queue)),
                format!("fib({fib_n}), join at every level"),
                format!("tree sum of 2^{tree_log} nodes, join at every node"),
            ];
            // The variants of each benchmark, by index into VARIANTS; missing ones stay NaN.
            let v = &values;
            let by_bench: [Vec<(usize, Variant<'_>)>; 4] = [
                vec![
                    (
                        1,
                        Variant::timed("threadlab spawns", || {
                            crate::lab::tl::spawn_empty(&tl, spawns)
                        }),
                    ),
                    (
                        2,
                        Variant::timed("rayon spawns", || {
                            ry.scope(|s| (0..spawns).for_each(|_| s.spawn(|_| {})))
                        }),
                    ),
                    (
                        4,
                        Variant::timed("tokio spawns", || {
                            rt.block_on(async {
                                let hs: Vec<_> =
                                    (0..spawns).map(|_| tokio::spawn(async {})).collect();
                                for h in hs {
                                    let _ = h.await;
                                }
                            })
                        }),
                    ),
                ],
                vec![
                    (
                        0,
                        Variant::measured("serial jobs", || {
                            Ok(chain::run_one_thread(8, per_queue))
                        }),
                    ),
                    (
                        1,
                        Variant::measured(
                            "threadlab jobs",
                            chains(per_queue, vec![crate::lab::tl::global_queue(&tl); 8]),
                        ),
                    ),
                    (
                        2,
                        Variant::measured(
                            "rayon jobs",
                            chains(per_queue, vec![Rayon(ry.clone()); 8]),
                        ),
                    ),
                    (
                        4,
                        Variant::measured(
                            "tokio jobs",
                            chains(per_queue, vec![Tokio(rt.handle().clone()); 8]),
                        ),
                    ),
                ],
                vec![
                    (
                        0,
                        Variant::try_timed("serial fib", || {
                            expect(
                                "serial fib",
                                fib::<Serial>(&mut (), black_box(fib_n)),
                                want_fib,
                            )
                        }),
                    ),
                    (
                        1,
                        Variant::try_timed("threadlab fib", || {
                            expect(
                                "threadlab fib",
                                tl.install(|| fib::<Threadlab>(&mut (), fib_n)),
                                want_fib,
                            )
                        }),
                    ),
                    (
                        2,
                        Variant::try_timed("rayon fib", || {
                            expect(
                                "rayon fib",
                                ry.install(|| fib::<Rayon>(&mut (), fib_n)),
                                want_fib,
                            )
                        }),
                    ),
                    (
                        3,
                        Variant::try_timed("chili fib", || {
                            expect("chili fib", fib::<Chili>(&mut ch.scope(), fib_n), want_fib)
                        }),
                    ),
                    (
                        4,
                        Variant::try_timed("tokio fib", || {
                            expect("tokio fib", rt.block_on(peers::tokio_fib(fib_n)), want_fib)
                        }),
                    ),
                ],
                vec![
                    (
                        0,
                        Variant::try_timed("serial tree", || {
                            expect(
                                "serial tree",
                                implicit_tree::sum::<Serial>(&mut (), black_box(v), 0),
                                want_tree,
                            )
                        }),
                    ),
                    (
                        1,
                        Variant::try_timed("threadlab tree", || {
                            expect(
                                "threadlab tree",
                                tl.install(|| implicit_tree::sum::<Threadlab>(&mut (), v, 0)),
                                want_tree,
                            )
                        }),
                    ),
                    (
                        2,
                        Variant::try_timed("rayon tree", || {
                            expect(
                                "rayon tree",
                                ry.install(|| implicit_tree::sum::<Rayon>(&mut (), v, 0)),
                                want_tree,
                            )
                        }),
                    ),
                    (
                        3,
                        Variant::try_timed("chili tree", || {
                            expect(
                                "chili tree",
                                implicit_tree::sum::<Chili>(&mut ch.scope(), v, 0),
                                want_tree,
                            )
                        }),
                    ),
                    (
                        4,
                        Variant::try_timed("tokio tree", || {
                            expect(
                                "tokio tree",
                                rt.block_on(peers::tokio_tree(Arc::clone(&shared), 0)),
                                want_tree,
                            )
                        }),
                    ),
                ],
            ];
            let mut secs = vec![[f64::NAN; 5]; benches.len()];
            for (b, variants) in by_bench.into_iter().enumerate() {
                let (index, mut variants): (Vec<usize>, Vec<Variant<'_>>) =
                    variants.into_iter().unzip();
                let samples = ctx.rounds(&format!("{threads} threads"), &mut variants)?;
                for (i, s) in index.into_iter().zip(samples) {
                    secs[b][i] = s.median;
                }
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
                    let t = if i == 0 { 1 } else { threads };
                    out.rows.push(ctx.row(v, name, t, "seconds", s[i], "s"));
                }
            }
            out.tables.push(table);
            let mut chart = Chart::bars(
                &format!("overhead-vs-rayon-{threads}t"),
                &format!("overhead: time relative to Rayon ({threads} threads)"),
                vec!["spawn".into(), "jobs".into(), "fib".into(), "tree".into()],
                "time / Rayon's time",
            );
            chart.log_y = true;
            for i in [0usize, 1, 3, 4] {
                chart.add_by_index(
                    VARIANTS[i],
                    (0..benches.len()).map(|b| secs[b][i] / secs[b][2]),
                );
            }
            chart.hlines.push(("rayon = 1".into(), 1.0));
            out.charts.push(chart);

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
                    "threadlab" => trickle(&crate::lab::tl::global_queue(&tl), trickle_tasks, gap)?,
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
                    let t = if variant == "dedicated-thread" {
                        1
                    } else {
                        threads
                    };
                    let config = format!("trickle {trickle_tasks} × 200 µs");
                    out.rows
                        .push(ctx.row(variant, config, t, metric, value, unit));
                }
            }
            out.tables.push(tt);
            if threads == ctx.threads[0] {
                let rc = recorder_cost::measure(ctx, &tl, spawns)?;
                out.tables.push(rc.table);
                out.rows.extend(rc.rows);
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
        if ctx.size != crate::lab::Size::Full {
            out.notes.push(format!(
                "Quick size: a tree of 2^{tree_log} nodes instead of 2^24 (fib({fib_n}) as in full); run with --full for the issue's sizes."
            ));
        }
        out.notes.push("The serial fib and tree are the same kernels with each join replaced by the two calls in order, each result behind black_box (as in `workloads`): plain recursion lets LLVM turn fib's second call into a loop, which no forking version can do.".into());
        out.notes.push("chili has join only (no spawn), so its spawn and jobs cells are empty; Tokio's fib and tree use tokio::spawn at every level, as it has no fork-join.".into());
        findings.push(recorder_finding);
        out.finding = findings.join(" ");
        Ok(out)
    }
}
