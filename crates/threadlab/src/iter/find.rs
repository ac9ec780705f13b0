//! The ordered searches `find_first` and `find_last`. A piece keeps the first (last) match of
//! its own positions; pieces reduce left to right, so the left piece's match wins for
//! `find_first` and the right piece's for `find_last`. A piece that found its first match
//! stops (nothing later in it can win); a piece looking for the last match scans to its end.
//! One consumer serves both, the direction a constant, so each search compiles to its own
//! branch-free code.

use super::drive::Consumer;

/// The first (`LAST` false) or last (`LAST` true) item of the piece for which `pred` holds.
pub(crate) struct Find<'f, T, P, const LAST: bool> {
    item: Option<T>,
    pred: &'f P,
}

/// `find_first`: the first item of the piece for which `pred` holds.
pub(crate) type FindFirst<'f, T, P> = Find<'f, T, P, false>;
/// `find_last`: the last item of the piece for which `pred` holds.
pub(crate) type FindLast<'f, T, P> = Find<'f, T, P, true>;

impl<'f, T, P, const LAST: bool> Find<'f, T, P, LAST> {
    /// A search with no match yet.
    pub(crate) fn new(pred: &'f P) -> Self {
        Find { item: None, pred }
    }
}

impl<T: Send, P: Fn(&T) -> bool + Sync, const LAST: bool> Consumer<T> for Find<'_, T, P, LAST> {
    type Result = Option<T>;
    type Reducer = fn(Option<T>, Option<T>) -> Option<T>;
    fn consume_iter<I: Iterator<Item = T>>(&mut self, mut iter: I) {
        if LAST {
            if let Some(x) = iter.filter(|x| (self.pred)(x)).last() {
                self.item = Some(x);
            }
        } else if self.item.is_none() {
            self.item = iter.find(|x| (self.pred)(x));
        }
    }
    fn full(&self) -> bool {
        // Only the first match is final: a later block may hold a later one.
        !LAST && self.item.is_some()
    }
    fn split_off(&mut self, _left: usize) -> Self {
        Find::new(self.pred)
    }
    fn finish(self) -> Option<T> {
        self.item
    }
    fn reducer(&self) -> Self::Reducer {
        if LAST {
            |l, r| r.or(l)
        } else {
            |l, r| l.or(r)
        }
    }
}
