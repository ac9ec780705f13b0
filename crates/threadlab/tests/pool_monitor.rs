//! The monitor of a pool (the thread that starts spare threads for blocked workers) costs an
//! idle pool nothing: it stops waking once every worker has been parked for its quiet ticks,
//! and an elastic pool's monitor exits then, so a fully retired pool keeps no thread; the next
//! work starts it again, and it still stands in for blocked workers. One test in this binary,
//! so that no other pool's monitor runs meanwhile. Linux (procfs), not under Miri (no monitor).
#![cfg(all(target_os = "linux", not(miri)))]

mod pool_support;

use std::time::{Duration, Instant};

use pool_support::{barrier_needing_a_spare, fib, settle, watchdog};
use threadlab::Pool;

/// The OS ids of the monitor threads of this process, with how often each has woken
/// (`voluntary_ctxt_switches`).
fn monitors() -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc/self/task").unwrap() {
        let path = entry.unwrap().path();
        let Ok(comm) = std::fs::read_to_string(path.join("comm")) else {
            continue;
        };
        // The kernel keeps 15 bytes of a thread's name.
        if !"threadlab-monitor".starts_with(comm.trim()) || comm.trim().len() < 15 {
            continue;
        }
        let tid = path.file_name().unwrap().to_str().unwrap().parse().unwrap();
        let status = std::fs::read_to_string(path.join("status")).unwrap_or_default();
        for line in status.lines() {
            if let Some(v) = line.strip_prefix("voluntary_ctxt_switches:") {
                out.push((tid, v.trim().parse().unwrap()));
            }
        }
    }
    out
}

/// Waits (at most 60 s) until `done()`.
fn wait_for(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "never: {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn an_idle_pools_monitor_stops_waking_and_an_elastic_pools_exits() {
    watchdog(|| {
        // A fixed pool: its monitor sleeps for good after the quiet ticks (20 × 50 ms), then
        // does not wake while the pool stays idle.
        let pool = Pool::builder().threads(2).build().unwrap();
        assert_eq!(pool.install(|| fib(15)), 610);
        settle(&pool);
        std::thread::sleep(Duration::from_millis(1_500));
        let before = monitors();
        assert_eq!(before.len(), 1, "one pool, one monitor: {before:?}");
        std::thread::sleep(Duration::from_millis(500));
        assert_eq!(monitors(), before, "the idle pool's monitor woke");
        // Work wakes it: a barrier that needs a spare thread completes.
        barrier_needing_a_spare(&pool);
        assert!(pool.metrics().spare_threads_started >= 1);
        pool.shutdown();
        assert!(
            monitors().is_empty(),
            "a shut-down pool's monitor is joined"
        );

        // An elastic pool whose workers all retired keeps no thread, its monitor included.
        let pool = Pool::builder()
            .threads(2)
            .keep_alive(Duration::from_millis(20))
            .build()
            .unwrap();
        assert_eq!(pool.install(|| fib(15)), 610);
        wait_for("the workers retire", || pool.metrics().alive_threads() == 0);
        wait_for("the monitor exits", || monitors().is_empty());
        // The next work starts it again, and it still stands in for blocked workers.
        let started = pool.metrics().spare_threads_started;
        barrier_needing_a_spare(&pool);
        assert!(pool.metrics().spare_threads_started > started);
        wait_for("the monitor exits again", || monitors().is_empty());
        drop(pool);
    });
}
