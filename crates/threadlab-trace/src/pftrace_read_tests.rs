//! `pftrace_read.rs`'s unit tests: every event kind round-trips, and so do the lock table and a
//! lock wait's arguments; foreign and truncated files are refused.

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

/// The sample trace without its steals (its worker 1 steals from itself, an arrow the decoder
/// does not take back from a thread's own track).
fn sample_without_steals() -> Trace {
    let mut t = crate::sample::every_kind();
    for (i, th) in t.threads.iter_mut().enumerate() {
        let kept = th
            .events
            .iter()
            .filter(|e| !matches!(e.kind, EventKind::Steal { .. }));
        *th = ThreadTrack::from_events(i as u64 + 1, th.name.clone(), th.worker, kept);
    }
    t
}

/// The lock table and a lock wait's arguments (call site, holder) come back from a `.pftrace`,
/// names resolved (the decoder numbers names in its own order).
#[test]
fn the_lock_table_and_a_waits_arguments_round_trip() {
    use crate::lock_summary::{ARG_LOCK_HOLDER, ARG_LOCK_SITE};
    use EventKind::*;
    let mut t = sample_without_steals();
    let (site_key, holder_key) = (
        NameId(t.names.len() as u32),
        NameId(t.names.len() as u32 + 1),
    );
    t.names.push(ARG_LOCK_SITE.into());
    t.names.push(ARG_LOCK_HOLDER.into());
    let waits: Vec<Event> = t.threads[0].events.iter().collect();
    let mut events = Vec::new();
    for e in waits {
        events.push(e);
        if let LockWait { .. } = e.kind {
            for (key, value) in [(site_key, NameId(5)), (holder_key, NameId(4))] {
                events.push(Event {
                    ts_ns: e.ts_ns,
                    kind: Arg { key, value },
                });
            }
        }
    }
    t.threads[0] = ThreadTrack::from_events(1, "threadlab-worker-0".into(), Some(0), events);
    // A second row: acquisitions unknown, exact holds, no site or holder.
    t.locks.push(crate::lock_summary::LockSummary {
        waits: crate::lock_summary::Durations::of([1, 2, 3_000_000_000]),
        ..crate::lock_summary::LockSummary::new(u64::MAX, NameId(1))
    });
    let back = decode(&super::super::perfetto::encode(&t)).expect("decodes");
    let text = |tr: &Trace| -> Vec<String> {
        tr.locks
            .iter()
            .map(|l| {
                let sites: Vec<String> = l
                    .sites
                    .iter()
                    .map(|s| format!("{} {} {}", tr.name(s.site), s.waits, s.wait_ns))
                    .collect();
                format!(
                    "{} {} {:?} {:?} {:?} {} {sites:?} {:?}",
                    l.lock,
                    tr.name(l.name),
                    l.acquisitions,
                    l.waits,
                    l.holds,
                    l.holds_sampled,
                    l.holders
                )
            })
            .collect()
    };
    assert_eq!(text(&back), text(&t));
    assert_eq!(back.locks.len(), 2);
    let args = |tr: &Trace| -> Vec<(String, String)> {
        tr.threads[0]
            .events
            .iter()
            .filter_map(|e| match e.kind {
                Arg { key, value } => Some((tr.name(key).to_owned(), tr.name(value).to_owned())),
                _ => None,
            })
            .collect()
    };
    assert_eq!(args(&back), args(&t));
    assert!(args(&back).contains(&(ARG_LOCK_SITE.to_owned(), "take (lock.c:12)".to_owned())));
    // The arguments still follow their wait.
    let kinds: Vec<EventKind> = back.threads[0].events.iter().map(|e| e.kind).collect();
    let w = kinds
        .iter()
        .position(|k| matches!(k, LockWait { .. }))
        .unwrap();
    assert!(matches!(kinds[w + 1], Arg { .. }) && matches!(kinds[w + 2], Arg { .. }));
}

/// A call site of a lock the file never introduced is refused, with its offset.
#[test]
fn a_site_of_an_unknown_lock_is_refused() {
    let bytes = super::super::perfetto::encode(&sample_without_steals());
    assert!(decode(&bytes).is_ok());
    // The lock's own instant renamed ("threadlab lock" → "threadlab loc!": the first one, which
    // comes before its site's): its site then belongs to no lock.
    let at = bytes
        .windows(14)
        .position(|w| w == b"threadlab lock")
        .unwrap();
    let mut b = bytes.clone();
    b[at + 13] = b'!';
    let err = decode(&b).unwrap_err();
    assert!(err.1.contains("which has no `threadlab lock`"), "{err:?}");
}
