//! Between Rayon's plumbing (`plumbing_traits.rs`) and threadlab's engine (`drive.rs`): a
//! Rayon-style producer run by the engine ([`FromProducer`]), the engine's producer seen as a
//! Rayon-style one ([`AsRayon`], for `with_producer`), and Rayon-style consumers fed by the
//! engine ([`Indexed`], [`Unindexed`], for `drive`, `drive_unindexed` and the bridges). It names
//! nothing of the iterator traits (those impls are in `plumbing.rs`), so `mod.rs` may use it.
//!
//! The engine splits a run's *remaining* positions when a worker is idle, after it has folded
//! some blocks; a Rayon consumer can only be split before it folds. So the consumer adapters
//! keep the consumer of the positions not yet folded, split it at each block (its first `n`
//! positions fold the block, through a folder of their own) and at each of the engine's splits,
//! and reduce the blocks' results left to right, as Rayon reduces its pieces'.

use super::drive::{Consumer as EngineConsumer, Producer as Engine, Reducer as EngineReducer};
use super::plumbing_traits::{Consumer, Folder, Producer, Reducer, UnindexedConsumer};
use std::cell::Cell;
use std::marker::PhantomData;

/// The parallel iterator of a [`Producer`] of a known number of items
/// ([`from_producer`](super::plumbing::from_producer)); its `ParallelIterator` impls are in
/// `plumbing.rs`.
#[derive(Debug, Clone)]
pub struct FromProducer<P> {
    /// `None` only while a block is being split off (`take`).
    producer: Option<P>,
    len: usize,
}

