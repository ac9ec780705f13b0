//! `threadlab lab`: the experiments and everything only they use. This file holds the
//! [`Experiment`] trait and the runner; the rest, by room:
//!
//! - `command.rs`: the command itself (which experiments, the output files, the machine checks).
//! - `ctx.rs`: what an experiment runs with ([`Ctx`]) and the rows it returns; `rounds.rs`: the
//!   one way every experiment times its variants (a warm-up, then interleaved rounds);
//!   `stats.rs`: medians, percentiles, geometric means; `bounds.rs`: the physical bounds every
//!   row is checked against before it is printed; `traces.rs`: recorded runs and the doctor's
//!   findings on them; `worker_time.rs`: where a recorded run's workers spent their CPU (in
//!   tasks, scheduling, on the way into and out of parks).
//! - `experiments/`: one experiment per file (or folder), and the registry.
//! - `programs/`: the programs the experiments run; `peers/`: the other runtimes (Rayon, Tokio,
//!   chili, Go, Rayon patched onto threadlab); `tl.rs`: threadlab as the experiments use it.
//! - `report/`: tables, SVG charts, the HTML report, `results.json`; `noise.rs`: the words
//!   for a ratio within the noise.
//! - The machine's state around a run: `cpu_speed.rs` (each CPU's speed, before and after),
//!   `cpu_placement.rs` (where the kernel starts a woken thread), `alloc_count.rs` (the binary's
//!   counting allocator, for allocations per job or message).
//!
//! What the lab shares with the other commands lives at the crate's root: `fmt.rs` (how numbers
//! are written), `measure.rs` (CPU clocks), `machine.rs` (the topology), `baselines/` (the naive
//! designs the articles start from) and `markup.rs` (HTML and SVG escaping); a caught panic's
//! text comes from the stress crate's `panics`.
//!
//! The runner runs each selected experiment in turn under `catch_unwind`, so an experiment that
//! fails or panics is reported by name with its reason while the others still run and land in
//! the report.

pub mod alloc_count;
pub mod bounds;
pub mod command;
pub mod cpu_placement;
pub mod cpu_speed;
mod ctx;
pub mod experiments;
pub mod noise;
pub mod peers;
pub mod programs;
pub mod report;
pub mod rounds;
pub mod stats;
pub mod tl;
mod traces;
pub mod worker_time;

pub use ctx::{Ctx, Row, Size};
pub use rounds::{Turn, Variant};
pub use traces::{render_text as render_trace_text, TraceRun};

use crate::lab::report::{svg::Chart, table::Table};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::Instant;
use threadlab_stress::panics::panic_message;

/// What an experiment hands back.
#[derive(Debug, Default)]
pub struct Outcome {
    /// One sentence, computed from the measured numbers.
    pub finding: String,
    /// Further remarks (scaled sizes, caveats).
    pub notes: Vec<String>,
    /// Every figure, for results.json.
    pub rows: Vec<Row>,
    /// Tables for the terminal and the report.
    pub tables: Vec<Table>,
    /// Charts for the report.
    pub charts: Vec<Chart>,
}

/// The error type of an experiment: a message saying what went wrong.
pub type ExpResult = Result<Outcome, String>;

/// One experiment of the lab.
pub trait Experiment: Sync {
    /// Short lower-case name used on the command line (`image`, `jobs`, …).
    fn name(&self) -> &'static str;
    /// One sentence: what the experiment measures.
    fn description(&self) -> &'static str;
    /// Runs the experiment.
    fn run(&self, ctx: &Ctx) -> ExpResult;
}

/// The result of one experiment: its outcome or why it failed.
pub struct Report {
    /// Experiment name.
    pub name: &'static str,
    /// What it measures.
    pub description: &'static str,
    /// The outcome, or the failure message.
    pub result: Result<Outcome, String>,
    /// Wall time it took.
    pub seconds: f64,
    /// The runs it recorded, with the doctor's diagnosis of each.
    pub traces: Vec<TraceRun>,
}

