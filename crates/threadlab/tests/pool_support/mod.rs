//! Helpers shared by the pool tests: a deadlock watchdog, a fork-join fib, and waiting until a
//! pool's workers are all parked (so the next work starts with idle workers that asked for work).
#![allow(dead_code)]

use std::sync::mpsc;
use std::time::{Duration, Instant};

use threadlab::Pool;

/// Runs `f` on a thread and fails the test if it has not finished within 60 s (a deadlock).
pub fn watchdog<F: FnOnce() + Send + 'static>(f: F) {
    let (tx, rx) = mpsc::channel();
    let h = std::thread::spawn(move || {
        f();
        tx.send(()).unwrap();
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(()) => h.join().unwrap(),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            std::panic::resume_unwind(h.join().unwrap_err())
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("deadlock: not finished within 60 s"),
    }
}

/// fib with a `join` at every call.
pub fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = threadlab::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

/// Waits until every worker of `pool` is parked (failing after 60 s).
pub fn settle(pool: &Pool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !pool.metrics().all_parked() {
        assert!(Instant::now() < deadline, "workers never parked");
        std::thread::sleep(Duration::from_millis(1));
    }
}
