//! Adapters that combine or reshape a pipeline: `flat_map`/`flatten` (inner
//! parallel iterators), `fold`/`fold_with` as parallel iterators of accumulators, `update`,
//! and the per-piece state of `map_init`/`map_with`.
//!
//! Each is a [`Producer`] over its base's producer, as the adapters of `adapters.rs` are:
//! positions are the base's positions, a block is a sequential iterator over the base's
//! block. Two choices follow from that shape:
//! - `fold` yields one accumulator per block (a block is the unit a worker folds between two
//!   reads of its heartbeat flag, at least `with_min_len` and at most `with_max_len` items when
//!   they are set); Rayon yields one per piece, bounded the same way. Either way the number of
//!   accumulators is unspecified and `reduce` of them gives the same answer.
//! - `flat_map`'s positions are its inner iterators' positions as they open (`FlatProducer`):
//!   an inner iterator is split by the heartbeat as any source is, and streams.
//! - `map_init`'s `init` runs once per block, as Rayon's runs once per piece.

use super::drive::Producer;
use super::shared::{Part, Shared};
use super::{Either, Fold, IndexedParallelIterator, IntoParallelIterator, ParallelIterator};
use std::sync::Arc;

/// The iterator of [`ParallelIterator::flat_map`] and [`ParallelIterator::flatten`].
///
/// ```
/// use threadlab::prelude::*;
/// let v: Vec<u32> = (1u32..4).into_par_iter().flat_map(|n| 0..n).collect();
/// assert_eq!(v, [0, 0, 1, 0, 1, 2]);
/// ```
#[derive(Clone)]
pub struct FlatMap<I, F> {
    base: I,
    f: Arc<F>,
}

impl<I, F> FlatMap<I, F> {
    pub(super) fn new(base: I, f: F) -> Self {
        FlatMap {
            base,
            f: Arc::new(f),
        }
    }
}

impl<I: ParallelIterator, F, PI> ParallelIterator for FlatMap<I, F>
where
    F: Fn(I::Item) -> PI + Sync + Send,
    PI: IntoParallelIterator,
{
    type Item = PI::Item;
    type Producer = FlatProducer<I::Producer, F, <PI::Iter as ParallelIterator>::Producer>;
    fn into_producer(self) -> Self::Producer {
        FlatProducer {
            base: self.base.into_producer(),
            f: self.f,
            inner: None,
        }
    }
}

/// The producer of [`FlatMap`]: its positions are the inner positions of the outer item being
/// run and the outer positions not opened yet. Opening an outer position (a step of a block)
/// makes its inner iterator's producer, whose positions then count too; a split in the middle of
/// an open inner iterator gives each half a part of it. So `flat_map` streams: memory holds the
/// open inner producers (one per piece and level) and a small buffer of items, never the whole
/// output, and an inner iterator of billions of items is split by the heartbeat as any range
/// is (Rayon drives each inner iterator into a split of its consumer to the same end).
pub struct FlatProducer<P, F, Q> {
    base: P,
    f: Arc<F>,
    /// What is left of the inner iterator of the outer item being run.
    inner: Option<Q>,
}

impl<P: std::fmt::Debug, F, Q> std::fmt::Debug for FlatProducer<P, F, Q> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        super::debug::base_only(f, "FlatProducer", &self.base)
    }
}

/// Items a block of [`FlatProducer`] makes ahead of its consumer: the unit of its buffer.
const FLAT_BUFFER: usize = 64;

