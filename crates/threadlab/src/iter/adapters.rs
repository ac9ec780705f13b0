//! The adapters: `map`, `filter`, `filter_map`, `flat_map_iter`, `inspect` (closure adapters),
//! `copied`, `cloned`, `enumerate`, `zip` and `chunks`. Each type is both the parallel iterator
//! the user holds and, over its base's producer, the [`Producer`] the engine runs: a split splits
//! the base, a block is the matching `std::iter` adapter over the base's block. Closures are
//! shared between the pieces of a split through an `Arc` (one increment per split, none per
//! block or item).
//!
//! (Over 600 lines: ten adapters of one shape, each a struct, its iterator trait and its
//! `Producer`; apart they would repeat the same imports and scaffolding ten times.)

use super::drive::Producer;
use super::{IndexedParallelIterator, ParallelIterator};
use std::sync::Arc;

/// The parallel iterator of [`ParallelIterator::map`].
///
/// ```
/// use threadlab::prelude::*;
/// let v: Vec<i32> = [1, 2].par_iter().map(|x| x * 2).collect();
/// assert_eq!(v, [2, 4]);
/// ```
pub struct Map<I, F> {
    base: I,
    f: Arc<F>,
}

impl<I, F> Map<I, F> {
    pub(super) fn new(base: I, f: F) -> Self {
        Map {
            base,
            f: Arc::new(f),
        }
    }
}

impl<I: ParallelIterator, F, R> ParallelIterator for Map<I, F>
where
    F: Fn(I::Item) -> R + Sync + Send,
    R: Send,
{
    type Item = R;
    type Producer = Map<I::Producer, F>;
    fn into_producer(self) -> Self::Producer {
        Map {
            base: self.base.into_producer(),
            f: self.f,
        }
    }
}

impl<I: IndexedParallelIterator, F, R> IndexedParallelIterator for Map<I, F>
where
    F: Fn(I::Item) -> R + Sync + Send,
    R: Send,
{
    fn len(&self) -> usize {
        self.base.len()
    }
}

impl<P: Producer, F, R> Producer for Map<P, F>
where
    F: Fn(P::Item) -> R + Sync + Send,
    R: Send,
{
    type Item = R;
    type Iter<'s>
        = std::iter::Map<P::Iter<'s>, &'s F>
    where
        Self: 's;
    #[inline]
    fn len(&self) -> usize {
        self.base.len()
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(mid);
        let f = Arc::clone(&self.f);
        (Map { base: l, f }, Map { base: r, f: self.f })
    }
    #[inline]
    fn take(&mut self, n: usize) -> Self::Iter<'_> {
        self.base.take(n).map(&*self.f)
    }
    fn exact(&self) -> bool {
        self.base.exact()
    }
}

/// The parallel iterator of [`ParallelIterator::filter`].
///
/// ```
/// use threadlab::prelude::*;
/// assert_eq!((0u32..10).into_par_iter().filter(|x| x % 3 == 0).count(), 4);
/// ```
pub struct Filter<I, F> {
    base: I,
    f: Arc<F>,
}

impl<I, F> Filter<I, F> {
    pub(super) fn new(base: I, f: F) -> Self {
        Filter {
            base,
            f: Arc::new(f),
        }
    }
}

impl<I: ParallelIterator, F> ParallelIterator for Filter<I, F>
where
    F: Fn(&I::Item) -> bool + Sync + Send,
{
    type Item = I::Item;
    type Producer = Filter<I::Producer, F>;
    fn into_producer(self) -> Self::Producer {
        Filter {
            base: self.base.into_producer(),
            f: self.f,
        }
    }
}

impl<P: Producer, F> Producer for Filter<P, F>
where
    F: Fn(&P::Item) -> bool + Sync + Send,
{
    type Item = P::Item;
    type Iter<'s>
        = std::iter::Filter<P::Iter<'s>, &'s F>
    where
        Self: 's;
    #[inline]
    fn len(&self) -> usize {
        self.base.len()
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(mid);
        let f = Arc::clone(&self.f);
        (Filter { base: l, f }, Filter { base: r, f: self.f })
    }
    #[inline]
    fn take(&mut self, n: usize) -> Self::Iter<'_> {
        self.base.take(n).filter(&*self.f)
    }
    fn exact(&self) -> bool {
        false
    }
}

