//! Parallel loops over ranges and slices: thin wrappers over the parallel iterators'
//! heartbeat-split engine (`crate::iter`, see its `drive` module).
//!
//! [`for_each`], [`for_each_mut`] and [`for_each_chunk_mut`] are `(range).into_par_iter()
//! .for_each(body)` and its slice forms: the loop runs in order on one worker and is split in
//! half only when another worker is idle, at most once per check interval per worker
//! (heartbeat scheduling, Acar et al., PLDI 2018, section 5, and Rainey et al., "Task Parallel
//! Assembly Language for Uncompromising Parallelism", PLDI 2021).
//!
//! [`for_each_grain`] keeps an explicit grain for users who want it: it cuts the range by
//! recursive halving down to pieces of at most `grain` items, with a `join` at every cut (so the
//! pieces, too, are handed out by the heartbeat). Static and affinity partitioning live in
//! their own room.

use crate::iter::drive::{on_worker, Producer};
use crate::iter::{IndexedParallelIterator, IntoParallelIterator, ParallelIterator};
use crate::iter::{ParallelSliceMut, RangeIter};
use crate::join::join;
use crate::trace::hooks::TaskSpan;
use crate::trace::TaskKind;

/// Halves `p` with `join` down to pieces of at most `grain` positions.
fn grain_split<F: Fn(usize) + Sync>(p: RangeIter<usize>, grain: usize, body: &F) {
    let len = Producer::len(&p);
    if len > grain && len >= 2 {
        let (left, right) = p.split_at(len / 2);
        join(
            || grain_split(left, grain, body),
            || grain_split(right, grain, body),
        );
    } else {
        let _span = TaskSpan::enter(TaskKind::LoopChunk, None);
        let mut p = p;
        // The producer's block, not `IndexedParallelIterator::take` (ranges are both).
        Producer::take(&mut p, len).for_each(body);
    }
}

/// Calls `body(i)` for every `i` in `range`, in parallel on the current pool (else the global
/// one). Returns when all calls finished; a panic is re-raised here.
///
/// No grain size is needed: the loop runs in order on one worker and is split in half only when
/// another worker is idle, at most once per heartbeat check per worker (see the module doc of
/// the heartbeat). Use [`for_each_grain`] to bound the pieces explicitly. The same as
/// `range.into_par_iter().for_each(body)` (see [`crate::iter`]).
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// let sum = AtomicU64::new(0);
/// threadlab::for_each(0..1000, |i| { sum.fetch_add(i as u64, Ordering::Relaxed); });
/// assert_eq!(sum.into_inner(), 499_500);
/// ```
pub fn for_each<F>(range: std::ops::Range<usize>, body: F)
where
    F: Fn(usize) + Sync + Send,
{
    range.into_par_iter().for_each(body);
}

/// Calls `body(i)` for every `i` in `range`, in parallel, cutting the range by recursive halving
/// into pieces of at most `grain` items (a `join` at every cut; the heartbeat decides which
/// pieces other workers take). A `grain` of 0 counts as 1.
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// let calls = AtomicUsize::new(0);
/// threadlab::for_each_grain(0..100, 8, |_| { calls.fetch_add(1, Ordering::Relaxed); });
/// assert_eq!(calls.into_inner(), 100);
/// ```
pub fn for_each_grain<F>(range: std::ops::Range<usize>, grain: usize, body: F)
where
    F: Fn(usize) + Sync + Send,
{
    let producer = range.into_par_iter();
    on_worker(|_| grain_split(producer, grain.max(1), &body));
}

/// Calls `body(x)` for every element of `slice`, in parallel (as [`for_each`]).
///
/// ```
/// let mut v: Vec<u32> = (0..100).collect();
/// threadlab::for_each_mut(&mut v, |x| *x *= 2);
/// assert_eq!(v[99], 198);
/// ```
pub fn for_each_mut<T, F>(slice: &mut [T], body: F)
where
    T: Send,
    F: Fn(&mut T) + Sync + Send,
{
    slice.into_par_iter().for_each(body);
}

/// Calls `body(chunk_index, chunk)` for consecutive chunks of `chunk_len` elements (the last
/// may be shorter), in parallel (as [`for_each`]).
///
/// # Panics
/// If `chunk_len` is 0.
///
/// ```
/// let mut v = vec![0u8; 10];
/// threadlab::for_each_chunk_mut(&mut v, 4, |i, chunk| chunk.fill(i as u8));
/// assert_eq!(v, [0, 0, 0, 0, 1, 1, 1, 1, 2, 2]);
/// ```
pub fn for_each_chunk_mut<T, F>(slice: &mut [T], chunk_len: usize, body: F)
where
    T: Send,
    F: Fn(usize, &mut [T]) + Sync + Send,
{
    assert!(
        chunk_len > 0,
        "for_each_chunk_mut: chunk_len must be at least 1"
    );
    slice
        .par_chunks_mut(chunk_len)
        .enumerate()
        .for_each(|(i, chunk)| body(i, chunk));
}
