//! Rayon's plumbing, under its names: the traits a source of one's own implements
//! ([`Producer`], [`UnindexedProducer`]), the consumers a terminal operation folds into
//! ([`Consumer`], [`UnindexedConsumer`], [`Folder`], [`Reducer`]), the callback that receives an
//! iterator's producer ([`ProducerCallback`], through
//! [`IndexedParallelIterator::with_producer`]), and the functions that run a producer into a
//! consumer ([`bridge`], [`bridge_producer_consumer`], [`bridge_unindexed`]).
//!
//! The traits and what they promise are Rayon's (Matsakis and Stone's producer/consumer design,
//! `rayon::iter::plumbing`): a producer is a splittable sequence of items; a consumer is split
//! alongside it, each piece folded by a [`Folder`] and the pieces' results combined by a
//! [`Reducer`], left before right. What runs them is threadlab's engine: a producer handed to
//! threadlab runs on one worker, block by block, and is split in half only when another worker
//! is idle (heartbeat scheduling; see [`iter`](super)); Rayon splits it into pieces up front.
//! The results are the same; the number of pieces, and so of folders, is not.
//!
//! A source of one's own: implement [`Producer`] (an indexed source: its items can be split at
//! any index) and turn it into a parallel iterator with [`from_producer`], or implement
//! [`UnindexedProducer`] (it can only split itself roughly in two) and use [`from_unindexed`].
//! (In Rayon a source implements `ParallelIterator`'s `drive_unindexed` itself; threadlab's
//! `ParallelIterator` hands its engine a producer instead, so the two functions stand for that.)
//!
//! ```
//! use threadlab::iter::plumbing::{from_producer, Producer};
//! use threadlab::prelude::*;
//!
//! /// The even numbers in `start..end` (`start` even).
//! struct Evens {
//!     start: u32,
//!     end: u32,
//! }
//!
//! impl Producer for Evens {
//!     type Item = u32;
//!     type IntoIter = std::iter::StepBy<std::ops::Range<u32>>;
//!     fn into_iter(self) -> Self::IntoIter {
//!         (self.start..self.end).step_by(2)
//!     }
//!     fn split_at(self, index: usize) -> (Self, Self) {
//!         let mid = (self.start + 2 * index as u32).min(self.end);
//!         (Evens { start: self.start, end: mid }, Evens { start: mid, end: self.end })
//!     }
//! }
//!
//! let evens = from_producer(5, Evens { start: 0, end: 10 });
//! assert_eq!(evens.len(), 5);
//! assert_eq!(evens.map(|x| x / 2).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
//! ```

use super::bridge::Indexed;
use super::drive;
use super::{IndexedParallelIterator, IntoIter, ParallelIterator};
use crate::pool::worker::WorkerThread;

pub use super::plumbing_traits::{
    Consumer, Folder, Producer, ProducerCallback, Reducer, UnindexedConsumer, UnindexedProducer,
};

/// Runs `par_iter` into `consumer` (Rayon's `bridge`): its producer, split as threadlab's engine
/// splits, each piece folded by a piece of the consumer.
///
/// ```
/// use threadlab::iter::plumbing::{bridge, Consumer, Folder, Reducer};
/// use threadlab::prelude::*;
///
/// /// Sums items, by pieces.
/// struct Sum;
/// struct Partial(u64);
/// struct Add;
/// impl Folder<u64> for Partial {
///     type Result = u64;
///     fn consume(self, x: u64) -> Self { Partial(self.0 + x) }
///     fn complete(self) -> u64 { self.0 }
///     fn full(&self) -> bool { false }
/// }
/// impl Reducer<u64> for Add {
///     fn reduce(self, a: u64, b: u64) -> u64 { a + b }
/// }
/// impl Consumer<u64> for Sum {
///     type Folder = Partial;
///     type Reducer = Add;
///     type Result = u64;
///     fn split_at(self, _index: usize) -> (Self, Self, Add) { (Sum, Sum, Add) }
///     fn into_folder(self) -> Partial { Partial(0) }
///     fn full(&self) -> bool { false }
/// }
///
/// assert_eq!(bridge((1..=100u64).into_par_iter(), Sum), 5050);
/// ```
pub fn bridge<I, C>(par_iter: I, consumer: C) -> C::Result
where
    I: IndexedParallelIterator,
    C: Consumer<I::Item>,
{
    par_iter.drive(consumer)
}

