//! What this package promises beyond the names: Rayon's meaning on threadlab's pool, and the one
//! deliberate difference (a spawned task's panic never aborts).
//!
//! How each test fails without what it checks: on Rayon's own rayon-core, the two tests of the
//! global pool fail (Rayon's global pool is not threadlab's), and the panic test's child
//! aborts; on this package with threadlab's guests on (`THREADLAB_RAYON_GUESTS=1`), the
//! `install` test fails (the closure runs on the calling thread); with threadlab's joining drop
//! in place of this package's, the drop test's watchdog fires; with `threadlab::join` (which
//! offers its second half only at a heartbeat) behind `join`, the barrier test's watchdog fires;
//! with threadlab's `spawn` behind `spawn_fifo`, the order test sees the newest task first.
//!
//! Tests that need a fresh process (the environment read once, the global pool built once, a
//! panic's text on stderr) run the `child_*` tests, which are ignored, in a child process of this
//! binary.

use std::cell::RefCell;
use std::process::{Command, Output};
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Barrier, Mutex};
use std::time::Duration;

use rayon_core::ThreadPoolBuilder;

/// Runs `f` on a thread and fails the test if it has not finished within 60 s (a hang).
fn watchdog<F: FnOnce() + Send + 'static>(what: &str, f: F) {
    let (tx, rx) = mpsc::channel();
    let h = std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(()) => h.join().unwrap(),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            std::panic::resume_unwind(h.join().unwrap_err())
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what}: not finished within 60 s"),
    }
}

/// Runs the ignored test `name` of this binary in a child process with `env` set.
fn in_child(name: &str, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        name,
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env_remove("RAYON_NUM_THREADS")
    .env_remove("THREADLAB_NUM_THREADS")
    .env_remove("THREADLAB_RAYON_GUESTS")
    .env("RAYON_CORE_CHILD", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run this test binary as a child")
}

fn child_ok(name: &str, env: &[(&str, &str)]) -> String {
    let out = in_child(name, env);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success(),
        "child {name}: {}\nstdout: {stdout}\nstderr: {stderr}",
        out.status
    );
    assert!(stdout.contains("1 passed"), "child {name} ran: {stdout}");
    format!("{stdout}{stderr}")
}

/// The body of a `child_*` test runs only in the child.
fn is_child() -> bool {
    std::env::var_os("RAYON_CORE_CHILD").is_some()
}

#[test]
fn install_from_outside_runs_on_a_pool_thread() {
    // Guests off by default: the caller's thread-locals and name are not the closure's.
    thread_local!(static MINE: RefCell<u32> = const { RefCell::new(0) });
    MINE.with(|m| *m.borrow_mut() = 7);
    let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    // A sleeping worker is when a guest would run the closure here.
    std::thread::sleep(Duration::from_millis(50));
    let caller = std::thread::current().id();
    let (id, index, mine) = pool.install(|| {
        (
            std::thread::current().id(),
            rayon_core::current_thread_index(),
            MINE.with(|m| *m.borrow()),
        )
    });
    assert_ne!(id, caller);
    assert_eq!(index, Some(0));
    assert_eq!(mine, 0);
}

#[test]
fn guests_switch_runs_install_on_the_caller() {
    child_ok("child_guests_on", &[("THREADLAB_RAYON_GUESTS", "1")]);
}

#[test]
#[ignore = "run by guests_switch_runs_install_on_the_caller in a child process"]
fn child_guests_on() {
    if !is_child() {
        return;
    }
    let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let caller = std::thread::current().id();
    // The worker parks when idle; then an install from here runs here, in its seat.
    let mut here = false;
    for _ in 0..200 {
        std::thread::sleep(Duration::from_millis(10));
        if pool.install(|| std::thread::current().id()) == caller {
            here = true;
            break;
        }
    }
    assert!(
        here,
        "with THREADLAB_RAYON_GUESTS=1 an install from outside runs on the caller"
    );
}

#[test]
fn spawned_panic_without_handler_is_printed_and_counted() {
    let out = child_ok("child_spawned_panic", &[]);
    assert!(
        out.contains("a task that panics"),
        "the panic is printed: {out}"
    );
}

