//! The pool records its own events: a recording started after the pool was built still knows
//! which thread is which worker; every kind of task appears with its kind; a task spawned during
//! the recording is run exactly once, its spawn linked to that run; steals and wake-ups link the
//! right threads; spans nest on every track.

use std::collections::HashMap;
use std::time::Duration;

use threadlab::trace::{EventKind, FlowId, TaskKind, Trace};
use threadlab::{Pool, SerialQueue};

mod pool_support;
use pool_support::{fib, settle, spawn_and_loop};

/// Runs every kind of pool work inside one recording (one at a time: the recorder is global).
fn record_pool_work(pool: &Pool) -> Trace {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // Both workers parked, so they have asked for work: the join below must hand its second
    // half to the other worker (its first half waits for it), a steal that does not depend on
    // timing.
    settle(pool);
    let rec = threadlab::trace::start();
    // `install` from this thread runs here, as the guest of a sleeping worker's seat, and that
    // worker's own thread may then sleep through the whole recording. Two tasks that wait for
    // each other need both worker threads, so each records at least one task.
    let both = std::sync::Arc::new(std::sync::Barrier::new(3));
    for _ in 0..2 {
        let both = both.clone();
        pool.spawn(move || {
            both.wait();
        });
    }
    both.wait();
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    pool.install(|| threadlab::join(move || rx.recv().unwrap(), move || tx.send(()).unwrap()));
    assert_eq!(pool.install(|| fib(18)), 2584);
    let ran = spawn_and_loop(pool, 200, 10_000);
    let queue = SerialQueue::new(pool);
    let (tx, rx) = std::sync::mpsc::channel();
    for i in 0..20 {
        let tx = tx.clone();
        queue.push(move || tx.send(i).unwrap());
    }
    assert_eq!(
        rx.iter().take(20).collect::<Vec<_>>(),
        (0..20).collect::<Vec<_>>()
    );
    // Let the workers park, then wake them from outside with fire-and-forget tasks.
    for _ in 0..3 {
        std::thread::sleep(Duration::from_millis(20));
        let (tx, rx) = std::sync::mpsc::channel();
        pool.spawn(move || tx.send(()).unwrap());
        rx.recv().unwrap();
    }
    assert_eq!(ran, 10_200);
    rec.stop()
}

fn kinds_seen(trace: &Trace) -> Vec<TaskKind> {
    let mut kinds = Vec::new();
    for t in trace.threads() {
        for e in t.events() {
            if let EventKind::TaskBegin { kind, .. } = e.kind {
                if !kinds.contains(&kind) {
                    kinds.push(kind);
                }
            }
        }
    }
    kinds
}

#[test]
fn the_pool_records_tasks_steals_parks_and_wakeups() {
    let pool = Pool::builder().threads(2).build().unwrap();
    pool.install(|| fib(10)); // the workers started long before the recording
    let trace = record_pool_work(&pool);

    // Both workers are identified, with their pool index.
    let w0 = trace.worker_thread(0).expect("worker 0 identified");
    let w1 = trace.worker_thread(1).expect("worker 1 identified");
    assert_ne!(w0, w1);
    assert_eq!(
        trace.threads()[w0].name(),
        "threadlab-0",
        "the std thread name"
    );

    let kinds = kinds_seen(&trace);
    for want in [
        TaskKind::Install,
        TaskKind::Join,
        TaskKind::Spawn,
        TaskKind::LoopChunk,
        TaskKind::Serial,
    ] {
        assert!(kinds.contains(&want), "{want} spans in {kinds:?}");
    }

    // Every spawn arrow ends at exactly one task run; spawns and runs balance.
    let mut spawned: HashMap<FlowId, usize> = HashMap::new();
    let mut ran: HashMap<FlowId, usize> = HashMap::new();
    for t in trace.threads() {
        for e in t.events() {
            match e.kind {
                EventKind::Spawn { flow } => *spawned.entry(flow).or_default() += 1,
                EventKind::TaskBegin {
                    flow: Some(flow), ..
                } => *ran.entry(flow).or_default() += 1,
                _ => {}
            }
        }
    }
    assert!(spawned.len() > 200, "spawns recorded: {}", spawned.len());
    assert!(spawned.values().all(|&n| n == 1) && ran.values().all(|&n| n == 1));
    let unmatched: Vec<_> = spawned.keys().filter(|f| !ran.contains_key(f)).collect();
    assert!(
        unmatched.is_empty(),
        "spawns never run: {}",
        unmatched.len()
    );

    // Steals name a victim that is the other worker; wake-ups name a worker.
    let mut steals = 0;
    let mut wakes = 0;
    let mut parks = 0;
    for (i, t) in trace.threads().iter().enumerate() {
        for e in t.events() {
            match e.kind {
                EventKind::Steal { victim } => {
                    steals += 1;
                    let victim = trace.worker_thread(victim).expect("victim is a worker");
                    assert_ne!(victim, i, "a worker does not steal from itself");
                }
                EventKind::Wake { woken } => {
                    wakes += 1;
                    assert!(trace.worker_thread(woken).is_some());
                }
                EventKind::ParkBegin => parks += 1,
                _ => {}
            }
        }
    }
    assert!(parks > 0 && wakes > 0, "parks {parks}, wakes {wakes}");
    assert!(steals > 0, "the hand-shake join's second half is stolen");

    // Spans nest on every track: every end closes the innermost open span of its kind.
    for t in trace.threads() {
        let mut open = Vec::new();
        for e in t.events() {
            match e.kind {
                EventKind::TaskBegin { .. } => open.push("task"),
                EventKind::SpinBegin => open.push("spin"),
                EventKind::ParkBegin => open.push("park"),
                EventKind::ZoneBegin { .. } => open.push("zone"),
                EventKind::TaskEnd => assert_eq!(open.pop(), Some("task"), "{}", t.name()),
                EventKind::SpinEnd => assert_eq!(open.pop(), Some("spin"), "{}", t.name()),
                EventKind::ParkEnd => assert_eq!(open.pop(), Some("park"), "{}", t.name()),
                EventKind::ZoneEnd => assert_eq!(open.pop(), Some("zone"), "{}", t.name()),
                _ => {}
            }
        }
        assert!(open.is_empty(), "{}: spans left open {open:?}", t.name());
    }
}

#[test]
fn a_pool_without_a_recording_records_nothing_and_a_later_one_works() {
    let pool = Pool::builder().threads(2).build().unwrap();
    assert_eq!(pool.install(|| fib(15)), 610);
    // Two recordings in a row over the same pool: each identifies the workers again.
    for _ in 0..2 {
        let trace = record_pool_work(&pool);
        assert!(trace.worker_thread(0).is_some() && trace.worker_thread(1).is_some());
    }
}
