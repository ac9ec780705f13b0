//! Generated sources: [`empty`], [`once`], [`repeat`], [`repeat_n`], [`split`] and the tree
//! walks [`walk_tree_prefix`] / [`walk_tree_postfix`].
//!
//! `repeat` and `repeat_n` are producers of their own (a block is `std::iter::repeat_n` of a
//! clone). `split` and the tree walks find their pieces by a sequential pass first and then
//! run the pipeline over them: `split` divides its data breadth-first until there are sixteen
//! pieces per worker or none divides further (Rayon divides adaptively, as workers steal; the
//! items, pieces of the data in order, are the same kind of answer), so the pieces' bodies
//! run in parallel while the divisions, cheap by design (halving a range), run on one worker.

use super::drive::Producer;
use super::owned::IntoIter;
use super::{IndexedParallelIterator, ParallelIterator};
use std::collections::VecDeque;

/// No items.
///
/// ```
/// use threadlab::prelude::*;
/// assert_eq!(threadlab::iter::empty::<u32>().sum::<u32>(), 0);
/// ```
pub fn empty<T: Send>() -> IntoIter<T> {
    IntoIter::from(Vec::new())
}

/// One item.
///
/// ```
/// use threadlab::prelude::*;
/// assert_eq!(threadlab::iter::once(7).collect::<Vec<_>>(), [7]);
/// ```
pub fn once<T: Send>(item: T) -> IntoIter<T> {
    IntoIter::from(vec![item])
}

/// `item` repeated `n` times (clones of it).
///
/// ```
/// use threadlab::prelude::*;
/// assert_eq!(threadlab::iter::repeat_n('x', 3).collect::<String>(), "xxx");
/// ```
pub fn repeat_n<T: Clone + Send>(item: T, n: usize) -> RepeatN<T> {
    // With no repetition the item is dropped at once (as `std::iter::repeat_n` drops it).
    RepeatN {
        item: (n > 0).then_some(item),
        n,
    }
}

/// `item` repeated without end: bound it with `take` or `zip`.
///
/// ```
/// use threadlab::prelude::*;
/// let v: Vec<(u8, char)> = (0u8..3).into_par_iter().zip(threadlab::iter::repeat('a')).collect();
/// assert_eq!(v, [(0, 'a'), (1, 'a'), (2, 'a')]);
/// ```
pub fn repeat<T: Clone + Send>(item: T) -> RepeatN<T> {
    RepeatN {
        item: Some(item),
        n: usize::MAX,
    }
}

/// The iterator of [`repeat_n`] and [`repeat`].
///
/// Its clones are those of `std::iter::repeat_n`, as Rayon's are: `n` items cost `n - 1` clones (the
/// item itself is the last), plus one for each piece split off (whose last item is that clone);
/// a piece's block that ends before the piece does clones the item for itself.
///
/// ```
/// use threadlab::prelude::*;
/// assert_eq!(threadlab::iter::repeat_n(2u32, 4).sum::<u32>(), 8);
/// ```
#[derive(Debug, Clone)]
pub struct RepeatN<T> {
    /// `None` once handed out (or when `n` is 0).
    item: Option<T>,
    n: usize,
}

impl<T: Clone + Send> Producer for RepeatN<T> {
    type Item = T;
    type Iter<'s>
        = Repeated<T>
    where
        Self: 's;
    fn len(&self) -> usize {
        self.n
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let rest = self.n - mid;
        let left = RepeatN {
            item: if mid > 0 { self.item.clone() } else { None },
            n: mid,
        };
        let right = RepeatN {
            item: if rest > 0 { self.item } else { None },
            n: rest,
        };
        (left, right)
    }
    fn take(&mut self, n: usize) -> Self::Iter<'_> {
        // The last block takes the item itself; an earlier one a clone of it.
        let item = if n == self.n {
            self.item.take()
        } else {
            self.item.clone()
        };
        self.n -= n;
        Repeated { item, n }
    }
}

/// A block of [`RepeatN`]: `n` times the item, cloned for all but the last, which is the item
/// itself; skipping items (`nth`, as `step_by` does) clones nothing (`std::iter::repeat_n`'s
/// behaviour, written here for the crate's minimum Rust version).
#[derive(Debug)]
pub struct Repeated<T> {
    item: Option<T>,
    n: usize,
}

impl<T: Clone> Iterator for Repeated<T> {
    type Item = T;
    #[inline]
    fn next(&mut self) -> Option<T> {
        match self.n {
            0 => None,
            1 => {
                self.n = 0;
                self.item.take()
            }
            _ => {
                self.n -= 1;
                self.item.clone()
            }
        }
    }
    fn nth(&mut self, skip: usize) -> Option<T> {
        if skip >= self.n {
            self.n = 0;
            self.item = None;
            return None;
        }
        self.n -= skip;
        self.next()
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.n, Some(self.n))
    }
}

