//! Unit tests of the deque's operations; the threaded races are also in `tests/deque.rs`, the
//! stress test in `tests/stress_deque.rs` and the exhaustive models in `tests/loom_deque.rs`.

use super::{Steal, Stealer, Worker, MAX_BATCH, MIN_CAP};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A deque with `items` pushed in order, and a stealer of it.
fn filled<T>(items: impl IntoIterator<Item = T>) -> (Worker<T>, Stealer<T>) {
    let w = Worker::new();
    let s = w.stealer();
    for item in items {
        w.push(item);
    }
    (w, s)
}

#[test]
fn empty_deque() {
    let w = Worker::<i32>::new();
    let s = w.stealer();
    assert!(w.is_empty() && s.is_empty());
    assert_eq!(w.len(), 0);
    assert_eq!(w.pop(), None);
    assert_eq!(s.steal(), Steal::Empty);
    let dest = Worker::new();
    assert_eq!(s.steal_batch_and_pop(&dest), Steal::Empty);
    assert!(dest.is_empty());
}

#[test]
fn single_element_pop_then_steal() {
    let w = Worker::new();
    let s = w.stealer();
    w.push(7);
    assert_eq!((w.len(), s.len()), (1, 1));
    assert_eq!(w.pop(), Some(7));
    assert_eq!(s.steal(), Steal::Empty);
    w.push(8);
    assert_eq!(s.steal(), Steal::Success(8));
    assert_eq!(w.pop(), None);
    assert!(w.is_empty());
}

#[test]
fn owner_is_lifo_thief_is_fifo() {
    let (w, s) = filled(0..5);
    assert_eq!(s.steal(), Steal::Success(0));
    assert_eq!(w.pop(), Some(4));
    assert_eq!(s.steal(), Steal::Success(1));
    assert_eq!(w.pop(), Some(3));
    assert_eq!(w.pop(), Some(2));
    assert_eq!(w.pop(), None);
    assert_eq!(s.steal(), Steal::Empty);
}

#[test]
fn growth_keeps_every_item_in_order() {
    let n = MIN_CAP * 8 + 3;
    let (w, s) = filled(0..n);
    assert_eq!(w.len(), n);
    // Steal half (FIFO), pop the rest (LIFO): every item exactly once, in order.
    for i in 0..n / 2 {
        assert_eq!(s.steal(), Steal::Success(i));
    }
    for i in (n / 2..n).rev() {
        assert_eq!(w.pop(), Some(i));
    }
    assert!(w.is_empty());
}

#[test]
fn wraps_around_without_growing() {
    // Keep the deque half full while positions run far past the capacity.
    let (w, s) = filled(0..MIN_CAP / 2);
    for i in MIN_CAP / 2..MIN_CAP * 5 {
        w.push(i);
        assert_eq!(s.steal(), Steal::Success(i - MIN_CAP / 2));
    }
    assert_eq!(w.len(), MIN_CAP / 2);
    // No growth happened: the cached buffer still has the initial capacity.
    // SAFETY: the cached buffer is live while `w` exists.
    let cap = unsafe { (*w.buffer.get()).cap() };
    assert_eq!(cap, MIN_CAP);
}

#[test]
fn batch_steal_takes_about_half_capped() {
    let (w, s) = filled(0..10);
    let dest = Worker::new();
    assert_eq!(s.steal_batch_and_pop(&dest), Steal::Success(0));
    assert_eq!(dest.len(), 4); // half of 10, one returned
    assert_eq!(w.len(), 5);
    // dest keeps the stolen order: its thieves see 1 first, its owner 4.
    assert_eq!(dest.stealer().steal(), Steal::Success(1));
    assert_eq!(dest.pop(), Some(4));

    let big = Worker::new();
    for i in 0..1000 {
        big.push(i);
    }
    let dest = Worker::new();
    assert_eq!(big.stealer().steal_batch_and_pop(&dest), Steal::Success(0));
    assert_eq!(dest.len(), MAX_BATCH - 1);
    assert_eq!(big.len(), 1000 - MAX_BATCH);

    let one = Worker::new();
    one.push(5);
    let dest = Worker::new();
    assert_eq!(one.stealer().steal_batch_and_pop(&dest), Steal::Success(5));
    assert!(dest.is_empty() && one.is_empty());
}

#[test]
fn batch_steal_into_a_growing_destination() {
    let w = Worker::new();
    let dest = Worker::new();
    for i in 0..MIN_CAP - 1 {
        dest.push(1000 + i);
    }
    for i in 0..2 * MAX_BATCH {
        w.push(i);
    }
    assert_eq!(w.stealer().steal_batch_and_pop(&dest), Steal::Success(0));
    assert_eq!(dest.len(), MIN_CAP - 1 + MAX_BATCH - 1);
    assert_eq!(dest.pop(), Some(MAX_BATCH - 1));
}

struct Counted(Arc<AtomicUsize>);
impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn drop_frees_remaining_items_once() {
    let drops = Arc::new(AtomicUsize::new(0));
    let (w, s) = filled((0..MIN_CAP * 3).map(|_| Counted(drops.clone())));
    drop(w.pop());
    drop(s.steal());
    assert_eq!(drops.load(Ordering::Relaxed), 2);
    drop(w);
    assert_eq!(
        drops.load(Ordering::Relaxed),
        2,
        "the stealer keeps the items alive"
    );
    drop(s);
    assert_eq!(drops.load(Ordering::Relaxed), MIN_CAP * 3);
}

#[test]
fn handles_have_the_right_auto_traits() {
    fn send<T: Send>() {}
    fn send_sync<T: Send + Sync>() {}
    send::<Worker<Box<i32>>>();
    send_sync::<super::Stealer<Box<i32>>>();
}
