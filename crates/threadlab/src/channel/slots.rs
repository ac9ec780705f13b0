//! The channel's state under its lock: the buffer, the waiting senders and receivers, and the
//! slots through which a value passes straight from one to the other (Go's `hchan` with its
//! `sendq`/`recvq` of `sudog`s, runtime/chan.go; written afresh here).
//!
//! A waiter owns one slot of a small slab (`slots`, reused through `free`, so a channel in a
//! steady state allocates nothing per message) and is queued, by slot index, in `recv_q` or
//! `send_q`. Whoever completes a waiter's operation changes its slot and takes its waker out:
//!
//! - a sender that finds a receiver waiting writes the value into the receiver's slot
//!   (`RecvWaiting` → `RecvFilled`), like Go's `send` → `sendDirect`;
//! - a receiver that finds a sender waiting takes the value from the sender's slot
//!   (`SendWaiting` → `SendTaken`); with a full buffer it takes the buffer's head and moves
//!   the sender's value to the buffer's tail (Go's `recv` on a full buffered channel);
//! - closing (the last sender or the last receiver gone) moves every waiter on the other side
//!   to `RecvClosed` or `SendRefused` (the sender gets its value back).
//!
//! The wakers taken out and the values to drop leave the lock first: they are woken and
//! dropped by the caller after it unlocks (see [`Done`]), so no user code (a waker, a value's
//! `Drop`) runs under the lock. Because every change happens under the lock, a sender and a
//! receiver arriving at once are ordered by it: one waits and the other completes it.
//!
//! Cancellation (a `send` or `recv` future dropped while it waits) goes through
//! [`Core::cancel_send`] and [`Core::cancel_recv`]: a value already written into a cancelled
//! receiver's slot is passed to the next waiting receiver, or put back at the head of the
//! buffer, so it is neither lost nor received twice.

use std::collections::VecDeque;
use std::task::Waker;

use super::error::{TryRecvError, TrySendError};

/// One waiter's slot.
pub(super) enum Slot<T> {
    /// On the free list.
    Free,
    /// A receiver waits here.
    RecvWaiting(Waker),
    /// A sender wrote a value for the receiver waiting here.
    RecvFilled(T),
    /// The senders are all gone while a receiver waited here.
    RecvClosed,
    /// A sender waits here with its value.
    SendWaiting(Waker, T),
    /// A receiver took the waiting sender's value.
    SendTaken,
    /// The receivers are all gone while a sender waited here: its value comes back.
    SendRefused(T),
}

/// What an operation leaves for its caller to do after unlocking: a waker to wake and a value
/// to drop (a cancelled send's value).
pub(super) struct Done<T> {
    pub(super) wake: Option<Waker>,
    pub(super) drop: Option<T>,
}

impl<T> Done<T> {
    pub(super) fn none() -> Self {
        Done {
            wake: None,
            drop: None,
        }
    }

    fn wake(w: Waker) -> Self {
        Done {
            wake: Some(w),
            drop: None,
        }
    }

    /// Runs after the lock is released: wakes, then drops.
    pub(super) fn finish(self) {
        if let Some(w) = self.wake {
            w.wake();
        }
        drop(self.drop);
    }
}

/// The state under the channel's lock.
pub(super) struct Core<T> {
    buf: VecDeque<T>,
    cap: usize,
    slots: Vec<Slot<T>>,
    free: Vec<usize>,
    recv_q: VecDeque<usize>,
    send_q: VecDeque<usize>,
    pub(super) senders: usize,
    pub(super) receivers: usize,
}

/// A poll's answer for a waiter: done with a result, or still waiting in `slot`.
pub(super) enum Step<R> {
    Ready(R),
    Waiting(usize),
}

impl<T> Core<T> {
    /// A channel holding up to `cap` values (`usize::MAX`: unbounded).
    pub(super) fn new(cap: usize) -> Self {
        Core {
            buf: VecDeque::new(),
            cap,
            slots: Vec::new(),
            free: Vec::new(),
            recv_q: VecDeque::new(),
            send_q: VecDeque::new(),
            senders: 1,
            receivers: 1,
        }
    }

