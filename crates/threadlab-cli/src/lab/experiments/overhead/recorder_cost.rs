//! The recorder's own cost, measured by `overhead`: ns per recorded event (Tracy publishes
//! 2.25 ns per zone), next to what one read of the timestamp counter costs on this machine (the
//! floor of any per-event timestamp); the cost of a hook when no recording is on; and the
//! empty-spawn benchmark with recording off and on. Each figure is a variant of the same
//! interleaved rounds (`ctx.rounds`), so drift on a shared machine hits them alike.

use crate::fmt::{fmt_ratio, fmt_secs};
use crate::lab::report::table::Table;
use crate::lab::{Ctx, Row, Variant};
use std::cell::Cell;
use std::hint::black_box;
use std::time::Instant;
use threadlab::trace::{self, hooks, Mode, TaskKind};
use threadlab::Pool;

/// The fewest rounds a figure is the median of, whatever `--repeat` says.
const MIN_ROUNDS: usize = 3;

/// What the recorder costs (see the module doc).
pub struct RecorderCost {
    /// The table for the report.
    pub table: Table,
    /// Rows for results.json.
    pub rows: Vec<Row>,
    /// One sentence for the finding.
    pub finding: String,
}

/// ns per call of `f` over `n` calls, in one run; `mode` records around it.
fn per_call(n: u64, mode: Option<Mode>, f: impl Fn(u64)) -> Result<f64, String> {
    let rec = match mode {
        Some(m) => Some(trace::try_start(m).map_err(|e| e.to_string())?),
        None => None,
    };
    let t = Instant::now();
    for i in 0..n {
        f(black_box(i));
    }
    let ns = t.elapsed().as_nanos() as f64 / n as f64;
    if let Some(rec) = rec {
        let kept = rec.stop();
        if mode == Some(Mode::Full) && (kept.event_count() as u64) < n {
            return Err(format!(
                "recorder: {} of {n} events kept in a full recording",
                kept.event_count()
            ));
        }
    }
    Ok(ns)
}

/// ns per read of the timestamp counter over `n` reads (x86-64), the floor of a timestamped
/// event.
#[cfg(target_arch = "x86_64")]
fn rdtsc_ns(n: u64) -> f64 {
    let t = Instant::now();
    let mut acc = 0u64;
    for _ in 0..n {
        // SAFETY: `rdtsc` has no preconditions on x86-64.
        acc = acc.wrapping_add(unsafe { core::arch::x86_64::_rdtsc() });
    }
    black_box(acc);
    t.elapsed().as_nanos() as f64 / n as f64
}

/// The recorder's figures: medians of the rounds, ns per call unless said.
struct Figures {
    /// Calls per run.
    n: u64,
    rounds: usize,
    /// Empty spawns per run, and the pool's threads.
    spawns: usize,
    threads: usize,
    empty: f64,
    hook_off: f64,
    event_flight: f64,
    event_full: f64,
    /// One rdtsc read (NaN off x86-64).
    tsc: f64,
    /// Seconds per run of the empty spawns, recording off and on.
    off: f64,
    on: f64,
    events_per_task: f64,
}

/// Measures the recorder on `pool` (see the module doc).
pub fn measure(ctx: &Ctx, pool: &Pool, spawns: usize) -> Result<RecorderCost, String> {
    let f = time(ctx, pool, spawns)?;
    Ok(RecorderCost {
        table: f.table(),
        rows: f.rows(ctx),
        finding: f.finding(),
    })
}

