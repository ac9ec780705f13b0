//! Workers blocked outside threadlab: tasks that wait in the kernel for work queued behind them
//! (a `std::sync::Barrier` with more parties than workers, std receives whose senders are
//! queued), some through `threadlab::blocking`, the rest left to the pool's monitor, beside
//! ordinary joins and scopes. A pool of its own (1–3 workers, spare threads enough for the
//! round), so the shared pool's other scenarios do not hold its seats. Every task runs exactly
//! once, and the round ends: a pool that could not lift the block would trip the watchdog.

use super::ledger::{Ledger, Rng};
use super::scenarios::{exactly_once, Slots};
use std::sync::{mpsc, Arc, Barrier, Mutex};
use threadlab::Pool;

fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = threadlab::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

/// One round: a barrier of `workers + 1..=workers + 2` parties, std receives on every worker
/// with their senders queued behind them, and plain work mixed in.
pub fn blocked_workers(rng: &mut Rng, ledger: &Ledger) {
    let workers = rng.range(1, 4) as usize;
    let parties = workers + rng.range(1, 3) as usize;
    let pool = match Pool::builder()
        .threads(workers)
        // Every party but one may need a thread of its own (the scope's caller takes one).
        .max_spare_threads(parties + rng.range(0, 3) as usize)
        .panic_handler(|_| {})
        .build()
    {
        Ok(p) => p,
        Err(e) => return ledger.discrepancy(format!("blocked workers: {e}")),
    };
    ledger.pool_built();
    let by_hand = rng.below(3) as usize; // 0: none through `blocking`, 1: some, 2: all
    let plain = rng.range(0, 20) as usize;

    // The barrier: every party must run for any to pass.
    let slots = Slots::new(parties + plain);
    let barrier = Arc::new(Barrier::new(parties));
    pool.scope(|s| {
        for i in 0..parties {
            let (b, slots) = (Arc::clone(&barrier), &slots);
            let declared = by_hand == 2 || (by_hand == 1 && i % 2 == 0);
            s.spawn(move |_| {
                if declared {
                    threadlab::blocking(|| b.wait());
                } else {
                    b.wait();
                }
                slots.hit(i);
            });
        }
        for i in 0..plain {
            let slots = &slots;
            s.spawn(move |_| {
                if fib(10) == 55 {
                    slots.hit(parties + i);
                }
            });
        }
    });
    exactly_once(ledger, "blocked workers (barrier)", &slots);

    // Receives on every worker, their senders queued behind them.
    let (tx, rx) = mpsc::channel::<usize>();
    let rx = Arc::new(Mutex::new(rx));
    let slots = Arc::new(Slots::new(workers));
    let (done_tx, done_rx) = mpsc::channel();
    for _ in 0..workers {
        let (rx, slots, done) = (Arc::clone(&rx), Arc::clone(&slots), done_tx.clone());
        let declared = by_hand > 0;
        pool.spawn(move || {
            let take = || rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
            let got = if declared {
                threadlab::blocking(take)
            } else {
                take()
            };
            if let Ok(i) = got {
                slots.hit(i);
            }
            let _ = done.send(());
        });
    }
    for i in 0..workers {
        let tx = tx.clone();
        pool.spawn(move || {
            let _ = tx.send(i);
        });
    }
    drop(tx);
    for _ in 0..workers {
        if done_rx.recv().is_err() {
            return ledger.discrepancy("blocked workers (receives): a receiver vanished".into());
        }
    }
    exactly_once(ledger, "blocked workers (receives)", &slots);
    drop(pool);
}