/// The parallel iterator of [`ParallelIterator::filter_map`].
///
/// ```
/// use threadlab::prelude::*;
/// let v: Vec<u32> = (0u32..5).into_par_iter().filter_map(|x| x.checked_sub(3)).collect();
/// assert_eq!(v, [0, 1]);
/// ```
pub struct FilterMap<I, F> {
    base: I,
    f: Arc<F>,
}

impl<I, F> FilterMap<I, F> {
    pub(super) fn new(base: I, f: F) -> Self {
        FilterMap {
            base,
            f: Arc::new(f),
        }
    }
}

impl<I: ParallelIterator, F, R> ParallelIterator for FilterMap<I, F>
where
    F: Fn(I::Item) -> Option<R> + Sync + Send,
    R: Send,
{
    type Item = R;
    type Producer = FilterMap<I::Producer, F>;
    fn into_producer(self) -> Self::Producer {
        FilterMap {
            base: self.base.into_producer(),
            f: self.f,
        }
    }
}

impl<P: Producer, F, R> Producer for FilterMap<P, F>
where
    F: Fn(P::Item) -> Option<R> + Sync + Send,
    R: Send,
{
    type Item = R;
    type Iter<'s>
        = std::iter::FilterMap<P::Iter<'s>, &'s F>
    where
        Self: 's;
    #[inline]
    fn len(&self) -> usize {
        self.base.len()
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(mid);
        let f = Arc::clone(&self.f);
        (FilterMap { base: l, f }, FilterMap { base: r, f: self.f })
    }
    #[inline]
    fn take(&mut self, n: usize) -> Self::Iter<'_> {
        self.base.take(n).filter_map(&*self.f)
    }
    fn exact(&self) -> bool {
        false
    }
}

/// The parallel iterator of [`ParallelIterator::flat_map_iter`].
///
/// ```
/// use threadlab::prelude::*;
/// let v: Vec<u32> = (1u32..4).into_par_iter().flat_map_iter(|n| 0..n).collect();
/// assert_eq!(v, [0, 0, 1, 0, 1, 2]);
/// ```
pub struct FlatMapIter<I, F> {
    base: I,
    f: Arc<F>,
}

impl<I, F> FlatMapIter<I, F> {
    pub(super) fn new(base: I, f: F) -> Self {
        FlatMapIter {
            base,
            f: Arc::new(f),
        }
    }
}

impl<I: ParallelIterator, F, U> ParallelIterator for FlatMapIter<I, F>
where
    F: Fn(I::Item) -> U + Sync + Send,
    U: IntoIterator,
    U::Item: Send,
{
    type Item = U::Item;
    type Producer = FlatMapIter<I::Producer, F>;
    fn into_producer(self) -> Self::Producer {
        FlatMapIter {
            base: self.base.into_producer(),
            f: self.f,
        }
    }
}

impl<P: Producer, F, U> Producer for FlatMapIter<P, F>
where
    F: Fn(P::Item) -> U + Sync + Send,
    U: IntoIterator,
    U::Item: Send,
{
    type Item = U::Item;
    type Iter<'s>
        = std::iter::FlatMap<P::Iter<'s>, U, &'s F>
    where
        Self: 's;
    #[inline]
    fn len(&self) -> usize {
        self.base.len()
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(mid);
        let f = Arc::clone(&self.f);
        (
            FlatMapIter { base: l, f },
            FlatMapIter { base: r, f: self.f },
        )
    }
    #[inline]
    fn take(&mut self, n: usize) -> Self::Iter<'_> {
        self.base.take(n).flat_map(&*self.f)
    }
    fn exact(&self) -> bool {
        false
    }
}

