//! The consumers: what each terminal method of [`super::ParallelIterator`] folds its blocks
//! into, and how the results of neighbouring pieces combine (always left before right, so
//! `min` keeps the first of equal elements and `max` the last, as `std`'s do).

use super::drive::{Consumer, Reducer};
use std::cmp::Ordering as CmpOrdering;
use std::iter::{Product, Sum};
use std::sync::atomic::{AtomicBool, Ordering};

/// Combines two results with a plain function.
impl<R> Reducer<R> for fn(R, R) -> R {
    fn reduce(self, left: R, right: R) -> R {
        self(left, right)
    }
}

/// `for_each`: calls the closure on every item.
pub(crate) struct ForEach<'f, F> {
    pub(crate) f: &'f F,
}

impl<T, F: Fn(T) + Sync> Consumer<T> for ForEach<'_, F> {
    type Result = ();
    type Reducer = fn((), ()) -> ();
    #[inline]
    fn consume_iter<I: Iterator<Item = T>>(&mut self, iter: I) {
        iter.for_each(self.f);
    }
    fn split_off(&mut self, _left: usize) -> Self {
        ForEach { f: self.f }
    }
    fn finish(self) {}
    fn reducer(&self) -> Self::Reducer {
        |(), ()| ()
    }
}

/// `fold(identity, fold_op)` followed by `reduce(reduce_identity, reduce_op)` (plain `reduce`
/// is this with `fold_op == reduce_op`). Each piece starts from its own `identity()`.
pub(crate) struct FoldReduce<'f, A, ID, F, R> {
    pub(crate) acc: Option<A>,
    pub(crate) identity: &'f ID,
    pub(crate) fold_op: &'f F,
    pub(crate) reduce_op: &'f R,
}

impl<'f, T, A, ID, F, R> Consumer<T> for FoldReduce<'f, A, ID, F, R>
where
    A: Send,
    ID: Fn() -> A + Sync,
    F: Fn(A, T) -> A + Sync,
    R: Fn(A, A) -> A + Sync,
{
    type Result = A;
    type Reducer = RefReducer<'f, R>;
    #[inline]
    fn consume_iter<I: Iterator<Item = T>>(&mut self, iter: I) {
        let acc = self.acc.take().unwrap_or_else(self.identity);
        self.acc = Some(iter.fold(acc, self.fold_op));
    }
    fn split_off(&mut self, _left: usize) -> Self {
        FoldReduce { acc: None, ..*self }
    }
    fn finish(self) -> A {
        self.acc.unwrap_or_else(self.identity)
    }
    fn reducer(&self) -> Self::Reducer {
        RefReducer(self.reduce_op)
    }
}

/// A reducer borrowing the user's closure.
pub(crate) struct RefReducer<'f, R>(&'f R);

impl<A, R: Fn(A, A) -> A> Reducer<A> for RefReducer<'_, R> {
    fn reduce(self, left: A, right: A) -> A {
        (self.0)(left, right)
    }
}

/// `sum` and `product`: folds with `Sum` (`PRODUCT == false`) or `Product`.
pub(crate) struct Arith<S, const PRODUCT: bool> {
    pub(crate) acc: Option<S>,
}

fn add<S: Sum<S>>(a: S, b: S) -> S {
    [a, b].into_iter().sum()
}

fn mul<S: Product<S>>(a: S, b: S) -> S {
    [a, b].into_iter().product()
}

impl<T, S> Consumer<T> for Arith<S, false>
where
    S: Sum<T> + Sum<S> + Send,
{
    type Result = S;
    type Reducer = fn(S, S) -> S;
    #[inline]
    fn consume_iter<I: Iterator<Item = T>>(&mut self, iter: I) {
        let part: S = iter.sum();
        self.acc = Some(match self.acc.take() {
            Some(a) => add(a, part),
            None => part,
        });
    }
    fn split_off(&mut self, _left: usize) -> Self {
        Arith { acc: None }
    }
    fn finish(self) -> S {
        self.acc
            .unwrap_or_else(|| std::iter::empty::<S>().sum::<S>())
    }
    fn reducer(&self) -> Self::Reducer {
        add::<S>
    }
}

