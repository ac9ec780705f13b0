//! `falseshare` (fourth seed: "a lot of contention that is not as easily visible, e.g.
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
use crate::lab::{Ctx, ExpResult, Experiment, Outcome};
use crate::measure::{median, median_secs};
use crate::report::{svg::Chart, svg::Series, table::Table};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;
use threadlab::{CachePadded, Pool};

/// The experiment.
pub struct FalseShare;

/// Variant names (results.json) in table order.
/// `shared` is the reference: all workers on one counter (true sharing, the most a line can
/// travel), measured with `fetch_add` only (load + store would lose increments).
const VARIANTS: [&str; 3] = ["packed", "padded", "shared"];

/// Eight counters in one 64-byte cache line.
#[repr(align(64))]
#[derive(Default)]
struct Line([AtomicU64; 8]);

/// The counters of one run, laid out as the variant says.
enum Counters {
    Packed(Vec<Line>),
    Padded(Vec<CachePadded<AtomicU64>>),
    Shared(CachePadded<AtomicU64>),
}

impl Counters {
    fn new(variant: &str, n: usize) -> Counters {
        match variant {
            "packed" => Counters::Packed((0..n.div_ceil(8)).map(|_| Line::default()).collect()),
            "padded" => Counters::Padded((0..n).map(|_| CachePadded::default()).collect()),
            _ => Counters::Shared(CachePadded::default()),
        }
    }

    fn get(&self, k: usize) -> &AtomicU64 {
        match self {
            Counters::Packed(lines) => &lines[k / 8].0[k % 8],
            Counters::Padded(v) => &v[k],
            Counters::Shared(c) => c,
        }
    }
}

/// How a worker bumps its counter.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Bump {
    /// A relaxed load and a store: what `counts[k]++` on a shared array compiles to.
    LoadStore,
    /// A relaxed `fetch_add` (a locked read-modify-write on x86): a statistics counter.
    FetchAdd,
}

const BUMPS: [(Bump, &str); 2] = [
    (Bump::LoadStore, "load+store"),
    (Bump::FetchAdd, "fetch_add"),
];

