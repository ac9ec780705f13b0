//! `threadlab run -- CMD` observing child programs with known behaviour (the hidden
//! `threadlab demo KIND` subcommand), checking what the report classifies and counts: a
//! contended `std::sync::Mutex` is lock contention on one futex address naming both threads;
//! four CPU-bound threads on two CPUs are preemption; threads created by the thousand are thread
//! creation; a sleeping thread is asleep, not waiting on a lock; a command that stops itself
//! stays stopped until SIGCONT. Linux only (`/proc`).

#![cfg(target_os = "linux")]

use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

mod observe_support;

/// How long one observed run may take before the test fails instead of hanging.
const WATCHDOG: Duration = Duration::from_secs(120);

/// Runs `cmd` to completion with the watchdog: kills it (and with it the observed child, which
/// `run` traces with PTRACE_O_EXITKILL) and fails if it takes longer than [`WATCHDOG`].
fn output_within(cmd: Command) -> Output {
    observe_support::output_within(cmd, WATCHDOG)
}

/// A fresh path for a report in the temporary directory.
fn report_path(tag: &str) -> std::path::PathBuf {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    // Relaxed: only uniqueness of the number matters.
    let n = N.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!(
        "threadlab-test-{}-{tag}-{n}.txt",
        std::process::id()
    ))
}

/// Runs `threadlab run RUN_FLAGS -- threadlab demo KIND --seconds S EXTRA` and returns the
/// demo's own stdout followed by the report (the file named with `--report`).
fn observe_with(run_flags: &[&str], kind: &str, seconds: &str, extra: &[&str]) -> String {
    let exe = env!("CARGO_BIN_EXE_threadlab");
    let path = report_path(kind);
    let mut cmd = Command::new(exe);
    cmd.args(["run", "--hz", "100", "--report"])
        .arg(&path)
        .args(run_flags)
        .args(["--", exe, "demo", kind, "--seconds", seconds])
        .args(extra);
    let out = output_within(cmd);
    let report = std::fs::read_to_string(&path).unwrap_or_default();
    let _ = std::fs::remove_file(&path);
    assert!(
        out.status.success(),
        "threadlab run failed: {}\n{report}",
        String::from_utf8_lossy(&out.stderr)
    );
    format!("{}{report}", String::from_utf8_lossy(&out.stdout))
}

/// Runs `threadlab run -- threadlab demo KIND --seconds S EXTRA`: the demo's stdout and the
/// report.
fn observe(kind: &str, seconds: &str, extra: &[&str]) -> String {
    observe_with(&[], kind, seconds, extra)
}

/// The report's findings lines (` ! pitfall (subject): …`).
fn findings(report: &str) -> Vec<&str> {
    report.lines().filter(|l| l.starts_with(" ! ")).collect()
}

/// The thread row of the thread named `name`: its sample shares (run, futex, io, sleep, other).
fn shares(report: &str, name: &str) -> [f64; 5] {
    let row = report
        .lines()
        .skip_while(|l| !l.starts_with("Threads ("))
        .find(|l| l.split_whitespace().nth(1) == Some(name))
        .unwrap_or_else(|| panic!("no row for `{name}` in\n{report}"));
    // tid name life on-cpu preempt: life, on-cpu and preempt are "<n> <unit>".
    let f: Vec<&str> = row.split_whitespace().collect();
    let pct: Vec<f64> = f[8..13].iter().map(|x| x.parse().unwrap()).collect();
    [pct[0], pct[1], pct[2], pct[3], pct[4]]
}

/// The report's thread rows whose thread is named `idle-…` (the name is a row's second word).
fn idle_rows(report: &str) -> usize {
    report
        .lines()
        .filter(|l| {
            l.split_whitespace()
                .nth(1)
                .is_some_and(|n| n.starts_with("idle-"))
        })
        .count()
}

#[test]
fn two_threads_on_one_mutex_are_contention_on_one_futex_address() {
    let report = observe("mutex", "2", &[]);
    let rows: Vec<&str> = report
        .lines()
        .filter(|l| l.starts_with(" futex ") && l.contains("DEMO_LOCK"))
        .collect();
    assert_eq!(
        rows.len(),
        1,
        "one futex address, named by its symbol:\n{report}"
    );
    assert!(
        rows[0].contains("contender-a") && rows[0].contains("contender-b"),
        "both threads wait on it:\n{report}"
    );
    let contention = findings(&report)
        .into_iter()
        .filter(|f| f.contains("lock-contention") && f.contains("DEMO_LOCK"))
        .count();
    assert_eq!(contention, 1, "{report}");
    assert!(report.contains("need an instrumented run"), "{report}");
}

