//! Parallel iterators: threadlab's `iter` (split by heartbeat, no grain size) against Rayon's
//! and against `std`'s sequential iterators, on the kernels Rayon users write: a sum of
//! squares, `map` + `collect`, `filter` + `count`, a dot product (`zip` + `sum`), both sorts of
//! random `u64`s, and one step of the all-pairs n-body simulation of rayon-demo
//! (`rayon-demo/src/nbody`, after the classic Barnes–Hut-free O(n²) update: each body's
//! acceleration is the sum of the other bodies' pulls, then positions move).
//!
//! Each kernel runs as the same closure in three variants — sequential `std`, inside a
//! threadlab `Pool::install`, inside a Rayon `ThreadPool::install` — with every variant's
//! result checked against the sequential one. Runs are interleaved (the order rotates every
//! repeat) and each figure is the median of `--repeat` runs.

use crate::fmt;
use crate::fmt::fmt_secs;
use crate::lab::{Ctx, ExpResult, Experiment, Outcome};
use crate::measure::median;
use crate::report::{svg::Chart, table::Table};
use std::time::Instant;

pub struct Iter;

const VARIANTS: [&str; 3] = ["serial", "rayon", "threadlab"];

/// What a kernel returns, for the cross-check of variants.
type Check = u64;

/// The data every kernel reads (built once per size).
struct Data {
    squares_n: u64,
    a: Vec<u64>,
    b: Vec<u64>,
    unsorted: Vec<u64>,
    bodies: Vec<Body>,
}

#[derive(Clone, Copy)]
struct Body {
    pos: [f64; 3],
    vel: [f64; 3],
    mass: f64,
}

impl Data {
    fn new(squares_n: u64, n: usize, sort_n: usize, bodies: usize) -> Data {
        let mut r = crate::workloads::xorshift(0x9E37_79B9_7F4A_7C15);
        let a = (0..n).map(|_| r() >> 44).collect();
        let b = (0..n).map(|_| r() >> 44).collect();
        let unsorted = (0..sort_n).map(|_| r()).collect();
        let mut f = || (r() >> 11) as f64 / (1u64 << 53) as f64;
        let bodies = (0..bodies)
            .map(|_| Body {
                pos: [f() * 100.0, f() * 100.0, f() * 100.0],
                vel: [f() - 0.5, f() - 0.5, f() - 0.5],
                mass: 1.0 + f(),
            })
            .collect();
        Data {
            squares_n,
            a,
            b,
            unsorted,
            bodies,
        }
    }
}

/// The pull of every body on `me` (softened, so close pairs stay finite).
fn accel(me: &Body, all: &[Body]) -> [f64; 3] {
    let mut acc = [0.0; 3];
    for o in all {
        let d = [
            o.pos[0] - me.pos[0],
            o.pos[1] - me.pos[1],
            o.pos[2] - me.pos[2],
        ];
        let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + 0.01;
        let s = o.mass / (r2 * r2.sqrt());
        for (a, dk) in acc.iter_mut().zip(d) {
            *a += dk * s;
        }
    }
    acc
}

/// One time step from the accelerations: a checksum of the new positions.
fn advance(bodies: &[Body], acc: &[[f64; 3]]) -> Check {
    let dt = 0.01;
    let mut sum = 0.0;
    for (b, a) in bodies.iter().zip(acc) {
        for ((p, v), a) in b.pos.iter().zip(&b.vel).zip(a) {
            sum += p + (v + a * dt) * dt;
        }
    }
    // The same sequential sum in every variant: the bits must match exactly.
    sum.to_bits()
}

