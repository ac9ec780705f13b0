//! [`Shared`]: the producer of every adapter that runs its base with one part that all pieces
//! of a run share — a closure (`flat_map`, `update`, `positions`), a flag (`panic_fuse`,
//! `while_some`), a counter (`take_any`). Splitting hands each half the base's half and a
//! clone of the part's `Arc`; a block is the part's view over the base's block ([`Part`]). So
//! the positions, the bounds (`with_min_len`/`with_max_len`) and the splitting are the base's,
//! written once here rather than once per adapter.

use super::drive::Producer;
use std::marker::PhantomData;
use std::sync::Arc;

/// What an adapter adds to its base's blocks; `K` names the adapter, so one type (a closure)
/// can be the part of several adapters.
#[doc(hidden)]
pub trait Part<P: Producer, K>: Send + Sync {
    /// The adapter's items.
    type Item;
    /// A block: the part's view over a block of the base.
    type Iter<'s>: Iterator<Item = Self::Item>
    where
        P: 's,
        Self: 's;
    /// The block of the base's block `base`.
    fn block<'s>(&'s self, base: P::Iter<'s>) -> Self::Iter<'s>;
    /// True when every position still yields exactly one item (see `Producer::exact`): by
    /// default not, the adapter may drop items.
    fn exact(&self, base: &P) -> bool {
        let _ = base;
        false
    }
    /// True when the part ended the whole run: every piece then has no positions left.
    fn done(&self) -> bool {
        false
    }
}

/// A base producer and a part shared by all its pieces (see the module doc).
#[doc(hidden)]
pub struct Shared<P, S, K> {
    base: P,
    part: Arc<S>,
    kind: PhantomData<fn() -> K>,
}

impl<P, S, K> Shared<P, S, K> {
    pub(super) fn new(base: P, part: Arc<S>) -> Self {
        Shared {
            base,
            part,
            kind: PhantomData,
        }
    }
}

impl<P: std::fmt::Debug, S, K> std::fmt::Debug for Shared<P, S, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        super::debug::base_only(f, "Shared", &self.base)
    }
}

impl<P: Producer, S: Part<P, K>, K> Producer for Shared<P, S, K> {
    type Item = S::Item;
    type Iter<'s>
        = S::Iter<'s>
    where
        Self: 's;
    #[inline]
    fn len(&self) -> usize {
        if self.part.done() {
            0
        } else {
            self.base.len()
        }
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(mid);
        (
            Shared::new(l, Arc::clone(&self.part)),
            Shared::new(r, self.part),
        )
    }
    #[inline]
    fn take(&mut self, n: usize) -> Self::Iter<'_> {
        self.part.block(self.base.take(n))
    }
    fn exact(&self) -> bool {
        self.part.exact(&self.base)
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
