//! The [`Trace`] and its [`ThreadTrack`]s: each thread's OS id, name, pool worker index and
//! events, kept encoded (`compact.rs`); the trace's name table, length, dropped-event count,
//! CPUs and lock table (`locks.rs`). The events themselves are `event.rs`.

use super::compact::{EventBuf, Events};
use super::event::{Event, NameId};
use super::lock_summary::LockSummary;

/// One thread's events, kept encoded (a few bytes per event, see [`Events`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadTrack {
    pub(crate) tid: u64,
    pub(crate) name: String,
    pub(crate) worker: Option<u32>,
    pub(crate) events: EventBuf,
}

impl ThreadTrack {
    /// The OS thread id.
    pub fn tid(&self) -> u64 {
        self.tid
    }
    /// The thread's name (`threadlab::trace::set_thread_name`, else the std thread name, else `thread <tid>`).
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The pool worker index, if this thread is a worker.
    pub fn worker(&self) -> Option<u32> {
        self.worker
    }
    /// The events, in time order, decoded as they are iterated (`.iter()` yields [`Event`]s
    /// by value; `.len()`; `.to_vec()` for a slice).
    pub fn events(&self) -> Events<'_> {
        self.events.view()
    }

    /// A track of events already encoded: how the runtime's decoder (`threadlab::trace`) makes
    /// its tracks without encoding each event twice. Not part of the stable API; elsewhere
    /// [`TraceBuilder`](crate::TraceBuilder) makes tracks.
    #[doc(hidden)]
    pub fn from_encoded(
        tid: u64,
        name: String,
        worker: Option<u32>,
        events: EventBuf,
    ) -> ThreadTrack {
        ThreadTrack {
            tid,
            name,
            worker,
            events,
        }
    }

    /// A track of `events` (raised where needed so their timestamps never decrease): how code
    /// in this crate builds traces from other sources.
    pub(crate) fn from_events(
        tid: u64,
        name: String,
        worker: Option<u32>,
        events: impl IntoIterator<Item = Event>,
    ) -> ThreadTrack {
        ThreadTrack {
            tid,
            name,
            worker,
            events: EventBuf::from_events(events),
        }
    }
}

/// A finished recording: every thread's events. Made by the runtime's `Recording::stop`, [`Trace::load`] or
/// a `TraceBuilder`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trace {
    pub(crate) threads: Vec<ThreadTrack>,
    pub(crate) names: Vec<String>,
    pub(crate) duration_ns: u64,
    pub(crate) dropped: u64,
    /// CPUs available to the process when the recording stopped (0: unknown).
    pub(crate) cpus: u32,
    /// The lock table (`locks.rs`): aggregates of locks whose events do not tell everything.
    pub(crate) locks: Vec<LockSummary>,
}

impl Trace {
    /// A trace of its parts: the tracks, the name table their [`NameId`]s index, the length,
    /// the events dropped and the CPUs (0: unknown). How the runtime's recorder assembles what
    /// it decoded; not part of the stable API (elsewhere [`TraceBuilder`](crate::TraceBuilder)
    /// makes traces).
    #[doc(hidden)]
    pub fn from_parts(
        threads: Vec<ThreadTrack>,
        names: Vec<String>,
        duration_ns: u64,
        dropped: u64,
        cpus: u32,
    ) -> Trace {
        Trace {
            threads,
            names,
            duration_ns,
            dropped,
            cpus,
            locks: Vec::new(),
        }
    }

    /// The threads that recorded events, in order of their first event.
    pub fn threads(&self) -> &[ThreadTrack] {
        &self.threads
    }
    /// Resolves a name id; an id from another trace gives `"?"`.
    pub fn name(&self, id: NameId) -> &str {
        self.names.get(id.0 as usize).map_or("?", |s| s.as_str())
    }
    /// Looks a name up.
    pub fn name_id(&self, name: &str) -> Option<NameId> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| NameId(i as u32))
    }
    /// All names, indexed by `NameId`.
    pub fn names(&self) -> &[String] {
        &self.names
    }
    /// Nanoseconds from start to stop.
    pub fn duration_ns(&self) -> u64 {
        self.duration_ns
    }
    /// CPUs the process could run on when the recording stopped
    /// (`std::thread::available_parallelism`, which honours affinity masks and cgroup quotas);
    /// 0 if unknown. Analysis compares runnable threads against it.
    pub fn cpus(&self) -> u32 {
        self.cpus
    }
    /// Events dropped: by the flight recorder (the oldest ones) or past a full recording's
    /// memory cap (the newest ones, see `threadlab::trace::DEFAULT_CAP_BYTES`).
    pub fn dropped_events(&self) -> u64 {
        self.dropped
    }
    /// Events in all threads.
    pub fn event_count(&self) -> usize {
        self.threads.iter().map(|t| t.events.len()).sum()
    }
    /// The index in [`Trace::threads`] of pool worker `worker`.
    pub fn worker_thread(&self, worker: u32) -> Option<usize> {
        self.threads.iter().position(|t| t.worker == Some(worker))
    }
}
