//! The adapters: `map`, `filter`, `filter_map`, `flat_map_iter`, `inspect` (closure adapters),
//! `copied`, `cloned`, `enumerate`, `zip`, `chunks` and `chain`. Each type is both the parallel iterator
//! the user holds and, over its base's producer, the [`Producer`] the engine runs: a split splits
//! the base, a block is the matching `std::iter` adapter over the base's block. Closures are
//! shared between the pieces of a split through an `Arc` (one increment per split, none per
//! block or item).
//!
//! The seven that adapt one base block by block are one type, [`Adapter`], written once; each
//! public name is it with its [`Step`] (the `std::iter` adapter of a block), as
//! `Map<I, F> = Adapter<I, WithFn<MapStep, F>>`. `enumerate`, `zip`, `chunks` and `chain`
//! differ in shape (an offset, two bases, a block size, two bases end to end) and have types of
//! their own.

use super::drive::Producer;
use super::{IndexedParallelIterator, ParallelIterator};
use std::marker::PhantomData;
use std::sync::Arc;

/// A parallel iterator that changes each block of its base with one `std::iter` adapter and
/// splits where its base splits: [`Map`], [`Filter`], [`FilterMap`], [`FlatMapIter`],
/// [`Inspect`], [`Copied`] and [`Cloned`] are this type with their [`Step`]. Over its base's
/// producer it is the producer the engine runs: a split splits the base (and shares the step), a
/// block is the step's adapter over the base's block.
///
/// ```
/// use threadlab::prelude::*;
/// let doubled: threadlab::iter::Map<_, _> = [1, 2].par_iter().map(|x| x * 2);
/// assert_eq!(doubled.collect::<Vec<i32>>(), [2, 4]);
/// ```
#[derive(Clone)]
pub struct Adapter<I, S> {
    base: I,
    step: S,
}

/// What an [`Adapter`] does to each block of items `T` of its base.
#[doc(hidden)]
pub trait Step<T>: Clone + Send {
    /// The items of the adapted blocks.
    type Item;
    /// The adapted block: `std::iter`'s adapter over the base's block `B`.
    type Block<'s, B: Iterator<Item = T>>: Iterator<Item = Self::Item>
    where
        Self: 's;
    /// Whether each item in gives exactly one item out (`map`, `inspect`, `copied`, `cloned`;
    /// not `filter`, `filter_map`, `flat_map_iter`): then the adapter is exact when its base is
    /// ([`Producer::exact`]: `collect` writes in place).
    const ONE_FOR_ONE: bool;
    /// Adapts one block.
    fn block<'s, B: Iterator<Item = T>>(&'s self, block: B) -> Self::Block<'s, B>;
}

/// The steps that keep their base's length (one item out for each item in), so that the
/// [`Adapter`] of an indexed base is indexed too.
#[doc(hidden)]
pub trait KeepsLength {}

/// How an [`Adapter`] shows itself in `Debug`: the name of its public type, and whether it holds
/// a closure (not shown: closures are not `Debug`).
#[doc(hidden)]
pub trait StepName {
    /// `Map`, `Filter`, ….
    const NAME: &'static str;
    /// Whether the step holds a closure.
    const HOLDS_CLOSURE: bool;
}

/// The closure of a closure adapter, shared between the pieces of a split through an `Arc` (one
/// increment per split, none per block or item; the closure need not be `Clone`). `K` says
/// which adapter it is ([`MapStep`], [`FilterStep`], …).
#[doc(hidden)]
pub struct WithFn<K, F> {
    f: Arc<F>,
    kind: PhantomData<fn() -> K>,
}

impl<K, F> std::fmt::Debug for WithFn<K, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WithFn").finish_non_exhaustive()
    }
}

impl<K, F> Clone for WithFn<K, F> {
    fn clone(&self) -> Self {
        WithFn {
            f: Arc::clone(&self.f),
            kind: PhantomData,
        }
    }
}

