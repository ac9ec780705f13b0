//! Rayon-core's entry points: `broadcast` reaches every worker once (concurrently: the calls
//! meet at a barrier), `spawn_broadcast` too, `join_context` says when a closure moved,
//! `yield_now`/`yield_local` run pending work, `Pool::current_thread_index` knows its own
//! workers only, and `THREADLAB_NUM_THREADS` sets the default count.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Barrier, Mutex};
use threadlab::{Pool, Yield};

#[test]
fn broadcast_runs_once_on_every_worker_at_the_same_time() {
    for n in [1, 2, 3, 5] {
        let pool = Pool::builder().threads(n).build().unwrap();
        let barrier = Barrier::new(n);
        let got = pool.broadcast(|ctx| {
            assert_eq!(ctx.num_threads(), n);
            assert_eq!(threadlab::current_thread_index(), Some(ctx.index()));
            barrier.wait();
            ctx.index()
        });
        assert_eq!(got, (0..n).collect::<Vec<_>>());
        // From inside the pool too.
        let inner = pool.install(|| threadlab::broadcast(|ctx| ctx.index()));
        assert_eq!(inner, (0..n).collect::<Vec<_>>());
    }
}

#[test]
fn spawn_broadcast_reaches_every_worker() {
    let pool = Pool::builder().threads(3).build().unwrap();
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    pool.spawn_broadcast(move |ctx| {
        let on = threadlab::current_thread_index();
        tx.lock().unwrap().send((ctx.index(), on)).unwrap();
    });
    let mut got: Vec<(usize, Option<usize>)> = rx.iter().take(3).collect();
    got.sort();
    assert_eq!(got, [(0, Some(0)), (1, Some(1)), (2, Some(2))]);
}

#[test]
fn join_context_and_pool_methods() {
    let pool = Pool::builder().threads(2).build().unwrap();
    let ((a_moved, a_idx), (_, b_idx)) = pool.install(|| {
        threadlab::join_context(
            |c| (c.migrated(), threadlab::current_thread_index()),
            |c| (c.migrated(), threadlab::current_thread_index()),
        )
    });
    assert!(!a_moved);
    assert!(a_idx.is_some() && b_idx.is_some());
    assert_eq!(pool.join(|| 1, || 2), (1, 2));
    let other = Pool::builder().threads(1).build().unwrap();
    assert_eq!(pool.current_thread_index(), None);
    assert_eq!(other.install(|| pool.current_thread_index()), None);
    assert!(pool.install(|| pool.current_thread_index()).is_some());
}

/// `join_context` offers `b` to the other workers at once (as Rayon's `join` does): `a` can
/// wait for `b` while another worker is free, and `b` then reports that it moved. (With `b`
/// waiting for a beat, `a`'s wait never ended: the wait below gives up after a minute.)
#[test]
fn join_context_offers_b_to_a_free_worker_at_once() {
    let pool = Pool::builder().threads(2).build().unwrap();
    for _ in 0..20 {
        let (tx, rx) = mpsc::channel();
        let (a, b_moved) = pool.install(|| {
            threadlab::join_context(
                move |a| {
                    let met = rx.recv_timeout(std::time::Duration::from_secs(60));
                    (a.migrated(), met.is_ok())
                },
                move |b| {
                    tx.send(()).unwrap();
                    b.migrated()
                },
            )
        });
        assert_eq!(a, (false, true), "a stayed, and b ran while a waited");
        assert!(b_moved);
    }
}

#[test]
fn yield_runs_pending_work() {
    assert_eq!(threadlab::yield_now(), None);
    assert_eq!(threadlab::yield_local(), None);
    let pool = Pool::builder().threads(1).build().unwrap();
    let ran = AtomicUsize::new(0);
    pool.scope(|s| {
        s.spawn(|_| {
            ran.fetch_add(1, Ordering::SeqCst);
        });
        // The only worker is this one: the spawned task is in its deque until it yields.
        assert_eq!(threadlab::yield_local(), Some(Yield::Executed));
        assert_eq!(ran.load(Ordering::SeqCst), 1);
        assert_eq!(threadlab::yield_now(), Some(Yield::Idle));
    });
}

#[test]
fn the_environment_sets_the_default_count() {
    // The only test of this file that reads the environment, so nothing races with it.
    std::env::set_var("THREADLAB_NUM_THREADS", "3");
    assert_eq!(
        Pool::builder()
            .threads(0)
            .build()
            .unwrap()
            .current_num_threads(),
        3
    );
    assert_eq!(Pool::builder().build().unwrap().current_num_threads(), 3);
    assert_eq!(
        Pool::builder()
            .threads(2)
            .build()
            .unwrap()
            .current_num_threads(),
        2
    );
    std::env::set_var("THREADLAB_NUM_THREADS", "nonsense");
    let default = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(
        Pool::builder().build().unwrap().current_num_threads(),
        default
    );
    std::env::remove_var("THREADLAB_NUM_THREADS");
}

