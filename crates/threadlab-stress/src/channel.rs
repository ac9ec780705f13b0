//! The `channels` stress scenario: producers and consumers on one `threadlab::channel` (a
//! random capacity: rendezvous, small, or unbounded), as pool tasks and, sometimes, a plain
//! thread with the blocking ends; some sends and receives are cancelled mid-wait (their future
//! polled once and dropped), and sometimes every consumer quits early, so the senders see the
//! channel close. Every value is a token that books what became of it, and the scenario checks
//! each one: a send that succeeded was received exactly once or was still buffered when the
//! channel was dropped; a send that failed was never received (a cancelled one may have been,
//! if a receiver took the value between the poll and the drop); and every token was dropped
//! exactly once.

use super::ledger::{Ledger, Rng};
use super::scenarios::Slots;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use threadlab::channel::{bounded, unbounded, Receiver, Sender, TrySendError};
use threadlab::Pool;

/// What became of each token.
struct Books {
    /// The token was made (a producer that sees the channel close makes no more).
    made: Slots,
    /// Its send future was dropped mid-wait (a receiver may still have taken it just before).
    cancelled: Slots,
    /// The send returned `Ok`.
    sent: Slots,
    /// A consumer took it.
    received: Slots,
    /// Dropped (by whoever held it last: a consumer, its sender, or the channel).
    dropped: Slots,
}

/// One value through the channel.
struct Token {
    id: usize,
    books: Arc<Books>,
}

impl Token {
    fn new(id: usize, books: &Arc<Books>) -> Token {
        books.made.hit(id);
        Token {
            id,
            books: Arc::clone(books),
        }
    }
}

impl Drop for Token {
    fn drop(&mut self) {
        self.books.dropped.hit(self.id);
    }
}

/// Polls `fut` once; `None` if it is still pending (the caller then drops it: a cancellation).
async fn poll_once<F: Future + Unpin>(mut fut: F) -> Option<F::Output> {
    poll_fn(|cx| Poll::Ready(Pin::new(&mut fut).poll(cx)))
        .await
        .ready()
}

trait ReadyExt<T> {
    fn ready(self) -> Option<T>;
}

impl<T> ReadyExt<T> for Poll<T> {
    fn ready(self) -> Option<T> {
        match self {
            Poll::Ready(v) => Some(v),
            Poll::Pending => None,
        }
    }
}

/// A producer task's sends: ids `first..first + count`; each send may be a cancelled attempt
/// first (`cancel_every`: one in that many).
async fn produce(tx: Sender<Token>, books: Arc<Books>, ids: Vec<usize>, cancel_every: u64) {
    for (k, id) in ids.into_iter().enumerate() {
        let token = Token::new(id, &books);
        if cancel_every > 0 && k as u64 % cancel_every == 0 {
            // One poll of a send future: done at once, or dropped mid-wait with its value.
            match poll_once(tx.send(token)).await {
                Some(Ok(())) => books.sent.hit(id),
                Some(Err(_back)) => return, // closed: the value came back and is dropped
                // Cancelled: dropped with the future, unless a receiver took it between the
                // poll and the drop.
                None => books.cancelled.hit(id),
            }
            continue;
        }
        match tx.send(token).await {
            Ok(()) => books.sent.hit(id),
            Err(_back) => return,
        }
    }
}

/// A consumer task: receives until the channel closes or it has taken `quota` tokens.
async fn consume(rx: Receiver<Token>, books: Arc<Books>, quota: usize, cancel_every: u64) {
    let mut taken = 0usize;
    let mut k = 0u64;
    while taken < quota {
        k += 1;
        let got = if cancel_every > 0 && k % cancel_every == 0 {
            match poll_once(rx.recv()).await {
                Some(r) => r,
                None => continue, // cancelled mid-wait: a value written for it is passed on
            }
        } else {
            rx.recv().await
        };
        match got {
            Ok(token) => {
                books.received.hit(token.id);
                taken += 1;
            }
            Err(_) => return,
        }
    }
}

