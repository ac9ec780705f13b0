//! A [`Trace`] made from events observed elsewhere: a sampler of another process's threads
//! (`threadlab run -- CMD`), a converter from another tool's format, a test. The events are the
//! same model the recorder decodes into (`event.rs`), so the doctor, `compare` and the exports
//! read the result like any recording.
//!
//! ```
//! use threadlab_trace::{Event, EventKind, TraceBuilder};
//! let mut b = TraceBuilder::new();
//! let t = b.thread(42, "worker");
//! let lock = b.name("futex 0x1000");
//! b.push(t, Event { ts_ns: 0, kind: EventKind::LockWait { lock: 0x1000, name: lock } });
//! b.push(t, Event { ts_ns: 5_000, kind: EventKind::LockAcquired { lock: 0x1000, name: lock, handoff: None } });
//! b.duration_ns(10_000);
//! b.cpus(2);
//! let trace = b.build();
//! assert_eq!(trace.threads()[0].name(), "worker");
//! assert_eq!(trace.event_count(), 2);
//! ```

use super::event::{Event, NameId};
use super::lock_summary::LockSummary;
use super::trace::{ThreadTrack, Trace};

/// Builds a [`Trace`] thread by thread from events observed elsewhere (a sampler of another
/// process, another format, a test); the doctor, `compare` and the exports read the result like
/// any recording.
#[derive(Debug, Default)]
pub struct TraceBuilder {
    trace: Trace,
    /// The newest timestamp pushed per thread: events are kept in time order.
    last_ns: Vec<u64>,
}

impl TraceBuilder {
    /// An empty trace: no threads, no names, duration 0, CPUs unknown (0).
    ///
    /// ```
    /// assert_eq!(threadlab_trace::TraceBuilder::new().build().threads().len(), 0);
    /// ```
    pub fn new() -> TraceBuilder {
        TraceBuilder::default()
    }

    /// Adds a thread's track (OS thread id `tid`, `name`) and returns its index for
    /// [`TraceBuilder::push`]. Tracks keep the order they were added in.
    ///
    /// ```
    /// let mut b = threadlab_trace::TraceBuilder::new();
    /// assert_eq!(b.thread(7, "main"), 0);
    /// assert_eq!(b.thread(8, "io"), 1);
    /// ```
    pub fn thread(&mut self, tid: u64, name: &str) -> usize {
        let track = ThreadTrack::from_events(tid, name.to_owned(), None, []);
        self.trace.threads.push(track);
        self.last_ns.push(0);
        self.trace.threads.len() - 1
    }

    /// Marks track `thread` as the pool's worker number `worker` (what the recorder notes for
    /// its own workers).
    ///
    /// ```
    /// let mut b = threadlab_trace::TraceBuilder::new();
    /// let t = b.thread(7, "threadlab-worker-0");
    /// b.worker(t, 0);
    /// assert_eq!(b.build().threads()[0].worker(), Some(0));
    /// ```
    pub fn worker(&mut self, thread: usize, worker: u32) {
        self.trace.threads[thread].worker = Some(worker);
    }

    /// Interns `name` (a lock's, a zone's) and returns its id; the same name gives the same id.
    ///
    /// ```
    /// let mut b = threadlab_trace::TraceBuilder::new();
    /// assert_eq!(b.name("queue"), b.name("queue"));
    /// ```
    pub fn name(&mut self, name: &str) -> NameId {
        if let Some(i) = self.trace.names.iter().position(|n| n == name) {
            return NameId(i as u32);
        }
        self.trace.names.push(name.to_owned());
        NameId(self.trace.names.len() as u32 - 1)
    }

    /// Appends `event` to thread `thread`'s track. An event older than the track's newest is
    /// moved up to it, so each track stays in time order.
    ///
    /// # Panics
    /// If `thread` is not an index returned by [`TraceBuilder::thread`].
    ///
    /// ```
    /// use threadlab_trace::{Event, EventKind, TraceBuilder};
    /// let mut b = TraceBuilder::new();
    /// let t = b.thread(1, "main");
    /// b.push(t, Event { ts_ns: 9, kind: EventKind::ParkBegin });
    /// b.push(t, Event { ts_ns: 3, kind: EventKind::ParkEnd });
    /// assert_eq!(b.build().threads()[0].events().last().map(|e| e.ts_ns), Some(9));
    /// ```
    pub fn push(&mut self, thread: usize, mut event: Event) {
        let last = &mut self.last_ns[thread];
        event.ts_ns = event.ts_ns.max(*last);
        *last = event.ts_ns;
        self.trace.threads[thread].events.push(event);
    }

    /// Puts `lock`'s aggregates in the trace's lock table (see [`Trace::lock_table`]), in place
    /// of an earlier row of the same lock id: what an observer that counted the lock, rather
    /// than recording each use as an event, knows of it. Its name ids must be this builder's.
    ///
    /// ```
    /// use threadlab_trace::{LockSummary, TraceBuilder};
    /// let mut b = TraceBuilder::new();
    /// let name = b.name("big_lock");
    /// b.lock(LockSummary { acquisitions: Some(40), ..LockSummary::new(1, name) });
    /// assert_eq!(b.build().locks()[0].acquisitions, Some(40));
    /// ```
    pub fn lock(&mut self, mut lock: LockSummary) {
        lock.sort();
        match self.trace.locks.iter_mut().find(|l| l.lock == lock.lock) {
            Some(row) => *row = lock,
            None => self.trace.locks.push(lock),
        }
    }

    /// Sets the trace's length (default: the newest event's timestamp).
    ///
    /// ```
    /// let mut b = threadlab_trace::TraceBuilder::new();
    /// b.duration_ns(1_000);
    /// assert_eq!(b.build().duration_ns(), 1_000);
    /// ```
    pub fn duration_ns(&mut self, ns: u64) {
        self.trace.duration_ns = ns;
    }

    /// Sets the CPUs the observed process could run on (see [`Trace::cpus`]).
    ///
    /// ```
    /// let mut b = threadlab_trace::TraceBuilder::new();
    /// b.cpus(4);
    /// assert_eq!(b.build().cpus(), 4);
    /// ```
    pub fn cpus(&mut self, cpus: u32) {
        self.trace.cpus = cpus;
    }

    /// The finished trace.
    ///
    /// ```
    /// let mut b = threadlab_trace::TraceBuilder::new();
    /// b.thread(1, "main");
    /// assert_eq!(b.build().threads().len(), 1);
    /// ```
    pub fn build(mut self) -> Trace {
        let newest = self.last_ns.iter().copied().max().unwrap_or(0);
        for t in &mut self.trace.threads {
            t.events.bytes.shrink_to_fit();
        }
        self.trace.duration_ns = self.trace.duration_ns.max(newest);
        self.trace
    }
}
