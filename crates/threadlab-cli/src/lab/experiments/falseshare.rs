//! `falseshare` (the allocator-contention follow-up to *The Whipping Boy Approach to Job Scheduling*: "a lot of contention that is not as easily visible, e.g.
//! constantly trying to write to the same cache line across threads"): every worker increments
//! its own counter, no two workers touch the same counter, and no lock is taken. With the
//! counters packed next to each other in one cache line, each write takes the line away from
//! the other cores (false sharing); padded to a line each with `threadlab::CachePadded`, every
//! core keeps its line.
//!
//! Each worker bumps its own counter a fixed number of times, in two ways: a relaxed load and
//! store (what `counts[thread]++` on a shared array compiles to) and a relaxed `fetch_add` (a
//! statistics counter). The workers start together through `threadlab::for_each_static`, which
//! gives worker `k` the index `k`, and the table says how much of the run they really spent
//! counting at the same time (a busy machine serialises them, and hides the effect).

use crate::fmt;
use crate::fmt::{fmt_ns, group_thousands};
use crate::lab::noise;
use crate::lab::programs::falseshare::{run_once, Bump, Counters, BUMPS};
use crate::lab::report::{svg::Chart, table::Table};
use crate::lab::stats::median;
use crate::lab::{Ctx, ExpResult, Experiment, Outcome, Turn, Variant};
use std::cell::RefCell;

/// The experiment.
pub struct FalseShare;

/// Variant names (results.json) in table order.
/// `shared` is the reference: all workers on one counter (true sharing, the most a line can
/// travel), measured with `fetch_add` only (load + store would lose increments).
const VARIANTS: [&str; 3] = ["packed", "padded", "shared"];

/// One measured cell: ns per increment and the workers' overlap, per variant.
struct Cell {
    threads: usize,
    bump: &'static str,
    ns: [f64; 3],
    overlap: [f64; 3],
}

