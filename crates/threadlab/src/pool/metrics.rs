//! Per-worker counters and the public snapshot [`Metrics`].
//!
//! Every counter is written only by its own worker, so it is a relaxed load plus a relaxed store
//! (no read-modify-write, no contention); readers (`Pool::metrics`) take relaxed loads and may see
//! a slightly stale figure, which is all a metric needs. Each worker's block sits on its own cache
//! line. (The few counters written from elsewhere say so.)
//!
//! # Histograms
//!
//! With [`Builder::time_histograms`](crate::Builder::time_histograms), each worker times every
//! task it takes from a queue and counts the time in a [`Histogram`] of fixed log-scale buckets
//! (powers of two of nanoseconds: one add to one of [`Histogram::BUCKETS`] counters, the bucket
//! found from the duration's leading zeros), one histogram for future polls and one for the
//! other tasks, as Tokio's `poll_time_histogram` does for polls (its log-scale option); no
//! allocation and no lock. Off, a worker pays one predictable branch per task.

use std::time::Duration;

use crate::loom::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};

/// The live counters of one worker.
pub(crate) struct WorkerCounters {
    pub(crate) tasks: AtomicU64,
    pub(crate) steals: AtomicU64,
    pub(crate) failed_steals: AtomicU64,
    pub(crate) promotions: AtomicU64,
    pub(crate) parks: AtomicU64,
    pub(crate) wakeups: AtomicU64,
    pub(crate) awake_nanos: AtomicU64,
    pub(crate) parked: AtomicBool,
    pub(crate) os_tid: AtomicU64,
    /// Threads started for this worker (1, plus one per restart of an elastic pool), counted
    /// by the starter before the spawn; `retirements` and `exits` are counted by the leaving
    /// thread. Written by different threads, so a read-modify-write each (all three are on
    /// cold paths); Relaxed: statistics. "Alive" is `starts > retirements + exits`, which
    /// does not depend on the order of the three.
    pub(crate) starts: AtomicU64,
    /// Times this worker's thread exited idle (an elastic pool's keep-alive).
    pub(crate) retirements: AtomicU64,
    /// Times this worker's thread exited at shutdown (0 or 1).
    pub(crate) exits: AtomicU64,
    /// Run time of the tasks this worker took from a queue (with time histograms on).
    pub(crate) task_time: TimeCounts,
    /// Poll time of the futures this worker polled (with time histograms on).
    pub(crate) poll_time: TimeCounts,
    /// Future tasks spawned on this worker minus those freed on it (single writer: this
    /// worker); the pool sums them with the outside threads' figure.
    pub(crate) futures_net: AtomicI64,
    /// The CPU this worker is pinned to, or its pinning's state (`super::affinity`).
    pub(crate) pin: AtomicI64,
}

impl Default for WorkerCounters {
    fn default() -> Self {
        WorkerCounters {
            tasks: AtomicU64::new(0),
            steals: AtomicU64::new(0),
            failed_steals: AtomicU64::new(0),
            promotions: AtomicU64::new(0),
            parks: AtomicU64::new(0),
            wakeups: AtomicU64::new(0),
            awake_nanos: AtomicU64::new(0),
            parked: AtomicBool::new(false),
            os_tid: AtomicU64::new(0),
            starts: AtomicU64::new(0),
            retirements: AtomicU64::new(0),
            exits: AtomicU64::new(0),
            task_time: TimeCounts::default(),
            poll_time: TimeCounts::default(),
            futures_net: AtomicI64::new(0),
            pin: AtomicI64::new(crate::pool::affinity::PIN_PENDING),
        }
    }
}

/// One histogram's live counters (see [`Histogram`]).
pub(crate) struct TimeCounts([AtomicU64; Histogram::BUCKETS]);

impl Default for TimeCounts {
    fn default() -> Self {
        TimeCounts(std::array::from_fn(|_| AtomicU64::new(0)))
    }
}

impl TimeCounts {
    /// Counts one duration (the owner worker only).
    #[inline]
    pub(crate) fn record(&self, nanos: u64) {
        WorkerCounters::add(&self.0[Histogram::bucket_of(nanos)], 1);
    }

    fn snapshot(&self) -> Histogram {
        Histogram {
            // Relaxed: statistics.
            counts: self.0.iter().map(|c| c.load(Ordering::Relaxed)).collect(),
        }
    }
}

/// A histogram of durations in fixed log-scale buckets: bucket 0 holds what took under 128 ns,
/// bucket `k` (1 ≤ k < 23) what took from 2^(k+6) ns up to twice that, the last bucket what
/// took 2^29 ns (0.54 s) or more.
///
/// ```
/// use std::time::Duration;
/// use threadlab::Histogram;
/// assert_eq!(Histogram::bucket_range(0), (Duration::ZERO, Some(Duration::from_nanos(128))));
/// assert_eq!(Histogram::bucket_range(1).1, Some(Duration::from_nanos(256)));
/// assert_eq!(Histogram::bucket_range(Histogram::BUCKETS - 1).1, None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Histogram {
    /// How many durations fell in each bucket ([`Histogram::BUCKETS`] of them).
    pub counts: Vec<u64>,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: vec![0; Histogram::BUCKETS],
        }
    }
}

