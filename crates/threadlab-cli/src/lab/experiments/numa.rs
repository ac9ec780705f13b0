//! `numa` (*Multithreading and the Memory Subsystem*, "NUMA Optimizations"): the same static-schedule parallel sum over an
//! array whose pages were first touched (a) by one thread, (b) by the workers in no particular
//! order, or (c) by the workers with the same static schedule as the sum. Linux places a page on
//! the NUMA node of the thread that first touches it, so on a machine with several nodes (c)
//! makes every read local, (a) puts all pages on one node, and (b) scatters them. On one node
//! every page is local and no difference is expected; the experiment says so.
//!
//! The layout is read from `/sys/devices/system/node/node*/cpulist`. With several nodes the
//! workers are pinned (`sched_setaffinity`, from each worker via `Pool::install_on`) in two
//! placements, as in the article: spread over the nodes, and all on the first node.

use crate::fmt;
use crate::fmt::fmt_bytes;
use crate::fmt::fmt_secs;
use crate::lab::noise;
use crate::lab::programs::numa::{
    init, numa_nodes, pin_current_thread, placements, sum, SUM_PASSES,
};
use crate::lab::report::{svg::Chart, table::Table};
use crate::lab::stats::median;
use crate::lab::{Ctx, ExpResult, Experiment, Outcome, Variant};
use std::cell::RefCell;

/// The experiment.
pub struct Numa;

/// Variant names (results.json) in table order.
const VARIANTS: [&str; 3] = ["single", "unordered", "static"];

impl Experiment for Numa {
    fn name(&self) -> &'static str {
        "numa"
    }

    fn description(&self) -> &'static str {
        "The first-touch experiment of Johnny’s Software Lab’s “Multithreading and the Memory Subsystem”: a static-schedule parallel sum after \
         single-thread, unordered parallel, and static parallel initialisation, on this \
         machine's NUMA layout (read from /sys)."
    }

    fn run(&self, ctx: &Ctx) -> ExpResult {
        let bytes: usize = ctx.size.pick(4 << 20, 256 << 20, 4 << 30);
        let len = bytes / std::mem::size_of::<u64>();
        let nodes = numa_nodes();
        let mut out = Outcome::default();
        let mut findings = Vec::new();
        for &threads in &ctx.threads {
            for (placement, cpus) in &placements(&nodes, threads) {
                let pool = crate::lab::tl::pool(threads)?;
                for (k, set) in cpus.iter().enumerate() {
                    pool.install_on(k, || pin_current_thread(set))
                        .map_err(|e| e.to_string())??;
                }
                // Per variant: each run's init time (the sum's is the rounds' sample).
                let inits: [RefCell<Vec<f64>>; 3] = Default::default();
                let mut variants: Vec<Variant<'_>> = VARIANTS
                    .iter()
                    .zip(&inits)
                    .map(|(name, inits)| {
                        let (pool, mut run) = (&pool, 0u64);
                        Variant::measured(*name, move || {
                            let (data, init_secs) = init(pool, name, len, run + 10)?;
                            if run > 0 {
                                inits.borrow_mut().push(init_secs);
                            }
                            run += 1;
                            // Several passes; the median is the figure of this run.
                            let mut passes = Vec::new();
                            for _ in 0..SUM_PASSES {
                                passes.push(sum(pool, &data)?);
                            }
                            Ok(median(&mut passes))
                        })
                    })
                    .collect();
                let samples =
                    ctx.rounds(&format!("{placement}, {threads} threads"), &mut variants)?;
                drop(variants);
                let init_s: Vec<f64> = inits.map(|x| median(&mut x.into_inner())).to_vec();
                let sum_s: Vec<f64> = samples.iter().map(|s| s.median).collect();
                let config = format!("{}, {placement}", fmt_bytes(bytes as u64));
                let mut table = Table::new(
                    format!(
                        "{} array of u64: first touch, then a static-schedule sum; {threads} workers, {placement} (medians of {} runs, each the median of {SUM_PASSES} sums)",
                        fmt_bytes(bytes as u64),
                        ctx.repeat
                    ),
                    &["initialisation", "init time", "sum time", "sum ÷ static's sum", "sum bandwidth"],
                );
                for (v, name) in VARIANTS.iter().enumerate() {
                    table.row(vec![
                        (*name).into(),
                        fmt_secs(init_s[v]),
                        fmt_secs(sum_s[v]),
                        fmt::fmt_ratio(sum_s[v] / sum_s[2]),
                        format!("{:.1} GB/s", bytes as f64 / sum_s[v] / 1e9),
                    ]);
                    for (metric, value) in [("init_seconds", init_s[v]), ("sum_seconds", sum_s[v])]
                    {
                        out.rows.push(ctx.row(
                            name,
                            &config,
                            if *name == "single" && metric == "init_seconds" {
                                1
                            } else {
                                threads
                            },
                            metric,
                            value,
                            "s",
                        ));
                    }
                }
                out.tables.push(table);
                let slug: String = placement
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                    .collect();
                let mut chart = Chart::bars(
                    &format!("numa-{threads}t-{slug}"),
                    &format!("numa: {threads} workers, {placement}"),
                    vec!["init".into(), "sum".into()],
                    "milliseconds",
                );
                for (v, name) in VARIANTS.iter().enumerate() {
                    chart.add(
                        format!("{name} first touch"),
                        vec![(0.0, init_s[v] * 1e3), (1.0, sum_s[v] * 1e3)],
                    );
                }
                out.charts.push(chart);
                findings.push(finding(nodes.len(), threads, placement, &sum_s, &init_s));
            }
        }
        if nodes.len() < 2 {
            out.notes.push(format!(
                "This machine has {} NUMA node{} ({}): every page is local to every core, so where a page was first touched cannot change the sum; any difference in the table is noise or a cache effect, not NUMA. Run it on a machine with two or more nodes to see the effect.",
                nodes.len().max(1),
                if nodes.len() > 1 { "s" } else { "" },
                if nodes.is_empty() {
                    "no NUMA information in /sys; one node assumed".to_string()
                } else {
                    format!("node{}: cpus {:?}", nodes[0].0, nodes[0].1)
                }
            ));
        }
        out.notes.push("“Multithreading and the Memory Subsystem” (8 GB, 16 threads, two nodes of a Xeon Gold 5218): with 8 threads on each node the sum took 0.371 s after single-thread, 0.206 s after random and 0.140 s after static initialisation; with all 16 on one node, 0.225, 0.223 and 0.221 s. Initialisation time includes the page faults, which parallel initialisation spreads over the workers.".into());
        out.finding = findings.join(" ");
        Ok(out)
    }
}

