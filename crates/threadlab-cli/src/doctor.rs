//! `threadlab doctor FILE [--json]` and `threadlab compare A B [--json]`: load `.tltrace` or
//! `.pftrace` files and print the doctor's diagnosis or comparison (`threadlab-doctor`), as text
//! or as JSON (its types' `Serialize`, the crate's `serde` feature; non-finite figures print as
//! `null`, keys in alphabetical order).

use crate::cli::{CompareArgs, DoctorArgs};
use serde::Serialize;
use std::path::Path;
use std::process::ExitCode;
use threadlab::trace::Trace;
use threadlab_doctor::{Comparison, Diagnose, Diagnosis, FrameReport};

/// Loads a trace, or prints the loader's one-line error and returns exit code 2.
fn load(path: &Path) -> Result<Trace, ExitCode> {
    Trace::load(path).map_err(|e| crate::cli::usage_error(&e.to_string()))
}

/// Prints `v` as pretty JSON with its keys sorted (through `serde_json::Value`).
fn print_json(v: &impl Serialize) {
    let text = serde_json::to_value(v).and_then(|v| serde_json::to_string_pretty(&v));
    println!(
        "{}",
        text.unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    );
}

/// The `doctor` command.
pub fn doctor(args: DoctorArgs) -> ExitCode {
    let trace = match load(&args.file) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let d = trace.diagnose();
    let target = args
        .frame_target
        .unwrap_or(crate::view::DEFAULT_FRAME_TARGET);
    let frames: Vec<_> = trace
        .frame_sets()
        .into_iter()
        .map(|set| trace.frame_report(trace.name(set), target))
        .collect();
    if args.json {
        let cpus = d.os.cpus;
        print_json(&DoctorJson {
            diagnosis: &d,
            cpus,
            frames,
        });
    } else {
        println!("{}", args.file.display());
        print!("{d}");
        for f in &frames {
            print!("\n{f}");
        }
    }
    ExitCode::SUCCESS
}

/// The `compare` command.
pub fn compare(args: CompareArgs) -> ExitCode {
    let (a, b) = match (load(&args.a), load(&args.b)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(code), _) | (_, Err(code)) => return code,
    };
    let cmp = threadlab_doctor::compare(&a, &b);
    if args.json {
        print_json(&CompareJson {
            a: args.a.display().to_string(),
            b: args.b.display().to_string(),
            comparison: &cmp,
        });
    } else {
        println!("A: {}\nB: {}\n", args.a.display(), args.b.display());
        print!("{cmp}");
    }
    ExitCode::SUCCESS
}

/// `doctor --json`: the diagnosis as the doctor's crate serializes it, with the CPU count also at
/// the top (where scripts read it) and the frame reports of a trace with frame marks.
#[derive(Serialize)]
struct DoctorJson<'a> {
    #[serde(flatten)]
    diagnosis: &'a Diagnosis,
    cpus: u32,
    /// Per frame set, when the trace has frame marks.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    frames: Vec<FrameReport>,
}

/// `compare --json`: the two files, then the comparison.
#[derive(Serialize)]
struct CompareJson<'a> {
    a: String,
    b: String,
    #[serde(flatten)]
    comparison: &'a Comparison,
}