/// [`Map`]'s kind of [`WithFn`].
#[doc(hidden)]
#[derive(Debug)]
pub enum MapStep {}
/// [`Filter`]'s kind of [`WithFn`].
#[doc(hidden)]
#[derive(Debug)]
pub enum FilterStep {}
/// [`FilterMap`]'s kind of [`WithFn`].
#[doc(hidden)]
#[derive(Debug)]
pub enum FilterMapStep {}
/// [`FlatMapIter`]'s kind of [`WithFn`].
#[doc(hidden)]
#[derive(Debug)]
pub enum FlatMapIterStep {}
/// [`Inspect`]'s kind of [`WithFn`].
#[doc(hidden)]
#[derive(Debug)]
pub enum InspectStep {}
/// [`Copied`]'s step.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct CopiedStep;
/// [`Cloned`]'s step.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct ClonedStep;

impl<I, K, F> Adapter<I, WithFn<K, F>> {
    pub(super) fn new(base: I, f: F) -> Self {
        Adapter {
            base,
            step: WithFn {
                f: Arc::new(f),
                kind: PhantomData,
            },
        }
    }
}

impl<I> Adapter<I, CopiedStep> {
    pub(super) fn new(base: I) -> Self {
        Adapter {
            base,
            step: CopiedStep,
        }
    }
}

impl<I> Adapter<I, ClonedStep> {
    pub(super) fn new(base: I) -> Self {
        Adapter {
            base,
            step: ClonedStep,
        }
    }
}

impl<I: std::fmt::Debug, S: StepName> std::fmt::Debug for Adapter<I, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct(S::NAME);
        d.field("base", &self.base);
        if S::HOLDS_CLOSURE {
            d.finish_non_exhaustive()
        } else {
            d.finish()
        }
    }
}

impl<I: ParallelIterator, S: Step<I::Item>> ParallelIterator for Adapter<I, S>
where
    S::Item: Send,
{
    type Item = S::Item;
    type Producer = Adapter<I::Producer, S>;
    fn into_producer(self) -> Self::Producer {
        Adapter {
            base: self.base.into_producer(),
            step: self.step,
        }
    }
    fn opt_len(&self) -> Option<usize> {
        if S::ONE_FOR_ONE {
            self.base.opt_len()
        } else {
            None
        }
    }
}

impl<I: IndexedParallelIterator, S: Step<I::Item> + KeepsLength> IndexedParallelIterator
    for Adapter<I, S>
where
    S::Item: Send,
{
    fn len(&self) -> usize {
        self.base.len()
    }
}

impl<P: Producer, S: Step<P::Item>> Producer for Adapter<P, S> {
    type Item = S::Item;
    type Iter<'s>
        = S::Block<'s, P::Iter<'s>>
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
    fn blocks(&self) -> Option<super::drive::Blocks> {
        self.base.blocks()
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(mid);
        let step = self.step.clone();
        (
            Adapter { base: l, step },
            Adapter {
                base: r,
                step: self.step,
            },
        )
    }
    #[inline]
    fn take(&mut self, n: usize) -> Self::Iter<'_> {
        self.step.block(self.base.take(n))
    }
    fn exact(&self) -> bool {
        S::ONE_FOR_ONE && self.base.exact()
    }
}

/// The parallel iterator of [`ParallelIterator::map`].
///
/// ```
/// use threadlab::prelude::*;
/// let v: Vec<i32> = [1, 2].par_iter().map(|x| x * 2).collect();
/// assert_eq!(v, [2, 4]);
/// ```
pub type Map<I, F> = Adapter<I, WithFn<MapStep, F>>;

impl<T, F, R> Step<T> for WithFn<MapStep, F>
where
    F: Fn(T) -> R + Sync + Send,
    R: Send,
{
    const ONE_FOR_ONE: bool = true;
    type Item = R;
    type Block<'s, B: Iterator<Item = T>>
        = std::iter::Map<B, &'s F>
    where
        Self: 's;
    #[inline]
    fn block<'s, B: Iterator<Item = T>>(&'s self, block: B) -> Self::Block<'s, B> {
        block.map(&*self.f)
    }
}

impl<F> StepName for WithFn<MapStep, F> {
    const NAME: &'static str = "Map";
    const HOLDS_CLOSURE: bool = true;
}

impl<F> KeepsLength for WithFn<MapStep, F> {}

/// The parallel iterator of [`ParallelIterator::filter`].
///
/// ```
/// use threadlab::prelude::*;
/// assert_eq!((0u32..10).into_par_iter().filter(|x| x % 3 == 0).count(), 4);
/// ```
pub type Filter<I, F> = Adapter<I, WithFn<FilterStep, F>>;