/// The parallel iterator of [`ParallelIterator::inspect`].
///
/// ```
/// use threadlab::prelude::*;
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// let seen = AtomicUsize::new(0);
/// let n = (0u8..7).into_par_iter().inspect(|_| { seen.fetch_add(1, Ordering::Relaxed); }).count();
/// assert_eq!((n, seen.into_inner()), (7, 7));
/// ```
pub struct Inspect<I, F> {
    base: I,
    f: Arc<F>,
}

impl<I, F> Inspect<I, F> {
    pub(super) fn new(base: I, f: F) -> Self {
        Inspect {
            base,
            f: Arc::new(f),
        }
    }
}

impl<I: ParallelIterator, F> ParallelIterator for Inspect<I, F>
where
    F: Fn(&I::Item) + Sync + Send,
{
    type Item = I::Item;
    type Producer = Inspect<I::Producer, F>;
    fn into_producer(self) -> Self::Producer {
        Inspect {
            base: self.base.into_producer(),
            f: self.f,
        }
    }
}

impl<I: IndexedParallelIterator, F> IndexedParallelIterator for Inspect<I, F>
where
    F: Fn(&I::Item) + Sync + Send,
{
    fn len(&self) -> usize {
        self.base.len()
    }
}

impl<P: Producer, F> Producer for Inspect<P, F>
where
    F: Fn(&P::Item) + Sync + Send,
{
    type Item = P::Item;
    type Iter<'s>
        = std::iter::Inspect<P::Iter<'s>, &'s F>
    where
        Self: 's;
    #[inline]
    fn len(&self) -> usize {
        self.base.len()
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(mid);
        let f = Arc::clone(&self.f);
        (Inspect { base: l, f }, Inspect { base: r, f: self.f })
    }
    #[inline]
    fn take(&mut self, n: usize) -> Self::Iter<'_> {
        self.base.take(n).inspect(&*self.f)
    }
    fn exact(&self) -> bool {
        self.base.exact()
    }
}

/// The parallel iterator of [`ParallelIterator::copied`].
///
/// ```
/// use threadlab::prelude::*;
/// assert_eq!([1u8, 2].par_iter().copied().sum::<u8>(), 3);
/// ```
#[derive(Debug, Clone)]
pub struct Copied<I> {
    base: I,
}

impl<I> Copied<I> {
    pub(super) fn new(base: I) -> Self {
        Copied { base }
    }
}

impl<'a, T: Copy + Send + Sync + 'a, I: ParallelIterator<Item = &'a T>> ParallelIterator
    for Copied<I>
{
    type Item = T;
    type Producer = Copied<I::Producer>;
    fn into_producer(self) -> Self::Producer {
        Copied::new(self.base.into_producer())
    }
}
impl<'a, T: Copy + Send + Sync + 'a, I: IndexedParallelIterator<Item = &'a T>>
    IndexedParallelIterator for Copied<I>
{
    fn len(&self) -> usize {
        self.base.len()
    }
}

impl<'a, T: Copy + 'a, P: Producer<Item = &'a T>> Producer for Copied<P> {
    type Item = T;
    type Iter<'s>
        = std::iter::Copied<P::Iter<'s>>
    where
        Self: 's;
    #[inline]
    fn len(&self) -> usize {
        self.base.len()
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(mid);
        (Copied::new(l), Copied::new(r))
    }
    #[inline]
    fn take(&mut self, n: usize) -> Self::Iter<'_> {
        self.base.take(n).copied()
    }
    fn exact(&self) -> bool {
        self.base.exact()
    }
}

/// The parallel iterator of [`ParallelIterator::cloned`].
///
/// ```
/// use threadlab::prelude::*;
/// let v = vec![String::from("a")];
/// assert_eq!(v.par_iter().cloned().collect::<Vec<_>>(), v);
/// ```
#[derive(Debug, Clone)]
pub struct Cloned<I> {
    base: I,
}

impl<I> Cloned<I> {
    pub(super) fn new(base: I) -> Self {
        Cloned { base }
    }
}

