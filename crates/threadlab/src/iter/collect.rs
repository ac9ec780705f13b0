//! `collect` into a `Vec` in order, and `unzip`/`partition` on top of it.
//!
//! A pipeline without filtering (every position yields one item) collects in place: see
//! [`collect_exact`]. Otherwise each piece of the run pushes its items into its own `Vec` (reserved for all its positions
//! when the pipeline does not filter); neighbouring pieces' lists are linked left to right, and
//! the end result is the single `Vec` when nobody split, else the concatenation. Every item is
//! owned by exactly one `Vec` from the moment it is produced, so a panic anywhere drops each
//! produced item once (the lists unwind with their pieces) and never twice.

use super::drive::Consumer;
use super::ParallelIterator;
use std::collections::LinkedList;

/// Collects a parallel iterator, keeping its order (as `Vec`'s `FromIterator`).
///
/// ```
/// use threadlab::prelude::*;
/// let v: Vec<u32> = (0u32..4).into_par_iter().map(|x| x * x).collect();
/// assert_eq!(v, [0, 1, 4, 9]);
/// ```
pub trait FromParallelIterator<T: Send> {
    /// Builds `Self` from the items of `iter`, in order.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// use threadlab::iter::FromParallelIterator;
    /// let v = Vec::from_par_iter((0u8..3).into_par_iter());
    /// assert_eq!(v, [0, 1, 2]);
    /// ```
    fn from_par_iter<I: ParallelIterator<Item = T>>(iter: I) -> Self;
}

impl<T: Send> FromParallelIterator<T> for Vec<T> {
    fn from_par_iter<I: ParallelIterator<Item = T>>(iter: I) -> Vec<T> {
        collect_producer(iter.into_producer())
    }
}

/// The items of producer `p`, in order, run in parallel.
pub(crate) fn collect_producer<T: Send, P: super::drive::Producer<Item = T>>(p: P) -> Vec<T> {
    if p.exact() {
        return collect_exact(p);
    }
    concat(super::drive::drive(p, VecConsumer { vec: Vec::new() }))
}

/// One `Vec` from the pieces' lists, in order.
pub(crate) fn concat<T>(mut list: LinkedList<Vec<T>>) -> Vec<T> {
    if list.len() == 1 {
        return list.pop_front().expect("concat: one element");
    }
    let mut out = Vec::with_capacity(list.iter().map(Vec::len).sum());
    for mut v in list {
        out.append(&mut v);
    }
    out
}

/// A piece's items, in order.
pub(crate) struct VecConsumer<T> {
    vec: Vec<T>,
}

impl<T: Send> Consumer<T> for VecConsumer<T> {
    type Result = LinkedList<Vec<T>>;
    type Reducer = fn(LinkedList<Vec<T>>, LinkedList<Vec<T>>) -> LinkedList<Vec<T>>;
    #[inline]
    fn consume_iter<I: Iterator<Item = T>>(&mut self, iter: I) {
        self.vec.extend(iter);
    }
    fn split_off(&mut self, _left: usize) -> Self {
        VecConsumer { vec: Vec::new() }
    }
    fn finish(self) -> LinkedList<Vec<T>> {
        let mut list = LinkedList::new();
        list.push_back(self.vec);
        list
    }
    fn reducer(&self) -> Self::Reducer {
        |mut left, mut right| {
            left.append(&mut right);
            left
        }
    }
}

/// `unzip` and `partition`: two ordered lists per piece.
pub(crate) struct PairConsumer<'f, A, B, F> {
    pub(crate) left: Vec<A>,
    pub(crate) right: Vec<B>,
    /// Sends an item to one side (unzip: both).
    pub(crate) route: &'f F,
}

/// Lists of both sides.
pub(crate) type Pair<A, B> = (LinkedList<Vec<A>>, LinkedList<Vec<B>>);

impl<T, A: Send, B: Send, F> Consumer<T> for PairConsumer<'_, A, B, F>
where
    F: Fn(T, &mut Vec<A>, &mut Vec<B>) + Sync,
{
    type Result = Pair<A, B>;
    type Reducer = fn(Pair<A, B>, Pair<A, B>) -> Pair<A, B>;
    #[inline]
    fn consume_iter<I: Iterator<Item = T>>(&mut self, iter: I) {
        for x in iter {
            (self.route)(x, &mut self.left, &mut self.right);
        }
    }
    fn split_off(&mut self, _left: usize) -> Self {
        PairConsumer {
            left: Vec::new(),
            right: Vec::new(),
            route: self.route,
        }
    }
    fn finish(self) -> Pair<A, B> {
        let (mut a, mut b) = (LinkedList::new(), LinkedList::new());
        a.push_back(self.left);
        b.push_back(self.right);
        (a, b)
    }
    fn reducer(&self) -> Self::Reducer {
        |(mut la, mut lb), (mut ra, mut rb)| {
            la.append(&mut ra);
            lb.append(&mut rb);
            (la, lb)
        }
    }
}

