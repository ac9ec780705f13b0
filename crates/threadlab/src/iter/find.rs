//! The ordered searches `find_first` and `find_last`.
//!
//! `find_first` is a consumer of the engine's (`drive.rs`): a piece keeps the first match of its
//! own positions and stops there (nothing later in it can win); pieces reduce left to right, so
//! the left piece's match wins. `find_last` runs the other way, its own loop here: a piece takes
//! its blocks from its *right* end, so the first block that holds a match holds the piece's last
//! one, and the search of that piece ends there; at a beat it keeps the right half of what is
//! left and publishes the left half. So a `find_last` over a range too long to scan
//! (`0..u64::MAX`) looks at its last positions first, and one over a `flat_map` opens the last
//! outer item's inner iterator and searches it from its end.
//!
//! Pieces to the left of a match need not run: each piece holds a range of boundaries, cut in
//! two at every split (the left half to the left piece), and a shared word holds the best
//! boundary found so far: the smallest lower bound of a piece that matched (`find_first`), or
//! the largest upper bound (`find_last`). A piece whose bound is beaten stops between blocks and
//! is not split (Rayon's `find_first`/`find_last` consumers keep the same word).

use super::drive::{on_worker, Consumer, Producer};
use crate::heartbeat::LOOP_SPACING;
use crate::pool::worker::WorkerThread;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The first item of the piece for which `pred` holds.
pub(crate) struct FindFirst<'f, T, P> {
    item: Option<T>,
    pred: &'f P,
    /// The smallest lower bound of a piece that matched (see the module doc).
    best: &'f AtomicUsize,
    /// This piece's boundaries: `lo..hi`.
    lo: usize,
    hi: usize,
}

impl<'f, T, P> FindFirst<'f, T, P> {
    /// A search with no match yet, over the whole run; `best` starts at `usize::MAX`.
    pub(crate) fn new(pred: &'f P, best: &'f AtomicUsize) -> Self {
        FindFirst {
            item: None,
            pred,
            best,
            lo: 0,
            hi: usize::MAX,
        }
    }
}

impl<T: Send, P: Fn(&T) -> bool + Sync> Consumer<T> for FindFirst<'_, T, P> {
    type Result = Option<T>;
    type Reducer = fn(Option<T>, Option<T>) -> Option<T>;
    fn consume_iter<I: Iterator<Item = T>>(&mut self, mut iter: I) {
        if self.item.is_none() {
            self.item = iter.find(|x| (self.pred)(x));
            if self.item.is_some() {
                // Relaxed: a hint for the other pieces to stop early; the items themselves
                // travel back through the joins, which synchronise.
                self.best.fetch_min(self.lo, Ordering::Relaxed);
            }
        }
    }
    fn full(&self) -> bool {
        // Relaxed: see `consume_iter`; a late read costs one more block.
        self.item.is_some() || self.best.load(Ordering::Relaxed) < self.lo
    }
    fn split_off(&mut self, _left: usize) -> Self {
        // The right piece's lower bound differs from ours for as long as the range allows.
        let mid = self.lo + (self.hi - self.lo).div_ceil(2);
        let right = FindFirst {
            item: None,
            pred: self.pred,
            best: self.best,
            lo: mid,
            hi: self.hi,
        };
        self.hi = mid;
        right
    }
    fn finish(self) -> Option<T> {
        self.item
    }
    fn reducer(&self) -> Self::Reducer {
        |l, r| l.or(r)
    }
}

/// `find_last`: the last item of `p` for which `pred` holds (see the module doc), on the
/// current pool.
pub(crate) fn find_last<Q, P>(p: Q, pred: &P) -> Option<Q::Item>
where
    Q: Producer,
    Q::Item: Send,
    P: Fn(&Q::Item) -> bool + Sync,
{
    let best = AtomicUsize::new(0);
    on_worker(|w| last_in(w, p, pred, &best, 0, usize::MAX))
}

/// The last match in `p`, whose boundaries are `lo..hi`, searched from its right end on `w`.
fn last_in<Q, P>(
    w: &WorkerThread,
    mut p: Q,
    pred: &P,
    best: &AtomicUsize,
    lo: usize,
    hi: usize,
) -> Option<Q::Item>
where
    Q: Producer,
    Q::Item: Send,
    P: Fn(&Q::Item) -> bool + Sync,
{
    let hb = w.heartbeat();
    let mut block = p.min_len().max(1);
    loop {
        // Relaxed, as in `FindFirst`: a piece to the right matched, so nothing here can win.
        if best.load(Ordering::Relaxed) > hi {
            return None;
        }
        let len = p.len();
        if len == 0 {
            return None;
        }
        if len >= 2
            && len >= p.min_len().saturating_mul(2)
            && hb.wanted()
            && hb.poll(LOOP_SPACING, || w.registry().idle_exists())
        {
            // Keep the right half (searched first), publish the left one.
            let (left, right) = p.split_at(len / 2);
            let mid = lo + (hi - lo) / 2;
            let (r, l) = crate::join::join_promoted(
                w,
                || last_in(w, right, pred, best, mid, hi),
                move || {
                    let thief = WorkerThread::current().expect("find_last: runs on a worker");
                    last_in(thief, left, pred, best, lo, mid)
                },
            );
            return r.or(l);
        }
        let n = len.min(block);
        block = (block * 2).min(super::drive::BLOCK.max(p.min_len()));
        let (rest, tail) = p.split_at(len - n);
        p = rest;
        if let Some(x) = last_in_tail(w, tail, n, pred, best, lo, hi) {
            best.fetch_max(hi, Ordering::Relaxed);
            return Some(x);
        }
    }
}

/// The last match among `tail`'s `n` positions: its block, and, if taking the block opened
/// more positions (a `flat_map`'s inner iterator), those, which come after the block's items.
fn last_in_tail<Q, P>(
    w: &WorkerThread,
    mut tail: Q,
    n: usize,
    pred: &P,
    best: &AtomicUsize,
    lo: usize,
    hi: usize,
) -> Option<Q::Item>
where
    Q: Producer,
    Q::Item: Send,
    P: Fn(&Q::Item) -> bool + Sync,
{
    let in_block = tail.take(n).filter(|x| pred(x)).last();
    if tail.len() > 0 {
        if let Some(x) = last_in(w, tail, pred, best, lo, hi) {
            return Some(x);
        }
    }
    in_block
}