impl<T: Clone> ExactSizeIterator for Repeated<T> {}

impl<T: Clone + Send> ParallelIterator for RepeatN<T> {
    type Item = T;
    type Producer = Self;
    fn into_producer(self) -> Self {
        self
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.n)
    }
}
impl<T: Clone + Send> IndexedParallelIterator for RepeatN<T> {
    fn len(&self) -> usize {
        self.n
    }
}

/// The pieces of `data`: `splitter` divides a piece in two (`(a, Some(b))`) or says it is
/// whole (`(a, None)`); the items are the pieces, in order.
///
/// ```
/// use threadlab::prelude::*;
/// let pieces = threadlab::iter::split(0..1000u32, |r| {
///     if r.len() < 10 { (r, None) } else { let m = (r.start + r.end) / 2; (r.start..m, Some(m..r.end)) }
/// });
/// assert_eq!(pieces.map(|r| r.sum::<u32>()).sum::<u32>(), (0..1000).sum());
/// ```
pub fn split<D, S>(data: D, splitter: S) -> IntoIter<D>
where
    D: Send,
    S: Fn(D) -> (D, Option<D>) + Sync + Send,
{
    let want = 16 * crate::global::current_registry().num_threads().max(1);
    // Pieces still divisible, and whole ones, in order.
    let mut pieces: VecDeque<(D, bool)> = VecDeque::from([(data, true)]);
    loop {
        let open = pieces.iter().filter(|p| p.1).count();
        if open == 0 || pieces.len() >= want {
            break;
        }
        let mut next = VecDeque::with_capacity(pieces.len() * 2);
        for (d, divisible) in pieces {
            if !divisible {
                next.push_back((d, false));
                continue;
            }
            match splitter(d) {
                (a, Some(b)) => {
                    next.push_back((a, true));
                    next.push_back((b, true));
                }
                (a, None) => next.push_back((a, false)),
            }
        }
        pieces = next;
    }
    IntoIter::gather(pieces.into_iter().map(|p| p.0))
}

/// Every node of the tree under `root`, parents before children (depth first, children in
/// the order `children` gives them).
///
/// ```
/// use threadlab::prelude::*;
/// let v: Vec<u32> = threadlab::iter::walk_tree_prefix(1u32, |&n| if n < 4 { vec![2 * n, 2 * n + 1] } else { vec![] }).collect();
/// assert_eq!(v, [1, 2, 4, 5, 3, 6, 7]);
/// ```
pub fn walk_tree_prefix<S, B, I>(root: S, children: B) -> IntoIter<S>
where
    S: Send,
    B: Fn(&S) -> I + Send + Sync,
    I: IntoIterator<Item = S>,
{
    let mut out = Vec::new();
    // A stack of reversed child lists, so the first child is visited first.
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        let kids: Vec<S> = children(&node).into_iter().collect();
        out.push(node);
        stack.extend(kids.into_iter().rev());
    }
    out.into()
}

/// Every node of the tree under `root`, children before parents.
///
/// ```
/// use threadlab::prelude::*;
/// let v: Vec<u32> = threadlab::iter::walk_tree_postfix(1u32, |&n| if n < 4 { vec![2 * n, 2 * n + 1] } else { vec![] }).collect();
/// assert_eq!(v, [4, 5, 2, 6, 7, 3, 1]);
/// ```
pub fn walk_tree_postfix<S, B, I>(root: S, children: B) -> IntoIter<S>
where
    S: Send,
    B: Fn(&S) -> I + Send + Sync,
    I: IntoIterator<Item = S>,
{
    fn visit<S, B: Fn(&S) -> I, I: IntoIterator<Item = S>>(n: S, b: &B, out: &mut Vec<S>) {
        for k in b(&n) {
            visit(k, b, out);
        }
        out.push(n);
    }
    let mut out = Vec::new();
    visit(root, &children, &mut out);
    out.into()
}

/// `walk_tree`: Rayon's name for the prefix walk.
///
/// ```
/// use threadlab::prelude::*;
/// assert_eq!(threadlab::iter::walk_tree(0u8, |_| Vec::new()).count(), 1);
/// ```
pub fn walk_tree<S, B, I>(root: S, children: B) -> IntoIter<S>
where
    S: Send,
    B: Fn(&S) -> I + Send + Sync,
    I: IntoIterator<Item = S>,
{
    walk_tree_prefix(root, children)
}
