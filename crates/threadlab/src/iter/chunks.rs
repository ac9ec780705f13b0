//! A slice's fixed-size chunks: `par_chunks` and `par_chunks_mut` ([`Chunks`], [`ChunksMut`],
//! each its own producer: a split is a split of the slice at a multiple of the size); and
//! `par_chunks_exact`, `par_rchunks_exact` and their `_mut` forms: the chunks of exactly `size`
//! elements, from the front or from the back, and the remainder left out, which the iterator
//! hands back (`remainder`, as `std`'s `ChunksExact::remainder`).
//!
//! From the front, the chunks are `par_chunks` of the slice without its remainder. From the
//! back, a piece is a slice whose chunks run from its end: the first `n` chunks are its last
//! `n * size` elements, so a split at `mid` keeps the slice's tail on the left.

//!
//! The four iterators are one type, [`Exact`]: the chunks (a parallel iterator) and the
//! remainder; the shared and the mutable forms differ only in the slice they hold, and the two
//! from-the-back producers are one, [`RExact`], over either slice ([`SlicePart`]).

use super::drive::Producer;
use super::{IndexedParallelIterator, ParallelIterator};

/// A parallel iterator over consecutive `&[T]` chunks, from `par_chunks(n)`.
///
/// ```
/// use threadlab::prelude::*;
/// let v = [1, 2, 3, 4, 5];
/// let sums: Vec<i32> = v.par_chunks(2).map(|c| c.iter().sum()).collect();
/// assert_eq!(sums, [3, 7, 5]);
/// ```
#[derive(Debug)]
pub struct Chunks<'a, T> {
    slice: &'a [T],
    size: usize,
}

/// A copy of the view (not of the elements).
impl<T> Clone for Chunks<'_, T> {
    fn clone(&self) -> Self {
        Chunks {
            slice: self.slice,
            size: self.size,
        }
    }
}

impl<'a, T> Chunks<'a, T> {
    /// Chunks of `size` (at least 1) of `slice`.
    pub(super) fn new(slice: &'a [T], size: usize) -> Self {
        Chunks { slice, size }
    }
}

impl<'a, T: Sync> Producer for Chunks<'a, T> {
    type Item = &'a [T];
    type Iter<'s>
        = std::slice::Chunks<'a, T>
    where
        Self: 's;
    #[inline]
    fn len(&self) -> usize {
        self.slice.len().div_ceil(self.size)
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let (l, r) = self.slice.split_at((mid * self.size).min(self.slice.len()));
        let size = self.size;
        (Chunks { slice: l, size }, Chunks { slice: r, size })
    }
    #[inline]
    fn take(&mut self, n: usize) -> std::slice::Chunks<'a, T> {
        let (head, rest) = self.slice.split_at((n * self.size).min(self.slice.len()));
        self.slice = rest;
        head.chunks(self.size)
    }
}

impl<'a, T: Sync> ParallelIterator for Chunks<'a, T> {
    type Item = &'a [T];
    type Producer = Self;
    fn into_producer(self) -> Self {
        self
    }
}
impl<T: Sync> IndexedParallelIterator for Chunks<'_, T> {
    fn len(&self) -> usize {
        self.slice.len().div_ceil(self.size)
    }
}

/// A parallel iterator over consecutive `&mut [T]` chunks, from `par_chunks_mut(n)`.
///
/// ```
/// use threadlab::prelude::*;
/// let mut v = [0u8; 5];
/// v.par_chunks_mut(2).enumerate().for_each(|(i, c)| c.fill(i as u8));
/// assert_eq!(v, [0, 0, 1, 1, 2]);
/// ```
#[derive(Debug)]
pub struct ChunksMut<'a, T> {
    slice: &'a mut [T],
    size: usize,
}

impl<'a, T> ChunksMut<'a, T> {
    /// Chunks of `size` (at least 1) of `slice`.
    pub(super) fn new(slice: &'a mut [T], size: usize) -> Self {
        ChunksMut { slice, size }
    }
}

impl<'a, T: Send> Producer for ChunksMut<'a, T> {
    type Item = &'a mut [T];
    type Iter<'s>
        = std::slice::ChunksMut<'a, T>
    where
        Self: 's;
    #[inline]
    fn len(&self) -> usize {
        self.slice.len().div_ceil(self.size)
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let at = (mid * self.size).min(self.slice.len());
        let (l, r) = self.slice.split_at_mut(at);
        let size = self.size;
        (ChunksMut { slice: l, size }, ChunksMut { slice: r, size })
    }
    #[inline]
    fn take(&mut self, n: usize) -> std::slice::ChunksMut<'a, T> {
        let at = (n * self.size).min(self.slice.len());
        let (head, rest) = std::mem::take(&mut self.slice).split_at_mut(at);
        self.slice = rest;
        head.chunks_mut(self.size)
    }
}

impl<'a, T: Send> ParallelIterator for ChunksMut<'a, T> {
    type Item = &'a mut [T];
    type Producer = Self;
    fn into_producer(self) -> Self {
        self
    }
}
impl<T: Send> IndexedParallelIterator for ChunksMut<'_, T> {
    fn len(&self) -> usize {
        self.slice.len().div_ceil(self.size)
    }
}

