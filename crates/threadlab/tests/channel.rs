//! `threadlab::channel`: every value sent is received once or dropped once (counted), on the
//! pool, on plain threads and with futures polled by hand; close and cancellation.

mod task_support;

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use task_support::{on_every_policy, watchdog, watched_pool};
use threadlab::channel::{bounded, unbounded, RecvError, TryRecvError, TrySendError};

/// Scale for Miri, which runs about a thousand times slower.
fn n(full: u64) -> u64 {
    if cfg!(miri) {
        (full / 100).max(20)
    } else {
        full
    }
}

/// A value that counts its drops.
struct Counted(u64, Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.1.fetch_add(1, Ordering::SeqCst);
    }
}

/// A waker that counts its wakes.
#[derive(Default)]
struct CountingWaker(AtomicUsize);

impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Runs `f` with a context whose waker is a [`CountingWaker`], and that waker.
fn with_counting_waker(f: impl FnOnce(&mut Context<'_>, &CountingWaker)) {
    let waker = Arc::new(CountingWaker::default());
    let w = Waker::from(Arc::clone(&waker));
    f(&mut Context::from_waker(&w), &waker);
}

#[test]
fn rendezvous_on_the_pool_under_every_policy() {
    on_every_policy(2, |pool, policy| {
        // Every value is one handoff (the sender parks until the receiver takes it, or the
        // receiver until a sender comes): under Miri 20 per policy, the least `n` gives, each
        // the same path.
        let m = if cfg!(miri) { 20 } else { 20_000 };
        let (tx, rx) = bounded::<u64>(0);
        let p = pool.spawn_future(async move {
            for i in 0..m {
                tx.send(i).await.unwrap();
            }
        });
        let c = pool.spawn_future(async move {
            let (mut sum, mut count) = (0u64, 0u64);
            while let Ok(v) = rx.recv().await {
                sum += v;
                count += 1;
            }
            (sum, count)
        });
        p.join();
        assert_eq!(c.join(), (m * (m - 1) / 2, m), "{policy:?}");
    });
}

#[test]
fn blocking_mpmc_between_threads_delivers_each_value_once() {
    watchdog(|| {
        for cap in [0, 1, 3] {
            let per = n(2_000);
            let (tx, rx) = bounded::<u64>(cap);
            let seen = Arc::new(Mutex::new(vec![0u8; (3 * per) as usize]));
            let producers: Vec<_> = (0..3)
                .map(|p| {
                    let tx = tx.clone();
                    std::thread::spawn(move || {
                        for i in 0..per {
                            tx.send_blocking(p * per + i).unwrap();
                        }
                    })
                })
                .collect();
            drop(tx);
            let consumers: Vec<_> = (0..2)
                .map(|_| {
                    let rx = rx.clone();
                    let seen = Arc::clone(&seen);
                    std::thread::spawn(move || {
                        while let Ok(v) = rx.recv_blocking() {
                            seen.lock().unwrap()[v as usize] += 1;
                        }
                    })
                })
                .collect();
            for h in producers.into_iter().chain(consumers) {
                h.join().unwrap();
            }
            assert!(seen.lock().unwrap().iter().all(|&k| k == 1), "cap {cap}");
            assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
        }
    });
}

#[test]
fn try_forms_and_close() {
    let (tx, rx) = bounded::<u32>(1);
    assert_eq!(tx.try_send(1), Ok(()));
    assert_eq!(tx.try_send(2), Err(TrySendError::Full(2)));
    assert_eq!(rx.try_recv(), Ok(1));
    assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    tx.try_send(3).unwrap();
    drop(tx);
    assert!(rx.is_closed());
    // Buffered values outlive the senders.
    assert_eq!(rx.recv_blocking(), Ok(3));
    assert_eq!(rx.recv_blocking(), Err(RecvError));

    let (tx, rx) = unbounded::<u32>();
    drop(rx);
    assert_eq!(tx.try_send(4), Err(TrySendError::Disconnected(4)));
    assert_eq!(tx.send_blocking(5).unwrap_err().into_inner(), 5);
}

#[test]
fn a_value_buffered_at_close_is_dropped_once() {
    let drops = Arc::new(AtomicUsize::new(0));
    let (tx, rx) = bounded(4);
    for i in 0..3 {
        tx.try_send(Counted(i, Arc::clone(&drops))).unwrap();
    }
    let first = rx.try_recv().unwrap();
    assert_eq!(first.0, 0);
    drop(rx);
    // The receivers are gone: the two still buffered are dropped then, once each.
    assert_eq!(drops.load(Ordering::SeqCst), 2);
    drop(first);
    drop(tx);
    assert_eq!(drops.load(Ordering::SeqCst), 3);
}

#[test]
fn waiting_receivers_and_senders_learn_of_the_close() {
    with_counting_waker(|cx, waker| {
        let (tx, rx) = bounded::<u32>(0);
        let mut recv = pin!(rx.recv());
        assert!(recv.as_mut().poll(cx).is_pending());
        drop(tx);
        assert_eq!(waker.0.load(Ordering::SeqCst), 1);
        assert_eq!(recv.as_mut().poll(cx), Poll::Ready(Err(RecvError)));

        let (tx, rx) = bounded::<u32>(0);
        let mut send = pin!(tx.send(8));
        assert!(send.as_mut().poll(cx).is_pending());
        drop(rx);
        assert_eq!(waker.0.load(Ordering::SeqCst), 2);
        match send.as_mut().poll(cx) {
            Poll::Ready(Err(e)) => assert_eq!(e.into_inner(), 8),
            other => panic!("expected the value back, got {other:?}"),
        }
    });
}

#[test]
fn the_sender_writes_into_the_waiting_receivers_slot() {
    with_counting_waker(|cx, waker| {
        let (tx, rx) = bounded::<u32>(0);
        let mut recv = pin!(rx.recv());
        assert!(recv.as_mut().poll(cx).is_pending());
        // The receiver waits: a try_send completes at once, into its slot, and wakes it once.
        assert_eq!(tx.try_send(6), Ok(()));
        assert_eq!(waker.0.load(Ordering::SeqCst), 1);
        assert_eq!(tx.try_send(7), Err(TrySendError::Full(7)));
        assert_eq!(recv.as_mut().poll(cx), Poll::Ready(Ok(6)));
    });
}

#[test]
fn a_cancelled_recv_passes_its_value_on() {
    with_counting_waker(|cx, _| {
        let (tx, rx) = bounded::<u32>(0);

        // Two receivers wait; the first is given a value and dropped: the second gets it.
        let mut first = Box::pin(rx.recv());
        let mut second = pin!(rx.recv());
        assert!(first.as_mut().poll(cx).is_pending());
        assert!(second.as_mut().poll(cx).is_pending());
        tx.try_send(1).unwrap();
        drop(first);
        assert_eq!(second.as_mut().poll(cx), Poll::Ready(Ok(1)));

        // One receiver waits, is given a value and dropped: the value stays in the channel.
        let mut only = Box::pin(rx.recv());
        assert!(only.as_mut().poll(cx).is_pending());
        tx.try_send(2).unwrap();
        drop(only);
        assert_eq!(rx.try_recv(), Ok(2));
        assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    });
}

#[test]
fn a_cancelled_send_drops_its_value_once_unless_taken() {
    let drops = Arc::new(AtomicUsize::new(0));
    with_counting_waker(|cx, _| {
        let (tx, rx) = bounded::<Counted>(0);

        let mut send = Box::pin(tx.send(Counted(1, Arc::clone(&drops))));
        assert!(send.as_mut().poll(cx).is_pending());
        drop(send);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        assert!(matches!(rx.try_recv(), Err(TryRecvError::Empty)));

        // Taken by a receiver, then the send future is dropped before it saw it: nothing dropped
        // twice, the receiver has the value.
        let mut send = Box::pin(tx.send(Counted(2, Arc::clone(&drops))));
        assert!(send.as_mut().poll(cx).is_pending());
        let got = rx.try_recv().unwrap();
        assert_eq!(got.0, 2);
        drop(send);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        drop(got);
        assert_eq!(drops.load(Ordering::SeqCst), 2);
    });
}

#[test]
fn a_full_buffer_takes_the_waiting_senders_value_in_order() {
    with_counting_waker(|cx, waker| {
        let (tx, rx) = bounded::<u32>(2);
        tx.try_send(1).unwrap();
        tx.try_send(2).unwrap();
        let mut send = pin!(tx.send(3));
        assert!(send.as_mut().poll(cx).is_pending());
        assert_eq!(rx.try_recv(), Ok(1));
        assert_eq!(waker.0.load(Ordering::SeqCst), 1);
        assert_eq!(send.as_mut().poll(cx), Poll::Ready(Ok(())));
        assert_eq!(rx.try_recv(), Ok(2));
        assert_eq!(rx.try_recv(), Ok(3));
    });
}

#[test]
fn a_pool_task_and_a_plain_thread_meet() {
    watched_pool(2, |pool| {
        let m = n(5_000);
        let (tx, rx) = bounded::<u64>(0);
        let c = pool.spawn_future(async move {
            let mut sum = 0;
            while let Ok(v) = rx.recv().await {
                sum += v;
            }
            sum
        });
        for i in 0..m {
            tx.send_blocking(i).unwrap();
        }
        drop(tx);
        assert_eq!(c.join(), m * (m - 1) / 2);
    });
}
