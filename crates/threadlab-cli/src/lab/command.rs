//! `threadlab lab`: which experiments run, where their files go (checked writable before
//! anything runs), the machine's checks before and after them, and the report's files, each
//! written under a temporary name and renamed when complete ([`write_atomic`]), so a run killed
//! by Ctrl-C or a closed pipe leaves no truncated file.

use super::report::Setting;
use super::{cpu_placement, cpu_speed};
use crate::cli::{usage_error, LabArgs};
use crate::machine::Machine;
use std::path::Path;
use std::process::ExitCode;

/// Writes `bytes` to `path` through a temporary file in the same directory
/// (`.<name>.tmp-<pid>`), renamed over `path` once complete, so `path` is either the old file or
/// the whole new one, never a truncated one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = temp_name(path);
    let written = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// The temporary name `write_atomic` writes `path` under.
fn temp_name(path: &Path) -> std::path::PathBuf {
    let name = path
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

/// Checks, before anything runs, that `path` can be written as a file: not a directory, and
/// its directory (created if missing) accepts a new file.
fn check_writable_file(path: &Path, flag: &str) -> Result<(), String> {
    if path.is_dir() {
        return Err(format!(
            "{flag} `{}` is a directory; give a file name (e.g. `{}`)",
            path.display(),
            path.join("results.json").display()
        ));
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        check_writable_dir(parent).map_err(|e| e.replace("--out", flag))?;
    }
    let probe = temp_name(path);
    std::fs::write(&probe, b"")
        .map_err(|e| format!("cannot write {flag} `{}`: {e}", path.display()))?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}

fn check_writable_dir(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("cannot create --out directory `{}`: {e}", dir.display()))?;
    let probe = dir.join(".threadlab-write-test");
    std::fs::write(&probe, b"")
        .map_err(|e| format!("cannot write into --out directory `{}`: {e}", dir.display()))?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}

/// `threadlab lab`: runs the experiments asked for (all by default) and writes the report.
pub fn run(args: LabArgs) -> ExitCode {
    let all = super::experiments::registry();
    let mut selected = Vec::new();
    for name in &args.experiments {
        match all.iter().find(|e| e.name() == name) {
            Some(e)
                if !selected
                    .iter()
                    .any(|s: &&dyn super::Experiment| s.name() == e.name()) =>
            {
                selected.push(*e)
            }
            Some(_) => {}
            None => {
                let names: Vec<&str> = all.iter().map(|e| e.name()).collect();
                return usage_error(&format!(
                    "unknown experiment `{name}`; valid experiments: {}",
                    names.join(", ")
                ));
            }
        }
    }
    if selected.is_empty() {
        selected = all;
    }
    if let Err(e) = check_writable_dir(&args.out) {
        return usage_error(&e);
    }
    let json_path = args
        .json
        .clone()
        .unwrap_or_else(|| args.out.join("results.json"));
    let flag = if args.json.is_some() {
        "--json"
    } else {
        "--out"
    };
    if let Err(e) = check_writable_file(&json_path, flag) {
        return usage_error(&e);
    }
    let html_path = args.out.join("index.html");
    if let Err(e) = check_writable_file(&html_path, "--out") {
        return usage_error(&e);
    }
    let size = if args.tiny {
        super::Size::Tiny
    } else if args.full {
        super::Size::Full
    } else {
        super::Size::Quick
    };
    let mut setting = Setting {
        machine: Machine::detect(),
        cpu_speed_before: cpu_speed::probe(),
        cpu_speed_after: Vec::new(),
        cpu_placement: None,
    };
    println!(
        "{}",
        cpu_speed::describe("before", &setting.cpu_speed_before)
    );
    setting.cpu_placement = cpu_placement::probe();
    println!(
        "{}",
        cpu_placement::describe(setting.cpu_placement.as_ref())
    );
    let threads = args
        .threads
        .map(|t| t.0)
        .unwrap_or_else(|| vec![setting.machine.available_parallelism]);
    let repeat = args.repeat.map_or(size.pick(1, 3, 5), |r| r as usize);
    let reports = super::run_all(&selected, size, threads.clone(), repeat, args.out.clone());
    setting.cpu_speed_after = cpu_speed::probe();
    println!("{}", cpu_speed::describe("after", &setting.cpu_speed_after));

    let command: Vec<String> = std::env::args().collect();
    let mut write_failed = false;
    let mut write = |path: &Path, text: &str| {
        if let Err(e) = write_atomic(path, text.as_bytes()) {
            eprintln!("error: cannot write `{}`: {e}", path.display());
            write_failed = true;
        }
    };
    for r in &reports {
        if let Ok(o) = &r.result {
            for c in &o.charts {
                write(&args.out.join(format!("{}.svg", c.file)), &c.render());
            }
        }
    }
    write(
        &html_path,
        &super::report::html::render(&setting, &command.join(" "), &reports),
    );
    write(
        &json_path,
        &super::report::json::render(&setting, size, &threads, repeat, &reports),
    );
    let failed: Vec<&str> = reports
        .iter()
        .filter(|r| r.result.is_err())
        .map(|r| r.name)
        .collect();
    if !write_failed {
        println!(
            "report: {}  results: {}",
            html_path.display(),
            json_path.display()
        );
    }
    if !failed.is_empty() {
        eprintln!("error: experiment(s) failed: {}", failed.join(", "));
        return ExitCode::from(1);
    }
    if write_failed {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
