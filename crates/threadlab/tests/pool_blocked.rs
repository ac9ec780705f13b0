//! Workers blocked outside threadlab: every worker sits inside a task that waits in the kernel
//! (a `std::sync::Barrier`, a blocking receive) for work queued behind it. The pool's monitor
//! starts a spare thread that runs that work, so each program below finishes (under the
//! watchdog) instead of hanging; past the bound on spare threads the monitor says why the pool
//! is stuck. Linux (the monitor reads procfs), not under Miri (which has no procfs and runs no
//! monitor: `pool_blocking` has the tests of `threadlab::blocking`, which needs none).
#![cfg(all(target_os = "linux", not(miri)))]

mod pool_support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Barrier};
use std::time::{Duration, Instant};

use pool_support::{barrier_needing_a_spare, watchdog, watched_pool};
use threadlab::Pool;

#[test]
fn a_barrier_with_more_parties_than_workers_completes() {
    watched_pool(2, |pool| {
        let barrier = Arc::new(Barrier::new(3));
        let passed = Arc::new(AtomicUsize::new(0));
        pool.scope(|s| {
            for _ in 0..3 {
                let (b, p) = (Arc::clone(&barrier), Arc::clone(&passed));
                s.spawn(move |_| {
                    b.wait();
                    p.fetch_add(1, Ordering::SeqCst);
                });
            }
        });
        assert_eq!(passed.load(Ordering::SeqCst), 3);
        assert!(pool.metrics().spare_threads_started >= 1);
        // Two threads of the pool were blocked: a third ran the last party, a spare thread,
        // which counts its task just after the task returned.
        while pool.metrics().spare_tasks_run == 0 {
            std::thread::yield_now();
        }
    });
}

#[test]
fn fire_and_forget_tasks_behind_blocked_workers_run() {
    watchdog(|| {
        // Spawned from a plain thread that then waits outside the pool: no guest, no latch.
        let pool = Pool::builder().threads(2).build().unwrap();
        let barrier = Arc::new(Barrier::new(4));
        let (tx, rx) = mpsc::channel();
        for _ in 0..4 {
            let (b, tx) = (Arc::clone(&barrier), tx.clone());
            pool.spawn(move || {
                b.wait();
                tx.send(()).unwrap();
            });
        }
        for _ in 0..4 {
            rx.recv().unwrap();
        }
        assert!(pool.metrics().spare_threads_started >= 2);
    });
}

#[test]
fn every_worker_receiving_from_a_queued_sender_completes() {
    watched_pool(2, |pool| {
        let (tx, rx) = threadlab::channel::unbounded::<u32>();
        let got = Arc::new(AtomicUsize::new(0));
        let started = Arc::new(AtomicUsize::new(0));
        let (done_tx, done_rx) = mpsc::channel();
        for _ in 0..2 {
            let (rx, got, done) = (rx.clone(), Arc::clone(&got), done_tx.clone());
            let started = Arc::clone(&started);
            pool.spawn(move || {
                started.fetch_add(1, Ordering::SeqCst);
                let v = rx.recv_blocking().unwrap();
                got.fetch_add(v as usize, Ordering::SeqCst);
                done.send(()).unwrap();
            });
        }
        // Queued once both receivers hold the workers.
        while started.load(Ordering::SeqCst) < 2 {
            std::thread::yield_now();
        }
        let sender = tx.clone();
        pool.spawn(move || {
            sender.send_blocking(20).unwrap();
            sender.send_blocking(22).unwrap();
        });
        done_rx.recv().unwrap();
        done_rx.recv().unwrap();
        assert_eq!(got.load(Ordering::SeqCst), 42);
        drop(tx);
    });
}

#[test]
fn an_install_while_every_worker_blocks_completes() {
    watched_pool(2, |pool| {
        let (tx, rx) = mpsc::channel::<u32>();
        let rx = Arc::new(std::sync::Mutex::new(rx));
        let (done_tx, done_rx) = mpsc::channel();
        let started = Arc::new(AtomicUsize::new(0));
        for _ in 0..2 {
            let (rx, done, started) = (Arc::clone(&rx), done_tx.clone(), Arc::clone(&started));
            pool.spawn(move || {
                started.fetch_add(1, Ordering::SeqCst);
                // Each takes one value: the lock is held only for the receive.
                let v = rx.lock().unwrap().recv().unwrap();
                done.send(v).unwrap();
            });
        }
        while started.load(Ordering::SeqCst) < 2 {
            std::thread::yield_now();
        }
        // Both workers block; the install is queued (no worker sleeps to lend its seat).
        let sent = pool.install(move || {
            tx.send(1).unwrap();
            tx.send(2).unwrap();
            2
        });
        assert_eq!(sent, 2);
        let mut got = [done_rx.recv().unwrap(), done_rx.recv().unwrap()];
        got.sort();
        assert_eq!(got, [1, 2]);
    });
}

