//! Starting and stopping a recording: [`start`], [`flight_recorder`] and [`try_start`] turn the
//! recorder on (`recorder::switch_on`) and return the [`Recording`], whose [`Recording::stop`]
//! and [`Recording::snapshot`] collect the threads' buffers and decode them into a [`Trace`].

use threadlab_trace::{Trace, TraceError};

use super::recorder::REGISTRY;
use super::{buffer, clock, decode, hooks, os, recorder};
use crate::util::lock;

/// The memory cap of a [`Mode::Full`] recording (and so of [`start`]): 256 MiB of buffers in
/// all threads together, about 35 million zones (a zone takes about 7 bytes in the buffers:
/// two delta-encoded records, see `codec.rs`). Past it, new
/// events are dropped and counted ([`Trace::dropped_events`], and the doctor's first line says
/// so); ask for [`Mode::Capped`] or [`Mode::Unbounded`] to keep more.
///
/// ```
/// assert_eq!(threadlab::trace::DEFAULT_CAP_BYTES, 256 << 20);
/// ```
pub const DEFAULT_CAP_BYTES: usize = 256 << 20;

/// How much a recording keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Every event until `stop`, up to [`DEFAULT_CAP_BYTES`] of buffers in all; later events
    /// are dropped and counted in [`Trace::dropped_events`].
    Full,
    /// Every event until `stop`, up to `total_bytes` of buffers in all threads together (the
    /// first events are kept, later ones dropped and counted).
    Capped {
        /// Cap on the recording's buffers, in bytes.
        total_bytes: usize,
    },
    /// Every event until `stop`, with no memory cap: only when asked for (a busy program fills
    /// hundreds of MB a second).
    Unbounded,
    /// Flight recorder: each thread keeps only its newest events within this many bytes
    /// (a record takes 2–36 bytes, a zone about 7; the buffer is trimmed a chunk at a time, so a
    /// little less may be kept).
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
    cap: Option<usize>,
}

