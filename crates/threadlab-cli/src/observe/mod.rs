//! `threadlab run -- CMD` and `threadlab watch PID`: the threads of any program, observed from
//! outside through `/proc` — no root, no change to the program, Linux only.
//!
//! Each thread is sampled at a fixed rate: its state, the CPU it last ran on, its time on a CPU
//! and runnable-but-waiting (preempted), its context switches and, when the observer may trace
//! the process (a parent may trace its child; `watch` of an unrelated process usually may not),
//! the system call it is blocked in. Threads blocked in `futex` on the same address wait on the
//! same lock or condition variable. The samples become a [`threadlab::trace::Trace`] that the
//! doctor reads like a recording, printed after the observer's own tables. The approach is the
//! one of sampling profilers' off-CPU views (e.g. `perf sched`, Brendan Gregg's off-CPU
//! analysis), here from `/proc` alone instead of kernel tracepoints. Thread births and deaths,
//! which a sampler misses when threads live between two samples, are traced exactly with
//! ptrace when the observer may (`births.rs`; always for `run` unless `--sample-only`).
//!
//! One mechanism per file:
//! - `procfs.rs`: the files of one thread, kept open and re-read;
//! - `syscall.rs`: a blocked thread's state from its system call;
//! - `symbols.rs`: addresses → ELF symbols through `/proc/PID/maps`;
//! - `sampler.rs`: the sampling loop and its own cost;
//! - `births.rs`: for `run`, every thread's birth and death, exactly, through ptrace;
//! - `bursts.rs`: thread creation per burst of births;
//! - `convert.rs`: samples → `Trace` and the futex table;
//! - `report.rs`: the text printed;
//! - `interpose.rs`: the `LD_PRELOAD` library's session (records directory, environment) and
//!   what its files say: exact births, deaths, lock acquisitions and waits;
//! - `records.rs`: the layout of those files, read back; `seen.rs`: what they say, per process
//!   and per lock;
//! - `library.rs`: where the library is kept (outliving the command, at a path the loader takes);
//! - `inside.rs`: the report's section on what the interposer saw;
//! - `inherit.rs`: the signal dispositions, mask and closed streams the command inherits as if
//!   `run` were not there, and dying of the command's signal;
//! - `output.rs`: where the report goes (never the command's streams) and `run`'s exit code;
//! - `demo.rs`: the child programs with known behaviour that the tests observe.

mod births;
mod bursts;
pub mod convert;
pub mod demo;
mod inherit;
mod inside;
pub mod interpose;
mod library;
pub mod output;
mod procfs;
mod records;
mod report;
pub mod sampler;
mod seen;
mod symbols;
mod syscall;

use std::process::{Command, ExitCode};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};
use threadlab_doctor::Diagnose;

use crate::cli::{RunArgs, WatchArgs};

/// A deadline for when `Instant` cannot hold the one asked for (never with `--seconds`'s range).
const MAX_WAIT: Duration = Duration::from_secs(365 * 86_400);

/// The command `run` observes, for the signal handler (0 until it has started).
static CHILD: AtomicI32 = AtomicI32::new(0);
/// A signal that arrived before the command's pid was known, forwarded once it is.
static PENDING: AtomicI32 = AtomicI32::new(0);

/// SIGINT, SIGTERM and SIGHUP sent to `run`: passed on to the command, so that the observer
/// never dies of them and still writes what it saw once the command has ended (and removes its
/// records directory). A terminal's Ctrl-C or hang-up (`si_code` `SI_KERNEL`) already reaches
/// the command, which is in the same process group: it
/// is not sent twice. A signal that comes while the command is being started is kept in
/// [`PENDING`] and sent by [`set_child`]; whichever of the two swaps it out sends it, once.
extern "C" fn forward(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let from_tty = !info.is_null() && unsafe { (*info).si_code } == libc::SI_KERNEL;
    if from_tty {
        return;
    }
    // SeqCst here and in `set_child`: the handler's store to PENDING then load of CHILD, and
    // `set_child`'s store to CHILD then swap of PENDING, must not both miss each other.
    let pid = CHILD.load(Ordering::SeqCst);
    if pid > 0 {
        // SAFETY: kill is async-signal-safe and has no memory preconditions.
        unsafe { libc::kill(pid, sig) };
        return;
    }
    PENDING.store(sig, Ordering::SeqCst);
    let pid = CHILD.load(Ordering::SeqCst);
    if pid > 0 && PENDING.swap(0, Ordering::SeqCst) == sig {
        // SAFETY: as above.
        unsafe { libc::kill(pid, sig) };
    }
}

