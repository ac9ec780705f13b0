use std::sync::atomic::{AtomicUsize, Ordering};
use threadlab::{join, Pool};

mod pool_support;
use pool_support::fib;

#[test]
fn deep_join_recursion_gives_the_right_value() {
    let pool = Pool::builder().threads(4).build().unwrap();
    assert_eq!(pool.install(|| fib(25)), 75_025);
    // Again, from a worker of the pool directly (no install hop inside).
    assert_eq!(
        pool.install(|| join(|| fib(24), || fib(23))),
        (46_368, 28_657)
    );
}

#[test]
fn join_outside_any_pool_uses_the_global_pool() {
    assert_eq!(fib(18), 2584);
}

#[test]
fn one_thread_pool_runs_joins_inline() {
    let pool = Pool::builder().threads(1).build().unwrap();
    assert_eq!(pool.install(|| fib(20)), 6765);
}

#[test]
fn unbalanced_joins_and_loops_cover_every_index() {
    let pool = Pool::builder().threads(3).build().unwrap();
    let n = 100_000;
    let hits: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
    pool.install(|| {
        threadlab::for_each(0..n, |i| {
            hits[i].fetch_add(1, Ordering::Relaxed);
        })
    });
    assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));

    let mut v: Vec<u64> = (0..10_001).collect();
    pool.install(|| threadlab::for_each_mut(&mut v, |x| *x *= 3));
    assert!(v.iter().enumerate().all(|(i, &x)| x == 3 * i as u64));

    let mut w = vec![0usize; 1003];
    pool.install(|| threadlab::for_each_chunk_mut(&mut w, 10, |c, chunk| chunk.fill(c)));
    assert!(w.iter().enumerate().all(|(i, &x)| x == i / 10));
}
