//! The parallel sorts behind `par_sort*`. Both cut in the heartbeat spirit. While another
//! worker of the pool is idle, a piece is cut and one part published at once for it
//! (`join_promoted`). While nobody is idle, a long piece is still cut, but its parts are joined
//! with the heartbeat [`join`](crate::join) (latent: a worker that goes idle later, its own
//! piece done or its CPU faster, takes the oldest part left at its next beat; nobody idle, the
//! parts run here one after the other); a shorter piece goes whole to the standard library's
//! sort, which beats this file's partition and merge per element. The lengths below which a
//! busy pool stops cutting ([`BUSY_PIECE`], [`BUSY_MERGE`]) weigh that per-element cost against
//! the balance: the earlier rule, "nobody idle: std's sort, whole", left a worker that went idle
//! a moment after the others got busy with nothing to take, and `par_sort_unstable` of 10^7
//! `u64` on 2 workers took 166 ms where this one takes 139 ms (std alone: 240 ms). A 1-worker
//! pool never cuts: it costs exactly std's sort.
//!
//! - **Unstable** ([`quick_sort`]): a pattern-defeating quicksort after Orson Peters ("Pattern-
//!   defeating Quicksort", arXiv:2106.05123, 2021): the pivot is the median of three (a ninther,
//!   Tukey's median of medians of three, on long slices); a slice whose pivot equals the pivot of
//!   an ancestor is partitioned into "equal" and "greater" and the equal part is done (Peters'
//!   fix for many duplicates); after `log2(n)` badly unbalanced partitions the piece falls back
//!   to the standard library's sort (Musser's introsort bound, which pdqsort keeps). The right
//!   side of each partition is the joined part (published for an idle worker, else latent);
//!   the left one is sorted here.
//!   Neither sort needs `T: Sync` (as Rayon's do not: an element holding a `Cell` sorts):
//!   every element is reached through one `&mut` at a time, handed from worker to worker by
//!   `join`. Even a pivot that a subtree compares against (the "ancestor") is lent as `&mut` to
//!   one subtree only: the left part of the piece right of it.
//! - **Stable** ([`merge_sort`]): sort both halves (the second joined as above), copy the slice
//!   to a buffer, and merge the buffer's halves back with the divide-and-conquer parallel merge
//!   (the median of the longer run splits the shorter by binary search; the second sub-merge is
//!   joined likewise), as in
//!   Cormen, Leiserson, Rivest and Stein, *Introduction to Algorithms* (3rd ed.), section 27.3.
//!   Only bitwise moves happen while merging, so if the comparison panics the buffer, a complete
//!   copy, is written back: every element is in the slice exactly once.
//!
//! Pieces of at most [`SEQUENTIAL`] elements are always sorted (merges of at most
//! [`SEQUENTIAL_MERGE`] done) sequentially: below that a published half costs more than it saves.

use crate::join::join_promoted;
use crate::pool::worker::WorkerThread;
use std::mem::MaybeUninit;
use std::ptr;

/// Pieces this short are sorted sequentially by the standard library (a base case, not a grain:
/// below it a `join` costs more than the sort saves). Under Miri every cut-off of this file is
/// small, so that tests of a few hundred elements reach the parallel paths in seconds.
const SEQUENTIAL: usize = if cfg!(miri) { 32 } else { 2048 };

