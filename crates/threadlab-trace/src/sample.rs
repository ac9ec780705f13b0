//! A small trace with one event of every kind on each of two workers, with flows, a lock (and
//! its row in the lock table), a counter, frame marks, a plot, a message, allocations and an
//! argument: what the readers'
//! property test (`fuzz.rs`) mutates, and what the doctor's tests digest
//! (`threadlab-doctor/tests/mutated_traces.rs`). Not part of the stable API.

use crate::event::{Event, EventKind as K, FlowId, NameId, PlotValue, TaskKind};
use crate::lock_summary::{Durations, LockSummary, WaitHolder, WaitSite};
use crate::trace::{ThreadTrack, Trace};

/// A trace with every event kind, two threads (workers 0 and 1, the second's events 5 ns
/// later), flows and locks, and a lock table row for its lock (taken 4,096 times, holds
/// sampled); 400 ns long, 2 CPUs.
///
/// ```
/// let trace = threadlab_trace::sample::every_kind();
/// assert_eq!(trace.threads().len(), 2);
/// ```
pub fn every_kind() -> Trace {
    let n = NameId(0);
    let kinds = [
        K::OsSched {
            on_cpu_ns: 5,
            runqueue_ns: 1,
        },
        K::OsSwitches {
            voluntary: 1,
            involuntary: 2,
        },
        K::ZoneBegin { name: n },
        K::ZoneColor { rgb: 0xff0000 },
        K::Arg {
            key: n,
            value: NameId(1),
        },
        K::TaskBegin {
            kind: TaskKind::Join,
            flow: Some(FlowId(1)),
        },
        K::Spawn { flow: FlowId(2) },
        K::StealAttempt { victim: 1 },
        K::Steal { victim: 1 },
        K::Counter {
            name: NameId(1),
            value: -3,
        },
        K::InjectorPush,
        K::Wake { woken: 1 },
        K::LockWait { lock: 9, name: n },
        K::LockAcquired {
            lock: 9,
            name: n,
            handoff: Some(FlowId(3)),
        },
        K::LockReleased {
            lock: 9,
            name: n,
            handoff: None,
        },
        K::FrameStart { name: NameId(2) },
        K::Plot {
            name: NameId(3),
            value: PlotValue::new(-2.5),
        },
        K::Message {
            text: NameId(4),
            rgb: 0x00ff00,
        },
        K::FrameMark { name: NameId(2) },
        K::Allocs {
            count: 3,
            bytes: 96,
        },
        K::TaskEnd,
        K::SpinBegin,
        K::SpinEnd,
        K::ParkBegin,
        K::ParkEnd,
        K::ZoneEnd,
        K::OsSched {
            on_cpu_ns: 50,
            runqueue_ns: 10,
        },
    ];
    let events = |shift: u64| {
        kinds
            .iter()
            .enumerate()
            .map(|(i, &kind)| Event {
                ts_ns: shift + 10 * i as u64,
                kind,
            })
            .collect()
    };
    Trace {
        threads: vec![
            ThreadTrack {
                tid: 1,
                name: "threadlab-worker-0".into(),
                worker: Some(0),
                events: events(0),
            },
            ThreadTrack {
                tid: 2,
                name: "threadlab-worker-1".into(),
                worker: Some(1),
                events: events(5),
            },
        ],
        names: vec![
            "zone".into(),
            "depth".into(),
            "request".into(),
            "fps".into(),
            "hello".into(),
            "take (lock.c:12)".into(),
        ],
        duration_ns: 400,
        dropped: 0,
        cpus: 2,
        locks: vec![LockSummary {
            acquisitions: Some(4096),
            waits: Durations::of([10, 10, 700, 90_000]),
            holds: Durations::of([5, 40, 41]),
            holds_sampled: true,
            sites: vec![WaitSite {
                site: NameId(5),
                waits: 4,
                wait_ns: 90_720,
            }],
            holders: vec![WaitHolder {
                tid: 2,
                waits: 3,
                wait_ns: 90_710,
            }],
            ..LockSummary::new(9, n)
        }],
    }
}
