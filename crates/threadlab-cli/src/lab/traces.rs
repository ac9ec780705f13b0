//! Traces of the lab's most telling runs: an experiment records a short, separate run (never a
//! timed one: recording is off while any figure is measured), saves it as `DIR/traces/<stem>.pftrace`
//! (opens in ui.perfetto.dev), `.tltrace` (for `threadlab doctor` and `compare`) and `.html`
//! (its timeline, `threadlab view`'s page, which the report embeds), and keeps the doctor's
//! diagnosis of it for the terminal and the report.

use indicatif::ProgressBar;
use std::path::PathBuf;
use std::sync::Mutex;
use threadlab::trace::{self, Mode};
use threadlab_doctor::Diagnose;
use threadlab_doctor::Diagnosis;

/// Where traces go, below the output directory.
pub const TRACE_DIR: &str = "traces";

/// One recorded run: its files and what the doctor found in it.
#[derive(Debug)]
pub struct TraceRun {
    /// What was recorded, in a few words.
    pub label: String,
    /// The Perfetto file, relative to the output directory (`traces/<stem>.pftrace`).
    pub pftrace: String,
    /// The native file, relative to the output directory (`traces/<stem>.tltrace`).
    pub tltrace: String,
    /// The timeline page, relative to the output directory (`traces/<stem>.html`).
    pub viewer: String,
    /// Events recorded.
    pub events: usize,
    /// The doctor's diagnosis.
    pub diagnosis: Diagnosis,
    /// Why the files could not be written, if they could not (the diagnosis still stands).
    pub save_error: Option<String>,
}

/// The traces one experiment recorded, and where they go.
pub struct Traces {
    /// The output directory (`--out`); traces go to its `traces/`.
    pub out: PathBuf,
    /// The runs recorded so far; moved into the experiment's report.
    pub runs: Mutex<Vec<TraceRun>>,
    /// Where "recording …" is shown.
    pub progress: ProgressBar,
}

impl Traces {
    /// Runs `f` with the recorder on, saves the trace as `<stem>.pftrace` and `<stem>.tltrace`
    /// under `DIR/traces/`, diagnoses it, and keeps the run for the experiment's report; returns
    /// `f`'s value and the diagnosis. Keep `f` short: the trace holds every event.
    pub fn record<R>(
        &self,
        stem: &str,
        label: &str,
        f: impl FnOnce() -> R,
    ) -> Result<(R, Diagnosis), String> {
        self.progress.set_message(format!("recording {label}"));
        self.progress.tick();
        let rec = trace::try_start(Mode::Full).map_err(|e| format!("recording {label}: {e}"))?;
        let value = f();
        let trace = rec.stop();
        Ok((value, self.keep_trace(stem, label, &trace)))
    }

    /// Saves `trace` as `<stem>.pftrace`, `<stem>.tltrace` and its timeline `<stem>.html` under
    /// `DIR/traces/`, diagnoses it, and keeps the run for the experiment's report.
    pub fn keep_trace(&self, stem: &str, label: &str, trace: &trace::Trace) -> Diagnosis {
        let dir = self.out.join(TRACE_DIR);
        let pftrace = format!("{TRACE_DIR}/{stem}.pftrace");
        let tltrace = format!("{TRACE_DIR}/{stem}.tltrace");
        let viewer = format!("{TRACE_DIR}/{stem}.html");
        let save = || -> Result<(), String> {
            std::fs::create_dir_all(&dir)
                .map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
            for file in [&pftrace, &tltrace] {
                let path: PathBuf = self.out.join(file);
                trace.save(&path).map_err(|e| e.to_string())?;
            }
            let page = self.out.join(&viewer);
            crate::view::write_page(trace, label, &page)
                .map_err(|e| format!("cannot write `{}`: {e}", page.display()))
        };
        let save_error = save().err();
        let diagnosis = trace.diagnose();
        let run = TraceRun {
            label: label.to_owned(),
            pftrace,
            tltrace,
            viewer,
            events: trace.event_count(),
            diagnosis: diagnosis.clone(),
            save_error,
        };
        self.runs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(run);
        diagnosis
    }
}

/// The doctor's findings on `run`, as terminal lines.
pub fn render_text(run: &TraceRun) -> String {
    let mut s = format!(
        "doctor, {} ({} events; {}, open in ui.perfetto.dev):\n",
        run.label, run.events, run.pftrace
    );
    if let Some(e) = &run.save_error {
        s += &format!("  (trace not saved: {e})\n");
    }
    let d = &run.diagnosis;
    if d.findings.is_empty() {
        s += "  no known pitfall found\n";
    }
    for f in &d.findings {
        s += &format!(
            "  ! {} ({}): {}\n    suggestion: {}\n",
            f.pitfall, f.subject, f.evidence, f.suggestion
        );
    }
    s
}
