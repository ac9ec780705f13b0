//! Parallel iterators in Rayon's shape — `v.par_iter().map(f).sum()`, `collect`, `par_sort` —
//! whose splitting comes from heartbeat promotion instead of a grain size.
//!
//! (Over 600 lines: the five traits and their provided methods, as Rayon's `iter/mod.rs` holds
//! them, so a reader finds every method of `ParallelIterator` in one place; the machinery is in
//! the submodules.)
//!
//! # How a pipeline runs
//!
//! A pipeline (`(0..n).into_par_iter().map(f).filter(p)`) is a chain of adapter values. The
//! terminal method (`sum`, `collect`, …) turns it into a `Producer` — a splittable
//! source of items — and a consumer, and hands both to one worker (`drive.rs`). That worker runs
//! the whole range in order, in blocks of a few dozen positions folded by the matching `std`
//! iterator, and reads its heartbeat flag between blocks. Only when another worker is idle, at
//! most once per check interval, does it split its *remaining* range in half and publish the
//! second half, with a fresh consumer, for the idle worker; results of the two halves reduce
//! left to right, so order-sensitive consumers keep `std`'s order. This is heartbeat scheduling
//! (Acar, Charguéraud, Guatto, Rainey, Sieczkowski, PLDI 2018) applied to Rayon's
//! producer/consumer design (Matsakis and Stone, `rayon::iter::plumbing`): no `with_min_len`, no
//! splitter, and with no idle worker a pipeline costs a sequential iterator plus one relaxed
//! load per block.
//!
//! The loop functions ([`crate::for_each`] and friends) use the same engine.
//!
//! # Differences from Rayon
//!
//! - `fold(identity, op)` returns a [`Fold`] whose only method is `reduce` (Rayon's is a full
//!   parallel iterator of per-piece accumulators).
//! - Only slices, `Vec` references and integer ranges are sources; `Vec<T>` by value is not.
//! - A panic in a closure is re-raised by the terminal method after every piece stopped; the
//!   items already produced are dropped exactly once (they belong to the piece's consumer).
//!
//! ```
//! use threadlab::prelude::*;
//! let v: Vec<u64> = (0..1000).collect();
//! let evens: Vec<u64> = v.par_iter().copied().filter(|x| x % 2 == 0).collect();
//! assert_eq!(evens.len(), 500);
//! assert_eq!(v.par_iter().map(|x| x * x).sum::<u64>(), 332_833_500);
//! ```

mod adapters;
mod collect;
mod consume;
pub(crate) mod drive;
mod sort;
mod source;

pub use adapters::{
    ChunkIter, ChunksOf, Cloned, Copied, Enumerate, Filter, FilterMap, FlatMapIter, Inspect, Map,
    Zip,
};
pub use collect::FromParallelIterator;
pub use source::{Chunks, ChunksMut, Iter, IterMut, ParallelSlice, ParallelSliceMut, RangeIter};

use consume::{Arith, Count, Extreme, FindAny, FoldReduce, ForEach};
use drive::{drive, Producer};
use std::cmp::Ordering as CmpOrdering;
use std::iter::{Product, Sum};
use std::marker::PhantomData;
use std::sync::atomic::AtomicBool;

/// A parallel iterator: adapters and terminal methods with the names and meaning of Rayon's
/// (and of `std::iter::Iterator`'s, apart from order of side effects).
///
/// ```
/// use threadlab::prelude::*;
/// let words = ["a", "bb", "ccc"];
/// assert_eq!(words.par_iter().map(|w| w.len()).max(), Some(3));
/// ```
pub trait ParallelIterator: Sized + Send {
    /// The items.
    type Item: Send;
    /// The engine's view of this iterator.
    #[doc(hidden)]
    type Producer: Producer<Item = Self::Item>;
    /// Turns the pipeline into its producer.
    #[doc(hidden)]
    fn into_producer(self) -> Self::Producer;

    /// Applies `f` to every item.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!((0u32..3).into_par_iter().map(|x| x + 1).collect::<Vec<_>>(), [1, 2, 3]);
    /// ```
    fn map<R: Send, F: Fn(Self::Item) -> R + Sync + Send>(self, f: F) -> Map<Self, F> {
        Map::new(self, f)
    }

