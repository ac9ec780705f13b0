//! Promises that held when the runtime was tried as a hostile new user would, and must keep
//! holding: many pools at once, deep cycles of `install` across pools, a blocked channel end
//! whose other end is dropped, and sort comparators that are no order at all. Each sized down
//! under Miri.

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;

use threadlab::Pool;

mod pool_support;
use pool_support::{fib, watchdog, watched_pool};

/// 64 pools of 8 workers, all alive and all working at once (512 threads plus the callers):
/// each computes its share, nothing hangs, and every thread is joined when they shut down.
#[test]
fn sixty_four_pools_of_eight_workers_at_once() {
    let (pools, workers) = if cfg!(miri) { (3, 2) } else { (64, 8) };
    watchdog(move || {
        let pools: Vec<Arc<Pool>> = (0..pools)
            .map(|_| Arc::new(Pool::builder().threads(workers).build().unwrap()))
            .collect();
        let callers: Vec<_> = pools
            .iter()
            .map(|p| {
                let p = Arc::clone(p);
                std::thread::spawn(move || p.install(|| fib(if cfg!(miri) { 6 } else { 18 })))
            })
            .collect();
        for c in callers {
            assert_eq!(c.join().unwrap(), if cfg!(miri) { 8 } else { 2584 });
        }
        for p in &pools {
            assert_eq!(p.current_num_threads(), workers);
        }
        for p in pools {
            Arc::into_inner(p)
                .expect("no caller holds a pool")
                .shutdown();
        }
    });
}

/// `install` from a worker of one pool into the next, round a cycle of three pools, 10,000
/// levels deep: each waiting worker keeps running its own pool's work (the next level that came
/// back round to it), so the cycle neither deadlocks nor needs a thread per level. The workers
/// get big stacks: each level waits on a frame of the last one (`stack_size` only keeps work
/// from outside on the workers, which is all the test does anyway).
#[test]
fn install_cycles_across_pools_ten_thousand_deep() {
    let depth = if cfg!(miri) { 12 } else { 10_000 };
    watchdog(move || {
        let pools: Arc<Vec<Pool>> = Arc::new(
            (0..3)
                .map(|_| {
                    Pool::builder()
                        .threads(2)
                        .stack_size(256 << 20)
                        .build()
                        .unwrap()
                })
                .collect(),
        );
        fn level(pools: &Arc<Vec<Pool>>, d: usize, depth: usize) -> usize {
            if d == depth {
                return d;
            }
            let p = Arc::clone(pools);
            pools[d % 3].install(move || level(&p, d + 1, depth))
        }
        assert_eq!(level(&pools, 0, depth), depth);
    });
}

/// A receiver blocked in `recv_blocking` (on a plain thread, and inside a pool task) whose
/// senders are all dropped by another thread learns of it and returns; a sender blocked in
/// `send_blocking` on a full channel whose receiver is dropped gets its value back.
#[test]
fn blocked_channel_ends_learn_that_the_other_end_was_dropped() {
    watched_pool(2, |pool| {
        for on_pool in [false, true] {
            let (tx, rx) = threadlab::channel::bounded::<u64>(1);
            let (done_tx, done_rx) = std::sync::mpsc::channel();
            let waiting = Arc::new(AtomicUsize::new(0));
            let w = Arc::clone(&waiting);
            let wait = move || {
                w.store(1, SeqCst);
                done_tx.send(rx.recv_blocking().is_err()).unwrap();
            };
            if on_pool {
                pool.spawn(wait);
            } else {
                std::thread::spawn(wait);
            }
            while waiting.load(SeqCst) == 0 {
                std::thread::yield_now();
            }
            // Dropped whether or not the receiver is already asleep: it must return either way.
            drop(tx);
            assert!(
                done_rx.recv().unwrap(),
                "the receiver got a value from nobody"
            );

            let (tx, rx) = threadlab::channel::bounded::<u64>(1);
            tx.send_blocking(1).unwrap(); // full
            let sender = std::thread::spawn(move || tx.send_blocking(2));
            drop(rx);
            match sender.join().unwrap() {
                Err(e) => assert_eq!(e.into_inner(), 2),
                Ok(()) => panic!("the value went to a dropped receiver"),
            }
        }
    });
}

/// Comparators that are no order (random answers, always `Less`, always `Greater`) in both
/// parallel sorts: the sort returns or panics (as `slice::sort` may: "Panics ... if the
/// implementation of Ord is not total"), and every element is still in the slice exactly once
/// (drop counted: nothing lost, duplicated or dropped twice).
#[test]
fn sorts_with_comparators_that_are_no_order_keep_every_element_once() {
    use std::cmp::Ordering;
    use threadlab::prelude::*;

    static DROPS: AtomicUsize = AtomicUsize::new(0);
    struct Item(u64);
    impl Drop for Item {
        fn drop(&mut self) {
            DROPS.fetch_add(1, SeqCst);
        }
    }
    let n = if cfg!(miri) { 200 } else { 50_000 };
    watchdog(move || {
        let pool = Pool::builder().threads(2).build().unwrap();
        let state = AtomicUsize::new(0x9E37_79B9);
        let random = |_: &Item, _: &Item| {
            // A shared xorshift: a different answer each call, from whichever worker asks.
            let mut x = state.load(SeqCst);
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            state.store(x, SeqCst);
            [Ordering::Less, Ordering::Equal, Ordering::Greater][x % 3]
        };
        type Compare<'a> = &'a (dyn Fn(&Item, &Item) -> Ordering + Sync);
        let comparators: [Compare; 3] =
            [&random, &|_, _| Ordering::Less, &|_, _| Ordering::Greater];
        for (c, compare) in comparators.iter().enumerate() {
            for stable in [true, false] {
                let mut v: Vec<Item> = (0..n as u64).map(Item).collect();
                let drops = DROPS.load(SeqCst);
                // It may return, or panic as `slice::sort` does when it notices that the
                // comparator is no total order; either way the elements stay.
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    pool.install(|| {
                        if stable {
                            v.par_sort_by(|a, b| compare(a, b));
                        } else {
                            v.par_sort_unstable_by(|a, b| compare(a, b));
                        }
                    })
                }));
                assert_eq!(
                    DROPS.load(SeqCst),
                    drops,
                    "comparator {c}: dropped while sorting"
                );
                let mut seen: Vec<u64> = v.iter().map(|i| i.0).collect();
                seen.sort_unstable();
                assert!(
                    seen.iter().copied().eq(0..n as u64),
                    "comparator {c}, stable {stable}: an element was lost or duplicated"
                );
                drop(v);
                assert_eq!(DROPS.load(SeqCst), drops + n, "comparator {c}");
            }
        }
    });
}
