//! Parallel iterators: threadlab's `iter` (split by heartbeat, no grain size) against Rayon's
//! and against `std`'s sequential iterators, on the kernels of `programs/iter_kernels.rs`; and Rayon's
//! own iterators on threadlab's workers (the `rayon-core` package of `compat/`), so a user sees
//! what patching Rayon onto threadlab costs or saves.
//!
//! Each kernel runs as the same closure in each variant — sequential `std`, inside a Rayon
//! `ThreadPool::install`, inside a threadlab `Pool::install`, and inside Rayon's
//! `ThreadPool::install` in a program built with the patch (`compat/iter-bench`, a separate
//! build, driven as a subprocess: see `peers/rayon_on_threadlab.rs`) — with every variant's
//! result checked against the sequential one. Each kernel's variants take turns in interleaved
//! rounds (`ctx.rounds`, at least 5) after a warm-up run each; a figure is the median of its
//! rounds.

use crate::fmt;
use crate::fmt::fmt_secs;
use crate::lab::peers::rayon_on_threadlab::{self as patched, Bench};
use crate::lab::programs::iter_kernels::{par_kernels, sequential, Data, KERNELS, SEED};
use crate::lab::report::{svg::Chart, table::Table};
use crate::lab::stats::geomean;
use crate::lab::{Ctx, ExpResult, Experiment, Outcome, Row, Variant};

pub struct Iter;

/// The variants, in column order; the last runs only when its bench could be built.
const VARIANTS: [&str; 4] = ["serial", "rayon", "threadlab", "rayon-on-threadlab"];

par_kernels!(
    on_threadlab,
    [crate::lab::programs::iter_kernels],
    threadlab
);
par_kernels!(on_rayon, [crate::lab::programs::iter_kernels], rayon);

/// The fewest rounds a figure is the median of, whatever `--repeat` says.
const MIN_ROUNDS: usize = 5;

/// The kernels' sizes and names.
struct Sizes {
    squares: u64,
    n: usize,
    sort: usize,
    bodies: usize,
}

impl Sizes {
    fn of(size: crate::lab::Size) -> Sizes {
        Sizes {
            squares: size.pick(100_000, 30_000_000, 100_000_000),
            n: size.pick(20_000, 3_000_000, 10_000_000),
            sort: size.pick(20_000, 2_000_000, 10_000_000),
            bodies: size.pick(200, 1_500, 4_000),
        }
    }

    /// The kernels' names, by index (the rows' configs).
    fn names(&self) -> [String; KERNELS] {
        let Sizes {
            squares,
            n,
            sort,
            bodies,
        } = self;
        [
            format!("sum of squares, {squares} u64"),
            format!("map + collect, {n}"),
            format!("filter + count, {n}"),
            format!("zip + sum (dot), {n}"),
            format!("par_sort_unstable, {sort} u64"),
            format!("par_sort, {sort} u64"),
            format!("n-body step, {bodies} bodies"),
        ]
    }
}

