//! Threaded tests of the deque's races through the public API (small under Miri).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::*};
use std::thread;
use threadlab::deque::{Steal, Stealer, Worker};

mod deque_support;
use deque_support::steal_once;

/// The owner and a thief race for a single item, many times: exactly one of them gets it.
#[test]
fn owner_and_thief_race_for_the_last_element() {
    let rounds = if cfg!(miri) { 30 } else { 20_000 };
    let w = Worker::new();
    let s = w.stealer();
    let round = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let (owner_got, thief_got) = thread::scope(|sc| {
        let thief = sc.spawn(|| {
            let mut got = 0;
            for r in 1..=rounds {
                // Acquire: pairs with the owner's Release store of the round, after its push.
                while round.load(Acquire) < r {
                    std::hint::spin_loop();
                    if cfg!(miri) {
                        thread::yield_now();
                    }
                }
                loop {
                    match s.steal() {
                        Steal::Success(x) => {
                            assert_eq!(x, r);
                            got += 1;
                            break;
                        }
                        Steal::Empty => break,
                        Steal::Retry => {}
                    }
                }
                // Release: the owner starts the next round only after this one is settled.
                done.store(r, Release);
            }
            got
        });
        let mut got = 0;
        for r in 1..=rounds {
            w.push(r);
            round.store(r, Release);
            if w.pop() == Some(r) {
                got += 1;
            }
            // Acquire: pairs with the thief's Release store of `done`.
            while done.load(Acquire) < r {
                std::hint::spin_loop();
                if cfg!(miri) {
                    thread::yield_now();
                }
            }
        }
        (got, thief.join().unwrap())
    });
    assert_eq!(
        owner_got + thief_got,
        rounds,
        "each item taken exactly once"
    );
    assert!(w.is_empty());
}

/// Thieves steal (singly and in batches) while the owner grows the buffer from 64 slots to
/// thousands: every item is taken exactly once.
#[test]
fn growth_while_thieves_steal() {
    let n = if cfg!(miri) { 300 } else { 200_000 };
    let w = Worker::new();
    let s = w.stealer();
    let stop = AtomicBool::new(false);
    let seen: Vec<AtomicBool> = (0..n).map(|_| AtomicBool::new(false)).collect();
    let mark = |x: usize| assert!(!seen[x].swap(true, Relaxed), "item {x} taken twice");
    thread::scope(|sc| {
        for batch in [false, true] {
            let (s, stop, mark) = (s.clone(), &stop, &mark);
            sc.spawn(move || thief(&s, batch, stop, mark));
        }
        // Push everything first (grows many times while the thieves steal), then pop.
        for i in 0..n {
            w.push(i);
        }
        while let Some(x) = w.pop() {
            mark(x);
        }
        stop.store(true, Release);
    });
    assert!(seen.iter().all(|b| b.load(Relaxed)), "an item was lost");
}

fn thief(s: &Stealer<usize>, batch: bool, stop: &AtomicBool, mark: &(dyn Fn(usize) + Sync)) {
    let local = Worker::new();
    // Acquire: pairs with the owner's Release store after it has drained the deque.
    while !stop.load(Acquire) || !s.is_empty() {
        steal_once(s, &local, batch, mark);
    }
}

/// Items that own heap memory are dropped exactly once even when races discard copies.
#[test]
fn boxed_items_are_not_leaked_or_freed_twice() {
    let n = if cfg!(miri) { 100 } else { 50_000 };
    let w = Worker::<Box<usize>>::new();
    let s = w.stealer();
    let sum = AtomicUsize::new(0);
    thread::scope(|sc| {
        sc.spawn(|| {
            let mut idle = 0;
            while idle < 1000 {
                match s.steal() {
                    Steal::Success(b) => {
                        sum.fetch_add(*b, Relaxed);
                        idle = 0;
                    }
                    _ => {
                        idle += 1;
                        thread::yield_now();
                    }
                }
            }
        });
        for i in 0..n {
            w.push(Box::new(i));
            if i % 3 == 0 {
                if let Some(b) = w.pop() {
                    sum.fetch_add(*b, Relaxed);
                }
            }
        }
    });
    let left: usize = std::iter::from_fn(|| w.pop()).map(|b| *b).sum();
    assert_eq!(sum.load(Relaxed) + left, n * (n - 1) / 2);
}
