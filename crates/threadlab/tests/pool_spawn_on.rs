//! Work addressed to one worker (`Pool::spawn_on`, `Pool::install_on`): it runs there, exactly
//! once, even when the worker is parked, and the bad index is an error value.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};
use threadlab::Pool;

const WATCHDOG: Duration = Duration::from_secs(60);

fn pool(n: usize) -> Pool {
    Pool::builder().threads(n).build().unwrap()
}

#[test]
fn spawn_on_runs_on_that_worker_every_time() {
    let n = 3;
    let pool = pool(n);
    let tasks = if cfg!(miri) { 30 } else { 3000 };
    let ran = Arc::new((0..tasks).map(|_| AtomicUsize::new(0)).collect::<Vec<_>>());
    let (tx, rx) = mpsc::channel();
    for t in 0..tasks {
        let (ran, tx) = (ran.clone(), tx.clone());
        pool.spawn_on(t % n, move || {
            ran[t].fetch_add(1, Relaxed);
            tx.send((t, threadlab::current_thread_index())).unwrap();
        })
        .unwrap();
    }
    for _ in 0..tasks {
        let (t, w) = rx.recv_timeout(WATCHDOG).expect("a task never ran");
        assert_eq!(w, Some(t % n), "task {t} ran on the wrong worker");
    }
    assert!(ran.iter().all(|r| r.load(Relaxed) == 1), "each task once");
}

#[test]
fn spawn_on_from_a_worker_to_another() {
    let pool = Arc::new(pool(2));
    let (tx, rx) = mpsc::channel();
    let p = pool.clone();
    // Under Miri 20 jobs (100 natively): enough for the inbox's queue to grow several times.
    let jobs = if cfg!(miri) { 20 } else { 100 };
    pool.spawn_on(0, move || {
        for _ in 0..jobs {
            let tx = tx.clone();
            p.spawn_on(1, move || {
                tx.send(threadlab::current_thread_index()).unwrap()
            })
            .unwrap();
        }
    })
    .unwrap();
    for _ in 0..jobs {
        assert_eq!(rx.recv_timeout(WATCHDOG).unwrap(), Some(1));
    }
}

#[test]
fn a_parked_worker_is_woken_for_its_inbox() {
    let pool = pool(3);
    // Under Miri 3 rounds: each worker woken once from its park, the same path every time.
    for round in 0..if cfg!(miri) { 3 } else { 20 } {
        // Wait until every worker is parked, then address one of them.
        let deadline = Instant::now() + WATCHDOG;
        while !pool.metrics().all_parked() {
            assert!(Instant::now() < deadline, "workers never parked");
            std::thread::sleep(Duration::from_millis(1));
        }
        let (tx, rx) = mpsc::channel();
        let target = round % 3;
        pool.spawn_on(target, move || {
            tx.send(threadlab::current_thread_index()).unwrap()
        })
        .unwrap();
        let got = rx
            .recv_timeout(WATCHDOG)
            .unwrap_or_else(|_| panic!("round {round}: worker {target} was never woken"));
        assert_eq!(got, Some(target));
    }
}

#[test]
fn install_on_returns_the_value_from_every_kind_of_caller() {
    let pool = Arc::new(pool(3));
    // From outside any pool.
    for w in 0..3 {
        assert_eq!(
            pool.install_on(w, threadlab::current_thread_index),
            Ok(Some(w))
        );
    }
    // From the target itself (inline) and from another worker of the pool.
    let p = pool.clone();
    let got = pool
        .install_on(2, move || {
            let inline = p.install_on(2, threadlab::current_thread_index).unwrap();
            let other = p.install_on(0, threadlab::current_thread_index).unwrap();
            (inline, other)
        })
        .unwrap();
    assert_eq!(got, (Some(2), Some(0)));
    // From a worker of another pool.
    let other = self::pool(2);
    let p = pool.clone();
    let got = other.install(move || p.install_on(1, threadlab::current_thread_index).unwrap());
    assert_eq!(got, Some(1));
    // Borrowing from the caller.
    let v = [1, 2, 3];
    assert_eq!(pool.install_on(1, || v.iter().sum::<i32>()), Ok(6));
}

#[test]
fn install_on_re_raises_and_spawn_on_reports_panics() {
    let pool = Pool::builder()
        .threads(2)
        .panic_handler(|_| {})
        .build()
        .unwrap();
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pool.install_on(1, || panic!("boom on 1"))
    }));
    assert_eq!(
        caught.unwrap_err().downcast_ref::<&str>(),
        Some(&"boom on 1")
    );
    pool.spawn_on(0, || panic!("fire and forget")).unwrap();
    let report = pool.shutdown();
    assert_eq!(report.panicked_tasks, 1);
}

#[test]
fn a_bad_worker_index_is_an_error_value() {
    let pool = pool(2);
    let err = pool.spawn_on(2, || {}).unwrap_err();
    assert_eq!((err.index(), err.threads()), (2, 2));
    assert!(err.to_string().contains("0..=1"), "{err}");
    let err = pool.install_on(usize::MAX, || ()).unwrap_err();
    assert!(err.to_string().contains("no worker"), "{err}");
}

#[test]
fn queued_inbox_work_runs_before_shutdown() {
    let pool = pool(2);
    let ran = Arc::new(AtomicUsize::new(0));
    // Worker 1 is busy while its inbox fills up; shutting the pool down must still run
    // everything.
    pool.spawn_on(1, || std::thread::sleep(Duration::from_millis(50)))
        .unwrap();
    for _ in 0..100 {
        let ran = ran.clone();
        pool.spawn_on(1, move || {
            assert_eq!(threadlab::current_thread_index(), Some(1));
            ran.fetch_add(1, Relaxed);
        })
        .unwrap();
    }
    pool.shutdown();
    assert_eq!(ran.load(Relaxed), 100);
}

/// One task hops from worker to worker through their inboxes, pausing a varying few microseconds
/// before each hop so the next target is caught spinning, going to sleep, or parked. A lost
/// wake-up would stall the chain for good (nobody else may take an inbox's job).
#[test]
fn a_chain_of_hops_between_workers_never_stalls() {
    let n = 3;
    let pool = Arc::new(pool(n));
    let hops = if cfg!(miri) { 20 } else { 30_000 };
    let (tx, rx) = mpsc::channel();

    fn hop(pool: Arc<Pool>, left: usize, seed: u64, tx: mpsc::Sender<usize>) {
        let here = threadlab::current_thread_index().unwrap();
        if left == 0 {
            tx.send(here).unwrap();
            return;
        }
        // xorshift64: a pause of 0..64 µs, and the next worker (never this one).
        let mut x = seed;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let pause = Duration::from_micros(x % 64);
        let t = Instant::now();
        while t.elapsed() < pause {
            std::hint::spin_loop();
        }
        let n = pool.current_num_threads();
        let next = (here + 1 + (x >> 8) as usize % (n - 1)) % n;
        let p = pool.clone();
        pool.spawn_on(next, move || {
            assert_eq!(threadlab::current_thread_index(), Some(next));
            hop(p, left - 1, x, tx)
        })
        .unwrap();
    }

    let p = pool.clone();
    pool.spawn_on(0, move || hop(p, hops, 0x9E37_79B9_7F4A_7C15, tx))
        .unwrap();
    rx.recv_timeout(WATCHDOG)
        .expect("the chain of hops stalled: a worker slept with a job in its inbox");
}
