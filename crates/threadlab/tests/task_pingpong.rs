//! Many futures handing a baton back and forth across the workers all complete, under every
//! wake policy, spawned from outside the pool and from inside it.

mod task_support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use task_support::{on_every_policy, play, watched_pool, Baton};

const PAIRS: usize = if cfg!(miri) { 2 } else { 32 };
const ROUNDS: usize = if cfg!(miri) { 5 } else { 200 };

#[test]
fn many_pairs_ping_pong_and_all_complete() {
    for threads in [1, 2, 4] {
        on_every_policy(threads, move |pool, policy| {
            let count = Arc::new(AtomicUsize::new(0));
            let mut handles = Vec::new();
            for _ in 0..PAIRS {
                let baton = Arc::new(Baton::default());
                for me in 0..2 {
                    handles.push(pool.spawn_future(play(
                        Arc::clone(&baton),
                        me,
                        ROUNDS,
                        Arc::clone(&count),
                    )));
                }
            }
            for h in handles {
                h.join();
            }
            assert_eq!(
                count.load(Ordering::Relaxed),
                PAIRS * 2 * ROUNDS,
                "{policy:?}, {threads} threads"
            );
        });
    }
}

#[test]
fn pairs_spawned_from_inside_the_pool_complete() {
    watched_pool(2, |pool| {
        let count = Arc::new(AtomicUsize::new(0));
        let c = Arc::clone(&count);
        pool.block_on(async move {
            let mut handles = Vec::new();
            for _ in 0..PAIRS {
                let baton = Arc::new(Baton::default());
                for me in 0..2 {
                    let h = threadlab::spawn_future(play(
                        Arc::clone(&baton),
                        me,
                        ROUNDS,
                        Arc::clone(&c),
                    ));
                    handles.push(h);
                }
            }
            for h in handles {
                h.await;
            }
        });
        assert_eq!(count.load(Ordering::Relaxed), PAIRS * 2 * ROUNDS);
    });
}

#[test]
fn futures_and_fork_join_share_the_workers() {
    fn fib(n: u64) -> u64 {
        if n < 2 {
            return n;
        }
        let (a, b) = threadlab::join(|| fib(n - 1), || fib(n - 2));
        a + b
    }
    /// fib by iteration, for the expected values.
    fn plain_fib(n: u64) -> u64 {
        (0..n).fold((0, 1), |(a, b), _| (b, a + b)).0
    }
    // Under Miri fib(5..9) in the futures and fib(10) + fib(9) in the install (527 joins in
    // all instead of 6,027): still futures and nests of joins on both workers at once.
    let (low, high) = if cfg!(miri) { (5, 10) } else { (10, 15) };
    watched_pool(2, move |pool| {
        let handles: Vec<_> = (0..16u64)
            .map(|i| pool.spawn_future(async move { fib(low + i % 5) }))
            .collect();
        let total: u64 = pool.install(|| {
            let (a, b) = threadlab::join(|| fib(high), || fib(high - 1));
            a + b
        });
        let futures: u64 = handles.into_iter().map(|h| h.join()).sum();
        assert_eq!(total, plain_fib(high) + plain_fib(high - 1));
        let want: u64 = (0..16u64).map(|i| plain_fib(low + i % 5)).sum();
        assert_eq!(futures, want);
    });
}