impl Experiment for FalseShare {
    fn name(&self) -> &'static str {
        "falseshare"
    }

    fn description(&self) -> &'static str {
        "The invisible contention of the follow-up to “The Whipping Boy Approach to Job Scheduling” on allocator contention and thread states: each worker increments its own counter, with \
         the counters packed in one cache line vs padded to a line each (threadlab::CachePadded)."
    }

    fn run(&self, ctx: &Ctx) -> ExpResult {
        // Increments per worker for fetch_add; load + store is about four times cheaper and
        // gets four times as many, so both runs last long enough to overlap well.
        let base: u64 = ctx.size.pick(100_000, 40_000_000, 400_000_000);
        let iters_of = |bump: Bump| match bump {
            Bump::LoadStore => 4 * base,
            Bump::FetchAdd => base,
        };
        let mut rows = Vec::new();
        let mut cells: Vec<Cell> = Vec::new();
        for &threads in &ctx.threads {
            let pool = crate::lab::tl::pool(threads)?;
            for (bump, bump_name) in BUMPS {
                let iters = iters_of(bump);
                let mut cell = Cell {
                    threads,
                    bump: bump_name,
                    ns: [f64::NAN; 3],
                    overlap: [0.0; 3],
                };
                let config = format!(
                    "{bump_name}, {} increments per worker",
                    group_thousands(iters)
                );
                // `shared` is measured with fetch_add only (load + store would lose increments).
                let used: Vec<usize> = (0..VARIANTS.len())
                    .filter(|&v| !(VARIANTS[v] == "shared" && bump == Bump::LoadStore))
                    .collect();
                let counters: Vec<Counters> = used
                    .iter()
                    .map(|&v| Counters::new(VARIANTS[v], threads))
                    .collect();
                let overlaps = vec![RefCell::new(Vec::new()); used.len()];
                let mut variants: Vec<Variant<'_>> = used
                    .iter()
                    .zip(counters.iter().zip(&overlaps))
                    .map(|(&v, (counters, overlaps))| {
                        let pool = &pool;
                        let label = format!("{}, {bump_name}", VARIANTS[v]);
                        Variant::timed_by_turn(label, move |turn| {
                            let o = run_once(pool, counters, bump, turn.tenth_in_warm_up(iters))?;
                            if turn != Turn::WarmUp {
                                overlaps.borrow_mut().push(o);
                            }
                            Ok(())
                        })
                    })
                    .collect();
                let samples = ctx.rounds(&format!("{threads} workers"), &mut variants)?;
                drop(variants);
                for ((&v, s), overlaps) in used.iter().zip(samples).zip(overlaps) {
                    cell.ns[v] = s.median * 1e9 / iters as f64;
                    cell.overlap[v] = median(&mut overlaps.into_inner());
                    let name = VARIANTS[v];
                    rows.push(ctx.row(name, &config, threads, "seconds", s.median, "s"));
                    rows.push(ctx.row(
                        name,
                        &config,
                        threads,
                        "ns_per_increment",
                        cell.ns[v],
                        "ns",
                    ));
                }
                cells.push(cell);
            }
        }
        let mut table = Table::new(
            format!(
                "ns per increment of a worker's own counter ({} fetch_adds or {} load+stores per worker, all workers at once; medians of {} runs)",
                group_thousands(iters_of(Bump::FetchAdd)),
                group_thousands(iters_of(Bump::LoadStore)),
                ctx.repeat
            ),
            &[
                "workers",
                "increment",
                "packed in one line",
                "padded (CachePadded)",
                "packed ÷ padded",
                "one shared counter",
                "workers overlapped (packed / padded)",
            ],
        )
        .text_columns(2);
        for c in &cells {
            table.row(vec![
                c.threads.to_string(),
                c.bump.into(),
                fmt_ns(c.ns[0]),
                fmt_ns(c.ns[1]),
                fmt::fmt_ratio(c.ns[0] / c.ns[1]),
                fmt_ns(c.ns[2]),
                format!(
                    "{:.0}% / {:.0}%",
                    c.overlap[0] * 100.0,
                    c.overlap[1] * 100.0
                ),
            ]);
        }
        let mut chart = Chart::bars(
            "falseshare",
            "falseshare: ns per increment of a worker's own counter",
            cells
                .iter()
                .map(|c| format!("{}w {}", c.threads, c.bump))
                .collect(),
            "ns per increment",
        );
        for (v, name) in VARIANTS.iter().enumerate() {
            chart.add_by_index(*name, cells.iter().map(|c| c.ns[v]));
        }
        let mut notes = vec![
            "No lock and no shared counter is involved: the cost of the packed layout is the cache line moving between cores on every write, which no lock view or profiler's wait state shows. \"load+store\" is `counts[k] += 1` on a plain array; the store buffer can hide much of the line's travels. \"fetch_add\" is an atomic statistics counter, whose locked add must own the line every time. \"one shared counter\" (all workers on the same counter, fetch_add only) is the reference: the most the line can cost. When even that is hardly dearer than padded, the workers' CPUs share their cache (SMT siblings, or virtual CPUs on one physical core) and no layout can show false sharing.".into(),
        ];
        if cells
            .iter()
            .any(|c| c.threads > 1 && c.overlap[..2].iter().any(|&o| o < 0.8))
        {
            notes.push("In some runs the workers counted at the same time for less than 80% of the run (last column: a worker started late, was preempted, e.g. by other programs, or finished early, its core being faster at the time); false sharing only costs while the workers really run together.".into());
        }
        Ok(Outcome {
            finding: cells
                .iter()
                .filter(|c| c.threads > 1 || ctx.threads.len() == 1)
                .map(finding)
                .collect::<Vec<_>>()
                .join(" "),
            notes,
            rows,
            tables: vec![table],
            charts: vec![chart],
        })
    }
}

/// The sentence for one cell.
fn finding(c: &Cell) -> String {
    let r = c.ns[0] / c.ns[1];
    if c.threads == 1 {
        return format!(
            "With one worker nothing is shared: packed and padded counters cost {} and {} ns per {} ({}).",
            fmt_ns(c.ns[0]),
            fmt_ns(c.ns[1]),
            c.bump,
            noise::difference(r)
        );
    }
    let reference = if c.ns[2].is_finite() {
        format!(
            " (all workers on one shared counter: {} ns{})",
            fmt_ns(c.ns[2]),
            if noise::same(c.ns[2] / c.ns[1]) {
                ", no dearer than padded either: the cores share the line cheaply here"
            } else {
                ""
            }
        )
    } else {
        String::new()
    };
    format!(
        "With {} workers each bumping its own counter by {}, counters packed in one cache line took {} ns per increment, {} ({} ns): {}{reference}.",
        c.threads,
        c.bump,
        fmt_ns(c.ns[0]),
        noise::longer(r, "counters padded to their own lines"),
        fmt_ns(c.ns[1]),
        if noise::same(r) {
            "no difference on this machine"
        } else if r > 1.0 {
            "false sharing, with no lock in sight"
        } else {
            "the packed layout was faster"
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_finding_says_when_there_is_no_difference() {
        let cell = |ns: [f64; 3]| Cell {
            threads: 2,
            bump: "fetch_add",
            ns,
            overlap: [1.0; 3],
        };
        assert!(finding(&cell([1.0, 1.01, 1.02])).contains("no difference on this machine"));
        assert!(finding(&cell([1.0, 1.01, 1.02])).contains("share the line cheaply"));
        let f = finding(&cell([10.0, 1.0, 12.0]));
        assert!(
            f.contains("10× as long as") && f.contains("shared counter: 12.0 ns"),
            "{f}"
        );
    }
}
