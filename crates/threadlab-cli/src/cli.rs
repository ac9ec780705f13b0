//! Command-line arguments (clap derive) and their validation.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use threadlab_doctor::FrameTarget;

/// Most threads the lab will start for one pool: enough for the articles' oversubscription
/// sweeps (3,024 threads per row), far below what would exhaust the machine.
pub const MAX_THREADS: usize = 4096;

/// threadlab: a work-stealing runtime's lab, trace doctor, trace comparison and topology viewer.
#[derive(Debug, Parser)]
#[command(name = "threadlab", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the lab's experiments and write tables, SVG charts, index.html and results.json.
    Lab(LabArgs),
    /// Show this machine's cores, SMT siblings, caches and NUMA nodes (read from /sys).
    Topology,
    /// Diagnose a recorded trace: where each thread's time went, the four questions of
    /// "Multithreading Isn't Free" answered with figures, and the pitfalls found, each with a
    /// suggestion.
    Doctor(DoctorArgs),
    /// Compare two recorded traces per zone, task kind and lock (e.g. 2 workers against 5).
    Compare(CompareArgs),
    /// Run a randomised mix of joins, scopes, spawns, loops, serial queues, nested pools and
    /// recordings, with panics, checking that every task runs exactly once (exit 1 if not).
    Stress(StressArgs),
    /// Start a program and observe its threads from /proc until it exits (Linux): states,
    /// preemption, futex waits by address, thread creation; then the doctor's report.
    Run(RunArgs),
    /// Observe a running process's threads from /proc for a while (Linux), like `run`.
    Watch(WatchArgs),
    /// Small programs with known behaviour, observed by the tests (`threadlab demo mutex`).
    #[command(hide = true)]
    Demo(DemoArgs),
    /// The fork scenario of `stress`, in a process of its own: forks children that use pools.
    #[command(hide = true)]
    StressFork(StressForkArgs),
    /// Write an offline timeline of a trace (`.pftrace` or `.tltrace`) as one HTML page: a lane
    /// per thread, states, locks, arrows, the doctor's findings.
    View(ViewArgs),
}

/// Arguments of `threadlab view`.
#[derive(Debug, Args)]
#[command(
    after_help = "Example: threadlab view lab-out/traces/contention-work-sharing.pftrace \
-o contention.html (then open contention.html in a browser; it needs no network)"
)]
pub struct ViewArgs {
    /// A trace: `.pftrace` or `.tltrace`, as `Trace::save` or the lab writes them.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Where to write the page (default: FILE with the extension `.html`).
    #[arg(short = 'o', long = "out", value_name = "OUT.html")]
    pub out: Option<PathBuf>,
    /// When a frame (`trace::frame_mark`) is late: longer than a duration (`16.7ms`, `500us`,
    /// `2s`) or than a percentile of the frames (`p95`). Default: `p90`.
    #[arg(long = "frame-target", value_name = "DURATION|pNN", value_parser = parse_frame_target)]
    pub frame_target: Option<FrameTarget>,
}

/// Parses `--frame-target`: `pNN` (a percentile) or a number with `ns`, `us`, `ms` or `s`.
pub fn parse_frame_target(s: &str) -> Result<FrameTarget, String> {
    let bad =
        || format!("`{s}`: give a duration such as 16.7ms, 500us, 2s, or a percentile such as p95");
    if let Some(p) = s.strip_prefix('p') {
        let p: f64 = p.parse().map_err(|_| bad())?;
        return (0.0..=100.0)
            .contains(&p)
            .then_some(FrameTarget::Percentile(p))
            .ok_or_else(bad);
    }
    let units = [
        ("ns", 1.0),
        ("us", 1e3),
        ("µs", 1e3),
        ("ms", 1e6),
        ("s", 1e9),
    ];
    let (num, scale) = units
        .iter()
        .find_map(|(u, k)| s.strip_suffix(u).map(|n| (n, *k)))
        .ok_or_else(bad)?;
    let v: f64 = num.trim().parse().map_err(|_| bad())?;
    if !(v.is_finite() && v >= 0.0) {
        return Err(bad());
    }
    Ok(FrameTarget::Ns((v * scale).round() as u64))
}

/// Longest `--seconds` accepted: a year. Past it (or past `Duration`'s own range: `1e20`) an
/// observation's deadline would be meaningless or would overflow `Instant`.
pub const MAX_SECONDS: f64 = 365.0 * 86_400.0;