impl<T, S> Consumer<T> for Arith<S, true>
where
    S: Product<T> + Product<S> + Send,
{
    type Result = S;
    type Reducer = fn(S, S) -> S;
    #[inline]
    fn consume_iter<I: Iterator<Item = T>>(&mut self, iter: I) {
        let part: S = iter.product();
        self.acc = Some(match self.acc.take() {
            Some(a) => mul(a, part),
            None => part,
        });
    }
    fn split_off(&mut self, _left: usize) -> Self {
        Arith { acc: None }
    }
    fn finish(self) -> S {
        self.acc
            .unwrap_or_else(|| std::iter::empty::<S>().product::<S>())
    }
    fn reducer(&self) -> Self::Reducer {
        mul::<S>
    }
}

/// `min_by` (`MAX == false`) and `max_by`.
pub(crate) struct Extreme<'f, T, F, const MAX: bool> {
    pub(crate) acc: Option<T>,
    pub(crate) cmp: &'f F,
}

/// Of `left` and `right` (in that order), the min (first on ties) or the max (last on ties).
#[inline]
fn pick<T, F: Fn(&T, &T) -> CmpOrdering, const MAX: bool>(cmp: &F, left: T, right: T) -> T {
    let right_wins = if MAX {
        cmp(&right, &left) != CmpOrdering::Less
    } else {
        cmp(&right, &left) == CmpOrdering::Less
    };
    if right_wins {
        right
    } else {
        left
    }
}

impl<'f, T: Send, F: Fn(&T, &T) -> CmpOrdering + Sync, const MAX: bool> Consumer<T>
    for Extreme<'f, T, F, MAX>
{
    type Result = Option<T>;
    type Reducer = ExtremeReducer<'f, F, MAX>;
    #[inline]
    fn consume_iter<I: Iterator<Item = T>>(&mut self, iter: I) {
        let cmp = self.cmp;
        self.acc = iter.fold(self.acc.take(), |acc, x| match acc {
            None => Some(x),
            Some(a) => Some(pick::<T, F, MAX>(cmp, a, x)),
        });
    }
    fn split_off(&mut self, _left: usize) -> Self {
        Extreme {
            acc: None,
            cmp: self.cmp,
        }
    }
    fn finish(self) -> Option<T> {
        self.acc
    }
    fn reducer(&self) -> Self::Reducer {
        ExtremeReducer(self.cmp)
    }
}

/// Combines the extremes of two neighbouring pieces.
pub(crate) struct ExtremeReducer<'f, F, const MAX: bool>(&'f F);

impl<T, F: Fn(&T, &T) -> CmpOrdering, const MAX: bool> Reducer<Option<T>>
    for ExtremeReducer<'_, F, MAX>
{
    fn reduce(self, left: Option<T>, right: Option<T>) -> Option<T> {
        match (left, right) {
            (Some(l), Some(r)) => Some(pick::<T, F, MAX>(self.0, l, r)),
            (l, r) => l.or(r),
        }
    }
}

/// `find_any` (and `any`, `all`, `position_any` on top): stops every piece once one found.
pub(crate) struct FindAny<'f, T, P> {
    pub(crate) found: &'f AtomicBool,
    pub(crate) pred: &'f P,
    pub(crate) item: Option<T>,
}

impl<T: Send, P: Fn(&T) -> bool + Sync> Consumer<T> for FindAny<'_, T, P> {
    type Result = Option<T>;
    type Reducer = fn(Option<T>, Option<T>) -> Option<T>;
    #[inline]
    fn consume_iter<I: Iterator<Item = T>>(&mut self, mut iter: I) {
        if let Some(x) = iter.find(self.pred) {
            self.item = Some(x);
            // Relaxed: a hint for the other pieces to stop early; the item itself travels
            // back through the join, which synchronises.
            self.found.store(true, Ordering::Relaxed);
        }
    }
    fn full(&self) -> bool {
        // Relaxed: see the store above; a late read only costs one more block.
        self.item.is_some() || self.found.load(Ordering::Relaxed)
    }
    fn split_off(&mut self, _left: usize) -> Self {
        FindAny {
            found: self.found,
            pred: self.pred,
            item: None,
        }
    }
    fn finish(self) -> Option<T> {
        self.item
    }
    fn reducer(&self) -> Self::Reducer {
        |l, r| l.or(r)
    }
}