thread_local! {
    /// Set by the spawn handlers below on the threads they start.
    static STARTED_BY_HANDLER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// A spawn handler starts every worker (indices 0..n, once each), and only its threads run
/// the pool's work: `install` from outside never runs on the caller (no guest), `broadcast`
/// reaches n threads that the handler marked. Dropping the pool ends each `run`, after which
/// the thread is no worker any more.
#[test]
fn spawn_handler_starts_every_worker() {
    for n in [1, 3] {
        let mut handles = Vec::new();
        let mut indices = Vec::new();
        let pool = Pool::builder()
            .threads(n)
            .spawn_handler(|thread| {
                indices.push(thread.index());
                assert_eq!(thread.name(), None, "the builder named no thread");
                handles.push(std::thread::Builder::new().spawn(move || {
                    STARTED_BY_HANDLER.with(|s| s.set(true));
                    thread.run();
                    threadlab::current_thread_index()
                })?);
                Ok(())
            })
            .build()
            .unwrap();
        assert_eq!(indices, (0..n).collect::<Vec<_>>());
        for _ in 0..50 {
            assert!(pool.install(|| STARTED_BY_HANDLER.with(|s| s.get())));
        }
        assert!(pool
            .broadcast(|_| STARTED_BY_HANDLER.with(|s| s.get()))
            .iter()
            .all(|&b| b));
        drop(pool);
        for h in handles {
            assert_eq!(
                h.join().unwrap(),
                None,
                "run returned; the thread is no worker"
            );
        }
    }
}

/// The handler's error fails the build (the workers it started already stop and their `run`
/// returns), and a handler with `keep_alive` is refused before any thread starts.
#[test]
fn spawn_handler_errors_fail_the_build() {
    let mut handles = Vec::new();
    let err = Pool::builder()
        .threads(3)
        .spawn_handler(|thread| {
            if thread.index() == 2 {
                return Err(std::io::Error::other("no more threads here"));
            }
            handles.push(std::thread::spawn(move || thread.run()));
            Ok(())
        })
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("no more threads here"), "{err}");
    assert_eq!(handles.len(), 2);
    for h in handles {
        h.join().unwrap();
    }
    let mut called = false;
    let err = Pool::builder()
        .keep_alive(std::time::Duration::from_secs(1))
        .spawn_handler(|_| {
            called = true;
            Ok(())
        })
        .build()
        .unwrap_err();
    assert!(!called);
    assert!(err.to_string().contains("keep_alive"), "{err}");
}

/// `build_scoped`: the workers run inside a wrapper that borrows from the caller's stack, on
/// scoped threads joined before it returns.
#[test]
fn build_scoped_workers_borrow_from_the_caller() {
    let wrapped = AtomicUsize::new(0);
    let local = String::from("borrowed");
    let got = Pool::builder()
        .threads(3)
        .build_scoped(
            |thread| {
                wrapped.fetch_add(1, Ordering::SeqCst);
                STARTED_BY_HANDLER.with(|s| s.set(local == "borrowed"));
                thread.run();
                wrapped.fetch_add(100, Ordering::SeqCst);
            },
            |pool| pool.broadcast(|_| STARTED_BY_HANDLER.with(|s| s.get())),
        )
        .unwrap();
    assert_eq!(got, [true, true, true]);
    // Every wrapper returned: the threads were joined.
    assert_eq!(wrapped.into_inner(), 303);
}

