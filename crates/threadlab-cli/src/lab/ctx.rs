//! What an experiment runs with: its size, the pool sizes and rounds asked for, the progress
//! line, and the rows it returns, which [`Ctx`] stamps with the experiment's name.

use super::rounds::{self, Samples, Variant};
use super::traces::Traces;
use indicatif::ProgressBar;
use serde::Serialize;
use std::path::PathBuf;
use threadlab_doctor::Diagnosis;

/// How big the experiments' workloads are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Size {
    /// Seconds in total: for the CLI's own tests (hidden flag).
    Tiny,
    /// The default: every experiment in a few minutes on 2 cores.
    Quick,
    /// The sizes of the articles' own experiments (`--full`).
    Full,
}

impl Size {
    /// Picks one of three values by size.
    pub fn pick<T>(self, tiny: T, quick: T, full: T) -> T {
        match self {
            Size::Tiny => tiny,
            Size::Quick => quick,
            Size::Full => full,
        }
    }
}

/// One measured figure, as it appears in `results.json`.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// Experiment name.
    pub experiment: String,
    /// Stable lower-case variant name (`serial`, `threadlab`, `rayon`, …).
    pub variant: String,
    /// Which configuration of the experiment (e.g. `4 queues`), free text.
    pub config: String,
    /// Threads the variant used.
    pub threads: usize,
    /// What was measured (e.g. `seconds`, `ns_per_job`).
    pub metric: String,
    /// The median value.
    pub value: f64,
    /// Its unit.
    pub unit: String,
}

/// What an experiment gets to run with.
pub struct Ctx {
    /// The running experiment's name, stamped into its rows.
    pub name: &'static str,
    /// Workload size.
    pub size: Size,
    /// Pool sizes to measure (`--threads`); never empty, every entry ≥ 1.
    pub threads: Vec<usize>,
    /// Runs per figure; the figure is their median.
    pub repeat: usize,
    /// The output directory (`--out`); traces go to its `traces/`.
    pub out: PathBuf,
    /// The runs the experiment recorded ([`Ctx::record`]); moved into its report.
    pub(super) traces: Traces,
    progress: ProgressBar,
}

impl Ctx {
    /// A context for experiment `name`.
    pub fn new(
        name: &'static str,
        size: Size,
        threads: Vec<usize>,
        repeat: usize,
        out: PathBuf,
        progress: ProgressBar,
    ) -> Ctx {
        let traces = Traces {
            out: out.clone(),
            runs: Default::default(),
            progress: progress.clone(),
        };
        Ctx {
            name,
            size,
            threads,
            repeat,
            out,
            traces,
            progress,
        }
    }

    /// Shows what is being measured now next to the progress bar.
    pub fn step(&self, what: impl Into<String>) {
        self.progress.set_message(what.into());
        self.progress.tick();
    }

    /// A row of this experiment.
    pub fn row(
        &self,
        variant: &str,
        config: impl Into<String>,
        threads: usize,
        metric: &str,
        value: f64,
        unit: &str,
    ) -> Row {
        Row {
            experiment: self.name.into(),
            variant: variant.into(),
            config: config.into(),
            threads,
            metric: metric.into(),
            value,
            unit: unit.into(),
        }
    }

    /// `variants` in [`repeat`](Ctx::repeat) interleaved rounds after a warm-up (see
    /// [`rounds`]); `what` prefixes the progress line.
    pub fn rounds(&self, what: &str, variants: &mut [Variant<'_>]) -> Result<Vec<Samples>, String> {
        self.rounds_at_least(1, what, variants)
    }

    /// Like [`Ctx::rounds`], in at least `min` rounds whatever `--repeat` says (for figures
    /// whose spread needs more than the quick lab's three).
    pub fn rounds_at_least(
        &self,
        min: usize,
        what: &str,
        variants: &mut [Variant<'_>],
    ) -> Result<Vec<Samples>, String> {
        rounds::interleaved(
            |s| self.step(format!("{}: {what}, {s}", self.name)),
            self.repeat.max(min),
            variants,
        )
    }

    /// Runs `f` with the recorder on and keeps the trace for the report (see
    /// [`Traces::record`]).
    pub fn record<R>(
        &self,
        stem: &str,
        label: &str,
        f: impl FnOnce() -> R,
    ) -> Result<(R, Diagnosis), String> {
        self.traces.record(stem, label, f)
    }

    /// Saves, diagnoses and keeps a trace recorded elsewhere (see [`Traces::keep_trace`]).
    pub fn keep_trace(
        &self,
        stem: &str,
        label: &str,
        trace: &threadlab::trace::Trace,
    ) -> Diagnosis {
        self.traces.keep_trace(stem, label, trace)
    }
}
