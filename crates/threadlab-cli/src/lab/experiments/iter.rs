//! Parallel iterators: threadlab's `iter` (split by heartbeat, no grain size) against Rayon's
//! and against `std`'s sequential iterators, on the kernels of `programs/iter_kernels.rs`; and Rayon's
//! own iterators on threadlab's workers (the `rayon-core` package of `compat/`), so a user sees
//! what patching Rayon onto threadlab costs or saves.
//!
//! Each kernel runs as the same closure in each variant — sequential `std`, inside a Rayon
//! `ThreadPool::install`, inside a threadlab `Pool::install`, and inside Rayon's
//! `ThreadPool::install` in a program built with the patch (`compat/iter-bench`, a separate
//! build, driven as a subprocess: see `peers/rayon_on_threadlab.rs`) — with every variant's
//! result checked against the sequential one. Runs are interleaved (the order rotates every
//! repeat) and each figure is the median of `--repeat` runs.

use crate::fmt;
use crate::fmt::fmt_secs;
use crate::lab::peers::rayon_on_threadlab::{self as patched, Bench};
use crate::lab::programs::iter_kernels::{par_kernels, sequential, Data, KERNELS, SEED};
use crate::lab::report::{svg::Chart, table::Table};
use crate::lab::stats::{geomean, median};
use crate::lab::{Ctx, ExpResult, Experiment, Outcome};

pub struct Iter;

/// The variants, in column order; the last runs only when its bench could be built.
const VARIANTS: [&str; 4] = ["serial", "rayon", "threadlab", "rayon-on-threadlab"];

