//! Owned sources: a `Vec<T>` by value, and through it every `std` collection, `Option`, a
//! sequential iterator (`par_bridge`) and the sources that are found by a sequential scan
//! (`iter::split`, `walk_tree_*`, the string and slice splits).
//!
//! The producer is a `VecDeque<T>` (a `Vec` turns into one without copying): a block drains
//! the front, a split moves the second half into a new buffer (`VecDeque::split_off`), which
//! happens only at a heartbeat, a few times per run. Items a panicking piece never reached
//! are dropped with its buffer, exactly once.
//!
//! Collections without positions (`HashMap`, `BTreeSet`, `LinkedList`, …) are first moved
//! (or, by reference, their references are collected) into such a buffer in one sequential
//! pass, as Rayon does for the hash maps: the pass is a copy of pointers, far cheaper than any
//! body worth running in parallel.

use super::drive::Producer;
use super::{IndexedParallelIterator, IntoParallelIterator, ParallelIterator};
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet, LinkedList, VecDeque};
use std::hash::{BuildHasher, Hash};

/// A parallel iterator that owns its items, from `vec.into_par_iter()` (and every `std`
/// collection by value or by reference, `Option`, `par_bridge`, the string splits).
///
/// ```
/// use threadlab::prelude::*;
/// let v = vec![String::from("a"), String::from("bc")];
/// let lens: Vec<usize> = v.into_par_iter().map(|s| s.len()).collect();
/// assert_eq!(lens, [1, 2]);
/// ```
#[derive(Debug, Clone)]
pub struct IntoIter<T> {
    items: VecDeque<T>,
}

impl<T> From<Vec<T>> for IntoIter<T> {
    fn from(v: Vec<T>) -> Self {
        IntoIter { items: v.into() }
    }
}

impl<T> IntoIter<T> {
    /// The items of a sequential iterator, in its order.
    pub(crate) fn gather(it: impl IntoIterator<Item = T>) -> Self {
        IntoIter {
            items: it.into_iter().collect(),
        }
    }
}

impl<T: Send> Producer for IntoIter<T> {
    type Item = T;
    type Iter<'s>
        = std::collections::vec_deque::Drain<'s, T>
    where
        Self: 's;
    #[inline]
    fn len(&self) -> usize {
        self.items.len()
    }
    fn split_at(mut self, mid: usize) -> (Self, Self) {
        let right = self.items.split_off(mid);
        (self, IntoIter { items: right })
    }
    #[inline]
    fn take(&mut self, n: usize) -> Self::Iter<'_> {
        self.items.drain(..n)
    }
}

impl<T: Send> ParallelIterator for IntoIter<T> {
    type Item = T;
    type Producer = Self;
    fn into_producer(self) -> Self {
        self
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.items.len())
    }
}
impl<T: Send> IndexedParallelIterator for IntoIter<T> {
    fn len(&self) -> usize {
        self.items.len()
    }
}

impl<T: Send> IntoParallelIterator for Vec<T> {
    type Item = T;
    type Iter = IntoIter<T>;
    fn into_par_iter(self) -> IntoIter<T> {
        self.into()
    }
}

impl<T: Send, const N: usize> IntoParallelIterator for [T; N] {
    type Item = T;
    type Iter = IntoIter<T>;
    fn into_par_iter(self) -> IntoIter<T> {
        Vec::from(self).into()
    }
}

impl<T: Send> IntoParallelIterator for VecDeque<T> {
    type Item = T;
    type Iter = IntoIter<T>;
    fn into_par_iter(self) -> IntoIter<T> {
        IntoIter { items: self }
    }
}

impl<T: Send> IntoParallelIterator for Option<T> {
    type Item = T;
    type Iter = IntoIter<T>;
    fn into_par_iter(self) -> IntoIter<T> {
        IntoIter::gather(self)
    }
}

impl<'a, T: Sync + 'a> IntoParallelIterator for &'a Option<T> {
    type Item = &'a T;
    type Iter = IntoIter<&'a T>;
    fn into_par_iter(self) -> IntoIter<&'a T> {
        IntoIter::gather(self)
    }
}

