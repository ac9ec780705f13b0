//! The thieves' step shared by the deque's threaded tests (`deque`, `stress_deque`).

use std::thread;
use threadlab::deque::{Steal, Stealer, Worker};

/// One steal attempt from `s`: a batch into `local` plus one item if `batch`, else one item.
/// Every item it got goes to `take` (the one returned, then those moved into `local`); an empty
/// deque yields the thread.
pub fn steal_once<T>(s: &Stealer<T>, local: &Worker<T>, batch: bool, take: impl Fn(T)) {
    let got = if batch {
        s.steal_batch_and_pop(local)
    } else {
        s.steal()
    };
    match got {
        Steal::Success(x) => take(x),
        Steal::Empty => thread::yield_now(),
        Steal::Retry => {}
    }
    while let Some(x) = local.pop() {
        take(x);
    }
}
