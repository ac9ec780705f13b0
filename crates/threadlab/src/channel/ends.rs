//! The channel's two ends: [`Sender`] and [`Receiver`] (both `Clone`), their `send`/`recv`
//! futures, and the blocking forms, which poll the same futures and park the calling thread
//! between polls.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::PoisonError;
use std::task::{Context, Poll, Wake, Waker};

use super::error::{RecvError, SendError, TryRecvError, TrySendError};
use super::slots::{Core, Done, Step};
use crate::loom::sync::{Arc, Mutex, MutexGuard};
use crate::loom::thread;

/// What both ends share.
pub(super) struct Chan<T> {
    core: Mutex<Core<T>>,
}

impl<T> Chan<T> {
    pub(super) fn new(cap: usize) -> Arc<Self> {
        Arc::new(Chan {
            core: Mutex::new(Core::new(cap)),
        })
    }

    /// The lock. No user code runs under it (wakers and drops wait for [`Done::finish`]), so
    /// it is never poisoned by a panic of ours; a poisoned lock is taken anyway.
    fn lock(&self) -> MutexGuard<'_, Core<T>> {
        self.core.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The sending end of a channel; clone it for more producers.
///
/// ```
/// let (tx, rx) = threadlab::channel::unbounded();
/// let tx2 = tx.clone();
/// tx.send_blocking(1).unwrap();
/// tx2.send_blocking(2).unwrap();
/// assert_eq!(rx.recv_blocking(), Ok(1));
/// assert_eq!(rx.recv_blocking(), Ok(2));
/// ```
pub struct Sender<T> {
    chan: Arc<Chan<T>>,
}

/// The receiving end of a channel; clone it for more consumers (each value goes to one).
///
/// ```
/// let (tx, rx) = threadlab::channel::bounded(1);
/// let rx2 = rx.clone();
/// tx.send_blocking("a").unwrap();
/// assert_eq!(rx2.recv_blocking(), Ok("a"));
/// drop(tx);
/// assert!(rx.recv_blocking().is_err());
/// ```
pub struct Receiver<T> {
    chan: Arc<Chan<T>>,
}

/// The channel's state, not its values (`T` need not be `Debug`): how many are queued and
/// whether it is closed.
impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender")
            .field("len", &self.len())
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}

/// The channel's state, not its values: how many are queued and whether it is closed.
impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Receiver")
            .field("len", &self.len())
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}

pub(super) fn pair<T>(cap: usize) -> (Sender<T>, Receiver<T>) {
    let chan = Chan::new(cap);
    (
        Sender {
            chan: Arc::clone(&chan),
        },
        Receiver { chan },
    )
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.chan.lock().senders += 1;
        Sender {
            chan: Arc::clone(&self.chan),
        }
    }
}

impl<T> Clone for Receiver<T> {
    fn clone(&self) -> Self {
        self.chan.lock().receivers += 1;
        Receiver {
            chan: Arc::clone(&self.chan),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let wakers = {
            let mut core = self.chan.lock();
            core.senders -= 1;
            if core.senders > 0 {
                return;
            }
            core.close_senders()
        };
        wakers.into_iter().for_each(Waker::wake);
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let (wakers, buffered) = {
            let mut core = self.chan.lock();
            core.receivers -= 1;
            if core.receivers > 0 {
                return;
            }
            core.close_receivers()
        };
        wakers.into_iter().for_each(Waker::wake);
        drop(buffered);
    }
}

impl<T> Sender<T> {
    /// Sends `value` if that needs no waiting: into a waiting receiver's hands or a free
    /// buffer place.
    ///
    /// ```
    /// let (tx, rx) = threadlab::channel::bounded(1);
    /// assert!(tx.try_send(1).is_ok());
    /// assert!(tx.try_send(2).is_err()); // full
    /// assert_eq!(rx.try_recv(), Ok(1));
    /// ```
    pub fn try_send(&self, value: T) -> Result<(), TrySendError<T>> {
        let done = self.chan.lock().try_send(value)?;
        done.finish();
        Ok(())
    }