/// How a piece is cut (see the module doc).
enum Cut {
    /// Another worker is idle: publish one part for it at once.
    Publish(&'static WorkerThread),
    /// Nobody is idle: join the parts with the heartbeat `join`, latent until a worker idles.
    Latent,
}

/// Whether and how to cut a piece of `len` elements: never at or below `min` (a base case);
/// while another worker of the pool is idle, publish; else only above `busy`, and only on a pool
/// of more than one worker (where another can ever take a part). `None`: sort or merge it here.
fn cut(len: usize, min: usize, busy: usize) -> Option<Cut> {
    if len <= min {
        return None;
    }
    let w = WorkerThread::current()?;
    if w.registry().idle_exists() {
        Some(Cut::Publish(w))
    } else {
        (len > busy && w.registry().num_threads() > 1).then_some(Cut::Latent)
    }
}

impl Cut {
    /// Runs `a` here and `b` as the cut's joined part; both results.
    fn join<A, B, RA, RB>(self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        match self {
            Cut::Publish(w) => join_promoted(w, a, b),
            Cut::Latent => crate::join(a, b),
        }
    }
}

/// While nobody is idle, quick-sort pieces up to this long go whole to std's sort; longer ones
/// are still partitioned here and their parts joined with a heartbeat `join` (see the module
/// doc). Our partition costs about what std's does per element, so this can be low: 2^14 to
/// 2^20 measured alike on 10^7 `u64` on 2 workers, all 0.74–0.89× of Rayon's time against
/// 0.80–0.91× for "std's sort, whole".
const BUSY_PIECE: usize = if cfg!(miri) { 128 } else { 1 << 16 };

/// As [`BUSY_PIECE`] for the stable sort's pieces and merges: this file's branchy merge costs
/// more per element than std's merge sort, so a busy pool stops cutting sooner (at 2^16 a
/// stable sort of 10^7 `u64` on 2 workers was 4% slower than with "std's sort, whole"; at 2^20,
/// 4% faster).
const BUSY_MERGE: usize = if cfg!(miri) { 128 } else { 1 << 20 };

/// Merges this short are done sequentially.
const SEQUENTIAL_MERGE: usize = if cfg!(miri) { 64 } else { 4096 };

/// Sorts `v` unstably by `is_less` (see the module doc).
pub(crate) fn quick_sort<T, F>(v: &mut [T], is_less: &F)
where
    T: Send,
    F: Fn(&T, &T) -> bool + Sync,
{
    if v.len() <= SEQUENTIAL {
        leaf_sort(v, is_less, false);
        return;
    }
    let limit = usize::BITS - v.len().leading_zeros();
    super::drive::on_worker(|_| quick(v, is_less, None, limit));
}

fn quick<T, F>(mut v: &mut [T], is_less: &F, ancestor: Option<&mut T>, mut limit: u32)
where
    T: Send,
    F: Fn(&T, &T) -> bool + Sync,
{
    loop {
        let len = v.len();
        let Some(cut) = cut(len, SEQUENTIAL, BUSY_PIECE) else {
            // A short piece, or nobody idle and a piece short enough: std's sort, whole.
            leaf_sort(v, is_less, false);
            return;
        };
        if limit == 0 {
            // Too many bad partitions: a worst-case input. Fall back (pdqsort uses heapsort).
            leaf_sort(v, is_less, false);
            return;
        }
        let p = choose_pivot(v, is_less);
        v.swap(0, p);
        let (pivot, rest) = v.split_first_mut().expect("quick: len > SEQUENTIAL");
        // The pivot equals an ancestor pivot (which is <= it): put the equal run aside, done.
        if let Some(a) = ancestor.as_deref() {
            if !is_less(a, pivot) {
                let eq = partition(rest, |x| !is_less(pivot, x));
                v = &mut std::mem::take(&mut v)[eq + 1..];
                continue;
            }
        }
        let mid = partition(rest, |x| is_less(x, pivot));
        v.swap(0, mid);
        let (left, right) = v.split_at_mut(mid);
        let (pivot, right) = right.split_first_mut().expect("quick: pivot at mid");
        if left.len().min(right.len()) < len / 8 {
            limit -= 1;
        }
        cut.join(
            || quick(left, is_less, ancestor, limit),
            || quick(right, is_less, Some(pivot), limit),
        );
        return;
    }
}

/// `Ordering` from a strict less-than (for std's sorts).
/// `std`'s sort of a piece (stable or not). Since Rust 1.81 `std`'s sorts panic when they
/// notice that the comparison is not a total order; Rayon's sorts never do (the order is then
/// unspecified), so that panic is caught here and the piece is left in the permutation `std`
/// left it in (all its elements, each once: `std`'s sorts are panic-safe). `std` still prints
/// the message of that panic. Any other panic (the comparison's own) goes on.
fn leaf_sort<T, F: Fn(&T, &T) -> bool>(v: &mut [T], is_less: &F, stable: bool) {
    let sorted = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        if stable {
            v.sort_by(|a, b| order(is_less, a, b));
        } else {
            v.sort_unstable_by(|a, b| order(is_less, a, b));
        }
    }));
    if let Err(payload) = sorted {
        let msg = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str));
        if msg.is_some_and(|m| m.contains("does not correctly implement a total order")) {
            return;
        }
        std::panic::resume_unwind(payload);
    }
}

