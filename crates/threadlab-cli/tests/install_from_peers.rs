//! `install` (and `join`, `scope`) into a threadlab pool from the worker threads of other
//! runtimes, Rayon's and Tokio's: to threadlab those are plain threads, whose calls may run as
//! guests of a sleeping worker's seat or wait for a worker. Many at once, from every peer worker,
//! under a watchdog: each returns its value, nothing hangs.

use std::sync::{mpsc, Arc};
use std::time::Duration;

fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = threadlab::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

fn fib_serial(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        fib_serial(n - 1) + fib_serial(n - 2)
    }
}

/// Runs `f` on a thread; fails if it has not returned within 120 s.
fn watchdog(f: impl FnOnce() + Send + 'static) {
    let (tx, rx) = mpsc::channel();
    let h = std::thread::spawn(move || {
        f();
        tx.send(()).unwrap();
    });
    match rx.recv_timeout(Duration::from_secs(120)) {
        Ok(()) => h.join().unwrap(),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            std::panic::resume_unwind(h.join().unwrap_err())
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("deadlock: not finished within 120 s"),
    }
}

#[test]
fn install_from_rayon_workers() {
    use rayon::prelude::*;
    watchdog(|| {
        let pool = Arc::new(threadlab::Pool::builder().threads(2).build().unwrap());
        let rayon = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let total: u64 = rayon.install(|| {
            (0..64u64)
                .into_par_iter()
                .map(|i| pool.install(|| fib(12 + i % 4)))
                .sum()
        });
        let want: u64 = (0..64u64).map(|i| fib_serial(12 + i % 4)).sum();
        assert_eq!(total, want);
        // A threadlab scope inside a Rayon scope's tasks.
        let sums: Vec<u64> = rayon.install(|| {
            (0..8u64)
                .into_par_iter()
                .map(|i| {
                    let mut parts = [0u64; 4];
                    pool.scope(|s| {
                        for (j, p) in parts.iter_mut().enumerate() {
                            s.spawn(move |_| *p = i * 4 + j as u64);
                        }
                    });
                    parts.iter().sum()
                })
                .collect()
        });
        assert_eq!(sums, (0..8u64).map(|i| 16 * i + 6).collect::<Vec<_>>());
    });
}

#[test]
fn install_from_tokio_workers() {
    watchdog(|| {
        let pool = Arc::new(threadlab::Pool::builder().threads(2).build().unwrap());
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(3)
            .build()
            .unwrap();
        let total: u64 = rt.block_on(async {
            let mut handles = Vec::new();
            for i in 0..64u64 {
                let pool = Arc::clone(&pool);
                // On a Tokio worker (a short blocking call, as `install` of a small job is) and
                // on Tokio's blocking pool.
                if i % 2 == 0 {
                    handles.push(tokio::spawn(
                        async move { pool.install(|| fib(12 + i % 4)) },
                    ));
                } else {
                    handles.push(tokio::task::spawn_blocking(move || {
                        pool.install(|| fib(12 + i % 4))
                    }));
                }
            }
            let mut total = 0;
            for h in handles {
                total += h.await.unwrap();
            }
            total
        });
        let want: u64 = (0..64u64).map(|i| fib_serial(12 + i % 4)).sum();
        assert_eq!(total, want);
    });
}
