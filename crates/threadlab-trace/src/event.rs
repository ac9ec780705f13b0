//! The decoded event model: what a [`Trace`](crate::Trace) holds and what analysis code (the
//! doctor's crate, `threadlab-doctor`) iterates.
//!
//! A trace is a list of [`ThreadTrack`](crate::ThreadTrack)s (`trace.rs`), one per thread that
//! recorded anything: its OS thread id, its name, the pool worker index if it is a worker, and its events in time order. An
//! [`Event`] is a timestamp (nanoseconds since the recording started) and an [`EventKind`].
//! Spans come as begin/end pairs on the same thread and nest properly (zones, tasks, spins,
//! parks, lock waits); lock holds (`LockAcquired` → `LockReleased` of the same lock) may overlap
//! other spans. Cross-thread links are [`FlowId`]s, unique within a trace: a `Spawn` and the
//! `TaskBegin` that first runs that task carry the same flow; so do a `LockReleased` and the
//! `LockAcquired` of a thread that was waiting for it. Names (zones, locks, counters) are
//! [`NameId`]s resolved with [`Trace::name`](crate::Trace::name).

use std::fmt;

/// An interned name: index into the trace's name table ([`Trace::name`](crate::Trace::name)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NameId(pub u32);

/// Links two events on (usually) different threads; unique within a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FlowId(pub u64);

/// What kind of work a task span runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TaskKind {
    /// One side of a `join`.
    Join,
    /// A spawned task (`spawn`, `scope.spawn`).
    Spawn,
    /// A chunk of a parallel loop.
    LoopChunk,
    /// A task of a serial queue.
    Serial,
    /// A poll of a future.
    Future,
    /// A closure run by `Pool::install`.
    Install,
}

impl TaskKind {
    pub(crate) const ALL: [TaskKind; 6] = [
        TaskKind::Join,
        TaskKind::Spawn,
        TaskKind::LoopChunk,
        TaskKind::Serial,
        TaskKind::Future,
        TaskKind::Install,
    ];

    /// A stable lower-case name (`join`, `spawn`, `loop-chunk`, `serial`, `future`, `install`).
    pub fn as_str(self) -> &'static str {
        match self {
            TaskKind::Join => "join",
            TaskKind::Spawn => "spawn",
            TaskKind::LoopChunk => "loop-chunk",
            TaskKind::Serial => "serial",
            TaskKind::Future => "future",
            TaskKind::Install => "install",
        }
    }

    /// The kind's code in threadlab's encodings (the recorder's records, the compact events,
    /// `.tltrace`): its place in the order above, from 0; [`TaskKind::from_code`] reverses it.
    ///
    /// ```
    /// use threadlab_trace::TaskKind;
    /// assert_eq!(TaskKind::Join.code(), 0);
    /// assert_eq!(TaskKind::from_code(TaskKind::Install.code()), Some(TaskKind::Install));
    /// ```
    #[inline]
    pub fn code(self) -> u32 {
        // A match (not a search of `ALL`) so that it folds into the recorder's hot path; the
        // test `codes_follow_all` checks it against `ALL`.
        match self {
            TaskKind::Join => 0,
            TaskKind::Spawn => 1,
            TaskKind::LoopChunk => 2,
            TaskKind::Serial => 3,
            TaskKind::Future => 4,
            TaskKind::Install => 5,
        }
    }

    /// The kind of a [`TaskKind::code`]; `None` for a code no kind has.
    ///
    /// ```
    /// assert_eq!(threadlab_trace::TaskKind::from_code(6), None);
    /// ```
    pub fn from_code(code: u32) -> Option<TaskKind> {
        TaskKind::ALL.get(code as usize).copied()
    }
}

impl fmt::Display for TaskKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One event on a thread's track.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// Nanoseconds since the recording started.
    pub ts_ns: u64,
    /// What happened.
    pub kind: EventKind,
}