impl<'a, T: Clone + Send + Sync + 'a, I: ParallelIterator<Item = &'a T>> ParallelIterator
    for Cloned<I>
{
    type Item = T;
    type Producer = Cloned<I::Producer>;
    fn into_producer(self) -> Self::Producer {
        Cloned::new(self.base.into_producer())
    }
}
impl<'a, T: Clone + Send + Sync + 'a, I: IndexedParallelIterator<Item = &'a T>>
    IndexedParallelIterator for Cloned<I>
{
    fn len(&self) -> usize {
        self.base.len()
    }
}

impl<'a, T: Clone + 'a, P: Producer<Item = &'a T>> Producer for Cloned<P> {
    type Item = T;
    type Iter<'s>
        = std::iter::Cloned<P::Iter<'s>>
    where
        Self: 's;
    #[inline]
    fn len(&self) -> usize {
        self.base.len()
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(mid);
        (Cloned::new(l), Cloned::new(r))
    }
    #[inline]
    fn take(&mut self, n: usize) -> Self::Iter<'_> {
        self.base.take(n).cloned()
    }
    fn exact(&self) -> bool {
        self.base.exact()
    }
}

/// The parallel iterator of [`IndexedParallelIterator::enumerate`].
///
/// ```
/// use threadlab::prelude::*;
/// let v: Vec<(usize, char)> = ['a', 'b'].par_iter().copied().enumerate().collect();
/// assert_eq!(v, [(0, 'a'), (1, 'b')]);
/// ```
#[derive(Debug, Clone)]
pub struct Enumerate<I> {
    base: I,
    offset: usize,
}

impl<I> Enumerate<I> {
    pub(super) fn new(base: I) -> Self {
        Enumerate { base, offset: 0 }
    }
}

impl<I: IndexedParallelIterator> ParallelIterator for Enumerate<I> {
    type Item = (usize, I::Item);
    type Producer = Enumerate<I::Producer>;
    fn into_producer(self) -> Self::Producer {
        Enumerate {
            base: self.base.into_producer(),
            offset: self.offset,
        }
    }
}
impl<I: IndexedParallelIterator> IndexedParallelIterator for Enumerate<I> {
    fn len(&self) -> usize {
        self.base.len()
    }
}

impl<P: Producer> Producer for Enumerate<P> {
    type Item = (usize, P::Item);
    type Iter<'s>
        = std::iter::Zip<std::ops::Range<usize>, P::Iter<'s>>
    where
        Self: 's;
    #[inline]
    fn len(&self) -> usize {
        self.base.len()
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(mid);
        (
            Enumerate {
                base: l,
                offset: self.offset,
            },
            Enumerate {
                base: r,
                offset: self.offset + mid,
            },
        )
    }
    #[inline]
    fn take(&mut self, n: usize) -> Self::Iter<'_> {
        let start = self.offset;
        self.offset += n;
        (start..start + n).zip(self.base.take(n))
    }
}

/// The parallel iterator of [`IndexedParallelIterator::zip`]: as long as the shorter side.
///
/// ```
/// use threadlab::prelude::*;
/// let (a, b) = ([1, 2, 3], [4, 5]);
/// assert_eq!(a.par_iter().zip(b.par_iter()).map(|(x, y)| x * y).sum::<i32>(), 14);
/// ```
#[derive(Debug, Clone)]
pub struct Zip<A, B> {
    a: A,
    b: B,
}

impl<A, B> Zip<A, B> {
    pub(super) fn new(a: A, b: B) -> Self {
        Zip { a, b }
    }
}

impl<A: IndexedParallelIterator, B: IndexedParallelIterator> ParallelIterator for Zip<A, B> {
    type Item = (A::Item, B::Item);
    type Producer = Zip<A::Producer, B::Producer>;
    fn into_producer(self) -> Self::Producer {
        Zip::new(self.a.into_producer(), self.b.into_producer())
    }
}
impl<A: IndexedParallelIterator, B: IndexedParallelIterator> IndexedParallelIterator for Zip<A, B> {
    fn len(&self) -> usize {
        self.a.len().min(self.b.len())
    }
}

