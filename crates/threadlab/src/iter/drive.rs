//! The engine under every parallel iterator: a [`Producer`] (a splittable source of items) run
//! by one worker item block by item block into a [`Consumer`], split in half only at a heartbeat.
//!
//! This is the loop of heartbeat scheduling generalised to values: a worker takes the next
//! block of positions of its producer (growing to [`BLOCK`], see [`BLOCK_TIME`]) and folds them into its consumer with a plain sequential
//! iterator (so the compiler can unroll and vectorise the block). Between blocks it reads its
//! heartbeat flag; clear — nobody idle — it goes on. Set, it polls the heartbeat (at most every
//! `LOOP_SPACING`), and at a beat splits the *remaining* positions in half: it keeps the first
//! half with its consumer and publishes the second with a fresh consumer split off from its own
//! (heartbeat scheduling, Acar et al., PLDI 2018; the loop form of Rainey et al., PLDI 2021).
//! One exception to "only at a beat": a pipeline's whole run is split at once when a worker is
//! already idle as it starts (the idle worker would ask within a beat anyway; this saves it the
//! wait, which is a large share of a millisecond-long kernel).
//! The two results are reduced left-to-right, so an ordered consumer (`collect`) keeps order.
//! The producer/consumer split itself follows Rayon's `plumbing` design (Matsakis and Stone):
//! producers know how to split and iterate, consumers how to fold and reduce.

use crate::heartbeat::LOOP_SPACING;
use crate::join::join_promoted;
use crate::pool::registry::Registry;
use crate::pool::worker::WorkerThread;
use crate::trace::hooks::TaskSpan;
use crate::trace::TaskKind;
use std::marker::PhantomData;
use std::time::{Duration, Instant};

/// The most positions taken between two reads of the heartbeat flag: enough that a block of a
/// cheap body (a multiply-add, a filter test) runs as a vectorised loop whose per-block cost
/// (a flag load, a split of the producer) vanishes. A heavy body never gets this far: a block
/// that takes more than [`BLOCK_TIME`] is not doubled.
pub(crate) const BLOCK: usize = 1024;

/// A run's blocks start at one position and double after a block that took at most this, up to
/// [`BLOCK`]: so a heavy body (an n-body row, an image row) is still checked between items and
/// answers a request within a check interval, while a cheap one reaches full blocks after a few
/// dozen items. A slow block does not stop the growth: the clock is then read after 2, 4, … up to
/// [`MAX_WINDOW`] blocks, and the size doubles as soon as those blocks took at most this on
/// average. Two earlier rules each cost a kernel its speed. Stopping the growth for the rest of the
/// run at the first slow block: one page fault early in a cheap run (a `collect` into fresh memory
/// faults every 4 KiB) left the whole run in small blocks (in a profile, the blocks' scalar tail
/// loop and the flag read took about as long as the vectorised loop), and `map` + `collect` of 10^7
/// items lost 6% against Rayon. Reading the clock after every block that is not full: a body too
/// heavy to grow paid a clock read (25 ns on the development VM) per block for the whole run, 0.2%
/// of the n-body step's 14 µs per body and more for a body that stops growing at a few microseconds
/// a block.
const BLOCK_TIME: Duration = Duration::from_micros(5);

/// The most blocks between two clock reads while a run's blocks are not full (see
/// [`BLOCK_TIME`]).
const MAX_WINDOW: u32 = 64;

/// A splittable source of items: a range, a slice, or an adapter over other producers.
///
/// `len` counts *positions* (base items); a filtering adapter yields at most that many items.
#[allow(clippy::len_without_is_empty)]
pub trait Producer: Send + Sized {
    /// What the producer yields.
    type Item;
    /// The sequential iterator over a block of positions.
    type Iter<'s>: Iterator<Item = Self::Item>
    where
        Self: 's;
    /// Positions left.
    fn len(&self) -> usize;
    /// The first `mid` positions and the rest.
    fn split_at(self, mid: usize) -> (Self, Self);
    /// Takes the first `n` positions (`n <= len`) as a sequential iterator; the producer keeps
    /// the rest. Positions the returned iterator does not reach are dropped with it.
    fn take(&mut self, n: usize) -> Self::Iter<'_>;
    /// True when every position yields exactly one item (no filtering): `collect` then writes
    /// in place.
    fn exact(&self) -> bool {
        true
    }
    /// The fewest positions a piece split off may have (`with_min_len`); 1 unless asked.
    fn min_len(&self) -> usize {
        1
    }
    /// The most positions a piece may have before it is split without waiting for a beat
    /// (`with_max_len`); unbounded unless asked.
    fn max_len(&self) -> usize {
        usize::MAX
    }
    /// Whether the run goes in sequential blocks, each run in parallel before the next starts
    /// (`by_uniform_blocks`, `by_exponential_blocks`); `None` unless asked.
    fn blocks(&self) -> Option<Blocks> {
        None
    }
}

