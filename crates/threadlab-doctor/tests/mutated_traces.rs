//! The doctor and `compare` on traces that are odd but loadable: random mutations (flips,
//! insertions, deletions, truncations, varint bombs) of a saved `.tltrace` holding every event
//! kind, read back with `Trace::load`; whatever loads must be diagnosed, compared and printed
//! without a panic. (The reader's own property test, on the same mutations, is the library's
//! `trace/fuzz.rs`.) The generator is xorshift64* (Vigna 2016) with a fixed seed, so a failure
//! replays.

use threadlab::trace::{Event, EventKind as K, FlowId, TaskKind, Trace, TraceBuilder};
use threadlab_doctor::Diagnose;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

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
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    let mut loaded = 0;
    for _ in 0..2000 {
        let mut b = valid.clone();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(b.len());
            match rng.below(5) {
                0 => b[at] ^= 1 << rng.below(8),
                1 => b[at] = rng.next() as u8,
                2 => b.insert(at, rng.next() as u8),
                3 if b.len() > 1 => {
                    b.remove(at);
                }
                // A huge varint where a count or a timestamp was.
                _ => {
                    let bomb = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
                    b.splice(at..at, bomb);
                }
            }
        }
        if rng.below(4) == 0 {
            b.truncate(rng.below(b.len() + 1));
        }
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
