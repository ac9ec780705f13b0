//! Loom models of the Chase–Lev deque (run by `.ci/run` with `RUSTFLAGS="--cfg loom"`). Under
//! loom the deque starts with 2 slots, so three pushes grow it. Each model explores every
//! interleaving and checks that each item is taken exactly once.
#![cfg(loom)]

use loom::thread;
use threadlab::deque::{Steal, Stealer, Worker};

mod loom_support;
use loom_support::model;

/// Steals until the deque reports `Empty`, retrying on `Retry`.
fn steal_one(s: &Stealer<usize>) -> Option<usize> {
    loop {
        match s.steal() {
            Steal::Success(x) => return Some(x),
            Steal::Empty => return None,
            Steal::Retry => thread::yield_now(),
        }
    }
}

fn assert_exactly_once(mut got: Vec<usize>, n: usize) {
    got.sort_unstable();
    assert_eq!(got, (0..n).collect::<Vec<_>>(), "each item exactly once");
}

#[test]
fn push_pop_vs_steal() {
    model(|| {
        let w = Worker::new();
        let s = w.stealer();
        let thief = thread::spawn(move || steal_one(&s));
        w.push(0);
        w.push(1);
        let mut got: Vec<usize> = w.pop().into_iter().collect();
        got.extend(thief.join().unwrap());
        got.extend(std::iter::from_fn(|| w.pop()));
        assert_exactly_once(got, 2);
    });
}

#[test]
fn last_element_race() {
    model(|| {
        let w = Worker::new();
        w.push(0);
        let s = w.stealer();
        let thief = thread::spawn(move || steal_one(&s));
        let mine = w.pop();
        let theirs = thief.join().unwrap();
        assert!(mine.is_some() != theirs.is_some(), "{mine:?} {theirs:?}");
        assert!(w.is_empty());
    });
}

#[test]
fn growth_during_steal() {
    model(|| {
        let w = Worker::new();
        w.push(0);
        let s = w.stealer();
        let thief = thread::spawn(move || steal_one(&s));
        // Capacity 2 under loom: the third push grows the buffer while the thief may be reading
        // the old one.
        w.push(1);
        w.push(2);
        let mut got: Vec<usize> = thief.join().unwrap().into_iter().collect();
        got.extend(std::iter::from_fn(|| w.pop()));
        assert_exactly_once(got, 3);
    });
}

#[test]
fn batch_steal_vs_pop() {
    model(|| {
        let w = Worker::new();
        for i in 0..3 {
            w.push(i);
        }
        let s = w.stealer();
        let thief = thread::spawn(move || {
            let local = Worker::new();
            let mut got = Vec::new();
            loop {
                match s.steal_batch_and_pop(&local) {
                    Steal::Success(x) => {
                        got.push(x);
                        break;
                    }
                    Steal::Empty => break,
                    Steal::Retry => thread::yield_now(),
                }
            }
            got.extend(std::iter::from_fn(|| local.pop()));
            got
        });
        let mut got: Vec<usize> = w.pop().into_iter().chain(w.pop()).collect();
        got.extend(thief.join().unwrap());
        got.extend(std::iter::from_fn(|| w.pop()));
        assert_exactly_once(got, 3);
    });
}

#[test]
fn two_thieves_and_the_owner() {
    model(|| {
        let w = Worker::new();
        w.push(0);
        w.push(1);
        let thieves: Vec<_> = (0..2)
            .map(|_| {
                let s = w.stealer();
                thread::spawn(move || steal_one(&s))
            })
            .collect();
        let mut got: Vec<usize> = w.pop().into_iter().collect();
        for t in thieves {
            got.extend(t.join().unwrap());
        }
        got.extend(std::iter::from_fn(|| w.pop()));
        assert_exactly_once(got, 2);
    });
}
