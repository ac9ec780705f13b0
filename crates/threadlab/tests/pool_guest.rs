//! `install`, `join` and `scope` from a thread outside the pool run on the calling thread as the
//! guest of a sleeping worker's seat (`pool::worker::run_as_guest`), and fall back to injecting
//! the work when no worker sleeps. These tests count and compare; none times anything.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::ThreadId;

use threadlab::Pool;

mod pool_support;
use pool_support::{fib, on_one_and_two_workers, settle, watchdog, watched_pool};

fn me() -> ThreadId {
    std::thread::current().id()
}

/// With every worker parked, an install runs on the calling thread, with a worker's index.
#[test]
fn an_install_from_outside_runs_on_the_caller_as_a_guest() {
    on_one_and_two_workers(|threads, pool| {
        settle(&pool);
        let caller = me();
        // Under Miri fib(12), 232 joins instead of fib(20)'s 10,945: still a nest of joins run on
        // the guest, with the other worker free to take halves.
        let (n, fib_n) = if cfg!(miri) { (12, 144) } else { (20, 6765) };
        let (tid, index, sum) = pool.install(|| (me(), threadlab::current_thread_index(), fib(n)));
        assert_eq!(tid, caller, "{threads} workers: ran on the caller");
        assert!(
            index.is_some_and(|i| i < threads),
            "a seat's index: {index:?}"
        );
        assert_eq!(sum, fib_n);
    });
}

/// A nested install (and join and scope) from a guest runs inline on the guest; the seat is
/// given back once, at the outer install's end: afterwards every worker is usable.
#[test]
fn nested_install_from_a_guest() {
    watched_pool(2, |pool| {
        settle(&pool);
        let caller = me();
        let count = AtomicUsize::new(0);
        let r = pool.install(|| {
            let inner = pool.install(|| {
                assert_eq!(me(), caller, "a nested install stays on the guest");
                pool.scope(|s| {
                    for _ in 0..100 {
                        s.spawn(|_| {
                            count.fetch_add(1, Ordering::Relaxed);
                        });
                    }
                });
                threadlab::join(|| fib(15), || fib(16))
            });
            inner.0 + inner.1
        });
        assert_eq!(r, 610 + 987);
        assert_eq!(count.load(Ordering::Relaxed), 100);
        for w in 0..2 {
            assert_eq!(
                pool.install_on(w, threadlab::current_thread_index),
                Ok(Some(w))
            );
        }
        // And the next install from outside is a guest again.
        settle(&pool);
        assert_eq!(pool.install(me), caller);
    });
}

/// A guest whose closure panics (directly, and inside a join whose second half another worker
/// may have taken) re-raises the panic; the seat is given back and the pool keeps working, on
/// every worker, for guests and for work from its workers.
#[test]
fn a_guest_that_panics() {
    on_one_and_two_workers(|threads, pool| {
        // Under Miri two rounds: one panic in the guest's closure, one in a join's half.
        for round in 0..if cfg!(miri) { 2 } else { 20 } {
            settle(&pool);
            let r = catch_unwind(AssertUnwindSafe(|| {
                pool.install(|| {
                    if round % 2 == 0 {
                        panic!("guest panic {round}");
                    }
                    threadlab::join(
                        || fib(if cfg!(miri) { 8 } else { 18 }),
                        || panic!("half panic {round}"),
                    )
                })
            }));
            let payload = r.expect_err("the panic is re-raised");
            let msg = payload
                .downcast_ref::<String>()
                .cloned()
                .unwrap_or_default();
            assert!(msg.contains(&round.to_string()), "{msg}");
            assert_eq!(pool.install(|| fib(12)), 144);
            for w in 0..threads {
                assert_eq!(
                    pool.install_on(w, threadlab::current_thread_index),
                    Ok(Some(w))
                );
            }
        }
        assert_eq!(pool.metrics().panicked_tasks, 0);
    });
}

