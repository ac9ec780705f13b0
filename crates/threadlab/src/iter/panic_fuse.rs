//! `panic_fuse`: once a panic unwinds through any block of the fused pipeline, the other
//! pieces stop taking items (Rayon's `panic_fuse`). Without it, a panic stops only its own
//! piece; the others run to their end before the terminal method re-raises it.
//!
//! A block's iterator sets a shared flag when it is dropped during a panic (the closures of
//! the pipeline run inside its `next`, and the consumer's while it is alive), and reads the
//! flag before each item.

use super::drive::Producer;
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
    type Producer = PanicFuse<I::Producer>;
    fn into_producer(self) -> Self::Producer {
        PanicFuse {
            base: self.base.into_producer(),
            fused: self.fused,
        }
    }
}
impl<I: IndexedParallelIterator> IndexedParallelIterator for PanicFuse<I> {
    fn len(&self) -> usize {
        self.base.len()
    }
}

impl<P: Producer> Producer for PanicFuse<P> {
    type Item = P::Item;
    type Iter<'s>
        = FuseIter<'s, P::Iter<'s>>
    where
        Self: 's;
    fn len(&self) -> usize {
        self.base.len()
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(mid);
        let fused = Arc::clone(&self.fused);
        (
            PanicFuse { base: l, fused },
            PanicFuse {
                base: r,
                fused: self.fused,
            },
        )
    }
    fn take(&mut self, n: usize) -> Self::Iter<'_> {
        FuseIter {
            base: self.base.take(n),
            fused: &self.fused,
        }
    }
    fn exact(&self) -> bool {
        // A fused piece may yield fewer items than it has positions.
        false
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
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