impl Histogram {
    /// The number of buckets.
    pub const BUCKETS: usize = 24;

    /// The bucket a duration of `nanos` falls in.
    #[inline(always)]
    pub(crate) fn bucket_of(nanos: u64) -> usize {
        let bits = (u64::BITS - (nanos | 1).leading_zeros()) as usize;
        bits.saturating_sub(7).min(Self::BUCKETS - 1)
    }

    /// Bucket `i`'s range: from its lower bound (inclusive) up to its upper bound (exclusive;
    /// `None` for the last, open-ended one).
    pub fn bucket_range(i: usize) -> (Duration, Option<Duration>) {
        let lo = if i == 0 { 0 } else { 1u64 << (i + 6) };
        let hi = (i + 1 < Self::BUCKETS).then(|| Duration::from_nanos(1u64 << (i + 7)));
        (Duration::from_nanos(lo), hi)
    }

    /// How many durations were counted.
    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// An upper bound of the `q` quantile (0–1): the upper edge of the bucket it falls in (the
    /// last bucket's lower edge if it falls there); `None` when nothing was counted.
    ///
    /// ```
    /// let mut h = threadlab::Histogram::default();
    /// h.counts[3] = 10; // 512 ns – 1.02 µs
    /// assert_eq!(h.quantile(0.5), Some(std::time::Duration::from_nanos(1024)));
    /// ```
    pub fn quantile(&self, q: f64) -> Option<Duration> {
        let total = self.count();
        if total == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, hi) = Self::bucket_range(i);
                return Some(hi.unwrap_or(lo));
            }
        }
        None
    }

    /// Adds `other`'s counts to this one's (e.g. to sum the workers' histograms).
    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
    }
}

impl WorkerCounters {
    /// Adds `n` to a counter this worker owns. Relaxed load and store: single writer (this
    /// worker); readers only need an eventually-current value.
    #[inline(always)]
    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.store(counter.load(Ordering::Relaxed) + n, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self, index: usize) -> WorkerMetrics {
        // Relaxed loads: statistics, no ordering with anything else is needed.
        WorkerMetrics {
            index,
            tasks_run: self.tasks.load(Ordering::Relaxed),
            steals: self.steals.load(Ordering::Relaxed),
            failed_steals: self.failed_steals.load(Ordering::Relaxed),
            promotions: self.promotions.load(Ordering::Relaxed),
            parks: self.parks.load(Ordering::Relaxed),
            wakeups: self.wakeups.load(Ordering::Relaxed),
            awake_time: Duration::from_nanos(self.awake_nanos.load(Ordering::Relaxed)),
            is_parked: self.parked.load(Ordering::Relaxed),
            os_tid: self.os_tid.load(Ordering::Relaxed),
            // Relaxed: statistics, as above.
            alive: {
                let starts = self.starts.load(Ordering::Relaxed);
                let left =
                    self.retirements.load(Ordering::Relaxed) + self.exits.load(Ordering::Relaxed);
                starts > left
            },
            starts: self.starts.load(Ordering::Relaxed),
            retirements: self.retirements.load(Ordering::Relaxed),
            task_run_time: self.task_time.snapshot(),
            poll_time: self.poll_time.snapshot(),
            local_queue_depth: 0,
            inbox_depth: 0,
            pinned_cpu: {
                // Relaxed: a statistic.
                let v = self.pin.load(Ordering::Relaxed);
                usize::try_from(v).ok()
            },
        }
    }
}

