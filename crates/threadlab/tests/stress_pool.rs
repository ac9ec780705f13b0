//! Release-mode stress tests of the pool (`cargo test --release -p threadlab --test stress_pool`).
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use threadlab::Pool;

const TASKS: usize = if cfg!(debug_assertions) {
    200_000
} else {
    10_000_000
};

#[test]
fn ten_million_spawned_tasks_each_run_exactly_once() {
    let pool = Pool::builder().threads(4).build().unwrap();
    let runs: Arc<Vec<AtomicU8>> = Arc::new((0..TASKS).map(|_| AtomicU8::new(0)).collect());
    // Half from outside (the injector), half from inside a worker (the deques, stolen).
    for i in 0..TASKS / 2 {
        let runs = runs.clone();
        pool.spawn(move || {
            runs[i].fetch_add(1, Ordering::Relaxed);
        });
    }
    let r2 = runs.clone();
    pool.install(move || {
        for i in TASKS / 2..TASKS {
            let runs = r2.clone();
            threadlab::spawn(move || {
                runs[i].fetch_add(1, Ordering::Relaxed);
            });
        }
    });
    let report = pool.shutdown();
    let bad = runs
        .iter()
        .filter(|r| r.load(Ordering::Relaxed) != 1)
        .count();
    assert_eq!(bad, 0, "{bad} tasks did not run exactly once");
    assert!(report.tasks_run >= TASKS as u64);
}

#[test]
fn million_scope_tasks_are_counted() {
    let pool = Pool::builder().threads(3).build().unwrap();
    let count = AtomicUsize::new(0);
    for _ in 0..3 {
        pool.scope(|s| {
            for _ in 0..TASKS / 10 {
                s.spawn(|_| {
                    count.fetch_add(1, Ordering::Relaxed);
                });
            }
        });
    }
    assert_eq!(count.load(Ordering::Relaxed), 3 * (TASKS / 10));
}

#[test]
fn many_short_bursts_never_lose_a_wakeup() {
    // Bursts separated by pauses long enough for workers to park: a lost wake-up would hang one
    // burst (caught by the test harness's own timeout / CI).
    let pool = Pool::builder().threads(2).build().unwrap();
    for round in 0..300 {
        let (tx, rx) = std::sync::mpsc::channel();
        pool.spawn(move || tx.send(round).unwrap());
        assert_eq!(
            rx.recv_timeout(std::time::Duration::from_secs(60)).unwrap(),
            round
        );
        if round % 3 == 0 {
            std::thread::sleep(std::time::Duration::from_micros(300));
        }
    }
}
