//! `contention` (*Multithreading Isn't Free*): the work-sharing pool's one locked queue against threadlab's
//! stealing pool on the same workload — the `image` transform split into one band per worker
//! (the article's `parallel_for`), 64 bands, and one task per row. Timed rounds (recorder off, the
//! variants interleaved) give seconds per pass; then a short recorded run of each gives the queue
//! lock's hold and wait time — the article read 94.86 ms hold against 214.89 ms wait from Tracy over
//! 100 passes of 8 bands — and the doctor's verdict on the trace.

use crate::baselines::work_sharing::{WorkSharingPool, QUEUE_LOCK};
use crate::fmt::{fmt_ratio, fmt_secs};
use crate::lab::programs::image::{check_one_pass, fill, kernel};
use crate::lab::report::{svg::Chart, table::Table};
use crate::lab::{Ctx, ExpResult, Experiment, Outcome, Row, Turn, Variant};
use threadlab_doctor::{fmt_ns, Diagnosis};

/// The experiment.
pub struct Contention;

/// How one pass is split: a label and the number of tasks.
fn splits(threads: usize, rows: usize) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = vec![
        (format!("{threads} bands (one per worker)"), threads),
        ("64 bands".into(), 64),
        (format!("{rows} rows (one task per row)"), rows),
    ];
    out.retain(|(_, n)| *n <= rows);
    out.dedup_by_key(|(_, n)| *n);
    out
}

/// One pass of `variant` over `buf` in `tasks` pieces.
fn pass(
    variant: &str,
    ws: &WorkSharingPool,
    tl: &threadlab::Pool,
    buf: &mut [u8],
    pitch: usize,
    tasks: usize,
) -> Result<(), String> {
    if variant == "work-sharing" {
        return ws.for_each_band_in(buf, pitch, tasks, &kernel);
    }
    let rows = buf.len() / pitch;
    let band = rows.div_ceil(tasks).max(1) * pitch;
    tl.install(|| threadlab::for_each_chunk_mut(buf, band, |_, b| kernel(b)));
    Ok(())
}

const VARIANTS: [&str; 2] = ["work-sharing", "threadlab"];

/// “Multithreading Isn’t Free”’s pool size (`hardware_concurrency()` on its 8-thread MacBook).
const SEED_WORKERS: usize = 8;

/// What a recorded run showed.
struct Recorded {
    passes: usize,
    d: Diagnosis,
}

impl Experiment for Contention {
    fn name(&self) -> &'static str {
        "contention"
    }

    fn description(&self) -> &'static str {
        "The work-sharing pool of “Multithreading Isn’t Free: Performance Pitfalls Visualized”, whose workers all take tasks from one locked queue: \
         the lock's hold against wait time, and the pool against threadlab's stealing pool on \
         the same bands of the image transform."
    }

    fn run(&self, ctx: &Ctx) -> ExpResult {
        let (width, height) = ctx.size.pick((403, 302), (4032, 3024), (4032, 3024));
        let passes = ctx.size.pick(1, 10, 100);
        let pitch = width * 4;
        let mut buf = vec![0u8; pitch * height];
        let mut rows = Vec::new();
        let mut tables = Vec::new();
        let mut charts = Vec::new();
        let mut findings = Vec::new();
        // The pool sizes asked for, and the article's 8 workers (on a small machine more workers
        // than CPUs, which is how the article's 8-core contention shows on 2 cores).
        let mut sizes = ctx.threads.clone();
        if !sizes.contains(&SEED_WORKERS) {
            sizes.push(SEED_WORKERS);
        }
        for &threads in &sizes {
            let ws = WorkSharingPool::new(threads).map_err(|e| format!("work-sharing: {e}"))?;
            let tl = crate::lab::tl::pool(threads)?;
            let splits = splits(threads, height);
            // Each variant's warm-up is one checked pass; then interleaved rounds with the
            // recorder off.
            let buf_cell = std::cell::RefCell::new(std::mem::take(&mut buf));
            let mut variants = Vec::new();
            for (label, tasks) in &splits {
                for v in VARIANTS {
                    let (ws, tl, buf) = (&ws, &tl, &buf_cell);
                    variants.push(Variant::by_turn(format!("{v}, {label}"), move |turn| {
                        let buf = &mut *buf.borrow_mut();
                        if turn == Turn::WarmUp {
                            fill(buf);
                            pass(v, ws, tl, buf, pitch, *tasks)?;
                            return check_one_pass(buf, v).map(|()| f64::NAN);
                        }
                        let t = std::time::Instant::now();
                        for _ in 0..passes {
                            pass(v, ws, tl, buf, pitch, *tasks)?;
                        }
                        Ok(t.elapsed().as_secs_f64() / passes as f64)
                    }));
                }
            }
            let samples = ctx.rounds(&format!("{threads} threads"), &mut variants)?;
            drop(variants);
            buf = buf_cell.into_inner();
            let secs: Vec<f64> = samples.iter().map(|s| s.median).collect();
            // Short recorded runs: a few passes of the coarse splits, one pass of a task per row
            // (thousands of tasks, so the trace stays a few MB).
            let mut recorded: Vec<Option<Recorded>> = Vec::new();
            for (label, tasks) in &splits {
                for v in VARIANTS {
                    let fine = *tasks > 64;
                    if v == "threadlab" && *tasks == 64 {
                        recorded.push(None);
                        continue;
                    }
                    let n = if fine { 1 } else { ctx.size.pick(1, 3, 10) };
                    let stem = format!("contention-{v}-{tasks}-tasks-{threads}t");
                    let what = format!("{v}, {label}, {n} pass(es), {threads} threads");
                    let (r, d) = ctx.record(&stem, &what, || -> Result<(), String> {
                        for _ in 0..n {
                            pass(v, &ws, &tl, &mut buf, pitch, *tasks)?;
                        }
                        Ok(())
                    })?;
                    r?;
                    recorded.push(Some(Recorded { passes: n, d }));
                }
            }
            let out = summarize(ctx, threads, &splits, &secs, &recorded, passes);
            rows.extend(out.rows);
            tables.extend(out.tables);
            charts.extend(out.charts);
            findings.push(out.finding);
        }
        Ok(Outcome {
            finding: findings.join(" "),
            notes: vec![
                "Seconds per pass come from timed rounds with the recorder off; the lock figures \
                 and the doctor's findings from a separate short recorded run of each variant \
                 (a few passes, one for a task per row), per pass. “Multithreading Isn’t Free”’s figures: 94.86 ms \
                 hold and 214.89 ms wait over 100 passes of 8 bands on 8 threads."
                    .into(),
            ],
            rows,
            tables,
            charts,
        })
    }
}