/// `collect` of an exact pipeline: every piece writes its items straight into its own window of
/// the result's buffer (the positions it covers), so nothing is copied afterwards. As in Rayon's
/// `collect_into_vec`: each piece owns the items it wrote until its result is merged with its
/// right neighbour's, and dropping a piece or an unmerged result drops exactly its items.
pub(crate) fn collect_exact<T: Send, P: super::drive::Producer<Item = T>>(p: P) -> Vec<T> {
    let len = p.len();
    let mut vec: Vec<T> = Vec::with_capacity(len);
    let start = vec.as_mut_ptr();
    let c = WriteConsumer {
        target: start,
        cap: len,
        written: 0,
    };
    let written = super::drive::drive(p, c);
    assert!(
        std::ptr::eq(written.start, start) && written.len == len,
        "collect: the pipeline produced {} of its {len} items",
        written.len
    );
    std::mem::forget(written);
    // SAFETY: the `len` first slots were all initialised by the pieces (checked just above:
    // one merged run from the start of the buffer), and ownership passed to `vec` (the run was
    // forgotten).
    unsafe { vec.set_len(len) };
    vec
}

/// A piece of an exact `collect`: writes into `target[..cap]`.
struct WriteConsumer<T> {
    target: *mut T,
    cap: usize,
    written: usize,
}

// SAFETY: the consumer owns the `written` items at `target` (and the right to write the rest of
// its window); moving it to another thread moves that ownership, hence `T: Send`.
unsafe impl<T: Send> Send for WriteConsumer<T> {}

impl<T> Drop for WriteConsumer<T> {
    fn drop(&mut self) {
        // SAFETY: the first `written` slots of the window were initialised by this consumer and
        // not handed over (`finish` forgets `self`); a panic dropped us, so drop them here.
        unsafe {
            std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(
                self.target,
                self.written,
            ))
        };
    }
}

/// The items one or more neighbouring pieces wrote: `len` initialised slots from `start`.
pub(crate) struct Written<T> {
    start: *mut T,
    len: usize,
}

// SAFETY: as for `WriteConsumer`: owns `len` items of type `T`.
unsafe impl<T: Send> Send for Written<T> {}

impl<T> Drop for Written<T> {
    fn drop(&mut self) {
        // SAFETY: the run owns its `len` initialised items (forgotten when merged or returned).
        unsafe {
            std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(self.start, self.len))
        };
    }
}

impl<T: Send> Consumer<T> for WriteConsumer<T> {
    type Result = Written<T>;
    type Reducer = fn(Written<T>, Written<T>) -> Written<T>;
    #[inline]
    fn consume_iter<I: Iterator<Item = T>>(&mut self, iter: I) {
        for x in iter {
            assert!(
                self.written < self.cap,
                "collect: a piece produced more items than its positions"
            );
            // SAFETY: `written < cap`, so the slot is inside this consumer's window, which no
            // other piece writes, and it is still uninitialised.
            unsafe { self.target.add(self.written).write(x) };
            self.written += 1;
        }
    }
    fn split_off(&mut self, left: usize) -> Self {
        let at = (self.written + left).min(self.cap);
        let right = WriteConsumer {
            // SAFETY: `at <= cap`: within (or one past) this window.
            target: unsafe { self.target.add(at) },
            cap: self.cap - at,
            written: 0,
        };
        self.cap = at;
        right
    }
    fn finish(self) -> Written<T> {
        let out = Written {
            start: self.target,
            len: self.written,
        };
        std::mem::forget(self);
        out
    }
    fn reducer(&self) -> Self::Reducer {
        |mut left, right| {
            // SAFETY: only computes the address one past the left run, inside the buffer.
            if std::ptr::eq(unsafe { left.start.add(left.len) }, right.start) {
                left.len += right.len;
                std::mem::forget(right);
            }
            // Otherwise a piece fell short (the final length check reports it); `right` is
            // dropped with its items.
            left
        }
    }
}

/// Collections built by gathering the items into a `Vec` in parallel, then moving them in.
macro_rules! via_vec {
    ($([$($g:tt)*] $ty:ty, $item:ty;)*) => {$(
        impl<$($g)*> FromParallelIterator<$item> for $ty {
            fn from_par_iter<I: ParallelIterator<Item = $item>>(iter: I) -> Self {
                Vec::from_par_iter(iter).into_iter().collect()
            }
        }
    )*};
}