    /// Keeps the items for which `f` is true.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!((0u32..10).into_par_iter().filter(|x| *x > 6).collect::<Vec<_>>(), [7, 8, 9]);
    /// ```
    fn filter<F: Fn(&Self::Item) -> bool + Sync + Send>(self, f: F) -> Filter<Self, F> {
        Filter::new(self, f)
    }

    /// Maps and keeps the `Some`s.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let v: Vec<i32> = ["1", "x", "3"].par_iter().filter_map(|s| s.parse().ok()).collect();
    /// assert_eq!(v, [1, 3]);
    /// ```
    fn filter_map<R: Send, F: Fn(Self::Item) -> Option<R> + Sync + Send>(
        self,
        f: F,
    ) -> FilterMap<Self, F> {
        FilterMap::new(self, f)
    }

    /// Maps every item to a sequential iterator and flattens (Rayon's `flat_map_iter`).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!((0u32..4).into_par_iter().flat_map_iter(|n| 0..n).count(), 6);
    /// ```
    fn flat_map_iter<U, F>(self, f: F) -> FlatMapIter<Self, F>
    where
        U: IntoIterator,
        U::Item: Send,
        F: Fn(Self::Item) -> U + Sync + Send,
    {
        FlatMapIter::new(self, f)
    }

    /// Calls `f` on a reference to every item, passing the item on.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!((0u32..4).into_par_iter().inspect(|x| assert!(*x < 4)).sum::<u32>(), 6);
    /// ```
    fn inspect<F: Fn(&Self::Item) + Sync + Send>(self, f: F) -> Inspect<Self, F> {
        Inspect::new(self, f)
    }

    /// Copies referenced items.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!([3, 4].par_iter().copied().collect::<Vec<i32>>(), [3, 4]);
    /// ```
    fn copied<'a, T: Copy + Send + Sync + 'a>(self) -> Copied<Self>
    where
        Self: ParallelIterator<Item = &'a T>,
    {
        Copied::new(self)
    }

    /// Clones referenced items.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let v = vec![vec![1], vec![2]];
    /// assert_eq!(v.par_iter().cloned().collect::<Vec<_>>(), v);
    /// ```
    fn cloned<'a, T: Clone + Send + Sync + 'a>(self) -> Cloned<Self>
    where
        Self: ParallelIterator<Item = &'a T>,
    {
        Cloned::new(self)
    }

    /// Calls `f` on every item, in parallel.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// let total = AtomicU64::new(0);
    /// (1u64..101).into_par_iter().for_each(|x| { total.fetch_add(x, Ordering::Relaxed); });
    /// assert_eq!(total.into_inner(), 5050);
    /// ```
    fn for_each<F: Fn(Self::Item) + Sync + Send>(self, f: F) {
        drive(self.into_producer(), ForEach { f: &f })
    }

    /// Folds every piece from `identity()` with `op` and combines the pieces with `op`: the
    /// result of `std`'s `fold` when `op` is associative and `identity()` its identity.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!((1u64..6).into_par_iter().reduce(|| 1, |a, b| a * b), 120);
    /// ```
    fn reduce<ID, OP>(self, identity: ID, op: OP) -> Self::Item
    where
        ID: Fn() -> Self::Item + Sync + Send,
        OP: Fn(Self::Item, Self::Item) -> Self::Item + Sync + Send,
    {
        let c = FoldReduce {
            acc: None,
            identity: &identity,
            fold_op: &op,
            reduce_op: &op,
        };
        drive(self.into_producer(), c)
    }

    /// Folds every piece into an accumulator from `identity()`; combine the accumulators with
    /// [`Fold::reduce`].
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let lens = ["ab", "c"].par_iter().fold(|| 0usize, |n, s| n + s.len()).reduce(|| 0, |a, b| a + b);
    /// assert_eq!(lens, 3);
    /// ```
    fn fold<A, ID, F>(self, identity: ID, fold_op: F) -> Fold<Self, ID, F>
    where
        A: Send,
        ID: Fn() -> A + Sync + Send,
        F: Fn(A, Self::Item) -> A + Sync + Send,
    {
        Fold {
            base: self,
            identity,
            fold_op,
        }
    }

    /// The sum of the items (`std`'s `Sum`, so overflow behaves as there).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!((0u64..10).into_par_iter().sum::<u64>(), 45);
    /// ```
    fn sum<S: Sum<Self::Item> + Sum<S> + Send>(self) -> S {
        drive(self.into_producer(), Arith::<S, false> { acc: None })
    }

