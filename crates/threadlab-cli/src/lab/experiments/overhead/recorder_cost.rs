//! The recorder's own cost, measured by `overhead`: ns per recorded event (Tracy publishes
//! 2.25 ns per zone), next to what one read of the timestamp counter costs on this machine (the
//! floor of any per-event timestamp); the cost of a hook when no recording is on; and the
//! empty-spawn benchmark with recording off and on, interleaved run by run.

use crate::fmt::{fmt_ratio, fmt_secs};
use crate::lab::report::table::Table;
use crate::lab::stats::median;
use crate::lab::{Ctx, Row};
use std::hint::black_box;
use std::time::Instant;
use threadlab::trace::{self, hooks, Mode, TaskKind};
use threadlab::Pool;

/// What the recorder costs (see the module doc).
pub struct RecorderCost {
    /// The table for the report.
    pub table: Table,
    /// Rows for results.json.
    pub rows: Vec<Row>,
    /// One sentence for the finding.
    pub finding: String,
}

/// ns per call of `f` over `n` calls, median of `runs` runs; `mode` records around each run.
fn per_call(runs: usize, n: u64, mode: Option<Mode>, f: impl Fn(u64)) -> Result<f64, String> {
    let mut samples = Vec::new();
    for _ in 0..runs {
        let rec = match mode {
            Some(m) => Some(trace::try_start(m).map_err(|e| e.to_string())?),
            None => None,
        };
        let t = Instant::now();
        for i in 0..n {
            f(black_box(i));
        }
        samples.push(t.elapsed().as_nanos() as f64 / n as f64);
        if let Some(rec) = rec {
            let kept = rec.stop();
            if mode == Some(Mode::Full) && (kept.event_count() as u64) < n {
                return Err(format!(
                    "recorder: {} of {n} events kept in a full recording",
                    kept.event_count()
                ));
            }
        }
    }
    Ok(median(&mut samples))
}

/// The timestamp counter's cost (x86-64), the floor of a timestamped event.
fn rdtsc_ns(runs: usize, n: u64) -> f64 {
    #[cfg(target_arch = "x86_64")]
    {
        let mut samples = Vec::new();
        for _ in 0..runs {
            let t = Instant::now();
            let mut acc = 0u64;
            for _ in 0..n {
                // SAFETY: `rdtsc` has no preconditions on x86-64.
                acc = acc.wrapping_add(unsafe { core::arch::x86_64::_rdtsc() });
            }
            black_box(acc);
            samples.push(t.elapsed().as_nanos() as f64 / n as f64);
        }
        median(&mut samples)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (runs, n);
        f64::NAN
    }
}

/// Measures the recorder on `pool` (see the module doc).
pub fn measure(ctx: &Ctx, pool: &Pool, spawns: usize) -> Result<RecorderCost, String> {
    let n: u64 = ctx.size.pick(100_000, 2_000_000, 5_000_000);
    let runs = ctx.repeat.max(3);
    ctx.step("overhead: recorder");
    let empty = per_call(runs, n, None, |i| {
        black_box(i);
    })?;
    let hook_off = per_call(runs, n, None, |_| hooks::task_end())?;
    let flight = Some(Mode::FlightRecorder {
        bytes_per_thread: 1 << 20,
    });
    let event_flight = per_call(runs, n, flight, |_| hooks::task_begin(TaskKind::Join))?;
    let event_full = per_call(runs, n, Some(Mode::Full), |_| {
        hooks::task_begin(TaskKind::Join)
    })?;
    let tsc = rdtsc_ns(runs, n);

    // Empty spawns with recording off and on, interleaved so drift hits both alike.
    let mut off = Vec::new();
    let mut on = Vec::new();
    let mut events_per_task = 0.0;
    for _ in 0..runs {
        let t = Instant::now();
        crate::lab::tl::spawn_empty(pool, spawns);
        off.push(t.elapsed().as_secs_f64());
        let rec = trace::try_start(Mode::Full).map_err(|e| e.to_string())?;
        let t = Instant::now();
        crate::lab::tl::spawn_empty(pool, spawns);
        on.push(t.elapsed().as_secs_f64());
        events_per_task = rec.stop().event_count() as f64 / spawns as f64;
    }
    let (off, on) = (median(&mut off), median(&mut on));
    let slowdown = on / off - 1.0;

    let mut table = Table::new(
        format!("the recorder's cost: {n} calls per run, median of {runs} runs; empty spawns: {spawns} in a scope, recording off and on interleaved"),
        &["what", "cost", "note"],
    );
    let per = |ns: f64| fmt_secs((ns - empty).max(0.0) / 1e9);
    table.row(vec![
        "one event, flight recorder (steady state)".into(),
        per(event_flight),
        "above an empty loop".into(),
    ]);
    table.row(vec![
        "one event, full recording".into(),
        per(event_full),
        "includes first touches of fresh buffer memory".into(),
    ]);
    table.row(vec![
        "one rdtsc read (this machine)".into(),
        fmt_secs(tsc / 1e9),
        "the floor of any timestamped event".into(),
    ]);
    table.row(vec![
        "a hook, recording off".into(),
        per(hook_off),
        "one relaxed load and a branch".into(),
    ]);
    table.row(vec![
        "empty spawn, recording off".into(),
        fmt_secs(off / spawns as f64),
        String::new(),
    ]);
    table.row(vec![
        "empty spawn, recording on".into(),
        fmt_secs(on / spawns as f64),
        format!(
            "{:+.0}% ({events_per_task:.1} events per task)",
            slowdown * 100.0
        ),
    ]);
    let mut rows = Vec::new();
    let threads = pool.current_num_threads();
    for (metric, value, unit) in [
        (
            "recorder_event_flight",
            (event_flight - empty).max(0.0),
            "ns",
        ),
        ("recorder_event_full", (event_full - empty).max(0.0), "ns"),
        ("rdtsc", tsc, "ns"),
        ("recorder_hook_off", (hook_off - empty).max(0.0), "ns"),
        ("spawn_recording_off", off * 1e9 / spawns as f64, "ns"),
        ("spawn_recording_on", on * 1e9 / spawns as f64, "ns"),
        ("spawn_recording_slowdown", slowdown * 100.0, "%"),
    ] {
        rows.push(ctx.row(
            "threadlab",
            "recorder",
            if metric.starts_with("spawn") {
                threads
            } else {
                1
            },
            metric,
            value,
            unit,
        ));
    }
    let finding = format!(
        "The recorder costs {} per event in steady state ({} of it the timestamp read alone) and {} per hook when off; recording slows empty spawns by {:.0}% ({} of the time, {events_per_task:.1} events per task).",
        per(event_flight),
        fmt_secs(tsc / 1e9),
        per(hook_off),
        slowdown * 100.0,
        fmt_ratio(on / off),
    );
    Ok(RecorderCost {
        table,
        rows,
        finding,
    })
}
