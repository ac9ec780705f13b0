//! Pools in a child process made by `fork()`, after the parent used them.
//!
//! A child has only the thread that called `fork`: the global pool must be rebuilt there on
//! first use (so `spawn`, `spawn_future`, `scope`, `join`, `par_sort` work in the child), and a
//! pool the program built must refuse work there at once, with a message that says why, instead
//! of queueing it for workers that do not exist (a silent hang at 0% CPU).
//!
//! Its own test binary, without libtest's harness (`harness = false` in Cargo.toml): a fork from
//! a test thread while other tests run would copy their half-done state into the child. Here the
//! parent is this `main` alone (plus the pools' parked workers). Each case forks a child that
//! sets an `alarm` (a hung child dies of SIGALRM), does the work, and leaves with `_exit(0)` on
//! success; the parent waits for it with a deadline and checks how it ended.

#[cfg(all(unix, not(miri)))]
fn main() {
    unix::main()
}

#[cfg(not(all(unix, not(miri))))]
fn main() {
    println!("fork: no fork() here (or under Miri); nothing to test");
}

#[cfg(all(unix, not(miri)))]
mod unix {
    use std::sync::{mpsc, OnceLock};
    use std::time::{Duration, Instant};

    use threadlab::iter::ParallelSliceMut;
    use threadlab::Pool;

    /// A pool the program built (and used) before forking.
    static OWN_POOL: OnceLock<Pool> = OnceLock::new();

    /// Seconds a child may take before its alarm kills it (it needs milliseconds).
    const CHILD_ALARM_S: u32 = 20;

    fn fib(n: u64) -> u64 {
        if n < 2 {
            return n;
        }
        let (a, b) = threadlab::join(|| fib(n - 1), || fib(n - 2));
        a + b
    }

    fn spawn_and_wait() -> bool {
        let (tx, rx) = mpsc::channel();
        threadlab::spawn(move || tx.send(41).unwrap());
        rx.recv() == Ok(41)
    }

    fn spawn_future_and_join() -> bool {
        threadlab::spawn_future(async { 6 * 7 }).join() == 42
    }

    fn scope() -> bool {
        let mut parts = [0u64; 4];
        threadlab::scope(|s| {
            for (i, p) in parts.iter_mut().enumerate() {
                s.spawn(move |_| *p = (i as u64 * 100..(i as u64 + 1) * 100).sum());
            }
        });
        parts.iter().sum::<u64>() == (0..400u64).sum::<u64>()
    }

    fn join() -> bool {
        fib(20) == 6765
    }

    fn par_sort() -> bool {
        let mut v: Vec<u64> = (0..100_000u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 7)
            .collect();
        v.par_sort();
        v.windows(2).all(|w| w[0] <= w[1])
    }

    /// The global pool in a grandchild: the child's rebuilt pool is itself forked away there.
    fn global_pool_in_a_grandchild() -> bool {
        join() && run_in_child("grandchild join", join).is_ok()
    }

