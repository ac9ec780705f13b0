//! The sources: integer ranges, shared and mutable slices, and the slices' traits (their
//! fixed-size chunks are in `chunks.rs`). Each is its own [`Producer`]: splitting is `split_at` on the range or slice, a block is the std
//! iterator over the first positions.

use super::chunks::{
    Chunks, ChunksExact, ChunksExactMut, ChunksMut, RChunksExact, RChunksExactMut,
};
use super::drive::Producer;
use super::owned::IntoIter;
use super::{IndexedParallelIterator, ParallelIterator};
use std::ops::Range;

/// A parallel iterator over an integer range, from `(a..b).into_par_iter()`.
///
/// ```
/// use threadlab::prelude::*;
/// assert_eq!((1u64..11).into_par_iter().sum::<u64>(), 55);
/// ```
#[derive(Debug, Clone)]
pub struct RangeIter<T> {
    range: Range<T>,
}

macro_rules! range_impls {
    ($($t:ty),*) => {$(
        impl Producer for RangeIter<$t> {
            type Item = $t;
            type Iter<'s> = Range<$t>;
            #[inline]
            fn len(&self) -> usize {
                if self.range.start < self.range.end {
                    (self.range.end as i128 - self.range.start as i128) as usize
                } else {
                    0
                }
            }
            fn split_at(self, mid: usize) -> (Self, Self) {
                let m = (self.range.start as i128 + mid as i128) as $t;
                (
                    RangeIter { range: self.range.start..m },
                    RangeIter { range: m..self.range.end },
                )
            }
            #[inline]
            fn take(&mut self, n: usize) -> Range<$t> {
                let start = self.range.start;
                let m = (start as i128 + n as i128) as $t;
                self.range.start = m;
                start..m
            }
        }
        impl RangeInteger for $t {
            type Producer = RangeIter<$t>;
            fn producer(range: Range<$t>) -> RangeIter<$t> {
                RangeIter { range }
            }
            fn count(range: &Range<$t>) -> Option<usize> {
                Some(Producer::len(&RangeIter { range: range.clone() }))
            }
        }
        impl IndexedRangeInteger for $t {}
    )*};
}
range_impls!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);

/// The integer types whose ranges are parallel iterators, and how (a sealed trait: threadlab
/// implements it). One generic impl of `ParallelIterator` over it, as Rayon has, rather than
/// one impl per type: so in `(1..100).into_par_iter().filter(|&x| is_even(x))` the range's type
/// comes from `is_even`'s argument, as in Rayon, instead of an ambiguity settled as `i32`.
#[doc(hidden)]
pub trait RangeInteger: Copy + Send + Sized + 'static {
    /// The engine's producer of such a range.
    type Producer: Producer<Item = Self>;
    /// The producer of `range`.
    fn producer(range: Range<Self>) -> Self::Producer;
    /// The number of values in `range`, if a `usize` counts it.
    fn count(range: &Range<Self>) -> Option<usize>;
}

/// The integer types whose ranges are indexed parallel iterators: all but the 128-bit ones,
/// which may hold more values than a `usize` counts (as in Rayon).
#[doc(hidden)]
pub trait IndexedRangeInteger: RangeInteger {}

impl<T: RangeInteger> ParallelIterator for RangeIter<T> {
    type Item = T;
    type Producer = T::Producer;
    fn into_producer(self) -> T::Producer {
        T::producer(self.range)
    }
    fn opt_len(&self) -> Option<usize> {
        T::count(&self.range)
    }
}

impl<T: IndexedRangeInteger> IndexedParallelIterator for RangeIter<T> {
    fn len(&self) -> usize {
        T::count(&self.range).expect("an indexed range's length fits a usize")
    }
}

/// The producer of a 128-bit range, `(a..b).into_par_iter()` for `u128` or `i128`: a range
/// that may hold more values than a position count (`usize`) can number, so a position is a
/// run of `step` consecutive values (the last run may be shorter), with `step` the least that
/// makes the count fit (1, for any range of at most `usize::MAX` values). As in Rayon, such a
/// range is a parallel iterator but not an indexed one.
#[doc(hidden)]
#[derive(Debug, Clone)]
pub struct WideRange<T> {
    start: T,
    end: T,
    step: u128,
}

