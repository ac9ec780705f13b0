//! `sync::RwLock` records holds (readers overlapping), waits and hand-offs like `sync::Mutex`.

mod trace_support;

use std::sync::Arc;
use std::time::{Duration, Instant};

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
