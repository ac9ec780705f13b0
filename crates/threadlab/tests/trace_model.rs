//! The decoded model of a recording: threads, nesting, flows and lock figures.

mod trace_support;

use threadlab::trace::{EventKind, TaskKind};
use trace_support::*;

#[test]
fn model_has_threads_spans_flows_and_lock_times() {
    let _s = serial();
    let trace = record_scenario();
    let main = &trace.threads()[thread_named(&trace, "main")];
    let w0 = thread_named(&trace, "threadlab-worker-0");
    let w1 = thread_named(&trace, "threadlab-worker-1");
    assert_eq!(trace.worker_thread(0), Some(w0));
    assert_eq!(trace.worker_thread(1), Some(w1));

    // Nested zones on main: outer begin, inner begin, inner end, outer end.
    let outer = trace.name_id("outer").unwrap();
    let inner = trace.name_id("inner").unwrap();
    let spans: Vec<_> = main
        .events()
        .iter()
        .filter(|e| matches!(e.kind, EventKind::ZoneBegin { .. } | EventKind::ZoneEnd))
        .map(|e| e.kind)
        .collect();
    assert_eq!(
        spans,
        vec![
            EventKind::ZoneBegin { name: outer },
            EventKind::ZoneBegin { name: inner },
            EventKind::ZoneEnd,
            EventKind::ZoneEnd
        ]
    );

    // Time order on every thread.
    for t in trace.threads() {
        assert!(
            t.events()
                .to_vec()
                .windows(2)
                .all(|w| w[0].ts_ns <= w[1].ts_ns),
            "{}",
            t.name()
        );
    }

    // The spawn on worker 0 links to the run on worker 1.
    let spawn_flow = trace.threads()[w0]
        .events()
        .iter()
        .find_map(|e| match e.kind {
            EventKind::Spawn { flow } => Some(flow),
            _ => None,
        })
        .expect("worker 0 recorded the spawn");
    let run = trace.threads()[w1]
        .events()
        .iter()
        .find_map(|e| match e.kind {
            EventKind::TaskBegin {
                kind: TaskKind::Spawn,
                flow,
            } => Some(flow),
            _ => None,
        })
        .expect("worker 1 ran the task");
    assert_eq!(run, Some(spawn_flow));
    assert!(trace.threads()[w1]
        .events()
        .iter()
        .any(|e| e.kind == EventKind::Steal { victim: 0 }));
    assert!(trace.threads()[w1]
        .events()
        .iter()
        .any(|e| e.kind == EventKind::Wake { woken: 0 }));
    assert!(trace.threads()[w0]
        .events()
        .iter()
        .any(|e| e.kind == EventKind::ParkEnd));
    // OS figures are sampled.
    assert!(trace.threads()[w0]
        .events()
        .iter()
        .any(|e| matches!(e.kind, EventKind::OsSched { .. })));

    // Lock: hold ≥ 20 ms on the holder, wait ≥ 15 ms on the waiter, a hand-off between them.
    let holder = &trace.threads()[thread_named(&trace, "holder")];
    let waiter = &trace.threads()[thread_named(&trace, "waiter")];
    let at = |t: &threadlab::trace::ThreadTrack, f: &dyn Fn(&EventKind) -> bool| {
        t.events()
            .iter()
            .find(|e| f(&e.kind))
            .map(|e| (e.ts_ns, e.kind))
            .unwrap()
    };
    let (acq, _) = at(holder, &|k| matches!(k, EventKind::LockAcquired { .. }));
    let (rel, rel_kind) = at(holder, &|k| matches!(k, EventKind::LockReleased { .. }));
    let hold = rel - acq;
    assert!(hold >= HOLD.as_nanos() as u64, "hold {hold} ns < 20 ms");
    let (wait, _) = at(waiter, &|k| matches!(k, EventKind::LockWait { .. }));
    let (got, got_kind) = at(waiter, &|k| matches!(k, EventKind::LockAcquired { .. }));
    assert!(got - wait >= 15_000_000, "wait {} ns < 15 ms", got - wait);
    let (
        EventKind::LockReleased {
            handoff: out, name, ..
        },
        EventKind::LockAcquired { handoff: inn, .. },
    ) = (rel_kind, got_kind)
    else {
        unreachable!()
    };
    assert_eq!(trace.name(name), "queue");
    assert!(out.is_some(), "the holder released while the waiter waited");
    assert_eq!(
        out, inn,
        "the hand-off links the release to the waiter's acquisition"
    );
}

#[test]
fn stale_buffers_exited_threads_and_double_start() {
    let _s = serial();
    // A thread that records in a first recording, then again in a second one.
    let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let rec = threadlab::trace::start();
    assert!(threadlab::trace::try_start(threadlab::trace::Mode::Full).is_err());
    let t = std::thread::spawn(move || {
        drop(threadlab::zone!("first"));
        done_tx.send(()).unwrap();
        go_rx.recv().unwrap();
        drop(threadlab::zone!("second"));
        done_tx.send(()).unwrap();
    });
    done_rx.recv().unwrap();
    let first = rec.stop();
    assert!(first.name_id("first").is_some());
    let rec = threadlab::trace::start();
    go_tx.send(()).unwrap();
    done_rx.recv().unwrap();
    t.join().unwrap(); // the thread has exited before stop: its events must stay
    let second = rec.stop();
    assert!(
        second.name_id("second").is_some(),
        "exited thread's events kept"
    );
    assert!(
        second.name_id("first").is_none(),
        "no stale events from the first recording"
    );
    // Nothing is recorded while off.
    drop(threadlab::zone!("off"));
    let third = threadlab::trace::start().stop();
    assert!(third.name_id("off").is_none());
}