/// The kernels, timed inside the pool (the sorts after copying their input), written once per
/// library with the same calls: `$p` is the crate whose prelude is in scope.
macro_rules! kernels {
    ($name:ident, $($p:tt)*) => {
        mod $name {
            use super::{accel, advance, Check, Data};
            use $($p)*::prelude::*;

            /// The kernel's result and its own time in seconds.
            pub fn run(k: usize, d: &Data) -> (Check, f64) {
                let mut t = std::time::Instant::now();
                let check = match k {
                    0 => (0..d.squares_n).into_par_iter().map(|x| (x & 1023) * (x & 1023)).sum(),
                    1 => {
                        let v: Vec<u64> = d.a.par_iter().map(|x| x * 3 + 1).collect();
                        v.len() as u64 + v[v.len() / 2]
                    }
                    2 => d.a.par_iter().filter(|x| *x % 3 == 0).count() as u64,
                    3 => d.a.par_iter().zip(&d.b).map(|(x, y)| x * y).sum(),
                    4 | 5 => {
                        let mut v = d.unsorted.clone();
                        t = std::time::Instant::now();
                        if k == 4 { v.par_sort_unstable() } else { v.par_sort() }
                        v[v.len() / 3] ^ v[v.len() - 1]
                    }
                    _ => {
                        let acc: Vec<[f64; 3]> =
                            d.bodies.par_iter().map(|b| accel(b, &d.bodies)).collect();
                        advance(&d.bodies, &acc)
                    }
                };
                (check, t.elapsed().as_secs_f64())
            }
        }
    };
}
kernels!(on_threadlab, threadlab);
kernels!(on_rayon, rayon);

/// The sequential `std` versions of the kernels.
fn sequential(k: usize, d: &Data) -> (Check, f64) {
    let mut t = Instant::now();
    let check = match k {
        0 => (0..d.squares_n).map(|x| (x & 1023) * (x & 1023)).sum(),
        1 => {
            let v: Vec<u64> = d.a.iter().map(|x| x * 3 + 1).collect();
            v.len() as u64 + v[v.len() / 2]
        }
        2 => d.a.iter().filter(|x| *x % 3 == 0).count() as u64,
        3 => d.a.iter().zip(&d.b).map(|(x, y)| x * y).sum(),
        4 | 5 => {
            let mut v = d.unsorted.clone();
            t = Instant::now();
            if k == 4 {
                v.sort_unstable()
            } else {
                v.sort()
            }
            v[v.len() / 3] ^ v[v.len() - 1]
        }
        _ => {
            let acc: Vec<[f64; 3]> = d.bodies.iter().map(|b| accel(b, &d.bodies)).collect();
            advance(&d.bodies, &acc)
        }
    };
    (check, t.elapsed().as_secs_f64())
}

fn geomean(xs: &[f64]) -> f64 {
    (xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len().max(1) as f64).exp()
}