/// Records the command's pid for [`forward`] and sends it a signal that came before.
fn set_child(pid: u32) {
    CHILD.store(pid as i32, Ordering::SeqCst);
    let sig = PENDING.swap(0, Ordering::SeqCst);
    if sig != 0 {
        // SAFETY: kill has no memory preconditions; `pid` is the command, not yet reaped.
        unsafe { libc::kill(pid as i32, sig) };
    }
}

/// Installs [`forward`] for SIGINT, SIGTERM and SIGHUP (restarting interrupted calls, so the
/// sampler and the tracer's waits go on), unless threadlab's parent had them ignored: then they
/// stay ignored, for threadlab and the command alike (`nohup`, a background job). SIGPIPE is
/// ignored by `run` itself, so a write to a closed stderr fails instead of killing it before
/// the report is written. The command starts with the actions threadlab was started with
/// (`inherit.rs`).
fn forward_signals() {
    // SAFETY: setting a disposition has no memory preconditions.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        if inherit::was_ignored(sig) {
            continue;
        }
        // SAFETY: `sa` is fully initialised; the handler only reads an atomic and calls kill,
        // both async-signal-safe.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = forward as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// `threadlab run`: starts the command (traced, unless `--sample-only`), samples it until it
/// exits, writes the report, and ends as the command did: its exit status, or death by the
/// signal that killed it (`inherit::die_of`), once the records directory is removed.
pub fn run(args: RunArgs) -> ExitCode {
    match run_observed(args) {
        Ok(output::Ending::Killed(sig)) => {
            inherit::die_of(sig);
            output::Ending::Killed(sig).exit_code()
        }
        Ok(ending) => ending.exit_code(),
        Err(code) => code,
    }
}

/// `threadlab run`'s own failure to start the command: like `env`, `timeout` and `nohup`, 127
/// when it is not found, 126 when it cannot be run.
fn cannot_start(program: &str, e: &std::io::Error) -> ExitCode {
    let code = if e.kind() == std::io::ErrorKind::NotFound {
        127
    } else {
        126
    };
    eprintln!("threadlab run: cannot run `{program}`: {e}");
    ExitCode::from(code)
}

/// Exit status of `run` when it cannot observe at all (the records directory or the library
/// cannot be written): 125, as `env` and `timeout` for their own failures.
const OWN_FAILURE: u8 = 125;

/// The command, with the interposer's environment and the start state threadlab inherited.
fn command(argv: &[String], session: Option<&interpose::Session>) -> Command {
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]);
    if let Some(s) = session {
        s.apply(&mut cmd);
    }
    use std::os::unix::process::CommandExt;
    // SAFETY: `restore_in_child` makes only async-signal-safe calls (sigaction, sigprocmask,
    // close) and allocates nothing.
    unsafe { cmd.pre_exec(inherit::restore_in_child) };
    cmd
}

