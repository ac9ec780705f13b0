//! Channels whose hand-off to a waiting task goes through the scheduler's run-next slot.
//!
//! [`bounded(n)`](bounded) (including `bounded(0)`, a rendezvous: every send meets a receive)
//! and [`unbounded()`](unbounded) make a multi-producer, multi-consumer channel with async ends
//! ([`Sender::send`], [`Receiver::recv`]), blocking ends (`send_blocking`, `recv_blocking`) and
//! non-waiting ones (`try_send`, `try_recv`). The channel closes when every sender or every
//! receiver is dropped; a failed send gives its value back ([`SendError`]).
//!
//! # The algorithm
//!
//! The design is Go's `chan` (runtime/chan.go; the code here is our own): one lock over a
//! ring buffer and two queues of waiters, where a waiter is a slot that the other side fills
//! or empties for it (`slots.rs`). A sender that finds a receiver waiting writes the value
//! straight into that receiver's slot, and a receiver that finds a sender waiting takes the
//! value straight from the sender's slot; the waiting side then only has to be woken, and
//! when it runs its value is already there (no second trip through the lock's contended
//! state, no retry). Go's unbuffered channel does exactly this between goroutines.
//!
//! The second half of Go's trick is where the woken goroutine goes: `goready` puts it in the
//! current P's `runnext`, so the receiver runs right after the sender on the same thread. Here
//! that is the task's waker: a threadlab task woken from one of its pool's workers goes to
//! that worker's run-next slot (`crate::pool::run_next`; still stealable by an idle worker
//! after a short grace), so a producer and a consumer on one pool hand values over back to
//! back on one worker with no wake-up of another thread. The channel itself knows no
//! executor: woken from elsewhere, or with a Tokio or `futures` waker, it is an ordinary
//! correct channel, and the blocking ends park the calling thread.
//!
//! Every waker is woken, and every value dropped, after the lock is released, so no user
//! code runs under it. A `send` future dropped while it waits takes its value back (dropped
//! with the future) unless a receiver already took it; a `recv` future dropped after a value
//! was written for it passes the value on to the next waiting receiver or back to the head of
//! the buffer, so cancellation neither loses nor duplicates a value (`tests/loom_channel.rs`
//! checks these races).
//!
//! ```
//! let pool = threadlab::Pool::builder().threads(2).build().unwrap();
//! let (tx, rx) = threadlab::channel::bounded::<u64>(0);
//! let producer = pool.spawn_future(async move {
//!     for i in 0..100 {
//!         tx.send(i).await.unwrap();
//!     }
//! });
//! let consumer = pool.spawn_future(async move {
//!     let mut sum = 0;
//!     while let Ok(v) = rx.recv().await {
//!         sum += v;
//!     }
//!     sum
//! });
//! producer.join();
//! assert_eq!(consumer.join(), 4950);
//! ```

mod ends;
mod error;
mod slots;

pub use ends::{Receiver, RecvFuture, SendFuture, Sender};
pub use error::{RecvError, SendError, TryRecvError, TrySendError};

/// A channel holding up to `cap` values; `bounded(0)` holds none, so every send waits for a
/// receiver (a rendezvous).
///
/// ```
/// let (tx, rx) = threadlab::channel::bounded(2);
/// tx.try_send(1).unwrap();
/// tx.try_send(2).unwrap();
/// assert!(tx.try_send(3).is_err());
/// assert_eq!(rx.recv_blocking(), Ok(1));
/// ```
pub fn bounded<T>(cap: usize) -> (Sender<T>, Receiver<T>) {
    ends::pair(cap)
}

/// A channel with no bound: a send never waits.
///
/// ```
/// let (tx, rx) = threadlab::channel::unbounded();
/// for i in 0..1000 {
///     tx.try_send(i).unwrap();
/// }
/// assert_eq!(rx.len(), 1000);
/// ```
pub fn unbounded<T>() -> (Sender<T>, Receiver<T>) {
    ends::pair(usize::MAX)
}