/// Fire-and-forget tasks spawned by a guest may outlive its install: they wait until after the
/// install returned (a signal the caller sends only then), so the guest cannot have run them;
/// the worker whose seat it borrowed runs them, each once. On one worker too, where nobody else
/// could.
#[test]
fn static_spawns_from_a_guest_outlive_the_install() {
    on_one_and_two_workers(|threads, pool| {
        settle(&pool);
        let ran = Arc::new(AtomicUsize::new(0));
        let (go_tx, go_rx) = mpsc::channel::<()>();
        let go_rx = Arc::new(std::sync::Mutex::new(go_rx));
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let caller = me();
        // Under Miri 9 tasks queued behind the waiting one (99 natively), each the same path.
        let others = if cfg!(miri) { 9 } else { 99 };
        let on_guest = pool.install(|| {
            // The first task waits for the signal; the others after it in the same seat.
            let (ran1, go, done) = (Arc::clone(&ran), Arc::clone(&go_rx), done_tx.clone());
            threadlab::spawn(move || {
                go.lock().unwrap().recv().unwrap();
                ran1.fetch_add(1, Ordering::SeqCst);
                done.send(()).unwrap();
            });
            for _ in 0..others {
                let (ran, done) = (Arc::clone(&ran), done_tx.clone());
                threadlab::spawn(move || {
                    ran.fetch_add(1, Ordering::SeqCst);
                    done.send(()).unwrap();
                });
            }
            me() == caller
        });
        assert!(on_guest, "{threads} workers: the install ran as a guest");
        go_tx.send(()).unwrap();
        for _ in 0..=others {
            done_rx.recv().unwrap();
        }
        assert_eq!(ran.load(Ordering::SeqCst), others + 1);
        let report = pool.shutdown();
        assert_eq!(report.panicked_tasks, 0);
    });
}

/// The promise a scope has always kept: a task spawned by a scope body that then blocks outside
/// threadlab (a std channel) is run by another worker. From a guest, as from a worker. (Not so a
/// `join` whose first half waits for its second: `join` hands its second half out at most once
/// per heartbeat period, as documented, with a guest as with a worker.)
#[test]
fn a_guest_blocked_outside_threadlab_still_gets_its_spawn_run() {
    watched_pool(2, |pool| {
        for round in 0..if cfg!(miri) { 5 } else { 50 } {
            if round % 2 == 0 {
                settle(&pool);
            }
            let got = pool.scope(|s| {
                let (tx, rx) = mpsc::channel();
                s.spawn(move |_| tx.send(round).unwrap());
                rx.recv().unwrap()
            });
            assert_eq!(got, round);
            let got = pool.install(|| {
                let (tx, rx) = mpsc::channel();
                threadlab::spawn(move || tx.send(round).unwrap());
                rx.recv().unwrap()
            });
            assert_eq!(got, round);
        }
    });
}

/// No worker sleeps (both run tasks that wait for a signal): an install from outside cannot
/// borrow a seat and falls back to injecting its closure, which a worker runs once free.
#[test]
fn a_guest_on_a_busy_pool_falls_back_to_injecting() {
    watchdog(|| {
        let pool = Arc::new(Pool::builder().threads(2).build().unwrap());
        let (started_tx, started_rx) = mpsc::channel::<()>();
        let mut gos = Vec::new();
        for _ in 0..2 {
            let (go_tx, go_rx) = mpsc::channel::<()>();
            gos.push(go_tx);
            let started = started_tx.clone();
            pool.spawn(move || {
                started.send(()).unwrap();
                go_rx.recv().unwrap();
            });
        }
        started_rx.recv().unwrap();
        started_rx.recv().unwrap();
        let p = Arc::clone(&pool);
        let outside = std::thread::spawn(move || {
            let caller = me();
            let ran_on = p.install(me);
            (caller, ran_on)
        });
        // The install waits in the injector; release the workers.
        std::thread::sleep(std::time::Duration::from_millis(20));
        for go in gos {
            go.send(()).unwrap();
        }
        let (caller, ran_on) = outside.join().unwrap();
        assert_ne!(caller, ran_on, "fell back to a worker");
    });
}