/// The chunks `C` of a slice and its remainder `R`, which no chunk holds.
#[derive(Debug, Clone)]
pub struct Exact<C, R> {
    chunks: C,
    rem: R,
}

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
pub type ChunksExact<'a, T> = Exact<Chunks<'a, T>, &'a [T]>;

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
pub type ChunksExactMut<'a, T> = Exact<ChunksMut<'a, T>, &'a mut [T]>;

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
pub type RChunksExact<'a, T> = Exact<RExact<&'a [T]>, &'a [T]>;

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
pub type RChunksExactMut<'a, T> = Exact<RExact<&'a mut [T]>, &'a mut [T]>;

impl<'a, T> ChunksExact<'a, T> {
    pub(super) fn new(slice: &'a [T], size: usize) -> Self {
        assert!(size > 0, "chunk_size must not be zero");
        let (exact, rem) = slice.split_at(slice.len() - slice.len() % size);
        Exact {
            chunks: Chunks::new(exact, size),
            rem,
        }
    }
}

impl<'a, T> ChunksExactMut<'a, T> {
    pub(super) fn new(slice: &'a mut [T], size: usize) -> Self {
        assert!(size > 0, "chunk_size must not be zero");
        let at = slice.len() - slice.len() % size;
        let (exact, rem) = slice.split_at_mut(at);
        Exact {
            chunks: ChunksMut::new(exact, size),
            rem,
        }
    }
}

impl<'a, T> RChunksExact<'a, T> {
    pub(super) fn new(slice: &'a [T], size: usize) -> Self {
        assert!(size > 0, "chunk_size must not be zero");
        let (rem, exact) = slice.split_at(slice.len() % size);
        Exact {
            chunks: RExact { exact, size },
            rem,
        }
    }
}

impl<'a, T> RChunksExactMut<'a, T> {
    pub(super) fn new(slice: &'a mut [T], size: usize) -> Self {
        assert!(size > 0, "chunk_size must not be zero");
        let (rem, exact) = slice.split_at_mut(slice.len() % size);
        Exact {
            chunks: RExact { exact, size },
            rem,
        }
    }
}

impl<'a, C, T> Exact<C, &'a [T]> {
    /// The elements no chunk holds: the last `len % size` (from the front), or the first
    /// (from the back).
    pub fn remainder(&self) -> &'a [T] {
        self.rem
    }
}

impl<'a, C, T> Exact<C, &'a mut [T]> {
    /// The elements no chunk holds: the last `len % size` (from the front), or the first
    /// (from the back).
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

impl<C: IndexedParallelIterator, R: Send> ParallelIterator for Exact<C, R> {
    type Item = C::Item;
    type Producer = C::Producer;
    fn into_producer(self) -> C::Producer {
        self.chunks.into_producer()
    }
}
impl<C: IndexedParallelIterator, R: Send> IndexedParallelIterator for Exact<C, R> {
    fn len(&self) -> usize {
        self.chunks.len()
    }
}

/// A shared or a mutable slice, as [`RExact`] splits it.
#[doc(hidden)]
pub trait SlicePart: Default + Send {
    /// Its chunks of exactly `size`, from the back.
    type RChunks: Iterator<Item = Self>;
    fn slice_len(&self) -> usize;
    fn split_slice(self, at: usize) -> (Self, Self);
    fn rchunks(self, size: usize) -> Self::RChunks;
}

impl<'a, T: Sync> SlicePart for &'a [T] {
    type RChunks = std::slice::RChunksExact<'a, T>;
    fn slice_len(&self) -> usize {
        self.len()
    }
    fn split_slice(self, at: usize) -> (Self, Self) {
        self.split_at(at)
    }
    fn rchunks(self, size: usize) -> Self::RChunks {
        self.rchunks_exact(size)
    }
}

impl<'a, T: Send> SlicePart for &'a mut [T] {
    type RChunks = std::slice::RChunksExactMut<'a, T>;
    fn slice_len(&self) -> usize {
        self.len()
    }
    fn split_slice(self, at: usize) -> (Self, Self) {
        self.split_at_mut(at)
    }
    fn rchunks(self, size: usize) -> Self::RChunks {
        self.rchunks_exact_mut(size)
    }
}

/// The producer of the chunks from the back: a piece is a slice whose chunks run from its end,
/// so its first `n` chunks are its last `n * size` elements.
#[doc(hidden)]
#[derive(Debug, Clone)]
pub struct RExact<S> {
    exact: S,
    size: usize,
}

impl<S: SlicePart> Producer for RExact<S> {
    type Item = S;
    type Iter<'s>
        = S::RChunks
    where
        Self: 's;
    fn len(&self) -> usize {
        self.exact.slice_len() / self.size
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        // The first `mid` chunks are the last `mid * size` elements.
        let size = self.size;
        let at = self.exact.slice_len() - mid * size;
        let (r, l) = self.exact.split_slice(at);
        (RExact { exact: l, size }, RExact { exact: r, size })
    }
    fn take(&mut self, n: usize) -> Self::Iter<'_> {
        let at = self.exact.slice_len() - n * self.size;
        let (rest, tail) = std::mem::take(&mut self.exact).split_slice(at);
        self.exact = rest;
        tail.rchunks(self.size)
    }
}

impl<S: SlicePart> ParallelIterator for RExact<S> {
    type Item = S;
    type Producer = Self;
    fn into_producer(self) -> Self {
        self
    }
}
impl<S: SlicePart> IndexedParallelIterator for RExact<S> {
    fn len(&self) -> usize {
        Producer::len(self)
    }
}
