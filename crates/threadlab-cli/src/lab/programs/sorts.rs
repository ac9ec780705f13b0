//! Merge sort and quick sort with a `join` on the two halves, generic over [`Par`]. Below
//! [`CUTOFF`] elements both sort serially with the standard library's `sort_unstable`, for every
//! runtime alike.

use super::{JoinKernel, Par};

/// Slices this short are sorted serially.
pub const CUTOFF: usize = 1 << 10;

/// Merge sort: the halves sorted with a join, then merged serially into `buf` and copied back.
/// rayon-demo's merge sort (github.com/rayon-rs/rayon, `rayon-demo/src/mergesort`) and Cilk's
/// `cilksort` (in the Barcelona OpenMP Tasks Suite, Duran et al., ICPP 2009) also merge in
/// parallel; this is their simplest form, which keeps every fork a plain `join`.
/// `buf` has `v`'s length.
pub fn merge_sort<P: Par>(x: &mut P::Ctx<'_>, v: &mut [u32], buf: &mut [u32]) {
    if v.len() <= CUTOFF {
        v.sort_unstable();
        return;
    }
    let mid = v.len() / 2;
    {
        let (vl, vr) = v.split_at_mut(mid);
        let (bl, br) = buf.split_at_mut(mid);
        P::join(
            x,
            |x| merge_sort::<P>(x, vl, bl),
            |x| merge_sort::<P>(x, vr, br),
        );
    }
    let (l, r) = v.split_at(mid);
    let (mut i, mut j) = (0, 0);
    for out in buf.iter_mut() {
        if j == r.len() || (i < l.len() && l[i] <= r[j]) {
            *out = l[i];
            i += 1;
        } else {
            *out = r[j];
            j += 1;
        }
    }
    v.copy_from_slice(buf);
}

/// Quick sort: partition around the median of three, then the two sides with a join, as in
/// rayon-demo's quick sort (github.com/rayon-rs/rayon, `rayon-demo/src/quicksort`).
pub fn quick_sort<P: Par>(x: &mut P::Ctx<'_>, v: &mut [u32]) {
    if v.len() <= CUTOFF {
        v.sort_unstable();
        return;
    }
    let p = partition(v);
    let (lo, hi) = v.split_at_mut(p);
    P::join(
        x,
        |x| quick_sort::<P>(x, lo),
        |x| quick_sort::<P>(x, &mut hi[1..]),
    );
}

/// Lomuto's partition around the median of the first, middle and last elements; returns the
/// pivot's final index.
fn partition(v: &mut [u32]) -> usize {
    let last = v.len() - 1;
    let mid = v.len() / 2;
    if v[mid] < v[0] {
        v.swap(mid, 0);
    }
    if v[last] < v[0] {
        v.swap(last, 0);
    }
    if v[mid] < v[last] {
        v.swap(mid, last);
    }
    let pivot = v[last];
    let mut store = 0;
    for i in 0..last {
        if v[i] < pivot {
            v.swap(i, store);
            store += 1;
        }
    }
    v.swap(store, last);
    store
}

/// [`merge_sort`] (`true`) or [`quick_sort`] of a fresh copy of the input, as a [`JoinKernel`].
pub struct Sort<'i>(pub &'i [u32], pub bool);

impl JoinKernel for Sort<'_> {
    /// The slice sorted in place, and merge sort's buffer.
    type Scratch = (Vec<u32>, Vec<u32>);
    fn scratch(&self) -> Self::Scratch {
        (self.0.to_vec(), vec![0; self.0.len()])
    }
    fn refill(&self, (v, _): &mut Self::Scratch) {
        v.copy_from_slice(self.0);
    }
    fn run<P: Par>(&self, x: &mut P::Ctx<'_>, (v, buf): &mut Self::Scratch) -> u64 {
        match self.1 {
            true => merge_sort::<P>(x, v, buf),
            false => quick_sort::<P>(x, v),
        }
        0
    }
    fn check(&self, _: u64, (v, _): &Self::Scratch) -> u64 {
        sorted_checksum(v)
    }
}

/// A sum of a sorted slice's elements weighted by position: differs from the unsorted one's.
pub fn sorted_checksum(v: &[u32]) -> u64 {
    let sorted = v.windows(2).all(|w| w[0] <= w[1]);
    let sum = v.iter().enumerate().fold(0u64, |s, (i, &x)| {
        s.wrapping_add((x as u64).wrapping_mul(i as u64 + 1))
    });
    if sorted {
        sum
    } else {
        0
    }
}