    /// `f` must panic, at once, saying the pool's threads did not survive `fork()`.
    fn refused(f: impl FnOnce()) -> bool {
        let err = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
            Ok(()) => return false,
            Err(e) => e,
        };
        let msg = err
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| err.downcast_ref::<&str>().copied())
            .unwrap_or("");
        msg.contains("did not survive fork()") && msg.contains("Build a new pool")
    }

    fn own_pool_refuses_work() -> bool {
        let pool = OWN_POOL.get().unwrap();
        // The panics are expected: keep their messages and backtraces out of the output.
        std::panic::set_hook(Box::new(|_| {}));
        refused(|| assert_eq!(pool.install(|| 1), 1))
            && refused(|| pool.spawn(|| ()))
            && refused(|| pool.scope(|_| ()))
            && refused(|| drop(pool.spawn_future(async {})))
            && refused(|| drop(pool.install_on(0, || ())))
            && refused(|| pool.spawn_on(1, || ()).unwrap())
    }

    /// A pool built in the child works there (and its shutdown joins its threads).
    fn a_new_pool_in_the_child_works() -> bool {
        let pool = Pool::builder().threads(2).build().unwrap();
        let ok = pool.install(|| fib(15)) == 610;
        pool.shutdown();
        ok
    }

    /// A pool built before a fork, shut down after it (in the grandchild: the parent's own pool
    /// is a static, never dropped), returns instead of waiting for threads that are not there.
    fn dropping_a_forked_away_pool_returns() -> bool {
        let pool = Pool::builder().threads(2).build().unwrap();
        assert_eq!(pool.install(|| 1), 1);
        let outcome = run_in_child("shut down a forked-away pool", move || {
            pool.shutdown();
            true
        });
        outcome.is_ok()
    }

    /// Runs `f` while each worker of the global pool runs a task that waits for `f` to return.
    fn while_the_global_pool_is_busy<R>(f: impl FnOnce() -> R) -> R {
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
        use std::sync::Arc;
        let n = threadlab::current_num_threads();
        let (busy, started) = (
            Arc::new(AtomicBool::new(true)),
            Arc::new(AtomicUsize::new(0)),
        );
        let (tx, rx) = mpsc::channel();
        for _ in 0..n {
            let (busy, started, tx) = (Arc::clone(&busy), Arc::clone(&started), tx.clone());
            threadlab::spawn(move || {
                started.fetch_add(1, SeqCst);
                // Each worker holds one of these tasks until all have started and `f` ran.
                while busy.load(SeqCst) {
                    std::thread::yield_now();
                }
                tx.send(()).unwrap();
            });
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        while started.load(SeqCst) < n {
            assert!(
                Instant::now() < deadline,
                "the global pool's workers never all started"
            );
            std::thread::yield_now();
        }
        let r = f();
        busy.store(false, SeqCst);
        for _ in 0..n {
            rx.recv().unwrap();
        }
        r
    }

    /// A case's name, and what the child runs (true: it worked).
    type Case = (&'static str, fn() -> bool);

    /// Forks; the child runs `f` under an alarm and exits 0 if it returned true. Waits for the
    /// child (at most a minute) and says how it ended.
    fn run_in_child(name: &str, f: impl FnOnce() -> bool) -> Result<(), String> {
        // SAFETY: fork() is async-signal-safe; the child only runs `f` and leaves with `_exit`
        // (no atexit handlers, no unwinding into the copied caller's frames).
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork: {}", std::io::Error::last_os_error());
        if pid == 0 {
            // SAFETY: alarm() and _exit() are async-signal-safe and take plain integers.
            unsafe { libc::alarm(CHILD_ALARM_S) };
            let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or(false);
            // SAFETY: as above.
            unsafe { libc::_exit(if ok { 0 } else { 1 }) };
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut status = 0;
        loop {
            // SAFETY: `pid` is our child; `status` is a valid out-pointer.
            let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
            if r == pid {
                break;
            }
            assert!(r == 0, "waitpid: {}", std::io::Error::last_os_error());
            if Instant::now() > deadline {
                // SAFETY: killing and reaping our own child.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                    libc::waitpid(pid, &mut status, 0);
                }
                return Err(format!("{name}: the child hung (killed after 60 s)"));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
            Ok(())
        } else if libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGALRM {
            Err(format!(
                "{name}: the child hung (its {CHILD_ALARM_S} s alarm killed it)"
            ))
        } else if libc::WIFSIGNALED(status) {
            Err(format!(
                "{name}: the child died of signal {}",
                libc::WTERMSIG(status)
            ))
        } else {
            Err(format!(
                "{name}: the child failed (exit {})",
                libc::WEXITSTATUS(status)
            ))
        }
    }

    pub(super) fn main() {
        // The parent uses the global pool with every operation, and builds a pool of its own.
        let cases: [Case; 9] = [
            ("spawn + wait", spawn_and_wait),
            ("spawn_future(..).join()", spawn_future_and_join),
            ("scope", scope),
            ("join", join),
            ("par_sort", par_sort),
            (
                "the global pool in a grandchild",
                global_pool_in_a_grandchild,
            ),
            (
                "a pool built before fork refuses work",
                own_pool_refuses_work,
            ),
            (
                "a pool built in the child works",
                a_new_pool_in_the_child_works,
            ),
            (
                "dropping a forked-away pool returns",
                dropping_a_forked_away_pool_returns,
            ),
        ];
        for (name, f) in &cases[..5] {
            assert!(f(), "{name} failed in the parent");
        }
        let pool = OWN_POOL.get_or_init(|| Pool::builder().threads(2).build().unwrap());
        assert_eq!(pool.install(|| fib(10)), 55);
        let (mut passed, mut failed) = (0, 0);
        let mut report = |name: String, outcome: Result<(), String>| match outcome {
            Ok(()) => {
                println!("fork case {name} ... ok");
                passed += 1;
            }
            Err(e) => {
                println!("fork case {name} ... FAILED: {e}");
                failed += 1;
            }
        };
        println!("\nrunning the fork cases");
        for (name, f) in cases {
            report(name.to_string(), run_in_child(name, f));
        }
        // The global pool's operations again, forked while every worker of the global pool runs
        // a task: in the child no worker's seat looks free, so no call can run as a guest on the
        // calling thread; everything must reach the pool's (rebuilt) workers.
        for (name, f) in &cases[..5] {
            let name = format!("{name}, forked while the global pool is busy");
            let outcome = while_the_global_pool_is_busy(|| run_in_child(&name, f));
            report(name, outcome);
        }
        // Forked while a recording is on: the recording stays the parent's (the child's threads
        // must not register with it), and the child's global pool works.
        let rec = threadlab::trace::start();
        assert!(join());
        report(
            "forked while recording".to_string(),
            run_in_child("forked while recording", || {
                !threadlab::trace::is_recording() && join() && spawn_and_wait()
            }),
        );
        assert!(threadlab::trace::is_recording(), "the parent still records");
        drop(rec.stop());
        // And the parent's pools still work after the forks.
        assert!(spawn_and_wait() && join() && pool.install(|| fib(12)) == 144);
        println!("\nfork cases: {passed} passed, {failed} failed");
        if failed > 0 {
            std::process::exit(1);
        }
    }
}
