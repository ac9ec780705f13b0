//! `alloc` (the allocator-contention follow-up to *The Whipping Boy Approach to Job Scheduling*): workers doing work that allocates and frees many small objects, the
//! way Unity's VFX update did, through (a) one size-class allocator behind a lock (the article's
//! persistent allocator: `threadlab::sync::Mutex::named("allocator", …)`, so the recorder sees
//! the lock), (b) a thread-caching allocator (each worker thread keeps its own free lists and
//! visits the shared, locked lists only in batches, as tcmalloc's thread caches do), and (c) the
//! system allocator (glibc's malloc, itself thread-caching), each with 2 and with 5 workers, and
//! with 1 as the baseline where nobody contends. The article measured 0.06 ms with 2 workers against
//! 2.41 ms with 5 for the same update, the time going into the allocator's lock.
//!
//! The timed runs record nothing. Afterwards (a) runs again, smaller, with the recorder on and a
//! `zone!("alloc")` / `zone!("free")` around each allocator call, once with 2 and once with 5
//! workers; both captures are saved as `alloc-locked-2w.tltrace` and `alloc-locked-5w.tltrace`
//! in the report's directory, ready for `threadlab compare`.

use crate::fmt;
use crate::fmt::{fmt_secs, group_thousands};
use crate::lab::noise;
use crate::lab::programs::alloc::{run, Heap, LIVE, WORK};
use crate::lab::report::{svg::Chart, table::Table};
use crate::lab::{Ctx, ExpResult, Experiment, Outcome, Variant};

/// The experiment.
pub struct Alloc;

/// Variant names (results.json) in table order.
const VARIANTS: [&str; 3] = ["locked", "thread-cache", "system"];

/// Runs (a) with the recorder on and saves the capture; returns its path and the trace.
fn record(
    workers: usize,
    ops: usize,
    dir: &std::path::Path,
) -> Result<(std::path::PathBuf, threadlab::trace::Trace), String> {
    let pool = crate::lab::tl::pool(workers)?;
    let heap = Heap::new("locked", workers);
    let path = dir.join(format!("alloc-locked-{workers}w.tltrace"));
    let rec = threadlab::trace::try_start(threadlab::trace::Mode::Full)
        .map_err(|e| format!("cannot record the {workers}-worker run: {e}"))?;
    let result = run(&pool, &heap, ops);
    let trace = rec.stop();
    result?;
    trace
        .save(&path)
        .map_err(|e| format!("cannot save the {workers}-worker capture: {e}"))?;
    Ok((path, trace))
}

