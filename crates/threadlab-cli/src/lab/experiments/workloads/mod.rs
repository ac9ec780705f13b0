//! `workloads`: well-known parallel programs that were not written for threadlab, each written
//! once over a runtime's `join` or scope (`crate::lab::programs`) and run with serial code,
//! threadlab, Rayon, chili (the join-only ones) and Tokio (skynet): fib, spice's and chili's
//! boxed tree (large, walked left subtree first and right subtree first, and 1,023 nodes where
//! the fork's cost dominates), skynet, the BOTS n-queens search (a scope per node), merge sort,
//! quick sort, a triangular loop and a recursive matrix multiply. (Tokio's skynet only with
//! `--full`: it takes seconds per run.) Every runtime runs a join's first closure first, on the
//! calling thread (chili's own `join` runs the second first: its adapter swaps them), so the
//! runtimes walk each kernel in the same order.
//!
//! `kernels.rs` says how each runtime runs each workload; this file times them: every variant of
//! every workload takes its turns in the same interleaved rounds (`ctx.rounds`, at least 5),
//! after one warm-up run each, and every run's result is checked against the serial one (the
//! sorts' against the standard library's sort). The figures are the medians over the rounds.

mod kernels;

use crate::fmt::fmt_secs;
use crate::lab::peers::each::{
    checked, CHILI, RAYON, RUNTIMES as VARIANTS, SERIAL, THREADLAB, TOKIO,
};
use crate::lab::peers::Runtimes;
use crate::lab::report::{svg::Chart, table::Table};
use crate::lab::stats::geomean;
use crate::lab::{Ctx, ExpResult, Experiment, Outcome, Row};
use kernels::{Inputs, Kernels, Workload};

/// The experiment.
pub struct Workloads;

/// The fewest rounds a figure is the median of, whatever `--repeat` says.
const MIN_ROUNDS: usize = 5;

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
        ctx.step("workloads: building inputs");
        let inputs = Inputs::new(ctx.size);
        let kernels = Kernels::new(&inputs);
        let mut out = Outcome::default();
        let mut findings = Vec::new();
        for &threads in &ctx.threads {
            let rt = Runtimes::new(threads)?;
            let workloads = kernels.workloads(&inputs, &rt);
            let names: Vec<String> = workloads.iter().map(|w| w.name.clone()).collect();
            let secs = time(ctx, threads, workloads)?;
            let ran: Vec<usize> = (0..VARIANTS.len())
                .filter(|&v| secs.iter().any(|s| s[v].is_finite()))
                .collect();
            out.tables
                .push(table(ctx, threads, &names, &secs, &ran, &mut out.rows));
            out.charts.push(chart(threads, &names, &secs, &ran));
            findings.push(finding(threads, &names, &secs));
        }
        let mut finding = findings.join("; ");
        if let Some(first) = finding.get_mut(0..1) {
            first.make_ascii_uppercase();
        }
        finding.push('.');
        Ok(Outcome {
            finding,
            notes: vec![
                "Each workload is written once over a join or a scope (src/lab/programs/); the \
                 serial variant makes the same calls with each half's result behind black_box."
                    .into(),
                "The sorts' and the multiply's times exclude refilling their input.".into(),
            ],
            ..out
        })
    }
}

/// Every variant of every workload in the same interleaved rounds, each run's checksum
/// checked: seconds per run by workload and variant (NaN where a variant did not run).
fn time(ctx: &Ctx, threads: usize, workloads: Vec<Workload<'_>>) -> Result<Vec<[f64; 5]>, String> {
    let mut secs = vec![[f64::NAN; 5]; workloads.len()];
    let mut at = Vec::new();
    let mut variants = Vec::new();
    for (w, Workload { name, expect, runs }) in workloads.into_iter().enumerate() {
        for (v, run) in runs.into_iter().enumerate() {
            if let Some(run) = run {
                variants.push(checked(format!("{name}, {}", VARIANTS[v]), expect, run));
                at.push((w, v));
            }
        }
    }
    let what = format!("{threads} threads");
    let samples = ctx.rounds_at_least(MIN_ROUNDS, &what, &mut variants)?;
    for ((w, v), s) in at.into_iter().zip(samples) {
        secs[w][v] = s.median;
    }
    Ok(secs)
}