impl Experiment for Iter {
    fn name(&self) -> &'static str {
        "iter"
    }

    fn description(&self) -> &'static str {
        "Parallel iterators: threadlab's heartbeat-split `par_iter` against Rayon's and std's \
         sequential iterators on a sum of squares, map+collect, filter+count, a dot product, \
         both sorts and an n-body step."
    }

    fn run(&self, ctx: &Ctx) -> ExpResult {
        let squares_n = ctx.size.pick(100_000, 30_000_000, 100_000_000);
        let n = ctx.size.pick(20_000, 3_000_000, 10_000_000);
        let sort_n = ctx.size.pick(20_000, 2_000_000, 10_000_000);
        let nbody = ctx.size.pick(200, 1_500, 4_000);
        let names = [
            format!("sum of squares, {squares_n} u64"),
            format!("map + collect, {n}"),
            format!("filter + count, {n}"),
            format!("zip + sum (dot), {n}"),
            format!("par_sort_unstable, {sort_n} u64"),
            format!("par_sort, {sort_n} u64"),
            format!("n-body step, {nbody} bodies"),
        ];
        let kernels = names.len();
        // At least five runs per figure, whatever `--repeat` says.
        let repeat = ctx.repeat.max(5);
        ctx.step("iter: making the inputs");
        let data = Data::new(squares_n, n, sort_n, nbody);
        let mut out = Outcome::default();
        let mut findings = Vec::new();
        for &threads in &ctx.threads {
            let tl = crate::tl::pool(threads)?;
            let ry = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .map_err(|e| format!("rayon pool: {e}"))?;
            let mut medians = vec![[0.0f64; 3]; kernels];
            for (k, med) in medians.iter_mut().enumerate() {
                let want = sequential(k, &data).0;
                let mut times: [Vec<f64>; 3] = Default::default();
                // One warm-up of each, then interleaved, rotating runs.
                for r in 0..=repeat {
                    for i in 0..3 {
                        let v = (i + r) % 3;
                        ctx.step(format!(
                            "iter: {}, {}, {threads} threads",
                            names[k], VARIANTS[v]
                        ));
                        let (got, secs) = match v {
                            0 => sequential(k, &data),
                            1 => ry.install(|| on_rayon::run(k, &data)),
                            _ => tl.install(|| on_threadlab::run(k, &data)),
                        };
                        if got != want {
                            return Err(format!(
                                "iter: {} on {} gave {got}, sequential {want}",
                                names[k], VARIANTS[v]
                            ));
                        }
                        if r > 0 {
                            times[v].push(secs);
                        }
                    }
                }
                for v in 0..3 {
                    med[v] = median(&mut times[v]);
                    out.rows
                        .push(ctx.row(VARIANTS[v], &names[k], threads, "seconds", med[v], "s"));
                }
            }
            let vs_rayon: Vec<f64> = medians.iter().map(|m| m[2] / m[1]).collect();
            let vs_seq: Vec<f64> = medians.iter().map(|m| m[2] / m[0]).collect();
            let mut table = Table::new(
                format!("median seconds of {repeat} interleaved runs, {threads} worker(s)"),
                &[
                    "kernel",
                    "sequential std",
                    "rayon",
                    "threadlab",
                    "threadlab ÷ rayon",
                    "threadlab ÷ sequential",
                ],
            );
            for (k, m) in medians.iter().enumerate() {
                table.row(vec![
                    names[k].clone(),
                    fmt_secs(m[0]),
                    fmt_secs(m[1]),
                    fmt_secs(m[2]),
                    fmt::fmt_ratio(vs_rayon[k]),
                    fmt::fmt_ratio(vs_seq[k]),
                ]);
            }
            let (g_rayon, g_seq) = (geomean(&vs_rayon), geomean(&vs_seq));
            table.row(vec![
                "geometric mean".into(),
                String::new(),
                String::new(),
                String::new(),
                fmt::fmt_ratio(g_rayon),
                fmt::fmt_ratio(g_seq),
            ]);
            for (metric, value) in [
                ("geomean_vs_rayon", g_rayon),
                ("geomean_vs_sequential", g_seq),
            ] {
                out.rows
                    .push(ctx.row("threadlab", "all kernels", threads, metric, value, "ratio"));
            }
            out.tables.push(table);
            let mut chart = Chart::bars(
                &format!("iter-{threads}t"),
                &format!(
                    "parallel iterators: time relative to sequential std ({})",
                    crate::fmt::plural(threads, "worker")
                ),
                names.to_vec(),
                "time ÷ sequential",
            );
            for (v, name) in VARIANTS.iter().enumerate() {
                chart.add_by_index(*name, medians.iter().map(|m| m[v] / m[0]));
            }
            out.charts.push(chart);
            let worst = vs_rayon.iter().cloned().fold(0.0, f64::max);
            findings.push(format!(
                "On {threads} worker(s) threadlab's parallel iterators took {} of Rayon's time (geometric mean; worst kernel {}) and {} of the sequential iterators'.",
                fmt::fmt_ratio(g_rayon),
                fmt::fmt_ratio(worst),
                fmt::fmt_ratio(g_seq),
            ));
        }
        out.notes.push("The sorts' times exclude copying the input (each run sorts a fresh copy). Every variant's result is checked against the sequential one. On a machine shared with other work, take differences under about 10% as noise.".into());
        out.finding = findings.join(" ");
        Ok(out)
    }
}