impl<P> FromProducer<P> {
    /// The iterator of `producer`'s `len` items.
    pub(super) fn new(len: usize, producer: P) -> Self {
        FromProducer {
            producer: Some(producer),
            len,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    fn producer(self) -> P {
        self.producer
            .expect("FromProducer: the producer is there between blocks")
    }
}

impl<P: Producer> Engine for FromProducer<P> {
    type Item = P::Item;
    type Iter<'s>
        = P::IntoIter
    where
        Self: 's;
    fn len(&self) -> usize {
        self.len
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let len = self.len;
        let (l, r) = self.producer().split_at(mid);
        (FromProducer::new(mid, l), FromProducer::new(len - mid, r))
    }
    fn take(&mut self, n: usize) -> P::IntoIter {
        let p = self
            .producer
            .take()
            .expect("FromProducer: the producer is there between blocks");
        let (head, rest) = p.split_at(n);
        self.producer = Some(rest);
        self.len -= n;
        head.into_iter()
    }
    fn min_len(&self) -> usize {
        self.producer.as_ref().map_or(1, Producer::min_len)
    }
    fn max_len(&self) -> usize {
        self.producer.as_ref().map_or(usize::MAX, Producer::max_len)
    }
}

/// An indexed iterator's engine producer seen as a Rayon-style [`Producer`]
/// (`IndexedParallelIterator::with_producer`): its positions are its items.
#[doc(hidden)]
#[derive(Debug)]
pub struct AsRayon<Q>(pub(super) Q);

impl<Q: Engine> Producer for AsRayon<Q> {
    type Item = Q::Item;
    type IntoIter = AsRayonIter<Q>;
    fn into_iter(self) -> AsRayonIter<Q> {
        AsRayonIter(Some(self.0))
    }
    fn min_len(&self) -> usize {
        self.0.min_len()
    }
    fn max_len(&self) -> usize {
        self.0.max_len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.0.split_at(index);
        (AsRayon(l), AsRayon(r))
    }
}

/// The sequential iterator of [`AsRayon`]: an item at a time from either end, each split off
/// the producer (lazily: an item not reached is never made, and is dropped with the producer).
#[doc(hidden)]
#[derive(Debug)]
pub struct AsRayonIter<Q>(Option<Q>);

impl<Q: Engine> AsRayonIter<Q> {
    fn remaining(&self) -> usize {
        self.0.as_ref().map_or(0, Engine::len)
    }

    /// The item at `at` (0: the first, `len - 1`: the last), the rest kept.
    fn item_at(&mut self, at: usize) -> Option<Q::Item> {
        let q = self.0.take()?;
        let len = q.len();
        let (left, rest) = q.split_at(at);
        let (mut one, right) = rest.split_at(1);
        let item = one.take(1).next();
        drop(one);
        // One side is empty: keep the other.
        self.0 = Some(if at == 0 { right } else { left });
        debug_assert!(
            at == 0 || at + 1 == len,
            "AsRayonIter: an item from the middle"
        );
        item
    }
}

impl<Q: Engine> Iterator for AsRayonIter<Q> {
    type Item = Q::Item;
    fn next(&mut self) -> Option<Q::Item> {
        if self.remaining() == 0 {
            return None;
        }
        self.item_at(0)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.remaining();
        (n, Some(n))
    }
}

impl<Q: Engine> DoubleEndedIterator for AsRayonIter<Q> {
    fn next_back(&mut self) -> Option<Q::Item> {
        let n = self.remaining();
        if n == 0 {
            return None;
        }
        self.item_at(n - 1)
    }
}

impl<Q: Engine> ExactSizeIterator for AsRayonIter<Q> {}

/// A Rayon-style [`Consumer`] fed by the engine from an indexed producer (positions are items):
/// see the module doc.
pub(super) struct Indexed<T, C: Consumer<T>> {
    /// The consumer of the positions not folded yet.
    rest: Option<C>,
    /// The folded blocks' result so far, and the reducer between it and `rest`.
    done: Option<(C::Result, C::Reducer)>,
    /// The reducer of the last engine split (`reducer` hands it out).
    split: Cell<Option<C::Reducer>>,
    item: PhantomData<fn(T)>,
}

impl<T, C: Consumer<T>> Indexed<T, C> {
    pub(super) fn new(consumer: C) -> Self {
        Indexed {
            rest: Some(consumer),
            done: None,
            split: Cell::new(None),
            item: PhantomData,
        }
    }

    fn rest(&mut self) -> C {
        self.rest
            .take()
            .expect("Indexed: the consumer is there between blocks")
    }
}

// SAFETY: the reducers it holds (`done`, `split`) are made and used by the thread that holds
// the adapter: the engine moves to another thread only an adapter just split off, which holds
// none; the rest (the consumer, the results) is `Send` by the traits' bounds.
unsafe impl<T, C: Consumer<T>> Send for Indexed<T, C> {}

impl<T, C: Consumer<T>> EngineConsumer<T> for Indexed<T, C> {
    type Result = C::Result;
    type Reducer = ByReducer<C::Reducer>;
    fn consume_iter<I: Iterator<Item = T>>(&mut self, iter: I) {
        // The engine calls `consume_block`, which knows the block's length.
        let items: Vec<T> = iter.collect();
        self.consume_block(items.len(), items.into_iter());
    }
    fn consume_block<I: Iterator<Item = T>>(&mut self, n: usize, iter: I) {
        let (block, rest, between) = self.rest().split_at(n);
        self.rest = Some(rest);
        let result = block.into_folder().consume_iter(iter).complete();
        let result = match self.done.take() {
            Some((before, reducer)) => reducer.reduce(before, result),
            None => result,
        };
        self.done = Some((result, between));
    }
    fn full(&self) -> bool {
        self.rest.as_ref().is_some_and(Consumer::full)
    }
    fn split_off(&mut self, left: usize) -> Self {
        let (mine, theirs, reducer) = self.rest().split_at(left);
        self.rest = Some(mine);
        self.split.set(Some(reducer));
        Indexed::new(theirs)
    }
    fn finish(mut self) -> C::Result {
        let tail = self.rest().into_folder().complete();
        match self.done.take() {
            Some((before, reducer)) => reducer.reduce(before, tail),
            None => tail,
        }
    }
    fn reducer(&self) -> ByReducer<C::Reducer> {
        ByReducer(self.split.take())
    }
}

/// A Rayon-style [`UnindexedConsumer`] fed by the engine: see the module doc.
pub(super) struct Unindexed<T, C: UnindexedConsumer<T>> {
    /// The consumer of the positions not folded yet.
    rest: C,
    /// The folded blocks' result so far.
    done: Option<C::Result>,
    item: PhantomData<fn(T)>,
}

impl<T, C: UnindexedConsumer<T>> Unindexed<T, C> {
    pub(super) fn new(consumer: C) -> Self {
        Unindexed {
            rest: consumer,
            done: None,
            item: PhantomData,
        }
    }
}

impl<T, C: UnindexedConsumer<T>> EngineConsumer<T> for Unindexed<T, C> {
    type Result = C::Result;
    type Reducer = ByReducer<C::Reducer>;
    fn consume_iter<I: Iterator<Item = T>>(&mut self, iter: I) {
        let block = self.rest.split_off_left();
        let result = block.into_folder().consume_iter(iter).complete();
        self.done = Some(match self.done.take() {
            Some(before) => self.rest.to_reducer().reduce(before, result),
            None => result,
        });
    }
    fn full(&self) -> bool {
        self.rest.full()
    }
    fn split_off(&mut self, _left: usize) -> Self {
        // `split_off_left` makes the consumer of what comes before `rest`: it becomes ours, and
        // `rest` (everything after) goes to the new piece.
        let mine = self.rest.split_off_left();
        Unindexed::new(std::mem::replace(&mut self.rest, mine))
    }
    fn finish(self) -> C::Result {
        let reducer = self.rest.to_reducer();
        let tail = self.rest.into_folder().complete();
        match self.done {
            Some(before) => reducer.reduce(before, tail),
            None => tail,
        }
    }
    fn reducer(&self) -> ByReducer<C::Reducer> {
        ByReducer(Some(self.rest.to_reducer()))
    }
}

/// A Rayon-style reducer as the engine's.
pub(super) struct ByReducer<R>(Option<R>);

impl<T, R: Reducer<T>> EngineReducer<T> for ByReducer<R> {
    fn reduce(self, left: T, right: T) -> T {
        self.0
            .expect("ByReducer: the engine asks for the reducer once per split")
            .reduce(left, right)
    }
}
