//! Loom models of the injector (run by `.ci/run` with `RUSTFLAGS="--cfg loom"`).
#![cfg(loom)]

use loom::sync::Arc;
use loom::thread;
use threadlab::deque::{Steal, Worker};
use threadlab::injector::Injector;

mod loom_support;
use loom_support::model;

#[test]
fn push_vs_steal() {
    model(|| {
        let inj = Arc::new(Injector::new());
        let producer = {
            let inj = inj.clone();
            thread::spawn(move || {
                inj.push(0);
                inj.push(1);
            })
        };
        let mut got = Vec::new();
        if let Steal::Success(x) = inj.steal() {
            got.push(x);
        }
        producer.join().unwrap();
        // Once the producer is joined, its pushes are visible to the lock-free emptiness check.
        assert_eq!(inj.len(), 2 - got.len());
        let local = Worker::new();
        while let Steal::Success(x) = inj.steal_batch_and_pop(&local) {
            got.push(x);
            got.extend(std::iter::from_fn(|| local.pop()));
        }
        // FIFO: whoever took them, the items come out in push order per taker.
        got.sort_unstable();
        assert_eq!(got, [0, 1]);
        assert!(inj.is_empty());
    });
}

#[test]
fn two_consumers_batch_and_single() {
    model(|| {
        let inj = Arc::new(Injector::new());
        for i in 0..3 {
            inj.push(i);
        }
        let other = {
            let inj = inj.clone();
            thread::spawn(move || inj.steal().success())
        };
        let local = Worker::new();
        let mut got: Vec<usize> = inj
            .steal_batch_and_pop(&local)
            .success()
            .into_iter()
            .collect();
        got.extend(std::iter::from_fn(|| local.pop()));
        got.extend(other.join().unwrap());
        got.extend(std::iter::from_fn(|| inj.steal().success()));
        got.sort_unstable();
        assert_eq!(got, [0, 1, 2]);
    });
}
