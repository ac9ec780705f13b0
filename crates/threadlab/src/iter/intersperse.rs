//! `intersperse`: a clone of a separator between every two neighbouring items.
//!
//! The producer numbers its positions as the output does: for `n` base items, `2n - 1`
//! positions, item `k` at position `2k` and a separator at every odd position. So the adapter
//! is indexed when its base is (it can be zipped, enumerated, reversed), and a piece is cut
//! anywhere: a piece knows whether its first position is a separator (`lead_sep`), from which
//! the number of base items it holds follows (`base_items`). A base without positions per item
//! (a `filter`, say: its positions are its base's, not its items) is gathered into a buffer
//! first, in parallel, as `rev` does: only then is "between two items" known in every piece.

use super::drive::Producer;
use super::{IndexedParallelIterator, IntoIter, ParallelIterator};

/// The iterator of [`ParallelIterator::intersperse`].
///
/// ```
/// use threadlab::prelude::*;
/// let v: Vec<i32> = (1..4).into_par_iter().intersperse(0).collect();
/// assert_eq!(v, [1, 0, 2, 0, 3]);
/// ```
#[derive(Debug, Clone)]
pub struct Intersperse<I: ParallelIterator> {
    base: I,
    sep: I::Item,
}

impl<I: ParallelIterator> Intersperse<I> {
    pub(super) fn new(base: I, sep: I::Item) -> Self {
        Intersperse { base, sep }
    }
}

impl<I: ParallelIterator> ParallelIterator for Intersperse<I>
where
    I::Item: Clone,
{
    type Item = I::Item;
    type Producer = SepProducer<Source<I::Producer>>;
    fn into_producer(self) -> Self::Producer {
        let p = self.base.into_producer();
        let source = if p.exact() {
            Source::Direct(p)
        } else {
            // Positions are not items: gather the items (in parallel, in order).
            Source::Gathered(IntoIter::from(super::collect::collect_producer(p)))
        };
        let items = source.len();
        SepProducer {
            base: source,
            sep: self.sep,
            lead_sep: false,
            len: (2 * items).saturating_sub(1),
        }
    }
}

impl<I: IndexedParallelIterator> IndexedParallelIterator for Intersperse<I>
where
    I::Item: Clone,
{
    fn len(&self) -> usize {
        (2 * self.base.len()).saturating_sub(1)
    }
}

/// The base of an [`Intersperse`] producer: the base's own producer when its positions are its
/// items, else its items gathered.
#[doc(hidden)]
#[derive(Debug)]
pub enum Source<P: Producer> {
    Direct(P),
    Gathered(IntoIter<P::Item>),
}

impl<P: Producer> Producer for Source<P>
where
    P::Item: Send,
{
    type Item = P::Item;
    type Iter<'s>
        = SourceIter<P::Iter<'s>, std::collections::vec_deque::Drain<'s, P::Item>>
    where
        Self: 's;
    fn len(&self) -> usize {
        match self {
            Source::Direct(p) => p.len(),
            Source::Gathered(g) => Producer::len(g),
        }
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        match self {
            Source::Direct(p) => {
                let (l, r) = p.split_at(mid);
                (Source::Direct(l), Source::Direct(r))
            }
            Source::Gathered(g) => {
                let (l, r) = g.split_at(mid);
                (Source::Gathered(l), Source::Gathered(r))
            }
        }
    }
    fn take(&mut self, n: usize) -> Self::Iter<'_> {
        match self {
            Source::Direct(p) => SourceIter::Direct(p.take(n)),
            Source::Gathered(g) => SourceIter::Gathered(g.take(n)),
        }
    }
    fn min_len(&self) -> usize {
        match self {
            Source::Direct(p) => p.min_len(),
            Source::Gathered(_) => 1,
        }
    }
    fn max_len(&self) -> usize {
        match self {
            Source::Direct(p) => p.max_len(),
            Source::Gathered(_) => usize::MAX,
        }
    }
}

/// A block of a [`Source`].
#[doc(hidden)]
#[derive(Debug)]
pub enum SourceIter<A, B> {
    Direct(A),
    Gathered(B),
}

impl<T, A: Iterator<Item = T>, B: Iterator<Item = T>> Iterator for SourceIter<A, B> {
    type Item = T;
    #[inline]
    fn next(&mut self) -> Option<T> {
        match self {
            SourceIter::Direct(a) => a.next(),
            SourceIter::Gathered(b) => b.next(),
        }
    }
}

/// The producer of [`Intersperse`]: `len` output positions, the first a separator if
/// `lead_sep`, then alternating.
#[doc(hidden)]
#[derive(Debug)]
pub struct SepProducer<P: Producer> {
    base: P,
    sep: P::Item,
    lead_sep: bool,
    len: usize,
}

/// How many base items `len` positions hold when the first is a separator (`lead_sep`) or an
/// item.
fn base_items(lead_sep: bool, len: usize) -> usize {
    if lead_sep {
        len / 2
    } else {
        len.div_ceil(2)
    }
}

impl<P: Producer> Producer for SepProducer<P>
where
    P::Item: Clone + Send,
{
    type Item = P::Item;
    type Iter<'s>
        = SepIter<P::Iter<'s>, P::Item>
    where
        Self: 's;
    fn len(&self) -> usize {
        self.len
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(base_items(self.lead_sep, mid));
        // Position `mid` is a separator if its parity differs from the first position's kind.
        let right_lead = self.lead_sep ^ (mid % 2 == 1);
        (
            SepProducer {
                base: l,
                sep: self.sep.clone(),
                lead_sep: self.lead_sep,
                len: mid,
            },
            SepProducer {
                base: r,
                sep: self.sep,
                lead_sep: right_lead,
                len: self.len - mid,
            },
        )
    }
    fn take(&mut self, n: usize) -> Self::Iter<'_> {
        let items = base_items(self.lead_sep, n);
        let next_sep = self.lead_sep;
        self.lead_sep ^= n % 2 == 1;
        self.len -= n;
        SepIter {
            base: self.base.take(items),
            sep: self.sep.clone(),
            next_sep,
            left: n,
        }
    }
    fn min_len(&self) -> usize {
        self.base.min_len().saturating_mul(2)
    }
    fn max_len(&self) -> usize {
        self.base.max_len().saturating_mul(2)
    }
}

/// A block of [`SepProducer`]: `left` positions, alternating separators and base items.
#[doc(hidden)]
#[derive(Debug)]
pub struct SepIter<I, T> {
    base: I,
    sep: T,
    next_sep: bool,
    left: usize,
}

impl<T: Clone, I: Iterator<Item = T>> Iterator for SepIter<I, T> {
    type Item = T;
    #[inline]
    fn next(&mut self) -> Option<T> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let sep = self.next_sep;
        self.next_sep = !sep;
        if sep {
            Some(self.sep.clone())
        } else {
            self.base.next()
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}