#[test]
fn four_spinning_threads_on_two_cpus_are_preemption() {
    let report = observe("spin", "1.5", &[]);
    let f = findings(&report);
    assert!(f.iter().any(|l| l.contains(" preemption (")), "{report}");
    assert!(f.iter().any(|l| l.contains("oversubscription")), "{report}");
    for i in 0..4 {
        let s = shares(&report, &format!("spinner-{i}"));
        assert!(s[0] >= 90.0, "spinner-{i} is runnable, not blocked: {s:?}");
        // The doctor's time per state counts a spinner's time on a CPU as running (it used to
        // read 0 ns running and all "other" for a program observed from outside).
        let row = report
            .lines()
            .skip_while(|l| !l.starts_with("Time per state"))
            .find(|l| l.trim_start().starts_with(&format!("spinner-{i} ")))
            .unwrap_or_else(|| panic!("no time-per-state row for spinner-{i}:\n{report}"));
        let util: f64 = row
            .split_whitespace()
            .find_map(|t| t.strip_suffix('%'))
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("no utilisation in {row}"));
        assert!(util >= 10.0, "spinner-{i} ran on a CPU: {row}");
    }
    assert!(!f.iter().any(|l| l.contains("lock-contention")), "{report}");
}

/// With `--sample-only` (no ptrace) births come from the samples: a lower bound.
#[test]
fn threads_created_by_the_thousand_are_thread_creation() {
    let report = observe_with(&["--sample-only"], "threads", "2", &[]);
    let created = number_after(&report, "demo threads: created ")
        .expect("the demo says how many threads it created");
    assert!(created >= 1000, "{created} threads");
    assert!(
        findings(&report)
            .iter()
            .any(|l| l.contains("thread-creation")),
        "{report}"
    );
    let seen = number_after(&report, "threads created: at least ")
        .expect("a lower bound of threads created");
    assert!(
        (16..=created + 1).contains(&seen),
        "{seen} threads seen of {created}"
    );
}

/// Every thread is counted, by the interposer inside the process (the default: nothing is
/// stopped) and traced with ptrace (`--ptrace`): a child that creates and joins exactly N
/// threads is reported with exactly N threads created (its first thread is not counted), all
/// of which exited, and the doctor's thread-creation finding counts the same N.
#[test]
fn every_thread_created_is_counted_exactly() {
    for (flags, by) in [(&[][..], "interposer"), (&["--ptrace"][..], "ptrace")] {
        let report = every_thread_created_is_counted_exactly_with(flags);
        assert!(
            report
                .lines()
                .any(|l| l.starts_with("threads created: ") && l.contains(by)),
            "counted by the {by}:\n{report}"
        );
    }
}

fn every_thread_created_is_counted_exactly_with(flags: &[&str]) -> String {
    const N: u64 = 2_000;
    let report = observe_with(flags, "join", "0", &["--threads", &N.to_string()]);
    assert!(
        report.contains(&format!("demo join: created {N} threads")),
        "{report}"
    );
    let line = report
        .lines()
        .find(|l| l.starts_with("threads created: "))
        .unwrap_or_else(|| panic!("no count of threads created:\n{report}"));
    assert!(
        line.starts_with(&format!(
            "threads created: {N} exactly, {N} of which exited"
        )),
        "{line}"
    );
    assert!(
        findings(&report).iter().any(|l| l.contains(&format!(
            "thread-creation (threads task N): {N} threads of `task N`"
        ))),
        "{report}"
    );
    assert!(
        report.contains("Thread creation in bursts (") && report.contains("exact: every birth"),
        "{report}"
    );
    report
}

#[test]
fn a_sleeping_thread_is_sleeping_not_waiting_on_a_lock() {
    let report = observe("sleep", "1.5", &[]);
    let s = shares(&report, "sleeper");
    assert!(s[3] >= 80.0, "asleep most of the samples: {s:?}\n{report}");
    assert_eq!(s[1], 0.0, "never in futex: {s:?}");
    assert!(
        !findings(&report)
            .iter()
            .any(|l| l.contains("lock-contention")),
        "{report}"
    );
}