/// Every worker adds `iters` to its own counter, one at a time; checks the totals. Returns the
/// fraction of the run during which all workers were counting at once (1.0 = fully parallel).
fn run_once(pool: &Pool, counters: &Counters, bump: Bump, iters: u64) -> Result<f64, String> {
    let n = pool.current_num_threads();
    for k in 0..n {
        // Relaxed: reset before the loop, which publishes it to the workers.
        counters.get(k).store(0, Ordering::Relaxed);
    }
    let spans = std::sync::Mutex::new(Vec::with_capacity(n));
    pool.install(|| {
        threadlab::for_each_static(0..n, |k| {
            let c = counters.get(k);
            let start = Instant::now();
            for _ in 0..iters {
                // Relaxed (both): only this worker writes this counter; the loop's end
                // publishes it.
                match bump {
                    Bump::LoadStore => c.store(c.load(Ordering::Relaxed) + 1, Ordering::Relaxed),
                    Bump::FetchAdd => {
                        c.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            let end = Instant::now();
            spans
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((start, end));
        })
    });
    let expected = match counters {
        Counters::Shared(_) => iters * n as u64,
        _ => iters,
    };
    for k in 0..n {
        let got = counters.get(k).load(Ordering::Relaxed);
        if got != expected {
            return Err(format!("counter {k} reached {got}, expected {expected}"));
        }
    }
    let spans = spans.into_inner().unwrap_or_else(|e| e.into_inner());
    Ok(overlap(&spans))
}

/// The share of the whole span (first start to last end) during which every span was running.
fn overlap(spans: &[(Instant, Instant)]) -> f64 {
    let (Some(first), Some(last_start), Some(first_end), Some(last)) = (
        spans.iter().map(|s| s.0).min(),
        spans.iter().map(|s| s.0).max(),
        spans.iter().map(|s| s.1).min(),
        spans.iter().map(|s| s.1).max(),
    ) else {
        return 0.0;
    };
    let whole = last.duration_since(first).as_secs_f64();
    if whole <= 0.0 {
        return 1.0;
    }
    first_end
        .saturating_duration_since(last_start)
        .as_secs_f64()
        / whole
}

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
        "The fourth seed's invisible contention: each worker increments its own counter, with \
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
            let pool = crate::tl::pool(threads)?;
            for (bump, bump_name) in BUMPS {
                let iters = iters_of(bump);
                let mut cell = Cell {
                    threads,
                    bump: bump_name,
                    ns: [f64::NAN; 3],
                    overlap: [0.0; 3],
                };
                for (v, name) in VARIANTS.iter().enumerate() {
                    if *name == "shared" && bump == Bump::LoadStore {
                        continue;
                    }
                    ctx.step(format!(
                        "falseshare: {name}, {bump_name}, {threads} workers"
                    ));
                    let counters = Counters::new(name, threads);
                    run_once(&pool, &counters, bump, iters / 10)?; // warm-up
                    let mut err = None;
                    let mut overlaps = Vec::new();
                    let secs = median_secs(ctx.repeat, || {
                        match run_once(&pool, &counters, bump, iters) {
                            Ok(o) => overlaps.push(o),
                            Err(e) => err = Some(e),
                        }
                    });
                    if let Some(e) = err {
                        return Err(e);
                    }
                    cell.ns[v] = secs * 1e9 / iters as f64;
                    cell.overlap[v] = median(&mut overlaps);
                    for (metric, value, unit) in [
                        ("seconds", secs, "s"),
                        ("ns_per_increment", cell.ns[v], "ns"),
                    ] {
                        rows.push(ctx.row(
                            name,
                            format!(
                                "{bump_name}, {} increments per worker",
                                group_thousands(iters)
                            ),
                            threads,
                            metric,
                            value,
                            unit,
                        ));
                    }
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
            chart.series.push(Series {
                name: (*name).into(),
                points: cells
                    .iter()
                    .enumerate()
                    .map(|(i, c)| (i as f64, c.ns[v]))
                    .collect(),
            });
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
            fmt::difference(r)
        );
    }
    let reference = if c.ns[2].is_finite() {
        format!(
            " (all workers on one shared counter: {} ns{})",
            fmt_ns(c.ns[2]),
            if fmt::same(c.ns[2] / c.ns[1]) {
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
        fmt::longer(r, "counters padded to their own lines"),
        fmt_ns(c.ns[1]),
        if fmt::same(r) {
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
    fn layouts_are_what_they_claim() {
        let Counters::Packed(lines) = Counters::new("packed", 3) else {
            panic!("packed")
        };
        let a = &lines[0].0[0] as *const AtomicU64 as usize;
        let b = &lines[0].0[2] as *const AtomicU64 as usize;
        assert_eq!(a % 64, 0);
        assert_eq!(b - a, 16, "neighbours in one line");
        let padded = Counters::new("padded", 3);
        let a = padded.get(0) as *const AtomicU64 as usize;
        let b = padded.get(1) as *const AtomicU64 as usize;
        assert!(b - a >= 128, "a line (pair) each");
    }

    #[test]
    fn every_worker_counts_its_own() {
        let pool = crate::tl::pool(3).unwrap();
        for v in VARIANTS {
            for (bump, _) in BUMPS
                .iter()
                .filter(|b| v != "shared" || b.0 == Bump::FetchAdd)
            {
                let bump = *bump;
                let o = run_once(&pool, &Counters::new(v, 3), bump, 1000).unwrap();
                assert!((0.0..=1.0).contains(&o), "{v}: overlap {o}");
            }
        }
    }

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
        let t = Instant::now();
        let d = std::time::Duration::from_millis(10);
        assert_eq!(overlap(&[(t, t + d), (t, t + d)]), 1.0);
        assert_eq!(overlap(&[(t, t + d), (t + d, t + 2 * d)]), 0.0);
    }
}