/// `spawn_fifo` on a one-worker pool runs a scope's FIFO tasks oldest first, nested and
/// mixed with `spawn`'s newest-first tasks as Rayon's `scope_fifo` does (the orders below are
/// rayon-core's own expectations for the same programs).
#[test]
fn spawn_fifo_runs_in_spawn_order_without_thieves() {
    let pool = Pool::builder().threads(1).build().unwrap();
    // Two levels of FIFO spawns: every outer task before the inner ones, each level in order.
    let got = pool.install(|| {
        let v = Mutex::new(Vec::new());
        threadlab::scope_fifo(|s| {
            let v = &v;
            for i in 0..10 {
                s.spawn_fifo(move |s| {
                    for j in 0..10 {
                        s.spawn_fifo(move |_| v.lock().unwrap().push(i * 10 + j));
                    }
                });
            }
        });
        v.into_inner().unwrap()
    });
    assert_eq!(got, (0..100).collect::<Vec<_>>());
    // An inner scope's tasks interleaved with the outer scope's, FIFO in both, then FIFO
    // outside and LIFO inside.
    let mixed = |inner_fifo: bool| {
        pool.install(|| {
            let v = Mutex::new(Vec::new());
            threadlab::scope_fifo(|outer| {
                let v = &v;
                let push = move |i: i32| move |_: &threadlab::Scope<'_>| v.lock().unwrap().push(i);
                outer.spawn_fifo(push(0));
                threadlab::scope(|inner| {
                    let spawn_inner = |i| {
                        if inner_fifo {
                            inner.spawn_fifo(push(i))
                        } else {
                            inner.spawn(push(i))
                        }
                    };
                    spawn_inner(-1);
                    outer.spawn_fifo(push(1));
                    spawn_inner(-2);
                    outer.spawn_fifo(push(2));
                    spawn_inner(-3);
                });
                outer.spawn_fifo(push(3));
            });
            v.into_inner().unwrap()
        })
    };
    assert_eq!(mixed(true), [-1, 0, -2, 1, -3, 2, 3]);
    assert_eq!(mixed(false), [-3, 0, -2, 1, -1, 2, 3]);
}

/// With thieves, every FIFO task runs exactly once, whatever the mix of `spawn` and
/// `spawn_fifo`, from the body and from tasks (random counts, a 3-worker pool).
#[test]
fn spawn_fifo_runs_every_task_once() {
    let pool = Pool::builder().threads(3).build().unwrap();
    let mut seed = 0x5EED_F1F0u64;
    for _ in 0..30 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let n = (seed % 200) as usize;
        let runs: Vec<AtomicUsize> = (0..2 * n).map(|_| AtomicUsize::new(0)).collect();
        pool.scope_fifo(|s| {
            let runs = &runs;
            for i in 0..n {
                s.spawn_fifo(move |s| {
                    runs[i].fetch_add(1, Ordering::Relaxed);
                    if i % 2 == 0 {
                        s.spawn_fifo(move |_| {
                            runs[n + i].fetch_add(1, Ordering::Relaxed);
                        });
                    } else {
                        s.spawn(move |_| {
                            runs[n + i].fetch_add(1, Ordering::Relaxed);
                        });
                    }
                });
            }
        });
        assert!(runs.iter().all(|r| r.load(Ordering::Relaxed) == 1));
    }
}

/// `Scope::spawn_broadcast` runs once on every worker, all at once (the calls meet at a barrier
/// with the scope's body), the scope waits for them, and a panic in one call is re-raised by
/// the scope after every call ran.
#[test]
fn scope_spawn_broadcast_reaches_every_worker() {
    for n in [1, 2, 4] {
        let pool = Pool::builder().threads(n).build().unwrap();
        let seen = Mutex::new(Vec::new());
        let barrier = Barrier::new(n);
        pool.scope(|s| {
            s.spawn_broadcast(|_, ctx| {
                assert_eq!(ctx.num_threads(), n);
                barrier.wait();
                seen.lock().unwrap().push(ctx.index());
            });
        });
        let mut seen = seen.into_inner().unwrap();
        seen.sort();
        assert_eq!(seen, (0..n).collect::<Vec<_>>());
        let count = AtomicUsize::new(0);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.scope(|s| {
                s.spawn_broadcast(|_, ctx| {
                    count.fetch_add(1, Ordering::Relaxed);
                    if ctx.index() == n - 1 {
                        panic!("one call panics");
                    }
                });
            })
        }));
        assert!(r.is_err());
        assert_eq!(count.into_inner(), n);
    }
}

