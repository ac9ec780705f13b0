//! Parallel iterators in Rayon's shape — `v.par_iter().map(f).sum()`, `collect`, `par_sort` —
//! whose splitting comes from heartbeat promotion instead of a grain size.
//!
//! (Over 800 lines: the five traits with every provided method, as in Rayon's `iter/mod.rs`.)
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
//! - The sources without positions (`HashMap`, `BTreeSet`, `LinkedList`, `par_bridge`, the
//!   string and slice splits, `iter::split`) are found by one sequential pass into a buffer,
//!   then run in parallel ([`IntoIter`]); `rev`, `interleave`, and `intersperse` over a
//!   base without positions, gather the items (in parallel) when the pipeline runs.
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
mod bounds;
mod bridge;
mod chunks;
mod collect;
mod combine;
mod consume;
mod debug;
pub(crate) mod drive;
mod either;
mod find;
mod gen;
mod indexed;
mod interleave;
mod intersperse;
mod multizip;
mod owned;
mod panic_fuse;
pub mod plumbing;
mod plumbing_traits;
mod shared;
mod sort;
mod source;
mod strs;
mod try_fold;
mod try_ops;
mod unordered;

pub use adapters::{
    Adapter, Chain, ChunkIter, ChunksOf, Cloned, ClonedStep, Copied, CopiedStep, Enumerate, Filter,
    FilterMap, FilterMapStep, FilterStep, FlatMapIter, FlatMapIterStep, Inspect, InspectStep,
    KeepsLength, Map, MapStep, Step, StepName, WithFn, Zip,
};
pub use bounds::Bounded;
pub use chunks::{
    Chunks, ChunksExact, ChunksExactMut, ChunksMut, Exact, RChunksExact, RChunksExactMut,
};
pub use collect::{FromParallelIterator, ParallelExtend};
pub use combine::{
    CloneOf, FlatBlock, FlatMap, FlatProducer, FoldChunkIter, FoldChunks, FoldProducer, FoldWith,
    InitFn, MakeState, MapState, StateIter, Update, UpdateIter,
};
pub use either::Either;
pub use gen::{
    empty, once, repeat, repeat_n, split, walk_tree, walk_tree_postfix, walk_tree_prefix, RepeatN,
    Repeated,
};
pub use indexed::{Cut, Rev, StepBy, ZipEq};
pub use interleave::{Interleave, InterleaveShortest};
pub use intersperse::Intersperse;
pub use multizip::MultiZip;

/// Rayon's `range` module: the iterator of `(a..b).into_par_iter()`.
pub mod range {
    pub use super::RangeIter as Iter;
}

/// Rayon's `range_inclusive` module: the iterator of `(a..=b).into_par_iter()`.
pub mod range_inclusive {
    /// `a..b` followed by `b`.
    pub type Iter<T> = super::Chain<super::RangeIter<T>, super::RepeatN<T>>;
}
pub use owned::{IntoIter, ParallelBridge, ParallelDrainFull, ParallelDrainRange};
pub use panic_fuse::{FuseIter, PanicFuse};
pub use source::{Iter, IterMut, ParallelSlice, ParallelSliceMut, RangeIter};
pub use strs::{ParallelString, Pattern};
pub use try_fold::TryFold;
pub use try_ops::Try;
pub use unordered::{
    Positions, SkipAny, SkipAnyWhile, TakeAny, TakeAnyWhile, Unordered, WhileSome,
};

