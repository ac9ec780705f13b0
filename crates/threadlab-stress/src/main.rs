//! `threadlab-stress`: threadlab's stress mix as a program of its own, with the arguments of
//! `threadlab stress` (`--seconds N`, `--seed S`, `--threads N`); CI runs this one, which builds
//! without the CLI's crates.
//!
//! Exit codes: 0 when every book balanced, 1 when one did not (or a scenario got stuck), 2 for
//! bad arguments, with one line on stderr saying what is wrong. `stress-fork --seed S` (hidden)
//! is the process the fork scenario starts, from whichever program runs the mix. A closed pipe
//! ends it quietly, as it ends `cat` (`threadlab-stress --help | head -1`): `SIGPIPE` has its
//! default action again, which Rust's runtime sets to "ignore" before `main`.

use std::process::ExitCode;
use threadlab_stress::Options;

/// What the arguments ask for.
enum Command {
    Run(Options),
    ForkChild(u64),
    Help,
    Version,
}

fn main() -> ExitCode {
    #[cfg(unix)]
    // SAFETY: `signal` with `SIG_DFL` installs no handler of ours; it is called first thing in
    // `main`, before this program starts any thread.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let args: Vec<String> = match std::env::args_os()
        .skip(1)
        .map(|a| a.into_string())
        .collect()
    {
        Ok(args) => args,
        Err(bad) => return usage_error(&format!("`{}` is not UTF-8", bad.to_string_lossy())),
    };
    match parse(&args) {
        Ok(Command::Run(opts)) => {
            if threadlab_stress::run(&opts) {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        #[cfg(unix)]
        Ok(Command::ForkChild(seed)) => threadlab_stress::fork_child(seed),
        #[cfg(not(unix))]
        Ok(Command::ForkChild(_)) => usage_error("stress-fork needs fork() (Unix)"),
        Ok(Command::Help) => {
            print!("{}", usage());
            ExitCode::SUCCESS
        }
        Ok(Command::Version) => {
            println!("threadlab-stress {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        Err(e) => usage_error(&e),
    }
}

fn usage() -> String {
    format!(
        "\
Runs a seeded random mix of everything threadlab's pools do (joins, scopes, spawns, loops,
serial queues, nested pools, futures, channels, elastic pools, blocked workers, forks,
recordings, with panics), checking that every task runs exactly once and every panic is
delivered once (exit 1 if not).

Usage: threadlab-stress [--seconds N] [--seed S] [--threads N]

Options:
  --seconds <N>  How long to run, 1 to {max_seconds} [default: 60]
  --seed <S>     Seed of the scenario generator (default: from the clock; printed at the end)
  --threads <N>  Workers of the shared pool, 1 to {max_threads} (default: available parallelism)
  -h, --help     Print this help
  -V, --version  Print the version

Example: threadlab-stress --seconds 600 --seed 7
",
        max_seconds = Options::MAX_SECONDS,
        max_threads = Options::MAX_THREADS,
    )
}

/// One line on stderr and exit code 2, as the CLI does for bad arguments.
fn usage_error(what: &str) -> ExitCode {
    eprintln!("error: {what} (see `threadlab-stress --help`)");
    ExitCode::from(2)
}

/// `[stress-fork] [--seconds N] [--seed S] [--threads N]`, each option as `--name value` or
/// `--name=value`, at most once.
fn parse(args: &[String]) -> Result<Command, String> {
    let (fork, args) = match args.split_first() {
        Some((first, rest)) if first == "stress-fork" => (true, rest),
        _ => (false, args),
    };
    let (mut seconds, mut seed, mut threads) = (None, None, None);
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "-V" | "--version" => return Ok(Command::Version),
            _ => {}
        }
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value)),
            _ => (arg.as_str(), None),
        };
        let slot = match name {
            "--seconds" if !fork => &mut seconds,
            "--seed" => &mut seed,
            "--threads" if !fork => &mut threads,
            _ => return Err(format!("unexpected argument `{arg}`")),
        };
        let Some(value) = inline.or_else(|| rest.next().map(String::as_str)) else {
            return Err(format!("{name} needs a value"));
        };
        if slot.replace(value).is_some() {
            return Err(format!("{name} is given more than once"));
        }
    }
    if fork {
        let seed = seed.ok_or("stress-fork needs --seed S")?;
        return Ok(Command::ForkChild(number("--seed", seed, 0, u64::MAX)?));
    }
    let seconds = seconds.map_or(Ok(60), |s| number("--seconds", s, 1, Options::MAX_SECONDS))?;
    let mut opts = Options::new(seconds);
    if let Some(s) = seed {
        opts.seed = number("--seed", s, 0, u64::MAX)?;
    }
    if let Some(t) = threads {
        opts.threads = number("--threads", t, 1, Options::MAX_THREADS as u64)? as usize;
    }
    Ok(Command::Run(opts))
}

/// `value` as a whole number in `lo..=hi`, or what is wrong with it.
fn number(name: &str, value: &str, lo: u64, hi: u64) -> Result<u64, String> {
    match value.parse::<u64>() {
        Ok(n) if (lo..=hi).contains(&n) => Ok(n),
        _ => Err(format!(
            "{name}: `{value}` is not a whole number from {lo} to {hi}"
        )),
    }
}
