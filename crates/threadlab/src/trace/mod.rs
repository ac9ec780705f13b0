//! The recorder: per-thread traces of tasks, zones, steals, parks, wake-ups, spins, lock waits and
//! holds, and the OS's view of each thread, exported to Perfetto (ui.perfetto.dev) or Chrome JSON.
//!
//! ```
//! let rec = threadlab::trace::start();
//! std::thread::spawn(|| {
//!     threadlab::trace::set_thread_name("decoder");
//!     let _z = threadlab::zone!("decode");
//! })
//! .join()
//! .unwrap();
//! let trace = rec.stop();
//! assert!(trace.threads().iter().any(|t| t.name() == "decoder"));
//! let path = std::env::temp_dir().join(format!("doc-{}.pftrace", std::process::id()));
//! trace.save(&path)?;
//! # std::fs::remove_file(&path).ok();
//! # Ok::<(), threadlab::trace::TraceError>(())
//! ```
//!
//! Without editing code: `THREADLAB_TRACE=run.pftrace ./program` records the program's pools from
//! the first one's start and saves the trace from an `atexit` handler when the program exits normally
//! (returning from `main` or `std::process::exit`); [`save_env`] saves it earlier. A flight
//! recorder is read without stopping it by [`Recording::snapshot`]. Beside zones, Tracy's
//! vocabulary: [`frame_mark`] and friends, [`plot`], [`message`], [`Zone::begin_dynamic`],
//! [`Zone::color`]; and `alloc::Counting` attributes allocations to zones and tasks.
//!
//! How it works, one file per mechanism:
//! - `recorder.rs`: the on/off flag (the recording's generation), the registry of buffers, each
//!   thread's cursor; `buffer.rs`: per-thread chunks of records, single writer, no lock on the
//!   hot path; `codec.rs`: a record's compact form in the chunks (delta-encoded times, 2–36
//!   bytes); flight-recorder budget; full recordings' memory cap
//!   ([`DEFAULT_CAP_BYTES`]); `prefault.rs`: full recordings' next chunks pre-faulted off the
//!   recording threads. `clock.rs`: `rdtsc` or `CLOCK_MONOTONIC`.
//! - `recording.rs`: [`start`], [`try_start`] and the [`Recording`] they return, whose `stop`
//!   and `snapshot` decode the buffers.
//! - `hooks.rs`: the runtime's events (and how the pool calls them); `zone.rs`: user zones.
//! - `os.rs`: `/proc/thread-self/{schedstat,status}`.
//! - `decode.rs` + `intern.rs`: raw records → [`Trace`], each track's events encoded once.
//! - `marks.rs`: frame marks, plots, messages, dynamic zone names and colours (Tracy's
//!   vocabulary); `env.rs`: `THREADLAB_TRACE`.
//!
//! The model ([`Trace`], [`Event`], [`EventKind`], …), [`TraceBuilder`] (a trace from events
//! observed elsewhere: `threadlab run`, another format, tests) and the file formats
//! ([`Trace::save`], [`Trace::load`]: Perfetto protobuf, Chrome JSON, the native `.tltrace`) live
//! in the `threadlab-trace` crate, std only, so that what only reads traces (the doctor) does not
//! build the runtime; they are re-exported here at the same paths.

mod buffer;
mod clock;
mod codec;
mod decode;
mod env;
// Hidden: the pool's own events, public only so that the `tracing` bridge (threadlab-tracing),
// the lab's baselines and the tests can record the same events as the pool. Not part of the
// stable API: names and arguments change with the recorder's format. Users record with `zone!`,
// `Zone` and the marks below.
#[doc(hidden)]
pub mod hooks;
mod intern;
mod marks;
mod os;
mod prefault;
mod raw;
pub(crate) mod recorder;
#[cfg(test)]
mod spawn_location_tests;
#[cfg(all(unix, not(miri)))]
pub(crate) use recorder::off_in_forked_child;
mod recording;
mod zone;

pub use env::{save_env, TRACE_ENV};
// The model and the formats, from their own crate (std only), at the paths they always had.
pub use marks::{
    frame_end, frame_mark, frame_mark_named, frame_start, message, message_color, message_static,
    plot, MAIN_FRAME, MAX_TEXT_BYTES,
};
pub use recording::{
    flight_recorder, is_recording, set_thread_name, start, try_start, Mode, Recording,
    DEFAULT_CAP_BYTES,
};
pub use threadlab_trace::{
    Event, EventIter, EventKind, Events, FlowId, NameId, PlotValue, TaskKind, ThreadTrack, Trace,
    TraceBuilder, TraceError,
};
pub use threadlab_trace::{
    ARG_GUEST_SEAT, ARG_SPAN_ID, ARG_SPAN_PARENT, ARG_SPARE_FOR, ARG_TASK_LOCATION, ARG_TASK_NAME,
    BLOCKING_ZONE, SPARE_ZONE,
};
pub use zone::Zone;

/// Starts the recording `THREADLAB_TRACE` asks for (every pool's start-up calls it; the first
/// call acts).
pub(crate) fn start_from_env() {
    env::start_from_env();
}

/// Records a span named `$name` (a `&'static str`) on this thread's track until the end of the
/// enclosing scope. Costs one relaxed load and a branch when no recording is on.
///
/// ```
/// let rec = threadlab::trace::start();
/// {
///     let _z = threadlab::zone!("decode");
///     // work
/// }
/// let trace = rec.stop();
/// let zone = trace.name_id("decode").unwrap();
/// assert!(trace.threads()[0].events().iter().any(|e| matches!(
///     e.kind,
///     threadlab::trace::EventKind::ZoneBegin { name } if name == zone
/// )));
/// ```
#[macro_export]
macro_rules! zone {
    ($name:expr) => {
        $crate::trace::Zone::begin($name)
    };
}
