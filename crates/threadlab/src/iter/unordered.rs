//! The adapters that stop or skip by what *any* piece saw, not by position: `while_some`,
//! `take_any`, `skip_any`, `take_any_while`, `skip_any_while` (Rayon's names and meaning), and
//! `positions`.
//!
//! Each is one [`Rule`] over state that all pieces of a run share (a flag or a counter, made
//! when the run starts): for every item, the rule says yield it, skip it, or stop. A stop ends
//! the piece's block, and a rule that is done (`while_some` saw a `None`, `take_any` took its
//! count) makes every piece report no positions left, so the engine ends them at their next
//! block. Which items pass depends on the order the pieces ran in, as in Rayon; run on one
//! worker without splits, each is its `std` counterpart (`map_while(identity)`, `take`,
//! `skip`, `take_while`, `skip_while`).

use super::adapters::Enumerate;
use super::drive::Producer;
use super::shared::{Part, Shared};
use super::{IndexedParallelIterator, ParallelIterator};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// What a [`Rule`] does with an item.
#[doc(hidden)]
#[derive(Debug)]
pub enum Step<T> {
    Yield(T),
    Skip,
    Stop,
}

/// The decision of an unordered adapter, over the state its pieces share.
#[doc(hidden)]
pub trait Rule<T>: Send + Sync {
    type Out: Send;
    fn pass(&self, item: T) -> Step<Self::Out>;
    /// True when no further item can pass.
    fn done(&self) -> bool {
        false
    }
}

/// The iterator of the unordered adapters: the base's items as the rule `R` lets them through.
///
/// ```
/// use threadlab::prelude::*;
/// let v: Vec<u32> = (0u32..10).into_par_iter().map(|x| (x < 5).then_some(x)).while_some().collect();
/// assert!(v.iter().all(|x| *x < 5));
/// ```
pub struct Unordered<I, R> {
    base: I,
    rule: R,
}

impl<I: std::fmt::Debug, R> std::fmt::Debug for Unordered<I, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Unordered")
            .field("base", &self.base)
            .field("rule", &std::any::type_name::<R>())
            .finish()
    }
}

/// A copy that has not run: the rule's settings with fresh state.
impl<I: Clone, R: Clone> Clone for Unordered<I, R> {
    fn clone(&self) -> Self {
        Unordered {
            base: self.base.clone(),
            rule: self.rule.clone(),
        }
    }
}

impl<I, R> Unordered<I, R> {
    pub(super) fn new(base: I, rule: R) -> Self {
        Unordered { base, rule }
    }
}

impl<I: ParallelIterator, R: Rule<I::Item>> ParallelIterator for Unordered<I, R> {
    type Item = R::Out;
    type Producer = Shared<I::Producer, R, Ruled>;
    fn into_producer(self) -> Self::Producer {
        Shared::new(self.base.into_producer(), Arc::new(self.rule))
    }
}

/// The [`Part`] of [`Unordered`]: its rule, whose state every piece shares; a rule that is
/// done ends every piece.
#[doc(hidden)]
#[derive(Debug)]
pub enum Ruled {}

impl<P: Producer, R: Rule<P::Item>> Part<P, Ruled> for R {
    type Item = R::Out;
    type Iter<'s>
        = UnorderedIter<'s, P::Iter<'s>, R>
    where
        P: 's,
        R: 's;
    fn block<'s>(&'s self, base: P::Iter<'s>) -> Self::Iter<'s> {
        UnorderedIter {
            base,
            rule: self,
            stopped: false,
        }
    }
    fn done(&self) -> bool {
        Rule::done(self)
    }
}

/// A block of [`Unordered`].
#[doc(hidden)]
#[derive(Debug)]
pub struct UnorderedIter<'s, It, R> {
    base: It,
    rule: &'s R,
    stopped: bool,
}

impl<It: Iterator, R: Rule<It::Item>> Iterator for UnorderedIter<'_, It, R> {
    type Item = R::Out;
    fn next(&mut self) -> Option<R::Out> {
        loop {
            if self.stopped || self.rule.done() {
                return None;
            }
            match self.rule.pass(self.base.next()?) {
                Step::Yield(x) => return Some(x),
                Step::Skip => continue,
                Step::Stop => self.stopped = true,
            }
        }
    }
}

// Relaxed orderings below: each flag or counter is only a decision shared by the pieces; the
// items themselves travel through the engine's own synchronisation.