fn order<T, F: Fn(&T, &T) -> bool>(is_less: &F, a: &T, b: &T) -> std::cmp::Ordering {
    if is_less(a, b) {
        std::cmp::Ordering::Less
    } else if is_less(b, a) {
        std::cmp::Ordering::Greater
    } else {
        std::cmp::Ordering::Equal
    }
}

/// Index of the median of three (a ninther on long slices).
fn choose_pivot<T, F: Fn(&T, &T) -> bool>(v: &[T], is_less: &F) -> usize {
    let len = v.len();
    let med3 = |a: usize, b: usize, c: usize| {
        let (a, b) = if is_less(&v[b], &v[a]) {
            (b, a)
        } else {
            (a, b)
        };
        if is_less(&v[c], &v[a]) {
            a
        } else if is_less(&v[c], &v[b]) {
            c
        } else {
            b
        }
    };
    let (a, b, c) = (len / 4, len / 2, len / 4 * 3);
    if len >= 128 {
        let s = len / 8;
        med3(
            med3(a - s, a, a + s),
            med3(b - s, b, b + s),
            med3(c - s, c, c + s),
        )
    } else {
        med3(a, b, c)
    }
}

/// Moves the elements satisfying `pred` to the front; returns how many there are. Small
/// elements take the branchless scheme, larger ones Hoare's.
fn partition<T>(v: &mut [T], pred: impl Fn(&T) -> bool) -> usize {
    if std::mem::size_of::<T>() <= BRANCHLESS_MAX_SIZE {
        partition_branchless(v, pred)
    } else {
        partition_hoare(v, pred)
    }
}

/// Elements up to this size are partitioned without a branch on the comparison (two words: an
/// unconditional swap of two such elements costs less than a mispredicted branch).
const BRANCHLESS_MAX_SIZE: usize = 16;

/// Lomuto's scheme without a branch on the comparison, as in Edelkamp and Weiß's observation
/// ("BlockQuicksort: Avoiding Branch Mispredictions in Quicksort", ESA 2016) and the standard
/// library's small-type partition: every element is swapped with the first one known not to
/// satisfy `pred`, and that boundary moves by the comparison's outcome, 0 or 1. The invariant:
/// `v[..l]` satisfy `pred`, `v[l..i]` do not. On random keys the comparison is a coin flip, so
/// Hoare's branches mispredict about half the time; here nothing does.
fn partition_branchless<T>(v: &mut [T], pred: impl Fn(&T) -> bool) -> usize {
    let mut l = 0;
    for i in 0..v.len() {
        let yes = pred(&v[i]);
        v.swap(l, i);
        l += usize::from(yes);
    }
    l
}

/// Hoare's scheme (swaps only, each misplaced pair once).
fn partition_hoare<T>(v: &mut [T], pred: impl Fn(&T) -> bool) -> usize {
    let (mut l, mut r) = (0, v.len());
    loop {
        while l < r && pred(&v[l]) {
            l += 1;
        }
        while l < r && !pred(&v[r - 1]) {
            r -= 1;
        }
        if l >= r {
            return l;
        }
        r -= 1;
        v.swap(l, r);
        l += 1;
    }
}

