//! Per-worker counters and the public snapshot [`Metrics`].
//!
//! Every counter is written only by its own worker, so it is a relaxed load plus a relaxed store
//! (no read-modify-write, no contention); readers (`Pool::metrics`) take relaxed loads and may see
//! a slightly stale figure, which is all a metric needs. Each worker's block sits on its own cache
//! line.

use std::time::Duration;

use crate::loom::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The live counters of one worker.
#[derive(Default)]
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
            alive: {
                let starts = self.starts.load(Ordering::Relaxed);
                let left =
                    self.retirements.load(Ordering::Relaxed) + self.exits.load(Ordering::Relaxed);
                starts > left
            },
            starts: self.starts.load(Ordering::Relaxed),
            retirements: self.retirements.load(Ordering::Relaxed),
        }
    }
}

/// A snapshot of one worker's counters.
#[derive(Debug, Clone, PartialEq, Eq)]
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
}

/// A snapshot of a pool's counters, from [`Pool::metrics`](crate::Pool::metrics).
#[derive(Debug, Clone, PartialEq, Eq)]
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
}

impl Metrics {
    /// The sum of `tasks_run` over all workers.
    pub fn tasks_run(&self) -> u64 {
        self.workers.iter().map(|w| w.tasks_run).sum()
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