/// How a run is cut into sequential blocks (see [`Producer::blocks`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Blocks {
    /// Blocks of this many positions (`by_uniform_blocks`).
    Uniform(usize),
    /// Blocks as many positions as the pool has workers, then twice as many each time
    /// (`by_exponential_blocks`, as Rayon sizes them).
    Exponential,
}

/// Folds items and can be split; results of neighbouring pieces reduce left to right.
pub(crate) trait Consumer<T>: Send + Sized {
    type Result: Send;
    /// Folds a block of items in order.
    fn consume_iter<I: Iterator<Item = T>>(&mut self, iter: I);
    /// Folds the block of the next `n` positions (what the engine calls): by default
    /// `consume_iter`; a consumer that must know the block's length (Rayon's indexed consumers,
    /// `bridge.rs`) uses `n`.
    #[inline]
    fn consume_block<I: Iterator<Item = T>>(&mut self, n: usize, iter: I) {
        let _ = n;
        self.consume_iter(iter);
    }
    /// True when no more items can change the result (short-circuiting consumers).
    fn full(&self) -> bool {
        false
    }
    /// A fresh consumer for the positions after the next `left` ones, which this consumer
    /// keeps.
    fn split_off(&mut self, left: usize) -> Self;
    fn finish(self) -> Self::Result;
    /// Combines this piece's result with the next piece's.
    fn reducer(&self) -> Self::Reducer;
    /// How results combine.
    type Reducer: Reducer<Self::Result>;
}

/// Combines the results of two neighbouring pieces, `left` first.
pub(crate) trait Reducer<R> {
    fn reduce(self, left: R, right: R) -> R;
}

/// Runs `op` on a worker: this one, else one of the global pool's.
pub(crate) fn on_worker<R: Send>(op: impl FnOnce(&WorkerThread) -> R + Send) -> R {
    match WorkerThread::current() {
        Some(w) => op(w),
        None => Registry::in_worker(crate::global::registry(), |w, _| op(w)),
    }
}

/// Runs producer `p` into consumer `c` on the current pool (else the global one).
pub(crate) fn drive<P, C>(p: P, c: C) -> C::Result
where
    P: Producer,
    C: Consumer<P::Item>,
{
    on_worker(|w| match p.blocks() {
        Some(blocks) => run_blocks(w, p, c, blocks),
        None => run(w, p, c, true),
    })
}

/// Runs `p` into `c` in sequential blocks (`Producer::blocks`): each block is a run of its own
/// (split in parallel as any run is), which ends before the next one starts, as in Rayon.
fn run_blocks<P, C>(w: &WorkerThread, mut p: P, mut c: C, blocks: Blocks) -> C::Result
where
    P: Producer,
    C: Consumer<P::Item>,
{
    let mut size = match blocks {
        Blocks::Uniform(n) => n.max(1),
        Blocks::Exponential => w.registry().num_threads().max(1),
    };
    // The blocks' results so far, and the reducer between them and the rest.
    let mut done: Option<(C::Result, C::Reducer)> = None;
    loop {
        if p.len() <= size || c.full() {
            let last = run(w, p, c, true);
            return match done {
                Some((before, reducer)) => reducer.reduce(before, last),
                None => last,
            };
        }
        let (block, rest) = p.split_at(size);
        let rest_c = c.split_off(size);
        let between = c.reducer();
        let result = run(w, block, c, true);
        let result = match done.take() {
            Some((before, reducer)) => reducer.reduce(before, result),
            None => result,
        };
        done = Some((result, between));
        (p, c) = (rest, rest_c);
        if blocks == Blocks::Exponential {
            size = size.saturating_mul(2);
        }
    }
}

