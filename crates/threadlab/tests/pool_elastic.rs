//! The elastic pool (`Builder::keep_alive`): idle workers' threads exit, and every way work
//! reaches a pool starts them again, losing no task. Each test counts (tasks run, threads
//! alive, starts and retirements) and runs under the deadlock watchdog: a lost wake-up of a
//! retired worker shows up as a hang there.

mod pool_support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use pool_support::{counting_panics, watchdog};
use threadlab::{Pool, SerialQueue};

/// Short, so the tests do not wait long for retirements.
const KEEP: Duration = Duration::from_millis(if cfg!(miri) { 1 } else { 20 });

fn elastic(threads: usize, keep: Duration) -> Pool {
    Pool::builder()
        .threads(threads)
        .keep_alive(keep)
        .build()
        .unwrap()
}

/// Waits until every worker of `pool` has retired (no thread alive), failing after 60 s.
fn until_retired(pool: &Pool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while pool.metrics().alive_threads() > 0 {
        assert!(Instant::now() < deadline, "workers never retired");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The OS threads of this process whose ids are the pool's workers' last threads
/// (`/proc/self/task`).
#[cfg(all(target_os = "linux", not(miri)))]
fn workers_in_proc(pool: &Pool) -> usize {
    let tids: Vec<u64> = pool.metrics().workers.iter().map(|w| w.os_tid).collect();
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u64>().ok())
        .filter(|t| tids.contains(t))
        .count()
}

#[test]
fn threads_exit_when_idle_and_come_back() {
    watchdog(|| {
        let pool = elastic(2, KEEP);
        let ran = Arc::new(AtomicUsize::new(0));
        // Under Miri 20 spawns a round (100 natively): each round still starts retired workers
        // again, runs them dry and waits for every one to retire.
        let per = if cfg!(miri) { 20 } else { 100 };
        for round in 1..=3 {
            for _ in 0..per {
                let ran = Arc::clone(&ran);
                pool.spawn(move || {
                    ran.fetch_add(1, Ordering::SeqCst);
                });
            }
            until_retired(&pool);
            assert_eq!(ran.load(Ordering::SeqCst), per * round);
            let m = pool.metrics();
            assert_eq!(m.alive_threads(), 0);
            assert_eq!(m.tasks_run(), (per * round) as u64);
            for w in &m.workers {
                // One start per retirement, plus the first start.
                assert_eq!(w.starts, w.retirements, "worker {}", w.index);
                assert!(w.retirements >= 1);
            }
            #[cfg(all(target_os = "linux", not(miri)))]
            {
                // The threads are gone from the OS too, not only from the metric (the metric
                // drops a moment before the thread returns).
                let deadline = Instant::now() + Duration::from_secs(60);
                while workers_in_proc(&pool) > 0 {
                    assert!(Instant::now() < deadline, "retired threads still listed");
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        }
        let report = pool.shutdown();
        assert_eq!(report.tasks_run, 3 * per as u64);
        assert_eq!(report.panicked_tasks, 0);
    });
}

/// A spawn right as the last worker retires: with a zero keep-alive every idle moment is a
/// retirement, and the spawns come at varying delays after the previous task ran.
#[test]
fn spawn_as_the_last_worker_retires() {
    watchdog(|| {
        // Under Miri 15 rounds whose delays grow in steps of 80 spins: the same span of delays
        // (0 to 1,120 spins) as 30 rounds in steps of 40, each of its paths still reached.
        let (rounds, step) = if cfg!(miri) { (15, 80) } else { (1_000, 40) };
        for threads in [1, 2] {
            let pool = elastic(threads, Duration::ZERO);
            let ran = Arc::new(AtomicUsize::new(0));
            for round in 0..rounds {
                let r = Arc::clone(&ran);
                pool.spawn(move || {
                    r.fetch_add(1, Ordering::SeqCst);
                });
                while ran.load(Ordering::SeqCst) <= round {
                    std::hint::spin_loop();
                }
                // 0 to ~40 µs: before, during and after the worker's spin and retirement.
                for _ in 0..(round % 64) * step {
                    std::hint::spin_loop();
                }
            }
            let report = pool.shutdown();
            assert_eq!(report.tasks_run, rounds as u64);
            assert_eq!(ran.load(Ordering::SeqCst), rounds);
        }
    });
}

#[test]
fn install_and_scope_on_a_retired_pool() {
    watchdog(|| {
        let pool = elastic(2, KEEP);
        until_retired(&pool);
        assert_eq!(pool.install(|| pool_support::fib(15)), 610);
        until_retired(&pool);
        let mut parts = [0u64; 8];
        pool.scope(|s| {
            for (i, p) in parts.iter_mut().enumerate() {
                s.spawn(move |_| *p = i as u64 * 10);
            }
        });
        assert_eq!(parts.iter().sum::<u64>(), 280);
        until_retired(&pool);
        // A join inside an install: both halves run, on one worker or two.
        let (a, b) = pool.install(|| threadlab::join(|| 1, || 2));
        assert_eq!((a, b), (1, 2));
        pool.shutdown();
    });
}

#[test]
fn spawn_on_and_install_on_a_retired_worker() {
    watchdog(|| {
        let pool = elastic(2, KEEP);
        for w in 0..2 {
            until_retired(&pool);
            assert_eq!(
                pool.install_on(w, threadlab::current_thread_index).unwrap(),
                Some(w)
            );
            until_retired(&pool);
            let (tx, rx) = mpsc::channel();
            pool.spawn_on(w, move || {
                tx.send(threadlab::current_thread_index()).unwrap()
            })
            .unwrap();
            assert_eq!(rx.recv().unwrap(), Some(w));
        }
        pool.shutdown();
    });
}

#[test]
fn futures_woken_on_a_retired_pool() {
    watchdog(|| {
        let pool = elastic(2, KEEP);
        until_retired(&pool);
        assert_eq!(pool.block_on(async { 6 * 7 }), 42);
        // A task parked on a channel while every worker retires, woken from outside.
        let (tx, rx) = threadlab::channel::bounded::<u32>(1);
        let handle = pool.spawn_future(async move { rx.recv().await.unwrap() + 1 });
        until_retired(&pool);
        tx.send_blocking(41).unwrap();
        assert_eq!(pool.block_on(handle), 42);
        // A task woken by another task after both sides' workers retired.
        let (tx, rx) = threadlab::channel::bounded::<u32>(0);
        let receiver = pool.spawn_future(async move { rx.recv().await.unwrap() });
        until_retired(&pool);
        let sender = pool.spawn_future(async move { tx.send(7).await.unwrap() });
        pool.block_on(sender);
        assert_eq!(pool.block_on(receiver), 7);
        pool.shutdown();
    });
}

#[test]
fn serial_queue_and_pipeline_on_a_retired_pool() {
    watchdog(|| {
        let pool = elastic(2, KEEP);
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        let queue = SerialQueue::new(&pool);
        for burst in 0..3 {
            until_retired(&pool);
            for i in 0..10 {
                let order = Arc::clone(&order);
                queue.push(move || order.lock().unwrap().push(burst * 10 + i));
            }
            let (tx, rx) = mpsc::channel();
            queue.push(move || tx.send(()).unwrap());
            rx.recv().unwrap();
        }
        assert_eq!(*order.lock().unwrap(), (0..30).collect::<Vec<_>>());
        until_retired(&pool);
        let mut next = 0u64;
        let sum = Arc::new(AtomicUsize::new(0));
        let s = Arc::clone(&sum);
        let report = threadlab::Pipeline::new("source", 4, move || {
            next += 1;
            (next <= 100).then_some(next)
        })
        .parallel("square", |x| x * x)
        .serial_in_order("sum", move |x| {
            s.fetch_add(x as usize, Ordering::SeqCst);
        })
        .run_on(&pool);
        let _ = report;
        assert_eq!(sum.load(Ordering::SeqCst), 338_350);
        pool.shutdown();
    });
}

#[test]
fn shutdown_and_drop_of_a_retired_pool() {
    watchdog(|| {
        let (panics, pool) = counting_panics(Pool::builder().threads(3).keep_alive(KEEP));
        for i in 0..30 {
            pool.spawn(move || {
                if i % 10 == 0 {
                    panic!("planned");
                }
            });
        }
        until_retired(&pool);
        let report = pool.shutdown();
        assert_eq!(report.tasks_run, 30);
        assert_eq!(report.panicked_tasks, 3);
        assert_eq!(panics.load(Ordering::SeqCst), 3);

        // Dropped while retired, with work mailed to a retired worker just before.
        let pool = elastic(2, KEEP);
        until_retired(&pool);
        let ran = Arc::new(AtomicUsize::new(0));
        let r = Arc::clone(&ran);
        pool.spawn_on(1, move || {
            r.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
        pool.shutdown();
        assert_eq!(ran.load(Ordering::SeqCst), 1);

        // Shut down while retired with nothing queued: every worker is started and joined.
        let pool = elastic(2, KEEP);
        until_retired(&pool);
        pool.shutdown();

        // Dropped while retired: the drop returns, the workers start, find nothing and exit.
        let pool = elastic(2, KEEP);
        until_retired(&pool);
        drop(pool);
    });
}

/// A future woken after its elastic pool was shut down is cancelled, as with a fixed pool.
#[test]
fn wake_after_drop_of_a_retired_pool_cancels() {
    watchdog(|| {
        let pool = elastic(1, KEEP);
        let (tx, rx) = threadlab::channel::bounded::<u32>(1);
        let handle = pool.spawn_future(async move { rx.recv().await.ok() });
        until_retired(&pool);
        pool.shutdown();
        let _ = tx.send_blocking(1);
        let joined =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| threadlab::block_on(handle)));
        // Either it ran before the pool's shutdown ended (it could not: the worker had no
        // message then) or it was cancelled.
        assert!(joined.is_err(), "a task of a dropped pool ran");
    });
}

/// `install` from several plain threads on a 1-worker pool whose worker retires at every idle
/// moment: each caller borrows the sleeping worker's seat as a guest or queues its closure, and
/// a guest that hands the seat back must not read the seat's state (on the worker's stack)
/// after that: the worker may wake, run a queued install, retire and exit at once. Every
/// install must run exactly once, and the process must not crash.
#[test]
fn installs_from_plain_threads_while_the_worker_retires() {
    watchdog(|| {
        let callers = 4;
        let rounds = if cfg!(miri) { 20 } else { 100_000 };
        let pool = Arc::new(elastic(1, Duration::ZERO));
        let ran = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..callers)
            .map(|_| {
                let pool = Arc::clone(&pool);
                let ran = Arc::clone(&ran);
                std::thread::spawn(move || {
                    for _ in 0..rounds {
                        pool.install(|| {
                            ran.fetch_add(1, Ordering::SeqCst);
                        });
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(ran.load(Ordering::SeqCst), callers * rounds);
    });
}