impl<A: Producer, B: Producer> Producer for Zip<A, B> {
    type Item = (A::Item, B::Item);
    type Iter<'s>
        = std::iter::Zip<A::Iter<'s>, B::Iter<'s>>
    where
        Self: 's;
    #[inline]
    fn len(&self) -> usize {
        self.a.len().min(self.b.len())
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let (al, ar) = self.a.split_at(mid);
        let (bl, br) = self.b.split_at(mid);
        (Zip::new(al, bl), Zip::new(ar, br))
    }
    #[inline]
    fn take(&mut self, n: usize) -> Self::Iter<'_> {
        self.a.take(n).zip(self.b.take(n))
    }
}

/// The parallel iterator of [`IndexedParallelIterator::chunks`]: `Vec`s of `size` items.
///
/// ```
/// use threadlab::prelude::*;
/// let v: Vec<Vec<u8>> = (0u8..5).into_par_iter().chunks(2).collect();
/// assert_eq!(v, [vec![0, 1], vec![2, 3], vec![4]]);
/// ```
#[derive(Debug, Clone)]
pub struct ChunksOf<I> {
    base: I,
    size: usize,
}

impl<I> ChunksOf<I> {
    pub(super) fn new(base: I, size: usize) -> Self {
        ChunksOf { base, size }
    }
}

impl<I: IndexedParallelIterator> ParallelIterator for ChunksOf<I> {
    type Item = Vec<I::Item>;
    type Producer = ChunksOf<I::Producer>;
    fn into_producer(self) -> Self::Producer {
        ChunksOf::new(self.base.into_producer(), self.size)
    }
}
impl<I: IndexedParallelIterator> IndexedParallelIterator for ChunksOf<I> {
    fn len(&self) -> usize {
        self.base.len().div_ceil(self.size)
    }
}

impl<P: Producer> Producer for ChunksOf<P> {
    type Item = Vec<P::Item>;
    type Iter<'s>
        = ChunkIter<P::Iter<'s>>
    where
        Self: 's;
    #[inline]
    fn len(&self) -> usize {
        self.base.len().div_ceil(self.size)
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let at = (mid * self.size).min(self.base.len());
        let (l, r) = self.base.split_at(at);
        (ChunksOf::new(l, self.size), ChunksOf::new(r, self.size))
    }
    #[inline]
    fn take(&mut self, n: usize) -> Self::Iter<'_> {
        let at = (n * self.size).min(self.base.len());
        ChunkIter {
            inner: self.base.take(at),
            size: self.size,
        }
    }
}

/// The block iterator of [`ChunksOf`]: groups its inner iterator's items by `size`.
#[derive(Debug)]
pub struct ChunkIter<I> {
    inner: I,
    size: usize,
}

impl<I: Iterator> Iterator for ChunkIter<I> {
    type Item = Vec<I::Item>;
    fn next(&mut self) -> Option<Vec<I::Item>> {
        let chunk: Vec<I::Item> = self.inner.by_ref().take(self.size).collect();
        (!chunk.is_empty()).then_some(chunk)
    }
}

/// `Debug` for the closure adapters: their base, not the closure (closures are not `Debug`).
macro_rules! debug_without_closure {
    ($($name:ident),*) => {$(
        impl<I: std::fmt::Debug, F> std::fmt::Debug for $name<I, F> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("base", &self.base)
                    .finish_non_exhaustive()
            }
        }
    )*};
}

debug_without_closure!(Map, Filter, FilterMap, FlatMapIter, Inspect);

/// `Clone` for the closure adapters: the base cloned, the closure shared (it is behind an
/// `Arc`, so the closure need not be `Clone`).
macro_rules! clone_sharing_closure {
    ($($name:ident),*) => {$(
        impl<I: Clone, F> Clone for $name<I, F> {
            fn clone(&self) -> Self {
                $name {
                    base: self.base.clone(),
                    f: Arc::clone(&self.f),
                }
            }
        }
    )*};
}

clone_sharing_closure!(Map, Filter, FilterMap, FlatMapIter, Inspect);