struct Summary {
    rows: Vec<Row>,
    tables: Vec<Table>,
    charts: Vec<Chart>,
    finding: String,
}

fn summarize(
    ctx: &Ctx,
    threads: usize,
    splits: &[(String, usize)],
    secs: &[f64],
    recorded: &[Option<Recorded>],
    passes: usize,
) -> Summary {
    let repeat = ctx.repeat;
    let mut rows = Vec::new();
    let row = |variant: &str, config: &str, metric: &str, value: f64, unit: &str| {
        ctx.row(variant, config, threads, metric, value, unit)
    };
    let mut timing = Table::new(
        format!(
            "seconds per pass, pools of {threads} (median of {repeat} rounds of {passes} passes, \
             recorder off)"
        ),
        &[
            "split",
            "work-sharing",
            "threadlab",
            "work-sharing / threadlab",
        ],
    );
    let mut locks = Table::new(
        format!("recorded runs, pools of {threads}: the queue lock per pass, and the doctor"),
        &[
            "variant",
            "split",
            "acquired",
            "held",
            "waits",
            "waited",
            "wait / hold",
            "wait p99",
            "doctor",
        ],
    )
    .text_columns(2);
    let mut hold_wait = Vec::new();
    for (k, (label, tasks)) in splits.iter().enumerate() {
        let (ws, tl) = (secs[2 * k], secs[2 * k + 1]);
        timing.row(vec![
            label.clone(),
            fmt_secs(ws),
            fmt_secs(tl),
            fmt_ratio(ws / tl),
        ]);
        let config = format!("{tasks} tasks per pass");
        rows.push(row("work-sharing", &config, "seconds_per_pass", ws, "s"));
        rows.push(row("threadlab", &config, "seconds_per_pass", tl, "s"));
        for (j, v) in VARIANTS.iter().enumerate() {
            let Some(r) = &recorded[2 * k + j] else {
                continue;
            };
            let per = |ns: u64| ns / r.passes as u64;
            let verdict: Vec<&str> = r.d.findings.iter().map(|f| f.pitfall.as_str()).collect();
            let verdict = if verdict.is_empty() {
                "no pitfall".to_string()
            } else {
                verdict.join(", ")
            };
            // Only the work-sharing pool has the lock (the other pool's idle workers may still
            // log a last release into the threadlab run's trace).
            match r.d.lock(QUEUE_LOCK).filter(|_| *v == "work-sharing") {
                Some(l) => {
                    locks.row(vec![
                        (*v).into(),
                        label.clone(),
                        per_pass(l.hold.count, r.passes),
                        fmt_ns(per(l.hold.total_ns)),
                        per_pass(l.wait.count, r.passes),
                        fmt_ns(per(l.wait.total_ns)),
                        format!("{:.2}", l.wait_over_hold),
                        fmt_ns(l.wait.p99_ns),
                        verdict,
                    ]);
                    hold_wait.push((k, per(l.hold.total_ns), per(l.wait.total_ns)));
                    for (metric, value) in [
                        ("lock_hold_ns_per_pass", per(l.hold.total_ns) as f64),
                        ("lock_wait_ns_per_pass", per(l.wait.total_ns) as f64),
                    ] {
                        rows.push(row(v, &config, metric, value, "ns"));
                    }
                    rows.push(row(
                        v,
                        &config,
                        "lock_wait_over_hold",
                        l.wait_over_hold,
                        "x",
                    ));
                }
                None => {
                    let rt = &r.d.runtime;
                    locks.row(vec![
                        (*v).into(),
                        label.clone(),
                        "no lock".into(),
                        "-".into(),
                        format!("{} steals", rt.steals / r.passes as u64),
                        "-".into(),
                        "-".into(),
                        "-".into(),
                        verdict,
                    ]);
                }
            }
        }
    }
    let categories: Vec<String> = splits.iter().map(|(l, _)| l.clone()).collect();
    let mut time_chart = Chart::bars(
        &format!("contention-seconds-{threads}t"),
        &format!("contention: ms per pass, pools of {threads} (recorder off)"),
        categories.clone(),
        "ms per pass",
    );
    for (j, v) in VARIANTS.iter().enumerate() {
        time_chart.add_by_index(*v, (0..splits.len()).map(|k| secs[2 * k + j] * 1e3));
    }
    let mut lock_chart = Chart::bars(
        &format!("contention-lock-{threads}t"),
        &format!("contention: the work-sharing queue lock per pass, pools of {threads}"),
        categories,
        "ms per pass",
    );
    for (name, pick) in [("held", 1usize), ("waited", 2)] {
        lock_chart.add(
            name,
            hold_wait
                .iter()
                .map(|&(k, h, w)| (k as f64, if pick == 1 { h } else { w } as f64 / 1e6))
                .collect(),
        );
    }
    let finding = finding(threads, splits, secs, &hold_wait);
    Summary {
        rows,
        tables: vec![timing, locks],
        charts: vec![time_chart, lock_chart],
        finding,
    }
}

