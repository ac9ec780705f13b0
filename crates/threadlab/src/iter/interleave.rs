//! `interleave` and `interleave_shortest`: the items of two indexed iterators taken by turns.
//!
//! Both sides are run (in parallel with each other, each in parallel) into buffers when the
//! pipeline runs, and the rest of the pipeline runs over their interleaving, as `rev` runs
//! over its gathered items: the turns are positions of the output, which neither side's
//! pieces know without the other's length.

use super::indexed::Cut;
use super::{IndexedParallelIterator, IntoIter, ParallelIterator};

/// The iterator of [`IndexedParallelIterator::interleave`]: `a0, b0, a1, b1, …`, then the
/// rest of the longer side.
///
/// ```
/// use threadlab::prelude::*;
/// let v: Vec<u8> = [1, 2, 3].par_iter().interleave(&[7]).copied().collect();
/// assert_eq!(v, [1, 7, 2, 3]);
/// ```
#[derive(Debug, Clone)]
pub struct Interleave<I, J> {
    a: I,
    b: J,
}

impl<I, J> Interleave<I, J> {
    pub(super) fn new(a: I, b: J) -> Self {
        Interleave { a, b }
    }
}

impl<I, J> ParallelIterator for Interleave<I, J>
where
    I: IndexedParallelIterator,
    J: IndexedParallelIterator<Item = I::Item>,
{
    type Item = I::Item;
    type Producer = IntoIter<I::Item>;
    fn into_producer(self) -> IntoIter<I::Item> {
        let (a, b): (Vec<I::Item>, Vec<I::Item>) =
            crate::join(|| self.a.collect(), || self.b.collect());
        let mut out = Vec::with_capacity(a.len() + b.len());
        let (mut a, mut b) = (a.into_iter(), b.into_iter());
        loop {
            match a.next() {
                Some(x) => out.push(x),
                None => {
                    out.extend(b);
                    break;
                }
            }
            match b.next() {
                Some(y) => out.push(y),
                None => {
                    out.extend(a);
                    break;
                }
            }
        }
        out.into()
    }
}

impl<I, J> IndexedParallelIterator for Interleave<I, J>
where
    I: IndexedParallelIterator,
    J: IndexedParallelIterator<Item = I::Item>,
{
    fn len(&self) -> usize {
        self.a.len() + self.b.len()
    }
}

/// The iterator of [`IndexedParallelIterator::interleave_shortest`]: `a0, b0, a1, b1, …`
/// until a side runs out (`a`'s next item still comes if `b` ran out first). It is
/// [`Interleave`] of the two sides cut to those lengths.
///
/// ```
/// use threadlab::prelude::*;
/// let v: Vec<u8> = [1, 2, 3, 4].par_iter().interleave_shortest(&[7, 8]).copied().collect();
/// assert_eq!(v, [1, 7, 2, 8, 3]);
/// ```
pub type InterleaveShortest<I, J> = Interleave<Cut<I>, Cut<J>>;

/// [`InterleaveShortest`] of `a` and `b`: `a` cut to one more item than `b` has (or to its
/// own length), `b` to `a`'s length.
pub(super) fn interleave_shortest<I: IndexedParallelIterator, J: IndexedParallelIterator>(
    a: I,
    b: J,
) -> InterleaveShortest<I, J> {
    let (la, lb) = (a.len(), b.len());
    Interleave::new(
        Cut::new(a, 0, la.min(lb.saturating_add(1))),
        Cut::new(b, 0, lb.min(la)),
    )
}
