//! The CLI's outputs as a user's shell sees them: an unusable `--json`/`--out` is refused before
//! anything runs, the lab's files appear only complete, and every command that prints ends
//! quietly when its reader goes away.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_threadlab"))
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "threadlab-cli-outputs-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `threadlab args`, killed after `limit` so a regression fails instead of hanging.
fn run_within(args: &[&str], limit: Duration) -> Output {
    let mut child = bin()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run threadlab");
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{args:?} still running after {limit:?} (it should fail before running \
                 anything); stdout: {}",
                String::from_utf8_lossy(&out.stdout)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[track_caller]
fn assert_refused(args: &[&str], mention: &str) {
    let out = run_within(args, Duration::from_secs(20));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
    assert!(stderr.starts_with("error:"), "{args:?}: {stderr}");
    assert!(
        stderr.contains(mention),
        "{args:?}: `{mention}` in {stderr}"
    );
    assert!(out.stdout.is_empty(), "{args:?}: ran something: {:?}", out);
}

/// `threadlab lab --tiny --out OUT`, with `--json JSON` where given, is refused before it runs
/// anything, with `mention` in its one line of error.
#[track_caller]
fn assert_lab_refused(out: &Path, json: Option<&Path>, mention: &str) {
    let mut args = vec!["lab", "--tiny", "--out", out.to_str().unwrap()];
    if let Some(json) = json {
        args.extend(["--json", json.to_str().unwrap()]);
    }
    assert_refused(&args, mention);
}

#[test]
fn unwritable_json_or_out_fails_before_running() {
    let dir = temp_dir("refuse");
    let out = dir.join("out");
    // An existing directory as --json: before the fix, every experiment ran first.
    let json_dir = dir.join("results-dir");
    std::fs::create_dir_all(&json_dir).unwrap();
    assert_lab_refused(&out, Some(&json_dir), "is a directory");
    // `results.json` or `index.html` in --out being directories.
    let out2 = dir.join("out2");
    std::fs::create_dir_all(out2.join("results.json")).unwrap();
    assert_lab_refused(&out2, None, "is a directory");
    let out3 = dir.join("out3");
    std::fs::create_dir_all(out3.join("index.html")).unwrap();
    assert_lab_refused(&out3, None, "index.html");
    // A --json below a regular file.
    let file = dir.join("a-file");
    std::fs::write(&file, b"x").unwrap();
    assert_lab_refused(&out, Some(&file.join("r.json")), "--json");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn lab_leaves_no_temporary_files_and_complete_outputs() {
    let dir = temp_dir("atomic");
    let out = dir.join("out");
    let json = dir.join("r.json");
    let run = run_within(
        &[
            "lab",
            "overhead",
            "--tiny",
            "--out",
            out.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
        Duration::from_secs(240),
    );
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).unwrap()).expect("complete results.json");
    assert!(doc.is_object());
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.trim_end().ends_with("</html>"), "complete index.html");
    let mut leftovers = Vec::new();
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().contains(".tmp-") {
                leftovers.push(p);
            }
        }
    }
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Runs `threadlab args` with its stdout on a pipe whose reader is already gone (the moment
/// `head -1` exits, made deterministic); returns the exit status and stderr. Before the fix, the
/// first print panicked with "failed printing to stdout: Broken pipe" and a backtrace hint.
fn with_reader_gone(args: &[&str]) -> (std::process::ExitStatus, String) {
    use std::os::fd::FromRawFd;
    let mut fds = [0i32; 2];
    // SAFETY: `fds` has room for the two descriptors `pipe` writes.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0, "pipe");
    // SAFETY: both descriptors were just created by `pipe` and are owned by nothing else.
    let (read_end, write_end) = unsafe {
        (
            std::fs::File::from_raw_fd(fds[0]),
            std::fs::File::from_raw_fd(fds[1]),
        )
    };
    drop(read_end);
    let mut child = bin()
        .args(args)
        .stdout(Stdio::from(write_end))
        .stderr(Stdio::piped())
        .spawn()
        .expect("run threadlab");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(240) {
            let _ = child.kill();
            panic!("{args:?} did not end after its reader went away");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    (status, stderr)
}

#[track_caller]
fn assert_quiet(args: &[&str]) {
    use std::os::unix::process::ExitStatusExt;
    let (status, stderr) = with_reader_gone(args);
    let conventional = status.code() == Some(0) || status.signal() == Some(libc::SIGPIPE);
    assert!(
        conventional,
        "{args:?}: ends with 0 or SIGPIPE, got {status:?}; stderr: {stderr}"
    );
    // `panicked at` is Rust's own panic message; the stress mix's planned panicking handler
    // makes the library say (once) that "a pool's panic handler itself panicked", which is no
    // panic of the command.
    for noise in ["panicked at", "Broken pipe", "backtrace"] {
        assert!(!stderr.contains(noise), "{args:?}: `{noise}` in {stderr}");
    }
}

#[test]
fn printing_commands_end_quietly_when_the_reader_goes_away() {
    let dir = temp_dir("pipe");
    // A trace whose doctor report is long enough to outgrow the pipe's first read.
    let path = dir.join("t.tltrace");
    let rec = threadlab::trace::start();
    std::thread::spawn(|| {
        for _ in 0..100 {
            let _z = threadlab::zone!("step");
        }
    })
    .join()
    .unwrap();
    rec.stop().save(&path).unwrap();
    let p = path.to_str().unwrap();
    assert_quiet(&["doctor", p]);
    assert_quiet(&["doctor", "--json", p]);
    assert_quiet(&["compare", p, p]);
    assert_quiet(&["topology"]);
    assert_quiet(&["stress", "--seconds", "1", "--threads", "2", "--seed", "3"]);
    let out = dir.join("lab");
    assert_quiet(&["lab", "overhead", "--tiny", "--out", out.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(dir);
}