#[test]
fn watch_of_a_running_child_sees_its_threads() {
    let exe = env!("CARGO_BIN_EXE_threadlab");
    let mut child = Command::new(exe)
        .args(["demo", "idle", "--threads", "6", "--seconds", "3"])
        .spawn()
        .expect("start the demo");
    let out = Command::new(exe)
        .args(["watch", &child.id().to_string(), "--seconds", "1"])
        .output()
        .expect("start threadlab watch");
    child.wait().expect("demo ends");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{report}");
    assert_eq!(idle_rows(&report), 6, "{report}");
}

/// Spawns `cmd` and a thread that waits for it (reaping it as soon as it exits, as a shell or
/// a service manager would); returns its pid and where its output arrives (stdout only where
/// `cmd` pipes it).
fn spawn_waited(cmd: &mut Command) -> (u32, mpsc::Receiver<std::io::Result<Output>>) {
    let child = cmd.spawn().expect("start the watched process");
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    (pid, rx)
}

/// The demo the `watch` tests attach to: `threadlab demo threads --seconds 3`, its stdout piped.
fn demo_threads_waited() -> (u32, mpsc::Receiver<std::io::Result<Output>>) {
    spawn_waited(
        Command::new(env!("CARGO_BIN_EXE_threadlab"))
            .args(["demo", "threads", "--seconds", "3"])
            .stdout(Stdio::piped()),
    )
}

/// The first number after `prefix` at the start of a line of `text`.
fn number_after(text: &str, prefix: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(prefix))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
}

/// The `threads created: …` line of a `watch` report on the demo; `None` (the test is skipped)
/// when ptrace access was refused: Yama's ptrace_scope 1 refuses a sibling (the demo is the
/// test's child, not the watcher's), so there is nothing to attach to; the sampled path has its
/// own test.
fn attached_count_line(report: &str) -> Option<&str> {
    if report.contains("syscall column: NOT VISIBLE") {
        eprintln!("skipped: ptrace access to the demo was refused");
        return None;
    }
    let line = report
        .lines()
        .find(|l| l.starts_with("threads created: "))
        .unwrap_or_else(|| panic!("no count of threads created:\n{report}"));
    Some(line)
}

/// `watch` of a process it may trace attaches to it: births since attaching are counted
/// exactly (at least the 16 a burst needs, at most what the demo says it created), and the
/// process goes on after the watcher detaches (it finishes and prints its count).
#[test]
fn watch_attaches_counts_births_and_detaches() {
    let exe = env!("CARGO_BIN_EXE_threadlab");
    let (pid, rx) = demo_threads_waited();
    std::thread::sleep(Duration::from_millis(300));
    let mut watch = Command::new(exe);
    watch.args(["watch", &pid.to_string(), "--seconds", "1"]);
    let out = output_within(watch);
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{report}");
    let Ok(demo_out) = rx.recv_timeout(WATCHDOG) else {
        // SAFETY: kill has no memory preconditions; `pid` is our unreaped child.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        panic!("watchdog: the watched demo did not finish after the watcher detached");
    };
    let demo_out = demo_out.expect("wait for the demo");
    assert!(
        demo_out.status.success(),
        "the demo goes on after the watch"
    );
    let created = number_after(
        &String::from_utf8_lossy(&demo_out.stdout),
        "demo threads: created ",
    )
    .expect("the demo says how many threads it created");
    let Some(line) = attached_count_line(&report) else {
        return;
    };
    assert!(
        line.contains("exactly") && line.contains("since attaching"),
        "{line}"
    );
    let seen: u64 = line
        .split_whitespace()
        .nth(2)
        .and_then(|n| n.parse().ok())
        .expect("a count");
    assert!(
        (16..=created).contains(&seen),
        "{seen} of {created}: {line}"
    );
}

