//! Rayon's meaning where a program can tell, one test per promise: a pool's drop returns at once
//! (`shutdown` joins); guests can be turned off; every thread that runs the pool's work has an
//! index below the thread count; a broadcast reaches every index while its caller blocks;
//! `join_context` from outside says both closures migrated; `in_place_scope` runs its body on
//! the caller with no `Send` bound; `use_current_thread`; a `join` whose halves meet returns;
//! FIFO spawns; `BroadcastContext<'a>`, `max_num_threads`, `current_thread_has_pending_tasks`,
//! `ThreadBuilder::name`, Rayon's words for a second global pool, and a naming function that
//! panics part-way through a build.
mod pool_support;

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use pool_support::{settle, watchdog};
use threadlab::{BroadcastContext, Pool};

/// Waits until `done()` holds, failing with `what` after 60 s.
fn wait_until(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "never happened: {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// A task still waits when the pool is dropped: the drop returns at once, the task goes on (and
/// may spawn more), and then the threads exit by themselves, running the exit handler; the
/// explicit join, `shutdown`, returns only after the threads exited.
#[test]
fn a_pools_drop_returns_while_a_task_runs_and_shutdown_joins() {
    watchdog(|| {
        let exited = Arc::new(AtomicUsize::new(0));
        let e = Arc::clone(&exited);
        let pool = Pool::builder()
            .threads(2)
            .exit_handler(move |_| {
                e.fetch_add(1, Ordering::SeqCst);
            })
            .build()
            .unwrap();
        let (go, wait) = mpsc::channel::<()>();
        let (done, finished) = mpsc::channel();
        pool.spawn(move || {
            wait.recv().unwrap();
            threadlab::spawn(move || done.send(()).unwrap());
        });
        drop(pool); // must return while the task waits for `go`
        go.send(()).unwrap();
        finished.recv().unwrap();
        wait_until("both workers ran their exit handler", || {
            exited.load(Ordering::SeqCst) == 2
        });

        let exited = Arc::new(AtomicUsize::new(0));
        let e = Arc::clone(&exited);
        let pool = Pool::builder()
            .threads(3)
            .exit_handler(move |_| {
                e.fetch_add(1, Ordering::SeqCst);
            })
            .build()
            .unwrap();
        pool.spawn(|| std::thread::sleep(Duration::from_millis(20)));
        let report = pool.shutdown();
        assert_eq!(
            exited.load(Ordering::SeqCst),
            3,
            "shutdown returned before the threads"
        );
        assert_eq!(report.tasks_run, 1);
    });
}

thread_local!(static CALLERS: Cell<bool> = const { Cell::new(false) });

/// With guests off, `install` from outside the pool runs on the pool's own threads even while
/// every worker sleeps: the closure sees a worker's thread-locals and name, not the caller's.
#[test]
fn with_guests_off_install_runs_on_the_pools_threads() {
    watchdog(|| {
        CALLERS.with(|c| c.set(true));
        let pool = Pool::builder().threads(2).guests(false).build().unwrap();
        for _ in 0..20 {
            settle(&pool); // every worker asleep: a guest would be possible
            let (mark, name) = pool.install(|| {
                (
                    CALLERS.with(|c| c.get()),
                    std::thread::current().name().map(String::from),
                )
            });
            assert!(!mark, "the closure saw the caller's thread-local");
            let name = name.unwrap_or_default();
            assert!(name.starts_with("threadlab-"), "ran on {name:?}");
        }
    });
}

/// Every thread that runs the pool's work has `current_thread_index() == Some(i)` with
/// `i < threads`: here a spare thread, started because two workers block at a barrier whose
/// third party waits in the queue, stands in with a blocked worker's index.
#[test]
fn every_thread_running_the_pools_work_has_an_index_below_the_thread_count() {
    watchdog(|| {
        let pool = Pool::builder().threads(2).build().unwrap();
        let barrier = Barrier::new(3);
        let seen = Mutex::new(Vec::new());
        pool.scope(|s| {
            for _ in 0..3 {
                s.spawn(|_| {
                    seen.lock().unwrap().push(threadlab::current_thread_index());
                    barrier.wait();
                });
            }
        });
        assert!(pool.metrics().spare_threads_started >= 1);
        let seen = seen.into_inner().unwrap();
        assert!(
            seen.iter().all(|i| matches!(i, Some(i) if *i < 2)),
            "indices seen: {seen:?}"
        );
        let outside = pool.install(threadlab::current_thread_index);
        assert!(matches!(outside, Some(i) if i < 2), "{outside:?}");
    });
}

/// A broadcast reaches every index while the thread that asked for it is blocked waiting for
/// the calls: an `in_place_scope` body (on the caller, off the pool) whose broadcast calls meet
/// it at a barrier (rayon-core's `scope_spawn_broadcast_barrier`), and a broadcast from inside
/// `install` (a guest, when the workers sleep) whose calls meet at a barrier of every index.
#[test]
fn a_broadcast_reaches_every_index_while_its_caller_blocks() {
    watchdog(|| {
        let n = 3;
        let pool = Pool::builder().threads(n).build().unwrap();
        for _ in 0..10 {
            settle(&pool);
            let barrier = Barrier::new(n + 1);
            pool.in_place_scope(|s| {
                s.spawn_broadcast(|_, _| {
                    barrier.wait();
                });
                barrier.wait();
            });
            settle(&pool);
            let barrier = Barrier::new(n);
            let got = pool.install(|| {
                pool.broadcast(|ctx| {
                    barrier.wait();
                    ctx.index()
                })
            });
            assert_eq!(got, [0, 1, 2]);
        }
    });
}

/// `join_context` called from outside any pool says both closures migrated (the call entered
/// the pool, Rayon's "injected"), also when the caller runs them itself as a guest.
#[test]
fn join_context_from_outside_says_both_closures_migrated() {
    watchdog(|| {
        for _ in 0..30 {
            // Time for the global pool's workers to go to sleep, so the caller may be a guest.
            std::thread::sleep(Duration::from_millis(2));
            let (a, b) = threadlab::join_context(|a| a.migrated(), |b| b.migrated());
            assert!(a && b, "migrated: a {a}, b {b}");
        }
    });
}

/// `in_place_scope` runs its body on the calling thread: it may hold an `Rc` and a `RefCell`
/// borrow (no `Send` bound), it is off the pool (no index), and it may wait for its own task on
/// a pool of one worker, which runs it.
#[test]
fn in_place_scope_runs_its_body_on_the_caller_with_no_send_bound() {
    watchdog(|| {
        let pool = Pool::builder().threads(1).build().unwrap();
        let rc = Rc::new(RefCell::new(Vec::new()));
        let caller = std::thread::current().id();
        let (tx, rx) = mpsc::channel();
        let total = AtomicUsize::new(0);
        pool.in_place_scope(|s| {
            let mut held = rc.borrow_mut();
            held.push(std::thread::current().id() == caller);
            held.push(threadlab::current_thread_index().is_none());
            let tx = tx.clone();
            let total = &total;
            s.spawn(move |_| {
                total.fetch_add(1, Ordering::SeqCst);
                tx.send(()).unwrap();
            });
            rx.recv().unwrap(); // the pool's worker runs the task
        });
        assert_eq!(*rc.borrow(), [true, true]);
        assert_eq!(total.load(Ordering::SeqCst), 1);
        let cell = Cell::new(1);
        threadlab::in_place_scope_fifo(|s| {
            s.spawn_fifo(|_| ());
            cell.set(2);
        });
        assert_eq!(cell.get(), 2);
    });
}

/// `use_current_thread` makes the building thread worker 0: it has index 0, cannot join a
/// second pool, the other worker takes what it spawns while it blocks outside the pool, its
/// waits inside the pool run the pool's work, and dropping the pool lets it go.
#[test]
fn use_current_thread_makes_the_building_thread_worker_0() {
    watchdog(|| {
        let pool = Pool::builder()
            .threads(2)
            .use_current_thread()
            .build()
            .unwrap();
        assert_eq!(threadlab::current_thread_index(), Some(0));
        let again = Pool::builder().threads(1).use_current_thread().build();
        assert_eq!(
            again.unwrap_err().to_string(),
            "The current thread is already part of another thread pool."
        );
        let (tx, rx) = mpsc::channel();
        pool.spawn(move || tx.send(threadlab::current_thread_index()).unwrap());
        assert_eq!(rx.recv().unwrap(), Some(1)); // blocked outside the pool: worker 1 ran it
        drop(pool);
        assert_eq!(threadlab::current_thread_index(), None);

        // One worker, this thread: work it spawned runs when it waits inside the pool.
        let pool = Pool::builder()
            .threads(1)
            .use_current_thread()
            .build()
            .unwrap();
        let ran = AtomicUsize::new(0);
        let (tx, rx) = mpsc::channel();
        pool.spawn(move || tx.send(7).unwrap());
        pool.scope(|s| {
            s.spawn(|_| {
                ran.fetch_add(1, Ordering::SeqCst);
            });
        });
        assert_eq!(ran.load(Ordering::SeqCst), 1);
        assert_eq!(threadlab::yield_local(), Some(threadlab::Yield::Executed));
        assert_eq!(rx.try_recv(), Ok(7));
        pool.shutdown();
        assert_eq!(threadlab::current_thread_index(), None);
    });
}

/// A `join` whose first half waits at a barrier for its second returns on a pool of two. The
/// join starts while the other worker is busy (so it is registered but not published: no worker
/// asked for work, and an earlier check withdrew the request flag); the other worker goes idle
/// only once the first half blocks, so no heartbeat can publish the second half: the monitor
/// offers it once it sees the first half's thread blocked. With guests on (the scope's caller
/// runs as a guest) and off.
#[test]
fn a_join_whose_halves_meet_at_a_barrier_returns() {
    watchdog(|| {
        for guests in [true, false] {
            let pool = Pool::builder().threads(2).guests(guests).build().unwrap();
            settle(&pool);
            let (started, entered) = (AtomicBool::new(false), AtomicBool::new(false));
            let met = pool.install(|| {
                let met = AtomicUsize::new(0);
                threadlab::scope(|s| {
                    s.spawn(|_| {
                        started.store(true, Ordering::SeqCst);
                        while !entered.load(Ordering::SeqCst) {
                            std::hint::spin_loop();
                        }
                    });
                    s.spawn(|_| {
                        while !started.load(Ordering::SeqCst) {
                            std::hint::spin_loop();
                        }
                        // Forks while the other worker is busy: a check withdraws this worker's
                        // request flag.
                        assert_eq!(pool_support::fib(20), 6765);
                        let barrier = Barrier::new(2);
                        threadlab::join(
                            || {
                                entered.store(true, Ordering::SeqCst);
                                barrier.wait();
                                met.fetch_add(1, Ordering::SeqCst);
                            },
                            || {
                                barrier.wait();
                                met.fetch_add(1, Ordering::SeqCst);
                            },
                        );
                    });
                });
                met.into_inner()
            });
            assert_eq!(met, 2);
        }
    });
}

/// `spawn_fifo` and `Scope::spawn_fifo` run a thread's FIFO tasks in the order it spawned them,
/// interleaved with `spawn`'s newest-first tasks as they fall in the deque (rayon-core's
/// `mixed_lifo_fifo_order` and `mixed_fifo_order` tests, on a pool of one worker).
#[test]
fn fifo_spawns_run_in_spawn_order_per_spawning_thread() {
    watchdog(|| {
        let pool = Pool::builder().threads(1).build().unwrap();
        let (tx, rx) = mpsc::channel();
        pool.install(|| {
            for i in 0..4i32 {
                let (lifo, fifo) = (tx.clone(), tx.clone());
                threadlab::spawn(move || lifo.send(i).unwrap());
                threadlab::spawn_fifo(move || fifo.send(-1 - i).unwrap());
            }
        });
        drop(tx);
        let got: Vec<i32> = rx.iter().collect();
        // The deque holds 0, a stub, 1, a stub, ..., 3, a stub; popped newest first, each stub
        // runs the oldest FIFO task.
        assert_eq!(got, [-1, 3, -2, 2, -3, 1, -4, 0]);

        let order = pool.install(|| {
            let order = Mutex::new(Vec::new());
            threadlab::scope_fifo(|outer| {
                let order = &order;
                outer.spawn_fifo(move |_| order.lock().unwrap().push(0));
                threadlab::scope_fifo(|inner| {
                    inner.spawn_fifo(move |_| order.lock().unwrap().push(-1));
                    outer.spawn_fifo(move |_| order.lock().unwrap().push(1));
                    inner.spawn_fifo(move |_| order.lock().unwrap().push(-2));
                    outer.spawn_fifo(move |_| order.lock().unwrap().push(2));
                    inner.spawn_fifo(move |_| order.lock().unwrap().push(-3));
                });
                outer.spawn_fifo(move |_| order.lock().unwrap().push(3));
            });
            order.into_inner().unwrap()
        });
        assert_eq!(order, [-1, 0, -2, 1, -3, 2, 3]);
    });
}

/// `Pool::spawn_fifo` from a thread outside the pool keeps spawn order too: the tasks queued
/// while the one worker is busy run oldest first, whatever order the worker takes the injected
/// jobs in (it may move a batch of them into its deque and pop them newest first).
#[test]
fn fifo_spawns_from_outside_the_pool_run_in_spawn_order() {
    watchdog(|| {
        let pool = Pool::builder().threads(1).build().unwrap();
        let order = Arc::new(Mutex::new(Vec::new()));
        let (go, wait) = mpsc::channel::<()>();
        let (started_tx, started) = mpsc::channel::<()>();
        pool.spawn(move || {
            started_tx.send(()).unwrap();
            wait.recv().unwrap();
        });
        started.recv().unwrap();
        for i in 0..50 {
            let order = Arc::clone(&order);
            pool.spawn_fifo(move || order.lock().unwrap().push(i));
        }
        let (tx, rx) = mpsc::channel();
        pool.spawn_fifo(move || tx.send(()).unwrap());
        go.send(()).unwrap();
        rx.recv().unwrap();
        assert_eq!(*order.lock().unwrap(), (0..50).collect::<Vec<_>>());
    });
}

/// `BroadcastContext` carries a lifetime (Rayon's `BroadcastContext<'a>`): a function taking one
/// by value names it.
#[test]
fn broadcast_context_has_rayons_lifetime() {
    fn index_of(ctx: BroadcastContext<'_>) -> usize {
        ctx.index()
    }
    let pool = Pool::builder().threads(2).build().unwrap();
    assert_eq!(pool.broadcast(index_of), [0, 1]);
}

/// `max_num_threads` bounds what a builder accepts, and `current_thread_has_pending_tasks` says
/// whether this thread's own queues hold work (`None` off the pools).
#[test]
fn max_num_threads_and_pending_tasks() {
    let max = threadlab::max_num_threads();
    assert!(max >= threadlab::current_num_threads());
    assert!(Pool::builder().threads(max + 1).build().is_err());
    assert_eq!(threadlab::current_thread_has_pending_tasks(), None);
    let pool = Pool::builder().threads(1).build().unwrap();
    let (before, after, drained) = pool.install(|| {
        let before = threadlab::current_thread_has_pending_tasks();
        threadlab::spawn(|| ());
        let after = threadlab::current_thread_has_pending_tasks();
        threadlab::yield_local();
        (before, after, threadlab::current_thread_has_pending_tasks())
    });
    assert_eq!(
        (before, after, drained),
        (Some(false), Some(true), Some(false))
    );
}

/// A spawn handler's `ThreadBuilder::name()` is `None` unless the builder named the threads.
#[test]
fn a_thread_builders_name_is_none_unless_set() {
    for named in [false, true] {
        let names = Mutex::new(Vec::new());
        let mut b = Pool::builder().threads(2);
        if named {
            b = b.thread_name(|i| format!("mine-{i}"));
        }
        let pool = b
            .spawn_handler(|thread| {
                names.lock().unwrap().push(thread.name().map(String::from));
                std::thread::spawn(|| thread.run());
                Ok(())
            })
            .build()
            .unwrap();
        drop(pool);
        let want = if named {
            vec![Some("mine-0".to_string()), Some("mine-1".to_string())]
        } else {
            vec![None, None]
        };
        assert_eq!(names.into_inner().unwrap(), want);
    }
}

/// A second global pool is refused with Rayon's words (rayon-core's `double_init_fail`
/// compares them), and no error source.
#[test]
fn a_second_global_pool_is_refused_in_rayons_words() {
    threadlab::join(|| (), || ()); // the global pool exists
    let err = Pool::builder().build_global().unwrap_err();
    assert_eq!(
        err.to_string(),
        "The global thread pool has already been initialized."
    );
    assert!(std::error::Error::source(&err).is_none());
}

/// A naming function that panics for worker 5 leaves workers 0 to 4 started, and then stopped:
/// each ran its start and its exit handler once, and the panic reaches the caller of `build`
/// (rayon-core's `panic_thread_name`).
#[test]
fn a_naming_function_that_panics_stops_the_workers_started_before() {
    watchdog(|| {
        let started = Arc::new(AtomicUsize::new(0));
        let exited = Arc::new(AtomicUsize::new(0));
        let (s, e) = (Arc::clone(&started), Arc::clone(&exited));
        let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            Pool::builder()
                .threads(10)
                .start_handler(move |_| {
                    s.fetch_add(1, Ordering::SeqCst);
                })
                .exit_handler(move |_| {
                    e.fetch_add(1, Ordering::SeqCst);
                })
                .thread_name(|i| {
                    assert!(i < 5, "no name for worker {i}");
                    format!("named-{i}")
                })
                .build()
        }));
        assert!(
            built.is_err(),
            "the naming function's panic did not reach the caller"
        );
        assert_eq!(started.load(Ordering::SeqCst), 5);
        assert_eq!(exited.load(Ordering::SeqCst), 5);
    });
}