    /// Values in the buffer now.
    pub(super) fn len(&self) -> usize {
        self.buf.len()
    }

    fn alloc(&mut self, slot: Slot<T>) -> usize {
        match self.free.pop() {
            Some(i) => {
                self.slots[i] = slot;
                i
            }
            None => {
                self.slots.push(slot);
                self.slots.len() - 1
            }
        }
    }

    fn release(&mut self, i: usize) -> Slot<T> {
        self.free.push(i);
        std::mem::replace(&mut self.slots[i], Slot::Free)
    }

    fn unqueue(q: &mut VecDeque<usize>, i: usize) {
        if let Some(pos) = q.iter().position(|&j| j == i) {
            q.remove(pos);
        }
    }

    /// A send that does not wait: into a waiting receiver's slot, else into the buffer.
    pub(super) fn try_send(&mut self, value: T) -> Result<Done<T>, TrySendError<T>> {
        if self.receivers == 0 {
            return Err(TrySendError::Disconnected(value));
        }
        if let Some(i) = self.recv_q.pop_front() {
            match std::mem::replace(&mut self.slots[i], Slot::RecvFilled(value)) {
                Slot::RecvWaiting(w) => return Ok(Done::wake(w)),
                _ => unreachable!("a queued receiver's slot is RecvWaiting"),
            }
        }
        if self.buf.len() < self.cap {
            self.buf.push_back(value);
            return Ok(Done::none());
        }
        Err(TrySendError::Full(value))
    }

    /// A receive that does not wait: the buffer's head (refilled from a waiting sender), else
    /// a waiting sender's value.
    pub(super) fn try_recv(&mut self) -> Result<(T, Done<T>), TryRecvError> {
        if let Some(v) = self.buf.pop_front() {
            let mut done = Done::none();
            if self.buf.len() < self.cap {
                if let Some(i) = self.send_q.pop_front() {
                    match std::mem::replace(&mut self.slots[i], Slot::SendTaken) {
                        Slot::SendWaiting(w, moved) => {
                            self.buf.push_back(moved);
                            done = Done::wake(w);
                        }
                        _ => unreachable!("a queued sender's slot is SendWaiting"),
                    }
                }
            }
            return Ok((v, done));
        }
        if let Some(i) = self.send_q.pop_front() {
            match std::mem::replace(&mut self.slots[i], Slot::SendTaken) {
                Slot::SendWaiting(w, v) => return Ok((v, Done::wake(w))),
                _ => unreachable!("a queued sender's slot is SendWaiting"),
            }
        }
        if self.senders == 0 {
            Err(TryRecvError::Disconnected)
        } else {
            Err(TryRecvError::Empty)
        }
    }

    /// One poll of a send future. `slot` is where it waits (None: first poll); `value` is its
    /// value until it is handed over.
    pub(super) fn poll_send(
        &mut self,
        slot: Option<usize>,
        value: &mut Option<T>,
        waker: &Waker,
    ) -> (Step<Result<(), T>>, Done<T>) {
        let Some(i) = slot else {
            let v = value
                .take()
                .expect("a send future polled after it completed");
            return match self.try_send(v) {
                Ok(done) => (Step::Ready(Ok(())), done),
                Err(TrySendError::Disconnected(v)) => (Step::Ready(Err(v)), Done::none()),
                Err(TrySendError::Full(v)) => {
                    let i = self.alloc(Slot::SendWaiting(waker.clone(), v));
                    self.send_q.push_back(i);
                    (Step::Waiting(i), Done::none())
                }
            };
        };
        match &mut self.slots[i] {
            Slot::SendWaiting(w, _) => {
                if !w.will_wake(waker) {
                    *w = waker.clone();
                }
                (Step::Waiting(i), Done::none())
            }
            Slot::SendTaken => {
                self.release(i);
                (Step::Ready(Ok(())), Done::none())
            }
            Slot::SendRefused(_) => match self.release(i) {
                Slot::SendRefused(v) => (Step::Ready(Err(v)), Done::none()),
                _ => unreachable!(),
            },
            _ => unreachable!("a sender's slot holds a sender's state"),
        }
    }