// Only collected: the hashed collections need a default hasher to be built from nothing.
via_vec! {
    [T: Send + Eq + std::hash::Hash, S: std::hash::BuildHasher + Default + Send] std::collections::HashSet<T, S>, T;
    [K: Send + Eq + std::hash::Hash, V: Send, S: std::hash::BuildHasher + Default + Send] std::collections::HashMap<K, V, S>, (K, V);
    [] String, Box<str>;
    ['a] String, std::borrow::Cow<'a, str>;
    [T: Send] Box<[T]>, T;
}

impl FromParallelIterator<()> for () {
    fn from_par_iter<I: ParallelIterator<Item = ()>>(iter: I) -> Self {
        iter.for_each(drop)
    }
}

/// Extends a collection with a parallel iterator's items, in order (Rayon's
/// `ParallelExtend`): the items are collected in parallel, then moved in.
///
/// ```
/// use threadlab::prelude::*;
/// let mut v = vec![0u8];
/// v.par_extend((1u8..3).into_par_iter());
/// assert_eq!(v, [0, 1, 2]);
/// ```
pub trait ParallelExtend<T: Send> {
    /// Adds the items of `iter` at the end, in order.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// let mut s = String::from("a");
    /// s.par_extend(['b', 'c'].par_iter().copied());
    /// assert_eq!(s, "abc");
    /// ```
    fn par_extend<I: super::IntoParallelIterator<Item = T>>(&mut self, iter: I);

    /// Adds the items of a `Vec`, in order.
    #[doc(hidden)]
    fn extend_vec(&mut self, items: Vec<T>) {
        self.par_extend(super::IntoParallelIterator::into_par_iter(items));
    }
}

/// A `Vec` takes the collected buffer itself when empty, else appends it.
impl<T: Send> ParallelExtend<T> for Vec<T> {
    fn par_extend<I: super::IntoParallelIterator<Item = T>>(&mut self, iter: I) {
        let items: Vec<T> = iter.into_par_iter().collect();
        self.extend_vec(items);
    }
    fn extend_vec(&mut self, mut items: Vec<T>) {
        if self.is_empty() {
            *self = items;
        } else {
            self.append(&mut items);
        }
    }
}

/// The other collections: collected in parallel, then moved in with `Extend`.
macro_rules! extend_via_vec {
    ($([$($g:tt)*] $ty:ty, $item:ty;)*) => {$(
        impl<$($g)*> ParallelExtend<$item> for $ty {
            fn par_extend<I: super::IntoParallelIterator<Item = $item>>(&mut self, iter: I) {
                let items: Vec<$item> = iter.into_par_iter().collect();
                self.extend(items);
            }
        }
    )*};
}

// Only extended: the hashed collections extend whatever their hasher; `()` collects above.
// Collections of `Copy` items are extended by references too, as `std`'s `Extend` does.
extend_via_vec! {
    [T: Send + Eq + std::hash::Hash, S: std::hash::BuildHasher + Send] std::collections::HashSet<T, S>, T;
    [K: Send + Eq + std::hash::Hash, V: Send, S: std::hash::BuildHasher + Send] std::collections::HashMap<K, V, S>, (K, V);
    [] (), ();
    ['a, T: Copy + Send + Sync + 'a] Vec<T>, &'a T;
    ['a, T: Copy + Send + Sync + 'a] std::collections::VecDeque<T>, &'a T;
    ['a, T: Copy + Send + Sync + 'a] LinkedList<T>, &'a T;
    ['a, T: Copy + Send + Sync + Ord + 'a] std::collections::BinaryHeap<T>, &'a T;
    ['a, T: Copy + Send + Sync + Ord + 'a] std::collections::BTreeSet<T>, &'a T;
    ['a, T: Copy + Send + Sync + Eq + std::hash::Hash + 'a, S: std::hash::BuildHasher + Send] std::collections::HashSet<T, S>, &'a T;
    ['a, K: Copy + Send + Sync + Ord + 'a, V: Copy + Send + Sync + 'a] std::collections::BTreeMap<K, V>, (&'a K, &'a V);
    ['a, K: Copy + Send + Sync + Eq + std::hash::Hash + 'a, V: Copy + Send + Sync + 'a, S: std::hash::BuildHasher + Send] std::collections::HashMap<K, V, S>, (&'a K, &'a V);
    [] std::ffi::OsString, std::ffi::OsString;
    ['a] std::ffi::OsString, &'a std::ffi::OsStr;
    ['a] String, std::borrow::Cow<'a, str>;
    ['a] std::ffi::OsString, std::borrow::Cow<'a, std::ffi::OsStr>;
}

/// `OsString`s from pieces, as `String`s from pieces.
macro_rules! os_string_from {
    ($($item:ty),*) => {$(
        impl<'a> FromParallelIterator<$item> for std::ffi::OsString {
            fn from_par_iter<I: ParallelIterator<Item = $item>>(iter: I) -> Self {
                let mut s = std::ffi::OsString::new();
                s.par_extend(iter);
                s
            }
        }
    )*};
}
os_string_from!(
    std::ffi::OsString,
    &'a std::ffi::OsStr,
    std::borrow::Cow<'a, std::ffi::OsStr>
);

/// A `Cow` collects into its owned form, as `std`'s `FromIterator` for `Cow` does.
///
/// ```
/// use std::borrow::Cow;
/// use threadlab::prelude::*;
/// let s: Cow<'_, str> = ['a', 'b'].par_iter().copied().collect();
/// assert_eq!(s, "ab");
/// ```
impl<'a, C, T> FromParallelIterator<T> for std::borrow::Cow<'a, C>
where
    C: ToOwned + ?Sized,
    C::Owned: FromParallelIterator<T>,
    T: Send,
{
    fn from_par_iter<I: ParallelIterator<Item = T>>(iter: I) -> Self {
        std::borrow::Cow::Owned(C::Owned::from_par_iter(iter))
    }
}

/// The collections both collected and extended through a `Vec`: the impls of both macros.
macro_rules! collect_and_extend_via_vec {
    ($($list:tt)*) => {
        via_vec! { $($list)* }
        extend_via_vec! { $($list)* }
    };
}

collect_and_extend_via_vec! {
    [T: Send] std::collections::VecDeque<T>, T;
    [T: Send] LinkedList<T>, T;
    [T: Send + Ord] std::collections::BinaryHeap<T>, T;
    [T: Send + Ord] std::collections::BTreeSet<T>, T;
    [K: Send + Ord, V: Send] std::collections::BTreeMap<K, V>, (K, V);
    [] String, char;
    ['a] String, &'a char;
    ['a] String, &'a str;
    [] String, String;
}

/// Pairs extend both collections (`unzip` into nested pairs).
impl<A: Send, B: Send, EA: ParallelExtend<A>, EB: ParallelExtend<B>> ParallelExtend<(A, B)>
    for (EA, EB)
{
    fn par_extend<I: super::IntoParallelIterator<Item = (A, B)>>(&mut self, iter: I) {
        let (a, b): (Vec<A>, Vec<B>) = iter.into_par_iter().unzip();
        self.0.extend_vec(a);
        self.1.extend_vec(b);
    }
}

/// Collects `Ok` items into `C`, or returns the first `Err` in order (all items are computed
/// first; Rayon stops early, which changes only how much work is done).
impl<C, T, E> FromParallelIterator<Result<T, E>> for Result<C, E>
where
    C: FromParallelIterator<T>,
    T: Send,
    E: Send,
{
    fn from_par_iter<I: ParallelIterator<Item = Result<T, E>>>(iter: I) -> Self {
        let all: Vec<Result<T, E>> = iter.collect();
        let mut ok = Vec::with_capacity(all.len());
        for r in all {
            ok.push(r?);
        }
        Ok(super::IntoParallelIterator::into_par_iter(ok).collect())
    }
}

/// Collects the `Some` items into `C`, or `None` if any item is `None`.
impl<C, T> FromParallelIterator<Option<T>> for Option<C>
where
    C: FromParallelIterator<T>,
    T: Send,
{
    fn from_par_iter<I: ParallelIterator<Item = Option<T>>>(iter: I) -> Self {
        let all: Vec<Option<T>> = iter.collect();
        let mut some = Vec::with_capacity(all.len());
        for x in all {
            some.push(x?);
        }
        Some(super::IntoParallelIterator::into_par_iter(some).collect())
    }
}

/// Extends whichever collection it holds.
///
/// ```
/// use threadlab::iter::Either;
/// use threadlab::prelude::*;
/// let mut e: Either<Vec<u32>, std::collections::BTreeSet<u32>> = Either::Right(Default::default());
/// e.par_extend((0u32..3).into_par_iter());
/// assert_eq!(e, Either::Right([0, 1, 2].into()));
/// ```
impl<L, R, T> ParallelExtend<T> for super::Either<L, R>
where
    L: ParallelExtend<T>,
    R: ParallelExtend<T>,
    T: Send,
{
    fn par_extend<I: super::IntoParallelIterator<Item = T>>(&mut self, iter: I) {
        match self {
            super::Either::Left(l) => l.par_extend(iter),
            super::Either::Right(r) => r.par_extend(iter),
        }
    }
}
