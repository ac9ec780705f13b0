//! Tracy's vocabulary beside zones: frame marks, plots, messages, dynamic zone names and zone
//! colours. The names and meanings follow Tracy's manual (Bartosz Taudul, "Tracy Profiler" user
//! manual, 2018–): "Marking frames" (`FrameMark`: each frame starts right after the previous one
//! ended; "Secondary frame sets": `FrameMarkNamed(name)`; "Discontinuous frames":
//! `FrameMarkStart`/`FrameMarkEnd`, and a set is either continuous or discontinuous, never
//! mixed), "Plotting data" (`TracyPlot(name, value)`), "Message log" (`TracyMessage`,
//! `TracyMessageL` for literals, `TracyMessageC` with a colour), "Marking zones" (`ZoneColor`,
//! `ZoneName` for a per-call name; "Transient zones", whose data is copied). Colours are
//! `0xRRGGBB` as there; 0 means the default colour.
//!
//! Each costs one relaxed load and a branch when no recording is on. When one is, a frame mark,
//! a plot value and a message of a `&'static str` are one record (the name is kept as
//! its address and length, like zone names); a message or zone name built at run time is
//! copied into the thread's buffer, 24 bytes per record after a header (at most
//! [`MAX_TEXT_BYTES`]), all in one chunk, and interned when the recording stops: no lock and no
//! allocation on the recording thread.
//!
//! ```
//! use threadlab::trace;
//! let rec = trace::start();
//! for i in 0..3 {
//!     let z = trace::Zone::begin_dynamic(&format!("level {i}"));
//!     z.color(0xff8000);
//!     trace::plot("queue length", i as f64 * 1.5);
//!     trace::message(&format!("loaded level {i}"));
//!     drop(z);
//!     trace::frame_mark();
//! }
//! let t = rec.stop();
//! assert!(t.name_id("level 2").is_some());
//! assert!(t.name_id("loaded level 1").is_some());
//! assert_eq!(t.frames("frame").len(), 2);
//! ```

use super::intern::raw_name;
use super::recorder::{record, record_text};
use super::zone::Zone;
use super::{hooks, raw};

/// The longest message or dynamic zone name a recording keeps, in bytes (longer ones are cut at
/// a character boundary).
pub const MAX_TEXT_BYTES: usize = super::recorder::MAX_TEXT;

/// The frame set [`frame_mark`] marks: the program's main frames.
pub const MAIN_FRAME: &str = "frame";

/// Marks the end of a frame of the program's main frame set ([`MAIN_FRAME`]); the next frame
/// starts at the same instant (Tracy's `FrameMark`). Call it once per frame, on any thread; the
/// doctor's frame figures ([`super::Trace::frames`], `frame_report`) and the viewer's frames
/// track are built from these marks.
#[inline]
pub fn frame_mark() {
    frame_mark_named(MAIN_FRAME);
}

/// Marks the end of a frame of the frame set `name` (Tracy's `FrameMarkNamed`): several sets
/// (e.g. "render" and "physics") are kept apart.
#[inline]
pub fn frame_mark_named(name: &'static str) {
    if hooks::enabled() {
        let (ptr, len) = raw_name(name);
        record(raw::FRAME_MARK, ptr, 0, len);
    }
}

/// Starts a frame of the discontinuous frame set `name` (Tracy's `FrameMarkStart`), e.g. a
/// request; [`frame_end`] ends it. Time between an end and the next start belongs to no frame.
#[inline]
pub fn frame_start(name: &'static str) {
    if hooks::enabled() {
        let (ptr, len) = raw_name(name);
        record(raw::FRAME_START, ptr, 0, len);
    }
}

/// Ends the frame of the discontinuous frame set `name` that [`frame_start`] started (Tracy's
/// `FrameMarkEnd`).
#[inline]
pub fn frame_end(name: &'static str) {
    frame_mark_named(name);
}

/// Plots `value` under `name` (Tracy's `TracyPlot`): a named value over time, drawn as a counter
/// track in Perfetto and the viewer.
#[inline]
pub fn plot(name: &'static str, value: f64) {
    if hooks::enabled() {
        let (ptr, len) = raw_name(name);
        record(raw::PLOT, ptr, value.to_bits(), len);
    }
}

/// Records `text` as an instant on this thread's track (Tracy's `TracyMessage`); the text is
/// copied (at most [`MAX_TEXT_BYTES`]).
#[inline]
pub fn message(text: &str) {
    message_color(text, 0);
}

/// Records `text` with the colour `rgb` (`0xRRGGBB`; Tracy's `TracyMessageC`).
#[inline]
pub fn message_color(text: &str, rgb: u32) {
    if hooks::enabled() {
        record_text(raw::MESSAGE, (rgb & 0xff_ffff) as u64, text);
    }
}

/// Records a `&'static str` as a message without copying it (Tracy's `TracyMessageL`).
#[inline]
pub fn message_static(text: &'static str) {
    if hooks::enabled() {
        let (ptr, len) = raw_name(text);
        record(raw::MESSAGE_STATIC, ptr, 0, len);
    }
}

impl Zone {
    /// Begins a zone whose name is made at run time (Tracy's `ZoneTransientN`, or `ZoneName` on
    /// an open zone): the name is copied into the recording (at most [`MAX_TEXT_BYTES`]), so it
    /// may be a `format!`ed string. Records nothing when no recording is on.
    ///
    /// ```
    /// let rec = threadlab::trace::start();
    /// for id in [7, 8] {
    ///     let _z = threadlab::trace::Zone::begin_dynamic(&format!("request {id}"));
    /// }
    /// let trace = rec.stop();
    /// assert!(trace.name_id("request 8").is_some());
    /// ```
    #[inline]
    pub fn begin_dynamic(name: &str) -> Zone {
        let recorded = hooks::enabled();
        if recorded {
            // With allocation counts after the name, as `record_span` puts them after a begin.
            super::recorder::record_text_then(
                raw::ZONE_BEGIN_TEXT,
                0,
                name,
                crate::alloc::counting(),
            );
        }
        Zone { recorded }
    }

    /// Gives this zone the colour `rgb` (`0xRRGGBB`; Tracy's `ZoneColor`), shown by the viewer
    /// and kept in the `.pftrace` as the slice's `color` annotation.
    ///
    /// ```
    /// let rec = threadlab::trace::start();
    /// {
    ///     let z = threadlab::zone!("hot");
    ///     z.color(0xff0000);
    /// }
    /// let trace = rec.stop();
    /// assert!(trace.threads()[0].events().iter().any(|e| matches!(
    ///     e.kind,
    ///     threadlab::trace::EventKind::ZoneColor { rgb: 0xff0000 }
    /// )));
    /// ```
    #[inline]
    pub fn color(&self, rgb: u32) {
        if self.recorded && hooks::enabled() {
            record(raw::ZONE_COLOR, 0, 0, rgb & 0xff_ffff);
        }
    }
}
