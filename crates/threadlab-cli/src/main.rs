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
//! complete (`lab::command::write_atomic`), so a run killed this way, or by Ctrl-C, leaves no truncated file.

mod baselines;
mod cli;
mod doctor;
mod fmt;
mod lab;
mod machine;
mod markup;
mod measure;
mod observe;
mod view;

use clap::Parser;
use cli::{usage_error, Cli, Command};
use std::process::ExitCode;

/// Counts every allocation, for the experiments' allocations and bytes per message or job.
#[global_allocator]
static ALLOCATOR: lab::alloc_count::Counting = lab::alloc_count::Counting;

fn main() -> ExitCode {
    restore_sigpipe();
    if std::env::var_os("THREADLAB_COUNT_ALLOCS").is_some_and(|v| v == "0") {
        lab::alloc_count::set_enabled(false);
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
        Command::Lab(args) => lab::command::run(args),
        Command::Doctor(args) => doctor::doctor(args),
        Command::Compare(args) => doctor::compare(args),
        Command::Stress(args) => stress_command(args),
        #[cfg(unix)]
        Command::StressFork(args) => threadlab_stress::fork_child(args.seed),
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

/// `threadlab stress`: the mix of the `threadlab-stress` crate (its own program too).
fn stress_command(args: cli::StressArgs) -> ExitCode {
    let mut opts = threadlab_stress::Options::new(args.seconds);
    if let Some(seed) = args.seed {
        opts.seed = seed;
    }
    if let Some(threads) = args.threads {
        opts.threads = threads as usize;
    }
    if threadlab_stress::run(&opts) {
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