/// The scenario.
pub fn channels(rng: &mut Rng, pool: &Pool, ledger: &Ledger) {
    let cap = [0usize, 1, 4, usize::MAX][rng.below(4) as usize];
    let producers = rng.range(1, 5) as usize;
    let consumers = rng.range(1, 4) as usize;
    let per = rng.range(1, 400) as usize;
    let total = producers * per;
    let quit_early = rng.below(4) == 0;
    let thread_producer = rng.below(2) == 0;
    let cancel_every = [0, 3, 17][rng.below(3) as usize];
    let books = Arc::new(Books {
        made: Slots::new(total),
        cancelled: Slots::new(total),
        sent: Slots::new(total),
        received: Slots::new(total),
        dropped: Slots::new(total),
    });
    let (tx, rx) = if cap == usize::MAX {
        unbounded()
    } else {
        bounded(cap)
    };
    // Quotas: all of it (the channel drains until the senders are gone), or a few each.
    let quota = if quit_early {
        rng.below(per as u64) as usize
    } else {
        usize::MAX
    };
    let consumer_handles: Vec<_> = (0..consumers)
        .map(|_| pool.spawn_future(consume(rx.clone(), Arc::clone(&books), quota, cancel_every)))
        .collect();
    drop(rx);
    let mut thread = None;
    let mut producer_handles = Vec::new();
    for p in 0..producers {
        let ids: Vec<usize> = (p * per..(p + 1) * per).collect();
        let tx = tx.clone();
        let b = Arc::clone(&books);
        if p == 0 && thread_producer {
            thread = Some(std::thread::spawn(move || {
                for id in ids {
                    let token = Token::new(id, &b);
                    let r = match tx.try_send(token) {
                        Ok(()) => Ok(()),
                        Err(TrySendError::Full(t)) => tx.send_blocking(t).map_err(|_| ()),
                        Err(TrySendError::Disconnected(_)) => Err(()),
                    };
                    match r {
                        Ok(()) => b.sent.hit(id),
                        Err(()) => return,
                    }
                }
            }));
        } else {
            producer_handles.push(pool.spawn_future(produce(tx, b, ids, cancel_every)));
        }
    }
    drop(tx);
    for h in producer_handles {
        h.join();
    }
    if let Some(t) = thread {
        if t.join().is_err() {
            ledger.discrepancy("channels: the blocking producer thread panicked".into());
        }
    }
    for h in consumer_handles {
        h.join();
    }
    // Every end is gone: every token has been dropped by now.
    check(&books, total, !quit_early, ledger);
}

/// Checks each token's books; `drained`: the consumers took everything until the senders were
/// gone, so every token sent must have been received.
fn check(books: &Books, total: usize, drained: bool, ledger: &Ledger) {
    let (mut lost, mut twice, mut phantom, mut undelivered) = (0, 0, 0, 0);
    let mut made = 0;
    for id in 0..total {
        if books.made.count(id) == 0 {
            continue;
        }
        made += 1;
        let sent = books.sent.count(id);
        let received = books.received.count(id);
        let dropped = books.dropped.count(id);
        if dropped != 1 || received > 1 {
            twice += (dropped > 1 || received > 1) as usize;
            lost += (dropped == 0) as usize;
        }
        if sent == 0 && received > 0 && books.cancelled.count(id) == 0 {
            phantom += 1;
        }
        if drained && sent == 1 && received == 0 {
            undelivered += 1;
        }
    }
    if lost + twice + phantom + undelivered > 0 {
        ledger.discrepancy(format!(
            "channels: of {made} tokens, {lost} never dropped (lost), {twice} received or dropped twice, {phantom} received though their send failed, {undelivered} sent but never received by consumers that drained the channel"
        ));
    }
    ledger.tasks(made as u64);
}
