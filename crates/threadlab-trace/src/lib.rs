//! threadlab's trace model and its file formats, std only.
//!
//! A [`Trace`] is a list of [`ThreadTrack`]s, each a thread's [`Event`]s in time order (zones,
//! tasks, steals, parks, wake-ups, lock waits and holds, OS samples, frame marks, plots,
//! messages, allocations, arguments), kept encoded a few bytes each ([`Events`]). This crate
//! holds:
//! - the model: `event.rs` ([`Event`], [`EventKind`], names, flows, the argument keys),
//!   `trace.rs` ([`Trace`], [`ThreadTrack`]), `compact.rs`, the in-memory encoding of a
//!   track's events (delta-encoded timestamps, LEB128 varints), `lock_summary.rs`, each
//!   lock's figures ([`LockSummary`]: acquisitions, waits, holds, call sites, holders), and
//!   `locks.rs`, which gives them whether the events hold them (a recording) or the trace's
//!   lock table does (a program observed from outside), and each wait with its holder and call
//!   site ([`LockWaitSpan`]);
//! - [`TraceBuilder`] (`builder.rs`): a trace from events observed elsewhere (another process's
//!   threads, another format, a test); `frames.rs`: frames from frame marks;
//! - the formats, written by [`Trace::save`] and read by [`Trace::load`]: `perfetto.rs`
//!   (Perfetto's protobuf TrackEvent, `.pftrace`, which opens in ui.perfetto.dev) and
//!   `pftrace_read.rs` (that file read back, its lock table too),
//!   `json.rs` (Chrome's Trace Event Format, `.json`, write-only), `load.rs` (threadlab's
//!   native `.tltrace`: the compact encoding on disk, streamed back); [`TraceError`] says what
//!   went wrong with a file.
//!
//! Why a crate of its own: the recorder that makes traces lives in the runtime (`threadlab`,
//! whose `threadlab::trace` re-exports everything here at the same paths), but what reads a
//! trace (the doctor, `threadlab-doctor`; the `threadlab` command's `doctor`, `compare` and
//! `view`) needs only the model and the formats, and should not build a thread pool to open a
//! file — the split `tracing-core` makes from `tracing-subscriber`.
//!
//! ```
//! use threadlab_trace::{Event, EventKind, Trace, TraceBuilder};
//! let mut b = TraceBuilder::new();
//! let t = b.thread(1, "main");
//! let zone = b.name("decode");
//! b.push(t, Event { ts_ns: 0, kind: EventKind::ZoneBegin { name: zone } });
//! b.push(t, Event { ts_ns: 40, kind: EventKind::ZoneEnd });
//! let trace = b.build();
//! let path = std::env::temp_dir().join(format!("trace-crate-{}.tltrace", std::process::id()));
//! trace.save(&path)?;
//! assert_eq!(Trace::load(&path)?, trace);
//! # std::fs::remove_file(&path).ok();
//! # Ok::<(), threadlab_trace::TraceError>(())
//! ```

mod builder;
mod compact;
mod error;
mod event;
mod frames;
#[cfg(test)]
mod fuzz;
mod json;
mod load;
mod lock_summary;
mod locks;
mod perfetto;
mod pftrace_read;
mod trace;
// Hidden: a trace with one event of every kind, shared by this crate's tests and the doctor's.
#[doc(hidden)]
pub mod sample;

use std::path::Path;

pub use builder::TraceBuilder;
pub use compact::{EventIter, Events};
pub use error::TraceError;
pub use event::{Event, EventKind, FlowId, NameId, PlotValue, TaskKind};
pub use event::{
    ARG_GUEST_SEAT, ARG_SPAN_ID, ARG_SPAN_PARENT, ARG_SPARE_FOR, ARG_TASK_LOCATION, ARG_TASK_NAME,
    BLOCKING_ZONE, SPARE_ZONE,
};
pub use lock_summary::{
    Durations, LockSummary, WaitHolder, WaitSite, ARG_LOCK_HOLDER, ARG_LOCK_SITE, DURATION_BUCKETS,
};
pub use locks::LockWaitSpan;
pub use trace::{ThreadTrack, Trace};
// Hidden: the encoded track the runtime's decoder writes directly (see `Trace::from_parts`).
#[doc(hidden)]
pub use compact::EventBuf;