impl<T, F> Step<T> for WithFn<FilterStep, F>
where
    F: Fn(&T) -> bool + Sync + Send,
{
    const ONE_FOR_ONE: bool = false;
    type Item = T;
    type Block<'s, B: Iterator<Item = T>>
        = std::iter::Filter<B, &'s F>
    where
        Self: 's;
    #[inline]
    fn block<'s, B: Iterator<Item = T>>(&'s self, block: B) -> Self::Block<'s, B> {
        block.filter(&*self.f)
    }
}

impl<F> StepName for WithFn<FilterStep, F> {
    const NAME: &'static str = "Filter";
    const HOLDS_CLOSURE: bool = true;
}

/// The parallel iterator of [`ParallelIterator::filter_map`].
///
/// ```
/// use threadlab::prelude::*;
/// let v: Vec<u32> = (0u32..5).into_par_iter().filter_map(|x| x.checked_sub(3)).collect();
/// assert_eq!(v, [0, 1]);
/// ```
pub type FilterMap<I, F> = Adapter<I, WithFn<FilterMapStep, F>>;

impl<T, F, R> Step<T> for WithFn<FilterMapStep, F>
where
    F: Fn(T) -> Option<R> + Sync + Send,
    R: Send,
{
    const ONE_FOR_ONE: bool = false;
    type Item = R;
    type Block<'s, B: Iterator<Item = T>>
        = std::iter::FilterMap<B, &'s F>
    where
        Self: 's;
    #[inline]
    fn block<'s, B: Iterator<Item = T>>(&'s self, block: B) -> Self::Block<'s, B> {
        block.filter_map(&*self.f)
    }
}

impl<F> StepName for WithFn<FilterMapStep, F> {
    const NAME: &'static str = "FilterMap";
    const HOLDS_CLOSURE: bool = true;
}

/// The parallel iterator of [`ParallelIterator::flat_map_iter`].
///
/// ```
/// use threadlab::prelude::*;
/// let v: Vec<u32> = (1u32..4).into_par_iter().flat_map_iter(|n| 0..n).collect();
/// assert_eq!(v, [0, 0, 1, 0, 1, 2]);
/// ```
pub type FlatMapIter<I, F> = Adapter<I, WithFn<FlatMapIterStep, F>>;

impl<T, F, U> Step<T> for WithFn<FlatMapIterStep, F>
where
    F: Fn(T) -> U + Sync + Send,
    U: IntoIterator,
    U::Item: Send,
{
    const ONE_FOR_ONE: bool = false;
    type Item = U::Item;
    type Block<'s, B: Iterator<Item = T>>
        = std::iter::FlatMap<B, U, &'s F>
    where
        Self: 's;
    #[inline]
    fn block<'s, B: Iterator<Item = T>>(&'s self, block: B) -> Self::Block<'s, B> {
        block.flat_map(&*self.f)
    }
}

impl<F> StepName for WithFn<FlatMapIterStep, F> {
    const NAME: &'static str = "FlatMapIter";
    const HOLDS_CLOSURE: bool = true;
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
pub type Inspect<I, F> = Adapter<I, WithFn<InspectStep, F>>;

impl<T, F> Step<T> for WithFn<InspectStep, F>
where
    F: Fn(&T) + Sync + Send,
{
    const ONE_FOR_ONE: bool = true;
    type Item = T;
    type Block<'s, B: Iterator<Item = T>>
        = std::iter::Inspect<B, &'s F>
    where
        Self: 's;
    #[inline]
    fn block<'s, B: Iterator<Item = T>>(&'s self, block: B) -> Self::Block<'s, B> {
        block.inspect(&*self.f)
    }
}

impl<F> StepName for WithFn<InspectStep, F> {
    const NAME: &'static str = "Inspect";
    const HOLDS_CLOSURE: bool = true;
}

impl<F> KeepsLength for WithFn<InspectStep, F> {}

/// The parallel iterator of [`ParallelIterator::copied`].
///
/// ```
/// use threadlab::prelude::*;
/// assert_eq!([1u8, 2].par_iter().copied().sum::<u8>(), 3);
/// ```
pub type Copied<I> = Adapter<I, CopiedStep>;

