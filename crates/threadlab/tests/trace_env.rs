//! `THREADLAB_TRACE`: a program that never calls the recorder gets a trace of its pools (the
//! global one, or only a pool it built itself), saved at exit (the `atexit` handler) or when it
//! calls `trace::save_env()`; it is told on stderr where the trace goes, and a program that never
//! starts a pool is told that nothing was recorded. Each test runs this test binary again as the
//! program (`child_program`, which does nothing unless asked to) with the variable set, waits for
//! it under a watchdog, and reads the file it left and what it printed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use threadlab::trace::{EventKind, Trace};

const CHILD: &str = "THREADLAB_TEST_ENV_CHILD";

/// The program under test: the global pool (or, in mode `own-pool`, only a pool it builds), a
/// zone, frames, a plot and a message, and no recorder call but (when asked) `save_env`; in mode
/// `no-pool` it starts no pool at all.
#[test]
fn child_program() {
    let Some(mode) = std::env::var_os(CHILD) else {
        return;
    };
    match mode.to_str() {
        Some("no-pool") => {
            assert_eq!(threadlab::current_thread_index(), None);
        }
        Some("own-pool") => {
            let pool = threadlab::Pool::builder()
                .threads(2)
                .thread_name(|i| format!("own-{i}"))
                .build()
                .unwrap();
            // Inside `install`, `join` and `spawn` use this pool: the global one never starts.
            pool.install(child_work);
        }
        _ => child_work(),
    }
    if mode == "explicit" {
        let path = threadlab::trace::save_env()
            .expect("saved")
            .expect("a recording");
        println!("saved {}", path.display());
        // A second call has nothing left to save.
        assert!(threadlab::trace::save_env().unwrap().is_none());
    }
}

fn child_work() {
    for frame in 0..3 {
        // The recording starts with the global pool, at its first use: this `join`.
        let (a, b) = threadlab::join(|| (0..1000u64).sum::<u64>(), || frame * 2);
        let _z = threadlab::zone!("child work");
        threadlab::trace::plot("sum", a as f64);
        threadlab::trace::message(&format!("frame {frame} done: {b}"));
        threadlab::trace::frame_mark();
    }
    // A task that only a worker runs (a `join` from outside may run anywhere), waited for: the
    // trace then holds at least one worker's track whichever worker thread started first.
    let (tx, rx) = std::sync::mpsc::channel();
    threadlab::spawn(move || tx.send(threadlab::current_thread_index()).unwrap());
    assert!(
        rx.recv().unwrap().is_some(),
        "a spawned task runs on a worker"
    );
}

/// Runs the child in `mode`; returns its process id and what it wrote to stderr.
fn run_child(mode: &str, trace_env: &Path) -> (u32, String) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_program",
            "--test-threads=1",
            "--nocapture",
        ])
        .env(CHILD, mode)
        .env(threadlab::trace::TRACE_ENV, trace_env)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the test binary runs again");
    let id = child.id();
    // The child writes a line or two to stderr: read them on a thread so it never blocks.
    let mut pipe = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut pipe, &mut text).unwrap();
        text
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let stderr = reader.join().unwrap();
            assert!(status.success(), "the child failed: {status}\n{stderr}");
            return (id, stderr);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("deadlock: the child did not finish within 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn check(trace: &Trace) {
    assert!(
        trace.threads().iter().any(|t| t.worker().is_some()),
        "the global pool's workers are recorded"
    );
    let zone = trace.name_id("child work").expect("the child's zone");
    let zones = trace
        .threads()
        .iter()
        .flat_map(|t| t.events().iter())
        .filter(|e| e.kind == EventKind::ZoneBegin { name: zone })
        .count();
    assert_eq!(zones, 3);
    assert_eq!(trace.frames(threadlab::trace::MAIN_FRAME).len(), 2);
    assert!(trace.name_id("frame 2 done: 4").is_some(), "the messages");
    assert!(trace.name_id("sum").is_some(), "the plot");
}

/// Checks the trace saved at `path` ([`check`]), then removes the test's directory `dir`.
fn check_file_and_clean_up(path: &Path, dir: &Path) {
    check(&Trace::load(path).expect("a whole trace"));
    std::fs::remove_dir_all(dir).ok();
}