impl Experiment for Iter {
    fn name(&self) -> &'static str {
        "iter"
    }

    fn description(&self) -> &'static str {
        "Parallel iterators: threadlab's heartbeat-split `par_iter` against Rayon's and std's \
         sequential iterators on a sum of squares, map+collect, filter+count, a dot product, \
         both sorts and an n-body step; and Rayon's own iterators on threadlab's workers (the \
         rayon-core package of compat/)."
    }

    fn run(&self, ctx: &Ctx) -> ExpResult {
        let sizes = Sizes::of(ctx.size);
        let names = sizes.names();
        let mut out = Outcome::default();
        // Rayon's iterators on threadlab's workers need a build of their own (once per lab run).
        let bench = match patched::bench_binary(ctx) {
            Ok(bin) => Some(bin),
            Err(why) => {
                out.notes.push(format!("Rayon's iterators on threadlab's workers (the rayon-on-threadlab column) were not measured: {why}"));
                None
            }
        };
        ctx.step("iter: making the inputs");
        let data = Data::new(
            sizes.squares,
            sizes.n,
            sizes.sort,
            sizes.bodies,
            crate::lab::programs::xorshift(SEED),
        );
        let mut findings = Vec::new();
        for &threads in &ctx.threads {
            let mut on_tl = match &bench {
                Some(bin) => {
                    ctx.step(format!(
                        "iter: starting {} ({threads} threads)",
                        VARIANTS[3]
                    ));
                    let s = &sizes;
                    let sizes = [s.squares, s.n as u64, s.sort as u64, s.bodies as u64];
                    Some(Bench::start(bin, threads, sizes)?)
                }
                None => None,
            };
            let medians = time(ctx, threads, &data, &names, on_tl.as_mut())?;
            drop(on_tl);
            for (k, m) in medians.iter().enumerate() {
                for (v, &secs) in m.iter().enumerate().filter(|(_, s)| !s.is_nan()) {
                    out.rows
                        .push(ctx.row(VARIANTS[v], &names[k], threads, "seconds", secs, "s"));
                }
            }
            let ratios = Ratios::of(&medians, bench.is_some());
            out.tables
                .push(ratios.table(threads, &names, &medians, ctx.repeat.max(MIN_ROUNDS)));
            ratios.rows(ctx, threads, &mut out.rows);
            out.charts
                .push(chart(threads, &names, &medians, ratios.variants));
            findings.push(ratios.finding(threads));
        }
        out.notes.push("The sorts' times exclude copying the input (each run sorts a fresh copy). Every variant's result is checked against the sequential one. On a machine shared with other work, take differences under about 10% as noise.".into());
        if bench.is_some() {
            out.notes.push("rayon-on-threadlab: Rayon 1.12's iterators in a program built with the rayon-core package patched in (compat/iter-bench, built once by the lab), run by the lab as a subprocess, turn by turn with the other variants.".into());
        }
        out.finding = findings.join(" ");
        Ok(out)
    }
}

/// Each kernel's variants in interleaved rounds, every result checked against the sequential
/// one: the median seconds per kernel and variant (NaN for rayon-on-threadlab without `bench`).
fn time(
    ctx: &Ctx,
    threads: usize,
    data: &Data,
    names: &[String; KERNELS],
    mut bench: Option<&mut Bench>,
) -> Result<Vec<[f64; 4]>, String> {
    let tl = crate::lab::tl::pool(threads)?;
    let ry = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| format!("rayon pool: {e}"))?;
    let mut medians = vec![[f64::NAN; 4]; KERNELS];
    for (k, med) in medians.iter_mut().enumerate() {
        let want = sequential(k, data).0;
        let checked = |v: usize, (got, secs): (u64, f64)| {
            if got == want {
                Ok(secs)
            } else {
                Err(format!(
                    "iter: {} on {} gave {got}, sequential {want}",
                    names[k], VARIANTS[v]
                ))
            }
        };
        let (tl, ry) = (&tl, &ry);
        let mut variants = vec![
            Variant::measured(VARIANTS[0], move || checked(0, sequential(k, data))),
            Variant::measured(VARIANTS[1], move || {
                checked(1, ry.install(|| on_rayon::run(k, data)))
            }),
            Variant::measured(VARIANTS[2], move || {
                checked(2, tl.install(|| on_threadlab::run(k, data)))
            }),
        ];
        if let Some(b) = bench.as_deref_mut() {
            variants.push(Variant::measured(VARIANTS[3], move || {
                checked(3, b.run(k)?)
            }));
        }
        let what = format!("{}, {threads} threads", names[k]);
        let samples = ctx.rounds_at_least(MIN_ROUNDS, &what, &mut variants)?;
        for (m, s) in med.iter_mut().zip(samples) {
            *m = s.median;
        }
    }
    Ok(medians)
}

/// threadlab's times against Rayon's and the sequential ones, and Rayon-on-threadlab's
/// against Rayon's, per kernel.
struct Ratios {
    /// How many variants ran (4 with the patched Rayon's bench, else 3).
    variants: usize,
    vs_rayon: Vec<f64>,
    vs_seq: Vec<f64>,
    patched_vs_rayon: Option<Vec<f64>>,
}

impl Ratios {
    fn of(medians: &[[f64; 4]], patched: bool) -> Ratios {
        let ratio = |v: usize, base: usize| -> Vec<f64> {
            medians.iter().map(|m| m[v] / m[base]).collect()
        };
        Ratios {
            variants: if patched { 4 } else { 3 },
            vs_rayon: ratio(2, 1),
            vs_seq: ratio(2, 0),
            patched_vs_rayon: patched.then(|| ratio(3, 1)),
        }
    }

