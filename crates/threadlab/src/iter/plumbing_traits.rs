//! Rayon's plumbing traits, under their names and with their meaning (see the public module
//! [`plumbing`](super::plumbing), which re-exports them and documents how threadlab runs them).
//! They name nothing else of the iterators, so the traits' methods in `mod.rs` can name them.

/// A source of items that can be split at any index: the producer of an indexed parallel
/// iterator (Rayon's `Producer`). [`from_producer`](crate::iter::plumbing::from_producer) makes a parallel iterator of one;
/// [`IndexedParallelIterator::with_producer`](crate::iter::IndexedParallelIterator::with_producer) hands an iterator's own to a
/// [`ProducerCallback`].
pub trait Producer: Send + Sized {
    /// The items.
    type Item;
    /// The sequential iterator over all the items, from both ends.
    type IntoIter: Iterator<Item = Self::Item> + DoubleEndedIterator + ExactSizeIterator;
    /// The items, sequentially.
    fn into_iter(self) -> Self::IntoIter;
    /// The fewest items a piece split off should have (`with_min_len`).
    fn min_len(&self) -> usize {
        1
    }
    /// The most items a piece should have before it is split (`with_max_len`).
    fn max_len(&self) -> usize {
        usize::MAX
    }
    /// The first `index` items and the rest.
    fn split_at(self, index: usize) -> (Self, Self);
    /// Folds every item into `folder` (by default, through [`Producer::into_iter`]).
    fn fold_with<F: Folder<Self::Item>>(self, folder: F) -> F {
        folder.consume_iter(self.into_iter())
    }
}

/// What receives an indexed parallel iterator's producer
/// ([`IndexedParallelIterator::with_producer`](crate::iter::IndexedParallelIterator::with_producer)), for code that wants the producer itself:
/// splitting it by hand, iterating a piece of it.
///
/// ```
/// use threadlab::iter::plumbing::{Producer, ProducerCallback};
/// use threadlab::prelude::*;
///
/// /// The first `n` items, split off the producer.
/// struct Head(usize);
///
/// impl<T> ProducerCallback<T> for Head {
///     type Output = Vec<T>;
///     fn callback<P: Producer<Item = T>>(self, producer: P) -> Vec<T> {
///         producer.split_at(self.0).0.into_iter().collect()
///     }
/// }
///
/// assert_eq!((0..10).into_par_iter().map(|x| x * x).with_producer(Head(3)), [0, 1, 4]);
/// ```
pub trait ProducerCallback<T> {
    /// What the callback returns.
    type Output;
    /// Called with the producer.
    fn callback<P: Producer<Item = T>>(self, producer: P) -> Self::Output;
}

/// A source that can only split itself roughly in two, not at an index (Rayon's
/// `UnindexedProducer`): a tree, a string at its spaces, a range too long to count.
/// [`from_unindexed`](crate::iter::plumbing::from_unindexed) makes a parallel iterator of one.
pub trait UnindexedProducer: Send + Sized {
    /// The items.
    type Item;
    /// Splits off a second piece, if this one is worth splitting.
    fn split(self) -> (Self, Option<Self>);
    /// Folds every item into `folder`.
    fn fold_with<F: Folder<Self::Item>>(self, folder: F) -> F;
}

/// Folds the items of one piece sequentially (Rayon's `Folder`).
pub trait Folder<Item>: Sized {
    /// What folding gives.
    type Result;
    /// Folds one item.
    fn consume(self, item: Item) -> Self;
    /// Folds items until the iterator ends or the folder is [full](Folder::full).
    fn consume_iter<I: IntoIterator<Item = Item>>(mut self, iter: I) -> Self {
        for item in iter {
            self = self.consume(item);
            if self.full() {
                break;
            }
        }
        self
    }
    /// The result.
    fn complete(self) -> Self::Result;
    /// True when no more items can change the result.
    fn full(&self) -> bool;
}

/// Combines the results of two neighbouring pieces, `left` before `right` (Rayon's `Reducer`).
pub trait Reducer<Result> {
    /// The combination.
    fn reduce(self, left: Result, right: Result) -> Result;
}

/// What a terminal operation folds an indexed iterator into: split at indices alongside the
/// producer, each piece folded by a [`Folder`] (Rayon's `Consumer`).
pub trait Consumer<Item>: Send + Sized {
    /// The folder of one piece.
    type Folder: Folder<Item, Result = Self::Result>;
    /// How two pieces' results combine.
    type Reducer: Reducer<Self::Result>;
    /// The result.
    type Result: Send;
    /// The consumers of the first `index` items and of the rest, and their reducer.
    fn split_at(self, index: usize) -> (Self, Self, Self::Reducer);
    /// The folder of this piece.
    fn into_folder(self) -> Self::Folder;
    /// True when no more items can change the result.
    fn full(&self) -> bool;
}

/// A consumer that can also be split without an index, for iterators whose pieces' lengths are
/// not known (Rayon's `UnindexedConsumer`).
pub trait UnindexedConsumer<I>: Consumer<I> {
    /// A consumer for a piece to the left of whatever this one consumes next.
    fn split_off_left(&self) -> Self;
    /// How pieces' results combine.
    fn to_reducer(&self) -> Self::Reducer;
}