/// Runs `p` into `c` block by block on `w`, splitting at beats (see the module doc). `top`: the
/// whole run of a pipeline, which is split at once if a worker is idle already (so it gets half
/// the work without waiting for a beat); pieces split off later wait for beats.
fn run<P, C>(w: &WorkerThread, mut p: P, mut c: C, top: bool) -> C::Result
where
    P: Producer,
    C: Consumer<P::Item>,
{
    // A piece that can no longer change the result (a search already decided) is not split.
    if c.full() {
        return c.finish();
    }
    // `with_max_len`: a piece longer than asked is split at once, as Rayon's splitter does
    // (unless its halves would be shorter than `with_min_len`).
    let too_long = p.len() > p.max_len() && p.len() >= p.min_len().saturating_mul(2);
    let eager = top && p.len() >= 2 * BLOCK && w.registry().idle_exists();
    if !(too_long || eager && p.len() >= p.min_len().saturating_mul(2)) {
        let _span = TaskSpan::enter(TaskKind::LoopChunk, None);
        let hb = w.heartbeat();
        // A block is what the producer hands over in one sequential iterator: at least
        // `with_min_len` positions, as a Rayon piece is (a `repeat_n` then clones its item once
        // less, a `fold` folds at least that many).
        let mut block = p.min_len().max(1);
        let mut started = Instant::now();
        // Blocks timed together (see `BLOCK_TIME`), and how many of them have run.
        let (mut window, mut timed) = (1u32, 0u32);
        loop {
            let len = p.len();
            if len == 0 || c.full() {
                return c.finish();
            }
            // A piece that grew past `with_max_len` (a `flat_map` opened an item with more
            // positions) is split as one that started too long.
            if len > p.max_len() && len >= p.min_len().saturating_mul(2) {
                break;
            }
            if len >= 2
                && hb.wanted()
                && len >= p.min_len().saturating_mul(2)
                && hb.poll(LOOP_SPACING, || w.registry().idle_exists())
            {
                break;
            }
            let n = block_len(len, block, p.min_len(), p.max_len());
            c.consume_block(n, p.take(n));
            if block < BLOCK {
                timed += 1;
                if timed == window {
                    let now = Instant::now();
                    if now.duration_since(started) <= BLOCK_TIME * window {
                        // Fast on average: double, and time the next block alone.
                        block *= 2;
                        window = 1;
                    } else {
                        // Slow: keep the size, and read the clock half as often.
                        window = (window * 2).min(MAX_WINDOW);
                    }
                    started = now;
                    timed = 0;
                }
            }
        }
    }
    // A beat (or an idle worker at the start), and at least two positions left: publish the
    // second half.
    let mid = p.len() / 2;
    let (left, right) = p.split_at(mid);
    let rc = c.split_off(mid);
    let reducer = c.reducer();
    let (a, b) = join_promoted(
        w,
        || run(w, left, c, false),
        move || {
            let thief = WorkerThread::current().expect("iter::run: runs on a worker");
            run(thief, right, rc, false)
        },
    );
    reducer.reduce(a, b)
}

/// Drops every item (made for their side effects only: the items a `skip` skips).
pub(crate) struct Drain<T>(pub(crate) PhantomData<fn(T)>);

impl<T> Consumer<T> for Drain<T> {
    type Result = ();
    type Reducer = fn((), ()) -> ();
    #[inline]
    fn consume_iter<I: Iterator<Item = T>>(&mut self, iter: I) {
        iter.for_each(drop);
    }
    fn split_off(&mut self, _left: usize) -> Self {
        Drain(PhantomData)
    }
    fn finish(self) {}
    fn reducer(&self) -> Self::Reducer {
        |(), ()| ()
    }
}

/// The next block's length, of `len` positions left, aiming at `block`: at most `max`
/// (`with_max_len`), at least `min` (`with_min_len`), and leaving no remainder shorter than `min`
/// (it would make a shorter block later): so a `fold` accumulator, one per block, covers at
/// least `min` and at most `max.max(2 * min - 1)` items, the bounds of a piece of Rayon's.
#[inline]
fn block_len(len: usize, block: usize, min: usize, max: usize) -> usize {
    let min = min.max(1);
    let mut n = len.min(block.max(min)).min(max.max(min));
    if n < len && len - n < min {
        // Shrink the block to leave `min` (the block is then `len - min`, at least `min`), or
        // take the rest with it when two blocks of `min` do not fit.
        n = if len - min >= min { len - min } else { len };
    }
    n
}