    /// The product of the items.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!((1u64..6).into_par_iter().product::<u64>(), 120);
    /// ```
    fn product<S: Product<Self::Item> + Product<S> + Send>(self) -> S {
        drive(self.into_producer(), Arith::<S, true> { acc: None })
    }

    /// The number of items.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!((0u32..100).into_par_iter().filter(|x| x % 7 == 0).count(), 15);
    /// ```
    fn count(self) -> usize {
        drive(self.into_producer(), Count(0, PhantomData))
    }

    /// The smallest item by `cmp`, the first of equals.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!([3, 1, 2].par_iter().min_by(|a, b| a.cmp(b)), Some(&1));
    /// ```
    fn min_by<F: Fn(&Self::Item, &Self::Item) -> CmpOrdering + Sync + Send>(
        self,
        cmp: F,
    ) -> Option<Self::Item> {
        let c = Extreme::<_, _, false> {
            acc: None,
            cmp: &cmp,
        };
        drive(self.into_producer(), c)
    }

    /// The largest item by `cmp`, the last of equals.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!([3, 1, 2].par_iter().max_by(|a, b| a.cmp(b)), Some(&3));
    /// ```
    fn max_by<F: Fn(&Self::Item, &Self::Item) -> CmpOrdering + Sync + Send>(
        self,
        cmp: F,
    ) -> Option<Self::Item> {
        let c = Extreme::<_, _, true> {
            acc: None,
            cmp: &cmp,
        };
        drive(self.into_producer(), c)
    }

    /// The smallest item, the first of equals.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!((5u32..9).into_par_iter().min(), Some(5));
    /// ```
    fn min(self) -> Option<Self::Item>
    where
        Self::Item: Ord,
    {
        self.min_by(Ord::cmp)
    }

    /// The largest item, the last of equals.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!((5u32..9).into_par_iter().max(), Some(8));
    /// ```
    fn max(self) -> Option<Self::Item>
    where
        Self::Item: Ord,
    {
        self.max_by(Ord::cmp)
    }

    /// The item with the smallest key, the first of equals.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!(["bb", "a", "c"].par_iter().min_by_key(|s| s.len()), Some(&"a"));
    /// ```
    fn min_by_key<K: Ord, F: Fn(&Self::Item) -> K + Sync + Send>(self, f: F) -> Option<Self::Item> {
        self.min_by(|a, b| f(a).cmp(&f(b)))
    }

    /// The item with the largest key, the last of equals.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!(["bb", "a", "cc"].par_iter().max_by_key(|s| s.len()), Some(&"cc"));
    /// ```
    fn max_by_key<K: Ord, F: Fn(&Self::Item) -> K + Sync + Send>(self, f: F) -> Option<Self::Item> {
        self.max_by(|a, b| f(a).cmp(&f(b)))
    }

    /// Some item for which `pred` is true (any of them, not necessarily the first); stops all
    /// pieces soon after one is found.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!((0u32..1000).into_par_iter().find_any(|x| *x == 77), Some(77));
    /// ```
    fn find_any<P: Fn(&Self::Item) -> bool + Sync + Send>(self, pred: P) -> Option<Self::Item> {
        let found = AtomicBool::new(false);
        let c = FindAny {
            found: &found,
            pred: &pred,
            item: None,
        };
        drive(self.into_producer(), c)
    }

    /// True if `pred` holds for some item (short-circuiting).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert!((0u32..100).into_par_iter().any(|x| x == 99));
    /// ```
    fn any<P: Fn(Self::Item) -> bool + Sync + Send>(self, pred: P) -> bool {
        self.map(pred).find_any(|b| *b).is_some()
    }

    /// True if `pred` holds for every item (short-circuiting).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert!(!(0u32..100).into_par_iter().all(|x| x < 99));
    /// ```
    fn all<P: Fn(Self::Item) -> bool + Sync + Send>(self, pred: P) -> bool {
        self.map(pred).find_any(|b| !*b).is_none()
    }

    /// Collects the items in order.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let v: Vec<u8> = (0u8..5).into_par_iter().filter(|x| x % 2 == 1).collect();
    /// assert_eq!(v, [1, 3]);
    /// ```
    fn collect<C: FromParallelIterator<Self::Item>>(self) -> C {
        C::from_par_iter(self)
    }

