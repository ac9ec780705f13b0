//! The metrics users graph: the time histograms count every task and poll once (and nothing
//! when off), alive future tasks go up and back down, queue depths are read. Counting only;
//! under the deadlock watchdog.

mod pool_support;

use pool_support::watchdog;
use threadlab::{Histogram, Pool};

fn pool(histograms: bool) -> Pool {
    Pool::builder()
        .threads(2)
        .time_histograms(histograms)
        .build()
        .unwrap()
}

/// Waits until the pool has run `n` tasks (the counter is bumped after the histogram's).
fn until_run(pool: &Pool, n: u64) {
    while pool.metrics().tasks_run() < n {
        std::thread::yield_now();
    }
}

#[test]
fn histograms_count_each_task_and_poll_once() {
    watchdog(|| {
        let pool = pool(true);
        let n = if cfg!(miri) { 20 } else { 1_000 };
        for _ in 0..n {
            pool.spawn(|| {
                std::hint::black_box(0);
            });
        }
        until_run(&pool, n);
        // The counters are statistics (relaxed): the histogram's count may show a moment after
        // the task count (Miri's weak memory shows it), so wait for it, then check it exact.
        while pool.metrics().task_run_time().count() < n {
            std::thread::yield_now();
        }
        let m = pool.metrics();
        assert_eq!(m.task_run_time().count(), n);
        assert_eq!(m.poll_time().count(), 0);
        // Futures that finish at their first poll: one poll each.
        let handles: Vec<_> = (0..10)
            .map(|i| pool.spawn_future(async move { i }))
            .collect();
        let sum: u64 = handles.into_iter().map(|h| pool.block_on(h)).sum();
        assert_eq!(sum, 45);
        // Every task the workers ran is in exactly one of the two histograms (waited for:
        // a worker bumps its task count just after the histogram).
        let balanced = |m: &threadlab::Metrics| {
            m.workers
                .iter()
                .all(|w| w.task_run_time.count() + w.poll_time.count() == w.tasks_run)
        };
        while !balanced(&pool.metrics()) {
            std::thread::yield_now();
        }
        let m = pool.metrics();
        assert!(m.poll_time().count() >= 10);
        assert!(m.task_run_time().count() >= n);
        assert!(m
            .workers
            .iter()
            .all(|w| w.task_run_time.counts.len() == Histogram::BUCKETS));
        pool.shutdown();
    });
}

#[test]
fn histograms_off_count_nothing() {
    watchdog(|| {
        let pool = pool(false);
        for _ in 0..100 {
            pool.spawn(|| {});
        }
        pool.block_on(pool.spawn_future(async {}));
        until_run(&pool, 101);
        let m = pool.metrics();
        assert_eq!(m.task_run_time().count(), 0);
        assert_eq!(m.poll_time().count(), 0);
    });
}

#[test]
fn alive_tasks_go_up_and_down() {
    watchdog(|| {
        let pool = pool(false);
        assert_eq!(pool.metrics().alive_tasks, 0);
        let (tx, rx) = threadlab::channel::bounded::<u32>(0);
        let waiting: Vec<_> = (0..5)
            .map(|_| {
                let rx = rx.clone();
                pool.spawn_future(async move { rx.recv().await.unwrap() })
            })
            .collect();
        assert_eq!(pool.metrics().alive_tasks, 5);
        for i in 0..5 {
            tx.send_blocking(i).unwrap();
        }
        let sum: u32 = waiting.into_iter().map(|h| pool.block_on(h)).sum();
        assert_eq!(sum, 10);
        // Each task is freed by its worker or by its handle, whichever lets go last.
        while pool.metrics().alive_tasks > 0 {
            std::thread::yield_now();
        }
        // Tasks spawned from a worker count on that worker.
        let inner = pool.install(|| pool.spawn_future(async { 1 }));
        assert_eq!(pool.block_on(inner), 1);
        while pool.metrics().alive_tasks > 0 {
            std::thread::yield_now();
        }
    });
}

#[test]
fn queue_depths_are_read() {
    watchdog(|| {
        let pool = pool(false);
        // A worker busy until released, with jobs mailed behind it.
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        let (started_tx, started_rx) = std::sync::mpsc::channel::<()>();
        pool.spawn_on(0, move || {
            started_tx.send(()).unwrap();
            go_rx.recv().unwrap();
        })
        .unwrap();
        started_rx.recv().unwrap();
        for _ in 0..3 {
            pool.spawn_on(0, || {}).unwrap();
        }
        assert_eq!(pool.metrics().workers[0].inbox_depth, 3);
        assert_eq!(pool.metrics().workers[1].inbox_depth, 0);
        go_tx.send(()).unwrap();
        until_run(&pool, 4);
        // The depths are read without a lock and may trail the run count for a moment (Miri's
        // scheduler showed it): they must come back to zero (the watchdog fails the test if
        // they never do).
        while !pool
            .metrics()
            .workers
            .iter()
            .all(|w| w.inbox_depth == 0 && w.local_queue_depth == 0)
        {
            std::thread::yield_now();
        }
    });
}