/// Parses `--seconds`: a finite number of seconds from 0 to [`MAX_SECONDS`] (`nan`, `inf`,
/// `-1` and `1e20` are refused with a one-line error).
pub fn parse_seconds(s: &str) -> Result<std::time::Duration, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds (e.g. 5 or 0.5)"))?;
    if !(0.0..=MAX_SECONDS).contains(&v) {
        return Err(format!(
            "`{s}` seconds: give a number from 0 to {MAX_SECONDS} (a year)"
        ));
    }
    Ok(std::time::Duration::from_secs_f64(v))
}

/// Checks an observation's `-o FILE` before anything is started: an extension that
/// `Trace::save` writes (`.tltrace`, `.pftrace`, `.json`) and a parent directory that exists
/// and is a directory, so that a long observation is not lost at its end.
pub fn check_trace_output(path: &std::path::Path) -> Result<(), String> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    if !matches!(ext.as_deref(), Some("tltrace" | "pftrace" | "json")) {
        return Err(format!(
            "-o {}: the extension must be .tltrace, .pftrace or .json",
            path.display()
        ));
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    };
    if !parent.is_dir() {
        return Err(format!(
            "-o {}: the directory {} does not exist",
            path.display(),
            parent.display()
        ));
    }
    // Writable: the trace is written under a temporary name there, then renamed.
    let probe = parent.join(format!(".threadlab-probe-{}", std::process::id()));
    match std::fs::File::create(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(format!(
            "-o {}: cannot write in {}: {e}",
            path.display(),
            parent.display()
        )),
    }
}

/// Arguments of `threadlab run`.
#[derive(Debug, Args)]
#[command(
    after_help = "Linux only; needs no privilege (a parent may read its child's /proc \
files and trace it). Thread births and deaths are traced with ptrace, which stops each new \
thread and its creator once (--sample-only to avoid it). Only the command's own process is \
observed, not the processes it starts. Exit code 1 when the command fails or is killed.\n\
Example: threadlab run -o app.tltrace -- ./app --input data"
)]
pub struct RunArgs {
    /// Samples per second.
    #[arg(long, value_name = "N", default_value_t = crate::observe::sampler::DEFAULT_HZ,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub hz: u32,
    /// Save the observed trace (`.tltrace`, `.pftrace` or `.json`).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Write the report to this file (default: a new file in the temporary directory, named on
    /// the terminal). The command's own stdout and stderr are never written to.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Births and deaths from the samples only (threads living between two samples are not
    /// seen): never ptrace, and the interposer's exact count is printed beside them, not
    /// merged into the timeline.
    #[arg(long, conflicts_with = "ptrace")]
    pub sample_only: bool,
    /// Also trace thread creation with ptrace: exact births for programs the interposer cannot
    /// enter too (static ones, Go's), at the price of stopping the creating thread at each
    /// birth. By default births come from the interposer (`LD_PRELOAD`), which stops nothing,
    /// and ptrace is used only when this threadlab was built without one.
    #[arg(long)]
    pub ptrace: bool,
    /// Individual lock waits kept for the timeline, over the whole run; past
    /// it they are only counted (every figure stays exact) and the report says how many the
    /// timeline lacks. Bounds the files and `run`'s memory under a lock storm (48 bytes a
    /// wait on disk).
    #[arg(long, value_name = "N", default_value_t = crate::observe::interpose::EVENT_BUDGET)]
    pub max_events: u64,
    /// The program and its arguments.
    #[arg(value_name = "CMD", required = true, last = true)]
    pub command: Vec<String>,
}

/// Arguments of `threadlab watch`.
#[derive(Debug, Args)]
#[command(
    after_help = "Linux only. With ptrace access the process is attached to for the \
observation (births and deaths of threads exact) and detached after. Without it (another \
user's process, or Yama's ptrace_scope) the system call each thread is blocked in is not \
visible and births are sampled.\n\
Example: threadlab watch 4242 --seconds 5"
)]
pub struct WatchArgs {
    /// The process id.
    #[arg(value_name = "PID")]
    pub pid: u32,
    /// How long to observe (less if the process exits), in seconds: at most a year.
    #[arg(long, value_name = "S", default_value = "5", value_parser = parse_seconds)]
    pub seconds: std::time::Duration,
    /// Samples per second.
    #[arg(long, value_name = "N", default_value_t = crate::observe::sampler::DEFAULT_HZ,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub hz: u32,
    /// Save the observed trace (`.tltrace`, `.pftrace` or `.json`).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// Arguments of the hidden `threadlab demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// mutex, spin, threads, sleep or idle.
    #[arg(value_name = "KIND")]
    pub kind: String,
    /// How long to run, in seconds.
    #[arg(long, value_name = "S", default_value = "2", value_parser = parse_seconds)]
    pub seconds: std::time::Duration,
    /// Threads (for `idle`).
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub threads: usize,
}