fn finding(
    threads: usize,
    splits: &[(String, usize)],
    secs: &[f64],
    hw: &[(usize, u64, u64)],
) -> String {
    let mut parts = Vec::new();
    // “Multithreading Isn’t Free”’s split (one band per worker) and the finest (a task per row).
    let shown = [0, splits.len() - 1];
    for &(k, hold, wait) in hw.iter().filter(|(k, _, _)| shown.contains(k)) {
        let (label, _) = &splits[k];
        parts.push(format!(
            "with {label} the queue lock was waited for {} per pass against {} held ({}) and the \
             work-sharing pool took {} threadlab's time",
            fmt_ns(wait),
            fmt_ns(hold),
            if hold > 0 {
                fmt_ratio(wait as f64 / hold as f64)
            } else {
                "-".into()
            },
            fmt_ratio(secs[2 * k] / secs[2 * k + 1])
        ));
    }
    format!(
        "On {threads} thread(s), {}. (“Multithreading Isn’t Free”: 214.89 ms waited against 94.86 ms held, 2.3×.)",
        parts.join("; ")
    )
}

/// A count per pass without truncating it: 3 waits over 5 passes are 0.6 a pass, not the "0"
/// that integer division printed beside "waited 25.8 µs".
fn per_pass(count: u64, passes: usize) -> String {
    let v = count as f64 / passes.max(1) as f64;
    if count > 0 && v < 0.05 {
        "< 0.1".into()
    } else if v >= 10.0 || v == v.trunc() {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

#[cfg(test)]
mod per_pass_tests {
    use super::per_pass;

    #[test]
    fn a_few_waits_over_many_passes_are_not_zero() {
        assert_eq!(per_pass(3, 5), "0.6");
        assert_eq!(per_pass(10, 5), "2");
        assert_eq!(per_pass(1234, 5), "247");
        assert_eq!(per_pass(0, 5), "0");
        assert_eq!(per_pass(1, 50), "< 0.1");
    }
}