/// What happened. Worker indexes (`victim`, `woken`) are pool worker numbers; map them to
/// threads with [`Trace::worker_thread`](crate::Trace::worker_thread).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// A user zone (`zone!`) begins.
    ZoneBegin {
        /// The zone's name.
        name: NameId,
    },
    /// The innermost open zone ends.
    ZoneEnd,
    /// The thread starts running a task; `flow` links it to its `Spawn`, if recorded.
    TaskBegin {
        /// The task's kind.
        kind: TaskKind,
        /// The spawn this run continues.
        flow: Option<FlowId>,
    },
    /// The innermost running task ends.
    TaskEnd,
    /// A task was made available to run (pushed to a deque, injector or queue).
    Spawn {
        /// Ends at the task's first `TaskBegin`.
        flow: FlowId,
    },
    /// This thread tried to steal from worker `victim` (successful or not).
    StealAttempt {
        /// The worker index stolen from.
        victim: u32,
    },
    /// This thread stole work from worker `victim`.
    Steal {
        /// The worker index stolen from.
        victim: u32,
    },
    /// The thread starts spinning, looking for work.
    SpinBegin,
    /// The spin ends.
    SpinEnd,
    /// The thread parks (sleeps in the OS).
    ParkBegin,
    /// The thread is running again after a park.
    ParkEnd,
    /// This thread woke worker `woken`.
    Wake {
        /// The worker index woken.
        woken: u32,
    },
    /// A task was pushed onto the pool's injector queue.
    InjectorPush,
    /// A counter's new value (queue depths).
    Counter {
        /// The counter's name.
        name: NameId,
        /// Its value.
        value: i64,
    },
    /// The thread starts waiting for a lock it could not take at once.
    LockWait {
        /// The lock instance (unique per `sync::Mutex`).
        lock: u64,
        /// The lock's name.
        name: NameId,
    },
    /// The thread holds the lock (ends a `LockWait` if one is open).
    LockAcquired {
        /// The lock instance.
        lock: u64,
        /// The lock's name.
        name: NameId,
        /// The release this thread was waiting for, if it waited.
        handoff: Option<FlowId>,
    },
    /// The thread released the lock.
    LockReleased {
        /// The lock instance.
        lock: u64,
        /// The lock's name.
        name: NameId,
        /// Set when another thread was waiting for it.
        handoff: Option<FlowId>,
    },
    /// Cumulative OS scheduler figures of this thread (`/proc/thread-self/schedstat`).
    OsSched {
        /// Time on a CPU, ns.
        on_cpu_ns: u64,
        /// Time runnable but waiting for a CPU (preemption), ns.
        runqueue_ns: u64,
    },
    /// Cumulative context switches of this thread (`/proc/thread-self/status`).
    OsSwitches {
        /// Voluntary (blocking) switches.
        voluntary: u64,
        /// Involuntary (preemption) switches.
        involuntary: u64,
    },
    /// A frame of the frame set `name` ends here (Tracy's `FrameMark` / `FrameMarkNamed`): in a
    /// continuous set the next frame starts at the same instant; in a discontinuous one (after a
    /// [`EventKind::FrameStart`]) the frame is the time since that start. See
    /// `trace::frame_mark`.
    FrameMark {
        /// The frame set (`"frame"` for the program's main frames).
        name: NameId,
    },
    /// A frame of the discontinuous frame set `name` starts (Tracy's `FrameMarkStart`); the next
    /// [`EventKind::FrameMark`] of `name` ends it. See `threadlab::trace::frame_start`.
    FrameStart {
        /// The frame set.
        name: NameId,
    },
    /// A named value over time (Tracy's `TracyPlot`), drawn as a counter track.
    Plot {
        /// The plot's name.
        name: NameId,
        /// Its new value.
        value: PlotValue,
    },
    /// Instant text on this thread's track (Tracy's `TracyMessage` / `TracyMessageC`).
    Message {
        /// The text (in the name table).
        text: NameId,
        /// Its colour as `0xRRGGBB`; 0 for the default.
        rgb: u32,
    },
    /// The innermost open zone's colour (Tracy's `ZoneColor`), `0xRRGGBB`.
    ZoneColor {
        /// The colour.
        rgb: u32,
    },
    /// What the innermost open zone or task allocated from its begin to its end (children
    /// included), as counted by `threadlab::alloc::Counting`; comes right before that span's
    /// `ZoneEnd` or `TaskEnd`.
    Allocs {
        /// Allocations (`alloc`, `alloc_zeroed` and `realloc` calls).
        count: u64,
        /// Bytes asked for by those calls.
        bytes: u64,
    },
    /// An argument of the innermost zone or task open on this thread: a `tracing` span's field,
    /// a task's name ([`ARG_TASK_NAME`]) or spawn location ([`ARG_TASK_LOCATION`]), a span's
    /// identity ([`ARG_SPAN_ID`], [`ARG_SPAN_PARENT`]). It follows its span's begin (after the
    /// begin's other arguments); both `key` and `value` are names.
    Arg {
        /// The argument's name.
        key: NameId,
        /// Its value, as text.
        value: NameId,
    },
}