/// `watch` until the process exits counts each thread born while watched once: every one of
/// them has died by then, so no more were created than exited. (A short-lived thread's death
/// can reach the tracer before its creator's clone event; counted again there, it was a life
/// that never ended.)
#[test]
fn watch_to_the_end_counts_each_thread_once() {
    let exe = env!("CARGO_BIN_EXE_threadlab");
    let (pid, rx) = demo_threads_waited();
    // Creating threads: more than its first one.
    let tasks = || std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |d| d.count());
    assert!(wait_until(|| tasks() > 1), "the demo creates threads");
    let mut watch = Command::new(exe);
    watch.args(["watch", &pid.to_string(), "--seconds", "600"]);
    let out = output_within(watch);
    let report = String::from_utf8_lossy(&out.stdout);
    let demo = rx.recv_timeout(WATCHDOG);
    assert!(out.status.success(), "{report}");
    assert!(
        demo.is_ok_and(|d| d.is_ok_and(|d| d.status.success())),
        "the demo ran to its end"
    );
    let Some(line) = attached_count_line(&report) else {
        return;
    };
    let count = |i: usize| -> u64 {
        line.split_whitespace()
            .nth(i)
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("a count: {line}"))
    };
    let (created, exited) = (count(2), count(4));
    assert!(
        line.contains("exactly") && line.contains("of which exited") && created >= 16,
        "{line}"
    );
    // `exited` also counts threads that were there before the watch began and died during it.
    assert!(
        created <= exited,
        "{created} created, {exited} exited: {line}"
    );
}

/// `watch` says plainly that the syscall column is not visible when ptrace access to the
/// process is refused, and still samples its threads. As root (CI), the watcher drops to
/// `nobody` with `setpriv` and watches a root-owned child; as another user it watches PID 1,
/// which belongs to root.
#[test]
fn watch_without_ptrace_access_says_what_it_cannot_see() {
    let exe = env!("CARGO_BIN_EXE_threadlab");
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let (out, child) = if root {
        let child = Command::new(exe)
            .args(["demo", "idle", "--threads", "3", "--seconds", "3"])
            .spawn()
            .expect("start the demo");
        let out = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .args([exe, "watch", &child.id().to_string(), "--seconds", "1"])
            .output()
            .expect("setpriv (util-linux) runs the watcher as nobody");
        (out, Some(child))
    } else {
        let out = Command::new(exe)
            .args(["watch", "1", "--seconds", "0.5"])
            .output()
            .expect("start threadlab watch");
        (out, None)
    };
    if let Some(mut c) = child {
        c.wait().expect("demo ends");
    }
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{report}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        report.contains("syscall column: NOT VISIBLE"),
        "the report says what it cannot see: {report}"
    );
    if root {
        assert_eq!(
            idle_rows(&report),
            3,
            "the threads are still sampled: {report}"
        );
    }
}

/// `watch` of a process that exits during the watch (and is reaped by its parent, this test)
/// still names it in the report's header: from the last sample that saw it, since its `/proc`
/// entry is gone by the time the report is written.
#[test]
fn watch_names_a_process_that_exited_during_the_watch() {
    let exe = env!("CARGO_BIN_EXE_threadlab");
    // `sh` runs `sleep` as a child and waits for it (the `; true` keeps it from exec'ing).
    let (pid, rx) = spawn_waited(Command::new("sh").args(["-c", "sleep 1; true"]));
    let mut watch = Command::new(exe);
    watch.args(["watch", &pid.to_string(), "--seconds", "60", "--hz", "100"]);
    let out = output_within(watch);
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{report}");
    let status = rx.recv_timeout(WATCHDOG).expect("sh was reaped");
    assert!(status.expect("wait for sh").status.success());
    assert!(
        report.contains(&format!("`sh` (pid {pid})")),
        "the header names the exited process:\n{report}"
    );
}

/// A process's state letter from `/proc/PID/stat` (`T` stopped, `t` traced, `S`, `R`…).
fn proc_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(") ")?.1.chars().next()
}

