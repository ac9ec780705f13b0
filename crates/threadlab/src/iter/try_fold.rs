//! `try_fold` and `try_fold_with` as parallel iterators: `fold` whose operation may stop.
//!
//! As `fold` (`combine.rs`), one accumulator per block a worker ran: the block's items are
//! folded from `identity()` (or a clone of the initial value) until the operation returns a
//! stop (`None`, `Err`, `Break`, see [`Try`]); the block then yields that stop and its piece
//! ends (it reports no positions left, so the engine runs no more of it), as a piece of
//! Rayon's `try_fold` stops at its first stop. A block that never stopped yields its
//! accumulator, wrapped as going on (`Some`, `Ok`, `Continue`). So `try_reduce` of the results
//! is `std`'s `try_fold` of the whole when the operation is associative.

use super::combine::MakeState;
use super::drive::Producer;
use super::{ParallelIterator, Try};
use std::sync::Arc;

/// The iterator of [`ParallelIterator::try_fold`] (`S` = [`InitFn`](super::InitFn)) and
/// [`ParallelIterator::try_fold_with`] (`S` = [`CloneOf`](super::CloneOf)).
///
/// ```
/// use threadlab::prelude::*;
/// let sums: Option<u32> = (1u32..5)
///     .into_par_iter()
///     .try_fold(|| 0u32, |a, x| a.checked_add(x))
///     .try_reduce(|| 0, |a, b| a.checked_add(b));
/// assert_eq!(sums, Some(10));
/// ```
pub struct TryFold<I, S, F> {
    base: I,
    state: Arc<S>,
    fold_op: Arc<F>,
    stopped: bool,
}

impl<I: std::fmt::Debug, S, F> std::fmt::Debug for TryFold<I, S, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        super::debug::base_only(f, "TryFold", &self.base)
    }
}

impl<I: Clone, S, F> Clone for TryFold<I, S, F> {
    fn clone(&self) -> Self {
        TryFold {
            base: self.base.clone(),
            state: Arc::clone(&self.state),
            fold_op: Arc::clone(&self.fold_op),
            stopped: self.stopped,
        }
    }
}

impl<I, S, F> TryFold<I, S, F> {
    /// `base` folded by `fold_op` from the state `S` makes per block ([`InitFn`](super::InitFn): `try_fold`,
    /// [`CloneOf`](super::CloneOf): `try_fold_with`).
    pub(super) fn new(base: I, state: S, fold_op: F) -> Self {
        TryFold {
            base,
            state: Arc::new(state),
            fold_op: Arc::new(fold_op),
            stopped: false,
        }
    }
}

impl<I: ParallelIterator, S: MakeState, F, R> ParallelIterator for TryFold<I, S, F>
where
    F: Fn(S::State, I::Item) -> R + Sync + Send,
    R: Try<Output = S::State> + Send,
{
    type Item = R;
    type Producer = TryFold<I::Producer, S, F>;
    fn into_producer(self) -> Self::Producer {
        TryFold {
            base: self.base.into_producer(),
            state: self.state,
            fold_op: self.fold_op,
            stopped: false,
        }
    }
}

impl<P: Producer, S: MakeState, F, R> Producer for TryFold<P, S, F>
where
    F: Fn(S::State, P::Item) -> R + Sync + Send,
    R: Try<Output = S::State> + Send,
{
    type Item = R;
    type Iter<'s>
        = std::option::IntoIter<R>
    where
        Self: 's;
    fn len(&self) -> usize {
        if self.stopped {
            0
        } else {
            self.base.len()
        }
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(mid);
        let left = TryFold {
            base: l,
            state: Arc::clone(&self.state),
            fold_op: Arc::clone(&self.fold_op),
            stopped: self.stopped,
        };
        (left, TryFold { base: r, ..self })
    }
    fn take(&mut self, n: usize) -> Self::Iter<'_> {
        let mut acc = self.state.make();
        for x in self.base.take(n) {
            match (self.fold_op)(acc, x).branch() {
                Ok(next) => acc = next,
                Err(stop) => {
                    self.stopped = true;
                    return Some(stop).into_iter();
                }
            }
        }
        Some(R::from_output(acc)).into_iter()
    }
    fn exact(&self) -> bool {
        false
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
    fn blocks(&self) -> Option<super::drive::Blocks> {
        self.base.blocks()
    }
}