    /// Sends `value`, waiting (as a future) for room or, on `bounded(0)`, for a receiver.
    /// Dropping the future before it completes takes the value back out of the channel,
    /// unless a receiver already has it.
    ///
    /// ```
    /// let (tx, rx) = threadlab::channel::bounded(0);
    /// let h = threadlab::spawn_future(async move { tx.send(5).await });
    /// assert_eq!(rx.recv_blocking(), Ok(5));
    /// assert!(h.join().is_ok());
    /// ```
    pub fn send(&self, value: T) -> SendFuture<'_, T> {
        SendFuture {
            chan: &self.chan,
            value: Some(value),
            slot: None,
        }
    }

    /// Sends `value`, blocking this thread until there is room or a receiver takes it. On a
    /// threadlab worker this blocks the worker: use [`send`](Sender::send) in tasks.
    ///
    /// ```
    /// let (tx, rx) = threadlab::channel::bounded(0);
    /// let t = std::thread::spawn(move || rx.recv_blocking());
    /// tx.send_blocking(9).unwrap();
    /// assert_eq!(t.join().unwrap(), Ok(9));
    /// ```
    pub fn send_blocking(&self, value: T) -> Result<(), SendError<T>> {
        match self.try_send(value) {
            Ok(()) => Ok(()),
            Err(TrySendError::Disconnected(v)) => Err(SendError(v)),
            Err(TrySendError::Full(v)) => block(self.send(v)),
        }
    }

    /// Values waiting in the buffer now.
    ///
    /// ```
    /// let (tx, _rx) = threadlab::channel::unbounded();
    /// tx.send_blocking(()).unwrap();
    /// assert_eq!(tx.len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.chan.lock().len()
    }

    /// True if no value waits in the buffer.
    ///
    /// ```
    /// let (tx, _rx) = threadlab::channel::unbounded::<u8>();
    /// assert!(tx.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True if every receiver is gone (a send would fail).
    ///
    /// ```
    /// let (tx, rx) = threadlab::channel::unbounded::<u8>();
    /// drop(rx);
    /// assert!(tx.is_closed());
    /// ```
    pub fn is_closed(&self) -> bool {
        self.chan.lock().receivers == 0
    }
}

impl<T> Receiver<T> {
    /// Receives a value if one is there: the buffer's head, or a waiting sender's value.
    ///
    /// ```
    /// use threadlab::channel::{unbounded, TryRecvError};
    /// let (tx, rx) = unbounded();
    /// tx.send_blocking(3).unwrap();
    /// assert_eq!(rx.try_recv(), Ok(3));
    /// assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    /// ```
    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        let (value, done) = self.chan.lock().try_recv()?;
        done.finish();
        Ok(value)
    }

    /// Receives a value, waiting (as a future) for one. Fails once the channel is empty and
    /// every sender is gone. Dropping the future after a sender wrote a value for it passes
    /// that value on to another receiver (or back to the buffer): it is never lost.
    ///
    /// ```
    /// let (tx, rx) = threadlab::channel::bounded(0);
    /// let h = threadlab::spawn_future(async move { rx.recv().await });
    /// tx.send_blocking(4).unwrap();
    /// assert_eq!(h.join(), Ok(4));
    /// ```
    pub fn recv(&self) -> RecvFuture<'_, T> {
        RecvFuture {
            chan: &self.chan,
            slot: None,
        }
    }

    /// Receives a value, blocking this thread until one comes. On a threadlab worker this
    /// blocks the worker: use [`recv`](Receiver::recv) in tasks.
    ///
    /// ```
    /// let (tx, rx) = threadlab::channel::unbounded();
    /// std::thread::spawn(move || tx.send_blocking(1u8).unwrap());
    /// assert_eq!(rx.recv_blocking(), Ok(1));
    /// ```
    pub fn recv_blocking(&self) -> Result<T, RecvError> {
        match self.try_recv() {
            Ok(v) => Ok(v),
            Err(TryRecvError::Disconnected) => Err(RecvError),
            Err(TryRecvError::Empty) => block(self.recv()),
        }
    }

    /// Values waiting in the buffer now.
    ///
    /// ```
    /// let (tx, rx) = threadlab::channel::bounded(2);
    /// tx.try_send(1).unwrap();
    /// assert_eq!(rx.len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.chan.lock().len()
    }

    /// True if no value waits in the buffer.
    ///
    /// ```
    /// let (_tx, rx) = threadlab::channel::bounded::<u8>(2);
    /// assert!(rx.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True if every sender is gone (values still buffered can be received).
    ///
    /// ```
    /// let (tx, rx) = threadlab::channel::unbounded::<u8>();
    /// drop(tx);
    /// assert!(rx.is_closed());
    /// ```
    pub fn is_closed(&self) -> bool {
        self.chan.lock().senders == 0
    }
}

