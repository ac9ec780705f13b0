//! The injector: a multi-producer multi-consumer FIFO for work submitted from outside the pool.
//!
//! "Start simple, measure, and make it lock-free only if the measurement says so": a
//! `VecDeque` behind a mutex, plus an atomic length beside it so that the common question of an
//! idle worker — "is there anything?" — never takes the lock. `cargo bench -p threadlab-cli
//! --bench deque` measures it against crossbeam-deque's lock-free, segmented `Injector` in the
//! same run; the figures and the decision are in `src/deque/README.md` ("The injector").
//!
//! ```
//! use threadlab::deque::{Steal, Worker};
//! use threadlab::injector::Injector;
//!
//! let inj = Injector::new();
//! for i in 0..10 {
//!     inj.push(i);
//! }
//! assert_eq!(inj.steal(), Steal::Success(0)); // FIFO
//! let local = Worker::new();
//! assert_eq!(inj.steal_batch_and_pop(&local), Steal::Success(1));
//! assert_eq!(local.len(), 4); // about half of the 9 left, one of them returned
//! ```

use crate::deque::{Steal, Worker, MAX_BATCH};
use crate::loom::sync::atomic::{AtomicUsize, Ordering};
use crate::loom::sync::{Mutex, MutexGuard};
use crate::util::CachePadded;
use std::collections::VecDeque;
use std::fmt;

/// Multi-producer multi-consumer FIFO for work submitted from outside the pool.
pub struct Injector<T> {
    /// Mirror of `queue.len()`, written only while the lock is held, read without it.
    len: CachePadded<AtomicUsize>,
    queue: Mutex<VecDeque<T>>,
}

impl<T> Default for Injector<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> fmt::Debug for Injector<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Injector")
            .field("len", &self.len())
            .finish()
    }
}

impl<T> Injector<T> {
    /// An empty injector.
    pub fn new() -> Self {
        Injector {
            len: CachePadded::new(AtomicUsize::new(0)),
            queue: Mutex::new(VecDeque::new()),
        }
    }

    /// The queue, locked. A panic while it is held cannot leave the `VecDeque` half-updated
    /// (its operations do not unwind midway), so a poisoned lock is simply taken over.
    #[inline]
    fn lock(&self) -> MutexGuard<'_, VecDeque<T>> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Publishes the queue's length after a change made under the lock.
    #[inline]
    fn publish_len(&self, q: &VecDeque<T>) {
        // SeqCst: a pool's sleep protocol (push, then a SeqCst fence, then look for sleepers;
        // versus announce sleep, SeqCst fence, then `is_empty`) must never see the injector empty
        // after a push has returned. A SeqCst store and the SeqCst load in `is_empty` take part in
        // that single total order; the lock alone would not, as `is_empty` does not take it.
        self.len.store(q.len(), Ordering::SeqCst);
    }

    /// Pushes `item` at the back.
    pub fn push(&self, item: T) {
        let mut q = self.lock();
        q.push_back(item);
        self.publish_len(&q);
    }

    /// Takes the item at the front.
    ///
    /// Never returns [`Steal::Retry`] (it waits for the lock instead); callers should still
    /// handle it, as a lock-free version would return it.
    pub fn steal(&self) -> Steal<T> {
        if self.is_empty() {
            return Steal::Empty;
        }
        let mut q = self.lock();
        match q.pop_front() {
            Some(item) => {
                self.publish_len(&q);
                Steal::Success(item)
            }
            None => Steal::Empty,
        }
    }

    /// Takes about half of the items (at most [`MAX_BATCH`], the one returned included), moves
    /// all but the first into `dest` (oldest first, so `dest`'s thieves see them in FIFO order),
    /// and returns the first.
    pub fn steal_batch_and_pop(&self, dest: &Worker<T>) -> Steal<T> {
        if self.is_empty() {
            return Steal::Empty;
        }
        let mut q = self.lock();
        let batch = q.len().div_ceil(2).min(MAX_BATCH);
        let Some(first) = q.pop_front() else {
            return Steal::Empty;
        };
        for item in q.drain(..batch - 1) {
            dest.push(item);
        }
        self.publish_len(&q);
        Steal::Success(first)
    }

    /// Number of items (a snapshot, read without the lock).
    pub fn len(&self) -> usize {
        // SeqCst: pairs with the SeqCst store in `publish_len` (see there).
        self.len.load(Ordering::SeqCst)
    }

    /// True when the injector holds no item (read without the lock).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::Injector;
    use crate::deque::{Steal, Worker, MAX_BATCH};
    use std::sync::atomic::Ordering::Relaxed;

    #[test]
    fn empty_and_single() {
        let inj = Injector::new();
        assert!(inj.is_empty());
        assert_eq!(inj.steal(), Steal::Empty);
        let dest = Worker::new();
        assert_eq!(inj.steal_batch_and_pop(&dest), Steal::Empty);
        inj.push(3);
        assert_eq!(inj.len(), 1);
        assert_eq!(inj.steal_batch_and_pop(&dest), Steal::Success(3));
        assert!(dest.is_empty() && inj.is_empty());
    }

    #[test]
    fn fifo_and_batches() {
        let inj = Injector::new();
        for i in 0..200 {
            inj.push(i);
        }
        assert_eq!(inj.steal(), Steal::Success(0));
        let dest = Worker::new();
        assert_eq!(inj.steal_batch_and_pop(&dest), Steal::Success(1));
        assert_eq!(dest.len(), MAX_BATCH - 1);
        assert_eq!(dest.stealer().steal(), Steal::Success(2));
        assert_eq!(dest.pop(), Some(MAX_BATCH));
        assert_eq!(inj.len(), 200 - 1 - MAX_BATCH);
        assert_eq!(inj.steal(), Steal::Success(MAX_BATCH + 1));
    }

    #[test]
    fn concurrent_producers_and_consumers_take_each_item_once() {
        let per = if cfg!(miri) { 50 } else { 20_000 };
        let inj = Injector::new();
        let total = std::sync::atomic::AtomicUsize::new(0);
        let taken: Vec<_> = std::thread::scope(|s| {
            for p in 0..2 {
                let inj = &inj;
                s.spawn(move || (0..per).for_each(|i| inj.push(p * per + i)));
            }
            let consumers: Vec<_> = (0..2)
                .map(|_| {
                    let (inj, total) = (&inj, &total);
                    s.spawn(move || {
                        let local = Worker::new();
                        let mut got = Vec::new();
                        // Relaxed: a progress counter; the results travel through `join`.
                        while total.load(Relaxed) < 2 * per {
                            let before = got.len();
                            match inj.steal_batch_and_pop(&local) {
                                Steal::Success(x) => got.push(x),
                                _ => std::thread::yield_now(),
                            }
                            while let Some(x) = local.pop() {
                                got.push(x);
                            }
                            total.fetch_add(got.len() - before, Relaxed);
                        }
                        got
                    })
                })
                .collect();
            consumers
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect()
        });
        let mut seen = vec![false; 2 * per];
        for x in taken {
            assert!(!seen[x], "item {x} taken twice");
            seen[x] = true;
        }
        assert!(seen.iter().all(|&s| s), "an item was lost");
    }
}
