//! `sync::RwLock` records holds (readers overlapping), waits and hand-offs like `sync::Mutex`.

mod trace_support;

use std::sync::Arc;
use std::time::{Duration, Instant};
use threadlab_doctor::Diagnose;

use threadlab::sync::RwLock;
use threadlab::trace::EventKind;
use trace_support::*;

#[test]
fn readers_overlap_and_a_blocked_writer_records_a_wait_and_a_hand_off() {
    let _s = serial();
    let lock = Arc::new(RwLock::named("table", 0u64));
    let rec = threadlab::trace::start();
    threadlab::trace::set_thread_name("reader");
    let r1 = lock.read();
    let r2 = lock.read(); // a second read hold at once
    let writer = {
        let lock = lock.clone();
        std::thread::spawn(move || {
            threadlab::trace::set_thread_name("writer");
            *lock.write() += 1;
        })
    };
    // Wait (bounded) until the writer's wait is in the recording: the snapshot sees it.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let snap = rec.snapshot();
        let waiting = snap.threads().iter().any(|t| {
            t.name() == "writer"
                && t.events()
                    .iter()
                    .any(|e| matches!(e.kind, EventKind::LockWait { .. }))
        });
        if waiting {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "deadlock: the writer never waited"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    drop(r1);
    drop(r2);
    writer.join().unwrap();
    assert_eq!(*lock.read(), 1);
    let trace = rec.stop();
    let name = trace.name_id("table").unwrap();
    let count = |thread: &str, f: &dyn Fn(&EventKind) -> bool| {
        trace
            .threads()
            .iter()
            .filter(|t| t.name() == thread)
            .flat_map(|t| t.events().iter())
            .filter(|e| f(&e.kind))
            .count()
    };
    let acquired =
        |k: &EventKind| matches!(k, EventKind::LockAcquired { name: n, .. } if *n == name);
    // Two overlapping read holds and the last read after the writer: three on the reader.
    assert_eq!(count("reader", &acquired), 3);
    assert_eq!(count("writer", &acquired), 1);
    assert_eq!(
        count("writer", &|k| matches!(k, EventKind::LockWait { .. })),
        1
    );
    // The writer's acquisition is linked to a reader's release.
    let handed = count("writer", &|k| {
        matches!(
            k,
            EventKind::LockAcquired {
                handoff: Some(_),
                ..
            }
        )
    });
    let released = count("reader", &|k| {
        matches!(
            k,
            EventKind::LockReleased {
                handoff: Some(_),
                ..
            }
        )
    });
    assert_eq!((handed, released.min(1)), (1, 1));
    // The doctor reads it as one named lock.
    let report = trace.diagnose().to_string();
    assert!(report.contains("table"), "{report}");
}

#[test]
fn a_writer_asking_again_panics_instead_of_deadlocking() {
    let lock = RwLock::named("again", ());
    let _w = lock.write();
    let again = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(lock.read())));
    let msg = again.unwrap_err();
    let msg = msg.downcast_ref::<String>().unwrap();
    assert!(msg.contains("\"again\""), "{msg}");
}

/// A read guard held across `scope` on a one-worker pool, while a task of that scope asks for the
/// write lock: the worker waits in the scope by running the task itself, whose write waits for
/// the worker's own read. That panics with the lock's name (as `Mutex` does when relocked)
/// instead of hanging silently at 0% CPU.
#[test]
fn a_write_under_a_read_held_across_scope_panics_instead_of_deadlocking() {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let pool = threadlab::Pool::builder().threads(1).build().unwrap();
        let lock = RwLock::named("catalogue", 0u64);
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.install(|| {
                let reading = lock.read();
                threadlab::scope(|s| {
                    s.spawn(|_| *lock.write() += 1);
                });
                *reading
            })
        }));
        // The lock is usable again afterwards: the read guard was released by the unwinding.
        *lock.write() += 10;
        tx.send((
            outcome.map_err(|p| p.downcast::<String>().map(|m| *m)),
            lock.into_inner(),
        ))
        .unwrap();
    });
    let (outcome, value) = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("deadlock: a write under the thread's own read guard hung");
    let msg = outcome
        .expect_err("the write under a read returned")
        .unwrap();
    assert!(msg.contains("\"catalogue\""), "{msg}");
    assert!(msg.contains("read guard"), "{msg}");
    assert_eq!(value, 10);
}

/// On one thread: a write under its own read panics; so does a second read once a writer (on
/// another thread) waits behind the first. Reads of another lock, and repeated reads while no
/// writer waits, do not.
#[test]
fn a_reader_asking_for_a_write_or_a_read_behind_a_waiting_writer_panics() {
    within_60_s(reader_asks_again);
}

/// Runs `f` on a thread; fails (instead of hanging) if it has not returned within 60 s.
fn within_60_s(f: fn()) {
    let (tx, rx) = std::sync::mpsc::channel();
    let h = std::thread::spawn(move || {
        f();
        tx.send(()).unwrap();
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(()) => h.join().unwrap(),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            std::panic::resume_unwind(h.join().unwrap_err())
        }
        Err(_) => panic!("deadlock: not finished within 60 s"),
    }
}

fn reader_asks_again() {
    let lock = Arc::new(RwLock::named("pages", ()));
    let other = RwLock::named("other", ());
    let r1 = lock.read();
    let r2 = lock.read(); // no writer waits: readers share it
    drop(other.write()); // another lock: no reader of it here
    let write = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(lock.write())));
    let msg = write.unwrap_err();
    let msg = msg.downcast_ref::<String>().unwrap();
    assert!(msg.contains("\"pages\""), "{msg}");
    drop(r2);
    // A writer on another thread queues behind r1. Until it does, a read here succeeds (and is
    // dropped at once); once it waits, the read is refused, and waiting for it could never
    // end: it must panic. (Bounded by the writer queueing, which holding r1 guarantees.)
    let l = Arc::clone(&lock);
    let writer = std::thread::spawn(move || drop(l.write()));
    let deadline = Instant::now() + Duration::from_secs(60);
    let msg = loop {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(lock.read()))) {
            Ok(()) => assert!(Instant::now() < deadline, "the writer never queued"),
            Err(p) => break *p.downcast::<String>().unwrap(),
        }
        std::thread::yield_now();
    };
    assert!(msg.contains("\"pages\""), "{msg}");
    drop(r1);
    writer.join().unwrap();
    // Every guard gone: both kinds work again on this thread.
    drop(lock.write());
    drop(lock.read());
}
