//! Rayon's splitting knobs, `with_min_len`, `with_max_len`, `by_exponential_blocks` and
//! `by_uniform_blocks`, accepted with their meaning.
//!
//! Heartbeat splitting needs none of them: a pipeline is split only when a worker is idle, so
//! there is no grain size to tune. A program that sets one still gets what it asked for:
//! `with_min_len(n)` never splits off a piece shorter than `n` positions; `with_max_len(n)`
//! splits every piece longer than `n` at once, without waiting for a beat (Rayon's splitter
//! does the same); `by_exponential_blocks` and `by_uniform_blocks` run the pipeline in
//! sequential blocks, each split in parallel and finished before the next starts (the
//! engine's `run_blocks`), as Rayon's do.

use super::drive::{Blocks, Producer};
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
    /// Sequential blocks asked for (`by_uniform_blocks`, `by_exponential_blocks`).
    blocks: Option<Blocks>,
}

impl<I> Bounded<I> {
    pub(super) fn new(base: I, min: usize, max: usize) -> Self {
        // A piece of one position cannot be split: a bound of 0 means 1.
        Bounded {
            base,
            min: min.max(1),
            max: max.max(1),
            blocks: None,
        }
    }

    /// The base run in sequential `blocks`.
    pub(super) fn in_blocks(base: I, blocks: Blocks) -> Self {
        Bounded {
            blocks: Some(blocks),
            ..Bounded::new(base, 1, usize::MAX)
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
            blocks: self.blocks,
        }
    }
    fn opt_len(&self) -> Option<usize> {
        self.base.opt_len()
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
        let (min, max, blocks) = (self.min, self.max, self.blocks);
        (
            Bounded {
                base: l,
                min,
                max,
                blocks,
            },
            Bounded {
                base: r,
                min,
                max,
                blocks,
            },
        )
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
    fn blocks(&self) -> Option<Blocks> {
        self.blocks.or(self.base.blocks())
    }
}