/// `count`: the simplest consumer, beside the trait.
pub(crate) struct Count<T>(pub(crate) usize, pub(crate) PhantomData<fn(T)>);

impl<T> Consumer<T> for Count<T> {
    type Result = usize;
    type Reducer = fn(usize, usize) -> usize;
    #[inline]
    fn consume_iter<I: Iterator<Item = T>>(&mut self, iter: I) {
        // Every item is made (and dropped), as in Rayon's `count` (a `repeat_n`'s clones, a
        // `map`'s calls): `Iterator::count` may skip making them.
        self.0 += iter.fold(0, |n, _| n + 1);
    }
    fn split_off(&mut self, _left: usize) -> Self {
        Count(0, PhantomData)
    }
    fn finish(self) -> usize {
        self.0
    }
    fn reducer(&self) -> Self::Reducer {
        |a, b| a + b
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ops::Range;
    use std::sync::{Arc, Mutex};

    /// A range whose `take`s are logged, and whose block holding position `slow_at` takes
    /// three block times (a page fault, a preemption).
    struct Logged {
        range: Range<usize>,
        slow_at: usize,
        takes: Arc<Mutex<Vec<usize>>>,
    }

    impl Producer for Logged {
        type Item = usize;
        type Iter<'s> = Range<usize>;
        fn len(&self) -> usize {
            self.range.len()
        }
        fn split_at(self, mid: usize) -> (Self, Self) {
            let cut = self.range.start + mid;
            let right = Logged {
                range: cut..self.range.end,
                slow_at: self.slow_at,
                takes: self.takes.clone(),
            };
            let left = Logged {
                range: self.range.start..cut,
                ..self
            };
            (left, right)
        }
        fn take(&mut self, n: usize) -> Range<usize> {
            self.takes.lock().unwrap().push(n);
            let block = self.range.start..self.range.start + n;
            if block.contains(&self.slow_at) {
                std::thread::sleep(BLOCK_TIME * 3);
            }
            self.range.start += n;
            block
        }
    }

    /// The sizes of the blocks of one run over `64 * BLOCK` positions on a one-worker pool.
    fn blocks(pool: &crate::thread_pool::Pool, slow_at: usize) -> Vec<usize> {
        let takes = Arc::new(Mutex::new(Vec::new()));
        let len = 64 * BLOCK;
        let p = Logged {
            range: 0..len,
            slow_at,
            takes: takes.clone(),
        };
        let counted = pool.install(|| drive(p, Count(0, PhantomData)));
        assert_eq!(counted, len);
        let takes = takes.lock().unwrap().clone();
        assert_eq!(takes.iter().sum::<usize>(), len);
        takes
    }

    /// One slow block early in a cheap run costs about one doubling, not the growth of the
    /// rest of the run: the run ends with blocks as large as a run without the slow block, in
    /// about as many blocks (a few more for preemptions; before the fix, a slow fourth position
    /// left the run in blocks of 4: 16,000 blocks).
    ///
    /// Block sizes follow the clock, so a preemption of the test's thread (a loaded CI machine)
    /// slows a block of either run as the injected sleep does. Each case is therefore tried up
    /// to five times, each try a control run and a run with the slow block back to back, and
    /// passes when one try holds: a preemption is rare enough not to hit five tries, while the
    /// defect this guards against (growth stopped for good by one slow block) fails every try.
    #[test]
    fn a_slow_block_does_not_stop_the_blocks_growing() {
        let pool = crate::thread_pool::Pool::builder()
            .threads(1)
            .build()
            .unwrap();
        for slow_at in [0, 3, 20, 100] {
            let mut tries = Vec::new();
            let held = (0..5).any(|_| {
                let control = blocks(&pool, usize::MAX);
                let takes = blocks(&pool, slow_at);
                let largest = control.iter().max().copied();
                let ok = largest >= Some(64)
                    && takes.iter().max().copied() == largest
                    && takes.len() <= control.len() + 8;
                tries.push((control, takes));
                ok
            });
            assert!(
                held,
                "slow at {slow_at}: in each of five tries, the run with a slow block ended \
                 with smaller blocks or took more than 8 blocks more than the control run \
                 (control, slow): {tries:?}"
            );
        }
    }
}