macro_rules! wide_range_impls {
    ($($t:ty),*) => {$(
        impl WideRange<$t> {
            /// The values left, counted in `u128` (the difference of two `i128`s fits there).
            fn values(&self) -> u128 {
                if self.start < self.end {
                    (self.end as u128).wrapping_sub(self.start as u128)
                } else {
                    0
                }
            }
            /// The value `positions` runs after the start (at most the end).
            fn after(&self, positions: usize) -> $t {
                let values = (positions as u128)
                    .saturating_mul(self.step)
                    .min(self.values());
                (self.start as u128).wrapping_add(values) as $t
            }
        }
        impl Producer for WideRange<$t> {
            type Item = $t;
            type Iter<'s> = Range<$t>;
            #[inline]
            fn len(&self) -> usize {
                self.values().div_ceil(self.step) as usize
            }
            fn split_at(self, mid: usize) -> (Self, Self) {
                let m = self.after(mid);
                (
                    WideRange { start: self.start, end: m, step: self.step },
                    WideRange { start: m, end: self.end, step: self.step },
                )
            }
            #[inline]
            fn take(&mut self, n: usize) -> Range<$t> {
                let start = self.start;
                self.start = self.after(n);
                start..self.start
            }
            fn exact(&self) -> bool {
                self.step == 1
            }
        }
        impl RangeInteger for $t {
            type Producer = WideRange<$t>;
            fn producer(range: Range<$t>) -> WideRange<$t> {
                let mut wide = WideRange { start: range.start, end: range.end, step: 1 };
                wide.step = wide.values().div_ceil(usize::MAX as u128).max(1);
                wide
            }
            fn count(range: &Range<$t>) -> Option<usize> {
                let wide = WideRange { start: range.start, end: range.end, step: 1 };
                usize::try_from(wide.values()).ok()
            }
        }
    )*};
}
wide_range_impls!(u128, i128);

/// One impl for every integer type (those `RangeIter` is a parallel iterator of), as Rayon has
/// it: so `(0..n).into_par_iter().method()` compiles before `n`'s type is inferred.
impl<T: RangeInteger> super::IntoParallelIterator for Range<T> {
    type Item = T;
    type Iter = RangeIter<T>;
    fn into_par_iter(self) -> RangeIter<T> {
        RangeIter { range: self }
    }
}

/// `a..=b` is `a..b` followed by `b` (when not empty), so `..=MAX` needs no wider type. One
/// impl for every integer type, as for `Range`.
impl<T> super::IntoParallelIterator for std::ops::RangeInclusive<T>
where
    T: RangeInteger + PartialOrd,
{
    type Item = T;
    type Iter = super::Chain<RangeIter<T>, super::gen::RepeatN<T>>;
    fn into_par_iter(self) -> Self::Iter {
        let (a, b) = self.clone().into_inner();
        let (end, last) = if self.is_empty() { (a, 0) } else { (b, 1) };
        super::Chain::new(RangeIter { range: a..end }, super::gen::repeat_n(b, last))
    }
}

/// A parallel iterator over `&T` of a slice, from `par_iter()`.
///
/// ```
/// use threadlab::prelude::*;
/// let v = vec![1, 2, 3];
/// assert_eq!(v.par_iter().max(), Some(&3));
/// ```
#[derive(Debug)]
pub struct Iter<'a, T> {
    slice: &'a [T],
}

impl<'a, T: Sync> Producer for Iter<'a, T> {
    type Item = &'a T;
    type Iter<'s>
        = std::slice::Iter<'a, T>
    where
        Self: 's;
    #[inline]
    fn len(&self) -> usize {
        self.slice.len()
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let (l, r) = self.slice.split_at(mid);
        (Iter { slice: l }, Iter { slice: r })
    }
    #[inline]
    fn take(&mut self, n: usize) -> std::slice::Iter<'a, T> {
        let (head, rest) = self.slice.split_at(n);
        self.slice = rest;
        head.iter()
    }
}

impl<'a, T: Sync> ParallelIterator for Iter<'a, T> {
    type Item = &'a T;
    type Producer = Self;
    fn into_producer(self) -> Self {
        self
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.slice.len())
    }
}
impl<T: Sync> IndexedParallelIterator for Iter<'_, T> {
    fn len(&self) -> usize {
        self.slice.len()
    }
}