/// The interposer's session for `run`: `None` when this threadlab has none or, with
/// `--sample-only`, when it cannot be set up; `run`'s own exit code when it cannot observe.
fn session(args: &RunArgs) -> Result<Option<interpose::Session>, ExitCode> {
    Ok(match interpose::Session::prepare(args.max_events) {
        Ok(s) => Some(s),
        Err(interpose::NoSession::NotBuilt) => None,
        Err(interpose::NoSession::NoLibrary(why)) if !args.sample_only => {
            eprintln!(
                "threadlab run: the interposer library can be written nowhere the dynamic loader \
                 accepts ({why}); set XDG_CACHE_HOME to a writable directory without spaces or \
                 colons, or run with --sample-only"
            );
            return Err(ExitCode::from(OWN_FAILURE));
        }
        Err(interpose::NoSession::NoRecords(why)) if !args.sample_only => {
            eprintln!(
                "threadlab run: cannot record: {why}; set TMPDIR to a writable directory with \
                 room, or run with --sample-only"
            );
            return Err(ExitCode::from(OWN_FAILURE));
        }
        Err(_) => None,
    })
}

/// [`run`] up to the command's end: how it ended, or `run`'s own exit code when it could not
/// start it.
fn run_observed(args: RunArgs) -> Result<output::Ending, ExitCode> {
    if args.command.is_empty() {
        return Err(crate::cli::usage_error(
            "`run` needs a command: threadlab run -- CMD ARGS…",
        ));
    }
    if let Some(out) = &args.output {
        if let Err(e) = crate::cli::check_trace_output(out) {
            return Err(crate::cli::usage_error(&e));
        }
    }
    let program = &args.command[0];
    // The interposer (`interpose.rs`): exact births and lock waits from inside every process.
    let session = session(&args)?;
    // The interposer's times count from `origin_ns`, the samples' from `origin`: the same
    // instant (both CLOCK_MONOTONIC), so births and samples line up.
    let origin = Instant::now();
    let origin_ns = interpose::monotonic_ns();
    forward_signals();
    // The interposer counts births exactly without stopping anything: ptrace, which stops the
    // creating thread at every birth (a thread-per-task program ran 1.5× slower), only when
    // asked for (`--ptrace`: exact births for programs the interposer cannot enter, static
    // ones), or when this threadlab has no interposer.
    let use_ptrace = !args.sample_only && (args.ptrace || session.is_none());
    let traced = if !use_ptrace {
        None
    } else {
        match observe_traced(command(&args.command, session.as_ref()), args.hz) {
            Ok(x) => Some(x),
            // PTRACE_SEIZE refused (a seccomp filter, a security module): the command ended
            // before its `execve` (`births.rs`); start it again, sampled only.
            Err(e) if e.raw_os_error() == Some(libc::EPERM) => {
                eprintln!(
                    "threadlab run: ptrace was refused ({e}); thread births are sampled instead"
                );
                None
            }
            Err(e) => return Err(cannot_start(program, &e)),
        }
    };
    let (pid, mut observed, ending) = match traced {
        Some(x) => x,
        None => {
            let mut child = match command(&args.command, session.as_ref()).spawn() {
                Ok(c) => c,
                Err(e) => return Err(cannot_start(program, &e)),
            };
            let pid = child.id();
            set_child(pid);
            let mut status = None;
            let observed = sampler::sample_from(pid, args.hz, true, origin, || {
                status = child.try_wait().ok().flatten();
                status.is_some()
            });
            // The process may have gone between two ticks: reap it.
            let status = status.or_else(|| child.wait().ok());
            use std::os::unix::process::ExitStatusExt;
            let ending = status.map_or(output::Ending::Unknown, |s| {
                output::Ending::from_parts(s.code(), s.signal())
            });
            (pid, observed, ending)
        }
    };
    let what = format!("`{}` (pid {pid})", args.command.join(" "));
    // The report never goes to the command's stdout or stderr (`output.rs`).
    let (mut file, path) = match output::report_file(args.report.as_deref(), pid) {
        Ok(x) => x,
        Err(e) => {
            output::say(&format!("threadlab run: cannot write the report: {e}"));
            return Ok(ending);
        }
    };
    let mut text = format!("{what} {}\n\n", ending.describe());
    let mut seen = session
        .as_ref()
        .map(|s| read_inside(s, &args, pid, origin_ns, &mut observed));
    let exact = seen
        .as_mut()
        .map(|s| std::mem::take(&mut s.0.exact))
        .unwrap_or_default();
    let (trace, futexes) = convert::convert_with(&observed, &exact);
    match &seen {
        // The interposer's section reads the locks from the trace's lock table.
        Some((seen, unseen)) => {
            text.push_str(&inside::render(
                seen,
                &trace,
                pid,
                program,
                unseen.as_deref(),
            ));
            text.push('\n');
        }
        None => text.push_str(
            "This threadlab was built without a C compiler (or off Linux), or run with \
             --sample-only where the interposer could not be set up: no interposer, lock waits \
             and births are sampled from /proc only.\n\n",
        ),
    }
    let saved = finish_into(
        &mut text,
        &what,
        &observed,
        (&trace, &futexes),
        args.hz,
        args.output.as_deref(),
    );
    use std::io::Write;
    let written = file.write_all(text.as_bytes()).and_then(|()| file.flush());
    match (written, saved) {
        (Ok(()), Ok(())) => output::announce(
            &format!("threadlab run: report in {}", path.display()),
            args.report.is_some(),
        ),
        (Err(e), _) => output::say(&format!(
            "threadlab run: cannot write the report to {}: {e}",
            path.display()
        )),
        (_, Err(e)) => output::say(&format!(
            "threadlab run: report in {}; the trace was not saved: {e}",
            path.display()
        )),
    }
    Ok(ending)
}