    /// Splits pairs into two ordered `Vec`s.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let (a, b): (Vec<u32>, Vec<u32>) = (0u32..3).into_par_iter().map(|x| (x, x * 10)).unzip();
    /// assert_eq!((a, b), (vec![0, 1, 2], vec![0, 10, 20]));
    /// ```
    fn unzip<A: Send, B: Send>(self) -> (Vec<A>, Vec<B>)
    where
        Self: ParallelIterator<Item = (A, B)>,
    {
        let route = |(a, b): (A, B), l: &mut Vec<A>, r: &mut Vec<B>| {
            l.push(a);
            r.push(b);
        };
        pair(self, &route)
    }

    /// Splits the items into those for which `pred` is true and the others, in order.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let (even, odd): (Vec<u32>, Vec<u32>) = (0u32..6).into_par_iter().partition(|x| x % 2 == 0);
    /// assert_eq!((even, odd), (vec![0, 2, 4], vec![1, 3, 5]));
    /// ```
    fn partition<P: Fn(&Self::Item) -> bool + Sync + Send>(
        self,
        pred: P,
    ) -> (Vec<Self::Item>, Vec<Self::Item>) {
        let route = |x: Self::Item, l: &mut Vec<Self::Item>, r: &mut Vec<Self::Item>| {
            if pred(&x) {
                l.push(x)
            } else {
                r.push(x)
            }
        };
        pair(self, &route)
    }
}

/// `unzip` and `partition`: routes every item to one of two lists.
fn pair<I, A, B, F>(iter: I, route: &F) -> (Vec<A>, Vec<B>)
where
    I: ParallelIterator,
    A: Send,
    B: Send,
    F: Fn(I::Item, &mut Vec<A>, &mut Vec<B>) + Sync,
{
    let c = collect::PairConsumer {
        left: Vec::new(),
        right: Vec::new(),
        route,
    };
    let (a, b) = drive(iter.into_producer(), c);
    (collect::concat(a), collect::concat(b))
}

/// A parallel iterator whose items have positions: it can be enumerated, zipped, chunked.
///
/// ```
/// use threadlab::prelude::*;
/// let v = [10, 20, 30];
/// assert_eq!(v.par_iter().position_any(|x| *x == 20), Some(1));
/// ```
pub trait IndexedParallelIterator: ParallelIterator {
    /// Pairs every item with its index.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let v: Vec<(usize, u8)> = (7u8..9).into_par_iter().enumerate().collect();
    /// assert_eq!(v, [(0, 7), (1, 8)]);
    /// ```
    fn enumerate(self) -> Enumerate<Self> {
        Enumerate::new(self)
    }

    /// Pairs items of `self` and `other` by position, as long as the shorter.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let dot: i32 = [1, 2].par_iter().zip([3, 4].par_iter()).map(|(a, b)| a * b).sum();
    /// assert_eq!(dot, 11);
    /// ```
    fn zip<J: IntoParallelIterator>(self, other: J) -> Zip<Self, J::Iter>
    where
        J::Iter: IndexedParallelIterator,
    {
        Zip::new(self, other.into_par_iter())
    }

    /// Groups consecutive items into `Vec`s of `size` (the last maybe shorter).
    ///
    /// # Panics
    /// If `size` is 0.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!((0u32..7).into_par_iter().chunks(3).count(), 3);
    /// ```
    fn chunks(self, size: usize) -> ChunksOf<Self> {
        assert!(size > 0, "chunks: size must be at least 1");
        ChunksOf::new(self, size)
    }

    /// The index of some item for which `pred` is true (any, not necessarily the first).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!((0u32..10).into_par_iter().position_any(|x| x == 4), Some(4));
    /// ```
    fn position_any<P: Fn(Self::Item) -> bool + Sync + Send>(self, pred: P) -> Option<usize> {
        self.map(pred)
            .enumerate()
            .find_any(|(_, hit)| *hit)
            .map(|(i, _)| i)
    }
}

/// The pieces' accumulators of [`ParallelIterator::fold`], waiting to be combined.
///
/// ```
/// use threadlab::prelude::*;
/// let s = (0u32..4).into_par_iter().fold(String::new, |s, x| s + &x.to_string());
/// assert_eq!(s.reduce(String::new, |a, b| a + &b), "0123");
/// ```
pub struct Fold<I, ID, F> {
    base: I,
    identity: ID,
    fold_op: F,
}