    /// The geometric means: threadlab ÷ Rayon, threadlab ÷ sequential, patched Rayon ÷ Rayon.
    fn means(&self) -> (f64, f64, Option<f64>) {
        let g = |xs: &[f64]| geomean(xs.iter().copied());
        (
            g(&self.vs_rayon),
            g(&self.vs_seq),
            self.patched_vs_rayon.as_deref().map(g),
        )
    }

    /// The table of times and ratios, with a row of geometric means.
    fn table(
        &self,
        threads: usize,
        names: &[String],
        medians: &[[f64; 4]],
        rounds: usize,
    ) -> Table {
        let patched = self.patched_vs_rayon.is_some();
        let mut head = vec!["kernel", "sequential std", "rayon", "threadlab"];
        if patched {
            head.push("rayon on threadlab");
        }
        head.extend(["threadlab ÷ rayon", "threadlab ÷ sequential"]);
        if patched {
            head.push("rayon on threadlab ÷ rayon");
        }
        let mut table = Table::new(
            format!("median seconds of {rounds} interleaved runs, {threads} worker(s)"),
            &head,
        );
        for (k, m) in medians.iter().enumerate() {
            let mut row = vec![names[k].clone()];
            row.extend(m[..self.variants].iter().map(|&t| fmt_secs(t)));
            row.extend([
                fmt::fmt_ratio(self.vs_rayon[k]),
                fmt::fmt_ratio(self.vs_seq[k]),
            ]);
            if let Some(p) = &self.patched_vs_rayon {
                row.push(fmt::fmt_ratio(p[k]));
            }
            table.row(row);
        }
        let (g_rayon, g_seq, g_patched) = self.means();
        let mut row = vec!["geometric mean".to_string()];
        row.extend((0..self.variants).map(|_| String::new()));
        row.extend([fmt::fmt_ratio(g_rayon), fmt::fmt_ratio(g_seq)]);
        if let Some(g) = g_patched {
            row.push(fmt::fmt_ratio(g));
        }
        table.row(row);
        table
    }

    /// The geometric means' rows.
    fn rows(&self, ctx: &Ctx, threads: usize, rows: &mut Vec<Row>) {
        let (g_rayon, g_seq, g_patched) = self.means();
        for (metric, value) in [
            ("geomean_vs_rayon", g_rayon),
            ("geomean_vs_sequential", g_seq),
        ] {
            rows.push(ctx.row("threadlab", "all kernels", threads, metric, value, "ratio"));
        }
        if let Some(g) = g_patched {
            let metric = "geomean_vs_rayon";
            rows.push(ctx.row(VARIANTS[3], "all kernels", threads, metric, g, "ratio"));
        }
    }

    /// One pool size's sentence.
    fn finding(&self, threads: usize) -> String {
        let (g_rayon, g_seq, g_patched) = self.means();
        let worst = |xs: &[f64]| fmt::fmt_ratio(xs.iter().cloned().fold(0.0, f64::max));
        let mut finding = format!(
            "On {threads} worker(s) threadlab's parallel iterators took {} of Rayon's time (geometric mean; worst kernel {}) and {} of the sequential iterators'",
            fmt::fmt_ratio(g_rayon),
            worst(&self.vs_rayon),
            fmt::fmt_ratio(g_seq),
        );
        if let (Some(g), Some(p)) = (g_patched, &self.patched_vs_rayon) {
            finding += &format!(
                "; Rayon's own iterators on threadlab's workers took {} of their time on Rayon's pool (worst kernel {})",
                fmt::fmt_ratio(g),
                worst(p),
            );
        }
        finding + "."
    }
}

/// Each variant's time relative to the sequential one, per kernel.
fn chart(threads: usize, names: &[String], medians: &[[f64; 4]], variants: usize) -> Chart {
    let mut chart = Chart::bars(
        &format!("iter-{threads}t"),
        &format!(
            "parallel iterators: time relative to sequential std ({})",
            crate::fmt::plural(threads, "worker")
        ),
        names.to_vec(),
        "time ÷ sequential",
    );
    for (v, name) in VARIANTS.iter().enumerate().take(variants) {
        chart.add_by_index(*name, medians.iter().map(|m| m[v] / m[0]));
    }
    chart
}
