//! Parallel loops over ranges and slices, split adaptively.
//!
//! The splitter is Rayon's adaptive one (rayon's `iter::plumbing::Splitter`, described in its
//! `plumbing/README.md`): start with one split budget per worker, halve it at each split, and
//! whenever a piece is stolen (a sign that other workers are hungry) give it a fresh budget of
//! at least one split per worker. Pieces that nobody steals run sequentially after
//! log2(threads) splits, so a busy pool pays few `join`s, and an idle one spreads the work. Lazy
//! binary splitting (Tzannes, Caragea, Barua, Vishkin, PPoPP 2010) decides instead by looking
//! at whether the local deque is empty; heartbeat splitting (issue 7) will plug in as another
//! [`Splitter`] policy here, which is why splitting is a separate piece from the loops.

use crate::join::join_context;
use crate::trace::hooks::TaskSpan;
use crate::trace::TaskKind;

/// Decides whether a piece of a loop is split further.
#[derive(Clone, Copy, Debug)]
struct Splitter {
    splits: usize,
    threads: usize,
}

impl Splitter {
    fn new() -> Self {
        let threads = crate::current_num_threads();
        Splitter {
            splits: threads,
            threads,
        }
    }

    #[inline]
    fn try_split(&mut self, len: usize, stolen: bool) -> bool {
        if len < 2 {
            return false;
        }
        if stolen {
            self.splits = (self.splits / 2).max(self.threads);
            true
        } else if self.splits > 0 {
            self.splits /= 2;
            true
        } else {
            false
        }
    }
}

/// A piece of a loop that can be cut in two and run.
trait Producer: Sized + Send {
    fn len(&self) -> usize;
    fn split_at(self, mid: usize) -> (Self, Self);
    fn run(self);
}

fn bridge<P: Producer>(producer: P, mut splitter: Splitter, stolen: bool) {
    let len = producer.len();
    if splitter.try_split(len, stolen) {
        let (left, right) = producer.split_at(len / 2);
        join_context(
            |_| bridge(left, splitter, false),
            |stolen| bridge(right, splitter, stolen),
        );
    } else {
        let _span = TaskSpan::enter(TaskKind::LoopChunk, None);
        producer.run();
    }
}

struct RangeProducer<'f, F> {
    range: std::ops::Range<usize>,
    body: &'f F,
}

impl<F: Fn(usize) + Sync> Producer for RangeProducer<'_, F> {
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
    fn run(self) {
        self.range.for_each(self.body);
    }
}

struct ChunkProducer<'a, 'f, T, F> {
    slice: &'a mut [T],
    chunk_len: usize,
    first_chunk: usize,
    body: &'f F,
}

impl<T: Send, F: Fn(usize, &mut [T]) + Sync> Producer for ChunkProducer<'_, '_, T, F> {
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
    fn run(self) {
        for (i, chunk) in self.slice.chunks_mut(self.chunk_len).enumerate() {
            (self.body)(self.first_chunk + i, chunk);
        }
    }
}

/// Calls `body(i)` for every `i` in `range`, in parallel on the current pool (else the global
/// one), splitting adaptively. Returns when all calls finished; a panic is re-raised here.
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
    let producer = RangeProducer { range, body: &body };
    bridge(producer, Splitter::new(), false);
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
    bridge(producer, Splitter::new(), false);
}