impl<P, F, PI, Q> Producer for FlatProducer<P, F, Q>
where
    P: Producer,
    F: Fn(P::Item) -> PI + Sync + Send,
    PI: IntoParallelIterator,
    PI::Iter: ParallelIterator<Producer = Q>,
    Q: Producer<Item = PI::Item>,
{
    type Item = PI::Item;
    type Iter<'s>
        = FlatBlock<'s, P, F, Q>
    where
        Self: 's;
    fn len(&self) -> usize {
        let open = self.inner.as_ref().map_or(0, Q::len);
        open.saturating_add(self.base.len())
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let open = self.inner.as_ref().map_or(0, Q::len);
        match self.inner {
            Some(inner) if mid < open => {
                let (l, r) = inner.split_at(mid);
                let (none, base) = self.base.split_at(0);
                let left = FlatProducer {
                    base: none,
                    f: Arc::clone(&self.f),
                    inner: Some(l),
                };
                let right = FlatProducer {
                    base,
                    f: self.f,
                    inner: Some(r),
                };
                (left, right)
            }
            inner => {
                let (l, r) = self.base.split_at(mid - open);
                let left = FlatProducer {
                    base: l,
                    f: Arc::clone(&self.f),
                    inner,
                };
                let right = FlatProducer {
                    base: r,
                    f: self.f,
                    inner: None,
                };
                (left, right)
            }
        }
    }
    fn take(&mut self, n: usize) -> FlatBlock<'_, P, F, Q> {
        FlatBlock {
            p: self,
            steps: n,
            buffer: std::collections::VecDeque::new(),
        }
    }
    fn exact(&self) -> bool {
        false
    }
    /// The bounds of the inner iterator being run while it has positions left, else the
    /// base's: a bound set before `flat_map` cuts the base, one set inside it the inner
    /// iterators (as in Rayon, where each inner iterator is split by its own bounds).
    fn min_len(&self) -> usize {
        match &self.inner {
            Some(inner) if inner.len() > 0 => inner.min_len(),
            _ => self.base.min_len(),
        }
    }
    fn max_len(&self) -> usize {
        match &self.inner {
            Some(inner) if inner.len() > 0 => inner.max_len(),
            _ => self.base.max_len(),
        }
    }
    fn blocks(&self) -> Option<super::drive::Blocks> {
        self.base.blocks()
    }
}

/// A block of [`FlatProducer`]: `steps` positions, each an inner item or the opening of an outer
/// one, made 64 inner items at a time (`FLAT_BUFFER`).
pub struct FlatBlock<'s, P, F, Q: Producer> {
    p: &'s mut FlatProducer<P, F, Q>,
    steps: usize,
    buffer: std::collections::VecDeque<Q::Item>,
}

impl<P: Producer, F, Q: Producer> std::fmt::Debug for FlatBlock<'_, P, F, Q> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlatBlock")
            .field("steps", &self.steps)
            .finish_non_exhaustive()
    }
}

impl<P, F, PI, Q> Iterator for FlatBlock<'_, P, F, Q>
where
    P: Producer,
    F: Fn(P::Item) -> PI + Sync + Send,
    PI: IntoParallelIterator,
    PI::Iter: ParallelIterator<Producer = Q>,
    Q: Producer<Item = PI::Item>,
{
    type Item = PI::Item;
    fn next(&mut self) -> Option<PI::Item> {
        loop {
            if let Some(x) = self.buffer.pop_front() {
                return Some(x);
            }
            if self.steps == 0 {
                return None;
            }
            match &mut self.p.inner {
                Some(inner) if inner.len() > 0 => {
                    let k = inner.len().min(self.steps).min(FLAT_BUFFER);
                    self.buffer.extend(inner.take(k));
                    self.steps -= k;
                }
                _ => {
                    // One step: the next outer position, opened (a base that filters may give
                    // no item for it).
                    self.p.inner = None;
                    if self.p.base.len() == 0 {
                        self.steps = 0;
                        return None;
                    }
                    self.steps -= 1;
                    let outer = self.p.base.take(1).next();
                    if let Some(x) = outer {
                        let inner = (self.p.f)(x).into_par_iter().into_producer();
                        self.p.inner = Some(inner);
                    }
                }
            }
        }
    }
}

/// The producer of [`Fold`] and [`FoldWith`] as parallel iterators: one accumulator per
/// block, started by `S` (`identity()`, or a clone of the initial value).
///
/// One accumulator per block: a block holds at least `with_min_len` and at most
/// `with_max_len` items when they are set (see `drive.rs`), as a piece of Rayon's does.
#[derive(Debug)]
pub struct FoldProducer<P, S, F> {
    base: P,
    identity: Arc<S>,
    fold_op: Arc<F>,
}

impl<I: ParallelIterator, A: Send, ID, F> ParallelIterator for Fold<I, ID, F>
where
    ID: Fn() -> A + Sync + Send,
    F: Fn(A, I::Item) -> A + Sync + Send,
{
    type Item = A;
    type Producer = FoldProducer<I::Producer, InitFn<ID>, F>;
    fn into_producer(self) -> Self::Producer {
        FoldProducer {
            base: self.base.into_producer(),
            identity: Arc::new(InitFn(self.identity)),
            fold_op: Arc::new(self.fold_op),
        }
    }
}

/// The iterator of [`ParallelIterator::fold_with`]: accumulators that start as clones of
/// `init`, one per block.
///
/// ```
/// use threadlab::prelude::*;
/// let n: u32 = (0u32..10).into_par_iter().fold_with(0u32, |n, _| n + 1).sum();
/// assert_eq!(n, 10);
/// ```
#[derive(Clone)]
pub struct FoldWith<I, T, F> {
    base: I,
    init: T,
    fold_op: F,
}

