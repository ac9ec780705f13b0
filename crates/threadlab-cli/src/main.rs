//! `threadlab`: the lab, doctor, compare, stress, topology and run/watch commands.
//!
//! Exit codes: 0 on success, 1 when an experiment failed (after the report is written), 2 for
//! bad arguments (clap's convention, which our own validation follows) and for trace files that
//! are missing, truncated or not threadlab's.
//!
//! A closed pipe ends the program quietly: `main` first restores the default action of `SIGPIPE`
//! (Rust's runtime ignores it, so every `println!` to a closed pipe would panic with "Broken
//! pipe"), so a write to a pipe whose reader went away (`threadlab doctor FILE | head -1`) ends
//! the process with the conventional status 141 (128 + SIGPIPE) and no message, as `git`, `cat`
//! and `ripgrep` do. One process-wide setting covers every command and every print, including
//! the progress bars'; the lab's files are written under a temporary name and renamed when
//! complete (`write_atomic`), so a run killed this way, or by Ctrl-C, leaves no truncated file.

mod alloc_count;
mod baselines;
mod cli;
mod cpu_placement;
mod cpu_speed;
mod doctor;
mod experiments;
mod fmt;
mod lab;
mod machine;
mod markup;
mod measure;
mod observe;
mod panics;
mod peers;
mod report;
mod stress;
mod tl;
mod view;
mod workloads;

use clap::Parser;
use cli::{usage_error, Cli, Command, LabArgs};
use std::path::Path;
use std::process::ExitCode;

/// Counts every allocation, for the experiments' allocations and bytes per message or job.
#[global_allocator]
static ALLOCATOR: alloc_count::Counting = alloc_count::Counting;

fn main() -> ExitCode {
    restore_sigpipe();
    if std::env::var_os("THREADLAB_COUNT_ALLOCS").is_some_and(|v| v == "0") {
        alloc_count::set_enabled(false);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => e.exit(), // --help, --version
        Err(e) => {
            // One line, not clap's usage block: its message up to the first blank line (a list
            // of missing arguments joined onto it), and a pointer.
            let text = e.render().to_string();
            let message: Vec<&str> = text
                .lines()
                .take_while(|l| !l.trim().is_empty())
                .map(str::trim)
                .collect();
            let first = if message.is_empty() {
                "error: bad arguments".to_owned()
            } else {
                message.join(" ")
            };
            eprintln!("{first} (see `threadlab --help`)");
            return ExitCode::from(2);
        }
    };
    match cli.command {
        Command::Topology => {
            print!("{}", machine::Machine::detect().render());
            ExitCode::SUCCESS
        }
        Command::Lab(args) => lab_command(args),
        Command::Doctor(args) => doctor::doctor(args),
        Command::Compare(args) => doctor::compare(args),
        Command::Stress(args) => stress_command(args),
        #[cfg(unix)]
        Command::StressFork(args) => stress::fork_child(args.seed),
        #[cfg(not(unix))]
        Command::StressFork(_) => cli::usage_error("stress-fork needs fork() (Unix)"),
        Command::Run(args) => observe::run(args),
        Command::Watch(args) => observe::watch(args),
        Command::Demo(args) => match observe::demo::run(&args.kind, args.seconds, args.threads) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => usage_error(&e),
        },
        Command::View(args) => view::view(args),
    }
}

fn stress_command(args: cli::StressArgs) -> ExitCode {
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    let threads = args.threads.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        |t| t as usize,
    );
    let opts = stress::Options {
        seconds: args.seconds,
        seed,
        threads,
    };
    if stress::run(&opts) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Restores the default action of `SIGPIPE` (terminate quietly), which Rust's runtime sets to
/// "ignore" before `main`; see the module doc.
fn restore_sigpipe() {
    // SAFETY: `signal` with `SIG_DFL` installs no handler of ours; it is called first thing in
    // `main`, before this program starts any thread.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Writes `bytes` to `path` through a temporary file in the same directory
/// (`.<name>.tmp-<pid>`), renamed over `path` once complete, so `path` is either the old file or
/// the whole new one, never a truncated one.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
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

fn lab_command(args: LabArgs) -> ExitCode {
    let all = experiments::registry();
    let mut selected = Vec::new();
    for name in &args.experiments {
        match all.iter().find(|e| e.name() == name) {
            Some(e)
                if !selected
                    .iter()
                    .any(|s: &&dyn lab::Experiment| s.name() == e.name()) =>
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
        lab::Size::Tiny
    } else if args.full {
        lab::Size::Full
    } else {
        lab::Size::Quick
    };
    let mut machine = machine::Machine::detect();
    machine.cpu_speed_before = cpu_speed::probe();
    println!(
        "{}",
        cpu_speed::describe("before", &machine.cpu_speed_before)
    );
    machine.cpu_placement = cpu_placement::probe();
    println!(
        "{}",
        cpu_placement::describe(machine.cpu_placement.as_ref())
    );
    let threads = args
        .threads
        .map(|t| t.0)
        .unwrap_or_else(|| vec![machine.available_parallelism]);
    let repeat = args.repeat.map_or(size.pick(1, 3, 5), |r| r as usize);
    let reports = lab::run_all(&selected, size, threads.clone(), repeat, args.out.clone());
    machine.cpu_speed_after = cpu_speed::probe();
    println!("{}", cpu_speed::describe("after", &machine.cpu_speed_after));

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
        &report::html::render(&machine, &command.join(" "), &reports),
    );
    write(
        &json_path,
        &report::json::render(&machine, size, &threads, repeat, &reports),
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