impl<'a, T: Send + 'a, E> IntoParallelIterator for &'a mut Result<T, E> {
    type Item = &'a mut T;
    type Iter = IntoIter<&'a mut T>;
    fn into_par_iter(self) -> IntoIter<&'a mut T> {
        IntoIter::gather(self)
    }
}

impl<T: Send, E> IntoParallelIterator for Result<T, E> {
    type Item = T;
    type Iter = IntoIter<T>;
    fn into_par_iter(self) -> IntoIter<T> {
        IntoIter::gather(self.ok())
    }
}

/// By value and by shared reference, through a buffer of the items or their references: all
/// that sets and heaps have (they have no mutable iteration).
macro_rules! gathered_ro {
    ($([$($g:tt)*] $ty:ty => $item:ty, $ref_item:ty;)*) => {$(
        impl<$($g)*> IntoParallelIterator for $ty where $item: Send {
            type Item = $item;
            type Iter = IntoIter<$item>;
            fn into_par_iter(self) -> IntoIter<$item> {
                IntoIter::gather(self)
            }
        }
        impl<'a, $($g)*> IntoParallelIterator for &'a $ty where $ref_item: Send {
            type Item = $ref_item;
            type Iter = IntoIter<$ref_item>;
            fn into_par_iter(self) -> IntoIter<$ref_item> {
                IntoIter::gather(self)
            }
        }
    )*};
}

/// By value and by (mutable) reference, through a buffer of the items or their references: the
/// two impls of `gathered_ro` and the one by mutable reference.
macro_rules! gathered {
    ($([$($g:tt)*] $ty:ty => $item:ty, $ref_item:ty, $mut_item:ty;)*) => {$(
        gathered_ro! { [$($g)*] $ty => $item, $ref_item; }
        impl<'a, $($g)*> IntoParallelIterator for &'a mut $ty where $mut_item: Send {
            type Item = $mut_item;
            type Iter = IntoIter<$mut_item>;
            fn into_par_iter(self) -> IntoIter<$mut_item> {
                IntoIter::gather(self)
            }
        }
    )*};
}

gathered! {
    [T] LinkedList<T> => T, &'a T, &'a mut T;
    [K: Hash + Eq, V, S: BuildHasher] HashMap<K, V, S> => (K, V), (&'a K, &'a V), (&'a K, &'a mut V);
    [K: Ord, V] BTreeMap<K, V> => (K, V), (&'a K, &'a V), (&'a K, &'a mut V);
}

gathered_ro! {
    [T: Hash + Eq, S: BuildHasher] HashSet<T, S> => T, &'a T;
    [T: Ord] BTreeSet<T> => T, &'a T;
    [T: Ord] BinaryHeap<T> => T, &'a T;
}

impl<'a, T: Sync + 'a> IntoParallelIterator for &'a VecDeque<T> {
    type Item = &'a T;
    type Iter = super::Chain<super::Iter<'a, T>, super::Iter<'a, T>>;
    fn into_par_iter(self) -> Self::Iter {
        let (a, b) = self.as_slices();
        super::Chain::new(a.into_par_iter(), b.into_par_iter())
    }
}

impl<'a, T: Send + 'a> IntoParallelIterator for &'a mut VecDeque<T> {
    type Item = &'a mut T;
    type Iter = super::Chain<super::IterMut<'a, T>, super::IterMut<'a, T>>;
    fn into_par_iter(self) -> Self::Iter {
        let (a, b) = self.as_mut_slices();
        super::Chain::new(a.into_par_iter(), b.into_par_iter())
    }
}

/// `iter.par_bridge()`: a sequential iterator as a parallel one.
///
/// ```
/// use threadlab::prelude::*;
/// let squares: Vec<u32> = (0u32..5).map(|x| x * x).par_bridge().map(|x| x + 1).collect();
/// assert_eq!(squares.len(), 5);
/// ```
pub trait ParallelBridge: Sized {
    /// The item type.
    type Item: Send;
    /// Runs the rest of the pipeline in parallel over this iterator's items. The items are
    /// drawn from the iterator in one sequential pass first (Rayon's bridge draws them while
    /// the pipeline runs); like Rayon's, the bridge promises no order.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!(vec![1, 2, 3].into_iter().par_bridge().sum::<i32>(), 6);
    /// ```
    fn par_bridge(self) -> IntoIter<Self::Item>;
}