/// The sentence for one placement. `sums` and `inits` are in [`VARIANTS`] order.
fn finding(nodes: usize, threads: usize, placement: &str, sums: &[f64], inits: &[f64]) -> String {
    let single = sums[0] / sums[2];
    let unordered = sums[0].max(sums[1]) / sums[0].min(sums[1]);
    let spread = sums.iter().cloned().fold(f64::MIN, f64::max)
        / sums.iter().cloned().fold(f64::MAX, f64::min);
    let sums_text = format!(
        "{} after single-thread, {} after unordered parallel and {} after static initialisation",
        fmt_secs(sums[0]),
        fmt_secs(sums[1]),
        fmt_secs(sums[2])
    );
    let init_text = format!(
        "initialising took {} on one thread and {} with the static loop",
        fmt_secs(inits[0]),
        fmt_secs(inits[2])
    );
    if nodes < 2 {
        let verdict = if noise::same(spread) {
            format!(
                "slowest ÷ fastest {}: no difference on this machine, as expected",
                fmt::fmt_ratio(spread)
            )
        } else {
            format!(
                "slowest ÷ fastest {}, a difference that page placement cannot cause on one node: other programs sharing the memory bus, or cache effects",
                fmt::fmt_ratio(spread)
            )
        };
        return format!(
            "One NUMA node, so no difference is expected: with {threads} workers the sum took {sums_text} ({verdict}); {init_text}."
        );
    }
    format!(
        "With {threads} workers {placement}, the sum after single-thread initialisation took {}, and after unordered initialisation {} ({sums_text}; {}); {init_text}.",
        noise::longer(single, "after static initialisation"),
        noise::longer(sums[1] / sums[2], "after static initialisation"),
        if noise::same(unordered) && noise::same(single) {
            "no difference on this machine"
        } else {
            "the first-touch placement mattered"
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_node_says_no_difference_is_expected() {
        let f = finding(1, 2, "one node", &[0.1, 0.1, 0.1], &[0.2, 0.1, 0.1]);
        assert!(f.contains("no difference is expected"), "{f}");
        assert!(f.contains("no difference on this machine"), "{f}");
        let f = finding(
            2,
            4,
            "spread over 2 nodes",
            &[0.3, 0.2, 0.1],
            &[0.2, 0.1, 0.1],
        );
        assert!(f.contains("3.00× as long as after static"), "{f}");
    }
}