/// A parallel iterator over `&mut T` of a slice, from `par_iter_mut()`.
///
/// ```
/// use threadlab::prelude::*;
/// let mut v = vec![1, 2, 3];
/// v.par_iter_mut().for_each(|x| *x *= 10);
/// assert_eq!(v, [10, 20, 30]);
/// ```
#[derive(Debug)]
pub struct IterMut<'a, T> {
    slice: &'a mut [T],
}

impl<'a, T: Send> Producer for IterMut<'a, T> {
    type Item = &'a mut T;
    type Iter<'s>
        = std::slice::IterMut<'a, T>
    where
        Self: 's;
    #[inline]
    fn len(&self) -> usize {
        self.slice.len()
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let (l, r) = self.slice.split_at_mut(mid);
        (IterMut { slice: l }, IterMut { slice: r })
    }
    #[inline]
    fn take(&mut self, n: usize) -> std::slice::IterMut<'a, T> {
        let (head, rest) = std::mem::take(&mut self.slice).split_at_mut(n);
        self.slice = rest;
        head.iter_mut()
    }
}

impl<'a, T: Send> ParallelIterator for IterMut<'a, T> {
    type Item = &'a mut T;
    type Producer = Self;
    fn into_producer(self) -> Self {
        self
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.slice.len())
    }
}
impl<T: Send> IndexedParallelIterator for IterMut<'_, T> {
    fn len(&self) -> usize {
        self.slice.len()
    }
}

/// A copy of the view (not of the elements).
impl<T> Clone for Iter<'_, T> {
    fn clone(&self) -> Self {
        Iter { slice: self.slice }
    }
}

impl<'a, T: Sync + 'a> super::IntoParallelIterator for &'a [T] {
    type Item = &'a T;
    type Iter = Iter<'a, T>;
    fn into_par_iter(self) -> Iter<'a, T> {
        Iter { slice: self }
    }
}

impl<'a, T: Sync + 'a> super::IntoParallelIterator for &'a Vec<T> {
    type Item = &'a T;
    type Iter = Iter<'a, T>;
    fn into_par_iter(self) -> Iter<'a, T> {
        Iter { slice: self }
    }
}

impl<'a, T: Send + 'a> super::IntoParallelIterator for &'a mut [T] {
    type Item = &'a mut T;
    type Iter = IterMut<'a, T>;
    fn into_par_iter(self) -> IterMut<'a, T> {
        IterMut { slice: self }
    }
}

impl<'a, T: Send + 'a> super::IntoParallelIterator for &'a mut Vec<T> {
    type Item = &'a mut T;
    type Iter = IterMut<'a, T>;
    fn into_par_iter(self) -> IterMut<'a, T> {
        IterMut { slice: self }
    }
}

/// An array by reference, as its slice (so `a.zip(&[1, 2])` and `(&x, &y).into_par_iter()` take
/// arrays, as Rayon's do).
impl<'a, T: Sync + 'a, const N: usize> super::IntoParallelIterator for &'a [T; N] {
    type Item = &'a T;
    type Iter = Iter<'a, T>;
    fn into_par_iter(self) -> Iter<'a, T> {
        Iter { slice: self }
    }
}

impl<'a, T: Send + 'a, const N: usize> super::IntoParallelIterator for &'a mut [T; N] {
    type Item = &'a mut T;
    type Iter = IterMut<'a, T>;
    fn into_par_iter(self) -> IterMut<'a, T> {
        IterMut { slice: self }
    }
}

/// Chunked parallel iteration over a shared slice (and so a `Vec`, an array).
///
/// ```
/// use threadlab::prelude::*;
/// assert_eq!([1, 2, 3].par_chunks(2).count(), 2);
/// ```
pub trait ParallelSlice<T: Sync> {
    /// The slice itself.
    #[doc(hidden)]
    fn as_par_slice(&self) -> &[T];

    /// Consecutive chunks of `size` elements, the last maybe shorter.
    ///
    /// # Panics
    /// If `size` is 0.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!([1, 2, 3].par_chunks(2).map(|c| c.len()).collect::<Vec<_>>(), [2, 1]);
    /// ```
    fn par_chunks(&self, size: usize) -> Chunks<'_, T>;

    /// The windows of `size` consecutive elements (`slice::windows`).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!([1, 2, 3].par_windows(2).map(|w| w[0] * w[1]).sum::<i32>(), 8);
    /// ```
    fn par_windows(&self, size: usize) -> IntoIter<&[T]> {
        IntoIter::gather(self.as_par_slice().windows(size))
    }

