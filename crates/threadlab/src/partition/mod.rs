//! Partitioners that decide *which worker* runs which part of a loop, for memory locality.
//!
//! [`for_each`](crate::for_each) splits adaptively and lets any worker steal any piece: the
//! best balance, but index `i` lands on a different worker from one call to the next. When the
//! data a loop touches should stay in one worker's cache, or (on a NUMA machine) on the memory
//! node of the worker that first touched it, the assignment must be repeatable:
//!
//! - **Static** ([`for_each_static`], [`for_each_static_block`], [`for_each_static_mut`]): the
//!   range is cut into one contiguous block per worker, and block `k` always runs on worker `k`,
//!   like OpenMP's `schedule(static)`. Initialise data with a static loop and process it with
//!   another over the same range on the same pool, and each worker reads what it wrote (the
//!   *Multithreading and the Memory Subsystem*'s NUMA first-touch advice). A block waits for its worker, so a worker that is
//!   busy elsewhere delays the loop.
//! - **Affinity** ([`AffinityPartitioner`], [`for_each_affinity`]): TBB's
//!   `affinity_partitioner`. The partitioner remembers which worker ran each chunk, and the next
//!   loop over a range of the same length hands every chunk to that worker again. A worker that
//!   does not come (busy with other work, or blocked) has its chunks run by the others, so the
//!   loop never waits for it; the partitioner then remembers the new assignment, spreading any
//!   worker's excess over the least loaded ones so that a worker that was busy once gets its
//!   share back next time.
//!
//! Both hand each chunk to its worker through that worker's inbox (`crate::pool::inbox`); the
//! engine is in `mailed.rs`. All of them run on the current pool (the calling worker's, else the
//! global one) and return when every index has been processed; a panic in the body is re-raised
//! after all chunks finished.

mod mailed;

use std::ops::Range;

use crate::pool::registry::Registry;
use crate::pool::worker::WorkerThread;
use mailed::Plan;

/// How many chunks per worker the affinity partitioner cuts a loop into: several, so a busy
/// worker's share can be spread over the others in pieces.
const AFFINITY_CHUNKS_PER_WORKER: usize = 8;

/// Runs `op` on a worker of the current pool (inline when already on one).
fn on_current_pool<R: Send>(op: impl FnOnce(&WorkerThread) -> R + Send) -> R {
    match WorkerThread::current() {
        Some(w) => op(w),
        None => Registry::in_worker(crate::global::registry(), |w, _| op(w)),
    }
}

/// Block `k` of `len` indices cut into `n` contiguous blocks as OpenMP's `schedule(static)`
/// does: sizes differ by at most one, the larger ones first.
fn static_block(len: usize, n: usize, k: usize) -> Range<usize> {
    let (q, r) = (len / n, len % n);
    let start = k * q + k.min(r);
    start..start + q + usize::from(k < r)
}

/// Calls `body(i)` for every `i` in `range`, in parallel, with the range cut into one
/// contiguous block per worker of the current pool and block `k` run by worker `k`, every call
/// (OpenMP's `schedule(static)`). Returns when all calls finished; a panic is re-raised here.
///
/// Use it when the same worker should touch the same indices in several loops: initialise with
/// one static loop and process with another over the same range on the same pool. Each block
/// waits for its worker: a worker busy with a long task (or blocked) delays the loop. When that
/// can happen, use [`for_each_affinity`], which moves the chunks of a busy worker to the others.
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// let pool = threadlab::Pool::builder().threads(2).build()?;
/// let owner: Vec<AtomicUsize> = (0..10).map(|_| AtomicUsize::new(9)).collect();
/// pool.install(|| {
///     threadlab::for_each_static(0..10, |i| {
///         owner[i].store(threadlab::current_thread_index().unwrap(), Ordering::Relaxed);
///     })
/// });
/// let owner: Vec<usize> = owner.iter().map(|o| o.load(Ordering::Relaxed)).collect();
/// assert_eq!(owner, [0, 0, 0, 0, 0, 1, 1, 1, 1, 1]);
/// # Ok::<(), threadlab::BuildError>(())
/// ```
pub fn for_each_static<F>(range: Range<usize>, body: F)
where
    F: Fn(usize) + Sync + Send,
{
    for_each_static_block(range, |block| block.for_each(&body));
}