/// Its base, not the closures (closures are not `Debug`).
impl<I: std::fmt::Debug, ID, F> std::fmt::Debug for Fold<I, ID, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fold")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl<I, ID, F> Fold<I, ID, F> {
    /// Combines the accumulators, left to right, starting from `identity()`.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let n = (0u32..10).into_par_iter().fold(|| 0u64, |n, _| n + 1).reduce(|| 0, |a, b| a + b);
    /// assert_eq!(n, 10);
    /// ```
    pub fn reduce<A, RID, R>(self, identity: RID, op: R) -> A
    where
        I: ParallelIterator,
        A: Send,
        ID: Fn() -> A + Sync + Send,
        F: Fn(A, I::Item) -> A + Sync + Send,
        RID: Fn() -> A + Sync + Send,
        R: Fn(A, A) -> A + Sync + Send,
    {
        let c = FoldReduce {
            acc: None,
            identity: &self.identity,
            fold_op: &self.fold_op,
            reduce_op: &op,
        };
        let out = drive(self.base.into_producer(), c);
        op(identity(), out)
    }
}

/// Anything that can become a parallel iterator: integer ranges, slices and `Vec` references.
///
/// ```
/// use threadlab::prelude::*;
/// assert_eq!((0u16..4).into_par_iter().count(), 4);
/// ```
pub trait IntoParallelIterator {
    /// The items.
    type Item: Send;
    /// The iterator.
    type Iter: ParallelIterator<Item = Self::Item>;
    /// Makes the parallel iterator.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let v = vec![1, 2];
    /// assert_eq!((&v).into_par_iter().count(), 2);
    /// ```
    fn into_par_iter(self) -> Self::Iter;
}

impl<I: ParallelIterator> IntoParallelIterator for I {
    type Item = I::Item;
    type Iter = I;
    fn into_par_iter(self) -> I {
        self
    }
}

/// `par_iter()`: a parallel iterator over shared references.
///
/// ```
/// use threadlab::prelude::*;
/// let v = vec![1, 2, 3];
/// assert_eq!(v.par_iter().sum::<i32>(), 6);
/// ```
pub trait IntoParallelRefIterator<'data> {
    /// The iterator.
    type Iter: ParallelIterator<Item = Self::Item>;
    /// Its items (`&T`).
    type Item: Send + 'data;
    /// Iterates over `&self`'s items in parallel.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!([1, 2].par_iter().count(), 2);
    /// ```
    fn par_iter(&'data self) -> Self::Iter;
}

impl<'data, C: ?Sized + 'data> IntoParallelRefIterator<'data> for C
where
    &'data C: IntoParallelIterator,
{
    type Iter = <&'data C as IntoParallelIterator>::Iter;
    type Item = <&'data C as IntoParallelIterator>::Item;
    fn par_iter(&'data self) -> Self::Iter {
        self.into_par_iter()
    }
}

/// `par_iter_mut()`: a parallel iterator over mutable references.
///
/// ```
/// use threadlab::prelude::*;
/// let mut v = vec![1, 2, 3];
/// v.par_iter_mut().for_each(|x| *x += 1);
/// assert_eq!(v, [2, 3, 4]);
/// ```
pub trait IntoParallelRefMutIterator<'data> {
    /// The iterator.
    type Iter: ParallelIterator<Item = Self::Item>;
    /// Its items (`&mut T`).
    type Item: Send + 'data;
    /// Iterates over `&mut self`'s items in parallel.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let mut a = [1, 2];
    /// a.par_iter_mut().for_each(|x| *x = 0);
    /// assert_eq!(a, [0, 0]);
    /// ```
    fn par_iter_mut(&'data mut self) -> Self::Iter;
}

impl<'data, C: ?Sized + 'data> IntoParallelRefMutIterator<'data> for C
where
    &'data mut C: IntoParallelIterator,
{
    type Iter = <&'data mut C as IntoParallelIterator>::Iter;
    type Item = <&'data mut C as IntoParallelIterator>::Item;
    fn par_iter_mut(&'data mut self) -> Self::Iter {
        self.into_par_iter()
    }
}
