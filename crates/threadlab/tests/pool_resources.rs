//! Nothing is left behind: after pools are built, used (joins, scopes, spawns, loops, serial
//! queues, work still queued at the end) and shut down or dropped, the process has as many
//! threads as before and as many heap bytes live as before: at once after `shutdown`, and once
//! the dropped pools' threads have finished and exited by themselves. One test in a binary of
//! its own, since both counts are process-wide (a counting global allocator wraps the system
//! one).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use threadlab::{Pool, SerialQueue};

mod pool_support;
use pool_support::{fib, spawn_and_loop};

mod live_bytes;
use live_bytes::LIVE;

#[global_allocator]
static ALLOC: live_bytes::Counting = live_bytes::Counting;

fn threads_now() -> usize {
    std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task")
        .count()
}

/// Builds a pool of `threads` workers, uses it, and ends it with `shutdown` (`join`) or a drop.
fn use_and_end(threads: usize, join: bool) {
    let pool = Pool::builder().threads(threads).build().unwrap();
    assert_eq!(pool.install(|| fib(16)), 987);
    let ran = spawn_and_loop(&pool, 2_000, 1_000);
    let queue = SerialQueue::new(&pool);
    let queued = Arc::new(AtomicUsize::new(0));
    for _ in 0..100 {
        let q = Arc::clone(&queued);
        queue.push(move || {
            q.fetch_add(1, Ordering::Relaxed);
        });
    }
    // Work still queued when the pool ends: its workers run it first.
    for _ in 0..500 {
        let q = Arc::clone(&queued);
        pool.spawn(move || {
            q.fetch_add(1, Ordering::Relaxed);
        });
    }
    drop(queue);
    assert_eq!(ran, 3_000);
    if join {
        pool.shutdown();
        assert_eq!(
            queued.load(Ordering::Relaxed),
            600,
            "queued work ran before the shutdown returned"
        );
    } else {
        drop(pool);
        until("the queued work ran after the drop", || {
            queued.load(Ordering::Relaxed) == 600
        });
    }
}

/// Waits until `done()` holds (the threads of dropped pools finish on their own), failing with
/// `what` after 60 s.
fn until(what: &str, done: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !done() {
        assert!(std::time::Instant::now() < deadline, "never: {what}");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

#[test]
fn ended_pools_leave_no_thread_and_no_memory_behind() {
    // Warm up once: lazily initialised statics (thread-local keys, std's own) are not leaks.
    use_and_end(2, true);
    let threads_before = threads_now();
    let bytes_before = LIVE.load(Ordering::Relaxed);
    for round in 0..30 {
        use_and_end(1 + round % 4, true);
    }
    assert_eq!(threads_now(), threads_before, "worker threads left running");
    let leaked = LIVE.load(Ordering::Relaxed) as isize - bytes_before as isize;
    assert_eq!(
        leaked, 0,
        "{leaked} heap bytes still live after 30 pools were shut down"
    );
    for round in 0..30 {
        use_and_end(1 + round % 4, false);
    }
    until("the dropped pools' threads exit", || {
        threads_now() == threads_before
    });
    until("the dropped pools' memory is freed", || {
        LIVE.load(Ordering::Relaxed) == bytes_before
    });
}
