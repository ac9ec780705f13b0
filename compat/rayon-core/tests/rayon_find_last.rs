//! Rayon's own iterators on this package: a search for the last match over nested `flat_map`s,
//! which ends early only if the pool's thieves take the victim's oldest piece of work — in a
//! deque of `join`s the largest one and the rightmost. Rayon's `find_last` splits its positions
//! in halves and a piece stops once a match to its right is known; with nested `flat_map`s the
//! halving runs out of positions and many pieces tie, so only reaching the rightmost pieces
//! first keeps the search short.

use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

const N: u32 = 1_000_000_000;

/// More predicate calls than this and the search is walking the 10^18 positions: it stops with
/// a panic instead of running for hours. With one-job steals a release build on the development
/// VM made 8 thousand to 10 million calls; with thieves that took half the victim's deque, the
/// release build did not end within 20 s and a debug build overflowed a worker's stack.
const CALLS_BOUND: u64 = 500_000_000;

#[test]
fn find_last_over_nested_flat_maps_reaches_the_last_position_early() {
    let calls = AtomicU64::new(0);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let last = pool.install(|| {
        (0..N)
            .into_par_iter()
            .with_max_len(1_000)
            .map(|i| u64::from(i) * u64::from(N))
            .flat_map(|i| {
                (0..N)
                    .into_par_iter()
                    .with_max_len(1_000)
                    .map(move |j| i + u64::from(j))
            })
            .find_last(|_| {
                let n = calls.fetch_add(1, Ordering::Relaxed);
                assert!(
                    n < CALLS_BOUND,
                    "find_last called its predicate {n} times without reaching the last of 10^18 positions"
                );
                true
            })
    });
    assert_eq!(last, Some(u64::from(N) * u64::from(N) - 1));
}