/// Runs a producer of `len` items into `consumer` (Rayon's `bridge_producer_consumer`).
///
/// ```
/// use threadlab::iter::plumbing::{bridge_producer_consumer, Consumer, Folder, Producer, Reducer};
///
/// /// The numbers `start..end`.
/// struct Span(u32, u32);
/// impl Producer for Span {
///     type Item = u32;
///     type IntoIter = std::ops::Range<u32>;
///     fn into_iter(self) -> std::ops::Range<u32> { self.0..self.1 }
///     fn split_at(self, i: usize) -> (Self, Self) {
///         let mid = self.0 + i as u32;
///         (Span(self.0, mid), Span(mid, self.1))
///     }
/// }
/// // A consumer that counts the items (see `bridge` for one written out).
/// struct Count;
/// struct Counted(usize);
/// impl Folder<u32> for Counted {
///     type Result = usize;
///     fn consume(self, _: u32) -> Self { Counted(self.0 + 1) }
///     fn complete(self) -> usize { self.0 }
///     fn full(&self) -> bool { false }
/// }
/// struct Plus;
/// impl Reducer<usize> for Plus {
///     fn reduce(self, a: usize, b: usize) -> usize { a + b }
/// }
/// impl Consumer<u32> for Count {
///     type Folder = Counted;
///     type Reducer = Plus;
///     type Result = usize;
///     fn split_at(self, _: usize) -> (Self, Self, Plus) { (Count, Count, Plus) }
///     fn into_folder(self) -> Counted { Counted(0) }
///     fn full(&self) -> bool { false }
/// }
/// assert_eq!(bridge_producer_consumer(5_000, Span(0, 5_000), Count), 5_000);
/// ```
pub fn bridge_producer_consumer<P, C>(len: usize, producer: P, consumer: C) -> C::Result
where
    P: Producer,
    C: Consumer<P::Item>,
{
    drive::drive(FromProducer::new(len, producer), Indexed::new(consumer))
}

/// Runs an unindexed producer into an unindexed consumer (Rayon's `bridge_unindexed`): the
/// producer is split in two while the pool's workers want work, a piece stolen by another
/// worker splitting again (Rayon's adaptive splitting), and every piece is folded on the
/// worker that runs it.
///
/// ```
/// use threadlab::iter::plumbing::{bridge_unindexed, UnindexedProducer, Folder};
/// use threadlab::prelude::*;
///
/// /// The numbers of a range, split in halves down to 1,000.
/// struct Halves(std::ops::Range<u64>);
/// impl UnindexedProducer for Halves {
///     type Item = u64;
///     fn split(self) -> (Self, Option<Self>) {
///         let r = self.0;
///         if r.end - r.start < 1_000 {
///             return (Halves(r), None);
///         }
///         let mid = r.start + (r.end - r.start) / 2;
///         (Halves(r.start..mid), Some(Halves(mid..r.end)))
///     }
///     fn fold_with<F: Folder<u64>>(self, folder: F) -> F {
///         folder.consume_iter(self.0)
///     }
/// }
///
/// let sum: u64 = threadlab::iter::plumbing::from_unindexed(Halves(0..100_000)).sum();
/// assert_eq!(sum, 4_999_950_000);
/// # let _ = bridge_unindexed::<Halves, threadlab::iter::plumbing::Unused>;
/// ```
pub fn bridge_unindexed<P, C>(producer: P, consumer: C) -> C::Result
where
    P: UnindexedProducer,
    C: UnindexedConsumer<P::Item>,
{
    drive::on_worker(|w| {
        let splits = w.registry().num_threads();
        unindexed(w, producer, consumer, splits)
    })
}

/// A consumer type that no program uses (for the `bridge_unindexed` example's type check).
#[doc(hidden)]
#[derive(Debug)]
pub enum Unused {}

impl<T> Folder<T> for Unused {
    type Result = ();
    fn consume(self, _: T) -> Self {
        self
    }
    fn complete(self) {}
    fn full(&self) -> bool {
        true
    }
}
impl Reducer<()> for Unused {
    fn reduce(self, _: (), _: ()) {}
}
impl<T> Consumer<T> for Unused {
    type Folder = Unused;
    type Reducer = Unused;
    type Result = ();
    fn split_at(self, _: usize) -> (Self, Self, Self) {
        match self {}
    }
    fn into_folder(self) -> Self {
        self
    }
    fn full(&self) -> bool {
        true
    }
}
impl<T> UnindexedConsumer<T> for Unused {
    fn split_off_left(&self) -> Self {
        match *self {}
    }
    fn to_reducer(&self) -> Self {
        match *self {}
    }
}

