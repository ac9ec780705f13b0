//! `threadlab::blocking`: a task about to block tells its pool, which starts a spare thread at
//! once for the work queued behind it (no monitor involved, so these run under Miri too).

mod pool_support;

use std::sync::mpsc;

use pool_support::{watchdog, watched_pool};
use threadlab::Pool;

#[test]
fn blocking_hands_the_queued_work_to_a_spare_thread_at_once() {
    watchdog(|| {
        // One worker, no monitor needed: `blocking` starts the spare thread itself.
        let pool = Pool::builder().threads(1).build().unwrap();
        let (tx, rx) = mpsc::channel();
        let got = pool.install(move || {
            threadlab::spawn(move || tx.send(7).unwrap());
            threadlab::blocking(|| rx.recv().unwrap())
        });
        assert_eq!(got, 7);
        assert!(pool.metrics().spare_threads_started >= 1);
        // Outside any pool it just runs the closure.
        assert_eq!(threadlab::blocking(|| 5), 5);
    });
}

/// The spare thread runs joins as a worker does, and answers to the index of the worker it
/// stands in for (the pool's only one), as every thread that runs the pool's work has one.
#[test]
fn a_spare_thread_runs_nested_joins_with_the_blocked_workers_index() {
    watched_pool(1, |pool| {
        let (tx, rx) = mpsc::channel();
        let got = pool.install(move || {
            threadlab::spawn(move || {
                // On the spare thread: joins fork and wait as on a worker.
                let index = threadlab::current_thread_index();
                let sum = fib(if cfg!(miri) { 10 } else { 20 });
                tx.send((index, sum)).unwrap();
            });
            threadlab::blocking(|| rx.recv().unwrap())
        });
        assert_eq!(got, (Some(0), if cfg!(miri) { 55 } else { 6765 }));
    });
}

fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = threadlab::join(|| fib(n - 1), || fib(n - 2));
    a + b
}
