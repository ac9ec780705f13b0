//! `division` (*Multithreading and the Memory Subsystem*, "Divide the Data Set among CPU Cores"): binary searches into a sorted
//! array. One dispatching thread makes packets of 128 random lookups and sends each packet
//! either round-robin to the workers, every worker searching the whole array ("no division"),
//! or to the worker that owns the part of the array the lookups fall into, each worker
//! searching only its part ("division"): less data per core, so more of it stays in that core's
//! own caches. Packets reach their worker through `Pool::spawn_on`. The figure is the mean time
//! a worker takes to process one packet, over all packets of a run, and its spread over runs.
//! “Multithreading and the Memory Subsystem”’s Xeon (8 lookup threads): 1.16× at 16 kB to 1.47× at 64 MB in favour of division.

use crate::fmt;
use crate::fmt::fmt_bytes;
use crate::fmt::fmt_ns;
use crate::lab::noise;
use crate::lab::programs::division::{run_once, Sorted, PACKET};
use crate::lab::report::{svg::Chart, table::Table};
use crate::lab::{Ctx, ExpResult, Experiment, Outcome, Turn, Variant};
use std::cell::RefCell;

/// The experiment.
pub struct Division;

/// Variant names (results.json) in table order.
const VARIANTS: [&str; 2] = ["no-division", "division"];

fn mean_sd(xs: &[f64]) -> (f64, f64) {
    let n = xs.len().max(1) as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
    (mean, var.sqrt())
}

impl Experiment for Division {
    fn name(&self) -> &'static str {
        "division"
    }

    fn description(&self) -> &'static str {
        "The binary searches in packets of 128 of Johnny’s Software Lab’s “Multithreading and the Memory Subsystem”: every worker searching the whole \
         sorted array vs each worker searching only its own part (packets routed by one \
         dispatching thread), for arrays from 16 kB up."
    }

    fn run(&self, ctx: &Ctx) -> ExpResult {
        const KB: usize = 1 << 10;
        const MB: usize = 1 << 20;
        let sizes: Vec<usize> = ctx.size.pick(
            vec![16 * KB, 256 * KB],
            vec![16 * KB, 256 * KB, MB, 4 * MB, 16 * MB, 64 * MB],
            vec![
                16 * KB,
                64 * KB,
                256 * KB,
                MB,
                4 * MB,
                16 * MB,
                64 * MB,
                256 * MB,
            ],
        );
        let packets = ctx.size.pick(40, 3_000, 100_000);
        let mut out = Outcome::default();
        let mut findings = Vec::new();
        for &threads in &ctx.threads {
            let pool = crate::lab::tl::pool(threads)?;
            // Per size: (mean, sd) per variant, in ns per packet.
            let mut grid: Vec<(usize, [(f64, f64); 2])> = Vec::new();
            for &bytes in &sizes {
                let data = Sorted::new(bytes, threads);
                // Each run's mean time per packet; the warm-up (caches, page faults) on a
                // quarter of the packets. The figure is the mean of the runs' means.
                let run_means = [RefCell::new(Vec::new()), RefCell::new(Vec::new())];
                let mut variants: Vec<Variant<'_>> = (0..2)
                    .map(|v| {
                        let (pool, data, means) = (&pool, &data, &run_means[v]);
                        Variant::timed_by_turn(VARIANTS[v], move |turn| {
                            let (n, seed) = match turn {
                                Turn::WarmUp => (packets / 4 + 1, 7 + v as u64),
                                Turn::Round(r) => (
                                    packets,
                                    0x2545_F491_4F6C_DD1D ^ ((r as u64) << 8) ^ bytes as u64,
                                ),
                            };
                            let times = run_once(pool, data, v == 1, n, seed)?;
                            if turn != Turn::WarmUp {
                                let mean = times.iter().sum::<u64>() as f64 / times.len() as f64;
                                means.borrow_mut().push(mean);
                            }
                            Ok(())
                        })
                    })
                    .collect();
                let what = format!("{}, {threads} threads", fmt_bytes(bytes as u64));
                ctx.rounds(&what, &mut variants)?;
                drop(variants);
                let run_means = run_means.map(RefCell::into_inner);
                let stats = [mean_sd(&run_means[0]), mean_sd(&run_means[1])];
                for (v, (mean, sd)) in stats.iter().enumerate() {
                    let config = format!("{} sorted array", fmt_bytes(bytes as u64));
                    for (metric, value) in [("ns_per_packet", *mean), ("ns_per_packet_sd", *sd)] {
                        out.rows
                            .push(ctx.row(VARIANTS[v], &config, threads, metric, value, "ns"));
                    }
                }
                grid.push((bytes, stats));
            }
            let mut table = Table::new(
                format!(
                    "ns to process one packet of {PACKET} lookups, mean (sd over {} runs of {packets} packets); {threads} worker(s) + 1 dispatching thread",
                    ctx.repeat
                ),
                &["sorted array", "no division", "division", "no division ÷ division"],
            );
            for (bytes, s) in &grid {
                table.row(vec![
                    fmt_bytes(*bytes as u64),
                    format!("{} ({})", fmt_ns(s[0].0), fmt_ns(s[0].1)),
                    format!("{} ({})", fmt_ns(s[1].0), fmt_ns(s[1].1)),
                    fmt::fmt_ratio(s[0].0 / s[1].0),
                ]);
            }
            out.tables.push(table);
            let mut chart = Chart::bars(
                &format!("division-{threads}t"),
                &format!("division: ns per {PACKET}-lookup packet ({threads} workers)"),
                grid.iter().map(|(b, _)| fmt_bytes(*b as u64)).collect(),
                "ns per packet",
            );
            chart.log_y = true;
            for (v, name) in VARIANTS.iter().enumerate() {
                chart.add_by_index(*name, grid.iter().map(|(_, s)| s[v].0));
            }
            out.charts.push(chart);
            findings.push(finding(threads, &grid));
        }
        Ok(Outcome {
            finding: findings.join(" "),
            notes: vec![
                format!(
                    "Lookups are uniform over the array's range, so every worker is equally busy in both variants (as in “Multithreading and the Memory Subsystem”). The dispatcher makes all of a run's {packets} packets up front, then waits; its leftover, partly filled packets are not sent. The table's spread is the standard deviation of the per-run means."
                ),
                "“Multithreading and the Memory Subsystem”’s Xeon Gold 5218 with 8 lookup threads: 7,872 vs 6,754 ns at 16 kB (1.16×) up to 47,359 vs 32,146 ns at 64 MB (1.47×). The gain needs per-core caches that the whole array overflows but one worker's part fits: look at the L2 size in the machine block above.".into(),
            ],
            ..out
        })
    }
}