/// The future of [`Sender::send`].
#[must_use = "a send future does nothing unless awaited"]
pub struct SendFuture<'a, T> {
    chan: &'a Chan<T>,
    value: Option<T>,
    slot: Option<usize>,
}

/// Whether the value is still held by the future (not yet handed to the channel) and whether
/// the future waits in a slot of the channel's waiters.
impl<T> fmt::Debug for SendFuture<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SendFuture")
            .field("holds_value", &self.value.is_some())
            .field("waiting", &self.slot.is_some())
            .finish_non_exhaustive()
    }
}

// The future is never pinned structurally: its value moves into the channel by value.
impl<T> Unpin for SendFuture<'_, T> {}

impl<T> Future for SendFuture<'_, T> {
    type Output = Result<(), SendError<T>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let (step, done) = this
            .chan
            .lock()
            .poll_send(this.slot, &mut this.value, cx.waker());
        done.finish();
        match step {
            Step::Waiting(i) => {
                this.slot = Some(i);
                Poll::Pending
            }
            Step::Ready(r) => {
                this.slot = None;
                Poll::Ready(r.map_err(SendError))
            }
        }
    }
}

impl<T> Drop for SendFuture<'_, T> {
    fn drop(&mut self) {
        if let Some(i) = self.slot.take() {
            let done = self.chan.lock().cancel_send(i);
            done.finish();
        }
    }
}

/// The future of [`Receiver::recv`].
#[must_use = "a receive future does nothing unless awaited"]
pub struct RecvFuture<'a, T> {
    chan: &'a Chan<T>,
    slot: Option<usize>,
}

/// Whether the future waits in a slot of the channel's waiters.
impl<T> fmt::Debug for RecvFuture<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecvFuture")
            .field("waiting", &self.slot.is_some())
            .finish_non_exhaustive()
    }
}

impl<T> Future for RecvFuture<'_, T> {
    type Output = Result<T, RecvError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let (step, done) = self.chan.lock().poll_recv(self.slot, cx.waker());
        done.finish();
        match step {
            Step::Waiting(i) => {
                self.slot = Some(i);
                Poll::Pending
            }
            Step::Ready(r) => {
                self.slot = None;
                Poll::Ready(r.map_err(|()| RecvError))
            }
        }
    }
}

impl<T> Drop for RecvFuture<'_, T> {
    fn drop(&mut self) {
        if let Some(i) = self.slot.take() {
            let done: Done<T> = self.chan.lock().cancel_recv(i);
            done.finish();
        }
    }
}

/// Wakes a parked thread.
struct Unparker(thread::Thread);

impl Wake for Unparker {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &std::sync::Arc<Self>) {
        self.0.unpark();
    }
}

/// Polls `fut` on this thread, parking between polls until its waker unparks the thread.
fn block<F: Future + Unpin>(mut fut: F) -> F::Output {
    let waker = Waker::from(std::sync::Arc::new(Unparker(thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(out) = Pin::new(&mut fut).poll(&mut cx) {
            return out;
        }
        // A wake before this park leaves the token, so the park returns at once; a spurious
        // return only costs another poll.
        thread::park();
    }
}
