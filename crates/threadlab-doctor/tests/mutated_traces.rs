//! The doctor and `compare` on traces that are odd but loadable: random mutations (flips,
//! insertions, deletions, truncations, varint bombs) of a saved `.tltrace` holding every event
//! kind, read back with `Trace::load`; whatever loads must be diagnosed, compared and printed
//! without a panic. (The reader's own property test, on the same mutations, is the library's
//! `trace/fuzz.rs`.) The generator and the mutations are `threadlab-testkit`'s, with a fixed
//! seed, so a failure replays.

use threadlab::trace::{Event, EventKind as K, FlowId, TaskKind, Trace, TraceBuilder};
use threadlab_doctor::Diagnose;
use threadlab_testkit::{mutate, Rng};

/// Two workers, each with every event kind once, in order.
fn every_kind() -> Trace {
    let mut b = TraceBuilder::new();
    let n = b.name("zone");
    let depth = b.name("depth");
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
        K::TaskBegin {
            kind: TaskKind::Join,
            flow: Some(FlowId(1)),
        },
        K::Spawn { flow: FlowId(2) },
        K::StealAttempt { victim: 1 },
        K::Steal { victim: 1 },
        K::Counter {
            name: depth,
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
    for w in 0..2u32 {
        let t = b.thread(1 + u64::from(w), &format!("threadlab-worker-{w}"));
        b.worker(t, w);
        for (i, &kind) in kinds.iter().enumerate() {
            let ts_ns = 5 * u64::from(w) + 10 * i as u64;
            b.push(t, Event { ts_ns, kind });
        }
    }
    b.duration_ns(400);
    b.cpus(2);
    b.build()
}

#[test]
fn whatever_loads_is_diagnosed_and_compared() {
    let dir =
        std::env::temp_dir().join(format!("threadlab-doctor-mutations-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("valid.tltrace");
    let reference = every_kind();
    reference.save(&path).unwrap();
    let valid = std::fs::read(&path).unwrap();
    let whole = reference.diagnose();
    assert!(whole.threads.len() == 2 && !whole.to_string().is_empty());
    let mutated = dir.join("mutated.tltrace");
    let mut rng = Rng::new(0xD1B5_4A32_D192_ED03);
    let mut loaded = 0;
    for _ in 0..2000 {
        let mut b = valid.clone();
        mutate(&mut b, &mut rng);
        std::fs::write(&mutated, &b).unwrap();
        if let Ok(t) = Trace::load(&mutated) {
            loaded += 1;
            let d = t.diagnose();
            let _ = d.to_string();
            let _ = d.compare(&whole).to_string();
            let _ = threadlab_doctor::compare(&t, &reference).to_string();
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    // Mutated values that still parse reach the doctor with odd events: make sure many do.
    assert!(loaded > 60, "only {loaded} mutations loaded");
}
