//! `threadlab run -- CMD` on programs written here, not threadlab's demos: the command's output
//! and exit code are its own (the report goes to a file, never to the command's stdout or
//! stderr; the exit code is the command's, and a command killed by a signal leaves `run` dead
//! of the same signal). Linux only.

#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

mod observe_support;

/// How long one observed run may take before the test fails instead of hanging.
const WATCHDOG: Duration = Duration::from_secs(180);

/// Runs `cmd` to completion with the watchdog (kills it and fails past [`WATCHDOG`]).
fn output_within(cmd: Command) -> Output {
    observe_support::output_within(cmd, WATCHDOG)
}

/// A private scratch directory for one test.
fn scratch(tag: &str) -> PathBuf {
    observe_support::scratch(tag)
}

/// `threadlab run --report DIR/report.txt FLAGS -- ARGV`: its output and the report.
fn run(dir: &Path, flags: &[&str], argv: &[&str]) -> (Output, String) {
    let report = dir.join("report.txt");
    let mut cmd = Command::new(observe_support::threadlab());
    cmd.arg("run")
        .arg("--report")
        .arg(&report)
        .args(flags)
        .arg("--")
        .args(argv);
    let out = output_within(cmd);
    let text = std::fs::read_to_string(&report).unwrap_or_default();
    (out, text)
}

/// Whether `prog` can be started (`prog --version` runs).
fn have(prog: &str) -> bool {
    Command::new(prog)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

#[test]
fn the_commands_stdout_is_byte_identical_to_an_unobserved_run() {
    let dir = scratch("stdout");
    let data = dir.join("data.bin");
    // Compressible but not trivial: a counter's bytes.
    let bytes: Vec<u8> = (0u32..200_000)
        .flat_map(|i| (i.wrapping_mul(2654435761) % 1000).to_le_bytes())
        .collect();
    std::fs::write(&data, &bytes).unwrap();
    let data = data.to_str().unwrap();
    let argv: Vec<&str> = if have("xz") {
        vec!["xz", "-c", "-T2", data]
    } else if have("gzip") {
        vec!["gzip", "-c", data]
    } else {
        eprintln!("skipped compressor: neither xz nor gzip; using cat");
        vec!["cat", data]
    };
    let plain = Command::new(argv[0])
        .args(&argv[1..])
        .output()
        .expect("unobserved run");
    assert!(plain.status.success());
    let (observed, report) = run(&dir, &[], &argv);
    assert!(observed.status.success(), "{report}");
    assert!(
        observed.stdout == plain.stdout,
        "the observed stdout differs: {} bytes against {} unobserved",
        observed.stdout.len(),
        plain.stdout.len()
    );
    assert!(!report.is_empty(), "the report went nowhere");
    // Nothing on the command's stderr but the one line naming the report (no terminal here).
    let err = String::from_utf8_lossy(&observed.stderr);
    assert!(
        err.lines()
            .all(|l| l.starts_with("threadlab run: report in ")),
        "stderr: {err}"
    );
}

#[test]
fn the_exit_code_is_the_commands() {
    let dir = scratch("exit");
    let (out, report) = run(&dir, &[], &["sh", "-c", "exit 3"]);
    assert_eq!(out.status.code(), Some(3), "{report}");
    assert!(report.contains("exited with status 3"), "{report}");
    let (out, report) = run(&dir, &["--sample-only"], &["sh", "-c", "exit 5"]);
    assert_eq!(out.status.code(), Some(5), "{report}");
    // Killed by a signal: `run` dies of the same signal once its report is written.
    let (out, report) = run(&dir, &[], &["sh", "-c", "kill -9 $$"]);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(out.status.signal(), Some(9), "{report}");
    assert!(report.contains("killed by signal 9"), "{report}");
}

/// Compiles the C program `src` with `cc` into `dir/name` (`None` without a C compiler).
fn compile_c(dir: &Path, name: &str, src: &str) -> Option<PathBuf> {
    observe_support::compile_c(dir, name, src)
}

/// Two threads on one global mutex, each holding it across a short sleep so the other must
/// wait; the program counts its own contended acquisitions (a failed trylock, then a lock).
const TWO_THREADS: &str = r#"
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static pthread_mutex_t big_lock = PTHREAD_MUTEX_INITIALIZER;
static long contended[2];
static void *work(void *p) {
    long id = (long)p;
    for (int i = 0; i < 300; i++) {
        if (pthread_mutex_trylock(&big_lock) != 0) {
            contended[id]++;
            pthread_mutex_lock(&big_lock);
        }
        usleep(200);
        pthread_mutex_unlock(&big_lock);
        usleep(50);
    }
    return 0;
}
int main(void) {
    pthread_t t[2];
    for (long i = 0; i < 2; i++) pthread_create(&t[i], 0, work, (void *)i);
    for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
    printf("contended acquisitions: %ld\n", contended[0] + contended[1]);
    return 0;
}
"#;

/// The `N` of the report's `lock NAME: N contended waits` line for the lock named `name`.
fn waits_of(report: &str, name: &str) -> Option<u64> {
    report
        .lines()
        .find_map(|l| l.trim().strip_prefix(&format!("lock {name}: ")))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
}

/// The program's own count of its contended acquisitions.
fn own_count(out: &Output) -> u64 {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("contended acquisitions: "))
        .and_then(|n| n.trim().parse().ok())
        .expect("the program prints its count")
}

