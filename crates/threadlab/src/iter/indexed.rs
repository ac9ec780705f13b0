//! The indexed adapters that cut or stride positions: `take`, `skip` (a split of the base's
//! producer, nothing per item), `step_by` (`std`'s `StepBy` over each block) and `rev` (the
//! base's items gathered, then run backwards, when the pipeline runs).

use super::drive::Producer;
use super::{IndexedParallelIterator, ParallelIterator};

/// The iterator of [`IndexedParallelIterator::take`] and [`IndexedParallelIterator::skip`]:
/// positions `start..end` of the base (clamped to its length). The skipped positions' items
/// are made and dropped when the pipeline runs (the base's side effects happen for them, as in
/// Rayon); those after `end` are never made.
///
/// ```
/// use threadlab::prelude::*;
/// let v: Vec<u32> = (0u32..10).into_par_iter().skip(2).take(3).collect();
/// assert_eq!(v, [2, 3, 4]);
/// ```
#[derive(Debug, Clone)]
pub struct Cut<I> {
    base: I,
    start: usize,
    end: usize,
}

impl<I> Cut<I> {
    pub(super) fn new(base: I, start: usize, end: usize) -> Self {
        Cut { base, start, end }
    }
}

impl<I: IndexedParallelIterator> ParallelIterator for Cut<I> {
    type Item = I::Item;
    type Producer = I::Producer;
    fn into_producer(self) -> I::Producer {
        let p = self.base.into_producer();
        let end = self.end.min(p.len());
        let (head, _) = p.split_at(end);
        let start = self.start.min(end);
        let (skipped, rest) = head.split_at(start);
        if start > 0 {
            // The skipped items are made and dropped, as Rayon's `skip` does: the pipeline's
            // side effects before the `skip` happen for them too. (The items after a `take` are
            // never made, as in Rayon.)
            super::drive::drive(skipped, super::drive::Drain(std::marker::PhantomData));
        }
        rest
    }
    fn opt_len(&self) -> Option<usize> {
        Some(IndexedParallelIterator::len(self))
    }
}
impl<I: IndexedParallelIterator> IndexedParallelIterator for Cut<I> {
    fn len(&self) -> usize {
        {
            let end = self.end.min(self.base.len());
            end - self.start.min(end)
        }
    }
}

/// The iterator of [`IndexedParallelIterator::step_by`]: every `step`-th item, from the
/// first.
///
/// ```
/// use threadlab::prelude::*;
/// let v: Vec<u32> = (0u32..10).into_par_iter().step_by(4).collect();
/// assert_eq!(v, [0, 4, 8]);
/// ```
#[derive(Debug, Clone)]
pub struct StepBy<I> {
    base: I,
    step: usize,
}

impl<I> StepBy<I> {
    pub(super) fn new(base: I, step: usize) -> Self {
        StepBy { base, step }
    }
}

impl<I: IndexedParallelIterator> ParallelIterator for StepBy<I> {
    type Item = I::Item;
    type Producer = StepBy<I::Producer>;
    fn into_producer(self) -> Self::Producer {
        StepBy::new(self.base.into_producer(), self.step)
    }
    fn opt_len(&self) -> Option<usize> {
        Some(IndexedParallelIterator::len(self))
    }
}
impl<I: IndexedParallelIterator> IndexedParallelIterator for StepBy<I> {
    fn len(&self) -> usize {
        self.base.len().div_ceil(self.step)
    }
}

impl<P: Producer> Producer for StepBy<P> {
    type Item = P::Item;
    type Iter<'s>
        = std::iter::StepBy<P::Iter<'s>>
    where
        Self: 's;
    fn len(&self) -> usize {
        self.base.len().div_ceil(self.step)
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let at = (mid * self.step).min(self.base.len());
        let (l, r) = self.base.split_at(at);
        (StepBy::new(l, self.step), StepBy::new(r, self.step))
    }
    fn take(&mut self, n: usize) -> Self::Iter<'_> {
        let at = (n * self.step).min(self.base.len());
        self.base.take(at).step_by(self.step)
    }
}

/// The iterator of [`IndexedParallelIterator::zip_eq`]: `zip` of two iterators that must be
/// as long as each other.
///
/// ```
/// use threadlab::prelude::*;
/// let v: Vec<(u8, char)> = (0u8..2).into_par_iter().zip_eq(['a', 'b']).collect();
/// assert_eq!(v, [(0, 'a'), (1, 'b')]);
/// ```
#[derive(Debug, Clone)]
pub struct ZipEq<A, B> {
    a: A,
    b: B,
}

impl<A, B> ZipEq<A, B> {
    pub(super) fn new(a: A, b: B) -> Self {
        ZipEq { a, b }
    }
}

impl<A: IndexedParallelIterator, B: IndexedParallelIterator> ParallelIterator for ZipEq<A, B> {
    type Item = (A::Item, B::Item);
    type Producer = super::Zip<A::Producer, B::Producer>;
    fn into_producer(self) -> Self::Producer {
        let (a, b) = (self.a.into_producer(), self.b.into_producer());
        assert_eq!(a.len(), b.len(), "zip_eq: the iterators' lengths differ");
        super::Zip::new(a, b)
    }
}
impl<A: IndexedParallelIterator, B: IndexedParallelIterator> IndexedParallelIterator
    for ZipEq<A, B>
{
    fn len(&self) -> usize {
        self.a.len()
    }
}

/// The iterator of [`IndexedParallelIterator::rev`]: the base's items in reverse order.
///
/// Lazy, as Rayon's `Rev`: nothing runs until a terminal method does. Then the base runs (in
/// parallel) into a buffer, and the rest of the pipeline runs over the buffer from its end. So
/// a panic in the base's closures is raised by the terminal method, where the caller catches it.
///
/// ```
/// use threadlab::prelude::*;
/// let v: Vec<u32> = (0u32..5).into_par_iter().map(|x| x * 10).rev().collect();
/// assert_eq!(v, [40, 30, 20, 10, 0]);
/// ```
#[derive(Debug, Clone)]
pub struct Rev<I> {
    base: I,
}

impl<I> Rev<I> {
    pub(super) fn new(base: I) -> Self {
        Rev { base }
    }
}

impl<I: IndexedParallelIterator> ParallelIterator for Rev<I> {
    type Item = I::Item;
    type Producer = super::IntoIter<I::Item>;
    fn into_producer(self) -> Self::Producer {
        let mut v: Vec<I::Item> = self.base.collect();
        v.reverse();
        v.into()
    }
    fn opt_len(&self) -> Option<usize> {
        Some(IndexedParallelIterator::len(self))
    }
}
impl<I: IndexedParallelIterator> IndexedParallelIterator for Rev<I> {
    fn len(&self) -> usize {
        self.base.len()
    }
}