/// Starts recording every thread's events ([`Mode::Full`]: at most [`DEFAULT_CAP_BYTES`] of
/// buffers).
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
        Mode::FlightRecorder { bytes_per_thread } => Some(bytes_per_thread),
        _ => None,
    };
    reg.cap = match mode {
        Mode::Full => Some(DEFAULT_CAP_BYTES),
        Mode::Capped { total_bytes } => Some(total_bytes),
        Mode::Unbounded | Mode::FlightRecorder { .. } => None,
    };
    // Relaxed: reset under the registry lock before the flag goes on (`switch_on`'s SeqCst
    // store), so every chunk of this recording is counted from zero.
    buffer::MEMORY.store(0, std::sync::atomic::Ordering::Relaxed);
    reg.bufs.clear();
    reg.live_at_start = os::live_tids();
    reg.start = Some(clock::Anchor::take());
    recorder::switch_on(&mut reg);
    let recording = Recording {
        generation: reg.generation,
        stopped: false,
        cap: reg.cap,
    };
    drop(reg);
    // The thread that starts a recording is part of what it records: often the program's main
    // thread, which spawns threads or submits work and waits. An OS sample registers it now
    // (`stop` samples every registered live thread again), so its time on a CPU and waiting for
    // one counts in the process-wide figures even if it records no event of its own.
    hooks::os_sample_now();
    Ok(recording)
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
    /// Bytes of recording buffers allocated so far by this recording, all threads together
    /// (what [`Mode::Full`]'s cap counts).
    ///
    /// ```
    /// let rec = threadlab::trace::start();
    /// for _ in 0..1000 {
    ///     let _z = threadlab::zone!("work");
    /// }
    /// // Each of the 2,000 records takes at least 3 bytes.
    /// assert!(rec.memory_bytes() >= 2000 * 3);
    /// assert!(rec.memory_bytes() <= threadlab::trace::DEFAULT_CAP_BYTES);
    /// let _ = rec.stop();
    /// ```
    pub fn memory_bytes(&self) -> usize {
        // Relaxed: a statistic; see `buffer::MEMORY`.
        buffer::MEMORY.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The cap on this recording's buffers, all threads together, if it has one:
    /// [`DEFAULT_CAP_BYTES`] for [`start`] and [`Mode::Full`], the given one for
    /// [`Mode::Capped`], none for [`Mode::Unbounded`] and the flight recorder (whose budget is
    /// per thread).
    ///
    /// ```
    /// let rec = threadlab::trace::start();
    /// assert_eq!(rec.memory_cap(), Some(threadlab::trace::DEFAULT_CAP_BYTES));
    /// let _ = rec.stop();
    /// ```
    pub fn memory_cap(&self) -> Option<usize> {
        self.cap
    }

    /// Ends the recording and returns every thread's events (threads that exited included).
    pub fn stop(mut self) -> Trace {
        self.stopped = true;
        self.finish()
    }

    /// A trace of what this recording holds now, without stopping it (for a flight recorder:
    /// its last seconds, e.g. when a frame was late). Spans still open are closed at the
    /// snapshot's end; events recorded while it is taken may be left out. The recording goes on,
    /// and a later snapshot or [`Recording::stop`] sees these events again.
    ///
    /// ```
    /// let rec = threadlab::trace::flight_recorder(1 << 20);
    /// { let _z = threadlab::zone!("first"); }
    /// let one = rec.snapshot();
    /// { let _z = threadlab::zone!("second"); }
    /// let two = rec.snapshot();
    /// assert!(one.name_id("first").is_some() && one.name_id("second").is_none());
    /// assert!(two.name_id("first").is_some() && two.name_id("second").is_some());
    /// let _ = rec.stop();
    /// ```
    pub fn snapshot(&self) -> Trace {
        let reg = lock(&REGISTRY);
        if !reg.active || reg.generation != self.generation {
            return Trace::from_parts(Vec::new(), Vec::new(), 0, 0, os::available_cpus());
        }
        let start = reg.start.unwrap_or_else(clock::Anchor::take);
        // Each chunk's published length is read before the end is taken, so every record
        // copied is older than the end.
        let taken: Vec<_> = reg
            .bufs
            .iter()
            .map(|b| {
                let (chunks, dropped) = b.peek();
                let records: Vec<buffer::ChunkRecords> =
                    chunks.into_iter().map(buffer::ChunkRecords::new).collect();
                (b.tid, lock(&b.name).clone(), records, dropped)
            })
            .collect();
        drop(reg);
        let end = clock::Anchor::take();
        let conv = clock::Converter::new(start, end);
        let raws = taken
            .into_iter()
            .map(|(tid, name, records, dropped)| decode::RawThread {
                tid,
                name,
                records: Box::new(records.into_iter().flatten()),
                dropped,
            })
            .collect();
        decode::decode(raws, &conv, end.raw)
    }

    fn finish(&self) -> Trace {
        let mut reg = lock(&REGISTRY);
        let end = clock::Anchor::take();
        if !reg.active || reg.generation != self.generation {
            return Trace::from_parts(Vec::new(), Vec::new(), 0, 0, os::available_cpus());
        }
        recorder::switch_off(&mut reg);
        let start = reg.start.take().unwrap_or(end);
        let bufs = std::mem::take(&mut reg.bufs);
        drop(reg);
        let conv = clock::Converter::new(start, end);
        let raws = bufs
            .iter()
            .map(|b| {
                let (chunks, dropped) = b.take();
                // A last OS sample for threads still alive.
                let tail = os::sample_records(end.raw, Some(b.tid));
                // Each chunk is freed once decoded (unless its thread still holds it).
                let records = chunks
                    .into_iter()
                    .flat_map(buffer::ChunkRecords::new)
                    .chain(tail);
                decode::RawThread {
                    tid: b.tid,
                    name: lock(&b.name).clone(),
                    records: Box::new(records),
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