thread_local! {
    /// The index a start handler below saw, on the thread it ran on.
    static STARTED_AS: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// The start handler runs on every worker's thread, once, before any work (work from outside
/// never runs on a thread it did not set up); the exit handler runs once per worker as the
/// pool is dropped; a panic in either goes to the panic handler and the pool works on.
#[test]
fn start_and_exit_handlers_run_once_per_worker() {
    for n in [1, 3] {
        let exited = std::sync::Arc::new(Mutex::new(Vec::new()));
        let e = std::sync::Arc::clone(&exited);
        let pool = Pool::builder()
            .threads(n)
            .start_handler(|i| STARTED_AS.with(|s| s.set(Some(i))))
            .exit_handler(move |i| {
                assert_eq!(threadlab::current_thread_index(), Some(i));
                e.lock().unwrap().push(i);
            })
            .build()
            .unwrap();
        for _ in 0..50 {
            let (seen, index) = pool.install(|| {
                (
                    STARTED_AS.with(|s| s.get()),
                    threadlab::current_thread_index(),
                )
            });
            assert_eq!(
                seen, index,
                "install ran on a worker its start handler set up"
            );
        }
        let seen = pool.broadcast(|ctx| (STARTED_AS.with(|s| s.get()), ctx.index()));
        assert!(seen.iter().all(|(s, i)| *s == Some(*i)), "{seen:?}");
        pool.shutdown();
        let mut exited = exited.lock().unwrap().clone();
        exited.sort();
        assert_eq!(exited, (0..n).collect::<Vec<_>>());
    }
    let caught = std::sync::Arc::new(AtomicUsize::new(0));
    let c = std::sync::Arc::clone(&caught);
    let pool = Pool::builder()
        .threads(2)
        .start_handler(|_| panic!("start"))
        .exit_handler(|_| panic!("exit"))
        .panic_handler(move |_| {
            c.fetch_add(1, Ordering::SeqCst);
        })
        .build()
        .unwrap();
    assert_eq!(pool.install(|| 6 * 7), 42);
    pool.shutdown();
    assert_eq!(caught.load(Ordering::SeqCst), 4);
}

/// Rayon's older `Configuration` (deprecated there and here) sets what the builder sets: the
/// count, the names, the handlers; `Pool::new` takes it too.
#[test]
#[allow(deprecated)]
fn the_older_configuration_sets_what_the_builder_sets() {
    use std::sync::Arc;
    let started = Arc::new(AtomicUsize::new(0));
    let exited = Arc::new(AtomicUsize::new(0));
    let panics = Arc::new(AtomicUsize::new(0));
    let (s, e, p) = (started.clone(), exited.clone(), panics.clone());
    let pool = threadlab::Configuration::new()
        .threads(3)
        .thread_name(|i| format!("configured-{i}"))
        .stack_size(1 << 20)
        .breadth_first()
        .start_handler(move |_| {
            s.fetch_add(1, Ordering::SeqCst);
        })
        .exit_handler(move |_| {
            e.fetch_add(1, Ordering::SeqCst);
        })
        .panic_handler(move |_| {
            p.fetch_add(1, Ordering::SeqCst);
        })
        .build()
        .unwrap();
    assert_eq!(pool.current_num_threads(), 3);
    for i in 0..3 {
        let name = pool
            .install_on(i, || std::thread::current().name().map(String::from))
            .unwrap();
        assert_eq!(name.as_deref(), Some(format!("configured-{i}").as_str()));
    }
    pool.spawn(|| panic!("to the configured handler"));
    while panics.load(Ordering::SeqCst) == 0 {
        std::thread::yield_now();
    }
    assert_eq!(started.load(Ordering::SeqCst), 3);
    pool.shutdown();
    assert_eq!(exited.load(Ordering::SeqCst), 3);
    assert_eq!(panics.load(Ordering::SeqCst), 1);

    let pool = Pool::new(threadlab::Configuration::new().threads(2)).unwrap();
    assert_eq!(pool.current_num_threads(), 2);
    // 0 means the default count, as for the builder.
    let pool = threadlab::Configuration::new().threads(0).build().unwrap();
    assert!(pool.current_num_threads() >= 1);
    // `Builder::default()` needs no annotation of its spawn type.
    let pool = threadlab::Builder::default().threads(1).build().unwrap();
    assert_eq!(pool.current_num_threads(), 1);
}

/// Two pools broadcast into each other: from a worker of the first, every worker of the second
/// broadcasts back into the first, whose waiting worker serves its part (it waits as a `join`
/// does, running its pool's work), so every call runs once. A broken wait hangs: a watchdog
/// turns that into a failure.
#[test]
fn broadcasts_into_each_other_finish() {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let pool1 = Pool::builder().threads(3).build().unwrap();
        let pool2 = Pool::builder().threads(4).build().unwrap();
        let count = AtomicUsize::new(0);
        let inner = pool1.install(|| {
            pool2.broadcast(|_| {
                pool1.broadcast(|ctx| {
                    count.fetch_add(1, Ordering::Relaxed);
                    ctx.index()
                })
            })
        });
        assert_eq!(inner, vec![vec![0, 1, 2]; 4]);
        tx.send(count.into_inner()).unwrap();
    });
    let calls = rx
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("the broadcasts into each other did not finish");
    assert_eq!(calls, 3 * 4);
}
