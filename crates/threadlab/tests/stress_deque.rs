//! Stress test (run in release by `.ci/run`): one owner pushing and popping, three thieves
//! stealing and batch-stealing, 10 million items, every item taken exactly once. Shrunk under
//! Miri; ThreadSanitizer runs it as it is (see `scripts/check-unsafe`).

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering::*};
use std::thread;
use threadlab::deque::Worker;

mod deque_support;
use deque_support::steal_once;

#[test]
fn one_owner_three_thieves_every_item_once() {
    let n: usize = if cfg!(miri) {
        2_000
    } else if cfg!(debug_assertions) {
        1_000_000
    } else {
        10_000_000
    };
    // One flag per item; a thief or the owner that takes item `i` bumps `taken[i]`.
    let taken: Vec<AtomicU8> = (0..n).map(|_| AtomicU8::new(0)).collect();
    let take = |i: usize| {
        // Relaxed: each flag is checked after every thread has been joined.
        taken[i].fetch_add(1, Relaxed);
    };
    let w = Worker::new();
    let done = AtomicBool::new(false);
    thread::scope(|sc| {
        for id in 0..3 {
            let (s, done, take) = (w.stealer(), &done, &take);
            sc.spawn(move || {
                let local = Worker::new();
                let mut k = 0u32;
                // Acquire: pairs with the owner's Release store once it has pushed everything.
                while !done.load(Acquire) || !s.is_empty() {
                    k = k.wrapping_add(1);
                    // Thief 0 only batch-steals, 1 only steals, 2 alternates.
                    let batch = id == 0 || (id == 2 && k % 2 == 0);
                    steal_once(&s, &local, batch, take);
                }
            });
        }
        // The owner pushes in bursts and pops part of each burst back, so the deque grows,
        // shrinks to empty (last-element races) and wraps around.
        let mut next = 0;
        let mut burst = 1;
        while next < n {
            let end = (next + burst).min(n);
            for i in next..end {
                w.push(i);
            }
            next = end;
            for _ in 0..burst / 2 + 1 {
                match w.pop() {
                    Some(i) => take(i),
                    None => break,
                }
            }
            burst = if burst >= 4096 { 1 } else { burst * 2 + 1 };
        }
        while let Some(i) = w.pop() {
            take(i);
        }
        done.store(true, Release);
    });
    let lost = taken.iter().filter(|f| f.load(Relaxed) == 0).count();
    let twice = taken.iter().filter(|f| f.load(Relaxed) > 1).count();
    assert_eq!(
        (lost, twice),
        (0, 0),
        "items lost, items taken more than once"
    );
}