/// [`ParallelIterator::while_some`]'s rule: `Some(x)` yields `x`; a `None` stops every piece.
#[doc(hidden)]
#[derive(Debug, Default)]
pub struct WhileSomeRule(AtomicBool);

impl<T: Send> Rule<Option<T>> for WhileSomeRule {
    type Out = T;
    fn pass(&self, item: Option<T>) -> Step<T> {
        match item {
            Some(x) => Step::Yield(x),
            None => {
                self.0.store(true, Ordering::Relaxed);
                Step::Stop
            }
        }
    }
    fn done(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

// A rule is cloned only before its run starts (the run moves it into an `Arc`): a clone keeps
// the settings and starts with fresh state.
impl Clone for WhileSomeRule {
    fn clone(&self) -> Self {
        WhileSomeRule::default()
    }
}
impl Clone for TakeAnyRule {
    fn clone(&self) -> Self {
        TakeAnyRule {
            n: self.n,
            taken: AtomicUsize::new(0),
        }
    }
}
impl Clone for SkipAnyRule {
    fn clone(&self) -> Self {
        SkipAnyRule {
            n: self.n,
            skipped: AtomicUsize::new(0),
        }
    }
}
impl<P: Clone> Clone for TakeAnyWhileRule<P> {
    fn clone(&self) -> Self {
        TakeAnyWhileRule {
            pred: self.pred.clone(),
            stop: AtomicBool::new(false),
        }
    }
}
impl<P: Clone> Clone for SkipAnyWhileRule<P> {
    fn clone(&self) -> Self {
        SkipAnyWhileRule {
            pred: self.pred.clone(),
            found: AtomicBool::new(false),
        }
    }
}

/// [`ParallelIterator::take_any`]'s rule: the first `n` items to arrive pass.
#[doc(hidden)]
#[derive(Debug)]
pub struct TakeAnyRule {
    n: usize,
    taken: AtomicUsize,
}

impl<T: Send> Rule<T> for TakeAnyRule {
    type Out = T;
    fn pass(&self, item: T) -> Step<T> {
        if self.taken.fetch_add(1, Ordering::Relaxed) < self.n {
            Step::Yield(item)
        } else {
            Step::Stop
        }
    }
    fn done(&self) -> bool {
        self.taken.load(Ordering::Relaxed) >= self.n
    }
}

/// [`ParallelIterator::skip_any`]'s rule: the first `n` items to arrive are dropped.
#[doc(hidden)]
#[derive(Debug)]
pub struct SkipAnyRule {
    n: usize,
    skipped: AtomicUsize,
}

impl<T: Send> Rule<T> for SkipAnyRule {
    type Out = T;
    fn pass(&self, item: T) -> Step<T> {
        if self.skipped.load(Ordering::Relaxed) >= self.n
            || self.skipped.fetch_add(1, Ordering::Relaxed) >= self.n
        {
            Step::Yield(item)
        } else {
            Step::Skip
        }
    }
}

/// [`ParallelIterator::take_any_while`]'s rule: items pass until one fails `pred`, in any
/// piece; then every piece stops.
#[doc(hidden)]
#[derive(Debug)]
pub struct TakeAnyWhileRule<P> {
    pred: P,
    stop: AtomicBool,
}

impl<T: Send, P: Fn(&T) -> bool + Send + Sync> Rule<T> for TakeAnyWhileRule<P> {
    type Out = T;
    fn pass(&self, item: T) -> Step<T> {
        if (self.pred)(&item) {
            Step::Yield(item)
        } else {
            self.stop.store(true, Ordering::Relaxed);
            Step::Stop
        }
    }
    fn done(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// [`ParallelIterator::skip_any_while`]'s rule: items are dropped while they satisfy `pred`,
/// until one fails it, in any piece; from then on every item passes.
#[doc(hidden)]
#[derive(Debug)]
pub struct SkipAnyWhileRule<P> {
    pred: P,
    found: AtomicBool,
}

impl<T: Send, P: Fn(&T) -> bool + Send + Sync> Rule<T> for SkipAnyWhileRule<P> {
    type Out = T;
    fn pass(&self, item: T) -> Step<T> {
        if self.found.load(Ordering::Relaxed) || !(self.pred)(&item) {
            self.found.store(true, Ordering::Relaxed);
            Step::Yield(item)
        } else {
            Step::Skip
        }
    }
}

/// The iterator of [`ParallelIterator::while_some`].
pub type WhileSome<I> = Unordered<I, WhileSomeRule>;
/// The iterator of [`ParallelIterator::take_any`].
pub type TakeAny<I> = Unordered<I, TakeAnyRule>;
/// The iterator of [`ParallelIterator::skip_any`].
pub type SkipAny<I> = Unordered<I, SkipAnyRule>;
/// The iterator of [`ParallelIterator::take_any_while`].
pub type TakeAnyWhile<I, P> = Unordered<I, TakeAnyWhileRule<P>>;
/// The iterator of [`ParallelIterator::skip_any_while`].
pub type SkipAnyWhile<I, P> = Unordered<I, SkipAnyWhileRule<P>>;

pub(super) fn while_some<I>(base: I) -> WhileSome<I> {
    Unordered::new(base, WhileSomeRule::default())
}
pub(super) fn take_any<I>(base: I, n: usize) -> TakeAny<I> {
    let taken = AtomicUsize::new(0);
    Unordered::new(base, TakeAnyRule { n, taken })
}
pub(super) fn skip_any<I>(base: I, n: usize) -> SkipAny<I> {
    let skipped = AtomicUsize::new(0);
    Unordered::new(base, SkipAnyRule { n, skipped })
}
pub(super) fn take_any_while<I, P>(base: I, pred: P) -> TakeAnyWhile<I, P> {
    let stop = AtomicBool::new(false);
    Unordered::new(base, TakeAnyWhileRule { pred, stop })
}
pub(super) fn skip_any_while<I, P>(base: I, pred: P) -> SkipAnyWhile<I, P> {
    let found = AtomicBool::new(false);
    Unordered::new(base, SkipAnyWhileRule { pred, found })
}

/// The iterator of [`IndexedParallelIterator::positions`]: the indices of the items for which
/// `pred` holds, in order.
///
/// ```
/// use threadlab::prelude::*;
/// let v: Vec<usize> = [5, 8, 2, 8].par_iter().positions(|x| *x == 8).collect();
/// assert_eq!(v, [1, 3]);
/// ```
pub struct Positions<I, P> {
    base: I,
    pred: Arc<P>,
}

impl<I: std::fmt::Debug, P> std::fmt::Debug for Positions<I, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        super::debug::base_only(f, "Positions", &self.base)
    }
}

impl<I: Clone, P> Clone for Positions<I, P> {
    fn clone(&self) -> Self {
        Positions {
            base: self.base.clone(),
            pred: Arc::clone(&self.pred),
        }
    }
}

impl<I, P> Positions<I, P> {
    pub(super) fn new(base: I, pred: P) -> Self {
        Positions {
            base,
            pred: Arc::new(pred),
        }
    }
}

impl<I: IndexedParallelIterator, P> ParallelIterator for Positions<I, P>
where
    P: Fn(I::Item) -> bool + Sync + Send,
{
    type Item = usize;
    type Producer = Shared<Enumerate<I::Producer>, P, Pos>;
    fn into_producer(self) -> Self::Producer {
        Shared::new(Enumerate::new(self.base.into_producer()), self.pred)
    }
}

/// The [`Part`] of [`Positions`]: the predicate, over the enumerated base.
#[doc(hidden)]
#[derive(Debug)]
pub enum Pos {}

impl<P: Producer, F> Part<Enumerate<P>, Pos> for F
where
    F: Fn(P::Item) -> bool + Sync + Send,
{
    type Item = usize;
    type Iter<'s>
        = PositionsIter<'s, <Enumerate<P> as Producer>::Iter<'s>, F>
    where
        P: 's,
        F: 's;
    fn block<'s>(&'s self, base: <Enumerate<P> as Producer>::Iter<'s>) -> Self::Iter<'s> {
        PositionsIter { base, pred: self }
    }
}

/// A block of [`Positions`].
#[doc(hidden)]
#[derive(Debug)]
pub struct PositionsIter<'s, It, F> {
    base: It,
    pred: &'s F,
}

impl<T, It: Iterator<Item = (usize, T)>, F: Fn(T) -> bool> Iterator for PositionsIter<'_, It, F> {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        self.base.find_map(|(i, x)| (self.pred)(x).then_some(i))
    }
}
