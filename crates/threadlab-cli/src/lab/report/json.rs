//! `results.json`: `{"machine": {...}, "size": ..., "experiments": [...], "rows": [...]}`.

use super::Setting;
use crate::lab::{Report, Row, Size};
use serde::Serialize;

#[derive(Serialize)]
struct ExperimentSummary<'a> {
    name: &'a str,
    description: &'a str,
    ok: bool,
    finding: Option<&'a str>,
    notes: Vec<&'a str>,
    error: Option<&'a str>,
    seconds: f64,
    charts: Vec<String>,
    traces: Vec<serde_json::Value>,
}

#[derive(Serialize)]
struct Results<'a> {
    machine: &'a Setting,
    size: Size,
    threads: &'a [usize],
    repeat: usize,
    experiments: Vec<ExperimentSummary<'a>>,
    rows: Vec<&'a Row>,
}

/// The JSON document for these reports.
pub fn render(
    machine: &Setting,
    size: Size,
    threads: &[usize],
    repeat: usize,
    reports: &[Report],
) -> String {
    let experiments = reports
        .iter()
        .map(|r| ExperimentSummary {
            name: r.name,
            description: r.description,
            ok: r.result.is_ok(),
            finding: r.result.as_ref().ok().map(|o| o.finding.as_str()),
            notes: r
                .result
                .as_ref()
                .map(|o| o.notes.iter().map(String::as_str).collect())
                .unwrap_or_default(),
            error: r.result.as_ref().err().map(String::as_str),
            seconds: r.seconds,
            charts: r
                .result
                .as_ref()
                .map(|o| o.charts.iter().map(|c| format!("{}.svg", c.file)).collect())
                .unwrap_or_default(),
            traces: r.traces.iter().map(trace_json).collect(),
        })
        .collect();
    let rows = reports
        .iter()
        .filter_map(|r| r.result.as_ref().ok())
        .flat_map(|o| o.rows.iter())
        .collect();
    let doc = Results {
        machine,
        size,
        threads,
        repeat,
        experiments,
        rows,
    };
    // Non-finite floats become null in serde_json's Value path; our values are finite or NaN,
    // and to_string_pretty writes NaN as null.
    serde_json::to_string_pretty(&doc).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

/// A recorded run: its files, the doctor's findings and answers.
fn trace_json(t: &crate::lab::TraceRun) -> serde_json::Value {
    serde_json::json!({
        "label": t.label,
        "pftrace": t.pftrace,
        "tltrace": t.tltrace,
        "viewer": t.viewer,
        "events": t.events,
        "save_error": t.save_error,
        "findings": t.diagnosis.findings,
        "answers": t.diagnosis.answers,
    })
}