/// The sentence for one pool size.
fn finding(threads: usize, grid: &[(usize, [(f64, f64); 2])]) -> String {
    let ratios: Vec<(usize, f64)> = grid.iter().map(|(b, s)| (*b, s[0].0 / s[1].0)).collect();
    let (Some(best), Some(worst)) = (
        ratios.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1)),
        ratios.iter().copied().min_by(|a, b| a.1.total_cmp(&b.1)),
    ) else {
        return "No array size was measured.".into();
    };
    let range = format!(
        "{} to {}",
        fmt_bytes(grid[0].0 as u64),
        fmt_bytes(grid[grid.len() - 1].0 as u64)
    );
    if threads == 1 {
        return format!(
            "With one worker there is nothing to divide: both variants search the whole array (ratios {} to {} over {range}).",
            fmt::fmt_ratio(worst.1),
            fmt::fmt_ratio(best.1)
        );
    }
    if ratios.iter().all(|(_, r)| noise::same(*r)) {
        return format!(
            "Dividing the sorted array between {threads} workers made no difference on this machine: from {range}, a packet took between {} and {} as long without division as with it (all within {:.0}%).",
            fmt::fmt_ratio(worst.1),
            fmt::fmt_ratio(best.1),
            noise::NOISE * 100.0
        );
    }
    format!(
        "With {threads} workers, a {PACKET}-lookup packet searched in the whole array took {} at {} and {} at {} (“Multithreading and the Memory Subsystem”: 1.16× at 16 kB to 1.47× at 64 MB).",
        noise::longer(best.1, "one searched in the worker's own part"),
        fmt_bytes(best.0 as u64),
        noise::longer(worst.1, "with division"),
        fmt_bytes(worst.0 as u64),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_state_the_ratio() {
        let grid = [(16 << 10, [(100.0, 1.0), (99.0, 1.0)])];
        assert!(finding(2, &grid).contains("no difference on this machine"));
        let grid = [(16 << 10, [(150.0, 1.0), (100.0, 1.0)])];
        assert!(finding(2, &grid).contains("1.50× as long as"));
    }
}
