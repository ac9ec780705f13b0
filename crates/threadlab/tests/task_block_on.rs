//! `block_on` and `JoinHandle::join` inside workers never deadlock: the blocked worker runs the
//! pool's other work while it waits.

mod task_support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use task_support::{watchdog, watched_pool, yield_times};
use threadlab::Pool;

#[test]
fn block_on_inside_the_only_worker_does_not_deadlock() {
    watched_pool(1, |pool| {
        let v = pool.install(|| {
            // The only worker blocks on a future that waits for a task of the same pool.
            threadlab::block_on(async {
                let h = threadlab::spawn_future(async {
                    yield_times(3).await;
                    40
                });
                h.await + 2
            })
        });
        assert_eq!(v, 42);
    });
}

#[test]
fn tasks_that_join_other_tasks_do_not_deadlock() {
    watchdog(|| {
        for threads in [1, 2] {
            let pool = Pool::builder().threads(threads).build().unwrap();
            let done = Arc::new(AtomicUsize::new(0));
            let handles: Vec<_> = (0..20)
                .map(|i| {
                    let done = Arc::clone(&done);
                    pool.spawn_future(async move {
                        // Blocks inside a poll: the worker keeps running other tasks meanwhile.
                        let inner = threadlab::spawn_future(async move {
                            yield_times(2).await;
                            i * 2
                        });
                        let v = inner.join();
                        done.fetch_add(1, Ordering::Relaxed);
                        v
                    })
                })
                .collect();
            let sum: usize = handles.into_iter().map(|h| h.join()).sum();
            assert_eq!(sum, (0..20).map(|i| i * 2).sum::<usize>());
            assert_eq!(done.load(Ordering::Relaxed), 20);
        }
    });
}

#[test]
fn nested_block_on_and_pool_block_on_from_a_plain_thread() {
    watched_pool(2, |pool| {
        let v = pool.block_on(async {
            let a = threadlab::spawn_future(async { threadlab::block_on(async { 1 }) + 1 });
            let b = threadlab::spawn_future(async {
                threadlab::block_on(threadlab::spawn_future(async { 3 }))
            });
            a.await + b.await
        });
        assert_eq!(v, 5);
        // Inside `Pool::block_on`, the free functions use that pool.
        let index = pool.block_on(async { threadlab::current_thread_index() });
        assert!(index.is_some_and(|i| i < 2));
    });
}

#[test]
fn block_on_from_a_plain_thread_uses_the_thread() {
    let v = threadlab::block_on(async {
        yield_times(2).await;
        threadlab::current_thread_index()
    });
    assert_eq!(v, None, "polled on this thread, not a worker");
}
