//! The structure of the CLI, the doctor and the trace model: no import circle among the files of
//! any (`scripts/import-cycles`, which finds files that reach, through their `use crate::…`/
//! `super::…` imports and paths, a file that reaches them back). Skipped with a message where
//! `python3` is missing.

use std::path::Path;
use std::process::Command;

fn no_circle_in(crate_src: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let script = root.join("scripts/import-cycles");
    let out = match Command::new("python3")
        .arg(&script)
        .arg(root.join(crate_src))
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            eprintln!("skipped: cannot run python3 ({e})");
            return;
        }
    };
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains(" 0 circle(s)"), "{text}");
}

#[test]
fn no_import_circle_among_the_cli_files() {
    no_circle_in("crates/threadlab-cli/src");
}

#[test]
fn no_import_circle_among_the_doctor_files() {
    no_circle_in("crates/threadlab-doctor/src");
}

#[test]
fn no_import_circle_among_the_trace_model_files() {
    no_circle_in("crates/threadlab-trace/src");
}
