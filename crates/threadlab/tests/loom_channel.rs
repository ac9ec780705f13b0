//! Loom models of `threadlab::channel` (`src/channel/`): a sender and a receiver arriving at
//! once on a rendezvous channel, a close while the other side waits, and a `send` or `recv`
//! future dropped while it waits. In every interleaving each value is received once, or given
//! back to its sender, or dropped once — never lost, never twice. Run by CI with
//! `RUSTFLAGS="--cfg loom"`.
//!
//! The channel's lock, its `Arc` and the blocking ends' park/unpark are loom's under
//! `--cfg loom` (through the crate's `loom` facade), so loom explores every order of their
//! operations.
#![cfg(loom)]

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Wake, Waker};

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::Arc;
use loom::thread;
use threadlab::channel::{bounded, RecvError, TryRecvError, TrySendError};

mod loom_support;
use loom_support::model;

/// A value that counts its drops.
struct Counted(u32, Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.1.fetch_add(1, Ordering::SeqCst);
    }
}

/// A waker that does nothing: the models poll a future once and then drop it.
struct Nothing;

impl Wake for Nothing {
    fn wake(self: std::sync::Arc<Self>) {}
}

fn poll_once<F: Future + Unpin>(fut: &mut F) -> Poll<F::Output> {
    let waker = Waker::from(std::sync::Arc::new(Nothing));
    Pin::new(fut).poll(&mut Context::from_waker(&waker))
}

#[test]
fn a_sender_and_a_receiver_arrive_at_once() {
    model(|| {
        let (tx, rx) = bounded::<u32>(0);
        let sender = thread::spawn(move || tx.send_blocking(7).is_ok());
        assert_eq!(rx.recv_blocking(), Ok(7));
        assert!(sender.join().unwrap());
    });
}

#[test]
fn the_senders_close_while_a_receiver_waits() {
    model(|| {
        let (tx, rx) = bounded::<u32>(0);
        let receiver = thread::spawn(move || rx.recv_blocking());
        // Succeeds only if the receiver already waits, and then the receiver has the value.
        let sent = tx.try_send(1).is_ok();
        drop(tx);
        let got = receiver.join().unwrap();
        if sent {
            assert_eq!(got, Ok(1));
        } else {
            assert_eq!(got, Err(RecvError));
        }
    });
}

#[test]
fn the_receivers_close_while_a_sender_waits() {
    model(|| {
        let drops = Arc::new(AtomicUsize::new(0));
        let (tx, rx) = bounded::<Counted>(0);
        let d = Arc::clone(&drops);
        let sender = thread::spawn(move || match tx.send_blocking(Counted(1, d)) {
            Ok(()) => false,
            Err(back) => {
                assert_eq!(back.0 .0, 1);
                true // the value came back (and is dropped here)
            }
        });
        let received = rx.try_recv().ok();
        drop(rx);
        let refused = sender.join().unwrap();
        // Exactly one of: received by the receiver, given back to the sender.
        assert_ne!(received.is_some(), refused);
        drop(received);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    });
}

#[test]
fn a_pending_recv_dropped_while_a_sender_arrives() {
    model(|| {
        let (tx, rx) = bounded::<u32>(0);
        let sender = thread::spawn(move || match tx.try_send(5) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) => false,
            Err(TrySendError::Disconnected(_)) => unreachable!("the receiver lives"),
        });
        let mut fut = rx.recv();
        let early = poll_once(&mut fut);
        drop(fut);
        let sent = sender.join().unwrap();
        // The value was either received by the poll, or left in the channel by the dropped
        // future, or never sent (no receiver waited when the sender looked).
        let later = rx.try_recv();
        match (sent, early) {
            (true, Poll::Ready(got)) => {
                assert_eq!(got, Ok(5));
                assert_eq!(later, Err(TryRecvError::Disconnected));
            }
            (true, Poll::Pending) => assert_eq!(later, Ok(5)),
            (false, Poll::Pending) => assert_eq!(later, Err(TryRecvError::Disconnected)),
            // The sender had given up and dropped its end before the poll: closed.
            (false, Poll::Ready(got)) => assert_eq!(got, Err(RecvError)),
        }
    });
}

#[test]
fn a_pending_send_dropped_while_a_receiver_arrives() {
    model(|| {
        let drops = Arc::new(AtomicUsize::new(0));
        let (tx, rx) = bounded::<Counted>(0);
        let receiver = thread::spawn(move || rx.try_recv().ok().map(|v| v.0));
        let mut fut = tx.send(Counted(3, Arc::clone(&drops)));
        let early = poll_once(&mut fut);
        drop(fut);
        let received = receiver.join().unwrap();
        // Exactly one of: the receiver took the value (the send waited, then the receiver came);
        // the poll found the receiver gone and gave it back; the cancelled send dropped it.
        match early {
            Poll::Ready(Ok(())) => panic!("a rendezvous send completed with no receiver waiting"),
            Poll::Ready(Err(back)) => {
                assert_eq!(received, None);
                assert_eq!(drops.load(Ordering::SeqCst), 0);
                drop(back);
            }
            Poll::Pending => assert!(received.is_none() || received == Some(3)),
        }
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    });
}

#[test]
fn a_filled_recv_dropped_passes_the_value_to_another_receiver() {
    model(|| {
        let (tx, rx) = bounded::<u32>(0);
        let rx2 = rx.clone();
        let other = thread::spawn(move || rx2.recv_blocking());
        let mut fut = rx.recv();
        let early = poll_once(&mut fut);
        let sent = tx.try_send(9).is_ok();
        drop(fut);
        drop(tx);
        let by_other = other.join().unwrap();
        let left = rx.try_recv();
        // Sent: exactly one of the other receiver or the channel has it (the dropped future
        // passed it on); not sent: nobody has it.
        let copies = [by_other == Ok(9), left == Ok(9)]
            .iter()
            .filter(|&&x| x)
            .count();
        assert!(early.is_pending());
        assert_eq!(copies, usize::from(sent));
    });
}
