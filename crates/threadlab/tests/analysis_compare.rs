//! `compare` on the allocator-contention article's situation: the same workload captured with 2 and with 5
//! workers, where one zone takes a named lock (Unity's allocator lock inside VFXBatch.Update).
//! The zone and the lock must come out on top; the lock-free zone beside it must not.

mod trace_support;

use std::time::{Duration, Instant};

use threadlab::sync::Mutex;
use threadlab::trace::Trace;
use threadlab_doctor::compare;
use trace_support::serial;

/// Busy for `d` of wall time (so a zone lasts about `d` however the threads are scheduled).
fn spin_for(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// 40 items on a pool of `workers`: 10 µs of lock-free work, then `allocator` held for 200 µs.
/// The holder sleeps rather than spins, so the hold time does not depend on how busy the CPUs
/// are (a noisy VM preempts spinners for milliseconds). The lock is saturated with 2 workers
/// and a queue with 5: while one thread holds it, every other thread in the `alloc` zone waits,
/// so each extra worker adds about the whole run to the lock's waits, while the lock-free zone
/// keeps its 10 µs.
fn capture(workers: usize) -> Trace {
    let pool = threadlab::Pool::builder().threads(workers).build().unwrap();
    let allocator = Mutex::named("allocator", 0u64);
    let rec = threadlab::trace::start();
    pool.install(|| {
        threadlab::for_each(0..40, |_| {
            {
                let _z = threadlab::zone!("compute");
                spin_for(Duration::from_micros(10));
            }
            let _z = threadlab::zone!("alloc");
            let mut heap = allocator.lock();
            std::thread::sleep(Duration::from_micros(200));
            *heap += 1;
        })
    });
    let trace = rec.stop();
    assert_eq!(allocator.into_inner(), 40);
    trace
}

#[test]
fn the_locked_zone_and_its_lock_top_the_comparison() {
    let _s = serial();
    let two = capture(2);
    let five = capture(5);
    let cmp = compare(&two, &five);
    let names: Vec<&str> = cmp.rows.iter().map(|r| r.name.as_str()).collect();
    let about_it = |n: &str| n == "zone alloc" || n.starts_with("lock allocator ");
    // On a quiet machine the order is `zone alloc`, `lock allocator wait` (each about three
    // times the run longer with 5 workers), then the hold and `zone compute` within noise. When
    // other processes saturate the CPUs, the sleeping holder's wake-ups stretch the holds of
    // either capture by milliseconds, so the hold row may move up: it is that lock too.
    assert!(about_it(names[0]), "top row {names:?}\n{cmp}");
    assert!(
        names[..3].contains(&"zone alloc") && names[..3].iter().any(|n| n.starts_with("lock ")),
        "top rows {names:?}\n{cmp}"
    );
    let compute = names.iter().position(|n| *n == "zone compute");
    assert!(compute.is_some_and(|i| i >= 2), "{names:?}\n{cmp}");
    let text = cmp.to_string();
    assert!(text.contains("lock allocator wait") && text.contains("wake-up p99"));
}