impl<I: Iterator + Send> ParallelBridge for I
where
    I::Item: Send,
{
    type Item = I::Item;
    fn par_bridge(self) -> IntoIter<I::Item> {
        IntoIter::gather(self)
    }
}

/// `par_drain(range)`: removes a range of a `Vec`, `VecDeque` or `String` and yields its
/// items in order (Rayon's `ParallelDrainRange`). The range is removed at once, whether or
/// not the iterator is run, as Rayon's is once its iterator is dropped.
///
/// ```
/// use threadlab::prelude::*;
/// let mut v: Vec<u32> = (0..10).collect();
/// let sum: u32 = v.par_drain(2..5).sum();
/// assert_eq!((sum, v.len()), (9, 7));
/// ```
pub trait ParallelDrainRange<Idx = usize> {
    /// The items.
    type Item: Send;
    /// Removes `range` and yields its items.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let mut s = String::from("héllo");
    /// assert_eq!(s.par_drain(..3).collect::<String>(), "hé");
    /// assert_eq!(s, "llo");
    /// ```
    fn par_drain<R: std::ops::RangeBounds<Idx>>(self, range: R) -> IntoIter<Self::Item>;
}

impl<T: Send> ParallelDrainRange for &mut Vec<T> {
    type Item = T;
    fn par_drain<R: std::ops::RangeBounds<usize>>(self, range: R) -> IntoIter<T> {
        IntoIter::gather(self.drain(range))
    }
}

impl<T: Send> ParallelDrainRange for &mut VecDeque<T> {
    type Item = T;
    fn par_drain<R: std::ops::RangeBounds<usize>>(self, range: R) -> IntoIter<T> {
        IntoIter::gather(self.drain(range))
    }
}

impl ParallelDrainRange for &mut String {
    type Item = char;
    fn par_drain<R: std::ops::RangeBounds<usize>>(self, range: R) -> IntoIter<char> {
        IntoIter::gather(self.drain(range))
    }
}

/// `par_drain()`: empties a `HashMap`, `HashSet` or `BinaryHeap` and yields its items
/// (Rayon's `ParallelDrainFull`).
///
/// ```
/// use threadlab::prelude::*;
/// let mut h: std::collections::HashSet<u8> = (0..5).collect();
/// assert_eq!(h.par_drain().count(), 5);
/// assert!(h.is_empty());
/// ```
pub trait ParallelDrainFull {
    /// The items.
    type Item: Send;
    /// Removes every item and yields them.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let mut heap: std::collections::BinaryHeap<u8> = [3, 1].into();
    /// assert_eq!(heap.par_drain().sum::<u8>(), 4);
    /// ```
    fn par_drain(self) -> IntoIter<Self::Item>;
}

impl<K: Send, V: Send, S> ParallelDrainFull for &mut HashMap<K, V, S> {
    type Item = (K, V);
    fn par_drain(self) -> IntoIter<(K, V)> {
        IntoIter::gather(self.drain())
    }
}

impl<T: Send, S> ParallelDrainFull for &mut HashSet<T, S> {
    type Item = T;
    fn par_drain(self) -> IntoIter<T> {
        IntoIter::gather(self.drain())
    }
}

impl<T: Send> ParallelDrainFull for &mut BinaryHeap<T> {
    type Item = T;
    fn par_drain(self) -> IntoIter<T> {
        IntoIter::gather(self.drain())
    }
}

impl<'a, T: Sync + 'a, E> IntoParallelIterator for &'a Result<T, E> {
    type Item = &'a T;
    type Iter = IntoIter<&'a T>;
    fn into_par_iter(self) -> IntoIter<&'a T> {
        IntoIter::gather(self.as_ref().ok())
    }
}

impl<'a, T: Send + 'a> IntoParallelIterator for &'a mut Option<T> {
    type Item = &'a mut T;
    type Iter = IntoIter<&'a mut T>;
    fn into_par_iter(self) -> IntoIter<&'a mut T> {
        IntoIter::gather(self.as_mut())
    }
}