impl<I, T, F> FoldWith<I, T, F> {
    pub(super) fn new(base: I, init: T, fold_op: F) -> Self {
        FoldWith {
            base,
            init,
            fold_op,
        }
    }
}

impl<I: ParallelIterator, T, F> ParallelIterator for FoldWith<I, T, F>
where
    T: Clone + Send + Sync,
    F: Fn(T, I::Item) -> T + Sync + Send,
{
    type Item = T;
    type Producer = FoldProducer<I::Producer, CloneOf<T>, F>;
    fn into_producer(self) -> Self::Producer {
        FoldProducer {
            base: self.base.into_producer(),
            identity: Arc::new(CloneOf(self.init)),
            fold_op: Arc::new(self.fold_op),
        }
    }
}

impl<P: Producer, S: MakeState, F> Producer for FoldProducer<P, S, F>
where
    S::State: Send,
    F: Fn(S::State, P::Item) -> S::State + Sync + Send,
{
    type Item = S::State;
    type Iter<'s>
        = std::option::IntoIter<S::State>
    where
        Self: 's;
    fn len(&self) -> usize {
        self.base.len()
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(mid);
        let left = FoldProducer {
            base: l,
            identity: Arc::clone(&self.identity),
            fold_op: Arc::clone(&self.fold_op),
        };
        (left, FoldProducer { base: r, ..self })
    }
    fn take(&mut self, n: usize) -> Self::Iter<'_> {
        let acc = self.base.take(n).fold(self.identity.make(), &*self.fold_op);
        Some(acc).into_iter()
    }
    fn exact(&self) -> bool {
        false
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
}

/// The iterator of [`IndexedParallelIterator::fold_chunks`] and
/// [`IndexedParallelIterator::fold_chunks_with`]: one accumulator per `size` consecutive
/// items.
///
/// ```
/// use threadlab::prelude::*;
/// let v: Vec<u32> = (0u32..5).into_par_iter().fold_chunks(2, || 0, |a, x| a + x).collect();
/// assert_eq!(v, [1, 5, 4]);
/// ```
#[derive(Clone)]
pub struct FoldChunks<I, S, F> {
    base: I,
    size: usize,
    identity: Arc<S>,
    fold_op: Arc<F>,
}

impl<I, T, F> FoldChunks<I, InitFn<T>, F> {
    pub(super) fn init(base: I, size: usize, identity: T, fold_op: F) -> Self {
        FoldChunks {
            base,
            size,
            identity: Arc::new(InitFn(identity)),
            fold_op: Arc::new(fold_op),
        }
    }
}

impl<I, T, F> FoldChunks<I, CloneOf<T>, F> {
    pub(super) fn with(base: I, size: usize, init: T, fold_op: F) -> Self {
        FoldChunks {
            base,
            size,
            identity: Arc::new(CloneOf(init)),
            fold_op: Arc::new(fold_op),
        }
    }
}

impl<I: IndexedParallelIterator, S: MakeState, F> ParallelIterator for FoldChunks<I, S, F>
where
    S::State: Send,
    F: Fn(S::State, I::Item) -> S::State + Sync + Send,
{
    type Item = S::State;
    type Producer = FoldChunks<I::Producer, S, F>;
    fn into_producer(self) -> Self::Producer {
        FoldChunks {
            base: self.base.into_producer(),
            size: self.size,
            identity: self.identity,
            fold_op: self.fold_op,
        }
    }
}
impl<I: IndexedParallelIterator, S: MakeState, F> IndexedParallelIterator for FoldChunks<I, S, F>
where
    S::State: Send,
    F: Fn(S::State, I::Item) -> S::State + Sync + Send,
{
    fn len(&self) -> usize {
        self.base.len().div_ceil(self.size)
    }
}

impl<P: Producer, S: MakeState, F> Producer for FoldChunks<P, S, F>
where
    S::State: Send,
    F: Fn(S::State, P::Item) -> S::State + Sync + Send,
{
    type Item = S::State;
    type Iter<'s>
        = FoldChunkIter<'s, P::Iter<'s>, S, F>
    where
        Self: 's;
    fn len(&self) -> usize {
        self.base.len().div_ceil(self.size)
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let at = (mid * self.size).min(self.base.len());
        let (l, r) = self.base.split_at(at);
        let left = FoldChunks {
            base: l,
            size: self.size,
            identity: Arc::clone(&self.identity),
            fold_op: Arc::clone(&self.fold_op),
        };
        (left, FoldChunks { base: r, ..self })
    }
    fn take(&mut self, n: usize) -> Self::Iter<'_> {
        let at = (n * self.size).min(self.base.len());
        FoldChunkIter {
            base: self.base.take(at),
            size: self.size,
            identity: &*self.identity,
            fold_op: &*self.fold_op,
        }
    }
}

