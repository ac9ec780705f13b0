//! `panic_fuse`: once a panic unwinds through any block of the fused pipeline, the other
//! pieces stop taking items (Rayon's `panic_fuse`). Without it, a panic stops only its own
//! piece; the others run to their end before the terminal method re-raises it.
//!
//! A block's iterator sets a shared flag when it is dropped during a panic (the closures of
//! the pipeline run inside its `next`, and the consumer's while it is alive), and reads the
//! flag before each item.

use super::drive::Producer;
use super::shared::{Part, Shared};
use super::{IndexedParallelIterator, ParallelIterator};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The iterator of [`ParallelIterator::panic_fuse`].
///
/// ```
/// use threadlab::prelude::*;
/// assert_eq!((0u32..10).into_par_iter().panic_fuse().sum::<u32>(), 45);
/// ```
#[derive(Debug, Clone)]
pub struct PanicFuse<I> {
    base: I,
    fused: Arc<AtomicBool>,
}

impl<I> PanicFuse<I> {
    pub(super) fn new(base: I) -> Self {
        PanicFuse {
            base,
            fused: Arc::new(AtomicBool::new(false)),
        }
    }
}

impl<I: ParallelIterator> ParallelIterator for PanicFuse<I> {
    type Item = I::Item;
    type Producer = Shared<I::Producer, AtomicBool, Fuse>;
    fn into_producer(self) -> Self::Producer {
        Shared::new(self.base.into_producer(), self.fused)
    }
    fn opt_len(&self) -> Option<usize> {
        self.base.opt_len()
    }
}
impl<I: IndexedParallelIterator> IndexedParallelIterator for PanicFuse<I> {
    fn len(&self) -> usize {
        self.base.len()
    }
}

/// The [`Part`] of [`PanicFuse`]: the flag that a panic in any block sets.
#[doc(hidden)]
#[derive(Debug)]
pub enum Fuse {}

impl<P: Producer> Part<P, Fuse> for AtomicBool {
    type Item = P::Item;
    type Iter<'s>
        = FuseIter<'s, P::Iter<'s>>
    where
        P: 's;
    fn block<'s>(&'s self, base: P::Iter<'s>) -> Self::Iter<'s> {
        FuseIter { base, fused: self }
    }
}

/// The block iterator of [`PanicFuse`].
#[derive(Debug)]
pub struct FuseIter<'s, It> {
    base: It,
    fused: &'s AtomicBool,
}

impl<It: Iterator> Iterator for FuseIter<'_, It> {
    type Item = It::Item;
    fn next(&mut self) -> Option<It::Item> {
        // Relaxed: the flag only makes other pieces stop sooner; the panic itself reaches the
        // caller through the join that runs the pieces, which orders everything.
        if self.fused.load(Ordering::Relaxed) {
            return None;
        }
        self.base.next()
    }
}

impl<It> Drop for FuseIter<'_, It> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // Relaxed: see `next`.
            self.fused.store(true, Ordering::Relaxed);
        }
    }
}