/// The table of times and ratios with its geometric means, and their rows.
fn table(
    ctx: &Ctx,
    threads: usize,
    names: &[String],
    secs: &[[f64; 5]],
    ran: &[usize],
    rows: &mut Vec<Row>,
) -> Table {
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
             medians of {} interleaved rounds; lower ratios are better",
            ctx.repeat.max(MIN_ROUNDS)
        ),
        &header,
    );
    for (name, s) in names.iter().zip(secs) {
        let mut cells = vec![name.clone()];
        cells.extend(ran.iter().map(|&v| fmt_secs(s[v])));
        cells.push(ratio(s[THREADLAB] / s[RAYON]));
        cells.push(ratio(s[CHILI] / s[RAYON]));
        cells.push(ratio(s[THREADLAB] / s[CHILI]));
        cells.push(ratio(s[SERIAL] / s[THREADLAB]));
        table.row(cells);
        for (v, variant) in VARIANTS
            .iter()
            .enumerate()
            .filter(|(v, _)| s[*v].is_finite())
        {
            let t = if v == SERIAL { 1 } else { threads };
            rows.push(ctx.row(variant, name, t, "seconds", s[v], "s"));
        }
    }
    let gm = |num: usize, den: usize| geomean(secs.iter().map(|s| s[num] / s[den]));
    let mut cells = vec!["geometric mean".to_string()];
    cells.extend(std::iter::repeat_n(String::new(), ran.len()));
    cells.extend([
        ratio(gm(THREADLAB, RAYON)),
        ratio(gm(CHILI, RAYON)),
        ratio(gm(THREADLAB, CHILI)),
        ratio(gm(SERIAL, THREADLAB)),
    ]);
    table.row(cells);
    for (v, variant) in VARIANTS.iter().enumerate().filter(|(v, _)| *v != RAYON) {
        let value = gm(v, RAYON);
        // A variant with no workload here (Tokio at the quick size) has no mean.
        if value.is_finite() {
            let config = "geometric mean of time / rayon's";
            rows.push(ctx.row(variant, config, threads, "ratio", value, "×"));
        }
    }
    table
}

/// Each variant's time relative to Rayon's, per workload (a runtime that ran no workload here,
/// Tokio at the quick size, has no legend entry).
fn chart(threads: usize, names: &[String], secs: &[[f64; 5]], ran: &[usize]) -> Chart {
    let mut chart = Chart::bars(
        &format!("workloads-vs-rayon-{threads}t"),
        &format!("workloads: time relative to Rayon ({threads} threads)"),
        names.to_vec(),
        "time / Rayon's time",
    );
    chart.log_y = true;
    for v in [SERIAL, THREADLAB, CHILI, TOKIO] {
        if ran.contains(&v) {
            chart.add_by_index(VARIANTS[v], secs.iter().map(|s| s[v] / s[RAYON]));
        }
    }
    chart.hlines.push(("rayon = 1".into(), 1.0));
    chart
}

/// One pool size's sentence: threadlab against Rayon, chili and serial code.
fn finding(threads: usize, names: &[String], secs: &[[f64; 5]]) -> String {
    let gm = |num: usize, den: usize| geomean(secs.iter().map(|s| s[num] / s[den]));
    let worst = names
        .iter()
        .zip(secs)
        .map(|(n, s)| (s[THREADLAB] / s[RAYON], n))
        .fold(
            (0.0, None),
            |acc, (r, n)| if r > acc.0 { (r, Some(n)) } else { acc },
        );
    let slower_than_serial: Vec<&str> = names
        .iter()
        .zip(secs)
        .filter(|(_, s)| s[THREADLAB] > s[SERIAL])
        .map(|(n, _)| n.as_str())
        .collect();
    format!(
        "on {threads} thread(s) threadlab took {} of Rayon's time (geometric mean; worst {} \
         on {}), {} of chili's on the join workloads, and ran {} than serial code{}",
        ratio(gm(THREADLAB, RAYON)),
        ratio(worst.0),
        worst.1.map_or("-", |n| n.as_str()),
        ratio(gm(THREADLAB, CHILI)),
        than_serial(gm(SERIAL, THREADLAB)),
        if slower_than_serial.is_empty() {
            String::new()
        } else {
            format!(
                " (slower than serial on: {})",
                slower_than_serial.join(", ")
            )
        }
    )
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
