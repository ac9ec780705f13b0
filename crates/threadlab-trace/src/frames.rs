//! Frames from frame marks: which frame sets a trace has and each frame's begin and end.
//!
//! Tracy's rules ("Tracy Profiler" manual, "Marking frames"): a continuous frame set (only
//! `FrameMark`s, Tracy's `FrameMark`/`FrameMarkNamed`) has a frame
//! between each two successive marks of its name, whichever threads made them; the time before
//! the first mark is no frame. A discontinuous set (any `FrameStart` of its name, Tracy's
//! `FrameMarkStart`/`FrameMarkEnd`) has a frame from each start to the next mark; a mark with no
//! open start is ignored, and a start while one is open restarts it.

use super::event::{EventKind, NameId};
use super::trace::Trace;

impl Trace {
    /// The frame sets that have a frame mark in this trace, by first use.
    ///
    /// ```
    /// use threadlab_trace::{Event, EventKind, TraceBuilder};
    /// let mut b = TraceBuilder::new();
    /// let t = b.thread(1, "main");
    /// let frame = b.name("frame");
    /// for ts_ns in [0, 16_000_000, 33_000_000] {
    ///     b.push(t, Event { ts_ns, kind: EventKind::FrameMark { name: frame } });
    /// }
    /// let t = b.build();
    /// assert_eq!(t.frame_sets(), [frame]);
    /// assert_eq!(t.frames("frame"), [(0, 16_000_000), (16_000_000, 33_000_000)]);
    /// ```
    pub fn frame_sets(&self) -> Vec<NameId> {
        let mut sets: Vec<(u64, NameId)> = Vec::new();
        for t in &self.threads {
            for e in t.events.iter() {
                if let EventKind::FrameMark { name } | EventKind::FrameStart { name } = e.kind {
                    match sets.iter_mut().find(|s| s.1 == name) {
                        Some(s) => s.0 = s.0.min(e.ts_ns),
                        None => sets.push((e.ts_ns, name)),
                    }
                }
            }
        }
        sets.sort();
        sets.into_iter().map(|s| s.1).collect()
    }

    /// The frames of the frame set `set` as `(begin_ns, end_ns)`, in time order (see the module
    /// doc for continuous and discontinuous sets); empty if the set has no frames.
    pub fn frames(&self, set: &str) -> Vec<(u64, u64)> {
        let Some(id) = self.name_id(set) else {
            return Vec::new();
        };
        let mut marks: Vec<(u64, bool)> = Vec::new();
        for t in &self.threads {
            for e in t.events.iter() {
                match e.kind {
                    EventKind::FrameMark { name } if name == id => marks.push((e.ts_ns, false)),
                    EventKind::FrameStart { name } if name == id => marks.push((e.ts_ns, true)),
                    _ => {}
                }
            }
        }
        // At one instant a start comes after the mark that ends the frame before it.
        marks.sort();
        let discontinuous = marks.iter().any(|m| m.1);
        let mut frames = Vec::new();
        let mut open: Option<u64> = None;
        for (ts, start) in marks {
            if start {
                open = Some(ts);
            } else if let Some(begin) = open.take() {
                frames.push((begin, ts));
            }
            if !discontinuous && !start {
                open = Some(ts);
            }
        }
        frames
    }
}
