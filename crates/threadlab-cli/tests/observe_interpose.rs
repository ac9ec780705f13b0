//! `threadlab run -- CMD` on programs written here, not threadlab's demos: the command's output
//! and exit code are its own (the report goes to a file, never to the command's stdout or
//! stderr; the exit code is the command's, or 128 + the signal that killed it). Linux only.

#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How long one observed run may take before the test fails instead of hanging.
const WATCHDOG: Duration = Duration::from_secs(180);

/// Runs `cmd` to completion with the watchdog (kills it and fails past [`WATCHDOG`]).
fn output_within(mut cmd: Command) -> Output {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start threadlab");
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(WATCHDOG) {
        Ok(out) => out.expect("wait for threadlab"),
        Err(_) => {
            // SAFETY: kill has no memory preconditions; `pid` is our unreaped child.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            panic!("watchdog: `{cmd:?}` ran longer than {WATCHDOG:?}");
        }
    }
}

/// A private scratch directory for one test.
fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("threadlab-interpose-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// `threadlab run --report DIR/report.txt FLAGS -- ARGV`: its output and the report.
fn run(dir: &Path, flags: &[&str], argv: &[&str]) -> (Output, String) {
    let report = dir.join("report.txt");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_threadlab"));
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
    let (out, report) = run(&dir, &[], &["sh", "-c", "kill -9 $$"]);
    assert_eq!(out.status.code(), Some(128 + 9), "{report}");
    assert!(report.contains("killed by signal 9"), "{report}");
}