    /// The windows of `N` consecutive elements as arrays (`slice::array_windows`).
    ///
    /// # Panics
    /// If `N` is 0.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let v = [1, 2, 3, 4];
    /// let sums: Vec<i32> = v.par_array_windows().map(|[a, b]| a + b).collect();
    /// assert_eq!(sums, [3, 5, 7]);
    /// ```
    fn par_array_windows<const N: usize>(&self) -> IntoIter<&[T; N]> {
        assert!(N > 0, "par_array_windows: N must be at least 1");
        IntoIter::gather(
            self.as_par_slice()
                .windows(N)
                .map(|w| <&[T; N]>::try_from(w).expect("a window of N elements")),
        )
    }

    /// Chunks of exactly `size` elements; the remainder is left out (`slice::chunks_exact`).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!([1, 2, 3].par_chunks_exact(2).count(), 1);
    /// ```
    fn par_chunks_exact(&self, size: usize) -> ChunksExact<'_, T> {
        ChunksExact::new(self.as_par_slice(), size)
    }

    /// Chunks of `size` from the end, the last maybe shorter (`slice::rchunks`).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!([1, 2, 3].par_rchunks(2).collect::<Vec<_>>(), [&[2, 3][..], &[1]]);
    /// ```
    fn par_rchunks(&self, size: usize) -> IntoIter<&[T]> {
        IntoIter::gather(self.as_par_slice().rchunks(size))
    }

    /// Chunks of exactly `size` from the end (`slice::rchunks_exact`).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!([1, 2, 3].par_rchunks_exact(2).collect::<Vec<_>>(), [&[2, 3][..]]);
    /// ```
    fn par_rchunks_exact(&self, size: usize) -> RChunksExact<'_, T> {
        RChunksExact::new(self.as_par_slice(), size)
    }

    /// The parts between elements for which `sep` holds (`slice::split`).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!([1, 0, 2, 3].par_split(|x| *x == 0).count(), 2);
    /// ```
    fn par_split<P: Fn(&T) -> bool + Sync + Send>(&self, sep: P) -> IntoIter<&[T]> {
        IntoIter::gather(self.as_par_slice().split(sep))
    }

    /// The parts, each ended by its separator (`slice::split_inclusive`).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!([1, 0, 2].par_split_inclusive(|x| *x == 0).collect::<Vec<_>>(), [&[1, 0][..], &[2]]);
    /// ```
    fn par_split_inclusive<P: Fn(&T) -> bool + Sync + Send>(&self, sep: P) -> IntoIter<&[T]> {
        IntoIter::gather(self.as_par_slice().split_inclusive(sep))
    }

    /// Runs of consecutive elements for which `same` holds pairwise (`slice::chunk_by`).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!([1, 1, 2, 3, 3].par_chunk_by(|a, b| a == b).count(), 3);
    /// ```
    fn par_chunk_by<F: Fn(&T, &T) -> bool + Sync + Send>(&self, same: F) -> IntoIter<&[T]> {
        IntoIter::gather(self.as_par_slice().chunk_by(same))
    }
}

impl<T: Sync> ParallelSlice<T> for [T] {
    fn as_par_slice(&self) -> &[T] {
        self
    }
    fn par_chunks(&self, size: usize) -> Chunks<'_, T> {
        assert!(size > 0, "chunk_size must not be zero");
        Chunks::new(self, size)
    }
}

/// Chunked parallel iteration over a mutable slice, and the parallel sorts (see
/// `crate::iter::sort`).
///
/// ```
/// use threadlab::prelude::*;
/// let mut v = vec![3, 1, 2];
/// v.par_sort();
/// assert_eq!(v, [1, 2, 3]);
/// ```
pub trait ParallelSliceMut<T: Send> {
    /// The slice itself.
    #[doc(hidden)]
    fn as_par_slice_mut(&mut self) -> &mut [T];