/// As [`for_each_static`], but calls `body` once per block with the block's index range: block
/// `k` of the current pool's `n` contiguous blocks runs on worker `k`. Convenient for
/// reductions (one partial result per block).
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// let data: Vec<u64> = (0..1000).collect();
/// let sum = AtomicU64::new(0);
/// threadlab::for_each_static_block(0..data.len(), |block| {
///     let part: u64 = data[block].iter().sum();
///     sum.fetch_add(part, Ordering::Relaxed);
/// });
/// assert_eq!(sum.into_inner(), 499_500);
/// ```
pub fn for_each_static_block<F>(range: Range<usize>, body: F)
where
    F: Fn(Range<usize>) + Sync + Send,
{
    let start = range.start;
    let len = range.len();
    on_current_pool(|w| {
        let n = w.registry().num_threads();
        let mut plan = Plan {
            chunks: Vec::with_capacity(n),
            lists: vec![Vec::new(); n],
            take_over: false,
        };
        for (k, list) in plan.lists.iter_mut().enumerate() {
            let b = static_block(len, n, k);
            if !b.is_empty() {
                list.push(plan.chunks.len());
                plan.chunks.push(start + b.start..start + b.end);
            }
        }
        mailed::run(w, plan, &body);
    });
}

/// A raw pointer to a slice's elements that the static blocks share; each block touches only
/// its own disjoint part.
struct SlicePtr<T>(*mut T);
// SAFETY: the pointer is only used to reach disjoint parts of a slice of `T: Send`, each by one
// thread at a time (see `for_each_static_mut`).
unsafe impl<T: Send> Sync for SlicePtr<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Send for SlicePtr<T> {}

/// Calls `body(i, &mut slice[i])` for every element, in parallel, with the static assignment of
/// [`for_each_static`]: element `i` is handled by the same worker every call (for the same
/// slice length and pool). The natural way to *first-touch* memory so that the worker that will
/// process a part is the one that initialised it.
///
/// ```
/// let mut v = vec![0u64; 1 << 12];
/// threadlab::for_each_static_mut(&mut v, |i, x| *x = i as u64 * 2);
/// assert_eq!(v[4095], 8190);
/// ```
pub fn for_each_static_mut<T, F>(slice: &mut [T], body: F)
where
    T: Send,
    F: Fn(usize, &mut T) + Sync + Send,
{
    let len = slice.len();
    let base = SlicePtr(slice.as_mut_ptr());
    for_each_static_block(0..len, |block| {
        let base = &base;
        // SAFETY: the blocks are disjoint sub-ranges of 0..len, each runs exactly once, and the
        // caller's `&mut` borrow of the slice lasts until every block finished.
        let part = unsafe { std::slice::from_raw_parts_mut(base.0.add(block.start), block.len()) };
        for (i, x) in block.zip(part) {
            body(i, x);
        }
    });
}

/// Remembers which worker ran each chunk of a loop, so the next loop can hand every chunk to the
/// same worker (TBB's `affinity_partitioner`). Keep one per loop site and pass it to every call
/// of [`for_each_affinity`] there.
///
/// The loop is cut into a few chunks per worker. The first call (or a call whose range length or
/// pool size differs from the last) assigns them like the static partitioner, in contiguous
/// groups; later calls replay what happened last time. A worker that does not come has its
/// chunks run by the others; on the next call the chunks above a fair share (the number of
/// chunks over the number of workers, rounded up) move from the most loaded workers to the least
/// loaded ones.
///
/// ```
/// let mut ap = threadlab::AffinityPartitioner::new();
/// let data = vec![1u64; 10_000];
/// let total = std::sync::atomic::AtomicU64::new(0);
/// for _ in 0..3 {
///     threadlab::for_each_affinity(0..data.len(), &mut ap, |i| {
///         total.fetch_add(data[i], std::sync::atomic::Ordering::Relaxed);
///     });
/// }
/// assert_eq!(total.into_inner(), 30_000);
/// assert!(!ap.assignment().is_empty());
/// ```
#[derive(Debug, Default, Clone)]
pub struct AffinityPartitioner {
    /// `(range length, workers)` the assignment was made for.
    shape: Option<(usize, usize)>,
    /// Worker that ran each chunk last time.
    ran_on: Vec<usize>,
}

impl AffinityPartitioner {
    /// A partitioner with nothing recorded.
    pub fn new() -> Self {
        Self::default()
    }

    /// Which worker ran each chunk in the last loop, chunk by chunk in index order (empty before
    /// the first loop).
    pub fn assignment(&self) -> &[usize] {
        &self.ran_on
    }

    /// The plan for `len` indices starting at `start` on `n` workers.
    fn plan(&self, start: usize, len: usize, n: usize) -> Plan {
        let count = len.min(n * AFFINITY_CHUNKS_PER_WORKER);
        let chunks: Vec<Range<usize>> = (0..count)
            .map(|c| {
                let b = static_block(len, count, c);
                start + b.start..start + b.end
            })
            .collect();
        let replay = self.shape == Some((len, n)) && self.ran_on.len() == count;
        let mut lists = vec![Vec::new(); n];
        for c in 0..count {
            let w = match self.ran_on.get(c) {
                Some(&w) if replay && w < n => w,
                _ => c * n / count.max(1),
            };
            lists[w].push(c);
        }
        balance(&mut lists, count.div_ceil(n));
        Plan {
            chunks,
            lists,
            take_over: true,
        }
    }
}