#[test]
#[ignore = "run by spawned_panic_without_handler_is_printed_and_counted in a child process"]
fn child_spawned_panic() {
    if !is_child() {
        return;
    }
    let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let (tx, rx) = mpsc::channel();
    pool.spawn(|| panic!("a task that panics"));
    rayon_core::spawn(|| panic!("a task that panics, on the global pool"));
    // Rayon would have aborted the process by now; here the pools work on.
    pool.spawn(move || tx.send(pool_value()).unwrap());
    assert_eq!(rx.recv().unwrap(), 42);
    assert_eq!(pool.install(pool_value), 42);
    assert_eq!(rayon_core::join(pool_value, pool_value), (42, 42));
}

fn pool_value() -> u32 {
    42
}

#[test]
fn drop_returns_while_a_task_runs() {
    watchdog("drop", || {
        let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let (release, wait) = mpsc::channel::<()>();
        let (done, finished) = mpsc::channel();
        let (started_tx, started) = mpsc::channel();
        pool.spawn(move || {
            started_tx.send(()).unwrap();
            wait.recv().unwrap();
            done.send("finished").unwrap();
        });
        started.recv().unwrap();
        drop(pool); // returns although the task still waits
        release.send(()).unwrap();
        assert_eq!(finished.recv().unwrap(), "finished");
    });
}

#[test]
fn join_halves_meet_at_a_barrier() {
    watchdog("join", || {
        let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let barrier = Barrier::new(2);
        pool.install(|| {
            rayon_core::join(|| barrier.wait(), || barrier.wait());
        });
    });
}

#[test]
fn spawn_fifo_runs_in_spawn_order() {
    let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let order = Arc::new(Mutex::new(Vec::new()));
    // From a worker (the free function), and through the handle from outside: the worker is
    // held until all are queued.
    let (go, wait) = mpsc::channel::<()>();
    let wait = Mutex::new(wait);
    pool.spawn(move || wait.lock().unwrap().recv().unwrap());
    for i in 0..50 {
        let order = Arc::clone(&order);
        pool.spawn_fifo(move || order.lock().unwrap().push(i));
    }
    go.send(()).unwrap();
    let o = Arc::clone(&order);
    pool.install(move || {
        for i in 50..100 {
            let order = Arc::clone(&o);
            rayon_core::spawn_fifo(move || order.lock().unwrap().push(i));
        }
    });
    let (tx, rx) = mpsc::channel();
    pool.spawn_fifo(move || tx.send(()).unwrap());
    rx.recv().unwrap();
    assert_eq!(*order.lock().unwrap(), (0..100).collect::<Vec<_>>());
}

#[test]
fn in_place_scope_body_runs_on_the_caller_without_send() {
    let caller = std::thread::current().id();
    let not_send = Rc::new(RefCell::new(Vec::new()));
    let mut parts = [0u64; 8];
    rayon_core::in_place_scope(|s| {
        assert_eq!(std::thread::current().id(), caller);
        for (i, p) in parts.iter_mut().enumerate() {
            s.spawn(move |s| {
                *p = i as u64;
                s.spawn(|_| ()); // nested spawns count in the scope too
            });
        }
        not_send.borrow_mut().push("body");
    });
    assert_eq!(parts, [0, 1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(*not_send.borrow(), ["body"]);

    // On a pool thread the body stays there as well, and so from another pool's thread.
    let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let other = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let ran = AtomicUsize::new(0);
    pool.install(|| {
        let here = std::thread::current().id();
        let rc = Rc::new(1);
        rayon_core::in_place_scope(|s| {
            assert_eq!(std::thread::current().id(), here);
            s.spawn(|_| {
                ran.fetch_add(1, Ordering::Relaxed);
            });
            assert_eq!(*rc, 1);
        });
        other.in_place_scope_fifo(|s| {
            assert_eq!(std::thread::current().id(), here);
            s.spawn_fifo(|_| {
                assert!(other.current_thread_index().is_some(), "on the other pool");
                ran.fetch_add(1, Ordering::Relaxed);
            });
        });
    });
    assert_eq!(ran.into_inner(), 2);
}

#[test]
fn in_place_scope_panics_after_every_task() {
    let done = AtomicUsize::new(0);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rayon_core::in_place_scope(|s| {
            for _ in 0..4 {
                s.spawn(|_| {
                    std::thread::sleep(Duration::from_millis(5));
                    done.fetch_add(1, Ordering::SeqCst);
                });
            }
            s.spawn(|_| panic!("a task's panic"));
        })
    }));
    let p = r.unwrap_err();
    assert_eq!(p.downcast_ref::<&str>(), Some(&"a task's panic"));
    assert_eq!(
        done.into_inner(),
        4,
        "the scope waited for every task first"
    );
}