/// Runs `experiments` in order with a progress bar on stderr (hidden when stderr is not a
/// terminal), printing each one's finding, tables and the doctor's findings on its traces to
/// stdout as it finishes. Traces are written below `out`.
pub fn run_all(
    experiments: &[&'static dyn Experiment],
    size: Size,
    threads: Vec<usize>,
    repeat: usize,
    out: PathBuf,
) -> Vec<Report> {
    let progress = if std::io::stderr().is_terminal() {
        let pb = ProgressBar::new(experiments.len() as u64);
        pb.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:20} {pos}/{len} {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        pb.enable_steady_tick(std::time::Duration::from_millis(200));
        pb
    } else {
        ProgressBar::hidden()
    };
    let mut reports = Vec::new();
    for exp in experiments {
        let ctx = Ctx::new(
            exp.name(),
            size,
            threads.clone(),
            repeat,
            out.clone(),
            progress.clone(),
        );
        ctx.step(exp.name());
        let start = Instant::now();
        let mut result = match catch_unwind(AssertUnwindSafe(|| exp.run(&ctx))) {
            Ok(r) => r,
            Err(payload) => Err(format!("panicked: {}", panic_message(&*payload))),
        };
        // Every figure is checked against its physical bound before it is printed; one
        // outside is a bug at its cause, shown as a note rather than hidden.
        let traces =
            std::mem::take(&mut *ctx.traces.runs.lock().unwrap_or_else(|e| e.into_inner()));
        if let Ok(o) = &mut result {
            for v in bounds::row_violations(&o.rows) {
                o.notes
                    .push(format!("figure out of bounds (a bug in the lab): {v}"));
            }
            // The doctor's figures on the experiment's traces, by the doctor's own bounds.
            for t in &traces {
                for v in threadlab_doctor::bounds_violations(&t.diagnosis) {
                    o.notes.push(format!(
                        "figure out of bounds (a bug in the lab): the doctor on {}: {v}",
                        t.tltrace
                    ));
                }
            }
        }
        let report = Report {
            name: exp.name(),
            description: exp.description(),
            result,
            seconds: start.elapsed().as_secs_f64(),
            traces,
        };
        progress.suspend(|| print_report(&report));
        reports.push(report);
        progress.inc(1);
    }
    progress.finish_and_clear();
    reports
}

fn print_report(r: &Report) {
    println!("== {} — {} ({:.1} s)", r.name, r.description, r.seconds);
    match &r.result {
        Ok(o) => {
            println!("{}", o.finding);
            for n in &o.notes {
                println!("note: {n}");
            }
            for t in &o.tables {
                println!();
                print!("{}", t.render_text());
            }
        }
        Err(e) => println!("FAILED: experiment `{}` failed: {e}", r.name),
    }
    for t in &r.traces {
        println!();
        print!("{}", render_trace_text(t));
    }
    println!();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An experiment that only is its name, description and `run`.
    struct Stub(&'static str, &'static str, fn(&Ctx) -> ExpResult);
    impl Experiment for Stub {
        fn name(&self) -> &'static str {
            self.0
        }
        fn description(&self) -> &'static str {
            self.1
        }
        fn run(&self, ctx: &Ctx) -> ExpResult {
            (self.2)(ctx)
        }
    }

    #[test]
    fn a_failing_experiment_does_not_stop_the_others() {
        let out = std::env::temp_dir().join(format!("threadlab-lab-test-{}", std::process::id()));
        static FAILS: Stub = Stub("fails", "returns an error", |_| {
            Err("the disk is full".into())
        });
        static PANICS: Stub = Stub("panics", "panics", |_| panic!("index out of bounds"));
        static WORKS: Stub = Stub("works", "succeeds", |ctx| {
            Ok(Outcome {
                finding: format!("ran with {:?} threads", ctx.threads),
                ..Outcome::default()
            })
        });
        let reports = run_all(&[&FAILS, &PANICS, &WORKS], Size::Tiny, vec![2], 1, out);
        assert_eq!(reports.len(), 3);
        assert_eq!(
            reports[0].result.as_ref().err().unwrap(),
            "the disk is full"
        );
        assert!(reports[1]
            .result
            .as_ref()
            .err()
            .unwrap()
            .contains("panicked: index out of bounds"));
        assert_eq!(
            reports[2].result.as_ref().unwrap().finding,
            "ran with [2] threads"
        );
    }
}
