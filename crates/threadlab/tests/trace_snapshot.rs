//! `Recording::snapshot`: a flight recorder is read twice while it goes on recording, another
//! thread writing zones all the while.

mod trace_support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use threadlab::trace::{EventKind, Trace};
use trace_support::*;

/// Zones named `name` on the thread named `thread`, and whether every one of them closed.
fn zones(trace: &Trace, thread: &str, name: &str) -> (usize, bool) {
    let Some(id) = trace.name_id(name) else {
        return (0, true);
    };
    let Some(t) = trace.threads().iter().find(|t| t.name() == thread) else {
        return (0, true);
    };
    let (mut begins, mut depth, mut balanced) = (0, 0i64, true);
    for e in t.events().iter() {
        match e.kind {
            EventKind::ZoneBegin { name } => {
                depth += 1;
                begins += usize::from(name == id);
            }
            EventKind::ZoneEnd => {
                depth -= 1;
                balanced &= depth >= 0;
            }
            _ => {}
        }
    }
    (begins, balanced && depth == 0)
}

#[test]
fn a_flight_recorder_is_snapshotted_twice_without_stopping() {
    let _s = serial();
    let rec = threadlab::trace::flight_recorder(4 << 20);
    let stop = Arc::new(AtomicBool::new(false));
    let busy = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            threadlab::trace::set_thread_name("busy");
            let mut n = 0u64;
            // SeqCst: a test flag; the main thread stores it once.
            while !stop.load(Ordering::SeqCst) || n < 100 {
                let _z = threadlab::zone!("spin");
                n += 1;
            }
            n
        })
    };
    threadlab::trace::set_thread_name("snapper");
    for _ in 0..10 {
        let _z = threadlab::zone!("first");
    }
    threadlab::trace::message("between");
    let one = rec.snapshot();
    for _ in 0..7 {
        let _z = threadlab::zone!("second");
    }
    let two = rec.snapshot();
    assert!(threadlab::trace::is_recording(), "still recording");
    stop.store(true, Ordering::SeqCst);
    let spins = busy.join().unwrap();
    let all = rec.stop();

    assert_eq!(zones(&one, "snapper", "first"), (10, true));
    assert_eq!(zones(&one, "snapper", "second"), (0, true));
    assert!(one.name_id("between").is_some());
    assert_eq!(zones(&two, "snapper", "first"), (10, true));
    assert_eq!(zones(&two, "snapper", "second"), (7, true));
    // The busy thread's zones: balanced in each snapshot (a zone open at the snapshot is
    // closed at its end), more of them in the later one, all of them at the stop.
    let (s1, b1) = zones(&one, "busy", "spin");
    let (s2, b2) = zones(&two, "busy", "spin");
    assert!(b1 && b2);
    assert!(s1 <= s2, "{s1} then {s2}");
    let (s3, _) = zones(&all, "busy", "spin");
    assert!(s3 as u64 + all.dropped_events() / 2 >= spins);
    assert!(one.duration_ns() <= two.duration_ns());
}

#[test]
fn a_full_recording_can_be_snapshotted_too() {
    let _s = serial();
    let rec = threadlab::trace::start();
    {
        let _z = threadlab::zone!("z");
    }
    let snap = rec.snapshot();
    assert_eq!(zones(&snap, snap.threads()[0].name(), "z"), (1, true));
    let _ = rec.stop();
}
