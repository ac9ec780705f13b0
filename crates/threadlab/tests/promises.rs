//! The runtime's promises under hostile use: a panicking `Drop` never kills
//! a worker, a yielding `block_on` lets queued work run, a future woken after its pool was
//! dropped is cancelled and its handle says so, a `threadlab::sync::Mutex` locked again by its
//! holder panics instead of hanging, and an impossible thread count is refused by `build()`.
//! Every test runs under the deadlock watchdog, so a regression fails instead of hanging.

mod pool_support;

use std::future::{poll_fn, Future};
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use pool_support::{panic_message, watchdog, watched_pool};
use threadlab::Pool;

/// A value whose `Drop` panics (once it is dropped, it counts).
struct Bomb(Arc<AtomicUsize>);

impl Drop for Bomb {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
        panic!("Bomb::drop panics");
    }
}

/// A future that never completes and never keeps its waker; its `Drop` panics.
struct PendingBomb(#[allow(dead_code)] Bomb);

impl Future for PendingBomb {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        Poll::Pending
    }
}

/// Checks that every worker of `pool` still runs tasks addressed to it.
fn every_worker_alive(pool: &Pool) {
    for w in 0..pool.current_num_threads() {
        assert_eq!(
            pool.install_on(w, threadlab::current_thread_index).unwrap(),
            Some(w)
        );
    }
}

#[test]
fn a_payload_whose_drop_panics_does_not_kill_the_worker() {
    watched_pool(2, |pool| {
        let drops = Arc::new(AtomicUsize::new(0));
        for w in 0..2 {
            let d = Arc::clone(&drops);
            pool.spawn_on(w, move || panic::panic_any(Bomb(d))).unwrap();
        }
        every_worker_alive(&pool);
        let ran = Arc::new(AtomicUsize::new(0));
        for w in 0..2 {
            let r = Arc::clone(&ran);
            pool.spawn_on(w, move || {
                r.fetch_add(1, Ordering::SeqCst);
            })
            .unwrap();
        }
        let report = pool.shutdown();
        assert_eq!(
            ran.load(Ordering::SeqCst),
            2,
            "tasks after the bad drop were lost"
        );
        assert_eq!(drops.load(Ordering::SeqCst), 2, "each payload dropped once");
        // The task's panic and its payload's panicking drop are both reported.
        assert_eq!(report.panicked_tasks, 4);
    });
}

#[test]
fn a_panic_handler_that_throws_a_bomb_does_not_kill_the_worker() {
    watchdog(|| {
        let drops = Arc::new(AtomicUsize::new(0));
        let d = Arc::clone(&drops);
        let pool = Pool::builder()
            .threads(2)
            .panic_handler(move |payload| {
                // The tasks' own panics are answered with a bomb; the bombs' (a `&str` of
                // their own) are accepted.
                if payload.downcast_ref::<&str>() == Some(&"a task panics") {
                    panic::panic_any(Bomb(Arc::clone(&d)))
                }
            })
            .build()
            .unwrap();
        for w in 0..2 {
            pool.spawn_on(w, || panic!("a task panics")).unwrap();
        }
        every_worker_alive(&pool);
        let report = pool.shutdown();
        assert_eq!(drops.load(Ordering::SeqCst), 2);
        // Each task's panic, and the panic of dropping the bomb its handler threw.
        assert_eq!(report.panicked_tasks, 4);
    });
}

#[test]
fn a_detached_future_whose_drop_panics_does_not_kill_the_worker() {
    watched_pool(2, |pool| {
        let drops = Arc::new(AtomicUsize::new(0));
        for _ in 0..4 {
            drop(pool.spawn_future(PendingBomb(Bomb(Arc::clone(&drops)))));
        }
        every_worker_alive(&pool);
        let report = pool.shutdown();
        assert_eq!(drops.load(Ordering::SeqCst), 4);
        assert_eq!(report.panicked_tasks, 4, "each panicking drop is counted");
    });
}

#[test]
fn dropping_a_join_handle_whose_output_panics_on_drop_reports_it() {
    watched_pool(1, |pool| {
        let drops = Arc::new(AtomicUsize::new(0));
        let d = Arc::clone(&drops);
        let h = pool.spawn_future(async move { Bomb(d) });
        while !h.is_finished() {
            std::thread::yield_now();
        }
        drop(h); // must not unwind into the caller
                 // The last reference may be the worker's or the handle's: count after the shutdown.
        assert_eq!(pool.shutdown().panicked_tasks, 1);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    });
}

