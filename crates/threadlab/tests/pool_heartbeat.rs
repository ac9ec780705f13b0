//! Heartbeat promotion (`join` and the loops publish work only when a worker is idle, at beats):
//! results of deep and unbalanced recursions, panics in either half on every path, and that an
//! idle worker gets a share of work that is all inline — checked with counters and hand-shakes
//! between the closures, never with time bounds.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

use threadlab::{join, Pool};

mod pool_support;
use pool_support::{fib, settle, watchdog, watched_pool};

/// An unbalanced recursion: the left side is a chain `depth` long, each link with a small
/// balanced subtree on the right. Returns the number of leaves.
fn comb(depth: u32, right: u64) -> u64 {
    if depth == 0 {
        return 1;
    }
    let (a, b) = join(|| comb(depth - 1, right), || fib(right) + 1);
    a + b
}

#[test]
fn deep_and_unbalanced_recursions_give_the_right_results() {
    for threads in [1, 2, 3] {
        let pool = Pool::builder()
            .threads(threads)
            .stack_size(16 << 20)
            .build()
            .unwrap();
        settle(&pool);
        assert_eq!(pool.install(|| fib(25)), 75_025, "{threads} threads");
        // 2,000 links: deep registered frame lists, promotions deep in the chain.
        let expected = 1 + 2_000 * (fib_serial(8) + 1);
        assert_eq!(
            pool.install(|| comb(2_000, 8)),
            expected,
            "{threads} threads"
        );
        // The same from outside the pool (the global pool's injector) and nested in a loop.
        let sum = AtomicUsize::new(0);
        pool.install(|| {
            threadlab::for_each(0..64, |i| {
                sum.fetch_add(fib(10 + (i % 8) as u64) as usize, Ordering::Relaxed);
            })
        });
        let want: u64 = (0..64).map(|i| fib_serial(10 + (i % 8))).sum();
        assert_eq!(
            sum.load(Ordering::Relaxed) as u64,
            want,
            "{threads} threads"
        );
    }
}

fn fib_serial(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        fib_serial(n - 1) + fib_serial(n - 2)
    }
}

/// Every leaf counts itself; leaf number `bad` panics. Both closures of every join always run,
/// so every leaf runs, on whichever path (inline, registered, promoted, stolen).
fn leaves(n: u32, first: usize, bad: usize, ran: &AtomicUsize) -> usize {
    if n == 0 {
        ran.fetch_add(1, Ordering::Relaxed);
        assert!(first != bad, "leaf {bad} panics");
        return 1;
    }
    let half = 1 << (n - 1);
    let (a, b) = join(
        || leaves(n - 1, first, bad, ran),
        || leaves(n - 1, first + half, bad, ran),
    );
    a + b
}

#[test]
fn a_panic_in_either_half_propagates_after_both_ran_on_every_path() {
    watchdog(|| {
        for threads in [1, 2] {
            let pool = Pool::builder().threads(threads).build().unwrap();
            for bad in [0, 1, 4095, 2048, 12_345] {
                settle(&pool); // idle workers: the registered and promoted paths are taken
                let ran = AtomicUsize::new(0);
                let r = catch_unwind(AssertUnwindSafe(|| {
                    pool.install(|| leaves(14, 0, bad, &ran))
                }));
                let msg = r.expect_err("the panic reaches the caller");
                let msg = msg.downcast_ref::<String>().cloned().unwrap_or_default();
                assert_eq!(msg, format!("leaf {bad} panics"));
                assert_eq!(ran.load(Ordering::Relaxed), 1 << 14, "every leaf ran");
                // The pool keeps working.
                assert_eq!(pool.install(|| fib(15)), 610);
            }
        }
    });
}

#[test]
fn an_idle_worker_gets_part_of_work_that_is_all_inline() {
    watched_pool(2, |pool| {
        settle(&pool);
        let before = pool.metrics();
        // `a` keeps forking fine-grained joins (so it polls) until `b` has started on another
        // worker; `b` is only ever published by a beat. No time bound: it terminates iff the
        // idle worker is handed `b`.
        let b_started = AtomicBool::new(false);
        let on_other_worker = AtomicBool::new(false);
        let me = pool.install(|| {
            let me = threadlab::current_thread_index();
            join(
                || {
                    while !b_started.load(Ordering::Acquire) {
                        std::hint::black_box(fib(12));
                    }
                },
                || {
                    on_other_worker
                        .store(threadlab::current_thread_index() != me, Ordering::Relaxed);
                    b_started.store(true, Ordering::Release);
                },
            );
            me
        });
        assert!(me.is_some());
        assert!(
            on_other_worker.load(Ordering::Relaxed),
            "b ran on the idle worker"
        );
        let after = pool.metrics();
        let promotions: u64 = after.workers.iter().map(|w| w.promotions).sum::<u64>()
            - before.workers.iter().map(|w| w.promotions).sum::<u64>();
        assert!(promotions >= 1, "the busy worker promoted work");
    });
}

#[test]
fn a_coarse_join_is_shared_with_an_idle_worker() {
    // `a` does not fork at all: its join polls once, on entry, and must publish `b` then.
    watched_pool(2, |pool| {
        settle(&pool);
        let (tx, rx) = mpsc::channel::<()>();
        pool.install(|| {
            join(
                move || rx.recv().expect("b signals"), // blocks until b ran elsewhere
                move || tx.send(()).unwrap(),
            )
        });
    });
}

#[test]
fn a_loop_is_split_for_an_idle_worker() {
    watched_pool(2, |pool| {
        settle(&pool);
        // Item 0 waits until some item runs on another worker: that happens only if the loop
        // splits (before item 0) and the idle worker steals the other half.
        let other_ran = AtomicBool::new(false);
        let count = AtomicUsize::new(0);
        let first_worker = pool.install(threadlab::current_thread_index);
        pool.install(|| {
            let me = threadlab::current_thread_index();
            threadlab::for_each(0..1_000, |i| {
                count.fetch_add(1, Ordering::Relaxed);
                if threadlab::current_thread_index() != me {
                    other_ran.store(true, Ordering::Release);
                }
                if i == 0 {
                    while !other_ran.load(Ordering::Acquire) {
                        std::hint::spin_loop();
                    }
                }
            })
        });
        assert!(first_worker.is_some());
        assert_eq!(count.load(Ordering::Relaxed), 1_000);
    });
}

#[test]
fn explicit_grain_covers_every_index_once() {
    let pool = Pool::builder().threads(2).build().unwrap();
    let hits: Vec<AtomicUsize> = (0..10_007).map(|_| AtomicUsize::new(0)).collect();
    for grain in [0, 1, 7, 64, 100_000] {
        pool.install(|| {
            threadlab::for_each_grain(0..hits.len(), grain, |i| {
                hits[i].fetch_add(1, Ordering::Relaxed);
            })
        });
    }
    assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 5));
}
