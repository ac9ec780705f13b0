use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;
use threadlab::Pool;

#[test]
fn scope_borrows_a_local_vector() {
    let pool = Pool::builder().threads(4).build().unwrap();
    let data: Vec<u64> = (1..=1000).collect();
    let mut partial = [0u64; 10];
    pool.scope(|s| {
        for (i, slot) in partial.iter_mut().enumerate() {
            let data = &data;
            s.spawn(move |_| *slot = data[i * 100..(i + 1) * 100].iter().sum());
        }
    });
    assert_eq!(partial.iter().sum::<u64>(), 500_500);
}

#[test]
fn nested_spawns_all_finish_before_scope_returns() {
    let pool = Pool::builder().threads(2).build().unwrap();
    let count = AtomicUsize::new(0);
    pool.scope(|s| {
        for _ in 0..10 {
            s.spawn(|s| {
                for _ in 0..10 {
                    s.spawn(|_| {
                        count.fetch_add(1, Ordering::Relaxed);
                    });
                }
            });
        }
    });
    assert_eq!(count.load(Ordering::Relaxed), 100);
}

#[test]
fn free_scope_and_spawn_use_the_global_pool() {
    let mut x = 0;
    threadlab::scope(|s| s.spawn(|_| x = 7));
    assert_eq!(x, 7);
    let (tx, rx) = mpsc::channel();
    threadlab::spawn(move || tx.send(3).unwrap());
    assert_eq!(rx.recv_timeout(Duration::from_secs(60)).unwrap(), 3);
}

#[test]
fn shutdown_while_tasks_are_queued_runs_them_all() {
    let pool = Pool::builder().threads(2).build().unwrap();
    let count = std::sync::Arc::new(AtomicUsize::new(0));
    // Hold both workers at a barrier while the tasks are queued, then shut down at once.
    let gate = std::sync::Arc::new(std::sync::Barrier::new(3));
    for _ in 0..2 {
        let gate = gate.clone();
        pool.spawn(move || {
            gate.wait();
        });
    }
    for _ in 0..10_000 {
        let count = count.clone();
        pool.spawn(move || {
            count.fetch_add(1, Ordering::Relaxed);
        });
    }
    assert!(
        pool.metrics().injector_depth > 0,
        "tasks should still be queued"
    );
    gate.wait();
    let report = pool.shutdown();
    assert_eq!(count.load(Ordering::Relaxed), 10_000);
    assert_eq!(report.panicked_tasks, 0);
    assert!(report.tasks_run >= 10_002, "{report:?}");
}

/// A pool dropped with tasks still queued runs them all (after the drop returned); shut down
/// instead, it runs them before `shutdown` returns.
#[test]
fn dropped_and_shut_down_pools_run_their_queued_tasks() {
    for shut_down in [false, true] {
        let count = std::sync::Arc::new(AtomicUsize::new(0));
        let pool = Pool::builder().threads(1).build().unwrap();
        for _ in 0..1000 {
            let count = count.clone();
            pool.spawn(move || {
                count.fetch_add(1, Ordering::Relaxed);
            });
        }
        if shut_down {
            pool.shutdown();
            assert_eq!(count.load(Ordering::Relaxed), 1000);
            continue;
        }
        drop(pool);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while count.load(Ordering::Relaxed) < 1000 {
            assert!(
                std::time::Instant::now() < deadline,
                "queued tasks lost at drop"
            );
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
}