impl Trace {
    /// Writes the trace; the format follows the extension: `.pftrace` (Perfetto protobuf, opens
    /// in ui.perfetto.dev), `.json` (Chrome JSON, also opens there and in chrome://tracing) or
    /// `.tltrace` (threadlab's native format, read back by [`Trace::load`]). The file is written
    /// under a temporary name in the same directory (`.<name>.tmp-<pid>`) and renamed when
    /// complete, so `path` never holds a truncated trace, even if the process is killed.
    ///
    /// ```
    /// let mut b = threadlab_trace::TraceBuilder::new();
    /// b.thread(1, "main");
    /// let path = std::env::temp_dir().join(format!("save-{}.json", std::process::id()));
    /// b.build().save(&path)?;
    /// assert!(std::fs::read_to_string(&path)?.contains("\"main\""));
    /// # std::fs::remove_file(&path).ok();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), TraceError> {
        let path = path.as_ref();
        let bytes = match extension(path).as_deref() {
            Some("pftrace") => perfetto::encode(self),
            Some("json") => json::encode(self).into_bytes(),
            Some("tltrace") => load::encode(self),
            _ => return Err(TraceError::extension(path)),
        };
        let name = path
            .file_name()
            .map_or_else(|| "trace".into(), |n| n.to_string_lossy().into_owned());
        let tmp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
        let written = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written.map_err(|e| TraceError::io(path, "write", e))
    }

    /// Reads a trace saved as `.tltrace` or `.pftrace` (the format is told by the file's first
    /// bytes, not its name). A truncated or corrupt file, or a Perfetto trace threadlab did not
    /// write, gives an error naming the file, the byte offset and what is missing. A `.tltrace` is
    /// streamed (its magic bytes are checked first, and it is never held whole in memory); the
    /// trace keeps its events encoded, taking about the file's size in memory.
    ///
    /// ```
    /// use threadlab_trace::{Event, EventKind, Trace, TraceBuilder};
    /// let mut b = TraceBuilder::new();
    /// let t = b.thread(1, "main");
    /// let zone = b.name("load");
    /// b.push(t, Event { ts_ns: 0, kind: EventKind::ZoneBegin { name: zone } });
    /// b.push(t, Event { ts_ns: 10, kind: EventKind::ZoneEnd });
    /// let trace = b.build();
    /// let path = std::env::temp_dir().join(format!("load-{}.pftrace", std::process::id()));
    /// trace.save(&path)?;
    /// let back = Trace::load(&path)?;
    /// assert_eq!(back.event_count(), trace.event_count());
    /// # std::fs::remove_file(&path).ok();
    /// # Ok::<(), threadlab_trace::TraceError>(())
    /// ```
    pub fn load(path: impl AsRef<Path>) -> Result<Trace, TraceError> {
        let path = path.as_ref();
        if extension(path).as_deref() == Some("json") {
            return Err(TraceError::not_loadable(path));
        }
        use std::io::Read;
        let mut file = std::fs::File::open(path).map_err(|e| TraceError::io(path, "read", e))?;
        let size = file
            .metadata()
            .map_err(|e| TraceError::io(path, "read", e))?
            .len();
        // The first bytes tell the format; they are put back in front of the rest of the
        // stream. Neither format is read further than its first bytes when they do not match
        // (a pipe of newlines, a 2 GB file that only begins like a `.pftrace`).
        let mut first = [0u8; pftrace_read::SNIFF_BYTES];
        let mut got = 0;
        while got < first.len() {
            match file.read(&mut first[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(TraceError::io(path, "read", e)),
            }
        }
        let first = &first[..got];
        let decoded = if pftrace_read::looks_like_pftrace(first) {
            let mut bytes = first.to_vec();
            file.read_to_end(&mut bytes)
                .map_err(|e| TraceError::io(path, "read", e))?;
            pftrace_read::decode(&bytes)
        } else if first.first() == Some(&0x0a) || extension(path).as_deref() == Some("pftrace") {
            // A protobuf packet's first byte (or the name) without threadlab's opening: a
            // foreign Perfetto trace, or text (`0x0a` is a newline); refused unread.
            Err((
                0,
                "not a trace threadlab wrote: its first bytes are not those of threadlab's \
                 `.pftrace` (a foreign Perfetto trace lacks threadlab's annotations)"
                    .to_owned(),
            ))
        } else {
            // Any other start is refused by the native decoder within its 8-byte magic.
            load::read(first.chain(file), size)
        };
        decoded.map_err(|(offset, what)| TraceError::corrupt(path, offset, what))
    }
}

fn extension(path: &Path) -> Option<String> {
    path.extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
}