/// `bridge_unindexed` on worker `w`: splits while `splits` allows (halved at each level, reset
/// to the pool's size when a piece moved to another thread: Rayon's adaptive splitting), then
/// folds.
fn unindexed<P, C>(w: &WorkerThread, producer: P, consumer: C, splits: usize) -> C::Result
where
    P: UnindexedProducer,
    C: UnindexedConsumer<P::Item>,
{
    if consumer.full() {
        return consumer.into_folder().complete();
    }
    if splits == 0 {
        return producer.fold_with(consumer.into_folder()).complete();
    }
    let (left, right) = producer.split();
    let Some(right) = right else {
        return left.fold_with(consumer.into_folder()).complete();
    };
    let reducer = consumer.to_reducer();
    let left_consumer = consumer.split_off_left();
    let here = std::thread::current().id();
    let (a, b) = crate::join::join_promoted(
        w,
        || unindexed(w, left, left_consumer, splits / 2),
        move || {
            let thief = WorkerThread::current().expect("bridge_unindexed: runs on a worker");
            let splits = if std::thread::current().id() != here {
                thief.registry().num_threads().max(splits / 2)
            } else {
                splits / 2
            };
            unindexed(thief, right, consumer, splits)
        },
    );
    reducer.reduce(a, b)
}

pub use super::bridge::FromProducer;

/// An indexed parallel iterator over the `len` items of `producer`: a source of one's own (see
/// the module doc).
pub fn from_producer<P: Producer>(len: usize, producer: P) -> FromProducer<P> {
    FromProducer::new(len, producer)
}

impl<P: Producer> ParallelIterator for FromProducer<P>
where
    P::Item: Send,
{
    type Item = P::Item;
    type Producer = Self;
    fn into_producer(self) -> Self {
        self
    }
    fn opt_len(&self) -> Option<usize> {
        Some(FromProducer::len(self))
    }
}

impl<P: Producer> IndexedParallelIterator for FromProducer<P>
where
    P::Item: Send,
{
    fn len(&self) -> usize {
        FromProducer::len(self)
    }
}

/// The parallel iterator of an [`UnindexedProducer`] ([`from_unindexed`]): its items are found
/// in parallel ([`bridge_unindexed`], splitting the producer while workers want work) into a
/// buffer when the pipeline runs, and the rest of the pipeline runs over the buffer, as for
/// threadlab's other sources without positions.
#[derive(Debug, Clone)]
pub struct FromUnindexed<P> {
    producer: P,
}

/// A parallel iterator over the items of `producer` (see the module doc).
pub fn from_unindexed<P: UnindexedProducer>(producer: P) -> FromUnindexed<P> {
    FromUnindexed { producer }
}

impl<P: UnindexedProducer> ParallelIterator for FromUnindexed<P>
where
    P::Item: Send,
{
    type Item = P::Item;
    type Producer = IntoIter<P::Item>;
    fn into_producer(self) -> IntoIter<P::Item> {
        let pieces = bridge_unindexed(self.producer, Gather);
        pieces.into_iter().flatten().collect::<Vec<_>>().into()
    }
}

/// A consumer that gathers the items into a list of pieces, in order.
struct Gather;

/// The pieces [`Gather`] folds.
struct Piece<T>(Vec<T>);

impl<T> Folder<T> for Piece<T> {
    type Result = Vec<Vec<T>>;
    fn consume(mut self, item: T) -> Self {
        self.0.push(item);
        self
    }
    fn consume_iter<I: IntoIterator<Item = T>>(mut self, iter: I) -> Self {
        self.0.extend(iter);
        self
    }
    fn complete(self) -> Vec<Vec<T>> {
        vec![self.0]
    }
    fn full(&self) -> bool {
        false
    }
}

impl<T> Reducer<Vec<Vec<T>>> for Gather {
    fn reduce(self, mut left: Vec<Vec<T>>, right: Vec<Vec<T>>) -> Vec<Vec<T>> {
        left.extend(right);
        left
    }
}

impl<T: Send> Consumer<T> for Gather {
    type Folder = Piece<T>;
    type Reducer = Gather;
    type Result = Vec<Vec<T>>;
    fn split_at(self, _index: usize) -> (Self, Self, Gather) {
        (Gather, Gather, Gather)
    }
    fn into_folder(self) -> Piece<T> {
        Piece(Vec::new())
    }
    fn full(&self) -> bool {
        false
    }
}

impl<T: Send> UnindexedConsumer<T> for Gather {
    fn split_off_left(&self) -> Self {
        Gather
    }
    fn to_reducer(&self) -> Gather {
        Gather
    }
}