/// What the interposer saw of the command `pid` (its records read once it has ended, handed on
/// to an outer `run`): its births and deaths merged into `observed` unless traced or sampled
/// only, its threads named by role where the program did not name them; and, when the
/// command's own process wrote no file (it never loaded the interposer), its program's path.
fn read_inside(
    s: &interpose::Session,
    args: &RunArgs,
    pid: u32,
    origin_ns: u64,
    observed: &mut sampler::Observed,
) -> (seen::Seen, Option<std::path::PathBuf>) {
    let program = &args.command[0];
    let seen = s.read(origin_ns);
    s.hand_on();
    // Not traced: the interposer's births and deaths (exact, nothing stopped) stand where
    // the tracer's would (`births::merge`), for the command's own process; with
    // `--sample-only`, births stay the samples' (the interposer's own count is printed).
    if observed.exact.is_none() && !args.sample_only {
        if let Some(p) = seen
            .processes
            .iter()
            .find(|p| p.pid == pid && p.namespace.is_none())
        {
            let end_ns = observed.duration_ns;
            births::merge(observed, &p.lives(end_ns));
            if let Some(x) = observed.exact.as_mut() {
                x.by_interposer = true;
            }
        }
    }
    // Threads the program did not name (they kept its own name) by their role.
    let comm: String = std::path::Path::new(program)
        .file_name()
        .map_or_else(String::new, |f| {
            f.to_string_lossy().chars().take(15).collect()
        });
    for t in &mut observed.threads {
        if t.name == comm || t.name.is_empty() {
            if let Some(role) = seen.roles.get(&t.tid) {
                t.name = role.clone();
            }
        }
    }
    // The command's own process wrote no file: it never loaded the interposer.
    let unseen = (!s.saw(pid)).then(|| which(program));
    (seen, unseen)
}

/// The file `program` names: itself if it has a slash, else the first match on `PATH`.
fn which(program: &str) -> std::path::PathBuf {
    if program.contains('/') {
        return program.into();
    }
    std::env::var_os("PATH")
        .and_then(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join(program))
                .find(|f| f.is_file())
        })
        .unwrap_or_else(|| program.into())
}

