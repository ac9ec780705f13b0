//! `alloc::Counting` as the global allocator: zones and tasks carry their allocations in a
//! recording, through every save format, and the doctor names the allocation-heavy one.

mod trace_support;

use std::alloc::System;

use threadlab::alloc::Counting;
use threadlab::analysis::Pitfall;
use threadlab::trace::{EventKind, Trace};
use trace_support::*;

#[global_allocator]
static ALLOC: Counting<System> = Counting::new(System);

const N: usize = if cfg!(miri) { 200 } else { 2000 };

/// (allocations, bytes) attributed to zones named `name`, summed over the trace.
fn zone_allocs(trace: &Trace, name: &str) -> (u64, u64, usize) {
    let id = trace.name_id(name).unwrap();
    let (mut count, mut bytes, mut spans) = (0, 0, 0);
    for t in trace.threads() {
        let mut stack = Vec::new();
        let mut pending = None;
        for e in t.events().iter() {
            match e.kind {
                EventKind::ZoneBegin { name } => stack.push(Some(name)),
                EventKind::TaskBegin { .. } => stack.push(None),
                EventKind::Allocs { count, bytes } => pending = Some((count, bytes)),
                EventKind::ZoneEnd | EventKind::TaskEnd => {
                    if let (Some(Some(n)), Some((c, b))) = (stack.pop(), pending.take()) {
                        if n == id {
                            count += c;
                            bytes += b;
                            spans += 1;
                        }
                    }
                }
                _ => {}
            }
        }
    }
    (count, bytes, spans)
}

#[test]
fn zones_carry_their_allocations_and_the_doctor_names_the_heavy_one() {
    let _s = serial();
    let (n0, b0) = threadlab::alloc::thread_counts();
    let boxes: Vec<Box<u64>> = (0..10).map(Box::new).collect();
    let (n1, b1) = threadlab::alloc::thread_counts();
    assert!(
        n1 - n0 >= 10 && b1 - b0 >= 80,
        "the allocator counts this thread"
    );
    assert!(threadlab::alloc::counting());
    drop(boxes);

    let pool = threadlab::Pool::builder().threads(2).build().unwrap();
    let rec = threadlab::trace::start();
    for _ in 0..4 {
        let _z = threadlab::zone!("heavy");
        let v: Vec<Box<[u8; 16]>> = (0..N).map(|_| Box::new([0u8; 16])).collect();
        std::hint::black_box(&v);
        let _inner = threadlab::zone!("light");
        let _one = std::hint::black_box(Box::new(1u8));
    }
    {
        let _z = threadlab::trace::Zone::begin_dynamic(&format!("dynamic {}", 1));
        std::hint::black_box(vec![1u8; 100]);
    }
    // A task on a worker: its span carries its allocations too.
    pool.install(|| {
        let _z = threadlab::zone!("in task");
        std::hint::black_box(vec![0u64; 10]);
    });
    let trace = rec.stop();

    let (heavy, heavy_bytes, spans) = zone_allocs(&trace, "heavy");
    // Each heavy zone: N boxes of 16 bytes and the vector (grown by reallocation) at least,
    // plus the light zone's box (children included in the parent's count).
    assert_eq!(spans, 4);
    assert!(heavy >= 4 * (N as u64 + 1), "{heavy}");
    assert!(heavy_bytes >= 4 * 16 * N as u64, "{heavy_bytes}");
    let (light, light_bytes, spans) = zone_allocs(&trace, "light");
    assert_eq!(spans, 4);
    assert_eq!((light, light_bytes), (4, 4), "one 1-byte box each");
    let (dynamic, dynamic_bytes, _) = zone_allocs(&trace, "dynamic 1");
    assert_eq!((dynamic, dynamic_bytes), (1, 100));
    let (in_task, _, spans) = zone_allocs(&trace, "in task");
    assert_eq!((in_task, spans), (1, 1));

    // Saved and loaded, both ways: the same counts.
    for ext in ["pftrace", "tltrace"] {
        let path = temp_path(&format!("allocs.{ext}"));
        trace.save(&path).unwrap();
        let back = Trace::load(&path).unwrap();
        assert_eq!(
            zone_allocs(&back, "heavy"),
            zone_allocs(&trace, "heavy"),
            "{ext}"
        );
        assert_eq!(zone_allocs(&back, "light"), (4, 4, 4), "{ext}");
        std::fs::remove_file(&path).ok();
    }

    let d = trace.diagnose();
    let heavy_stats = &d.allocs[0];
    assert_eq!(heavy_stats.name, "heavy");
    assert_eq!(
        heavy_stats.count,
        heavy - 4,
        "self: the light zones' boxes are theirs"
    );
    assert!(d.has(Pitfall::AllocationHeavy), "{d}");
    let f = d
        .findings
        .iter()
        .find(|f| f.pitfall == Pitfall::AllocationHeavy)
        .unwrap();
    assert_eq!(f.subject, "span heavy");
    assert!(d.to_string().contains("allocation-heavy"));
}

#[test]
fn without_a_recording_spans_record_nothing() {
    let _s = serial();
    let _z = threadlab::zone!("off");
    assert!(!threadlab::trace::is_recording());
}