    /// One poll of a receive future (`slot` as in [`Core::poll_send`]). `Err(())`: closed.
    pub(super) fn poll_recv(
        &mut self,
        slot: Option<usize>,
        waker: &Waker,
    ) -> (Step<Result<T, ()>>, Done<T>) {
        let Some(i) = slot else {
            return match self.try_recv() {
                Ok((v, done)) => (Step::Ready(Ok(v)), done),
                Err(TryRecvError::Disconnected) => (Step::Ready(Err(())), Done::none()),
                Err(TryRecvError::Empty) => {
                    let i = self.alloc(Slot::RecvWaiting(waker.clone()));
                    self.recv_q.push_back(i);
                    (Step::Waiting(i), Done::none())
                }
            };
        };
        match &mut self.slots[i] {
            Slot::RecvWaiting(w) => {
                if !w.will_wake(waker) {
                    *w = waker.clone();
                }
                (Step::Waiting(i), Done::none())
            }
            Slot::RecvFilled(_) => match self.release(i) {
                Slot::RecvFilled(v) => (Step::Ready(Ok(v)), Done::none()),
                _ => unreachable!(),
            },
            Slot::RecvClosed => {
                self.release(i);
                (Step::Ready(Err(())), Done::none())
            }
            _ => unreachable!("a receiver's slot holds a receiver's state"),
        }
    }

    /// A send future dropped while it waited in `i`: its value is dropped by the caller (the
    /// send did not happen) unless a receiver already took it.
    pub(super) fn cancel_send(&mut self, i: usize) -> Done<T> {
        if matches!(self.slots[i], Slot::SendWaiting(..)) {
            Self::unqueue(&mut self.send_q, i);
        }
        match self.release(i) {
            Slot::SendWaiting(_, v) | Slot::SendRefused(v) => Done {
                wake: None,
                drop: Some(v),
            },
            _ => Done::none(),
        }
    }

    /// A receive future dropped while it waited in `i`: a value already written into its slot
    /// goes to the next waiting receiver, or back to the head of the buffer.
    pub(super) fn cancel_recv(&mut self, i: usize) -> Done<T> {
        if matches!(self.slots[i], Slot::RecvWaiting(_)) {
            Self::unqueue(&mut self.recv_q, i);
        }
        match self.release(i) {
            Slot::RecvFilled(v) => {
                if let Some(j) = self.recv_q.pop_front() {
                    match std::mem::replace(&mut self.slots[j], Slot::RecvFilled(v)) {
                        Slot::RecvWaiting(w) => Done::wake(w),
                        _ => unreachable!("a queued receiver's slot is RecvWaiting"),
                    }
                } else {
                    // Over the capacity by one for a moment: the value was sent, so it stays.
                    self.buf.push_front(v);
                    Done::none()
                }
            }
            _ => Done::none(),
        }
    }

    /// The last sender is gone: every waiting receiver learns it. Returns their wakers.
    pub(super) fn close_senders(&mut self) -> Vec<Waker> {
        let mut wakers = Vec::with_capacity(self.recv_q.len());
        while let Some(i) = self.recv_q.pop_front() {
            if let Slot::RecvWaiting(w) = std::mem::replace(&mut self.slots[i], Slot::RecvClosed) {
                wakers.push(w);
            }
        }
        wakers
    }

    /// The last receiver is gone: every waiting sender gets its value back. Returns their
    /// wakers and takes the buffered values out (dropped by the caller, after unlocking).
    pub(super) fn close_receivers(&mut self) -> (Vec<Waker>, VecDeque<T>) {
        let mut wakers = Vec::with_capacity(self.send_q.len());
        while let Some(i) = self.send_q.pop_front() {
            match std::mem::replace(&mut self.slots[i], Slot::Free) {
                Slot::SendWaiting(w, v) => {
                    self.slots[i] = Slot::SendRefused(v);
                    wakers.push(w);
                }
                _ => unreachable!("a queued sender's slot is SendWaiting"),
            }
        }
        (wakers, std::mem::take(&mut self.buf))
    }
}