/// Sorts `v` stably by `is_less` (see the module doc).
pub(crate) fn merge_sort<T, F>(v: &mut [T], is_less: &F)
where
    T: Send,
    F: Fn(&T, &T) -> bool + Sync,
{
    if v.len() <= SEQUENTIAL || std::mem::size_of::<T>() == 0 {
        leaf_sort(v, is_less, true);
        return;
    }
    super::drive::on_worker(|_| {
        if cut(v.len(), SEQUENTIAL, BUSY_MERGE).is_none() {
            // Nobody idle and a slice short enough (or a pool of one): std's sort, without the
            // buffer.
            leaf_sort(v, is_less, true);
            return;
        }
        let mut buf: Vec<T> = Vec::with_capacity(v.len());
        sort_rec(v, buf.spare_capacity_mut(), is_less);
    });
}

/// Sorts `v` stably using `buf` (as long as `v`, contents ignored) as scratch.
fn sort_rec<T, F>(v: &mut [T], buf: &mut [MaybeUninit<T>], is_less: &F)
where
    T: Send,
    F: Fn(&T, &T) -> bool + Sync,
{
    let len = v.len();
    let Some(cut) = cut(len, SEQUENTIAL, BUSY_MERGE) else {
        // A short piece, or nobody idle and a piece short enough: std's sort, whole.
        leaf_sort(v, is_less, true);
        return;
    };
    let mid = len / 2;
    {
        let (vl, vr) = v.split_at_mut(mid);
        let (bl, br) = buf.split_at_mut(mid);
        cut.join(|| sort_rec(vl, bl, is_less), || sort_rec(vr, br, is_less));
    }
    // Every pointer below derives from these two raw pointers, taken once: the guard's pointers
    // must stay valid while the merge holds slices of the buffer (a pointer from `buf.as_ptr()`
    // would be invalidated, under Stacked Borrows, by a later `&mut` reborrow of `buf` itself).
    let vp = v.as_mut_ptr();
    let bp = buf.as_mut_ptr().cast::<T>();
    // SAFETY: `buf` has room for `len` elements and does not overlap `v`; from here on the
    // elements live bitwise in both places until the merge overwrote `v`, and nothing drops
    // either copy (`buf` holds `MaybeUninit`).
    unsafe { ptr::copy_nonoverlapping(vp, bp, len) };
    let restore = Restore {
        src: bp,
        dst: vp,
        len,
    };
    // SAFETY: `bp[..mid]` and `bp[mid..len]` are disjoint, initialised (just copied) and sorted;
    // while the merge holds them nothing but the guard (after the merge ended) reads the buffer.
    let (a, b) = unsafe {
        (
            std::slice::from_raw_parts_mut(bp, mid),
            std::slice::from_raw_parts_mut(bp.add(mid), len - mid),
        )
    };
    // SAFETY: `a` and `b` are together exactly as long as the destination `v`, which nothing
    // else touches during the merge, and do not overlap it.
    unsafe { par_merge(a, b, Dst(vp), is_less) };
    std::mem::forget(restore);
}

/// Writes the buffer back over the slice if the merge unwinds (see the module doc).
struct Restore<T> {
    src: *const T,
    dst: *mut T,
    len: usize,
}

impl<T> Drop for Restore<T> {
    fn drop(&mut self) {
        // SAFETY: `src` holds a full bitwise copy of the slice's elements taken before the
        // merge, whose partial writes to `dst` are only bitwise copies: putting the copy back
        // leaves each element in the slice exactly once.
        unsafe { ptr::copy_nonoverlapping(self.src, self.dst, self.len) };
    }
}

/// A destination pointer that may cross to another worker inside `par_merge`.
#[derive(Clone, Copy)]
struct Dst<T>(*mut T);
// SAFETY: each sub-merge writes a disjoint range of the destination (moving elements there, so
// `T: Send`); the pointer is only an address for those writes, made while the owner of the
// slice waits in `join`. It is copied into each sub-merge's closure, never shared.
unsafe impl<T: Send> Send for Dst<T> {}

