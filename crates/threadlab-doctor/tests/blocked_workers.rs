//! The doctor on recorded programs whose pool tasks block in the kernel: it names the task that
//! held the workers (by its name and spawn location), says what the spare threads that stood in
//! for them did, and keeps its figures within their physical bounds with those threads in the
//! trace; a program whose tasks do not block gets no such finding.
//!
//! Linux only (the pool's monitor reads procfs to see a worker blocked), not under Miri. The
//! recorder is process-wide: the recordings of this file run one at a time, each on its own
//! pool, dropped before the recording stops.
#![cfg(all(target_os = "linux", not(miri)))]

use std::sync::{mpsc, Arc, Barrier, Mutex};
use std::time::Duration;

use threadlab::trace::Trace;
use threadlab::Pool;
use threadlab_doctor::{bounds_violations, Diagnose, Pitfall};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Runs `f` on a thread of its own and fails if it has not finished within 60 s.
fn watchdog<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    let h = std::thread::spawn(move || {
        let v = f();
        let _ = tx.send(());
        v
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(()) => h.join().unwrap(),
        Err(mpsc::RecvTimeoutError::Disconnected) => match h.join() {
            Ok(v) => v,
            Err(p) => std::panic::resume_unwind(p),
        },
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("deadlock: not finished within 60 s"),
    }
}

/// Records `f` on a pool of 2 workers, one recording at a time and under the watchdog; the pool
/// is dropped before the recording stops. Returns the trace and `f`'s value.
fn record_on_two_workers<R: Send + 'static>(
    f: impl FnOnce(&Pool) -> R + Send + 'static,
) -> (Trace, R) {
    watchdog(|| {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let rec = threadlab::trace::start();
        let pool = Pool::builder().threads(2).build().unwrap();
        let r = f(&pool);
        pool.shutdown();
        (rec.stop(), r)
    })
}

/// Records three tasks named `meets-at-barrier` that wait on a 3-party `std::sync::Barrier` on
/// a pool of 2 workers: both workers block, and the pool's monitor starts a spare thread that
/// runs the third party (with `declared`, each wait is wrapped in `threadlab::blocking`, so the
/// pool hands the seat over up front). Returns the trace and where the tasks were spawned
/// (`file:line:`).
fn barrier_program(declared: bool) -> (Trace, String) {
    record_on_two_workers(move |pool| {
        let barrier = Arc::new(Barrier::new(3));
        let (tx, rx) = mpsc::channel();
        let mut spawned_at = String::new();
        for _ in 0..3 {
            let (b, tx) = (Arc::clone(&barrier), tx.clone());
            spawned_at = format!("{}:{}:", file!(), line!() + 1);
            pool.spawn_named("meets-at-barrier", move || {
                if declared {
                    threadlab::blocking(|| b.wait());
                } else {
                    b.wait();
                }
                tx.send(()).unwrap();
            });
        }
        for _ in 0..3 {
            rx.recv().unwrap();
        }
        assert!(pool.metrics().spare_threads_started >= 1);
        spawned_at
    })
}

#[test]
fn the_doctor_names_the_task_that_blocked_every_worker() {
    let (trace, spawned_at) = barrier_program(false);
    let d = trace.diagnose();
    let f = d
        .finding(Pitfall::BlockedWorkers)
        .unwrap_or_else(|| panic!("no blocked-workers finding\n{d}"));
    assert_eq!(f.subject, "task `meets-at-barrier`", "{d}");
    assert!(
        f.evidence
            .contains(&format!("`meets-at-barrier` (spawned at {spawned_at}")),
        "the finding names the task's spawn location {spawned_at}: {}",
        f.evidence
    );
    assert!(
        f.evidence.contains("workers 0 and 1 sat blocked"),
        "{}",
        f.evidence
    );
    assert!(
        f.suggestion.contains("threadlab::blocking"),
        "{}",
        f.suggestion
    );
    assert!(f.figure.value >= 1.0 && f.figure.threshold == Some(1.0));
    // One group: every spare thread stood in for the same task, and ran at least its third
    // party.
    assert_eq!(d.blocked.len(), 1, "{:?}", d.blocked);
    let b = &d.blocked[0];
    assert_eq!(b.seats, [0, 1]);
    assert!(b.spare_threads >= 1 && b.spare_tasks >= 1, "{b:?}");
    assert!(b.spare_ns > 0, "{b:?}");
    // The barrier completes only once the spare thread has run its third party: both tasks
    // were still open when it arrived.
    assert!(b.held_ns > 0, "{b:?}");
    assert!(
        f.evidence
            .contains("into the task before a spare thread arrived"),
        "{d}"
    );
    // "Are we using the threads effectively?" is not answered as fine.
    assert!(!d.answers[0].ok, "{d}");
    // The spare thread is a thread of the process, not a third worker of the pool.
    assert_eq!(d.runtime.workers, 2, "{d}");
    assert!(d.runtime.spare_threads >= 1, "{d}");
    let spare = d.threads.iter().find(|t| t.spare).expect("a spare track");
    assert!(spare.worker.is_some_and(|w| w >= 2), "{spare:?}");
    assert_eq!(spare.zones, 0, "its life is not read as a zone of work");
    assert!(
        bounds_violations(&d).is_empty(),
        "{:?}\n{d}",
        bounds_violations(&d)
    );
    println!("{d}");
}

/// The same barrier, with each wait wrapped in `threadlab::blocking`: the pool hands each
/// blocked seat to a spare thread up front, as asked. The doctor reads the spare threads as
/// asked for (`declared`) and raises no finding: the program already does what it would say.
#[test]
fn waits_wrapped_in_blocking_get_no_blocked_workers_finding() {
    let (trace, _) = barrier_program(true);
    let d = trace.diagnose();
    assert!(!d.has(Pitfall::BlockedWorkers), "{d}");
    assert!(!d.blocked.is_empty(), "the spare threads are read: {d}");
    assert!(d.blocked.iter().all(|b| b.declared), "{:?}", d.blocked);
    assert_eq!(d.runtime.workers, 2, "{d}");
    assert!(
        bounds_violations(&d).is_empty(),
        "{:?}\n{d}",
        bounds_violations(&d)
    );
}

#[test]
fn tasks_that_do_not_block_get_no_blocked_workers_finding() {
    let (trace, ()) = record_on_two_workers(|pool| {
        let count = threadlab::sync::Mutex::named("count", 0u32);
        pool.scope(|s| {
            for _ in 0..3 {
                s.spawn_named("counts", |_| *count.lock() += 1);
            }
        });
        assert_eq!(*count.lock(), 3);
        assert_eq!(pool.metrics().spare_threads_started, 0);
    });
    let d = trace.diagnose();
    assert!(!d.has(Pitfall::BlockedWorkers), "{d}");
    assert!(d.blocked.is_empty());
    assert_eq!(d.runtime.spare_threads, 0);
    assert_eq!(d.runtime.workers, 2, "{d}");
}
