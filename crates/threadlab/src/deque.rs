//! PLACEHOLDER with the final API; the Chase–Lev implementation replaces it (issue 2).
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// The result of a steal attempt.
#[must_use]
#[derive(Debug, PartialEq, Eq)]
pub enum Steal<T> {
    /// The queue was empty.
    Empty,
    /// One item was taken.
    Success(T),
    /// Lost a race with another thread; try again.
    Retry,
}

/// Owner side of a work-stealing deque (not `Sync`).
pub struct Worker<T> {
    q: Arc<Mutex<VecDeque<T>>>,
    _not_sync: std::marker::PhantomData<std::cell::Cell<()>>,
}

/// Thief side (cloneable, `Send + Sync`).
pub struct Stealer<T> {
    q: Arc<Mutex<VecDeque<T>>>,
}

impl<T> Clone for Stealer<T> {
    fn clone(&self) -> Self {
        Stealer { q: self.q.clone() }
    }
}

impl<T> Default for Worker<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Worker<T> {
    /// An empty deque.
    pub fn new() -> Self {
        Worker {
            q: Arc::default(),
            _not_sync: std::marker::PhantomData,
        }
    }
    /// Push at the back (owner only).
    pub fn push(&self, item: T) {
        self.q.lock().unwrap().push_back(item)
    }
    /// Pop from the back (LIFO).
    pub fn pop(&self) -> Option<T> {
        self.q.lock().unwrap().pop_back()
    }
    /// A thief handle.
    pub fn stealer(&self) -> Stealer<T> {
        Stealer { q: self.q.clone() }
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

impl<T> Stealer<T> {
    /// Steal from the front (FIFO).
    pub fn steal(&self) -> Steal<T> {
        match self.q.lock().unwrap().pop_front() {
            Some(t) => Steal::Success(t),
            None => Steal::Empty,
        }
    }
    /// Move about half into `dest`, return one.
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
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.q.lock().unwrap().is_empty()
    }
    /// Number of items.
    pub fn len(&self) -> usize {
        self.q.lock().unwrap().len()
    }
}
