//! `pftrace_read.rs`'s unit tests: every event kind round-trips; foreign and truncated files are
//! refused.

use super::*;

/// A trace with every event kind survives encode → decode, names resolved.
#[test]
fn every_kind_round_trips() {
    use EventKind::*;
    let names = ["decode", "queue", "depth", "frame", "fps", "hello"]
        .map(str::to_owned)
        .to_vec();
    let ev = |ts_ns, kind| Event { ts_ns, kind };
    let a = vec![
        ev(0, ParkBegin),
        ev(5, ParkEnd),
        ev(
            6,
            TaskBegin {
                kind: TaskKind::Spawn,
                flow: Some(FlowId(3)),
            },
        ),
        ev(7, ZoneBegin { name: NameId(0) }),
        ev(7, ZoneColor { rgb: 0x123456 }),
        ev(
            7,
            Arg {
                key: NameId(1),
                value: NameId(2),
            },
        ),
        ev(
            7,
            Arg {
                key: NameId(2),
                value: NameId(0),
            },
        ),
        ev(
            8,
            LockWait {
                lock: 9,
                name: NameId(1),
            },
        ),
        ev(
            9,
            LockAcquired {
                lock: 9,
                name: NameId(1),
                handoff: Some(FlowId(4)),
            },
        ),
        ev(
            10,
            LockReleased {
                lock: 9,
                name: NameId(1),
                handoff: None,
            },
        ),
        ev(
            11,
            Allocs {
                count: 2,
                bytes: 64,
            },
        ),
        ev(11, ZoneEnd),
        ev(12, TaskEnd),
        ev(12, FrameStart { name: NameId(3) }),
        ev(
            12,
            Plot {
                name: NameId(4),
                value: PlotValue::new(59.5),
            },
        ),
        ev(
            12,
            Message {
                text: NameId(5),
                rgb: 0,
            },
        ),
        ev(
            13,
            Message {
                text: NameId(5),
                rgb: 0xff0000,
            },
        ),
        ev(13, FrameMark { name: NameId(3) }),
        ev(
            13,
            Counter {
                name: NameId(2),
                value: -3,
            },
        ),
        ev(14, StealAttempt { victim: 1 }),
        ev(15, Steal { victim: 1 }),
        ev(16, SpinBegin),
        ev(17, SpinEnd),
        ev(
            18,
            OsSched {
                on_cpu_ns: 100,
                runqueue_ns: 7,
            },
        ),
        ev(
            18,
            OsSwitches {
                voluntary: 2,
                involuntary: 1,
            },
        ),
    ];
    let b = vec![
        ev(1, Spawn { flow: FlowId(3) }),
        ev(2, Wake { woken: 0 }),
        ev(3, InjectorPush),
        ev(
            3,
            Arg {
                key: NameId(0),
                value: NameId(1),
            },
        ),
        ev(
            4,
            LockAcquired {
                lock: 9,
                name: NameId(1),
                handoff: None,
            },
        ),
        ev(
            8,
            LockReleased {
                lock: 9,
                name: NameId(1),
                handoff: Some(FlowId(4)),
            },
        ),
    ];
    let track = |tid, name: &str, worker, events| Track {
        tid,
        name: name.to_owned(),
        worker,
        events,
    };
    let trace = build(
        vec![
            track(10, "w0", Some(0), a),
            track(11, "main", None, vec![]),
            track(12, "w1", Some(1), b),
        ],
        names,
        20,
        2,
        4,
    );
    let back = decode(&super::super::perfetto::encode(&trace)).expect("decodes");
    assert_eq!((back.duration_ns, back.dropped, back.cpus), (20, 2, 4));
    assert_eq!(back.threads.len(), 3);
    for (x, y) in trace.threads.iter().zip(&back.threads) {
        assert_eq!((x.tid, &x.name, x.worker), (y.tid, &y.name, y.worker));
        assert_eq!(x.events.len(), y.events.len(), "{}", x.name);
        for (p, q) in x.events.iter().zip(&y.events) {
            assert_eq!(p.ts_ns, q.ts_ns);
            assert_eq!(resolve(&trace, p.kind), resolve(&back, q.kind));
        }
    }
}

fn resolve(t: &Trace, k: EventKind) -> String {
    use EventKind::*;
    match k {
        ZoneBegin { name }
        | Counter { name, .. }
        | LockWait { name, .. }
        | FrameMark { name }
        | FrameStart { name }
        | Plot { name, .. }
        | Message { text: name, .. } => {
            format!("{k:?} {}", t.name(name)).replace(&format!("{name:?}"), "")
        }
        LockAcquired { name, .. } | LockReleased { name, .. } => {
            format!("{k:?} {}", t.name(name)).replace(&format!("{name:?}"), "")
        }
        _ => format!("{k:?}"),
    }
}

#[test]
fn foreign_and_truncated_files_are_refused() {
    // A packet with only a timestamp: no threadlab metadata.
    let err = decode(&[0x0a, 0x02, 0x40, 0x01]).unwrap_err();
    assert!(err.1.contains("threadlab trace"), "{}", err.1);
    let trace = build(vec![], vec![], 1, 0, 1);
    let bytes = super::super::perfetto::encode(&trace);
    let err = decode(&bytes[..bytes.len() - 1]).unwrap_err();
    assert!(err.0 > 0 && err.1.contains("exceeds"), "{err:?}");
    assert!(looks_like_pftrace(&bytes));
}

/// Every truncation and every single-byte corruption of a small trace decodes without a panic,
/// and every truncation is an error.
#[test]
fn every_truncation_fails_and_no_corruption_panics() {
    let ev = |ts_ns, kind| Event { ts_ns, kind };
    let events = vec![
        ev(1, EventKind::ZoneBegin { name: NameId(0) }),
        ev(
            2,
            EventKind::LockWait {
                lock: 1,
                name: NameId(0),
            },
        ),
        ev(
            3,
            EventKind::LockAcquired {
                lock: 1,
                name: NameId(0),
                handoff: None,
            },
        ),
        ev(
            4,
            EventKind::LockReleased {
                lock: 1,
                name: NameId(0),
                handoff: None,
            },
        ),
        ev(5, EventKind::ZoneEnd),
    ];
    let t = Track {
        tid: 1,
        name: "t".into(),
        worker: Some(0),
        events,
    };
    let bytes = super::super::perfetto::encode(&build(vec![t], vec!["z".into()], 6, 0, 2));
    assert!(decode(&bytes).is_ok());
    for n in 0..bytes.len() {
        assert!(decode(&bytes[..n]).is_err(), "a {n}-byte prefix decodes");
    }
    for i in 0..bytes.len() {
        let mut b = bytes.clone();
        b[i] ^= 0x5a;
        let _ = decode(&b);
    }
}
