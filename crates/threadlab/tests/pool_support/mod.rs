//! Helpers shared by the pool tests: a deadlock watchdog, a fork-join fib, waiting until a
//! pool's workers are all parked (so the next work starts with idle workers that asked for work),
//! a panic's message and a panic handler that counts.
#![allow(dead_code)]

use std::any::Any;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Barrier};
use std::time::{Duration, Instant};

use threadlab::{Builder, Pool};

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

/// Runs `body` under the [`watchdog`] with a fresh pool of `threads` workers.
pub fn watched_pool<F: FnOnce(Pool) + Send + 'static>(threads: usize, body: F) {
    watchdog(move || body(Pool::builder().threads(threads).build().unwrap()));
}

/// Spawns `spawns` tasks in a scope on `pool`, then runs a parallel loop of `items` items on it;
/// returns how many ran (each task and each item counts one).
pub fn spawn_and_loop(pool: &Pool, spawns: usize, items: usize) -> usize {
    // Relaxed: read after `scope` and `install` returned, which wait for every task and item.
    let count = AtomicUsize::new(0);
    pool.scope(|s| {
        for _ in 0..spawns {
            s.spawn(|_| {
                count.fetch_add(1, Ordering::Relaxed);
            });
        }
    });
    pool.install(|| {
        threadlab::for_each(0..items, |_| {
            count.fetch_add(1, Ordering::Relaxed);
        })
    });
    count.load(Ordering::Relaxed)
}

/// Runs `body(threads, pool)` under the [`watchdog`] on a fresh pool of one worker, then on one
/// of two.
pub fn on_one_and_two_workers<F: Fn(usize, Pool) + Send + 'static>(body: F) {
    watchdog(move || {
        for threads in [1, 2] {
            body(threads, Pool::builder().threads(threads).build().unwrap());
        }
    });
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

/// Three tasks meeting at a 3-party barrier in a scope on `pool`: on 2 workers, only a spare
/// thread lets it complete.
pub fn barrier_needing_a_spare(pool: &Pool) {
    let barrier = Arc::new(Barrier::new(3));
    pool.scope(|s| {
        for _ in 0..3 {
            let b = Arc::clone(&barrier);
            s.spawn(move |_| {
                b.wait();
            });
        }
    });
}

/// The message of a panic payload (a `&str` or a `String`; empty for any other payload).
pub fn panic_message(p: &(dyn Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

/// The pool `builder` builds, with a panic handler that counts the panics it is given, and the
/// count.
pub fn counting_panics(builder: Builder) -> (Arc<AtomicUsize>, Pool) {
    let count = Arc::new(AtomicUsize::new(0));
    let c = Arc::clone(&count);
    let pool = builder
        .panic_handler(move |_| {
            c.fetch_add(1, Ordering::SeqCst);
        })
        .build()
        .unwrap();
    (count, pool)
}