/// The block iterator of [`FoldChunks`].
#[derive(Debug)]
pub struct FoldChunkIter<'s, It, S, F> {
    base: It,
    size: usize,
    identity: &'s S,
    fold_op: &'s F,
}

impl<It: Iterator, S: MakeState, F> Iterator for FoldChunkIter<'_, It, S, F>
where
    F: Fn(S::State, It::Item) -> S::State,
{
    type Item = S::State;
    fn next(&mut self) -> Option<S::State> {
        let first = self.base.next()?;
        let acc = (self.fold_op)(self.identity.make(), first);
        Some(
            self.base
                .by_ref()
                .take(self.size - 1)
                .fold(acc, self.fold_op),
        )
    }
}

/// The iterator of [`ParallelIterator::update`]: every item after `f` changed it.
///
/// ```
/// use threadlab::prelude::*;
/// let v: Vec<Vec<u8>> = (0u8..2).into_par_iter().map(|x| vec![x]).update(|v| v.push(9)).collect();
/// assert_eq!(v, [vec![0, 9], vec![1, 9]]);
/// ```
#[derive(Clone)]
pub struct Update<I, F> {
    base: I,
    f: Arc<F>,
}

impl<I, F> Update<I, F> {
    pub(super) fn new(base: I, f: F) -> Self {
        Update {
            base,
            f: Arc::new(f),
        }
    }
}

impl<I: ParallelIterator, F: Fn(&mut I::Item) + Sync + Send> ParallelIterator for Update<I, F> {
    type Item = I::Item;
    type Producer = Shared<I::Producer, F, UpdatePart>;
    fn into_producer(self) -> Self::Producer {
        Shared::new(self.base.into_producer(), self.f)
    }
    fn opt_len(&self) -> Option<usize> {
        self.base.opt_len()
    }
}
impl<I: IndexedParallelIterator, F: Fn(&mut I::Item) + Sync + Send> IndexedParallelIterator
    for Update<I, F>
{
    fn len(&self) -> usize {
        self.base.len()
    }
}

/// The [`Part`] of [`Update`]: its closure; every position still yields its item.
#[doc(hidden)]
#[derive(Debug)]
pub enum UpdatePart {}

impl<P: Producer, F: Fn(&mut P::Item) + Sync + Send> Part<P, UpdatePart> for F {
    type Item = P::Item;
    type Iter<'s>
        = UpdateIter<'s, P::Iter<'s>, F>
    where
        P: 's,
        F: 's;
    #[inline]
    fn block<'s>(&'s self, base: P::Iter<'s>) -> Self::Iter<'s> {
        UpdateIter { base, f: self }
    }
    fn exact(&self, base: &P) -> bool {
        base.exact()
    }
}

/// The block iterator of [`Update`].
#[derive(Debug)]
pub struct UpdateIter<'s, It, F> {
    base: It,
    f: &'s F,
}

impl<It: Iterator, F: Fn(&mut It::Item)> Iterator for UpdateIter<'_, It, F> {
    type Item = It::Item;
    #[inline]
    fn next(&mut self) -> Option<It::Item> {
        let mut x = self.base.next()?;
        (self.f)(&mut x);
        Some(x)
    }
}

/// How a block of `map_init` / `map_with` gets its state.
pub trait MakeState: Send + Sync {
    /// The state.
    type State;
    /// A fresh state for one block.
    fn make(&self) -> Self::State;
}

/// `map_init`'s `init` closure.
#[derive(Debug, Clone)]
pub struct InitFn<INIT>(INIT);

impl<INIT> InitFn<INIT> {
    pub(super) fn new(init: INIT) -> Self {
        InitFn(init)
    }
}

impl<T, INIT: Fn() -> T + Send + Sync> MakeState for InitFn<INIT> {
    type State = T;
    fn make(&self) -> T {
        (self.0)()
    }
}

/// `map_with`'s value, cloned for every block.
#[derive(Debug, Clone)]
pub struct CloneOf<T>(T);

impl<T> CloneOf<T> {
    pub(super) fn new(value: T) -> Self {
        CloneOf(value)
    }
}

impl<T: Clone + Send + Sync> MakeState for CloneOf<T> {
    type State = T;
    fn make(&self) -> T {
        self.0.clone()
    }
}