use consume::{Arith, Extreme, FindAny, FoldReduce, ForEach};
use drive::{drive, Count, Producer};
use std::cmp::Ordering as CmpOrdering;
use std::iter::{Product, Sum};
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, AtomicUsize};

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

    /// Maps every item to a parallel iterator and flattens, in order.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let v: Vec<u32> = (0u32..3).into_par_iter().flat_map(|n| vec![n; n as usize]).collect();
    /// assert_eq!(v, [1, 2, 2]);
    /// ```
    fn flat_map<PI, F>(self, f: F) -> FlatMap<Self, F>
    where
        PI: IntoParallelIterator,
        F: Fn(Self::Item) -> PI + Sync + Send,
    {
        FlatMap::new(self, f)
    }

    /// Flattens items that are themselves parallel iterables, in order.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let v: Vec<u8> = vec![vec![1u8], vec![], vec![2, 3]].into_par_iter().flatten().collect();
    /// assert_eq!(v, [1, 2, 3]);
    /// ```
    #[allow(clippy::type_complexity)]
    fn flatten(self) -> FlatMap<Self, fn(Self::Item) -> Self::Item>
    where
        Self::Item: IntoParallelIterator,
    {
        FlatMap::new(self, |x| x)
    }

    /// Flattens items that are sequential iterables (Rayon's `flatten_iter`).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let v: Vec<u8> = vec![vec![1u8], vec![2, 3]].into_par_iter().flatten_iter().collect();
    /// assert_eq!(v, [1, 2, 3]);
    /// ```
    #[allow(clippy::type_complexity)]
    fn flatten_iter(self) -> FlatMapIter<Self, fn(Self::Item) -> Self::Item>
    where
        Self::Item: IntoIterator,
        <Self::Item as IntoIterator>::Item: Send,
    {
        FlatMapIter::new(self, |x| x)
    }

    /// This iterator's items, then `other`'s.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!((0u8..2).into_par_iter().chain(vec![9u8]).collect::<Vec<_>>(), [0, 1, 9]);
    /// ```
    fn chain<C>(self, other: C) -> Chain<Self, C::Iter>
    where
        C: IntoParallelIterator<Item = Self::Item>,
    {
        Chain::new(self, other.into_par_iter())
    }

    /// Changes every item in place with `f`, passing it on.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let v: Vec<u32> = (0u32..3).into_par_iter().update(|x| *x *= 2).collect();
    /// assert_eq!(v, [0, 2, 4]);
    /// ```
    fn update<F: Fn(&mut Self::Item) + Sync + Send>(self, f: F) -> Update<Self, F> {
        Update::new(self, f)
    }

    /// `map` with a mutable state made by `init` (once per block of items, as Rayon makes
    /// one per piece).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let v: Vec<usize> = (0usize..3).into_par_iter().map_init(Vec::new, |buf: &mut Vec<usize>, x| { buf.push(x); x }).collect();
    /// assert_eq!(v, [0, 1, 2]);
    /// ```
    fn map_init<T, INIT, F, R>(self, init: INIT, f: F) -> MapState<Self, InitFn<INIT>, F>
    where
        INIT: Fn() -> T + Sync + Send,
        F: Fn(&mut T, Self::Item) -> R + Sync + Send,
        R: Send,
    {
        MapState::init(self, init, f)
    }

    /// `map` with a mutable clone of `value` (one clone per block of items).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let v: Vec<u32> = (0u32..3).into_par_iter().map_with(5u32, |five, x| x + *five).collect();
    /// assert_eq!(v, [5, 6, 7]);
    /// ```
    fn map_with<T, F, R>(self, value: T, f: F) -> MapState<Self, CloneOf<T>, F>
    where
        T: Clone + Send + Sync,
        F: Fn(&mut T, Self::Item) -> R + Sync + Send,
        R: Send,
    {
        MapState::with(self, value, f)
    }

    /// `for_each` with a mutable clone of `value` (one clone per block of items).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// use std::sync::mpsc::channel;
    /// let (tx, rx) = channel();
    /// (0u32..5).into_par_iter().for_each_with(tx, |tx, x| tx.send(x).unwrap());
    /// let mut got: Vec<u32> = rx.iter().collect();
    /// got.sort();
    /// assert_eq!(got, [0, 1, 2, 3, 4]);
    /// ```
    fn for_each_with<T, F>(self, value: T, f: F)
    where
        T: Clone + Send + Sync,
        F: Fn(&mut T, Self::Item) + Sync + Send,
    {
        self.map_with(value, f).for_each(drop)
    }

    /// `for_each` with a mutable state made by `init` (once per block of items).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// (0u32..5).into_par_iter().for_each_init(Vec::new, |buf, x| buf.push(x));
    /// ```
    fn for_each_init<T, INIT, F>(self, init: INIT, f: F)
    where
        INIT: Fn() -> T + Sync + Send,
        F: Fn(&mut T, Self::Item) + Sync + Send,
    {
        self.map_init(init, f).for_each(drop)
    }

    /// Splits no piece shorter than `min` positions (see `bounds.rs`: heartbeat splitting
    /// does not need this; it is honoured when asked).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!((0u32..100).into_par_iter().with_min_len(40).count(), 100);
    /// ```
    fn with_min_len(self, min: usize) -> Bounded<Self> {
        Bounded::new(self, min, usize::MAX)
    }

    /// Splits every piece longer than `max` positions at once.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!((0u32..100).into_par_iter().with_max_len(7).sum::<u32>(), 4950);
    /// ```
    fn with_max_len(self, max: usize) -> Bounded<Self> {
        Bounded::new(self, 1, max)
    }

    /// Runs the pipeline in sequential blocks of growing size (as many positions as the pool
    /// has workers, then doubling), each block in parallel and finished before the next starts
    /// (Rayon's `by_exponential_blocks`): a search that stops early looks no further than the
    /// block that holds its answer.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!((0u32..100).into_par_iter().by_exponential_blocks().find_first(|x| x % 7 == 6), Some(6));
    /// ```
    fn by_exponential_blocks(self) -> Bounded<Self> {
        Bounded::in_blocks(self, drive::Blocks::Exponential)
    }

    /// Runs the pipeline in sequential blocks of `size` positions, each block in parallel and
    /// finished before the next starts (Rayon's `by_uniform_blocks`).
    ///
    /// # Panics
    /// If `size` is 0.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!((0u32..100).into_par_iter().by_uniform_blocks(10).count(), 100);
    /// ```
    fn by_uniform_blocks(self, size: usize) -> Bounded<Self> {
        assert!(size > 0, "block_size must not be zero");
        Bounded::in_blocks(self, drive::Blocks::Uniform(size))
    }

    /// The first item, in order, for which `pred` holds.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!((0u32..1000).into_par_iter().find_first(|x| x % 10 == 9), Some(9));
    /// ```
    fn find_first<P: Fn(&Self::Item) -> bool + Sync + Send>(self, pred: P) -> Option<Self::Item> {
        let best = AtomicUsize::new(usize::MAX);
        drive(self.into_producer(), find::FindFirst::new(&pred, &best))
    }

    /// The last item, in order, for which `pred` holds.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!((0u32..1000).into_par_iter().find_last(|x| x % 10 == 9), Some(999));
    /// ```
    fn find_last<P: Fn(&Self::Item) -> bool + Sync + Send>(self, pred: P) -> Option<Self::Item> {
        find::find_last(self.into_producer(), &pred)
    }

    /// Some `Some` of `f` (any of them).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!(["a", "1"].par_iter().find_map_any(|s| s.parse::<u8>().ok()), Some(1));
    /// ```
    fn find_map_any<R: Send, F: Fn(Self::Item) -> Option<R> + Sync + Send>(
        self,
        f: F,
    ) -> Option<R> {
        self.filter_map(f).find_any(|_| true)
    }

    /// The first `Some` of `f`, in order.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!(["a", "1", "2"].par_iter().find_map_first(|s| s.parse::<u8>().ok()), Some(1));
    /// ```
    fn find_map_first<R: Send, F: Fn(Self::Item) -> Option<R> + Sync + Send>(
        self,
        f: F,
    ) -> Option<R> {
        self.filter_map(f).find_first(|_| true)
    }

    /// The last `Some` of `f`, in order.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!(["a", "1", "2"].par_iter().find_map_last(|s| s.parse::<u8>().ok()), Some(2));
    /// ```
    fn find_map_last<R: Send, F: Fn(Self::Item) -> Option<R> + Sync + Send>(
        self,
        f: F,
    ) -> Option<R> {
        self.filter_map(f).find_last(|_| true)
    }

    /// Combines all items with `op`, left to right within a piece and between pieces; `None`
    /// for no items.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!((1u32..5).into_par_iter().reduce_with(|a, b| a.max(b)), Some(4));
    /// ```
    fn reduce_with<OP>(self, op: OP) -> Option<Self::Item>
    where
        OP: Fn(Self::Item, Self::Item) -> Self::Item + Sync + Send,
    {
        self.map(Some).reduce(
            || None,
            |a, b| match (a, b) {
                (Some(a), Some(b)) => Some(op(a, b)),
                (a, b) => a.or(b),
            },
        )
    }

    /// `fold` whose accumulators start as clones of `init`.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let s: String = ["a", "b"].par_iter().fold_with(String::new(), |s, x| s + x).collect();
    /// assert_eq!(s, "ab");
    /// ```
    fn fold_with<T, F>(self, init: T, fold_op: F) -> FoldWith<Self, T, F>
    where
        T: Clone + Send + Sync,
        F: Fn(T, Self::Item) -> T + Sync + Send,
    {
        FoldWith::new(self, init, fold_op)
    }

    /// Calls `op` on every item until one returns a stop (`None`, `Err`, `Break`), which is
    /// returned (some stop, not necessarily the first in order); else the `()` output.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let r = (0u32..100).into_par_iter().try_for_each(|x| if x == 42 { Err(x) } else { Ok(()) });
    /// assert_eq!(r, Err(42));
    /// ```
    fn try_for_each<R, OP>(self, op: OP) -> R
    where
        R: Try<Output = ()> + Send,
        OP: Fn(Self::Item) -> R + Sync + Send,
    {
        self.map(op)
            .find_any(|r| r.is_break())
            .unwrap_or_else(|| R::from_output(()))
    }

    /// `try_for_each` with a mutable clone of `value` (one per block of items).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let r = (0u32..10).into_par_iter().try_for_each_with(5u32, |k, x| if x < *k { Some(()) } else { None });
    /// assert_eq!(r, None);
    /// ```
    fn try_for_each_with<T, R, OP>(self, value: T, op: OP) -> R
    where
        T: Clone + Send + Sync,
        R: Try<Output = ()> + Send,
        OP: Fn(&mut T, Self::Item) -> R + Sync + Send,
    {
        self.map_with(value, op)
            .find_any(|r| r.is_break())
            .unwrap_or_else(|| R::from_output(()))
    }

    /// `try_for_each` with a mutable state made by `init` (once per block of items).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let r: Result<(), ()> = (0u32..10).into_par_iter().try_for_each_init(|| 0u32, |n, _| { *n += 1; Ok(()) });
    /// assert!(r.is_ok());
    /// ```
    fn try_for_each_init<T, INIT, R, OP>(self, init: INIT, op: OP) -> R
    where
        INIT: Fn() -> T + Sync + Send,
        R: Try<Output = ()> + Send,
        OP: Fn(&mut T, Self::Item) -> R + Sync + Send,
    {
        self.map_init(init, op)
            .find_any(|r| r.is_break())
            .unwrap_or_else(|| R::from_output(()))
    }

    /// Reduces items that are `Option`s, `Result`s or `ControlFlow`s: a stop among them (or
    /// from `op`) is returned, else the reduction of the outputs from `identity()`.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let sum = (1u32..5).into_par_iter().map(Some).try_reduce(|| 0, |a, b| a.checked_add(b));
    /// assert_eq!(sum, Some(10));
    /// ```
    fn try_reduce<T, ID, OP>(self, identity: ID, op: OP) -> Self::Item
    where
        Self::Item: Try<Output = T>,
        ID: Fn() -> T + Sync + Send,
        OP: Fn(T, T) -> Self::Item + Sync + Send,
    {
        self.reduce(
            || Self::Item::from_output(identity()),
            |a, b| try_ops::try_combine(&op, a, b),
        )
    }

    /// `try_reduce` without an identity: `None` for no items.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let m = (1u32..5).into_par_iter().map(Ok::<u32, ()>).try_reduce_with(|a, b| Ok(a.max(b)));
    /// assert_eq!(m, Some(Ok(4)));
    /// ```
    fn try_reduce_with<T, OP>(self, op: OP) -> Option<Self::Item>
    where
        Self::Item: Try<Output = T>,
        OP: Fn(T, T) -> Self::Item + Sync + Send,
    {
        self.reduce_with(|a, b| try_ops::try_combine(&op, a, b))
    }

    /// A clone of `separator` between every two neighbouring items, in order (indexed when
    /// this iterator is: `n` items become `2n - 1`).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let s: String = "a,b,c".par_split(',').intersperse("; ").collect();
    /// assert_eq!(s, "a; b; c");
    /// let n = (0u8..10).into_par_iter().intersperse(99).zip_eq(0..19).count();
    /// assert_eq!(n, 19);
    /// ```
    fn intersperse(self, separator: Self::Item) -> Intersperse<Self>
    where
        Self::Item: Clone,
    {
        Intersperse::new(self, separator)
    }

    /// `fold` whose operation may stop (return `None`, `Err` or `Break`): one result per block
    /// a worker ran, the block's accumulator going on (`Some`, `Ok`, `Continue`) or its first
    /// stop, after which its piece ends (see `try_fold.rs`). Combine them with
    /// [`try_reduce`](ParallelIterator::try_reduce).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let total = (1u64..=20)
    ///     .into_par_iter()
    ///     .try_fold(|| 0u64, |a, x| if x == 13 { Err(x) } else { Ok(a + x) })
    ///     .try_reduce(|| 0, |a, b| Ok(a + b));
    /// assert_eq!(total, Err(13));
    /// ```
    fn try_fold<T, R, ID, F>(self, identity: ID, fold_op: F) -> TryFold<Self, InitFn<ID>, F>
    where
        ID: Fn() -> T + Sync + Send,
        F: Fn(T, Self::Item) -> R + Sync + Send,
        R: Try<Output = T> + Send,
    {
        TryFold::new(self, combine::InitFn::new(identity), fold_op)
    }

    /// `try_fold` whose accumulators start as clones of `init`.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let n = (0u32..100)
    ///     .into_par_iter()
    ///     .try_fold_with(0u32, |a, _| a.checked_add(1))
    ///     .try_reduce(|| 0, |a, b| a.checked_add(b));
    /// assert_eq!(n, Some(100));
    /// ```
    fn try_fold_with<T, R, F>(self, init: T, fold_op: F) -> TryFold<Self, CloneOf<T>, F>
    where
        T: Clone + Send + Sync,
        F: Fn(T, Self::Item) -> R + Sync + Send,
        R: Try<Output = T> + Send,
    {
        TryFold::new(self, combine::CloneOf::new(init), fold_op)
    }

    /// The values of the items that are `Some`, halting every piece once any piece meets a
    /// `None` (Rayon's `while_some`): on one worker, `std`'s `map_while(|x| x)`; split, items
    /// after the first `None` may pass from pieces that ran before it was met.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let v = [Some(1), Some(2), None, Some(4)];
    /// let got: Vec<i32> = v.par_iter().copied().while_some().collect();
    /// // Values of `Some`s only; which ones depends on which piece met the `None` first.
    /// assert!(got.iter().all(|x| [1, 2, 4].contains(x)));
    /// ```
    fn while_some<T: Send>(self) -> unordered::WhileSome<Self>
    where
        Self: ParallelIterator<Item = Option<T>>,
    {
        unordered::while_some(self)
    }

    /// Any `n` items (the first `n` to arrive, from whichever pieces), then every piece stops.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!((0u32..100).into_par_iter().take_any(7).count(), 7);
    /// ```
    fn take_any(self, n: usize) -> unordered::TakeAny<Self> {
        unordered::take_any(self, n)
    }

    /// All items but any `n` of them (the first `n` to arrive).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!((0u32..100).into_par_iter().skip_any(7).count(), 93);
    /// ```
    fn skip_any(self, n: usize) -> unordered::SkipAny<Self> {
        unordered::skip_any(self, n)
    }

    /// Items while `pred` holds; once it fails for an item in any piece, every piece stops.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let v: Vec<u32> = (0u32..100).into_par_iter().take_any_while(|x| *x < 10).collect();
    /// assert!(v.iter().all(|x| *x < 10));
    /// ```
    fn take_any_while<P>(self, pred: P) -> unordered::TakeAnyWhile<Self, P>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        unordered::take_any_while(self, pred)
    }

    /// Drops items while `pred` holds; once it fails for an item in any piece, every item
    /// passes.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let v: Vec<u32> = (0u32..100).into_par_iter().skip_any_while(|x| *x < 10).collect();
    /// assert!((10..100).all(|x| v.contains(&x)));
    /// ```
    fn skip_any_while<P>(self, pred: P) -> unordered::SkipAnyWhile<Self, P>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        unordered::skip_any_while(self, pred)
    }

    /// Stops the other pieces soon after a panic in any of them (see `panic_fuse.rs`).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!((0u8..3).into_par_iter().panic_fuse().count(), 3);
    /// ```
    fn panic_fuse(self) -> PanicFuse<Self> {
        PanicFuse::new(self)
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

    /// Splits pairs into two collections, each in order (nested pairs unzip into nested
    /// collections: `(Vec<A>, (Vec<B>, Vec<C>))`).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let (a, b): (Vec<u32>, Vec<u32>) = (0u32..3).into_par_iter().map(|x| (x, x * 10)).unzip();
    /// assert_eq!((a, b), (vec![0, 1, 2], vec![0, 10, 20]));
    /// let (x, (y, z)): (Vec<u8>, (Vec<u8>, Vec<u8>)) =
    ///     (0u8..2).into_par_iter().map(|i| (i, (i + 1, i + 2))).unzip();
    /// assert_eq!((x, y, z), (vec![0, 1], vec![1, 2], vec![2, 3]));
    /// ```
    fn unzip<A, B, FromA, FromB>(self) -> (FromA, FromB)
    where
        Self: ParallelIterator<Item = (A, B)>,
        A: Send,
        B: Send,
        FromA: Default + Send + ParallelExtend<A>,
        FromB: Default + Send + ParallelExtend<B>,
    {
        let route = |(a, b): (A, B), l: &mut Vec<A>, r: &mut Vec<B>| {
            l.push(a);
            r.push(b);
        };
        let (a, b) = pair(self, &route);
        let (mut fa, mut fb) = (FromA::default(), FromB::default());
        fa.extend_vec(a);
        fb.extend_vec(b);
        (fa, fb)
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

    /// Routes every item to one of two collections by what `route` returns: the `Left` values
    /// extend the first, the `Right` values the second, each in order (Rayon's
    /// `partition_map`).
    ///
    /// ```
    /// use threadlab::iter::Either;
    /// use threadlab::prelude::*;
    /// let (nums, words): (Vec<u32>, Vec<&str>) = ["1", "a", "2"]
    ///     .par_iter()
    ///     .partition_map(|s| s.parse::<u32>().map_or(Either::Right(*s), Either::Left));
    /// assert_eq!((nums, words), (vec![1, 2], vec!["a"]));
    /// ```
    fn partition_map<A, B, P, L, R>(self, route: P) -> (A, B)
    where
        A: Default + Send + ParallelExtend<L>,
        B: Default + Send + ParallelExtend<R>,
        P: Fn(Self::Item) -> Either<L, R> + Sync + Send,
        L: Send,
        R: Send,
    {
        let to = |x: Self::Item, l: &mut Vec<L>, r: &mut Vec<R>| match route(x) {
            Either::Left(a) => l.push(a),
            Either::Right(b) => r.push(b),
        };
        let (l, r) = pair(self, &to);
        let (mut a, mut b) = (A::default(), B::default());
        a.par_extend(l);
        b.par_extend(r);
        (a, b)
    }

    /// The number of items, if it is known without running the pipeline: `Some` for the
    /// sources and adapters whose length threadlab counts up front (ranges, slices, `Vec`s and
    /// the indexed adapters over them; see [`IndexedParallelIterator::len`]), else `None`
    /// (Rayon's `opt_len`, a hint for consumers).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!((0..100u64).into_par_iter().opt_len(), Some(100));
    /// assert_eq!((0..100u64).into_par_iter().filter(|x| x % 2 == 0).opt_len(), None);
    /// ```
    fn opt_len(&self) -> Option<usize> {
        None
    }

    /// Runs the pipeline into a Rayon-style consumer (see [`plumbing`]): each piece the engine
    /// runs is folded by a piece of `consumer`, and the pieces' results are reduced left to
    /// right (Rayon's `drive_unindexed`, which threadlab provides for every iterator).
    ///
    /// ```
    /// use threadlab::iter::plumbing::{Consumer, Folder, Reducer, UnindexedConsumer};
    /// use threadlab::prelude::*;
    /// # struct Count; struct N(usize); struct Add;
    /// # impl<T> Folder<T> for N { type Result = usize; fn consume(self, _: T) -> Self { N(self.0 + 1) }
    /// #     fn complete(self) -> usize { self.0 } fn full(&self) -> bool { false } }
    /// # impl Reducer<usize> for Add { fn reduce(self, a: usize, b: usize) -> usize { a + b } }
    /// # impl<T> Consumer<T> for Count { type Folder = N; type Reducer = Add; type Result = usize;
    /// #     fn split_at(self, _: usize) -> (Self, Self, Add) { (Count, Count, Add) }
    /// #     fn into_folder(self) -> N { N(0) } fn full(&self) -> bool { false } }
    /// # impl<T> UnindexedConsumer<T> for Count { fn split_off_left(&self) -> Self { Count }
    /// #     fn to_reducer(&self) -> Add { Add } }
    /// let evens = (0..1_000u32).into_par_iter().filter(|x| x % 2 == 0);
    /// assert_eq!(evens.drive_unindexed(Count), 500);
    /// ```
    fn drive_unindexed<C: plumbing_traits::UnindexedConsumer<Self::Item>>(
        self,
        consumer: C,
    ) -> C::Result {
        drive(self.into_producer(), bridge::Unindexed::new(consumer))
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
#[allow(clippy::len_without_is_empty)] // as Rayon's: `len` without `is_empty`
pub trait IndexedParallelIterator: ParallelIterator {
    /// The number of items, known without running the pipeline (as `ExactSizeIterator::len`).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let v = [1, 2, 3, 4, 5];
    /// assert_eq!(v.par_iter().zip(0..3).len(), 3);
    /// assert_eq!(v.par_chunks(2).map(|c| c.len()).len(), 3);
    /// ```
    fn len(&self) -> usize;

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
        assert!(size > 0, "chunk_size must not be zero");
        ChunksOf::new(self, size)
    }

    /// The first `n` items.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!((0u32..10).into_par_iter().take(2).collect::<Vec<_>>(), [0, 1]);
    /// ```
    fn take(self, n: usize) -> Cut<Self> {
        Cut::new(self, 0, n)
    }

    /// All but the first `n` items.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!((0u32..10).into_par_iter().skip(8).collect::<Vec<_>>(), [8, 9]);
    /// ```
    fn skip(self, n: usize) -> Cut<Self> {
        Cut::new(self, n, usize::MAX)
    }

    /// Every `step`-th item, from the first.
    ///
    /// # Panics
    /// If `step` is 0.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!((0u32..7).into_par_iter().step_by(3).collect::<Vec<_>>(), [0, 3, 6]);
    /// ```
    fn step_by(self, step: usize) -> StepBy<Self> {
        assert!(step > 0, "step_by: step must be at least 1");
        StepBy::new(self, step)
    }

    /// The items in reverse order. When the pipeline runs, the items are computed (in
    /// parallel) and gathered before the rest of the pipeline runs over them in reverse.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!((0u32..3).into_par_iter().rev().collect::<Vec<_>>(), [2, 1, 0]);
    /// ```
    fn rev(self) -> Rev<Self> {
        Rev::new(self)
    }

    /// `zip` of two iterators of the same length.
    ///
    /// # Panics
    /// When the pipeline runs, if the lengths differ.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!([1, 2].par_iter().zip_eq([3, 4].par_iter()).count(), 2);
    /// ```
    fn zip_eq<J: IntoParallelIterator>(self, other: J) -> ZipEq<Self, J::Iter>
    where
        J::Iter: IndexedParallelIterator,
    {
        ZipEq::new(self, other.into_par_iter())
    }

    /// The items of `self` and `other` by turns (`a0, b0, a1, b1, …`), then the rest of the
    /// longer. Both sides are gathered when the pipeline runs (see `interleave.rs`).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let v: Vec<u32> = (0u32..3).into_par_iter().interleave(10u32..15).collect();
    /// assert_eq!(v, [0, 10, 1, 11, 2, 12, 13, 14]);
    /// ```
    fn interleave<J>(self, other: J) -> Interleave<Self, J::Iter>
    where
        J: IntoParallelIterator<Item = Self::Item>,
        J::Iter: IndexedParallelIterator<Item = Self::Item>,
    {
        Interleave::new(self, other.into_par_iter())
    }

    /// `interleave` until either side runs out.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let v: Vec<u32> = (0u32..3).into_par_iter().interleave_shortest(10u32..15).collect();
    /// assert_eq!(v, [0, 10, 1, 11, 2, 12]);
    /// ```
    fn interleave_shortest<J>(self, other: J) -> InterleaveShortest<Self, J::Iter>
    where
        J: IntoParallelIterator<Item = Self::Item>,
        J::Iter: IndexedParallelIterator<Item = Self::Item>,
    {
        interleave::interleave_shortest(self, other.into_par_iter())
    }

    /// The index of the first item for which `pred` holds.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!([1, 5, 5].par_iter().position_first(|x| *x == 5), Some(1));
    /// ```
    fn position_first<P: Fn(Self::Item) -> bool + Sync + Send>(self, pred: P) -> Option<usize> {
        self.map(pred)
            .enumerate()
            .find_first(|(_, hit)| *hit)
            .map(|(i, _)| i)
    }

    /// The index of the last item for which `pred` holds.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!([1, 5, 5].par_iter().position_last(|x| *x == 5), Some(2));
    /// ```
    fn position_last<P: Fn(Self::Item) -> bool + Sync + Send>(self, pred: P) -> Option<usize> {
        self.map(pred)
            .enumerate()
            .find_last(|(_, hit)| *hit)
            .map(|(i, _)| i)
    }

    /// Collects into `target`, replacing its contents.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let mut v = vec![7u8; 10];
    /// (0u8..3).into_par_iter().collect_into_vec(&mut v);
    /// assert_eq!(v, [0, 1, 2]);
    /// ```
    fn collect_into_vec(self, target: &mut Vec<Self::Item>) {
        *target = self.collect();
    }

    /// Folds every `size` consecutive items from `identity()`: one accumulator per chunk.
    ///
    /// # Panics
    /// If `size` is 0.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let v: Vec<u32> = (0u32..5).into_par_iter().fold_chunks(2, || 0, |a, x| a + x).collect();
    /// assert_eq!(v, [1, 5, 4]);
    /// ```
    fn fold_chunks<T, ID, F>(
        self,
        size: usize,
        identity: ID,
        fold_op: F,
    ) -> FoldChunks<Self, InitFn<ID>, F>
    where
        T: Send,
        ID: Fn() -> T + Sync + Send,
        F: Fn(T, Self::Item) -> T + Sync + Send,
    {
        assert!(size > 0, "chunk_size must not be zero");
        FoldChunks::init(self, size, identity, fold_op)
    }

    /// Folds every `size` consecutive items from a clone of `init`.
    ///
    /// # Panics
    /// If `size` is 0.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let v: Vec<u32> = (0u32..5).into_par_iter().fold_chunks_with(2, 0, |a, x| a + x).collect();
    /// assert_eq!(v, [1, 5, 4]);
    /// ```
    fn fold_chunks_with<T, F>(
        self,
        size: usize,
        init: T,
        fold_op: F,
    ) -> FoldChunks<Self, CloneOf<T>, F>
    where
        T: Clone + Send + Sync,
        F: Fn(T, Self::Item) -> T + Sync + Send,
    {
        assert!(size > 0, "chunk_size must not be zero");
        FoldChunks::with(self, size, init, fold_op)
    }

    /// The indices of the items for which `pred` holds, in order.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let v: Vec<usize> = (0u32..10).into_par_iter().positions(|x| x % 4 == 1).collect();
    /// assert_eq!(v, [1, 5, 9]);
    /// ```
    fn positions<P>(self, pred: P) -> Positions<Self, P>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        Positions::new(self, pred)
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

    /// Compares the items with those of `other` in order, as `Iterator::cmp` does
    /// (lexicographically; a shorter sequence that is a prefix of the longer is less).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// use std::cmp::Ordering;
    /// assert_eq!((0..10).into_par_iter().cmp(0..11), Ordering::Less);
    /// assert_eq!([1, 3].par_iter().cmp(&[1, 2]), Ordering::Greater);
    /// ```
    fn cmp<I>(self, other: I) -> CmpOrdering
    where
        I: IntoParallelIterator<Item = Self::Item>,
        I::Iter: IndexedParallelIterator,
        Self::Item: Ord,
    {
        let other = other.into_par_iter();
        let lens = self.len().cmp(&other.len());
        self.zip(other)
            .map(|(a, b)| Ord::cmp(&a, &b))
            .find_first(|o| *o != CmpOrdering::Equal)
            .unwrap_or(lens)
    }

    /// Compares the items with those of `other` in order, as `Iterator::partial_cmp` does.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!([1.0, f64::NAN].par_iter().partial_cmp(&[1.0, 2.0]), None);
    /// assert!([1.0, 2.0].par_iter().lt(&[1.0, 3.0]));
    /// ```
    fn partial_cmp<I>(self, other: I) -> Option<CmpOrdering>
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialOrd<I::Item>,
    {
        let other = other.into_par_iter();
        let lens = self.len().cmp(&other.len());
        self.zip(other)
            .map(|(a, b)| PartialOrd::partial_cmp(&a, &b))
            .find_first(|o| *o != Some(CmpOrdering::Equal))
            .unwrap_or(Some(lens))
    }

    /// True if the items equal those of `other`, in order and number.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert!((0..4).into_par_iter().map(|x| x * 2).eq(vec![0, 2, 4, 6]));
    /// ```
    fn eq<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialEq<I::Item>,
    {
        let other = other.into_par_iter();
        self.len() == other.len() && self.zip(other).all(|(a, b)| a == b)
    }

    /// True if the items differ from those of `other`.
    fn ne<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialEq<I::Item>,
    {
        !self.eq(other)
    }

    /// True if the items are less than those of `other` (see [`partial_cmp`](Self::partial_cmp)).
    fn lt<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialOrd<I::Item>,
    {
        self.partial_cmp(other) == Some(CmpOrdering::Less)
    }

    /// True if the items are less than or equal to those of `other`.
    fn le<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialOrd<I::Item>,
    {
        matches!(
            self.partial_cmp(other),
            Some(CmpOrdering::Less | CmpOrdering::Equal)
        )
    }

    /// True if the items are greater than those of `other`.
    fn gt<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialOrd<I::Item>,
    {
        self.partial_cmp(other) == Some(CmpOrdering::Greater)
    }

    /// True if the items are greater than or equal to those of `other`.
    fn ge<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialOrd<I::Item>,
    {
        matches!(
            self.partial_cmp(other),
            Some(CmpOrdering::Greater | CmpOrdering::Equal)
        )
    }

    /// Unzips pairs into two vectors, which are cleared first (Rayon's `unzip_into_vecs`).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let (mut a, mut b) = (vec![9], Vec::new());
    /// (0..3).into_par_iter().map(|x| (x, x * x)).unzip_into_vecs(&mut a, &mut b);
    /// assert_eq!((a, b), (vec![0, 1, 2], vec![0, 1, 4]));
    /// ```
    fn unzip_into_vecs<A, B>(self, left: &mut Vec<A>, right: &mut Vec<B>)
    where
        Self: IndexedParallelIterator<Item = (A, B)>,
        A: Send,
        B: Send,
    {
        let (a, b): (Vec<A>, Vec<B>) = self.unzip();
        *left = a;
        *right = b;
    }

    /// Runs the pipeline into a Rayon-style indexed consumer, split at positions (Rayon's
    /// `drive`; see [`plumbing`]).
    ///
    /// ```
    /// use threadlab::iter::plumbing::bridge;
    /// use threadlab::prelude::*;
    /// // `bridge` of an indexed iterator is its `drive` (see `bridge` for a consumer).
    /// # let _ = bridge::<threadlab::iter::RangeIter<u8>, threadlab::iter::plumbing::Unused>;
    /// assert_eq!((0..3u8).into_par_iter().len(), 3);
    /// ```
    fn drive<C: plumbing_traits::Consumer<Self::Item>>(self, consumer: C) -> C::Result {
        drive(self.into_producer(), bridge::Indexed::new(consumer))
    }

    /// Hands the pipeline's producer to `callback` as a Rayon-style [`plumbing::Producer`]:
    /// splittable at any index, each piece a sequential iterator from both ends (Rayon's
    /// `with_producer`).
    ///
    /// ```
    /// use threadlab::iter::plumbing::{Producer, ProducerCallback};
    /// use threadlab::prelude::*;
    /// struct Last;
    /// impl<T> ProducerCallback<T> for Last {
    ///     type Output = Option<T>;
    ///     fn callback<P: Producer<Item = T>>(self, p: P) -> Option<T> {
    ///         p.into_iter().next_back()
    ///     }
    /// }
    /// assert_eq!((0..10).into_par_iter().map(|x| x * 3).with_producer(Last), Some(27));
    /// ```
    fn with_producer<CB: plumbing_traits::ProducerCallback<Self::Item>>(
        self,
        callback: CB,
    ) -> CB::Output {
        callback.callback(bridge::AsRayon(self.into_producer()))
    }
}

/// The pieces' accumulators of [`ParallelIterator::fold`], waiting to be combined.
///
/// ```
/// use threadlab::prelude::*;
/// let s = (0u32..4).into_par_iter().fold(String::new, |s, x| s + &x.to_string());
/// assert_eq!(s.reduce(String::new, |a, b| a + &b), "0123");
/// ```
#[derive(Clone)]
pub struct Fold<I, ID, F> {
    base: I,
    identity: ID,
    fold_op: F,
}

/// Its base, not the closures (closures are not `Debug`).
impl<I: std::fmt::Debug, ID, F> std::fmt::Debug for Fold<I, ID, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        debug::base_only(f, "Fold", &self.base)
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
