//! [`Either`]: one of two values, for [`partition_map`](super::ParallelIterator::partition_map)
//! and for a pipeline that takes one of two shapes at run time (Rayon re-exports the `either`
//! crate's type under the same name; threadlab, std only, has its own with the same variants).
//! Its `ParallelIterator` impls are in `combine.rs`, its `ParallelExtend` in `collect.rs`: this
//! file names none of the iterator traits, so `mod.rs` may name `Either`.

use super::drive::Producer;

/// A value of one of two types.
///
/// As a parallel iterator, `Either` runs whichever side it holds (both sides yield the same
/// items); as a collection, it extends whichever side it holds.
///
/// ```
/// use threadlab::iter::Either;
/// use threadlab::prelude::*;
/// fn evens_or_all(evens: bool) -> Either<impl ParallelIterator<Item = u32>, impl ParallelIterator<Item = u32>> {
///     let all = (0u32..10).into_par_iter();
///     if evens { Either::Left(all.filter(|x| x % 2 == 0)) } else { Either::Right(all) }
/// }
/// assert_eq!(evens_or_all(true).count(), 5);
/// assert_eq!(evens_or_all(false).count(), 10);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Either<L, R> {
    /// The first kind.
    Left(L),
    /// The second kind.
    Right(R),
}

impl<L, R> Either<L, R> {
    /// True if it holds a `Left`.
    pub fn is_left(&self) -> bool {
        matches!(self, Either::Left(_))
    }

    /// True if it holds a `Right`.
    pub fn is_right(&self) -> bool {
        matches!(self, Either::Right(_))
    }

    /// The `Left` value, if it holds one.
    pub fn left(self) -> Option<L> {
        match self {
            Either::Left(l) => Some(l),
            Either::Right(_) => None,
        }
    }

    /// The `Right` value, if it holds one.
    pub fn right(self) -> Option<R> {
        match self {
            Either::Left(_) => None,
            Either::Right(r) => Some(r),
        }
    }

    /// A reference to whichever value it holds.
    ///
    /// ```
    /// use threadlab::iter::Either;
    /// let e: Either<Vec<u8>, String> = Either::Left(vec![1]);
    /// assert_eq!(e.as_ref(), Either::Left(&vec![1]));
    /// ```
    pub fn as_ref(&self) -> Either<&L, &R> {
        match self {
            Either::Left(l) => Either::Left(l),
            Either::Right(r) => Either::Right(r),
        }
    }

    /// A mutable reference to whichever value it holds.
    pub fn as_mut(&mut self) -> Either<&mut L, &mut R> {
        match self {
            Either::Left(l) => Either::Left(l),
            Either::Right(r) => Either::Right(r),
        }
    }

    /// `Left` and `Right` swapped.
    pub fn flip(self) -> Either<R, L> {
        match self {
            Either::Left(l) => Either::Right(l),
            Either::Right(r) => Either::Left(r),
        }
    }

    /// The value, mapped by `f` if it is a `Left`, by `g` if it is a `Right`.
    pub fn either<F: FnOnce(L) -> T, G: FnOnce(R) -> T, T>(self, f: F, g: G) -> T {
        match self {
            Either::Left(l) => f(l),
            Either::Right(r) => g(r),
        }
    }
}

/// Two sequential iterators of the same items: whichever it holds (a block of [`Either`] as a
/// parallel iterator).
impl<A: Iterator, B: Iterator<Item = A::Item>> Iterator for Either<A, B> {
    type Item = A::Item;
    #[inline]
    fn next(&mut self) -> Option<A::Item> {
        match self {
            Either::Left(a) => a.next(),
            Either::Right(b) => b.next(),
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            Either::Left(a) => a.size_hint(),
            Either::Right(b) => b.size_hint(),
        }
    }
}

impl<A: DoubleEndedIterator, B: DoubleEndedIterator<Item = A::Item>> DoubleEndedIterator
    for Either<A, B>
{
    fn next_back(&mut self) -> Option<A::Item> {
        match self {
            Either::Left(a) => a.next_back(),
            Either::Right(b) => b.next_back(),
        }
    }
}

impl<A: ExactSizeIterator, B: ExactSizeIterator<Item = A::Item>> ExactSizeIterator
    for Either<A, B>
{
}

impl<L: Producer, R: Producer<Item = L::Item>> Producer for Either<L, R> {
    type Item = L::Item;
    type Iter<'s>
        = Either<L::Iter<'s>, R::Iter<'s>>
    where
        Self: 's;
    fn len(&self) -> usize {
        match self {
            Either::Left(l) => l.len(),
            Either::Right(r) => r.len(),
        }
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        match self {
            Either::Left(l) => {
                let (a, b) = l.split_at(mid);
                (Either::Left(a), Either::Left(b))
            }
            Either::Right(r) => {
                let (a, b) = r.split_at(mid);
                (Either::Right(a), Either::Right(b))
            }
        }
    }
    fn take(&mut self, n: usize) -> Self::Iter<'_> {
        match self {
            Either::Left(l) => Either::Left(l.take(n)),
            Either::Right(r) => Either::Right(r.take(n)),
        }
    }
    fn exact(&self) -> bool {
        match self {
            Either::Left(l) => l.exact(),
            Either::Right(r) => r.exact(),
        }
    }
    fn min_len(&self) -> usize {
        match self {
            Either::Left(l) => l.min_len(),
            Either::Right(r) => r.min_len(),
        }
    }
    fn max_len(&self) -> usize {
        match self {
            Either::Left(l) => l.max_len(),
            Either::Right(r) => r.max_len(),
        }
    }
    fn blocks(&self) -> Option<super::drive::Blocks> {
        match self {
            Either::Left(l) => l.blocks(),
            Either::Right(r) => r.blocks(),
        }
    }
}