    /// Consecutive mutable chunks of `size` elements, the last maybe shorter.
    ///
    /// # Panics
    /// If `size` is 0.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let mut v = [1, 2, 3];
    /// v.par_chunks_mut(2).for_each(|c| c.reverse());
    /// assert_eq!(v, [2, 1, 3]);
    /// ```
    fn par_chunks_mut(&mut self, size: usize) -> ChunksMut<'_, T> {
        assert!(size > 0, "chunk_size must not be zero");
        ChunksMut::new(self.as_par_slice_mut(), size)
    }

    /// Mutable chunks of exactly `size` elements (`slice::chunks_exact_mut`).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let mut v = [1, 2, 3];
    /// v.par_chunks_exact_mut(2).for_each(|c| c.swap(0, 1));
    /// assert_eq!(v, [2, 1, 3]);
    /// ```
    fn par_chunks_exact_mut(&mut self, size: usize) -> ChunksExactMut<'_, T> {
        ChunksExactMut::new(self.as_par_slice_mut(), size)
    }

    /// Mutable chunks of `size` from the end (`slice::rchunks_mut`).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let mut v = [1, 2, 3];
    /// v.par_rchunks_mut(2).for_each(|c| c[0] = 0);
    /// assert_eq!(v, [0, 0, 3]);
    /// ```
    fn par_rchunks_mut(&mut self, size: usize) -> IntoIter<&mut [T]> {
        IntoIter::gather(self.as_par_slice_mut().rchunks_mut(size))
    }

    /// Mutable chunks of exactly `size` from the end (`slice::rchunks_exact_mut`).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let mut v = [1, 2, 3];
    /// v.par_rchunks_exact_mut(2).for_each(|c| c[0] = 0);
    /// assert_eq!(v, [1, 0, 3]);
    /// ```
    fn par_rchunks_exact_mut(&mut self, size: usize) -> RChunksExactMut<'_, T> {
        RChunksExactMut::new(self.as_par_slice_mut(), size)
    }

    /// The mutable parts between separators (`slice::split_mut`).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let mut v = [1, 0, 2];
    /// v.par_split_mut(|x| *x == 0).for_each(|p| p.fill(7));
    /// assert_eq!(v, [7, 0, 7]);
    /// ```
    fn par_split_mut<P: Fn(&T) -> bool + Sync + Send>(&mut self, sep: P) -> IntoIter<&mut [T]> {
        IntoIter::gather(self.as_par_slice_mut().split_mut(sep))
    }

    /// The mutable parts, each ended by its separator (`slice::split_inclusive_mut`).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let mut v = [1, 0, 2, 0];
    /// v.par_split_inclusive_mut(|x| *x == 0).for_each(|p| p[0] += 10);
    /// assert_eq!(v, [11, 0, 12, 0]);
    /// ```
    fn par_split_inclusive_mut<P: Fn(&T) -> bool + Sync + Send>(
        &mut self,
        sep: P,
    ) -> IntoIter<&mut [T]> {
        IntoIter::gather(self.as_par_slice_mut().split_inclusive_mut(sep))
    }

    /// Mutable runs of consecutive elements for which `same` holds pairwise.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let mut v = [1, 1, 2];
    /// v.par_chunk_by_mut(|a, b| a == b).for_each(|r| r.fill(r.len() as i32));
    /// assert_eq!(v, [2, 2, 1]);
    /// ```
    fn par_chunk_by_mut<F: Fn(&T, &T) -> bool + Sync + Send>(
        &mut self,
        same: F,
    ) -> IntoIter<&mut [T]> {
        IntoIter::gather(self.as_par_slice_mut().chunk_by_mut(same))
    }

    /// Sorts stably (a parallel merge sort; see `crate::iter::sort`).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let mut v = vec![(1, 'b'), (0, 'x'), (1, 'a')];
    /// v.par_sort_by_key(|p| p.0);
    /// assert_eq!(v, [(0, 'x'), (1, 'b'), (1, 'a')]);
    /// ```
    fn par_sort(&mut self)
    where
        T: Ord,
    {
        super::sort::merge_sort(self.as_par_slice_mut(), &T::lt);
    }

    /// Sorts stably by `compare`.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let mut v = vec![1, 3, 2];
    /// v.par_sort_by(|a, b| b.cmp(a));
    /// assert_eq!(v, [3, 2, 1]);
    /// ```
    fn par_sort_by<F>(&mut self, compare: F)
    where
        F: Fn(&T, &T) -> std::cmp::Ordering + Sync,
    {
        super::sort::merge_sort(self.as_par_slice_mut(), &|a: &T, b: &T| {
            compare(a, b) == std::cmp::Ordering::Less
        });
    }

    /// Sorts stably by the key `f` gives (computed at every comparison).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let mut v = vec![-3i32, 1, -2];
    /// v.par_sort_by_key(|x| x.abs());
    /// assert_eq!(v, [1, -2, -3]);
    /// ```
    fn par_sort_by_key<K: Ord, F>(&mut self, f: F)
    where
        F: Fn(&T) -> K + Sync,
    {
        super::sort::merge_sort(self.as_par_slice_mut(), &|a: &T, b: &T| f(a) < f(b));
    }

    /// Sorts stably by the key `f` gives, computing each element's key once (in parallel)
    /// and then sorting the (key, index) pairs, as `slice::sort_by_cached_key` does.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let mut v = vec!["ccc", "a", "bb", "b"];
    /// v.par_sort_by_cached_key(|s| s.len());
    /// assert_eq!(v, ["a", "b", "bb", "ccc"]);
    /// ```
    fn par_sort_by_cached_key<K, F>(&mut self, f: F)
    where
        K: Ord + Send,
        F: Fn(&T) -> K + Sync,
    {
        let v = self.as_par_slice_mut();
        // Through `&mut` (each element reached by one worker), so `T` need not be `Sync`.
        let mut keyed: Vec<(K, usize)> = {
            let each: &mut [T] = v;
            IterMut { slice: each }
                .enumerate()
                .map(|(i, x)| (f(x), i))
                .collect()
        };
        // (key, index) pairs are distinct, so the unstable sort keeps equal keys in order.
        super::sort::quick_sort(&mut keyed, &|a: &(K, usize), b: &(K, usize)| a < b);
        // Apply the permutation in place, following each cycle (as `std` does).
        for i in 0..v.len() {
            let mut index = keyed[i].1;
            while index < i {
                index = keyed[index].1;
            }
            keyed[i].1 = index;
            v.swap(i, index);
        }
    }

    /// Sorts unstably by the key `f` gives (computed at every comparison).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let mut v = vec![-3i32, 1, -2];
    /// v.par_sort_unstable_by_key(|x| x.abs());
    /// assert_eq!(v, [1, -2, -3]);
    /// ```
    fn par_sort_unstable_by_key<K: Ord, F>(&mut self, f: F)
    where
        F: Fn(&T) -> K + Sync,
    {
        super::sort::quick_sort(self.as_par_slice_mut(), &|a: &T, b: &T| f(a) < f(b));
    }

    /// Sorts without keeping the order of equal elements (a parallel pattern-defeating
    /// quicksort; see `crate::iter::sort`).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let mut v: Vec<u64> = (0..1000).rev().collect();
    /// v.par_sort_unstable();
    /// assert!(v.windows(2).all(|w| w[0] <= w[1]));
    /// ```
    fn par_sort_unstable(&mut self)
    where
        T: Ord,
    {
        super::sort::quick_sort(self.as_par_slice_mut(), &T::lt);
    }

    /// Sorts unstably by `compare`.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let mut v = vec![1, 3, 2];
    /// v.par_sort_unstable_by(|a, b| b.cmp(a));
    /// assert_eq!(v, [3, 2, 1]);
    /// ```
    fn par_sort_unstable_by<F>(&mut self, compare: F)
    where
        F: Fn(&T, &T) -> std::cmp::Ordering + Sync,
    {
        super::sort::quick_sort(self.as_par_slice_mut(), &|a: &T, b: &T| {
            compare(a, b) == std::cmp::Ordering::Less
        });
    }
}

impl<T: Send> ParallelSliceMut<T> for [T] {
    fn as_par_slice_mut(&mut self) -> &mut [T] {
        self
    }
}

/// `Range<char>` and `RangeInclusive<char>`: the chars of the range (surrogates skipped, as
/// `std`'s iterator skips them), gathered first.
impl super::IntoParallelIterator for Range<char> {
    type Item = char;
    type Iter = IntoIter<char>;
    fn into_par_iter(self) -> IntoIter<char> {
        IntoIter::gather(self)
    }
}

impl super::IntoParallelIterator for std::ops::RangeInclusive<char> {
    type Item = char;
    type Iter = IntoIter<char>;
    fn into_par_iter(self) -> IntoIter<char> {
        IntoIter::gather(self)
    }
}