/// Starts `cmd` traced (`births.rs`) and samples it at `hz` until it exits: its pid, what was
/// seen (every birth and death exact) and its exit code (`None` if a signal killed it).
pub fn observe_traced(
    cmd: Command,
    hz: u32,
) -> std::io::Result<(u32, sampler::Observed, output::Ending)> {
    let start = Instant::now();
    let traced = births::spawn(cmd, start)?;
    let pid = traced.pid;
    set_child(pid);
    let done = std::sync::Arc::clone(&traced.done);
    // Acquire pairs with the tracer's Release store once the command has exited.
    let mut observed = sampler::sample_from(pid, hz, true, start, || {
        done.load(std::sync::atomic::Ordering::Acquire)
    });
    let lives = traced.finish();
    births::merge(&mut observed, &lives);
    let ending = output::Ending::from_parts(lives.exit_code, lives.exit_signal);
    Ok((pid, observed, ending))
}

/// `threadlab watch`: samples a running process for `--seconds` or until it exits.
pub fn watch(args: WatchArgs) -> ExitCode {
    let pid = args.pid;
    if !std::path::Path::new(&format!("/proc/{pid}/task")).is_dir() {
        return crate::cli::usage_error(&format!("no process {pid} (or /proc is not mounted)"));
    }
    if let Some(out) = &args.output {
        if let Err(e) = crate::cli::check_trace_output(out) {
            return crate::cli::usage_error(&e);
        }
    }
    let start = Instant::now();
    // `--seconds` is at most a year (cli.rs), so this cannot overflow; saturate regardless.
    let until = start.checked_add(args.seconds).unwrap_or(start + MAX_WAIT);
    // Births and deaths traced when ptrace access is allowed, else sampled (the report says).
    let observed = match births::attach(pid, start) {
        Ok(attached) => {
            let done = std::sync::Arc::clone(&attached.done);
            let mut observed = sampler::sample_from(pid, args.hz, false, start, || {
                // Acquire pairs with the tracer's Release store once the process has exited.
                done.load(std::sync::atomic::Ordering::Acquire) || Instant::now() >= until
            });
            let lives = attached.finish();
            births::merge(&mut observed, &lives);
            observed
        }
        Err(_) => sampler::sample_from(pid, args.hz, false, start, || Instant::now() >= until),
    };
    let what = format!("`{}` (pid {pid})", process_name(pid, &observed));
    if finish(&what, &observed, args.hz, args.output.as_deref()) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Appends the report to `text` and saves the trace if asked.
fn finish_into(
    text: &mut String,
    what: &str,
    observed: &sampler::Observed,
    (trace, futexes): (&threadlab::trace::Trace, &[convert::FutexRow]),
    hz: u32,
    out: Option<&std::path::Path>,
) -> Result<(), String> {
    text.push_str(&report::render(what, observed, hz, futexes));
    text.push('\n');
    text.push_str(&trace.diagnose().to_string());
    if let Some(path) = out {
        trace.save(path).map_err(|e| e.to_string())?;
        text.push_str(&format!("trace: {}\n", path.display()));
    }
    Ok(())
}

/// The process's name: its `comm` now, or, once it has exited and been reaped (its `/proc`
/// entry gone), its main thread's name at the last sample that saw it.
fn process_name(pid: u32, observed: &sampler::Observed) -> String {
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    let comm = comm.trim();
    if !comm.is_empty() {
        return comm.to_owned();
    }
    observed
        .threads
        .iter()
        .find(|t| t.tid == u64::from(pid))
        .map_or_else(|| "?".to_owned(), |t| t.name.clone())
}

/// Prints the report, saves the trace if asked; `false` if saving failed.
fn finish(
    what: &str,
    observed: &sampler::Observed,
    hz: u32,
    out: Option<&std::path::Path>,
) -> bool {
    let (trace, futexes) = convert::convert(observed);
    print!("{}", report::render(what, observed, hz, &futexes));
    println!();
    print!("{}", trace.diagnose());
    if let Some(path) = out {
        if let Err(e) = trace.save(path) {
            eprintln!("error: {e}");
            return false;
        }
        println!("trace: {}", path.display());
    }
    true
}
