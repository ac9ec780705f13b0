//! `workloads`: well-known parallel programs that were not written for threadlab, each written
//! once over a runtime's `join` or scope (`crate::lab::programs`) and run with serial code,
//! threadlab, Rayon, chili (the join-only ones) and Tokio (skynet): fib, spice's and chili's
//! boxed tree (large, walked left subtree first and right subtree first, and 1,023 nodes where
//! the fork's cost dominates), skynet, the BOTS n-queens
//! search (a scope per node), merge sort, quick sort, a triangular loop and a recursive matrix
//! multiply. (Tokio's skynet only with `--full`: it takes seconds per run.) Every round runs every variant once, in the same process, after one warm-up round;
//! the figures are the medians over the rounds (at least 5). Every runtime runs a join's first
//! closure first, on the calling thread (chili's own `join` runs the second first: its adapter
//! swaps them), so the runtimes walk each kernel in the same order.

use crate::fmt::fmt_secs;
use crate::lab::peers;
use crate::lab::peers::Rayon;
use crate::lab::programs::join_kernels::{
    fib, matmul, tree_sum, tree_sum_right_first, triangular, Matrix, Tree,
};
use crate::lab::programs::scope_kernels::{nqueens, skynet};
use crate::lab::programs::sorts::{merge_sort, quick_sort};
use crate::lab::programs::{xorshift, Chili, Serial, Threadlab};
use crate::lab::report::{svg::Chart, table::Table};
use crate::lab::stats::{geomean, median};
use crate::lab::{Ctx, ExpResult, Experiment, Outcome, Size};
use std::future::Future;
use std::pin::Pin;
use std::time::Instant;

/// The experiment.
pub struct Workloads;

const VARIANTS: [&str; 5] = ["serial", "threadlab", "rayon", "chili", "tokio"];
const SERIAL: usize = 0;
const THREADLAB: usize = 1;
const RAYON: usize = 2;
const CHILI: usize = 3;

/// One timed run of a variant: its checksum and the seconds of one run of the workload (the
/// input preparation, e.g. a sort's fresh copy, excluded).
type Run<'a> = Box<dyn FnMut() -> (u64, f64) + 'a>;

/// A workload: its name, the checksum every variant must return, and the variants it has.
struct Workload<'a> {
    name: String,
    expect: u64,
    runs: [Option<Run<'a>>; 5],
}

/// Seconds per run of `f` over `reps` back-to-back calls, and its (last) result.
fn timed(reps: usize, mut f: impl FnMut() -> u64) -> (u64, f64) {
    let start = Instant::now();
    let mut out = 0;
    for _ in 0..reps {
        out = f();
    }
    (out, start.elapsed().as_secs_f64() / reps as f64)
}

/// skynet with Tokio's tasks (the original benchmark's async form): a spawned task per child.
fn skynet_tokio(num: u64, size: u64) -> Pin<Box<dyn Future<Output = u64> + Send>> {
    Box::pin(async move {
        if size == 1 {
            return num;
        }
        let child = size / 10;
        let handles: Vec<_> = (0..10)
            .map(|i| tokio::spawn(skynet_tokio(num + i * child, child)))
            .collect();
        let mut sum = 0;
        for h in handles {
            sum += h.await.unwrap_or(0);
        }
        sum
    })
}

/// A sum of a sorted slice's elements weighted by position: differs from the unsorted one's.
fn sorted_checksum(v: &[u32]) -> u64 {
    let sorted = v.windows(2).all(|w| w[0] <= w[1]);
    let sum = v.iter().enumerate().fold(0u64, |s, (i, &x)| {
        s.wrapping_add((x as u64).wrapping_mul(i as u64 + 1))
    });
    if sorted {
        sum
    } else {
        0
    }
}

fn matrix_checksum(c: &[f64]) -> u64 {
    c.iter().fold(0u64, |s, &x| s.wrapping_add(x as u64))
}

fn ratio(r: f64) -> String {
    if r.is_finite() {
        format!("{r:.2}×")
    } else {
        "-".into()
    }
}