/// Six tasks on a pool of 2, each busy for `total`: computing in bursts of `burst`, with a sleep
/// of `nap` after each (none if zero). Returns the spare threads the pool started.
fn spares_for_busy_tasks(total: Duration, burst: Duration, nap: Duration) -> u64 {
    let pool = Pool::builder().threads(2).build().unwrap();
    let count = Arc::new(AtomicUsize::new(0));
    pool.scope(|s| {
        for _ in 0..6 {
            let c = Arc::clone(&count);
            s.spawn(move |_| {
                let until = Instant::now() + total;
                let mut x = 0u64;
                while Instant::now() < until {
                    let end = Instant::now() + burst;
                    while Instant::now() < end {
                        x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(1));
                    }
                    if !nap.is_zero() {
                        std::thread::sleep(nap);
                    }
                }
                c.fetch_add(1, Ordering::SeqCst);
            });
        }
    });
    assert_eq!(count.load(Ordering::SeqCst), 6);
    pool.metrics().spare_threads_started
}

#[test]
fn busy_workers_that_do_not_block_get_no_spare_thread() {
    watchdog(|| {
        // Both workers compute for 400 ms per task while more work waits: no task finishes for
        // several monitor ticks, but nobody is blocked in the kernel.
        let ms = Duration::from_millis;
        assert_eq!(spares_for_busy_tasks(ms(400), ms(400), Duration::ZERO), 0);
    });
}

#[test]
fn busy_workers_that_sleep_for_moments_get_no_spare_thread() {
    watchdog(|| {
        // Each task computes for 20 ms, then sleeps for 5, for half a second: the monitor finds
        // its thread asleep at a fifth of its looks, but the thread uses most of a CPU. A spare
        // thread would only compete with it (the pool is not blocked, it is busy).
        let ms = Duration::from_millis;
        assert_eq!(spares_for_busy_tasks(ms(500), ms(20), ms(5)), 0);
    });
}

/// With spare threads turned off, a stuck pool is not silent: the monitor says why, on stderr.
/// Run in a child process (this test binary again, with the stuck program selected by an
/// environment variable), which the test kills once the message is read.
#[test]
fn a_stuck_pool_past_its_bound_says_so() {
    if std::env::var_os("THREADLAB_STUCK_CHILD").is_some() {
        let pool = Pool::builder()
            .threads(2)
            .max_spare_threads(0)
            .build()
            .unwrap();
        barrier_needing_a_spare(&pool);
        unreachable!("the barrier cannot complete on two workers without a spare thread");
    }
    watchdog(|| {
        use std::io::{BufRead, BufReader};
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "a_stuck_pool_past_its_bound_says_so",
                "--nocapture",
            ])
            .env("THREADLAB_STUCK_CHILD", "1")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let mut said = None;
        for line in stderr.lines() {
            let line = line.unwrap();
            if line.contains("is stuck") {
                said = Some(line);
                break;
            }
        }
        child.kill().unwrap();
        child.wait().unwrap();
        let said = said.expect("the stuck child never said why");
        assert!(said.contains("blocked outside threadlab"), "{said}");
        assert!(said.contains("threadlab::blocking"), "{said}");
    });
}

/// While recording, a spare thread's life is a zone on its track that names the seats it stood
/// in for; the tasks it ran are inside it.
#[test]
fn a_recorded_spare_thread_says_which_workers_it_stood_in_for() {
    use threadlab::trace::{EventKind, ARG_SPARE_FOR, SPARE_ZONE};
    watchdog(|| {
        let rec = threadlab::trace::start();
        let pool = Pool::builder().threads(2).build().unwrap();
        let barrier = Arc::new(Barrier::new(3));
        let (tx, rx) = mpsc::channel();
        for _ in 0..3 {
            let (b, tx) = (Arc::clone(&barrier), tx.clone());
            pool.spawn_named("meets-at-barrier", move || {
                b.wait();
                tx.send(()).unwrap();
            });
        }
        for _ in 0..3 {
            rx.recv().unwrap();
        }
        pool.shutdown();
        let trace = rec.stop();
        let mut stood_in_for = Vec::new();
        for t in trace.threads() {
            let kinds: Vec<EventKind> = t.events().iter().map(|e| e.kind).collect();
            for pair in kinds.windows(2) {
                let EventKind::ZoneBegin { name } = pair[0] else {
                    continue;
                };
                if trace.name(name) != SPARE_ZONE {
                    continue;
                }
                let EventKind::Arg { key, value } = pair[1] else {
                    panic!("a spare thread's zone without its argument");
                };
                assert_eq!(trace.name(key), ARG_SPARE_FOR);
                stood_in_for.push(trace.name(value).to_owned());
            }
        }
        assert!(
            !stood_in_for.is_empty(),
            "no spare thread's zone in the recording"
        );
        // Both workers were blocked when the first spare thread started.
        assert_eq!(stood_in_for[0], "0,1");
    });
}

/// The caller of `install` on a one-worker pool runs as the guest of the sleeping worker's seat
/// and blocks in a receive whose sender it queued on that seat: the worker thread stays parked
/// (its seat is lent), and a spare thread runs the sender.
#[test]
fn a_guest_blocked_on_work_it_queued_on_its_seat_completes() {
    watched_pool(1, |pool| {
        // Let the worker go to sleep first, so the install below is a guest.
        while !pool.metrics().all_parked() {
            std::thread::sleep(Duration::from_millis(1));
        }
        let (tx, rx) = mpsc::channel();
        let got = pool.install(move || {
            threadlab::spawn(move || tx.send(9).unwrap());
            rx.recv().unwrap()
        });
        assert_eq!(got, 9);
        assert!(pool.metrics().spare_threads_started >= 1);
    });
}