/// Arguments of `threadlab doctor`.
#[derive(Debug, Args)]
#[command(
    after_help = "Traces come from `Trace::save(\"run.pftrace\")` (or `.tltrace`) or the lab \
(`--out DIR` holds DIR/traces/*.tltrace beside the .pftrace files that open in ui.perfetto.dev).\n\
Example: threadlab doctor lab-out/traces/contention-work-sharing.tltrace"
)]
pub struct DoctorArgs {
    /// A trace in threadlab's native format (`.tltrace`) or its Perfetto export (`.pftrace`).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Print the diagnosis as JSON.
    #[arg(long)]
    pub json: bool,
    /// For traces with frame marks: a frame is late when longer than this duration (`16.7ms`)
    /// or than this percentile of the frames (`p95`). Default: `p90`.
    #[arg(long = "frame-target", value_name = "DURATION|pNN", value_parser = parse_frame_target)]
    pub frame_target: Option<FrameTarget>,
}

/// Arguments of `threadlab compare`.
#[derive(Debug, Args)]
#[command(
    after_help = "Rows are sorted by the absolute difference of the total time (B - A); `~` marks \
differences within run-to-run noise.\nExample: threadlab compare two-workers.tltrace five-workers.tltrace"
)]
pub struct CompareArgs {
    /// The first trace (`.tltrace` or `.pftrace`), side A.
    #[arg(value_name = "A")]
    pub a: PathBuf,
    /// The second trace (`.tltrace` or `.pftrace`), side B.
    #[arg(value_name = "B")]
    pub b: PathBuf,
    /// Print the comparison as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `threadlab stress-fork` (started by `stress`).
#[derive(Debug, Args)]
pub struct StressForkArgs {
    /// Seed of what the children do.
    #[arg(long, value_name = "S")]
    pub seed: u64,
}

/// Arguments of `threadlab stress`.
#[derive(Debug, Args)]
#[command(after_help = "Example: threadlab stress --seconds 600 --seed 7")]
pub struct StressArgs {
    /// How long to run.
    #[arg(long, value_name = "N", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(1..=threadlab_stress::Options::MAX_SECONDS))]
    pub seconds: u64,
    /// Seed of the scenario generator (default: from the clock; printed at the end).
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
    /// Workers of the shared pool (default: available parallelism).
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..=threadlab_stress::Options::MAX_THREADS as u64))]
    pub threads: Option<u64>,
}

/// Arguments of `threadlab lab`.
#[derive(Debug, Args)]
#[command(
    after_help = "Experiments: image, jobs, contention, overhead, rendezvous, division, numa, alloc, \
falseshare, observed, workloads, iter, pipeline, elastic (all of them when none is named).\n\
Example: threadlab lab image jobs --threads 1,2 --out lab-out"
)]
pub struct LabArgs {
    /// Experiments to run (default: all).
    #[arg(value_name = "EXPERIMENT")]
    pub experiments: Vec<String>,
    /// Use the sizes of the articles' own experiments (slow) instead of the quick ones.
    #[arg(long)]
    pub full: bool,
    /// Tiny sizes, for tests: seconds in total, figures meaningless.
    #[arg(long, hide = true, conflicts_with = "full")]
    pub tiny: bool,
    /// Pool sizes to measure, comma-separated (default: available parallelism), e.g. `1,2,4`.
    #[arg(long, value_name = "LIST", value_parser = parse_thread_list)]
    pub threads: Option<ThreadList>,
    /// Runs per figure; figures are medians (default: 3 quick, 5 full).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: Option<u32>,
    /// Directory for index.html, the SVG charts and results.json.
    #[arg(long, value_name = "DIR", default_value = "lab-out")]
    pub out: PathBuf,
    /// Where to write results.json (default: DIR/results.json).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

/// A validated `--threads` list.
#[derive(Debug, Clone)]
pub struct ThreadList(pub Vec<usize>);

/// Parses `1,2,4`: each entry an integer in 1..=MAX_THREADS.
pub fn parse_thread_list(s: &str) -> Result<ThreadList, String> {
    let mut out = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        let n: usize = part
            .parse()
            .map_err(|_| format!("`{part}` is not a thread count (expected e.g. 1,2,4)"))?;
        if n == 0 {
            return Err("a pool needs at least 1 thread".into());
        }
        if n > MAX_THREADS {
            return Err(format!(
                "{n} threads is more than the lab allows ({MAX_THREADS})"
            ));
        }
        if !out.contains(&n) {
            out.push(n);
        }
    }
    Ok(ThreadList(out))
}

/// A usage error found after parsing: one line on stderr, exit code 2 like clap's own.
pub fn usage_error(msg: &str) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(2)
}