/// The test's temporary directory, made now; `None` in the child process, where the test
/// itself has nothing to do (the child runs its program in `child_program`).
fn parent_temp_dir(tag: &str) -> Option<PathBuf> {
    if std::env::var_os(CHILD).is_some() {
        return None;
    }
    let dir = std::env::temp_dir().join(format!("threadlab-env-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    Some(dir)
}

#[test]
fn env_var_records_the_global_pool_and_saves_at_exit() {
    let Some(dir) = parent_temp_dir("exit") else {
        return;
    };
    let (pid, stderr) = run_child("exit", &dir.join("run-%p"));
    let path = dir.join(format!("run-{pid}.pftrace"));
    assert!(path.exists(), "no trace at {}", path.display());
    assert!(
        stderr.contains(&path.display().to_string()),
        "the program is told where the trace goes: {stderr:?}"
    );
    check_file_and_clean_up(&path, &dir);
}

/// A program whose only pool is its own (no global pool), run once per file format: the trace
/// is written, says where it goes once, holds only that pool's workers, and the doctor reads
/// it (its workers, named by the program, and its zone).
#[test]
fn env_var_records_a_pool_the_program_built() {
    let Some(dir) = parent_temp_dir("own") else {
        return;
    };
    for file in ["own.tltrace", "own.pftrace"] {
        let path = dir.join(file);
        let (_, stderr) = run_child("own-pool", &path);
        assert!(path.exists(), "no trace at {}: {stderr}", path.display());
        assert_eq!(
            stderr.matches("threadlab:").count(),
            1,
            "one line says where the trace goes: {stderr:?}"
        );
        assert!(
            stderr.contains(&path.display().to_string()),
            "the line names the file: {stderr:?}"
        );
        let trace = Trace::load(&path).expect("a whole trace");
        check(&trace);
        let names: Vec<&str> = trace
            .threads()
            .iter()
            .filter(|t| t.worker().is_some())
            .map(|t| t.name())
            .collect();
        assert!(
            names.iter().all(|n| n.starts_with("own-")),
            "only the program's own pool ran: {names:?}"
        );
        // The doctor reads it: the program's workers, and its zone.
        let diagnosis = threadlab_doctor::diagnose(&trace);
        let workers: Vec<&str> = diagnosis
            .threads
            .iter()
            .filter(|t| t.worker.is_some())
            .map(|t| t.name.as_str())
            .collect();
        assert!(
            !workers.is_empty() && workers.iter().all(|n| n.starts_with("own-")),
            "the doctor sees the program's workers: {workers:?}"
        );
        assert!(
            diagnosis.spans.iter().any(|s| s.name == "zone child work"),
            "the doctor sees the program's zone"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[cfg(target_os = "linux")]
#[test]
fn a_program_without_a_pool_is_told_nothing_was_recorded() {
    let Some(dir) = parent_temp_dir("none") else {
        return;
    };
    let path = dir.join("none.pftrace");
    let (_, stderr) = run_child("no-pool", &path);
    assert!(!path.exists(), "no pool, no trace");
    assert!(
        stderr.contains("never started a threadlab pool"),
        "a note at exit: {stderr:?}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn save_env_saves_before_exit() {
    let Some(dir) = parent_temp_dir("explicit") else {
        return;
    };
    let path = dir.join("run.tltrace");
    run_child("explicit", &path);
    assert!(path.exists(), "no trace at {}", path.display());
    check_file_and_clean_up(&path, &dir);
}

/// A `THREADLAB_TRACE` that cannot be written (a directory that does not exist; a directory
/// where the file should go) costs the program nothing but a line on stderr: it runs to its end
/// and exits 0 (the save at exit fails and says so), and nothing is created.
#[test]
fn an_unwritable_trace_path_does_not_fail_the_program() {
    let Some(dir) = parent_temp_dir("unwritable") else {
        return;
    };
    let missing = dir.join("no-such-dir").join("run.tltrace");
    run_child("exit", &missing);
    assert!(!missing.exists() && !dir.join("no-such-dir").exists());
    let a_directory = dir.join("taken.tltrace");
    std::fs::create_dir_all(&a_directory).unwrap();
    run_child("exit", &a_directory);
    assert!(a_directory.is_dir());
    std::fs::remove_dir_all(&dir).ok();
}
