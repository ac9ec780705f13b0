//! The channel's error types: what a send or a receive returns when it cannot complete. A
//! failed send gives the value back, so nothing the user sent is lost by an error.

use std::fmt;

/// A send failed because every [`Receiver`](super::Receiver) is gone; the value comes back.
///
/// ```
/// let (tx, rx) = threadlab::channel::bounded::<u32>(1);
/// drop(rx);
/// let err = tx.send_blocking(7).unwrap_err();
/// assert_eq!(err.into_inner(), 7);
/// ```
#[derive(PartialEq, Eq, Clone, Copy)]
pub struct SendError<T>(pub T);

impl<T> SendError<T> {
    /// The value that was not sent.
    ///
    /// ```
    /// assert_eq!(threadlab::channel::SendError(3).into_inner(), 3);
    /// ```
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> fmt::Debug for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SendError(..)")
    }
}

impl<T> fmt::Display for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("sending on a channel whose receivers are all dropped; the value is returned")
    }
}

impl<T> std::error::Error for SendError<T> {}

/// A [`try_send`](super::Sender::try_send) that could not complete at once; the value comes back.
///
/// ```
/// use threadlab::channel::{bounded, TrySendError};
/// let (tx, _rx) = bounded::<u32>(0);
/// // A rendezvous channel with no receiver waiting: full.
/// assert_eq!(tx.try_send(1), Err(TrySendError::Full(1)));
/// ```
#[derive(PartialEq, Eq, Clone, Copy)]
pub enum TrySendError<T> {
    /// The buffer is full (or, for `bounded(0)`, no receiver is waiting).
    Full(T),
    /// Every receiver is gone.
    Disconnected(T),
}

impl<T> TrySendError<T> {
    /// The value that was not sent.
    ///
    /// ```
    /// assert_eq!(threadlab::channel::TrySendError::Full(5).into_inner(), 5);
    /// ```
    pub fn into_inner(self) -> T {
        match self {
            TrySendError::Full(v) | TrySendError::Disconnected(v) => v,
        }
    }
}

impl<T> fmt::Debug for TrySendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrySendError::Full(_) => f.write_str("Full(..)"),
            TrySendError::Disconnected(_) => f.write_str("Disconnected(..)"),
        }
    }
}

impl<T> fmt::Display for TrySendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrySendError::Full(_) => f.write_str(
                "the channel is full (or no receiver waits on a rendezvous channel); try again or use send",
            ),
            TrySendError::Disconnected(_) => {
                f.write_str("sending on a channel whose receivers are all dropped")
            }
        }
    }
}

impl<T> std::error::Error for TrySendError<T> {}

/// A receive failed because the channel is empty and every [`Sender`](super::Sender) is gone.
///
/// ```
/// let (tx, rx) = threadlab::channel::unbounded::<u32>();
/// drop(tx);
/// assert_eq!(rx.recv_blocking(), Err(threadlab::channel::RecvError));
/// ```
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub struct RecvError;

impl fmt::Display for RecvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("receiving on an empty channel whose senders are all dropped")
    }
}

impl std::error::Error for RecvError {}

/// A [`try_recv`](super::Receiver::try_recv) that found nothing.
///
/// ```
/// use threadlab::channel::{unbounded, TryRecvError};
/// let (_tx, rx) = unbounded::<u32>();
/// assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
/// ```
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub enum TryRecvError {
    /// Nothing buffered and no sender waiting.
    Empty,
    /// Nothing buffered and every sender is gone.
    Disconnected,
}

impl fmt::Display for TryRecvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TryRecvError::Empty => f.write_str("the channel is empty; try again or use recv"),
            TryRecvError::Disconnected => {
                f.write_str("receiving on an empty channel whose senders are all dropped")
            }
        }
    }
}

impl std::error::Error for TryRecvError {}