/// A snapshot of one worker's counters.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct WorkerMetrics {
    /// The worker's index in the pool (0-based).
    pub index: usize,
    /// Tasks (jobs) this worker executed, including stolen ones.
    pub tasks_run: u64,
    /// Successful steals (from the injector or another worker's deque).
    pub steals: u64,
    /// Search rounds that visited every queue and found nothing.
    pub failed_steals: u64,
    /// Work this worker published at a heartbeat for idle workers: a `join`'s pending second
    /// half, or half of a loop's remaining range.
    pub promotions: u64,
    /// Times the worker parked (blocked in the OS).
    pub parks: u64,
    /// Times the worker returned from a park because somebody woke it.
    pub wakeups: u64,
    /// Time spent awake (running tasks, searching, spinning), accumulated between parks: the
    /// worker's "busy time" from the pool's point of view. Updated when it parks.
    pub awake_time: Duration,
    /// True while the worker is parked (or about to park, its re-check having found nothing).
    pub is_parked: bool,
    /// The OS thread id (Linux `gettid`), e.g. to read `/proc/self/task/<tid>/stat`, of the
    /// worker's current (or last) thread.
    pub os_tid: u64,
    /// True while the worker has a thread: false once an elastic pool's worker retired
    /// ([`Builder::keep_alive`](crate::Builder::keep_alive)) and after shutdown.
    pub alive: bool,
    /// Threads started for this worker: 1, plus one per restart after a retirement.
    pub starts: u64,
    /// Times this worker's thread exited after idling for the keep-alive.
    pub retirements: u64,
    /// Wall time of each task this worker took from a queue (a spawned task, a stolen `join`
    /// half, a scope's task, …; a task's time includes the tasks it ran while waiting inside
    /// it), futures' polls excepted. Empty unless
    /// [`Builder::time_histograms`](crate::Builder::time_histograms) is on.
    pub task_run_time: Histogram,
    /// Wall time of each poll of a future this worker ran. Empty unless
    /// [`Builder::time_histograms`](crate::Builder::time_histograms) is on.
    pub poll_time: Histogram,
    /// Jobs in this worker's deque when the snapshot was taken (others may steal them).
    pub local_queue_depth: usize,
    /// Jobs addressed to this worker (`spawn_on`, `install_on`) waiting in its inbox.
    pub inbox_depth: usize,
    /// The CPU this worker's thread is pinned to
    /// ([`Builder::pin_to_cores`](crate::Builder::pin_to_cores)); `None` when not pinned.
    pub pinned_cpu: Option<usize>,
}

/// A snapshot of a pool's counters, from [`Pool::metrics`](crate::Pool::metrics).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Metrics {
    /// One entry per worker, in index order.
    pub workers: Vec<WorkerMetrics>,
    /// Jobs waiting in the injector (work submitted from outside the pool).
    pub injector_depth: usize,
    /// Fire-and-forget tasks that panicked so far, plus the panics caught while dropping a
    /// value of a task (a panic payload, an output nobody reads, a detached or cancelled
    /// future, whatever a panic handler throws): those are caught where they happen, counted
    /// here and printed, so they never unwind through a worker.
    pub panicked_tasks: u64,
    /// Future tasks alive: spawned (`spawn_future`, `block_on`'s inner tasks are not) and not
    /// yet freed (a finished task lives on while its `JoinHandle` does).
    pub alive_tasks: u64,
    /// Workers searching for work when the snapshot was taken (spinning over the queues before
    /// they park). A worker that runs a task or your code never counts here, so with every
    /// other worker parked this is 0 (the sleep protocol wakes a parked worker for new work
    /// only when nobody searches: a stale count would leave the work to one worker).
    pub searching: usize,
    /// Workers parked with nothing to do (an elastic pool's retired workers included) when the
    /// snapshot was taken.
    pub sleeping: usize,
    /// Spare threads started so far: each stood in for workers blocked outside threadlab while
    /// work waited ([`Builder::max_spare_threads`](crate::Builder::max_spare_threads),
    /// [`blocking`](crate::blocking)).
    pub spare_threads_started: u64,
    /// Tasks the spare threads ran (not in any worker's `tasks_run`; [`Metrics::tasks_run`]
    /// counts them).
    pub spare_tasks_run: u64,
    /// Threads of the pool (workers, or guests on their seats) blocked in the kernel inside a
    /// task at the monitor's last look, or inside [`blocking`](crate::blocking). The monitor
    /// looks only while the pool has stalled or spare threads run; 0 otherwise.
    pub blocked_workers: usize,
}

impl Metrics {
    /// The workers' task run time histograms, summed (see [`WorkerMetrics::task_run_time`]).
    pub fn task_run_time(&self) -> Histogram {
        let mut h = Histogram::default();
        for w in &self.workers {
            h.merge(&w.task_run_time);
        }
        h
    }

    /// The workers' poll time histograms, summed (see [`WorkerMetrics::poll_time`]).
    pub fn poll_time(&self) -> Histogram {
        let mut h = Histogram::default();
        for w in &self.workers {
            h.merge(&w.poll_time);
        }
        h
    }

    /// The sum of `tasks_run` over all workers, plus the tasks spare threads ran.
    pub fn tasks_run(&self) -> u64 {
        self.workers.iter().map(|w| w.tasks_run).sum::<u64>() + self.spare_tasks_run
    }

    /// True when every worker is parked (a retired worker counts as parked).
    pub fn all_parked(&self) -> bool {
        self.workers.iter().all(|w| w.is_parked)
    }

    /// Worker threads alive now: the pool's size, less the retired workers of an elastic pool
    /// ([`Builder::keep_alive`](crate::Builder::keep_alive)).
    ///
    /// ```
    /// let pool = threadlab::Pool::builder().threads(2).build()?;
    /// pool.install(|| ()); // the worker that ran it is alive
    /// assert!(pool.metrics().alive_threads() >= 1);
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    pub fn alive_threads(&self) -> usize {
        self.workers.iter().filter(|w| w.alive).count()
    }
}
