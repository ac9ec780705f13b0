//! `threadlab doctor` on a saved recording of a program whose pool tasks block in the kernel: it
//! prints the blocked-workers finding, naming the task and where it was spawned, in text and in
//! JSON. Linux only (the pool's monitor reads procfs to see a worker blocked), not under Miri.
#![cfg(all(target_os = "linux", not(miri)))]

use std::path::PathBuf;
use std::process::Command;
use std::sync::{mpsc, Arc, Barrier};
use std::time::Duration;

/// Records three tasks named `meets-at-barrier` that wait on a 3-party `std::sync::Barrier` on a
/// pool of 2 workers (a spare thread runs the third), saves the recording as `.tltrace`, and
/// returns its path and where the tasks were spawned (`file:line:`).
fn record_barrier_program() -> (PathBuf, String) {
    let dir = std::env::temp_dir().join(format!(
        "threadlab-cli-test-{}-doctor-blocked",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("barrier.tltrace");
    let rec = threadlab::trace::start();
    let pool = threadlab::Pool::builder().threads(2).build().unwrap();
    let barrier = Arc::new(Barrier::new(3));
    let (tx, rx) = mpsc::channel();
    let mut spawned_at = String::new();
    for _ in 0..3 {
        let (b, tx) = (Arc::clone(&barrier), tx.clone());
        spawned_at = format!("{}:{}:", file!(), line!() + 1);
        pool.spawn_named("meets-at-barrier", move || {
            b.wait();
            tx.send(()).unwrap();
        });
    }
    for _ in 0..3 {
        // A hang here is what the spare thread prevents: fail instead of waiting forever.
        rx.recv_timeout(Duration::from_secs(60))
            .expect("the barrier never completed");
    }
    pool.shutdown();
    rec.stop().save(&path).unwrap();
    (path, spawned_at)
}

#[test]
fn doctor_prints_the_task_that_blocked_every_worker() {
    let (path, spawned_at) = record_barrier_program();
    let out = Command::new(env!("CARGO_BIN_EXE_threadlab"))
        .args(["doctor", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let finding: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with(" ! blocked-workers"))
        .take(3)
        .collect();
    assert_eq!(finding.len(), 3, "no blocked-workers finding:\n{text}");
    println!("{}", finding.join("\n"));
    assert!(
        finding[0].starts_with(" ! blocked-workers (task `meets-at-barrier`): workers 0 and 1"),
        "{text}"
    );
    assert!(
        finding[0].contains(&format!("`meets-at-barrier` (spawned at {spawned_at}")),
        "the spawn location {spawned_at}: {text}"
    );
    assert!(finding[1].contains("spare threads started"), "{text}");
    assert!(finding[2].contains("threadlab::blocking"), "{text}");
    assert!(text.contains("2 worker(s)"), "{text}");

    let out = Command::new(env!("CARGO_BIN_EXE_threadlab"))
        .args(["doctor", "--json", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let blocked = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["pitfall"] == "blocked-workers")
        .unwrap_or_else(|| panic!("no blocked-workers in {doc}"));
    assert_eq!(blocked["subject"], "task `meets-at-barrier`");
    assert_eq!(doc["blocked"][0]["tasks"][0]["name"], "meets-at-barrier");
    assert_eq!(doc["runtime"]["workers"], 2);
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}