impl Experiment for Alloc {
    fn name(&self) -> &'static str {
        "alloc"
    }

    fn description(&self) -> &'static str {
        "The allocator contention of the follow-up to “The Whipping Boy Approach to Job Scheduling” on allocator contention and thread states: small allocations and frees under one locked \
         allocator, a thread-caching allocator and the system allocator, with 2 and 5 workers; \
         the locked runs are recorded for `threadlab compare`."
    }

    fn run(&self, ctx: &Ctx) -> ExpResult {
        let ops: usize = ctx.size.pick(20_000, 6_000_000, 60_000_000);
        let recorded_ops: usize = ctx.size.pick(5_000, 100_000, 400_000);
        // The article's 2 and 5, and 1 as the uncontended baseline.
        let mut workers: Vec<usize> = vec![1, 2, 5];
        workers.extend(ctx.threads.iter().copied());
        workers.sort_unstable();
        workers.dedup();
        // secs[variant][worker count index]
        let mut secs = vec![vec![f64::NAN; workers.len()]; VARIANTS.len()];
        let mut rows = Vec::new();
        let config = format!("{} allocations + frees", group_thousands(ops as u64));
        for (wi, &w) in workers.iter().enumerate() {
            let pool = crate::lab::tl::pool(w)?;
            let heaps: Vec<Heap> = VARIANTS.iter().map(|name| Heap::new(name, w)).collect();
            let mut variants: Vec<Variant<'_>> = VARIANTS
                .iter()
                .zip(&heaps)
                .map(|(name, heap)| {
                    // The warm-up (slabs, caches, page faults) on a tenth of the operations.
                    let pool = &pool;
                    Variant::by_turn(*name, move |turn| {
                        run(pool, heap, turn.tenth_in_warm_up(ops as u64) as usize)
                    })
                })
                .collect();
            let samples = ctx.rounds(&format!("{w} workers"), &mut variants)?;
            for (v, (name, s)) in VARIANTS.iter().zip(samples).enumerate() {
                secs[v][wi] = s.median;
                let ns = s.median * 1e9 / ops as f64;
                rows.push(ctx.row(name, &config, w, "seconds", s.median, "s"));
                rows.push(ctx.row(name, &config, w, "ns_per_op", ns, "ns"));
            }
        }
        let at = |w: usize| workers.iter().position(|&x| x == w).unwrap_or(0);
        let (i1, i2, i5) = (at(1), at(2), at(5));
        let mut headers: Vec<String> = vec!["allocator".into()];
        headers.extend(workers.iter().map(|&w| fmt::plural(w, "worker")));
        headers.push("5 ÷ 2 workers".into());
        let header_refs: Vec<&str> = headers.iter().map(String::as_str).collect();
        let mut table = Table::new(
            format!(
                "time for {} small allocations and frees (with a little work on each object), medians of {} runs; ns per operation in brackets",
                group_thousands(ops as u64),
                ctx.repeat
            ),
            &header_refs,
        );
        for (v, name) in VARIANTS.iter().enumerate() {
            let mut row = vec![(*name).to_string()];
            for &s in &secs[v] {
                row.push(format!("{} ({:.0})", fmt_secs(s), s * 1e9 / ops as f64));
            }
            row.push(fmt::fmt_ratio(secs[v][i5] / secs[v][i2]));
            table.row(row);
        }
        let mut chart = Chart::bars(
            "alloc",
            "alloc: time for the same allocations",
            workers.iter().map(|&w| fmt::plural(w, "worker")).collect(),
            "milliseconds",
        );
        for (v, name) in VARIANTS.iter().enumerate() {
            chart.add_by_index(*name, secs[v].iter().map(|s| s * 1e3));
        }
        // The captures, after every timed run.
        let mut notes = Vec::new();
        let mut captures = Vec::new();
        for w in [2, 5] {
            ctx.step(format!("alloc: recording locked, {w} workers"));
            match record(w, recorded_ops, &ctx.out) {
                Ok((p, trace)) => {
                    captures.push(p.display().to_string());
                    // Its timeline in the report, beside the other capture's.
                    ctx.keep_trace(
                        &format!("alloc-locked-{w}w"),
                        &format!("the locked allocator, {w} workers"),
                        &trace,
                    );
                }
                Err(e) => notes.push(format!("No capture: {e}.")),
            }
        }
        let mut tables = vec![table];
        if captures.len() == 2 {
            match compare_captures(&captures[0], &captures[1]) {
                Ok(t) => tables.push(t),
                Err(e) => notes.push(format!("The captures could not be compared: {e}.")),
            }
            notes.push(format!(
                "Captures of the locked allocator ({} allocations, recorder on, zones \"alloc\" and \"free\" around each call, lock \"allocator\"): {} (2 workers) and {} (5 workers). Compare them with `threadlab compare {} {}`. No figure in the table was measured while recording.",
                group_thousands(recorded_ops as u64),
                captures[0],
                captures[1],
                captures[0],
                captures[1]
            ));
        }
        notes.push(format!(
            "Every task keeps {LIVE} objects of 16–256 bytes alive, frees the oldest for each new one, and does {WORK} multiply-adds on it; 4 tasks per worker share the work, so every column does the same total. This machine runs {} thread(s) at once: workers beyond that cannot contend more, they take turns (and one preempted while holding the lock makes the others wait).",
            std::thread::available_parallelism().map_or(1, |n| n.get())
        ));
        Ok(Outcome {
            finding: finding(&secs, i1, i2, i5),
            notes,
            rows,
            tables,
            charts: vec![chart],
        })
    }
}

