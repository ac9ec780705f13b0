//! `par_chunks_exact`, `par_rchunks_exact` and their `_mut` forms: the chunks of exactly `size`
//! elements, from the front or from the back, and the remainder left out, which the iterator
//! hands back (`remainder`, as `std`'s `ChunksExact::remainder`).
//!
//! From the front, the chunks are `par_chunks` of the slice without its remainder. From the
//! back, a piece is a slice whose chunks run from its end: the first `n` chunks are its last
//! `n * size` elements, so a split at `mid` keeps the slice's tail on the left.

use super::drive::Producer;
use super::source::{Chunks, ChunksMut};
use super::{IndexedParallelIterator, ParallelIterator};

/// The iterator of [`ParallelSlice::par_chunks_exact`](super::ParallelSlice::par_chunks_exact).
///
/// ```
/// use threadlab::prelude::*;
/// let v = [1, 2, 3, 4, 5];
/// let c = v.par_chunks_exact(2);
/// assert_eq!(c.remainder(), &[5]);
/// assert_eq!(c.len(), 2);
/// assert_eq!(c.map(|c| c[0] + c[1]).collect::<Vec<_>>(), [3, 7]);
/// ```
#[derive(Debug)]
pub struct ChunksExact<'a, T> {
    chunks: Chunks<'a, T>,
    rem: &'a [T],
}

/// A copy of the view (not of the elements).
impl<T> Clone for ChunksExact<'_, T> {
    fn clone(&self) -> Self {
        ChunksExact {
            chunks: self.chunks.clone(),
            rem: self.rem,
        }
    }
}

impl<'a, T> ChunksExact<'a, T> {
    pub(super) fn new(slice: &'a [T], size: usize) -> Self {
        assert!(size > 0, "par_chunks_exact: size must be at least 1");
        let (exact, rem) = slice.split_at(slice.len() - slice.len() % size);
        ChunksExact {
            chunks: Chunks::new(exact, size),
            rem,
        }
    }

    /// The last `len % size` elements, which no chunk holds.
    pub fn remainder(&self) -> &'a [T] {
        self.rem
    }
}

impl<'a, T: Sync> ParallelIterator for ChunksExact<'a, T> {
    type Item = &'a [T];
    type Producer = Chunks<'a, T>;
    fn into_producer(self) -> Chunks<'a, T> {
        self.chunks
    }
}
impl<T: Sync> IndexedParallelIterator for ChunksExact<'_, T> {
    fn len(&self) -> usize {
        Producer::len(&self.chunks)
    }
}

/// The iterator of
/// [`ParallelSliceMut::par_chunks_exact_mut`](super::ParallelSliceMut::par_chunks_exact_mut).
///
/// ```
/// use threadlab::prelude::*;
/// let mut v = [1, 2, 3, 4, 5];
/// let mut c = v.par_chunks_exact_mut(2);
/// c.take_remainder()[0] = 0;
/// c.for_each(|c| c.swap(0, 1));
/// assert_eq!(v, [2, 1, 4, 3, 0]);
/// ```
#[derive(Debug)]
pub struct ChunksExactMut<'a, T> {
    chunks: ChunksMut<'a, T>,
    rem: &'a mut [T],
}

impl<'a, T> ChunksExactMut<'a, T> {
    pub(super) fn new(slice: &'a mut [T], size: usize) -> Self {
        assert!(size > 0, "par_chunks_exact_mut: size must be at least 1");
        let at = slice.len() - slice.len() % size;
        let (exact, rem) = slice.split_at_mut(at);
        ChunksExactMut {
            chunks: ChunksMut::new(exact, size),
            rem,
        }
    }

    /// The last `len % size` elements, which no chunk holds.
    pub fn remainder(&mut self) -> &mut [T] {
        self.rem
    }

    /// The remainder, for as long as the slice is borrowed; the iterator keeps an empty one.
    pub fn take_remainder(&mut self) -> &'a mut [T] {
        std::mem::take(&mut self.rem)
    }

    /// The remainder, for as long as the slice is borrowed, giving up the chunks.
    pub fn into_remainder(self) -> &'a mut [T] {
        self.rem
    }
}

impl<'a, T: Send> ParallelIterator for ChunksExactMut<'a, T> {
    type Item = &'a mut [T];
    type Producer = ChunksMut<'a, T>;
    fn into_producer(self) -> ChunksMut<'a, T> {
        self.chunks
    }
}
impl<T: Send> IndexedParallelIterator for ChunksExactMut<'_, T> {
    fn len(&self) -> usize {
        Producer::len(&self.chunks)
    }
}

/// The iterator of
/// [`ParallelSlice::par_rchunks_exact`](super::ParallelSlice::par_rchunks_exact): chunks of
/// exactly `size` from the end.
///
/// ```
/// use threadlab::prelude::*;
/// let v = [1, 2, 3, 4, 5];
/// let c = v.par_rchunks_exact(2);
/// assert_eq!(c.remainder(), &[1]);
/// assert_eq!(c.collect::<Vec<_>>(), [&[4, 5][..], &[2, 3]]);
/// ```
#[derive(Debug)]
pub struct RChunksExact<'a, T> {
    exact: &'a [T],
    size: usize,
    rem: &'a [T],
}

