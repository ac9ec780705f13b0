//! The ordered searches `find_first` and `find_last`. A piece keeps the first (last) match of
//! its own positions; pieces reduce left to right, so the left piece's match wins for
//! `find_first` and the right piece's for `find_last`. A piece that found its first match
//! stops (nothing later in it can win); a piece looking for the last match scans to its end.

use super::drive::Consumer;

/// `find_first`: the first item of the piece for which `pred` holds.
pub(crate) struct FindFirst<'f, T, P> {
    pub(crate) item: Option<T>,
    pub(crate) pred: &'f P,
}

impl<T: Send, P: Fn(&T) -> bool + Sync> Consumer<T> for FindFirst<'_, T, P> {
    type Result = Option<T>;
    type Reducer = fn(Option<T>, Option<T>) -> Option<T>;
    fn consume_iter<I: Iterator<Item = T>>(&mut self, mut iter: I) {
        if self.item.is_none() {
            self.item = iter.find(|x| (self.pred)(x));
        }
    }
    fn full(&self) -> bool {
        self.item.is_some()
    }
    fn split_off(&mut self, _left: usize) -> Self {
        FindFirst {
            item: None,
            pred: self.pred,
        }
    }
    fn finish(self) -> Option<T> {
        self.item
    }
    fn reducer(&self) -> Self::Reducer {
        |l, r| l.or(r)
    }
}

/// `find_last`: the last item of the piece for which `pred` holds.
pub(crate) struct FindLast<'f, T, P> {
    pub(crate) item: Option<T>,
    pub(crate) pred: &'f P,
}

impl<T: Send, P: Fn(&T) -> bool + Sync> Consumer<T> for FindLast<'_, T, P> {
    type Result = Option<T>;
    type Reducer = fn(Option<T>, Option<T>) -> Option<T>;
    fn consume_iter<I: Iterator<Item = T>>(&mut self, iter: I) {
        if let Some(x) = iter.filter(|x| (self.pred)(x)).last() {
            self.item = Some(x);
        }
    }
    fn split_off(&mut self, _left: usize) -> Self {
        FindLast {
            item: None,
            pred: self.pred,
        }
    }
    fn finish(self) -> Option<T> {
        self.item
    }
    fn reducer(&self) -> Self::Reducer {
        |l, r| r.or(l)
    }
}