par_kernels!(
    on_threadlab,
    [crate::lab::programs::iter_kernels],
    threadlab
);
par_kernels!(on_rayon, [crate::lab::programs::iter_kernels], rayon);

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
        // At least five runs per figure, whatever `--repeat` says.
        let repeat = ctx.repeat.max(5);
        let mut out = Outcome::default();
        // Rayon's iterators on threadlab's workers need a build of their own (once per lab run).
        let bench = match patched::bench_binary(ctx) {
            Ok(bin) => Some(bin),
            Err(why) => {
                out.notes.push(format!("Rayon's iterators on threadlab's workers (the rayon-on-threadlab column) were not measured: {why}"));
                None
            }
        };
        let variants = if bench.is_some() { 4 } else { 3 };
        ctx.step("iter: making the inputs");
        let data = Data::new(
            squares_n,
            n,
            sort_n,
            nbody,
            crate::lab::programs::xorshift(SEED),
        );
        let mut findings = Vec::new();
        for &threads in &ctx.threads {
            let tl = crate::lab::tl::pool(threads)?;
            let ry = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .map_err(|e| format!("rayon pool: {e}"))?;
            let mut on_tl = match &bench {
                Some(bin) => {
                    ctx.step(format!(
                        "iter: starting {} ({threads} threads)",
                        VARIANTS[3]
                    ));
                    Some(Bench::start(
                        bin,
                        threads,
                        [squares_n, n as u64, sort_n as u64, nbody as u64],
                    )?)
                }
                None => None,
            };
            let mut medians = vec![[f64::NAN; 4]; KERNELS];
            for (k, med) in medians.iter_mut().enumerate() {
                let want = sequential(k, &data).0;
                let mut times: [Vec<f64>; 4] = Default::default();
                // One warm-up of each, then interleaved, rotating runs.
                for r in 0..=repeat {
                    for i in 0..variants {
                        let v = (i + r) % variants;
                        ctx.step(format!(
                            "iter: {}, {}, {threads} threads",
                            names[k], VARIANTS[v]
                        ));
                        let (got, secs) = match (v, on_tl.as_mut()) {
                            (0, _) => sequential(k, &data),
                            (1, _) => ry.install(|| on_rayon::run(k, &data)),
                            (2, _) => tl.install(|| on_threadlab::run(k, &data)),
                            (_, Some(b)) => b.run(k)?,
                            (_, None) => {
                                unreachable!("iter: the fourth variant runs only with its bench")
                            }
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
                for v in 0..variants {
                    med[v] = median(&mut times[v]);
                    out.rows
                        .push(ctx.row(VARIANTS[v], &names[k], threads, "seconds", med[v], "s"));
                }
            }
            drop(on_tl);
            let ratio = |v: usize, base: usize| -> Vec<f64> {
                medians.iter().map(|m| m[v] / m[base]).collect()
            };
            let (vs_rayon, vs_seq) = (ratio(2, 1), ratio(2, 0));
            let patched_vs_rayon = (variants == 4).then(|| ratio(3, 1));
            let mut head = vec!["kernel", "sequential std", "rayon", "threadlab"];
            if variants == 4 {
                head.push("rayon on threadlab");
            }
            head.extend(["threadlab ÷ rayon", "threadlab ÷ sequential"]);
            if variants == 4 {
                head.push("rayon on threadlab ÷ rayon");
            }
            let mut table = Table::new(
                format!("median seconds of {repeat} interleaved runs, {threads} worker(s)"),
                &head,
            );
            for (k, m) in medians.iter().enumerate() {
                let mut row = vec![names[k].clone()];
                row.extend(m[..variants].iter().map(|&t| fmt_secs(t)));
                row.extend([fmt::fmt_ratio(vs_rayon[k]), fmt::fmt_ratio(vs_seq[k])]);
                if let Some(p) = &patched_vs_rayon {
                    row.push(fmt::fmt_ratio(p[k]));
                }
                table.row(row);
            }
            let (g_rayon, g_seq) = (geomean(vs_rayon.clone()), geomean(vs_seq.clone()));
            let g_patched = patched_vs_rayon.clone().map(geomean);
            let mut row = vec!["geometric mean".to_string()];
            row.extend((0..variants).map(|_| String::new()));
            row.extend([fmt::fmt_ratio(g_rayon), fmt::fmt_ratio(g_seq)]);
            if let Some(g) = g_patched {
                row.push(fmt::fmt_ratio(g));
            }
            table.row(row);
            for (metric, value) in [
                ("geomean_vs_rayon", g_rayon),
                ("geomean_vs_sequential", g_seq),
            ] {
                out.rows
                    .push(ctx.row("threadlab", "all kernels", threads, metric, value, "ratio"));
            }
            if let Some(g) = g_patched {
                out.rows.push(ctx.row(
                    VARIANTS[3],
                    "all kernels",
                    threads,
                    "geomean_vs_rayon",
                    g,
                    "ratio",
                ));
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
            for (v, name) in VARIANTS.iter().enumerate().take(variants) {
                chart.add_by_index(*name, medians.iter().map(|m| m[v] / m[0]));
            }
            out.charts.push(chart);
            let worst = vs_rayon.iter().cloned().fold(0.0, f64::max);
            let mut finding = format!(
                "On {threads} worker(s) threadlab's parallel iterators took {} of Rayon's time (geometric mean; worst kernel {}) and {} of the sequential iterators'",
                fmt::fmt_ratio(g_rayon),
                fmt::fmt_ratio(worst),
                fmt::fmt_ratio(g_seq),
            );
            if let (Some(g), Some(p)) = (g_patched, &patched_vs_rayon) {
                finding += &format!(
                    "; Rayon's own iterators on threadlab's workers took {} of their time on Rayon's pool (worst kernel {})",
                    fmt::fmt_ratio(g),
                    fmt::fmt_ratio(p.iter().cloned().fold(0.0, f64::max)),
                );
            }
            findings.push(finding + ".");
        }
        out.notes.push("The sorts' times exclude copying the input (each run sorts a fresh copy). Every variant's result is checked against the sequential one. On a machine shared with other work, take differences under about 10% as noise.".into());
        if bench.is_some() {
            out.notes.push("rayon-on-threadlab: Rayon 1.12's iterators in a program built with the rayon-core package patched in (compat/iter-bench, built once by the lab), run by the lab as a subprocess, turn by turn with the other variants.".into());
        }
        out.finding = findings.join(" ");
        Ok(out)
    }
}