/// Yields once: wakes itself, then returns `Pending`.
async fn yield_now() {
    let mut yielded = false;
    poll_fn(|cx| {
        if yielded {
            Poll::Ready(())
        } else {
            yielded = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    })
    .await
}

#[test]
fn block_on_that_yields_lets_the_one_worker_run_its_queue() {
    watched_pool(1, |pool| {
        let (out, yields) = pool.block_on(async {
            let done = Arc::new(AtomicBool::new(false));
            let d = Arc::clone(&done);
            threadlab::spawn(move || d.store(true, Ordering::SeqCst));
            let h = threadlab::spawn_future(async { 7 });
            let mut yields = 0;
            while !(done.load(Ordering::SeqCst) && h.is_finished()) {
                yield_now().await;
                yields += 1;
            }
            (h.await, yields)
        });
        assert_eq!(out, 7);
        assert!(yields >= 1);
    });
}

/// A future that parks its waker in `slot` and stays pending; counts its drops.
struct Parked {
    slot: Arc<Mutex<Option<Waker>>>,
    drops: Arc<AtomicUsize>,
    bomb: bool,
}

impl Future for Parked {
    type Output = u32;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u32> {
        *self.slot.lock().unwrap() = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl Drop for Parked {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
        if self.bomb {
            panic!("Parked::drop panics");
        }
    }
}

fn wake_after_shutdown(bomb: bool) {
    let pool = Pool::builder().threads(2).build().unwrap();
    let slot = Arc::new(Mutex::new(None::<Waker>));
    let drops = Arc::new(AtomicUsize::new(0));
    let h = pool.spawn_future(Parked {
        slot: Arc::clone(&slot),
        drops: Arc::clone(&drops),
        bomb,
    });
    while slot.lock().unwrap().is_none() {
        std::thread::yield_now();
    }
    pool.shutdown();
    let waker = slot.lock().unwrap().take().unwrap();
    waker.wake();
    assert_eq!(
        drops.load(Ordering::SeqCst),
        1,
        "the cancelled future is dropped once"
    );
    let err = panic::catch_unwind(AssertUnwindSafe(|| h.join())).unwrap_err();
    let msg = panic_message(&*err);
    assert!(msg.contains("cancelled"), "join() says why: {msg:?}");
}

#[test]
fn a_future_woken_after_its_pool_was_shut_down_is_cancelled() {
    watchdog(|| wake_after_shutdown(false));
}

#[test]
fn a_cancelled_future_whose_drop_panics_is_still_cancelled() {
    watchdog(|| wake_after_shutdown(true));
}

#[test]
fn a_mutex_locked_again_inside_a_scope_wait_panics_with_its_name() {
    watchdog(|| {
        let messages = Arc::new(Mutex::new(Vec::<String>::new()));
        let m = Arc::clone(&messages);
        let pool = Pool::builder()
            .threads(2)
            .panic_handler(move |p| {
                m.lock().unwrap().push(panic_message(&*p));
            })
            .build()
            .unwrap();
        let lock = Arc::new(threadlab::sync::Mutex::named("the-books", 0u32));
        let stolen = Arc::new(AtomicBool::new(false));
        let l = Arc::clone(&lock);
        pool.install_on(0, || {
            let _held = l.lock();
            // Queued for this worker: it runs while worker 0 waits inside `scope` below.
            let inner = Arc::clone(&l);
            pool.spawn_on(0, move || *inner.lock() += 1).unwrap();
            // A scope's task is queued at once (a `join`'s second half only when a heartbeat
            // hands it out), so the wait below is certain to happen.
            threadlab::scope(|s| {
                s.spawn(|_| {
                    stolen.store(true, Ordering::SeqCst);
                    // Keep the scope open until worker 0 waits in it and ran its inbox.
                    while pool.metrics().panicked_tasks == 0 {
                        std::thread::yield_now();
                    }
                });
                // Wait until worker 1 took the task, so that this worker must wait for it.
                while !stolen.load(Ordering::SeqCst) {
                    std::hint::spin_loop();
                }
            });
        })
        .unwrap();
        pool.shutdown();
        let messages = messages.lock().unwrap();
        assert_eq!(messages.len(), 1, "{messages:?}");
        assert!(messages[0].contains("the-books"), "{}", messages[0]);
        assert!(messages[0].contains("join"), "{}", messages[0]);
    });
}

#[test]
#[cfg_attr(miri, ignore = "Miri cannot read the system's limits")]
fn an_impossible_thread_count_is_refused_by_build() {
    watchdog(|| {
        let err = Pool::builder().threads(1_000_000).build().unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("1000000"), "{msg}");
        // A count the system can give still builds.
        assert!(Pool::builder().threads(4).build().is_ok());
    });
}
