//! [`TraceBuilder`]: a [`Trace`] made from events of another source (samples of `/proc`,
//! another trace format, tests), with the same compact tracks as a recording's.

use super::event::{Event, NameId, ThreadTrack, Trace};

/// Builds a [`Trace`] thread by thread.
///
/// ```
/// use threadlab::trace::{Event, EventKind, TraceBuilder};
///
/// let mut b = TraceBuilder::new(1_000);
/// let step = b.name("step");
/// b.thread(42, "sampler", None, [
///     Event { ts_ns: 100, kind: EventKind::ZoneBegin { name: step } },
///     Event { ts_ns: 600, kind: EventKind::ZoneEnd },
/// ]);
/// let trace = b.cpus(2).build();
/// assert_eq!(trace.threads()[0].events().len(), 2);
/// assert_eq!(trace.name(step), "step");
/// ```
#[derive(Debug, Default)]
pub struct TraceBuilder {
    trace: Trace,
}

impl TraceBuilder {
    /// An empty trace lasting `duration_ns`.
    pub fn new(duration_ns: u64) -> TraceBuilder {
        TraceBuilder {
            trace: Trace {
                duration_ns,
                ..Trace::default()
            },
        }
    }

    /// The id of `name` in the trace's name table (added if new).
    pub fn name(&mut self, name: &str) -> NameId {
        let names = &mut self.trace.names;
        let i = names.iter().position(|n| n == name).unwrap_or_else(|| {
            names.push(name.to_owned());
            names.len() - 1
        });
        NameId(i as u32)
    }

    /// Adds a thread's track. `events` should be in time order (a timestamp below the previous
    /// one is raised to it) and name only ids from [`TraceBuilder::name`].
    pub fn thread(
        &mut self,
        tid: u64,
        name: &str,
        worker: Option<u32>,
        events: impl IntoIterator<Item = Event>,
    ) -> &mut TraceBuilder {
        let track = ThreadTrack::from_events(tid, name.to_owned(), worker, events);
        self.trace.threads.push(track);
        self
    }

    /// The CPUs the traced process could use (0: unknown, the default).
    pub fn cpus(&mut self, cpus: u32) -> &mut TraceBuilder {
        self.trace.cpus = cpus;
        self
    }

    /// Events the source lost ([`Trace::dropped_events`]).
    pub fn dropped(&mut self, dropped: u64) -> &mut TraceBuilder {
        self.trace.dropped = dropped;
        self
    }

    /// The trace.
    pub fn build(&mut self) -> Trace {
        std::mem::take(&mut self.trace)
    }
}