/// A plot's value: an `f64` kept by its bits, so that events compare exactly.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PlotValue(pub u64);

impl PlotValue {
    /// The value of `v`.
    pub fn new(v: f64) -> PlotValue {
        PlotValue(v.to_bits())
    }
    /// The value.
    pub fn get(self) -> f64 {
        f64::from_bits(self.0)
    }
}

impl fmt::Debug for PlotValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.get())
    }
}

/// The [`EventKind::Arg`] key of a task's name (`Pool::spawn_named`, `Scope::spawn_named`, …).
pub const ARG_TASK_NAME: &str = "task.name";
/// The [`EventKind::Arg`] key of a task's spawn location (`file:line:column`). A spawned task's
/// location is recorded with its spawn, on the spawning thread, and given to the task's span by
/// the spawn's flow: a flight recorder that dropped the spawn (its oldest chunks) keeps the
/// span without it.
pub const ARG_TASK_LOCATION: &str = "task.location";
/// The [`EventKind::Arg`] key that marks an `install` span ([`TaskKind::Install`]) run by a
/// *guest*: a thread from outside the pool that called `install` (or `scope`, `join`, a
/// parallel loop) while a worker slept, and ran the work itself in that worker's seat (see
/// `Pool::install`). Its value is the seat's worker index (`"0"`, `"1"`, …); the span, on the
/// guest's own track, is how long the guest held the seat, and the tasks nested in it ran in
/// that seat. Meanwhile the seat's worker stays parked and records nothing, so the doctor reads
/// such a span as that worker's work. It comes right after the span's `TaskBegin`.
pub const ARG_GUEST_SEAT: &str = "guest.seat";
/// The name of the zone a spare thread records over its whole life
/// (`threadlab::Builder::max_spare_threads`): it stood in for
/// workers blocked outside threadlab while work waited. Its [`ARG_SPARE_FOR`] says for which.
pub const SPARE_ZONE: &str = "threadlab.spare";
/// The [`EventKind::Arg`] key of a [`SPARE_ZONE`]: the worker indices (seats) that were blocked
/// in the kernel inside a task when the spare thread was started, in decimal, separated by
/// commas. The doctor names the tasks open on those seats then.
pub const ARG_SPARE_FOR: &str = "spare.for";
/// The name of the zone `threadlab::blocking` records around its closure on a pool's
/// thread: the task said it would block, and the pool handed its seat to a spare thread up
/// front. The doctor does not count a spare thread started for such a seat as a stall.
pub const BLOCKING_ZONE: &str = "threadlab.blocking";
/// The [`EventKind::Arg`] key of a span's identity: every zone that is one entry of the same
/// span (e.g. a `tracing` span entered on the spawning thread, then again on the worker that
/// runs a task spawned inside it) carries the same value.
pub const ARG_SPAN_ID: &str = "span.id";
/// The [`EventKind::Arg`] key of the span a span was created in (its `ARG_SPAN_ID`).
pub const ARG_SPAN_PARENT: &str = "span.parent";

#[cfg(test)]
mod tests {
    use super::TaskKind;

    #[test]
    fn codes_follow_all() {
        // Each kind's code is its place in `ALL`, and `from_code` gives it back.
        for (i, kind) in TaskKind::ALL.iter().enumerate() {
            assert_eq!(kind.code(), i as u32, "code of {kind}");
            assert_eq!(TaskKind::from_code(i as u32), Some(*kind));
        }
    }
}
