//! Parallel loops over ranges and slices, split by the heartbeat.
//!
//! A loop runs its items in order on the calling worker. Before each item it reads the worker's
//! heartbeat flag (`crate::heartbeat`): clear — nobody is idle — it just runs the item; set, it
//! counts towards the next beat, and at a beat it splits its *remaining* items in half, publishes
//! the second half for an idle worker to steal, and goes on with the first. Each half does the
//! same. This is the loop form of heartbeat scheduling (Acar et al., PLDI 2018, section 5, and
//! Rainey et al., "Task Parallel Assembly Language for Uncompromising Parallelism", PLDI 2021):
//! no grain size is needed, since splits happen only when a worker is idle, at most once per beat
//! per worker, and always halve the largest piece this worker holds.
//!
//! [`for_each_grain`] keeps an explicit grain for users who want it: it cuts the range by
//! recursive halving down to pieces of at most `grain` items, with a `join` at every cut (so the
//! pieces, too, are handed out by the heartbeat). Static and affinity partitioning live in
//! their own room.

use crate::heartbeat::LOOP_SPACING;
use crate::join::{join, join_promoted};
use crate::pool::registry::Registry;
use crate::pool::worker::WorkerThread;
use crate::trace::hooks::TaskSpan;
use crate::trace::TaskKind;

/// A piece of a loop that can be cut in two and run item by item.
trait Producer: Sized + Send {
    fn len(&self) -> usize;
    fn split_at(self, mid: usize) -> (Self, Self);
    /// Runs the first item and removes it.
    fn run_first(&mut self);
}

/// Runs `op` on a worker: this one, else one of the global pool's.
fn on_worker<R: Send>(op: impl FnOnce(&WorkerThread) -> R + Send) -> R {
    match WorkerThread::current() {
        Some(w) => op(w),
        None => Registry::in_worker(crate::global::registry(), |w, _| op(w)),
    }
}

/// Runs `p` item by item, splitting at beats (see the module doc).
fn heartbeat_loop<P: Producer>(w: &WorkerThread, mut p: P) {
    {
        let _span = TaskSpan::enter(TaskKind::LoopChunk, None);
        let hb = w.heartbeat();
        loop {
            match p.len() {
                0 => return,
                1 => {}
                // Relaxed read of the flag, as in `join`'s fast path.
                _ if hb.wanted() && hb.poll(LOOP_SPACING, || w.registry().sleep.idle_exists()) => {
                    break
                }
                _ => {}
            }
            p.run_first();
        }
    }
    // A beat, and at least two items left: publish the second half.
    let mid = p.len() / 2;
    let (left, right) = p.split_at(mid);
    join_promoted(
        w,
        || heartbeat_loop(w, left),
        move || {
            let thief = WorkerThread::current().expect("heartbeat_loop: runs on a worker");
            heartbeat_loop(thief, right)
        },
    );
}

/// Halves `p` with `join` down to pieces of at most `grain` items.
fn grain_split<P: Producer>(p: P, grain: usize) {
    let len = p.len();
    if len > grain && len >= 2 {
        let (left, right) = p.split_at(len / 2);
        join(|| grain_split(left, grain), || grain_split(right, grain));
    } else {
        let _span = TaskSpan::enter(TaskKind::LoopChunk, None);
        let mut p = p;
        while p.len() > 0 {
            p.run_first();
        }
    }
}

struct RangeProducer<'f, F> {
    range: std::ops::Range<usize>,
    body: &'f F,
}

impl<F: Fn(usize) + Sync> Producer for RangeProducer<'_, F> {
    #[inline]
    fn len(&self) -> usize {
        self.range.len()
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let m = self.range.start + mid;
        (
            RangeProducer {
                range: self.range.start..m,
                body: self.body,
            },
            RangeProducer {
                range: m..self.range.end,
                body: self.body,
            },
        )
    }
    #[inline]
    fn run_first(&mut self) {
        let i = self.range.start;
        self.range.start += 1;
        (self.body)(i);
    }
}

struct ChunkProducer<'a, 'f, T, F> {
    slice: &'a mut [T],
    chunk_len: usize,
    first_chunk: usize,
    body: &'f F,
}

impl<T: Send, F: Fn(usize, &mut [T]) + Sync> Producer for ChunkProducer<'_, '_, T, F> {
    #[inline]
    fn len(&self) -> usize {
        self.slice.len().div_ceil(self.chunk_len)
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let (l, r) = self.slice.split_at_mut(mid * self.chunk_len);
        (
            ChunkProducer {
                slice: l,
                chunk_len: self.chunk_len,
                first_chunk: self.first_chunk,
                body: self.body,
            },
            ChunkProducer {
                slice: r,
                chunk_len: self.chunk_len,
                first_chunk: self.first_chunk + mid,
                body: self.body,
            },
        )
    }
    #[inline]
    fn run_first(&mut self) {
        let n = self.chunk_len.min(self.slice.len());
        let (first, rest) = std::mem::take(&mut self.slice).split_at_mut(n);
        self.slice = rest;
        let index = self.first_chunk;
        self.first_chunk += 1;
        (self.body)(index, first);
    }
}

/// Calls `body(i)` for every `i` in `range`, in parallel on the current pool (else the global
/// one). Returns when all calls finished; a panic is re-raised here.
///
/// No grain size is needed: the loop runs in order on one worker and is split in half only when
/// another worker is idle, at most once per heartbeat period per worker (see the module doc of
/// the heartbeat). Use [`for_each_grain`] to bound the pieces explicitly.
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
    on_worker(|w| heartbeat_loop(w, RangeProducer { range, body: &body }));
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
    let producer = RangeProducer { range, body: &body };
    on_worker(|_| grain_split(producer, grain.max(1)));
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
    for_each_chunk_mut(slice, 1, |_, chunk| chunk.iter_mut().for_each(&body));
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
    let producer = ChunkProducer {
        slice,
        chunk_len,
        first_chunk: 0,
        body: &body,
    };
    on_worker(|w| heartbeat_loop(w, producer));
}
