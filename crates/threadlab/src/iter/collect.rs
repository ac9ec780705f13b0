//! `collect` into a `Vec` in order, and `unzip`/`partition` on top of it.
//!
//! Each piece of the run pushes its items into its own `Vec` (reserved for all its positions
//! when the pipeline does not filter); neighbouring pieces' lists are linked left to right, and
//! the end result is the single `Vec` when nobody split, else the concatenation. Every item is
//! owned by exactly one `Vec` from the moment it is produced, so a panic anywhere drops each
//! produced item once (the lists unwind with their pieces) and never twice.

use super::drive::Consumer;
use super::ParallelIterator;
use std::collections::LinkedList;

/// Collects a parallel iterator, keeping its order (as `Vec`'s `FromIterator`).
///
/// ```
/// use threadlab::prelude::*;
/// let v: Vec<u32> = (0u32..4).into_par_iter().map(|x| x * x).collect();
/// assert_eq!(v, [0, 1, 4, 9]);
/// ```
pub trait FromParallelIterator<T: Send> {
    /// Builds `Self` from the items of `iter`, in order.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// use threadlab::iter::FromParallelIterator;
    /// let v = Vec::from_par_iter((0u8..3).into_par_iter());
    /// assert_eq!(v, [0, 1, 2]);
    /// ```
    fn from_par_iter<I: ParallelIterator<Item = T>>(iter: I) -> Self;
}

impl<T: Send> FromParallelIterator<T> for Vec<T> {
    fn from_par_iter<I: ParallelIterator<Item = T>>(iter: I) -> Vec<T> {
        let list = super::drive::drive(iter.into_producer(), VecConsumer { vec: Vec::new() });
        concat(list)
    }
}

/// One `Vec` from the pieces' lists, in order.
pub(crate) fn concat<T>(mut list: LinkedList<Vec<T>>) -> Vec<T> {
    if list.len() == 1 {
        return list.pop_front().expect("concat: one element");
    }
    let mut out = Vec::with_capacity(list.iter().map(Vec::len).sum());
    for mut v in list {
        out.append(&mut v);
    }
    out
}

/// A piece's items, in order.
pub(crate) struct VecConsumer<T> {
    vec: Vec<T>,
}

impl<T: Send> Consumer<T> for VecConsumer<T> {
    type Result = LinkedList<Vec<T>>;
    type Reducer = fn(LinkedList<Vec<T>>, LinkedList<Vec<T>>) -> LinkedList<Vec<T>>;
    fn begin(&mut self, positions: usize, exact: bool) {
        if exact {
            self.vec.reserve(positions);
        }
    }
    #[inline]
    fn consume_iter<I: Iterator<Item = T>>(&mut self, iter: I) {
        self.vec.extend(iter);
    }
    fn split_off(&self) -> Self {
        VecConsumer { vec: Vec::new() }
    }
    fn finish(self) -> LinkedList<Vec<T>> {
        let mut list = LinkedList::new();
        list.push_back(self.vec);
        list
    }
    fn reducer(&self) -> Self::Reducer {
        |mut left, mut right| {
            left.append(&mut right);
            left
        }
    }
}

/// `unzip` and `partition`: two ordered lists per piece.
pub(crate) struct PairConsumer<'f, A, B, F> {
    pub(crate) left: Vec<A>,
    pub(crate) right: Vec<B>,
    /// Sends an item to one side (unzip: both).
    pub(crate) route: &'f F,
}

/// Lists of both sides.
pub(crate) type Pair<A, B> = (LinkedList<Vec<A>>, LinkedList<Vec<B>>);

impl<T, A: Send, B: Send, F> Consumer<T> for PairConsumer<'_, A, B, F>
where
    F: Fn(T, &mut Vec<A>, &mut Vec<B>) + Sync,
{
    type Result = Pair<A, B>;
    type Reducer = fn(Pair<A, B>, Pair<A, B>) -> Pair<A, B>;
    #[inline]
    fn consume_iter<I: Iterator<Item = T>>(&mut self, iter: I) {
        for x in iter {
            (self.route)(x, &mut self.left, &mut self.right);
        }
    }
    fn split_off(&self) -> Self {
        PairConsumer {
            left: Vec::new(),
            right: Vec::new(),
            route: self.route,
        }
    }
    fn finish(self) -> Pair<A, B> {
        let (mut a, mut b) = (LinkedList::new(), LinkedList::new());
        a.push_back(self.left);
        b.push_back(self.right);
        (a, b)
    }
    fn reducer(&self) -> Self::Reducer {
        |(mut la, mut lb), (mut ra, mut rb)| {
            la.append(&mut ra);
            lb.append(&mut rb);
            (la, lb)
        }
    }
}
