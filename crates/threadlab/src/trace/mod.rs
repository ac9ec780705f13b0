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
//! How it works, one file per mechanism:
//! - `recorder.rs`: the on/off flag (the recording's generation), the registry of buffers, each
//!   thread's cursor; `buffer.rs`: per-thread chunks of fixed 32-byte records, single writer, no
//!   lock on the hot path; flight-recorder budget. `clock.rs`: `rdtsc` or `CLOCK_MONOTONIC`.
//! - `hooks.rs`: the runtime's events (and how the pool calls them); `zone.rs`: user zones.
//! - `os.rs`: `/proc/thread-self/{schedstat,status}`.
//! - `decode.rs` + `intern.rs`: raw records → [`Trace`] (`event.rs`, the model analysis uses).
//! - `perfetto.rs` (protobuf TrackEvent), `json.rs` (Chrome JSON), `load.rs` (native `.tltrace`,
//!   written and read back), `pftrace_read.rs` (`.pftrace` read back).

mod buffer;
mod clock;
mod decode;
mod error;
mod event;
#[cfg(test)]
mod fuzz;
pub mod hooks;
mod intern;
mod json;
mod load;
mod os;
mod perfetto;
mod pftrace_read;
mod raw;
mod recorder;
mod zone;

use std::path::Path;

pub use error::TraceError;
pub use event::{Event, EventKind, FlowId, NameId, TaskKind, ThreadTrack, Trace};
pub use zone::Zone;

use buffer::lock;
use recorder::REGISTRY;

/// How much a recording keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Every event until `stop`.
    Full,
    /// Flight recorder: each thread keeps only its newest events within this many bytes
    /// (records are 32 bytes; the buffer is trimmed a chunk at a time, so a little less may be
    /// kept).
    FlightRecorder {
        /// Budget per thread, in bytes.
        bytes_per_thread: usize,
    },
}

/// A recording in progress; [`Recording::stop`] ends it and returns the [`Trace`]. Dropping it
/// without `stop` ends the recording and discards its events.
#[derive(Debug)]
#[must_use = "a recording is discarded when dropped: call `stop` to get the trace"]
pub struct Recording {
    generation: u64,
    stopped: bool,
}

/// Starts recording every thread's events.
///
/// # Panics
/// If a recording is already on (use [`try_start`] to get an error instead).
pub fn start() -> Recording {
    try_start(Mode::Full).unwrap_or_else(|e| panic!("threadlab::trace::start: {e}"))
}

/// Starts a flight recording: each thread keeps its newest `bytes_per_thread` bytes of events.
///
/// # Panics
/// If a recording is already on.
pub fn flight_recorder(bytes_per_thread: usize) -> Recording {
    try_start(Mode::FlightRecorder { bytes_per_thread })
        .unwrap_or_else(|e| panic!("threadlab::trace::flight_recorder: {e}"))
}

/// Starts a recording, or says why it cannot (one is already on).
pub fn try_start(mode: Mode) -> Result<Recording, TraceError> {
    clock::Converter::warm_up();
    let mut reg = lock(&REGISTRY);
    if reg.active {
        return Err(TraceError::already_recording());
    }
    reg.budget = match mode {
        Mode::Full => None,
        Mode::FlightRecorder { bytes_per_thread } => Some(bytes_per_thread),
    };
    reg.bufs.clear();
    reg.start = Some(clock::Anchor::take());
    recorder::switch_on(&mut reg);
    Ok(Recording {
        generation: reg.generation,
        stopped: false,
    })
}

/// Names the calling thread's track in this and later recordings (default: the std thread name,
/// else `thread <tid>`).
pub fn set_thread_name(name: &str) {
    recorder::set_thread_name(name);
}

/// Whether a recording is on.
#[inline(always)]
pub fn is_recording() -> bool {
    hooks::enabled()
}

impl Recording {
    /// Ends the recording and returns every thread's events (threads that exited included).
    pub fn stop(mut self) -> Trace {
        self.stopped = true;
        self.finish()
    }

    fn finish(&self) -> Trace {
        let mut reg = lock(&REGISTRY);
        let end = clock::Anchor::take();
        if !reg.active || reg.generation != self.generation {
            return Trace {
                threads: Vec::new(),
                names: Vec::new(),
                duration_ns: 0,
                dropped: 0,
                cpus: available_cpus(),
            };
        }
        recorder::switch_off(&mut reg);
        let start = reg.start.take().unwrap_or(end);
        let bufs = std::mem::take(&mut reg.bufs);
        drop(reg);
        let conv = clock::Converter::new(start, end);
        let raws = bufs
            .iter()
            .map(|b| {
                let (mut records, dropped) = b.collect();
                // A last OS sample for threads still alive.
                records.extend(os::sample_records(end.raw, Some(b.tid)));
                decode::RawThread {
                    tid: b.tid,
                    name: lock(&b.name).clone(),
                    records,
                    dropped,
                }
            })
            .collect();
        decode::decode(raws, &conv, end.raw)
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        if !self.stopped {
            let _ = self.finish();
        }
    }
}

impl Trace {
    /// Writes the trace; the format follows the extension: `.pftrace` (Perfetto protobuf, opens
    /// in ui.perfetto.dev), `.json` (Chrome JSON, also opens there and in chrome://tracing) or
    /// `.tltrace` (threadlab's native format, read back by [`Trace::load`]).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), TraceError> {
        let path = path.as_ref();
        let bytes = match extension(path).as_deref() {
            Some("pftrace") => perfetto::encode(self),
            Some("json") => json::encode(self).into_bytes(),
            Some("tltrace") => load::encode(self),
            _ => return Err(TraceError::extension(path)),
        };
        std::fs::write(path, bytes).map_err(|e| TraceError::io(path, "write", e))
    }

    /// Reads a trace saved as `.tltrace` or `.pftrace` (the format is told by the file's first
    /// bytes, not its name). A truncated or corrupt file, or a Perfetto trace threadlab did not
    /// write, gives an error naming the file, the byte offset and what is missing.
    ///
    /// ```
    /// let rec = threadlab::trace::start();
    /// { let _z = threadlab::zone!("load"); }
    /// let trace = rec.stop();
    /// let path = std::env::temp_dir().join(format!("load-{}.pftrace", std::process::id()));
    /// trace.save(&path)?;
    /// let back = threadlab::trace::Trace::load(&path)?;
    /// assert_eq!(back.event_count(), trace.event_count());
    /// # std::fs::remove_file(&path).ok();
    /// # Ok::<(), threadlab::trace::TraceError>(())
    /// ```
    pub fn load(path: impl AsRef<Path>) -> Result<Trace, TraceError> {
        let path = path.as_ref();
        if extension(path).as_deref() == Some("json") {
            return Err(TraceError::not_loadable(path));
        }
        let bytes = std::fs::read(path).map_err(|e| TraceError::io(path, "read", e))?;
        let decoded = if pftrace_read::looks_like_pftrace(&bytes) {
            pftrace_read::decode(&bytes)
        } else {
            // Any other start is refused by the native decoder at offset 0 (its magic).
            load::decode(&bytes)
        };
        decoded.map_err(|(offset, what)| TraceError::corrupt(path, offset, what))
    }
}

/// The CPUs this process may run on now (0 if the OS cannot say).
pub(crate) fn available_cpus() -> u32 {
    std::thread::available_parallelism().map_or(0, |n| n.get() as u32)
}

fn extension(path: &Path) -> Option<String> {
    path.extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
}