#[test]
fn a_contended_global_mutex_is_found_named_and_counted() {
    let dir = scratch("two");
    let Some(exe) = compile_c(&dir, "two", TWO_THREADS) else {
        return;
    };
    let (out, report) = run(&dir, &[], &[exe.to_str().unwrap()]);
    assert!(out.status.success(), "{report}");
    let own = own_count(&out);
    assert!(
        own >= 50,
        "the program itself saw only {own} contended acquisitions"
    );
    let seen = waits_of(&report, "big_lock+0x0 (two)")
        .unwrap_or_else(|| panic!("big_lock not named in\n{report}"));
    let diff = seen.abs_diff(own) as f64;
    assert!(
        diff <= 0.2 * own as f64,
        "{seen} waits reported, {own} counted by the program"
    );
    assert!(
        report
            .lines()
            .any(|l| l.starts_with(" ! lock-contention (lock big_lock+0x0 (two))")),
        "{report}"
    );
    assert!(report.contains("threads created: 2 exactly"), "{report}");
}

#[test]
fn under_a_shell_the_lock_is_still_found_in_the_child_process() {
    let dir = scratch("shell");
    let Some(exe) = compile_c(&dir, "two", TWO_THREADS) else {
        return;
    };
    // `; exit 0` keeps the shell from exec'ing the program: it runs in a child process.
    let script = format!("{}; exit 0", exe.display());
    let (out, report) = run(&dir, &[], &["sh", "-c", &script]);
    assert!(out.status.success(), "{report}");
    let own = own_count(&out);
    let seen = waits_of(&report, "big_lock+0x0 (two)")
        .unwrap_or_else(|| panic!("big_lock not found under sh -c:\n{report}"));
    assert!(
        seen.abs_diff(own) as f64 <= 0.2 * own as f64,
        "{seen} against {own}"
    );
    assert!(
        report.contains("processes: 2 ran with the interposer"),
        "{report}"
    );
    assert!(
        report
            .lines()
            .any(|l| l.starts_with(" ! lock-contention (lock big_lock+0x0 (two))")),
        "{report}"
    );
}