/// Moves chunks from the ends of lists longer than `fair` to the currently shortest lists, then
/// sorts each list (so a worker walks its chunks in index order).
fn balance(lists: &mut [Vec<usize>], fair: usize) {
    loop {
        let (long, _) = match lists.iter().enumerate().max_by_key(|(i, l)| (l.len(), !i)) {
            Some(x) if x.1.len() > fair => x,
            _ => break,
        };
        let Some(c) = lists[long].pop() else { break };
        let short = (0..lists.len())
            .min_by_key(|&i| (lists[i].len(), i))
            .unwrap_or(long);
        lists[short].push(c);
    }
    for l in lists.iter_mut() {
        l.sort_unstable();
    }
}

/// Calls `body(i)` for every `i` in `range`, in parallel on the current pool, handing each chunk
/// to the worker that ran it in the previous call with the same `partitioner` (see
/// [`AffinityPartitioner`]), so data a chunk touches is still in that worker's cache. Workers
/// that are busy or blocked do not delay the loop: the others run their chunks. Returns when
/// all calls finished; a panic is re-raised here.
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// let pool = threadlab::Pool::builder().threads(2).build()?;
/// let mut ap = threadlab::AffinityPartitioner::new();
/// let hits: Vec<AtomicUsize> = (0..100).map(|_| AtomicUsize::new(0)).collect();
/// pool.install(|| {
///     for _ in 0..5 {
///         threadlab::for_each_affinity(0..100, &mut ap, |i| {
///             hits[i].fetch_add(1, Ordering::Relaxed);
///         });
///     }
/// });
/// assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 5));
/// # Ok::<(), threadlab::BuildError>(())
/// ```
pub fn for_each_affinity<F>(range: Range<usize>, partitioner: &mut AffinityPartitioner, body: F)
where
    F: Fn(usize) + Sync + Send,
{
    let start = range.start;
    let len = range.len();
    let (ran_on, n) = on_current_pool(|w| {
        let n = w.registry().num_threads();
        let plan = partitioner.plan(start, len, n);
        let body = |chunk: Range<usize>| chunk.for_each(&body);
        (mailed::run(w, plan, &body), n)
    });
    partitioner.shape = Some((len, n));
    partitioner.ran_on = ran_on;
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn static_blocks_cover_the_range_in_order() {
        for (len, n) in [(10, 3), (2, 4), (0, 2), (1000, 7), (7, 7)] {
            let mut next = 0;
            for k in 0..n {
                let b = static_block(len, n, k);
                assert_eq!(b.start, next, "len {len}, n {n}, block {k}");
                assert!(b.len() == len / n || b.len() == len / n + 1);
                next = b.end;
            }
            assert_eq!(next, len);
        }
    }

    #[test]
    fn balance_moves_only_the_excess() {
        let mut lists = vec![vec![0, 1, 2, 3, 4, 5], vec![], vec![6, 7, 8]];
        balance(&mut lists, 3);
        assert_eq!(lists, vec![vec![0, 1, 2], vec![3, 4, 5], vec![6, 7, 8]]);
        let mut fair = vec![vec![0, 1], vec![2, 3]];
        balance(&mut fair, 2);
        assert_eq!(fair, vec![vec![0, 1], vec![2, 3]]);
    }

    #[test]
    fn affinity_plan_starts_static_and_replays() {
        let mut ap = AffinityPartitioner::new();
        let plan = ap.plan(100, 64, 2);
        assert_eq!(plan.chunks.len(), 16);
        assert_eq!(plan.chunks[0], 100..104);
        assert_eq!(plan.lists[0], (0..8).collect::<Vec<_>>());
        assert_eq!(plan.lists[1], (8..16).collect::<Vec<_>>());
        // A recorded assignment is replayed as long as it is fair…
        ap.shape = Some((64, 2));
        ap.ran_on = (0..16).map(|c| c % 2).collect();
        let plan = ap.plan(0, 64, 2);
        assert_eq!(plan.lists[0], (0..16).step_by(2).collect::<Vec<_>>());
        // …and rebalanced when one worker ran everything.
        ap.ran_on = vec![0; 16];
        let plan = ap.plan(0, 64, 2);
        assert_eq!(plan.lists[0].len(), 8);
        assert_eq!(plan.lists[1].len(), 8);
        // A different length starts over.
        let plan = ap.plan(0, 65, 2);
        assert_eq!(plan.lists[0], (0..8).collect::<Vec<_>>());
    }
}