#[test]
fn scope_broadcast_reaches_every_thread_from_outside() {
    let pool = ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    let seen = Mutex::new(Vec::new());
    pool.in_place_scope(|s| {
        s.spawn_broadcast(|_, ctx| seen.lock().unwrap().push((ctx.index(), ctx.num_threads())));
    });
    let mut seen = seen.into_inner().unwrap();
    seen.sort();
    assert_eq!(seen, [(0, 3), (1, 3), (2, 3)]);
}

#[test]
fn thread_builder_name_is_none_unless_named() {
    let names = Mutex::new(Vec::new());
    let mut handles = Vec::new();
    let pool = ThreadPoolBuilder::new()
        .num_threads(2)
        .spawn_handler(|t| {
            names.lock().unwrap().push(t.name().map(str::to_owned));
            handles.push(std::thread::spawn(|| t.run()));
            Ok(())
        })
        .build()
        .unwrap();
    drop(pool);
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(*names.lock().unwrap(), [None, None]);

    let names = ThreadPoolBuilder::new()
        .num_threads(2)
        .thread_name(|i| format!("named-{i}"))
        .build_scoped(
            |t| {
                assert_eq!(t.name(), Some(format!("named-{}", t.index()).as_str()));
                t.run()
            },
            |pool| pool.broadcast(|_| std::thread::current().name().map(str::to_owned)),
        )
        .unwrap();
    assert_eq!(names, [Some("named-0".into()), Some("named-1".into())]);
}

#[test]
fn use_current_thread_on_a_pool_thread_is_refused() {
    let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let err = pool
        .install(|| ThreadPoolBuilder::new().use_current_thread().build())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "The current thread is already part of another thread pool."
    );
}

#[test]
fn the_global_pool_is_threadlabs() {
    child_ok("child_global", &[]);
}

#[test]
#[ignore = "run by the_global_pool_is_threadlabs in a child process"]
fn child_global() {
    if !is_child() {
        return;
    }
    assert_eq!(
        rayon_core::current_num_threads(),
        threadlab::current_num_threads()
    );
    let (tx, rx) = mpsc::channel();
    rayon_core::spawn(move || tx.send(threadlab::current_thread_index()).unwrap());
    assert!(
        rx.recv().unwrap().is_some(),
        "ran on one of threadlab's workers"
    );
    // threadlab's own code inside Rayon's pool, and Rayon's inside threadlab's.
    let pool = threadlab::Pool::builder().threads(3).build().unwrap();
    assert_eq!(pool.install(rayon_core::current_num_threads), 3);
    // Built once: later attempts get Rayon's message.
    let err = ThreadPoolBuilder::new().build_global().unwrap_err();
    assert_eq!(
        err.to_string(),
        "The global thread pool has already been initialized."
    );
    assert!(std::error::Error::source(&err).is_none());
}

#[test]
fn rayon_num_threads_sizes_the_global_pool() {
    child_ok("child_rayon_num_threads", &[("RAYON_NUM_THREADS", "3")]);
}

#[test]
#[ignore = "run by rayon_num_threads_sizes_the_global_pool in a child process"]
fn child_rayon_num_threads() {
    if !is_child() {
        return;
    }
    let n = rayon_core::broadcast(|ctx| ctx.num_threads());
    assert_eq!(n, [3, 3, 3]);
    assert_eq!(
        threadlab::current_num_threads(),
        3,
        "the same pool, threadlab's global one"
    );
    // And for pools built without a count.
    let pool = ThreadPoolBuilder::new().build().unwrap();
    assert_eq!(pool.current_num_threads(), 3);
}

#[test]
fn build_global_first_sets_threadlabs_global_pool() {
    child_ok("child_build_global", &[]);
}

#[test]
#[ignore = "run by build_global_first_sets_threadlabs_global_pool in a child process"]
fn child_build_global() {
    if !is_child() {
        return;
    }
    ThreadPoolBuilder::new()
        .num_threads(3)
        .thread_name(|i| format!("global-{i}"))
        .build_global()
        .unwrap();
    assert_eq!(threadlab::current_num_threads(), 3);
    let names = rayon_core::broadcast(|_| std::thread::current().name().map(str::to_owned));
    assert_eq!(
        names,
        [
            Some("global-0".into()),
            Some("global-1".into()),
            Some("global-2".into())
        ]
    );
}