/// Merges sorted `a` and `b` into `dst` (room for `a.len() + b.len()`), stably (ties from `a`
/// first), splitting above [`SEQUENTIAL_MERGE`] elements while another worker is idle. The
/// inputs are `&mut` only so that each part of a split goes to one worker alone (`T` need not
/// be `Sync`); they are only read, and moved out bitwise.
///
/// # Safety
/// `dst` must be valid for writes of `a.len() + b.len()` elements and overlap neither input.
unsafe fn par_merge<T, F>(a: &mut [T], b: &mut [T], dst: Dst<T>, is_less: &F)
where
    T: Send,
    F: Fn(&T, &T) -> bool + Sync,
{
    let cut = cut(a.len() + b.len(), SEQUENTIAL_MERGE, BUSY_MERGE);
    let Some(cut) = cut.filter(|_| !a.is_empty() && !b.is_empty()) else {
        // SAFETY: the caller's contract, passed on.
        unsafe { seq_merge(a, b, dst.0, is_less) };
        return;
    };
    // Split the longer run at its middle and the other where that element would go, keeping
    // stability: equal elements of `a` stay before those of `b`.
    let (ia, ib) = if a.len() >= b.len() {
        let ia = a.len() / 2;
        (ia, b.partition_point(|x| is_less(x, &a[ia])))
    } else {
        let ib = b.len() / 2;
        (a.partition_point(|x| !is_less(&b[ib], x)), ib)
    };
    let (a1, a2) = a.split_at_mut(ia);
    let (b1, b2) = b.split_at_mut(ib);
    // SAFETY: `dst + ia + ib` is within the destination (ia <= a.len(), ib <= b.len()).
    let dst2 = Dst(unsafe { dst.0.add(ia + ib) });
    // SAFETY: the two halves write disjoint ranges of the destination, each as long as its
    // inputs.
    let left = move || unsafe { par_merge(a1, b1, dst, is_less) };
    // SAFETY: as above.
    let right = move || unsafe { par_merge(a2, b2, dst2, is_less) };
    cut.join(left, right);
}

/// # Safety
/// As [`par_merge`].
unsafe fn seq_merge<T, F: Fn(&T, &T) -> bool>(a: &[T], b: &[T], dst: *mut T, is_less: &F) {
    let (mut i, mut j, mut k) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let src = if is_less(&b[j], &a[i]) {
            j += 1;
            &b[j - 1]
        } else {
            i += 1;
            &a[i - 1]
        };
        // SAFETY: `k < a.len() + b.len()`, within the destination (caller's contract).
        unsafe { ptr::copy_nonoverlapping(src, dst.add(k), 1) };
        k += 1;
    }
    // SAFETY: the rests fill exactly the remaining destination.
    unsafe {
        ptr::copy_nonoverlapping(a.as_ptr().add(i), dst.add(k), a.len() - i);
        ptr::copy_nonoverlapping(b.as_ptr().add(j), dst.add(k + a.len() - i), b.len() - j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both partition schemes put exactly the elements satisfying the predicate first, keep
    /// every element (a permutation), on random and on runs of equal keys, for every length up
    /// to 64 and some longer ones.
    #[test]
    fn partitions_split_by_the_predicate_and_keep_every_element() {
        let mut rng = threadlab_testkit::Rng::new(0x5EED);
        let lengths = (0..64).chain([255, 1000, 4097]);
        for len in lengths {
            for keys in [1000, 2] {
                let v: Vec<u64> = (0..len).map(|_| rng.below(keys)).collect();
                let pivot = rng.below(keys);
                let (mut p1, mut p2) = (v.clone(), v.clone());
                let m1 = partition_branchless(&mut p1, |x| *x < pivot);
                let m2 = partition_hoare(&mut p2, |x| *x < pivot);
                let mut sorted = v.clone();
                sorted.sort_unstable();
                for (mut p, mid) in [(p1, m1), (p2, m2)] {
                    assert!(p[..mid].iter().all(|&x| x < pivot), "{len} {keys}");
                    assert!(p[mid..].iter().all(|&x| x >= pivot), "{len} {keys}");
                    p.sort_unstable();
                    assert_eq!(p, sorted, "a permutation");
                }
            }
        }
    }
}
