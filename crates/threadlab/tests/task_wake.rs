//! Wakes from outside the pool, and handles that are dropped (detached) or polled.

mod task_support;

use std::future::poll_fn;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::task::{Poll, Waker};
use std::time::Duration;

use task_support::{on_every_policy, watchdog, watched_pool};
use threadlab::Pool;

/// A one-shot event: a future waits for it, a plain thread fires it.
#[derive(Default)]
struct Event {
    fired: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

impl Event {
    async fn wait(&self) {
        poll_fn(|cx| {
            if self.fired.load(Ordering::Acquire) {
                return Poll::Ready(());
            }
            *self.waker.lock().unwrap() = Some(cx.waker().clone());
            if self.fired.load(Ordering::Acquire) {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await
    }

    fn fire(&self) {
        self.fired.store(true, Ordering::Release);
        if let Some(w) = self.waker.lock().unwrap().take() {
            w.wake();
        }
    }

    /// True once a future registered its waker (it is parked on the event).
    fn has_waiter(&self) -> bool {
        self.waker.lock().unwrap().is_some()
    }
}

fn wait_for_waiter(event: &Event) {
    while !event.has_waiter() {
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn a_future_woken_from_a_plain_thread_runs() {
    on_every_policy(2, |pool, policy| {
        let event = Arc::new(Event::default());
        let e = Arc::clone(&event);
        let h = pool.spawn_future(async move {
            e.wait().await;
            7
        });
        wait_for_waiter(&event);
        assert!(!h.is_finished(), "{policy:?}: finished before the wake");
        let e = Arc::clone(&event);
        std::thread::spawn(move || e.fire()).join().unwrap();
        assert_eq!(h.join(), 7, "{policy:?}");
    });
}

#[test]
fn dropping_a_handle_detaches_and_the_task_still_completes() {
    watched_pool(2, |pool| {
        let event = Arc::new(Event::default());
        let (tx, rx) = mpsc::channel();
        let e = Arc::clone(&event);
        let h = pool.spawn_future(async move {
            e.wait().await;
            tx.send("finished").unwrap();
            vec![1, 2, 3] // an output nobody reads: dropped by the task
        });
        wait_for_waiter(&event);
        drop(h);
        event.fire();
        assert_eq!(
            rx.recv_timeout(Duration::from_secs(30)).unwrap(),
            "finished"
        );
    });
}

#[test]
fn a_handle_awaited_from_another_pool_wakes_its_waiter() {
    watchdog(|| {
        let a = Pool::builder().threads(1).build().unwrap();
        let b = Pool::builder().threads(1).build().unwrap();
        let event = Arc::new(Event::default());
        let e = Arc::clone(&event);
        let h = b.spawn_future(async move {
            e.wait().await;
            "from b"
        });
        let e = Arc::clone(&event);
        std::thread::spawn(move || {
            wait_for_waiter(&e);
            e.fire();
        });
        // A worker of `a` blocks on b's task: it runs a's work meanwhile, and b's worker wakes it.
        assert_eq!(a.block_on(h), "from b");
    });
}

#[test]
fn a_waker_that_outlives_its_task_is_harmless() {
    watched_pool(2, |pool| {
        let kept = Arc::new(Mutex::new(None::<Waker>));
        let k = Arc::clone(&kept);
        let h = pool.spawn_future(poll_fn(move |cx| {
            *k.lock().unwrap() = Some(cx.waker().clone());
            Poll::Ready(3)
        }));
        assert_eq!(h.join(), 3);
        let w = kept.lock().unwrap().take().unwrap();
        w.wake_by_ref(); // complete: nothing happens
        w.wake(); // and the last reference goes
    });
}
