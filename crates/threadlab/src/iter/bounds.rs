//! Rayon's splitting knobs, `with_min_len`, `with_max_len`, `by_exponential_blocks` and
//! `by_uniform_blocks`, accepted with their meaning.
//!
//! Heartbeat splitting needs none of them: a pipeline is split only when a worker is idle, so
//! there is no grain size to tune. A program that sets one still gets what it asked for:
//! `with_min_len(n)` never splits off a piece shorter than `n` positions; `with_max_len(n)`
//! splits every piece longer than `n` at once, without waiting for a beat (Rayon's splitter
//! does the same); `by_exponential_blocks` and `by_uniform_blocks` ask for a run in order,
//! block after block, which is how a heartbeat run proceeds already, so they change nothing
//! but the type.

use super::drive::Producer;
use super::{IndexedParallelIterator, ParallelIterator};

/// The iterator of `with_min_len`, `with_max_len`, `by_exponential_blocks` and
/// `by_uniform_blocks`: the base's items, with bounds on how its pieces are cut.
///
/// ```
/// use threadlab::prelude::*;
/// let v: Vec<u32> = (0u32..100).into_par_iter().with_max_len(10).map(|x| x * 2).collect();
/// assert_eq!(v, (0..100).map(|x| x * 2).collect::<Vec<u32>>());
/// ```
#[derive(Debug, Clone)]
pub struct Bounded<I> {
    base: I,
    min: usize,
    max: usize,
}

impl<I> Bounded<I> {
    pub(super) fn new(base: I, min: usize, max: usize) -> Self {
        // A piece of one position cannot be split: a bound of 0 means 1.
        Bounded {
            base,
            min: min.max(1),
            max: max.max(1),
        }
    }
}

impl<I: ParallelIterator> ParallelIterator for Bounded<I> {
    type Item = I::Item;
    type Producer = Bounded<I::Producer>;
    fn into_producer(self) -> Self::Producer {
        Bounded {
            base: self.base.into_producer(),
            min: self.min,
            max: self.max,
        }
    }
}
impl<I: IndexedParallelIterator> IndexedParallelIterator for Bounded<I> {
    fn len(&self) -> usize {
        self.base.len()
    }
}

impl<P: Producer> Producer for Bounded<P> {
    type Item = P::Item;
    type Iter<'s>
        = P::Iter<'s>
    where
        Self: 's;
    #[inline]
    fn len(&self) -> usize {
        self.base.len()
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(mid);
        let (min, max) = (self.min, self.max);
        (Bounded { base: l, min, max }, Bounded { base: r, min, max })
    }
    #[inline]
    fn take(&mut self, n: usize) -> Self::Iter<'_> {
        self.base.take(n)
    }
    fn exact(&self) -> bool {
        self.base.exact()
    }
    fn min_len(&self) -> usize {
        self.min.max(self.base.min_len())
    }
    fn max_len(&self) -> usize {
        self.max.min(self.base.max_len())
    }
}