/// Waits (at most the watchdog) until `pred` holds; false if it never did.
fn wait_until(mut pred: impl FnMut() -> bool) -> bool {
    let give_up = std::time::Instant::now() + WATCHDOG;
    while std::time::Instant::now() < give_up {
        if pred() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

/// Job control under `watch`: a process that stopped itself (`kill -STOP $$`) stays stopped
/// while watched, and a SIGCONT resumes it while the watch goes on (it used to stay stopped
/// until the watcher detached, here after ten minutes: the watchdog would fire).
#[test]
fn watch_lets_sigcont_resume_a_stopped_process() {
    let exe = env!("CARGO_BIN_EXE_threadlab");
    let (pid, rx) = spawn_waited(Command::new("sh").args(["-c", "kill -STOP $$; exit 7"]));
    assert!(
        wait_until(|| proc_state(pid) == Some('T')),
        "sh stopped itself"
    );
    let watch = Command::new(exe)
        .args(["watch", &pid.to_string(), "--seconds", "600"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start threadlab watch");
    let watch_pid = watch.id();
    let tracer = || {
        std::fs::read_to_string(format!("/proc/{pid}/status"))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("TracerPid:"))
                    .map(|t| t.trim() != "0")
            })
            .unwrap_or(false)
    };
    if !wait_until(|| tracer() || proc_state(pid).is_none()) || !tracer() {
        // SAFETY: kill has no memory preconditions; both are our unreaped children.
        unsafe {
            libc::kill(watch_pid as i32, libc::SIGKILL);
            libc::kill(pid as i32, libc::SIGKILL);
        }
        let _ = output_within_child(watch);
        eprintln!("skipped: ptrace access to sh was refused");
        return;
    }
    // Watched, it stays stopped (`t`: its group-stop as a tracee; attaching wakes it for an
    // instant to re-trap, so the state is waited for, not read once).
    assert!(
        wait_until(|| proc_state(pid) == Some('t')),
        "still stopped once watched"
    );
    // SAFETY: kill has no memory preconditions; `pid` is our unreaped child.
    unsafe { libc::kill(pid as i32, libc::SIGCONT) };
    let status = rx.recv_timeout(WATCHDOG);
    // Whatever happened, the watcher is ended (it ends by itself once sh has exited).
    let out = output_within_child(watch);
    let status = status
        .expect("sh ran on after SIGCONT while watched")
        .expect("wait for sh");
    assert_eq!(status.status.code(), Some(7));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Waits for a started `threadlab` with the watchdog (see [`output_within`]).
fn output_within_child(child: std::process::Child) -> Output {
    observe_support::wait_within(child, WATCHDOG, "threadlab")
}

/// The children of process `pid` (every thread's), from `/proc/PID/task/*/children`.
fn children_of(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|c| {
            c.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// Ctrl-C at a terminal (SIGINT to the foreground process group) and a SIGTERM sent to
/// `threadlab run` alone: the observer is not killed by them; the command gets the signal
/// (once) and ends, the report and the `-o` trace are still written for what was seen, and only
/// then does `run` die of the signal that killed the command, as its parent would have seen.
///
/// `run` is started as a shell starts a foreground job, SIGINT and SIGTERM at their defaults:
/// a signal its parent ignored stays ignored for `run` and the command alike (a background job
/// of a script without job control has SIGINT ignored), and the command would sleep on.
#[test]
fn run_outlives_sigint_and_sigterm_until_it_wrote_what_it_saw() {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    let exe = env!("CARGO_BIN_EXE_threadlab");
    for (flags, sig, to_group) in [
        (&[][..], libc::SIGINT, true),
        (&[][..], libc::SIGTERM, false),
        (&["--sample-only"][..], libc::SIGINT, true),
        (&["--sample-only"][..], libc::SIGTERM, false),
    ] {
        let dir = std::env::temp_dir().join(format!(
            "threadlab-observe-signal-{}-{sig}-{}",
            std::process::id(),
            flags.len()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let out_file = dir.join("t.tltrace");
        let report = dir.join("report.txt");
        let mut tl = Command::new(exe);
        // SAFETY: the closure runs in the forked child before exec and only calls `signal`,
        // which is async-signal-safe.
        unsafe {
            tl.pre_exec(|| {
                libc::signal(libc::SIGINT, libc::SIG_DFL);
                libc::signal(libc::SIGTERM, libc::SIG_DFL);
                Ok(())
            });
        }
        let tl = tl
            .arg("run")
            .args(flags)
            .arg("-o")
            .arg(&out_file)
            .arg("--report")
            .arg(&report)
            .args(["--", "sleep", "600"])
            // Its own process group, as a shell's foreground job.
            .process_group(0)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start threadlab run");
        let tl_pid = tl.id();
        let sleeping = wait_until(|| {
            children_of(tl_pid).into_iter().any(|c| {
                std::fs::read_to_string(format!("/proc/{c}/comm"))
                    .is_ok_and(|n| n.trim() == "sleep")
            })
        });
        let target = if to_group {
            -(tl_pid as i32)
        } else {
            tl_pid as i32
        };
        // SAFETY: kill has no memory preconditions; the group and the process are ours.
        unsafe { libc::kill(target, sig) };
        let out = output_within_child(tl);
        let text = std::fs::read_to_string(&report).unwrap_or_default();
        assert!(sleeping, "the command started");
        assert_eq!(
            out.status.signal(),
            Some(sig),
            "{flags:?}: threadlab ends as the command did, killed by signal {sig}"
        );
        assert!(
            text.contains(&format!("killed by signal {sig}")),
            "{flags:?}: {text}"
        );
        assert!(
            text.contains("trace: "),
            "{flags:?} {sig}: the report and the trace were written:\n{text}"
        );
        assert!(out_file.exists(), "{flags:?} {sig}: the -o trace exists");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Job control under `run`: a command that stops itself (`kill -STOP $$`, and `kill -TSTP $$`
/// as a terminal's Ctrl-Z would) stays stopped until it is sent SIGCONT, traced or not, as
/// without the observer. The command says what it saw, so nothing here depends on timing: it
/// writes its pid to a file, stops, and once resumed exits 0 only if a second file exists,
/// which the test creates after it has seen the command stopped (`/proc/PID/stat`) and just
/// before it sends SIGCONT. A command resumed without SIGCONT (traced, it used to be within
/// milliseconds) has already exited 9, or never shows as stopped.
#[test]
fn run_keeps_a_stopped_command_stopped_until_sigcont() {
    use std::os::unix::process::CommandExt;
    let exe = env!("CARGO_BIN_EXE_threadlab");
    for flags in [&[][..], &["--ptrace"][..], &["--sample-only"][..]] {
        for sig in ["STOP", "TSTP"] {
            let dir = std::env::temp_dir().join(format!(
                "threadlab-observe-jobctl-{}-{sig}-{}",
                std::process::id(),
                flags
                    .first()
                    .map_or("default", |f| f.trim_start_matches('-'))
            ));
            std::fs::create_dir_all(&dir).unwrap();
            let (pid_file, cont_file) = (dir.join("pid"), dir.join("cont"));
            // Only builtins from `echo` on: no child process whose end would stop the shell
            // (traced, for its SIGCHLD) before it stops itself.
            let script = format!(
                "echo $$ > '{}'; kill -{sig} $$; test -e '{}' && exit 0; exit 9",
                pid_file.display(),
                cont_file.display()
            );
            let tl = Command::new(exe)
                .arg("run")
                .args(flags)
                .arg("--report")
                .arg(dir.join("report.txt"))
                .args(["--", "sh", "-c", &script])
                // Its own process group, as a shell's job: SIGTSTP is ignored in an orphaned
                // one, which the test's own group might be.
                .process_group(0)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("start threadlab run");
            let mut pid = None;
            wait_until(|| {
                pid = std::fs::read_to_string(&pid_file)
                    .ok()
                    .and_then(|s| s.strip_suffix('\n')?.parse::<u32>().ok());
                pid.is_some()
            });
            // Stopped (`T`, or `t` when traced), or gone: a resumed shell exits at once.
            let mut state = None;
            if let Some(pid) = pid {
                wait_until(|| {
                    state = proc_state(pid);
                    !matches!(state, Some('R' | 'S' | 'D'))
                });
                std::fs::write(&cont_file, b"").unwrap();
                // SAFETY: kill has no memory preconditions; `pid` is not reaped before
                // `threadlab run` ends, which it cannot without this signal unless the shell
                // has already exited (then the pid is a zombie or the signal goes nowhere).
                unsafe { libc::kill(pid as i32, libc::SIGCONT) };
            } else {
                // SAFETY: kill has no memory preconditions; `threadlab run` is our child.
                unsafe { libc::kill(tl.id() as i32, libc::SIGKILL) };
            }
            let out = output_within_child(tl);
            let _ = std::fs::remove_dir_all(&dir);
            assert!(pid.is_some(), "{flags:?} {sig}: the command started");
            assert!(
                matches!(state, Some('T' | 't')),
                "{flags:?} SIG{sig}: the command stopped (state {state:?})"
            );
            assert_eq!(
                out.status.code(),
                Some(0),
                "{flags:?} SIG{sig}: the command stayed stopped until SIGCONT (exit 9: it ran \
                 on before it)\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}