/// The iterator of [`ParallelIterator::map_init`] and [`ParallelIterator::map_with`]: `f`
/// with a mutable state made once per block.
///
/// ```
/// use threadlab::prelude::*;
/// let v: Vec<u32> = (0u32..4).into_par_iter().map_init(|| 10, |ten, x| x + *ten).collect();
/// assert_eq!(v, [10, 11, 12, 13]);
/// ```
#[derive(Clone)]
pub struct MapState<I, S, F> {
    base: I,
    state: Arc<S>,
    f: Arc<F>,
}

impl<I, T, F> MapState<I, InitFn<T>, F> {
    pub(super) fn init(base: I, init: T, f: F) -> Self {
        MapState {
            base,
            state: Arc::new(InitFn(init)),
            f: Arc::new(f),
        }
    }
}

impl<I, T, F> MapState<I, CloneOf<T>, F> {
    pub(super) fn with(base: I, value: T, f: F) -> Self {
        MapState {
            base,
            state: Arc::new(CloneOf(value)),
            f: Arc::new(f),
        }
    }
}

impl<I: ParallelIterator, S: MakeState, F, R: Send> ParallelIterator for MapState<I, S, F>
where
    F: Fn(&mut S::State, I::Item) -> R + Sync + Send,
{
    type Item = R;
    type Producer = MapState<I::Producer, S, F>;
    fn into_producer(self) -> Self::Producer {
        MapState {
            base: self.base.into_producer(),
            state: self.state,
            f: self.f,
        }
    }
}
impl<I: IndexedParallelIterator, S: MakeState, F, R: Send> IndexedParallelIterator
    for MapState<I, S, F>
where
    F: Fn(&mut S::State, I::Item) -> R + Sync + Send,
{
    fn len(&self) -> usize {
        self.base.len()
    }
}

impl<P: Producer, S: MakeState, F, R: Send> Producer for MapState<P, S, F>
where
    F: Fn(&mut S::State, P::Item) -> R + Sync + Send,
{
    type Item = R;
    type Iter<'s>
        = StateIter<'s, P::Iter<'s>, S::State, F>
    where
        Self: 's;
    fn len(&self) -> usize {
        self.base.len()
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(mid);
        let left = MapState {
            base: l,
            state: Arc::clone(&self.state),
            f: Arc::clone(&self.f),
        };
        (left, MapState { base: r, ..self })
    }
    fn take(&mut self, n: usize) -> Self::Iter<'_> {
        StateIter {
            base: self.base.take(n),
            state: self.state.make(),
            f: &*self.f,
        }
    }
    fn exact(&self) -> bool {
        self.base.exact()
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
}

/// The block iterator of [`MapState`].
#[derive(Debug)]
pub struct StateIter<'s, It, T, F> {
    base: It,
    state: T,
    f: &'s F,
}

impl<It: Iterator, T, F: Fn(&mut T, It::Item) -> R, R> Iterator for StateIter<'_, It, T, F> {
    type Item = R;
    #[inline]
    fn next(&mut self) -> Option<R> {
        let x = self.base.next()?;
        Some((self.f)(&mut self.state, x))
    }
}

/// `Debug` for the adapters that hold closures: their base, not the closures (closures are not
/// `Debug`).
macro_rules! debug_base_only {
    ($($name:ident<$($p:ident),*>),*) => {$(
        impl<I: std::fmt::Debug, $($p),*> std::fmt::Debug for $name<I, $($p),*> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                super::debug::base_only(f, stringify!($name), &self.base)
            }
        }
    )*};
}

debug_base_only!(FlatMap<F>, FoldWith<T, F>, FoldChunks<S, F>, Update<F>, MapState<S, F>);

/// [`Either`](super::Either) runs whichever side it holds.
impl<L: ParallelIterator, R: ParallelIterator<Item = L::Item>> ParallelIterator for Either<L, R> {
    type Item = L::Item;
    type Producer = Either<L::Producer, R::Producer>;
    fn into_producer(self) -> Self::Producer {
        match self {
            Either::Left(l) => Either::Left(l.into_producer()),
            Either::Right(r) => Either::Right(r.into_producer()),
        }
    }
    fn opt_len(&self) -> Option<usize> {
        match self {
            Either::Left(l) => l.opt_len(),
            Either::Right(r) => r.opt_len(),
        }
    }
}

impl<L, R> IndexedParallelIterator for Either<L, R>
where
    L: IndexedParallelIterator,
    R: IndexedParallelIterator<Item = L::Item>,
{
    fn len(&self) -> usize {
        match self {
            Either::Left(l) => l.len(),
            Either::Right(r) => r.len(),
        }
    }
}