impl Experiment for Workloads {
    fn name(&self) -> &'static str {
        "workloads"
    }

    fn description(&self) -> &'static str {
        "Well-known parallel programs (fib, spice's boxed tree, skynet, BOTS n-queens, merge and \
         quick sort, a triangular loop, a recursive matrix multiply), each written once over \
         join or scope and run with serial code, threadlab, Rayon and chili (and Tokio's skynet \
         with --full)."
    }

    fn run(&self, ctx: &Ctx) -> ExpResult {
        let size = ctx.size;
        let fib_n: u64 = size.pick(18, 30, 32);
        let tree_levels: u32 = size.pick(12, 20, 24);
        let small_reps: usize = size.pick(10, 300, 1000);
        let skynet_size: u64 = size.pick(10_000, 1_000_000, 1_000_000);
        let queens: usize = size.pick(6, 10, 11);
        let sort_len: usize = size.pick(1 << 14, 1 << 19, 1 << 23);
        let tri_n: u64 = size.pick(200, 2_000, 8_000);
        let mat_n: usize = size.pick(64, 256, 512);
        let rounds = ctx.repeat.max(5);

        ctx.step("workloads: building inputs");
        let big = Tree::perfect(tree_levels);
        let small = Tree::perfect(10);
        let mut next = xorshift(42);
        let unsorted: Vec<u32> = (0..sort_len).map(|_| next() as u32).collect();
        let mut want_sorted = unsorted.clone();
        want_sorted.sort_unstable();
        let (ma, mb) = (Matrix::random(mat_n, 1), Matrix::random(mat_n, 2));
        let want_mat = {
            let mut c = Matrix::zero(mat_n);
            matmul::<Serial>(&mut (), &mut c.data, &ma.data, &mb.data, mat_n);
            matrix_checksum(&c.data)
        };

        let mut out = Outcome::default();
        let mut findings = Vec::new();
        for &threads in &ctx.threads {
            let peers::Runtimes { tl, ry, ch, rt } = peers::Runtimes::new(threads)?;
            let (tl, ry, ch, rt) = (&*tl, &*ry, &ch, &rt);
            let (big, small, unsorted, ma, mb) = (&big, &small, &unsorted, &ma, &mb);

            // A join workload for the four join runtimes: `f` gets the variant's index and a
            // closure that runs the kernel under that runtime.
            macro_rules! join_workload {
                ($name:expr, $expect:expr, $reps:expr, |$x:ident, $P:ident| $body:expr) => {{
                    let reps = $reps;
                    Workload {
                        name: $name,
                        expect: $expect,
                        runs: [
                            Some(Box::new(move || {
                                timed(reps, || {
                                    type $P = Serial;
                                    let $x = &mut ();
                                    $body
                                })
                            }) as Run),
                            Some(Box::new(move || {
                                timed(reps, || {
                                    tl.install(|| {
                                        type $P = Threadlab;
                                        let $x = &mut ();
                                        $body
                                    })
                                })
                            })),
                            Some(Box::new(move || {
                                timed(reps, || {
                                    ry.install(|| {
                                        type $P = Rayon;
                                        let $x = &mut ();
                                        $body
                                    })
                                })
                            })),
                            Some(Box::new(move || {
                                timed(reps, || {
                                    type $P = Chili;
                                    let $x = &mut ch.scope();
                                    $body
                                })
                            })),
                            None,
                        ],
                    }
                }};
            }
            // A sort: a fresh copy of the input before each timed run.
            macro_rules! sort_workload {
                ($name:expr, |$x:ident, $P:ident, $v:ident, $buf:ident| $body:expr) => {{
                    let expect = sorted_checksum(&want_sorted);
                    let mk = |variant: usize| -> Run {
                        let mut $v = unsorted.clone();
                        let mut $buf = vec![0u32; unsorted.len()];
                        Box::new(move || {
                            $v.copy_from_slice(unsorted);
                            let start = Instant::now();
                            match variant {
                                SERIAL => {
                                    type $P = Serial;
                                    let $x = &mut ();
                                    $body
                                }
                                THREADLAB => tl.install(|| {
                                    type $P = Threadlab;
                                    let $x = &mut ();
                                    $body
                                }),
                                RAYON => ry.install(|| {
                                    type $P = Rayon;
                                    let $x = &mut ();
                                    $body
                                }),
                                _ => {
                                    type $P = Chili;
                                    let $x = &mut ch.scope();
                                    $body
                                }
                            }
                            let secs = start.elapsed().as_secs_f64();
                            let _ = &mut $buf;
                            (sorted_checksum(&$v), secs)
                        })
                    };
                    Workload {
                        name: $name,
                        expect,
                        runs: [
                            Some(mk(SERIAL)),
                            Some(mk(THREADLAB)),
                            Some(mk(RAYON)),
                            Some(mk(CHILI)),
                            None,
                        ],
                    }
                }};
            }
            let skynet_expect = skynet_size * (skynet_size - 1) / 2;
            let queens_expect = nqueens::<Serial>(queens);
            let tri_expect = triangular::<Serial>(&mut (), 0, tri_n);
            let mut workloads = vec![
                join_workload!(
                    format!("fib({fib_n})"),
                    fib::<Serial>(&mut (), fib_n),
                    1,
                    |x, P| fib::<P>(x, fib_n)
                ),
                join_workload!(
                    format!("boxed tree, {} nodes", big.nodes),
                    big.expected_sum(),
                    1,
                    |x, P| tree_sum::<P>(x, &big.root)
                ),
                join_workload!(
                    format!("boxed tree, {} nodes, right subtree first", big.nodes),
                    big.expected_sum(),
                    1,
                    |x, P| tree_sum_right_first::<P>(x, &big.root)
                ),
                join_workload!(
                    format!("boxed tree, {} nodes", small.nodes),
                    small.expected_sum(),
                    small_reps,
                    |x, P| tree_sum::<P>(x, &small.root)
                ),
                Workload {
                    name: format!("skynet, {skynet_size} leaves (scopes)"),
                    expect: skynet_expect,
                    runs: [
                        Some(Box::new(move || {
                            timed(1, || skynet::<Serial>(0, skynet_size))
                        })),
                        Some(Box::new(move || {
                            timed(1, || tl.install(|| skynet::<Threadlab>(0, skynet_size)))
                        })),
                        Some(Box::new(move || {
                            timed(1, || ry.install(|| skynet::<Rayon>(0, skynet_size)))
                        })),
                        None,
                        // Tokio's boxed futures take seconds per run here: `--full` only, to keep
                        // the quick lab short.
                        (size == Size::Full).then(|| -> Run {
                            Box::new(move || timed(1, || rt.block_on(skynet_tokio(0, skynet_size))))
                        }),
                    ],
                },
                Workload {
                    name: format!("n-queens {queens} (BOTS, scopes)"),
                    expect: queens_expect,
                    runs: [
                        Some(Box::new(move || timed(1, || nqueens::<Serial>(queens)))),
                        Some(Box::new(move || {
                            timed(1, || tl.install(|| nqueens::<Threadlab>(queens)))
                        })),
                        Some(Box::new(move || {
                            timed(1, || ry.install(|| nqueens::<Rayon>(queens)))
                        })),
                        None,
                        None,
                    ],
                },
                sort_workload!(format!("merge sort, {sort_len} u32"), |x, P, v, buf| {
                    merge_sort::<P>(x, &mut v, &mut buf)
                }),
                sort_workload!(format!("quick sort, {sort_len} u32"), |x, P, v, buf| {
                    quick_sort::<P>(x, &mut v)
                }),
                join_workload!(
                    format!("triangular loop, {tri_n} iterations"),
                    tri_expect,
                    1,
                    |x, P| triangular::<P>(x, 0, tri_n)
                ),
            ];
            // The matrix multiply writes into a matrix of its own per variant.
            let mk_mat = |variant: usize| -> Run {
                let mut c = Matrix::zero(mat_n);
                Box::new(move || {
                    c.data.iter_mut().for_each(|v| *v = 0.0);
                    let start = Instant::now();
                    let (cd, a, b) = (&mut c.data, &ma.data, &mb.data);
                    match variant {
                        SERIAL => matmul::<Serial>(&mut (), cd, a, b, mat_n),
                        THREADLAB => tl.install(|| matmul::<Threadlab>(&mut (), cd, a, b, mat_n)),
                        RAYON => ry.install(|| matmul::<Rayon>(&mut (), cd, a, b, mat_n)),
                        _ => matmul::<Chili>(&mut ch.scope(), cd, a, b, mat_n),
                    }
                    let secs = start.elapsed().as_secs_f64();
                    (matrix_checksum(&c.data), secs)
                })
            };
            workloads.push(Workload {
                name: format!("matrix multiply {mat_n}×{mat_n}"),
                expect: want_mat,
                runs: [
                    Some(mk_mat(SERIAL)),
                    Some(mk_mat(THREADLAB)),
                    Some(mk_mat(RAYON)),
                    Some(mk_mat(CHILI)),
                    None,
                ],
            });

            // samples[workload][variant]: seconds per run, one per round.
            let mut samples = vec![vec![Vec::new(); VARIANTS.len()]; workloads.len()];
            for round in 0..=rounds {
                for (w, wl) in workloads.iter_mut().enumerate() {
                    ctx.step(format!(
                        "workloads: {}, {threads} threads, round {round}/{rounds}",
                        wl.name
                    ));
                    for (v, run) in wl.runs.iter_mut().enumerate() {
                        let Some(run) = run else { continue };
                        let (got, secs) = run();
                        if got != wl.expect {
                            return Err(format!(
                                "workloads: {} with {} computed {got}, expected {}",
                                wl.name, VARIANTS[v], wl.expect
                            ));
                        }
                        // Round 0 warms up (page faults, sleeping workers) and is not counted.
                        if round > 0 {
                            samples[w][v].push(secs);
                        }
                    }
                }
            }
            let secs: Vec<[f64; 5]> = samples
                .iter_mut()
                .map(|per| {
                    std::array::from_fn(|v| {
                        if per[v].is_empty() {
                            f64::NAN
                        } else {
                            median(&mut per[v])
                        }
                    })
                })
                .collect();

            // A runtime that ran no workload here (Tokio at the quick size) has no column and
            // no legend entry.
            let ran: Vec<usize> = (0..VARIANTS.len())
                .filter(|&v| secs.iter().any(|s| s[v].is_finite()))
                .collect();
            let mut header: Vec<&str> = vec!["workload"];
            header.extend(ran.iter().map(|&v| VARIANTS[v]));
            header.extend([
                "threadlab/rayon",
                "chili/rayon",
                "threadlab/chili",
                "threadlab speed-up",
            ]);
            let mut table = Table::new(
                format!(
                    "time per run, pools of {threads} threads (serial: the calling thread); \
                     medians of {rounds} interleaved rounds; lower ratios are better"
                ),
                &header,
            );
            for (wl, s) in workloads.iter().zip(&secs) {
                let mut cells = vec![wl.name.clone()];
                cells.extend(ran.iter().map(|&v| fmt_secs(s[v])));
                cells.push(ratio(s[THREADLAB] / s[RAYON]));
                cells.push(ratio(s[CHILI] / s[RAYON]));
                cells.push(ratio(s[THREADLAB] / s[CHILI]));
                cells.push(ratio(s[SERIAL] / s[THREADLAB]));
                table.row(cells);
                for (v, name) in VARIANTS
                    .iter()
                    .enumerate()
                    .filter(|(v, _)| s[*v].is_finite())
                {
                    out.rows.push(ctx.row(
                        name,
                        &wl.name,
                        if v == SERIAL { 1 } else { threads },
                        "seconds",
                        s[v],
                        "s",
                    ));
                }
            }
            let gm = |num: usize, den: usize| geomean(secs.iter().map(|s| s[num] / s[den]));
            let (tl_ry, ch_ry, tl_ch, speedup) = (
                gm(THREADLAB, RAYON),
                gm(CHILI, RAYON),
                gm(THREADLAB, CHILI),
                gm(SERIAL, THREADLAB),
            );
            let mut cells = vec!["geometric mean".to_string()];
            cells.extend(std::iter::repeat_n(String::new(), ran.len()));
            cells.extend([ratio(tl_ry), ratio(ch_ry), ratio(tl_ch), ratio(speedup)]);
            table.row(cells);
            out.tables.push(table);
            for (v, name) in VARIANTS.iter().enumerate().filter(|(v, _)| *v != RAYON) {
                let value = gm(v, RAYON);
                // A variant with no workload here (Tokio at the quick size) has no mean.
                if !value.is_finite() {
                    continue;
                }
                out.rows.push(ctx.row(
                    name,
                    "geometric mean of time / rayon's",
                    threads,
                    "ratio",
                    value,
                    "×",
                ));
            }

            let mut chart = Chart::bars(
                &format!("workloads-vs-rayon-{threads}t"),
                &format!("workloads: time relative to Rayon ({threads} threads)"),
                workloads.iter().map(|w| w.name.clone()).collect(),
                "time / Rayon's time",
            );
            chart.log_y = true;
            for v in [SERIAL, THREADLAB, CHILI, 4]
                .into_iter()
                .filter(|v| ran.contains(v))
            {
                chart.add_by_index(VARIANTS[v], secs.iter().map(|s| s[v] / s[RAYON]));
            }
            chart.hlines.push(("rayon = 1".into(), 1.0));
            out.charts.push(chart);

            let worst = workloads
                .iter()
                .zip(&secs)
                .map(|(w, s)| (s[THREADLAB] / s[RAYON], &w.name))
                .fold(
                    (0.0, None),
                    |acc, (r, n)| if r > acc.0 { (r, Some(n)) } else { acc },
                );
            let slower_than_serial: Vec<&str> = workloads
                .iter()
                .zip(&secs)
                .filter(|(_, s)| s[THREADLAB] > s[SERIAL])
                .map(|(w, _)| w.name.as_str())
                .collect();
            findings.push(format!(
                "on {threads} thread(s) threadlab took {} of Rayon's time (geometric mean; worst {} \
                 on {}), {} of chili's on the join workloads, and ran {} than serial code{}",
                ratio(tl_ry),
                ratio(worst.0),
                worst.1.map_or("-", |n| n.as_str()),
                ratio(tl_ch),
                than_serial(speedup),
                if slower_than_serial.is_empty() {
                    String::new()
                } else {
                    format!(" (slower than serial on: {})", slower_than_serial.join(", "))
                }
            ));
        }
        let mut finding = findings.join("; ");
        if let Some(first) = finding.get_mut(0..1) {
            first.make_ascii_uppercase();
        }
        finding.push('.');
        Ok(Outcome {
            finding,
            notes: vec![
                "Each workload is written once over a join or a scope (src/lab/programs/); the serial \
                 variant makes the same calls with each half's result behind black_box."
                    .into(),
                "The sorts' and the multiply's times exclude refilling their input.".into(),
            ],
            ..out
        })
    }
}

/// A speed-up over serial code in words that match its value: `1.50× faster` above 1, `1.04×
/// slower` below it (the time ratio turned over), so that 0.96 never reads "0.96× faster".
fn than_serial(speedup: f64) -> String {
    if !speedup.is_finite() || speedup <= 0.0 {
        "at a speed not measured".into()
    } else if speedup >= 1.0 {
        format!("{} faster", ratio(speedup))
    } else {
        format!("{} slower", ratio(1.0 / speedup))
    }
}

#[cfg(test)]
mod words {
    use super::than_serial;

    #[test]
    fn a_speedup_below_one_reads_as_slower() {
        assert_eq!(than_serial(0.96), "1.04× slower");
        assert_eq!(than_serial(1.5), "1.50× faster");
        assert_eq!(than_serial(f64::NAN), "at a speed not measured");
    }
}