#[test]
fn compare_of_two_runs_matches_the_lock_across_address_randomisation() {
    let dir = scratch("compare");
    let Some(exe) = compile_c(&dir, "two", TWO_THREADS) else {
        return;
    };
    let a = dir.join("a.tltrace");
    let b = dir.join("b.tltrace");
    for t in [&a, &b] {
        let (out, report) = run(&dir, &["-o", t.to_str().unwrap()], &[exe.to_str().unwrap()]);
        assert!(out.status.success(), "{report}");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_threadlab"))
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .output()
        .expect("compare");
    let text = String::from_utf8_lossy(&out.stdout);
    let (spans, locks) = text.split_once("\nLocks\n").expect("a Locks section");
    let rows = spans
        .lines()
        .filter(|l| l.contains("big_lock") && l.contains("wait"))
        .count();
    assert_eq!(rows, 1, "the lock should be one row:\n{text}");
    // Its figures side by side, each once, known on both sides.
    for figure in ["acquisitions", "waits", "waited"] {
        let rows: Vec<&str> = locks
            .lines()
            .filter(|l| l.contains("big_lock") && l.split_whitespace().any(|w| w == figure))
            .collect();
        assert_eq!(rows.len(), 1, "{figure}:\n{text}");
        assert!(
            !rows[0].contains(" - "),
            "{figure} unknown on a side:\n{text}"
        );
    }
}

#[test]
fn four_cpu_bound_python_threads_wait_for_the_gil_and_it_is_named() {
    let dir = scratch("gil");
    let script = dir.join("gil.py");
    std::fs::write(
        &script,
        "import threading\n\
         def spin():\n    n = 0\n    for i in range(2_000_000):\n        n += i\n\
         ts = [threading.Thread(target=spin) for _ in range(4)]\n\
         for t in ts: t.start()\n\
         for t in ts: t.join()\n",
    )
    .unwrap();
    if !have("python3") {
        eprintln!("skipped: no python3");
        return;
    }
    let (out, report) = run(&dir, &[], &["python3", script.to_str().unwrap()]);
    assert!(out.status.success(), "{report}");
    assert!(
        report
            .lines()
            .any(|l| l.starts_with(" ! lock-contention (lock the Python GIL (CPython")),
        "{report}"
    );
    assert!(report.contains("threads created: 4 exactly"), "{report}");
    // Question 1 says the GIL ran them one at a time: the process used about one CPU of two.
    let q1 = report
        .lines()
        .skip_while(|l| !l.starts_with(" 1. "))
        .take(2)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(!q1.contains("(fine)"), "{q1}");
    assert!(
        q1.contains("queued for `the Python GIL") && q1.contains("stood idle"),
        "{q1}"
    );
}

/// A Go program's goroutines contend on a `sync.Mutex`: invisible to the OS and to the
/// interposer (the binary is static), which the report and the lock question say, naming the Go
/// runtime's profiles.
#[test]
fn a_go_program_is_reported_as_not_seen_with_where_to_look() {
    let dir = scratch("go");
    let src = dir.join("mu.go");
    std::fs::write(
        &src,
        "package main\nimport (\"fmt\"; \"sync\")\nfunc main() {\n\
         var mu sync.Mutex\nvar wg sync.WaitGroup\nn := 0\n\
         for g := 0; g < 64; g++ {\nwg.Add(1)\ngo func() {\ndefer wg.Done()\n\
         for i := 0; i < 20000; i++ { mu.Lock(); n++; mu.Unlock() }\n}()\n}\n\
         wg.Wait()\nfmt.Println(\"count\", n)\n}\n",
    )
    .unwrap();
    let exe = dir.join("mu");
    let built = Command::new("go")
        .args(["build", "-o"])
        .arg(&exe)
        .arg(&src)
        .env("GOCACHE", dir.join("gocache"))
        .env("GOFLAGS", "-mod=mod")
        .status();
    if !built.is_ok_and(|s| s.success()) {
        eprintln!("skipped: no Go toolchain (`go build` failed)");
        return;
    }
    let (out, report) = run(&dir, &[], &[exe.to_str().unwrap()]);
    assert!(out.status.success(), "{report}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "count 1280000\n");
    assert!(report.contains("did not load the interposer"), "{report}");
    assert!(report.contains("It is a Go program"), "{report}");
    assert!(report.contains("/debug/pprof/mutex"), "{report}");
    // The lock question says so too, instead of "fine: no thread waited".
    let q3 = report
        .lines()
        .skip_while(|l| !l.starts_with(" 3. "))
        .take(2)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        !q3.contains("(fine)") && q3.contains("Go's sync.Mutex"),
        "{q3}"
    );
}

/// A thread per task: 2,000 short threads, created and joined one after another. The
/// interposer counts every birth exactly, without ptrace (`--sample-only`: the program is
/// never stopped at a clone), and in the child process of a shell as well.
#[test]
fn every_short_lived_thread_is_counted_exactly_without_ptrace() {
    let dir = scratch("tpt");
    let src = r#"
#include <pthread.h>
static void *task(void *p) { volatile long s = 0; for (int i = 0; i < 2000; i++) s += i; return p; }
int main(void) {
    for (int i = 0; i < 2000; i++) { pthread_t t; pthread_create(&t, 0, task, 0); pthread_join(t, 0); }
    return 0;
}
"#;
    let Some(exe) = compile_c(&dir, "tpt", src) else {
        return;
    };
    let (out, report) = run(&dir, &["--sample-only"], &[exe.to_str().unwrap()]);
    assert!(out.status.success(), "{report}");
    assert!(
        report.contains("processes: 1 ran with the interposer; threads created: 2000 exactly"),
        "{report}"
    );
    let script = format!("{}; exit 0", exe.display());
    let (out, report) = run(&dir, &["--sample-only"], &["sh", "-c", &script]);
    assert!(out.status.success(), "{report}");
    assert!(
        report.contains("processes: 2 ran with the interposer; threads created: 2000 exactly"),
        "{report}"
    );
}
