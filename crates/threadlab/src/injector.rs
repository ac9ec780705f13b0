//! PLACEHOLDER with the final API; the real injector replaces it (issue 2).
use crate::deque::{Steal, Worker};
use std::collections::VecDeque;
use std::sync::Mutex;

/// Multi-producer multi-consumer FIFO for work submitted from outside the pool.
pub struct Injector<T> {
    q: Mutex<VecDeque<T>>,
}

impl<T> Default for Injector<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Injector<T> {
    /// An empty injector.
    pub fn new() -> Self {
        Injector {
            q: Mutex::new(VecDeque::new()),
        }
    }
    /// Push at the back.
    pub fn push(&self, item: T) {
        self.q.lock().unwrap().push_back(item)
    }
    /// Take from the front.
    pub fn steal(&self) -> Steal<T> {
        match self.q.lock().unwrap().pop_front() {
            Some(t) => Steal::Success(t),
            None => Steal::Empty,
        }
    }
    /// Move a batch into `dest`, return one.
    pub fn steal_batch_and_pop(&self, dest: &Worker<T>) -> Steal<T> {
        let mut q = self.q.lock().unwrap();
        let n = q.len().div_ceil(2).min(32);
        let Some(first) = q.pop_front() else {
            return Steal::Empty;
        };
        for _ in 1..n {
            if let Some(t) = q.pop_front() {
                dest.push(t);
            }
        }
        Steal::Success(first)
    }
    /// Number of items.
    pub fn len(&self) -> usize {
        self.q.lock().unwrap().len()
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