impl<'a, T: Copy + Send + Sync + 'a> Step<&'a T> for CopiedStep {
    const ONE_FOR_ONE: bool = true;
    type Item = T;
    type Block<'s, B: Iterator<Item = &'a T>>
        = std::iter::Copied<B>
    where
        Self: 's;
    #[inline]
    fn block<'s, B: Iterator<Item = &'a T>>(&'s self, block: B) -> Self::Block<'s, B> {
        block.copied()
    }
}

impl KeepsLength for CopiedStep {}

impl StepName for CopiedStep {
    const NAME: &'static str = "Copied";
    const HOLDS_CLOSURE: bool = false;
}

/// The parallel iterator of [`ParallelIterator::cloned`].
///
/// ```
/// use threadlab::prelude::*;
/// let v = vec![String::from("a")];
/// assert_eq!(v.par_iter().cloned().collect::<Vec<_>>(), v);
/// ```
pub type Cloned<I> = Adapter<I, ClonedStep>;

impl<'a, T: Clone + Send + Sync + 'a> Step<&'a T> for ClonedStep {
    const ONE_FOR_ONE: bool = true;
    type Item = T;
    type Block<'s, B: Iterator<Item = &'a T>>
        = std::iter::Cloned<B>
    where
        Self: 's;
    #[inline]
    fn block<'s, B: Iterator<Item = &'a T>>(&'s self, block: B) -> Self::Block<'s, B> {
        block.cloned()
    }
}

impl KeepsLength for ClonedStep {}

impl StepName for ClonedStep {
    const NAME: &'static str = "Cloned";
    const HOLDS_CLOSURE: bool = false;
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
    fn opt_len(&self) -> Option<usize> {
        Some(IndexedParallelIterator::len(self))
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
    fn blocks(&self) -> Option<super::drive::Blocks> {
        self.base.blocks()
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
    fn opt_len(&self) -> Option<usize> {
        Some(IndexedParallelIterator::len(self))
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
    fn opt_len(&self) -> Option<usize> {
        Some(IndexedParallelIterator::len(self))
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

/// The iterator of [`ParallelIterator::chain`]: `a`'s items, then `b`'s.
///
/// ```
/// use threadlab::prelude::*;
/// let v: Vec<u32> = (0u32..2).into_par_iter().chain(5u32..7).collect();
/// assert_eq!(v, [0, 1, 5, 6]);
/// ```
#[derive(Debug, Clone)]
pub struct Chain<A, B> {
    a: A,
    b: B,
}

impl<A, B> Chain<A, B> {
    pub(super) fn new(a: A, b: B) -> Self {
        Chain { a, b }
    }
}

impl<A: ParallelIterator, B: ParallelIterator<Item = A::Item>> ParallelIterator for Chain<A, B> {
    type Item = A::Item;
    type Producer = Chain<A::Producer, B::Producer>;
    fn into_producer(self) -> Self::Producer {
        Chain::new(self.a.into_producer(), self.b.into_producer())
    }
    fn opt_len(&self) -> Option<usize> {
        self.a.opt_len()?.checked_add(self.b.opt_len()?)
    }
}
impl<A, B> IndexedParallelIterator for Chain<A, B>
where
    A: IndexedParallelIterator,
    B: IndexedParallelIterator<Item = A::Item>,
{
    fn len(&self) -> usize {
        self.a.len() + self.b.len()
    }
}

impl<A: Producer, B: Producer<Item = A::Item>> Producer for Chain<A, B> {
    type Item = A::Item;
    type Iter<'s>
        = std::iter::Chain<A::Iter<'s>, B::Iter<'s>>
    where
        Self: 's;
    fn len(&self) -> usize {
        self.a.len() + self.b.len()
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let alen = self.a.len();
        if mid <= alen {
            let (al, ar) = self.a.split_at(mid);
            let (b0, b) = self.b.split_at(0);
            (Chain::new(al, b0), Chain::new(ar, b))
        } else {
            let (a, a0) = self.a.split_at(alen);
            let (bl, br) = self.b.split_at(mid - alen);
            (Chain::new(a, bl), Chain::new(a0, br))
        }
    }
    fn take(&mut self, n: usize) -> Self::Iter<'_> {
        let na = n.min(self.a.len());
        self.a.take(na).chain(self.b.take(n - na))
    }
    fn exact(&self) -> bool {
        self.a.exact() && self.b.exact()
    }
}