/// An elastic pool (`keep_alive`): a worker whose seat was lent still retires once its
/// keep-alive runs out after the guest left; a retired worker's seat is never lent (it has no
/// thread), so an install then falls back to the injector, which starts a worker again; and
/// every later guest and task still runs once.
#[test]
fn lent_seats_of_an_elastic_pool_retire_and_restart() {
    watchdog(|| {
        // Long enough under Miri that a worker cannot retire between the check that one is
        // alive and the install.
        let keep = std::time::Duration::from_millis(if cfg!(miri) { 2_000 } else { 20 });
        let pool = Pool::builder().threads(2).keep_alive(keep).build().unwrap();
        let caller = me();
        // Under Miri two rounds: the workers first started, then restarted and retired again
        // (each round waits out the 2 s keep-alive there).
        let rounds = if cfg!(miri) { 2 } else { 5 };
        for round in 0..rounds {
            settle(&pool);
            // Some worker still has a thread and sleeps: the install is a guest.
            if pool.metrics().alive_threads() > 0 {
                assert_eq!(pool.install(me), caller, "round {round}: a guest");
            }
            // Every worker retires, the lent one included.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
            while pool.metrics().alive_threads() > 0 {
                assert!(
                    std::time::Instant::now() < deadline,
                    "workers never retired"
                );
                // Under Miri a tenth of the keep-alive: each poll is interpreted, and a 1 ms poll
                // made 2,000 of them per retirement.
                std::thread::sleep(if cfg!(miri) {
                    keep / 10
                } else {
                    std::time::Duration::from_millis(1)
                });
            }
            // No thread: nothing to lend; the install runs on a restarted worker.
            let (tid, sum) = pool.install(|| (me(), fib(15)));
            assert_ne!(tid, caller, "round {round}: a retired seat is not lent");
            assert_eq!(sum, 610);
        }
        let retired: u64 = pool.metrics().workers.iter().map(|w| w.retirements).sum();
        assert!(retired >= rounds, "{retired} retirements");
    });
}

/// Stack the deep recursion below uses: more than a worker thread's 2 MiB (Rust's default).
const DEEP_BYTES: usize = 5 << 19; // 2.5 MiB

/// Recurses through `frames` frames of at least 1 KiB each.
#[inline(never)]
fn deep(frames: usize) -> u64 {
    let mut frame = [0u8; 1024];
    frame[frames % 1024] = 1;
    let frame = std::hint::black_box(frame);
    if frames == 0 {
        return frame.iter().map(|&b| b as u64).sum();
    }
    deep(frames - 1) + frame[(frames + 1) % 1024] as u64
}

/// The child's half of `a_deep_install_runs_on_the_callers_stack_with_and_without_recording`:
/// does nothing unless that test started this process for it.
#[test]
#[cfg_attr(miri, ignore)] // a child process; Miri runs none
fn deep_install_child() {
    if std::env::var_os("THREADLAB_DEEP_INSTALL_CHILD").is_none() {
        return;
    }
    let pool = Pool::builder().threads(2).build().unwrap();
    let caller = std::thread::Builder::new()
        .stack_size(8 * DEEP_BYTES)
        .spawn(move || {
            for recording in [false, true] {
                settle(&pool);
                let rec = recording.then(threadlab::trace::start);
                let me_ = me();
                let (sum, on_caller) = pool.install(|| (deep(DEEP_BYTES / 1024), me() == me_));
                drop(rec.map(|r| r.stop()));
                assert_eq!(sum, 1, "recording: {recording}");
                assert!(
                    on_caller,
                    "recording: {recording}: the install left its caller"
                );
            }
        })
        .unwrap();
    caller.join().unwrap();
}

/// `install` from a plain thread with a big stack, of a recursion deeper than a worker's stack,
/// runs on the caller (as a guest of a sleeping worker) whether a recording is on or not: a
/// recording must not change where user code runs (it once moved it to a worker, whose 2 MiB
/// stack overflowed). In a child process (this test binary again, running only
/// `deep_install_child`), so an overflow fails this test instead of killing the harness.
#[test]
#[cfg_attr(miri, ignore)] // a child process; Miri runs none
fn a_deep_install_runs_on_the_callers_stack_with_and_without_recording() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "deep_install_child",
            "--test-threads=1",
            "--nocapture",
        ])
        .env("THREADLAB_DEEP_INSTALL_CHILD", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "the child failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
}