/// Every figure a variant of the same interleaved rounds (at least three), its median.
fn time(ctx: &Ctx, pool: &Pool, spawns: usize) -> Result<Figures, String> {
    let n: u64 = ctx.size.pick(100_000, 2_000_000, 5_000_000);
    let flight = Some(Mode::FlightRecorder {
        bytes_per_thread: 1 << 20,
    });
    let event = |_| hooks::task_begin(TaskKind::Join);
    let events_per_task = Cell::new(0.0);
    let mut variants = vec![
        Variant::measured("an empty loop", || {
            per_call(n, None, |i| {
                black_box(i);
            })
        }),
        Variant::measured("a hook, recording off", || {
            per_call(n, None, |_| hooks::task_end())
        }),
        Variant::measured("an event, flight recorder", || per_call(n, flight, event)),
        Variant::measured("an event, full recording", || {
            per_call(n, Some(Mode::Full), event)
        }),
        Variant::timed("empty spawns, recording off", || {
            crate::lab::tl::spawn_empty(pool, spawns)
        }),
        Variant::measured("empty spawns, recording on", || {
            let rec = trace::try_start(Mode::Full).map_err(|e| e.to_string())?;
            let t = Instant::now();
            crate::lab::tl::spawn_empty(pool, spawns);
            let secs = t.elapsed().as_secs_f64();
            events_per_task.set(rec.stop().event_count() as f64 / spawns as f64);
            Ok(secs)
        }),
    ];
    #[cfg(target_arch = "x86_64")]
    variants.push(Variant::measured("an rdtsc read", || Ok(rdtsc_ns(n))));
    let samples = ctx.rounds_at_least(MIN_ROUNDS, "recorder", &mut variants)?;
    drop(variants);
    let median = |i: usize| samples.get(i).map_or(f64::NAN, |s| s.median);
    Ok(Figures {
        n,
        rounds: ctx.repeat.max(MIN_ROUNDS),
        spawns,
        threads: pool.current_num_threads(),
        empty: median(0),
        hook_off: median(1),
        event_flight: median(2),
        event_full: median(3),
        off: median(4),
        on: median(5),
        tsc: median(6),
        events_per_task: events_per_task.get(),
    })
}

impl Figures {
    /// `ns` above the empty loop's, written as a time.
    fn above_empty(&self, ns: f64) -> String {
        fmt_secs((ns - self.empty).max(0.0) / 1e9)
    }

    /// How much recording slowed the empty spawns, as a fraction.
    fn slowdown(&self) -> f64 {
        self.on / self.off - 1.0
    }

    fn table(&self) -> Table {
        let (n, runs, spawns) = (self.n, self.rounds, self.spawns);
        let mut table = Table::new(
            format!("the recorder's cost: {n} calls per run, median of {runs} runs; empty spawns: {spawns} in a scope, recording off and on; every figure's runs interleaved"),
            &["what", "cost", "note"],
        );
        let per_spawn = |secs: f64| fmt_secs(secs / spawns as f64);
        for (what, cost, note) in [
            (
                "one event, flight recorder (steady state)",
                self.above_empty(self.event_flight),
                "above an empty loop".to_string(),
            ),
            (
                "one event, full recording",
                self.above_empty(self.event_full),
                "includes first touches of fresh buffer memory".into(),
            ),
            (
                "one rdtsc read (this machine)",
                fmt_secs(self.tsc / 1e9),
                "the floor of any timestamped event".into(),
            ),
            (
                "a hook, recording off",
                self.above_empty(self.hook_off),
                "one relaxed load and a branch".into(),
            ),
            (
                "empty spawn, recording off",
                per_spawn(self.off),
                String::new(),
            ),
            (
                "empty spawn, recording on",
                per_spawn(self.on),
                format!(
                    "{:+.0}% ({:.1} events per task)",
                    self.slowdown() * 100.0,
                    self.events_per_task
                ),
            ),
        ] {
            table.row(vec![what.into(), cost, note]);
        }
        table
    }

    fn rows(&self, ctx: &Ctx) -> Vec<Row> {
        let above = |ns: f64| (ns - self.empty).max(0.0);
        let per_spawn = |secs: f64| secs * 1e9 / self.spawns as f64;
        [
            ("recorder_event_flight", above(self.event_flight), "ns"),
            ("recorder_event_full", above(self.event_full), "ns"),
            ("rdtsc", self.tsc, "ns"),
            ("recorder_hook_off", above(self.hook_off), "ns"),
            ("spawn_recording_off", per_spawn(self.off), "ns"),
            ("spawn_recording_on", per_spawn(self.on), "ns"),
            ("spawn_recording_slowdown", self.slowdown() * 100.0, "%"),
        ]
        .into_iter()
        .map(|(metric, value, unit)| {
            let threads = if metric.starts_with("spawn") {
                self.threads
            } else {
                1
            };
            ctx.row("threadlab", "recorder", threads, metric, value, unit)
        })
        .collect()
    }

    fn finding(&self) -> String {
        format!(
            "The recorder costs {} per event in steady state ({} of it the timestamp read alone) and {} per hook when off; recording slows empty spawns by {:.0}% ({} of the time, {:.1} events per task).",
            self.above_empty(self.event_flight),
            fmt_secs(self.tsc / 1e9),
            self.above_empty(self.hook_off),
            self.slowdown() * 100.0,
            fmt_ratio(self.on / self.off),
            self.events_per_task,
        )
    }
}