/// `threadlab compare` of the 2- and 5-worker captures of the locked allocator, as the allocator-contention
/// article compares Unity captures with 2 and 5 workers: the rows with the largest difference of
/// their total first (the allocation zone and the allocator's lock, when the lock contends).
fn compare_captures(two: &str, five: &str) -> Result<Table, String> {
    let load = |p: &str| threadlab::trace::Trace::load(p).map_err(|e| e.to_string());
    let cmp = threadlab_doctor::compare(&load(two)?, &load(five)?);
    let mut t = Table::new(
        "compare: the locked allocator's captures, 2 workers (A) against 5 (B); rows sorted by the absolute difference of their total; \"~\" = within run-to-run noise"
            .to_string(),
        &["zone / lock", "count A", "total A", "median A", "count B", "total B", "median B", "B − A", "relative"],
    );
    let ms = |ns: u64| fmt_secs(ns as f64 / 1e9);
    for r in cmp.rows.iter().take(8) {
        t.row(vec![
            r.name.clone(),
            group_thousands(r.a.count),
            ms(r.a.total_ns),
            ms(r.a.median_ns),
            group_thousands(r.b.count),
            ms(r.b.total_ns),
            ms(r.b.median_ns),
            format!(
                "{}{}",
                if r.diff_total_ns < 0 { "−" } else { "+" },
                ms(r.diff_total_ns.unsigned_abs())
            ),
            match r.relative {
                Some(x) => format!("{:+.0}%{}", x * 100.0, if r.noise { " ~" } else { "" }),
                None => "new".into(),
            },
        ]);
    }
    Ok(t)
}

/// The sentence: the locked allocator's 5-worker time against its 2-worker time (the article's
/// comparison) and its 2-worker time against 1 worker's, then the locked allocator against the thread caches at 1, 2 and 5 workers (what
/// the lock costs with and without contention), then the other two allocators' 5 vs 2.
fn finding(secs: &[Vec<f64>], i1: usize, i2: usize, i5: usize) -> String {
    let five_vs_two = |v: usize| secs[v][i5] / secs[v][i2];
    let locked_vs_cache = |i: usize| secs[0][i] / secs[1][i];
    format!(
        "With one locked allocator, 5 workers took {} for the same allocations ({} vs {}: {}), and 2 workers took {}. The lock made the work take {} with 2 workers and {} with 5, against {} with a single worker, where nobody contends. 5 vs 2 workers: thread caches {}, system allocator {} (the allocator-contention article: 0.06 ms with 2 workers vs 2.41 ms with 5).",
        noise::longer(five_vs_two(0), "2 workers"),
        fmt_secs(secs[0][i5]),
        fmt_secs(secs[0][i2]),
        noise::difference(five_vs_two(0)),
        noise::longer(secs[0][i2] / secs[0][i1], "1 worker"),
        noise::longer(locked_vs_cache(i2), "through thread caches"),
        fmt::fmt_ratio(locked_vs_cache(i5)),
        fmt::fmt_ratio(locked_vs_cache(i1)),
        fmt::fmt_ratio(five_vs_two(1)),
        fmt::fmt_ratio(five_vs_two(2)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_allocator_hands_each_block_to_one_owner() {
        let pool = crate::lab::tl::pool(3).unwrap();
        for v in VARIANTS {
            let heap = Heap::new(v, 3);
            assert!(run(&pool, &heap, 30_000).is_ok(), "{v}");
        }
    }

    #[test]
    fn the_finding_states_the_ratios() {
        let secs = vec![
            vec![0.05, 0.1, 0.5],
            vec![0.05, 0.1, 0.1],
            vec![0.05, 0.1, 0.11],
        ];
        let f = finding(&secs, 0, 1, 2);
        assert!(
            f.contains("5 workers took 5.00× as long as 2 workers"),
            "{f}"
        );
        assert!(f.contains("about as long as through thread caches"), "{f}");
        assert!(
            f.contains("2 workers took 2.00× as long as 1 worker"),
            "{f}"
        );
        assert!(
            f.contains("5.00× with 5, against 1.00× with a single worker"),
            "{f}"
        );
    }
}