/// A copy of the view (not of the elements).
impl<T> Clone for RChunksExact<'_, T> {
    fn clone(&self) -> Self {
        RChunksExact {
            exact: self.exact,
            size: self.size,
            rem: self.rem,
        }
    }
}

impl<'a, T> RChunksExact<'a, T> {
    pub(super) fn new(slice: &'a [T], size: usize) -> Self {
        assert!(size > 0, "par_rchunks_exact: size must be at least 1");
        let (rem, exact) = slice.split_at(slice.len() % size);
        RChunksExact { exact, size, rem }
    }

    /// The first `len % size` elements, which no chunk holds.
    pub fn remainder(&self) -> &'a [T] {
        self.rem
    }
}

impl<'a, T: Sync> Producer for RChunksExact<'a, T> {
    type Item = &'a [T];
    type Iter<'s>
        = std::slice::RChunksExact<'a, T>
    where
        Self: 's;
    fn len(&self) -> usize {
        self.exact.len() / self.size
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        // The first `mid` chunks are the last `mid * size` elements.
        let (r, l) = self.exact.split_at(self.exact.len() - mid * self.size);
        let piece = |exact| RChunksExact {
            exact,
            size: self.size,
            rem: &[],
        };
        (piece(l), piece(r))
    }
    fn take(&mut self, n: usize) -> Self::Iter<'_> {
        let (rest, tail) = self.exact.split_at(self.exact.len() - n * self.size);
        self.exact = rest;
        tail.rchunks_exact(self.size)
    }
}

impl<'a, T: Sync> ParallelIterator for RChunksExact<'a, T> {
    type Item = &'a [T];
    type Producer = Self;
    fn into_producer(self) -> Self {
        self
    }
}
impl<T: Sync> IndexedParallelIterator for RChunksExact<'_, T> {
    fn len(&self) -> usize {
        Producer::len(self)
    }
}

/// The iterator of
/// [`ParallelSliceMut::par_rchunks_exact_mut`](super::ParallelSliceMut::par_rchunks_exact_mut):
/// mutable chunks of exactly `size` from the end.
///
/// ```
/// use threadlab::prelude::*;
/// let mut v = [1, 2, 3, 4, 5];
/// let mut c = v.par_rchunks_exact_mut(2);
/// assert_eq!(c.remainder(), &[1]);
/// c.for_each(|c| c.swap(0, 1));
/// assert_eq!(v, [1, 3, 2, 5, 4]);
/// ```
#[derive(Debug)]
pub struct RChunksExactMut<'a, T> {
    exact: &'a mut [T],
    size: usize,
    rem: &'a mut [T],
}

impl<'a, T> RChunksExactMut<'a, T> {
    pub(super) fn new(slice: &'a mut [T], size: usize) -> Self {
        assert!(size > 0, "par_rchunks_exact_mut: size must be at least 1");
        let (rem, exact) = slice.split_at_mut(slice.len() % size);
        RChunksExactMut { exact, size, rem }
    }

    /// The first `len % size` elements, which no chunk holds.
    pub fn remainder(&mut self) -> &mut [T] {
        self.rem
    }

    /// The remainder, for as long as the slice is borrowed; the iterator keeps an empty one.
    pub fn take_remainder(&mut self) -> &'a mut [T] {
        std::mem::take(&mut self.rem)
    }

    /// The remainder, for as long as the slice is borrowed, giving up the chunks.
    pub fn into_remainder(self) -> &'a mut [T] {
        self.rem
    }
}

impl<'a, T: Send> Producer for RChunksExactMut<'a, T> {
    type Item = &'a mut [T];
    type Iter<'s>
        = std::slice::RChunksExactMut<'a, T>
    where
        Self: 's;
    fn len(&self) -> usize {
        self.exact.len() / self.size
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let size = self.size;
        let at = self.exact.len() - mid * size;
        let (r, l) = self.exact.split_at_mut(at);
        let l = RChunksExactMut {
            exact: l,
            size,
            rem: &mut [],
        };
        let r = RChunksExactMut {
            exact: r,
            size,
            rem: &mut [],
        };
        (l, r)
    }
    fn take(&mut self, n: usize) -> Self::Iter<'_> {
        let at = self.exact.len() - n * self.size;
        let (rest, tail) = std::mem::take(&mut self.exact).split_at_mut(at);
        self.exact = rest;
        tail.rchunks_exact_mut(self.size)
    }
}

impl<'a, T: Send> ParallelIterator for RChunksExactMut<'a, T> {
    type Item = &'a mut [T];
    type Producer = Self;
    fn into_producer(self) -> Self {
        self
    }
}
impl<T: Send> IndexedParallelIterator for RChunksExactMut<'_, T> {
    fn len(&self) -> usize {
        Producer::len(self)
    }
}
