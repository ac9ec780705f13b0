//! The doctor's figures per frame: a frame set's frames (from `trace::frame_mark` and friends),
//! how many were late against a target the user gives (a duration, or a percentile of the
//! frames' own durations), and what ran in the late ones.
//!
//! What ran: every thread's zones, tasks and lock waits are replayed into self-time segments
//! (an outer zone's time less its children's, so nothing is counted twice); each segment's
//! overlap with each frame is added to the frame's figure for that name (a zone's name,
//! `task: KIND`, `wait: LOCK`). A late frame lists its names by time in it; the report lists
//! the names whose mean time per late frame most exceeds their mean per on-time frame — what
//! the late frames did more of. A duration target is Tracy's "target FPS" of its frame time
//! graph, which shows "where the problematic frames are" (Bartosz Taudul, "Tracy Profiler"
//! manual, "Frame time graph" and "Options").

use std::collections::HashMap;
use std::fmt;

use super::stats::fmt_ns;
use threadlab_trace::{EventKind, Trace};

/// What makes a frame late.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub enum FrameTarget {
    /// Longer than this many nanoseconds (16,666,667 for 60 frames a second).
    Ns(u64),
    /// Longer than this percentile (0–100) of the frames' durations, e.g. 95.0: the slowest 5%.
    Percentile(f64),
}

/// One late frame and what ran in it.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct LateFrame {
    /// The frame's number in its set (1 = the first).
    pub number: usize,
    /// When it began, ns since the recording started.
    pub begin_ns: u64,
    /// Its duration.
    pub duration_ns: u64,
    /// The names that ran in it (all threads), most time first, at most [`TOP_NAMES`].
    pub ran: Vec<(String, u64)>,
}

/// How many names a late frame lists.
pub const TOP_NAMES: usize = 5;

/// A frame set's frames against a target.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct FrameReport {
    /// The frame set.
    pub set: String,
    /// How many frames it has.
    pub frames: usize,
    /// The target asked for.
    pub target: FrameTarget,
    /// The duration a frame had to exceed to be late.
    pub target_ns: u64,
    /// Median, 95th percentile and longest frame.
    pub median_ns: u64,
    /// The 95th percentile.
    pub p95_ns: u64,
    /// The longest frame.
    pub max_ns: u64,
    /// The late frames, in time order.
    pub late: Vec<LateFrame>,
    /// Names by how much more time they took per late frame than per on-time frame:
    /// (name, mean ns per late frame, mean ns per on-time frame), largest excess first.
    pub more_in_late: Vec<(String, u64, u64)>,
}

/// The frames of the frame set `set` against `target`: how many were late and what ran in
/// them. A set with no frames gives a report with `frames == 0`.
///
/// ```
/// use threadlab_doctor::{Diagnose, FrameTarget};
/// use threadlab_trace::{Event, EventKind, TraceBuilder};
/// let mut b = TraceBuilder::new();
/// let t = b.thread(1, "main");
/// let (frame, fast, slow) = (b.name("frame"), b.name("fast"), b.name("slow"));
/// let ms = 1_000_000;
/// let mut now = 0;
/// b.push(t, Event { ts_ns: 0, kind: EventKind::FrameMark { name: frame } });
/// for i in 0..10 {
///     let (zone, len) = if i == 7 { (slow, 20 * ms) } else { (fast, ms) };
///     b.push(t, Event { ts_ns: now, kind: EventKind::ZoneBegin { name: zone } });
///     now += len;
///     b.push(t, Event { ts_ns: now, kind: EventKind::ZoneEnd });
///     b.push(t, Event { ts_ns: now, kind: EventKind::FrameMark { name: frame } });
/// }
/// b.duration_ns(now);
/// let report = b.build().frame_report("frame", FrameTarget::Ns(10 * ms));
/// assert_eq!((report.frames, report.late.len()), (10, 1));
/// assert_eq!(report.late[0].number, 8);
/// assert_eq!(report.late[0].ran[0], ("slow".to_owned(), 20 * ms));
/// assert_eq!(report.more_in_late[0].0, "slow");
/// println!("{report}");
/// ```
pub fn frame_report(trace: &Trace, set: &str, target: FrameTarget) -> FrameReport {
    let frames = trace.frames(set);
    let mut durations: Vec<u64> = frames.iter().map(|f| f.1 - f.0).collect();
    durations.sort_unstable();
    let pct = |p: f64| -> u64 {
        if durations.is_empty() {
            return 0;
        }
        let i = ((p / 100.0) * (durations.len() - 1) as f64).round() as usize;
        durations[i.min(durations.len() - 1)]
    };
    let target_ns = match target {
        FrameTarget::Ns(ns) => ns,
        FrameTarget::Percentile(p) => pct(p.clamp(0.0, 100.0)),
    };
    let per_frame = time_per_frame(trace, &frames);
    let late_idx: Vec<usize> = (0..frames.len())
        .filter(|&i| frames[i].1 - frames[i].0 > target_ns)
        .collect();
    let late = late_idx
        .iter()
        .map(|&i| {
            let mut ran: Vec<(String, u64)> =
                per_frame[i].iter().map(|(n, t)| (n.clone(), *t)).collect();
            ran.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            ran.truncate(TOP_NAMES);
            LateFrame {
                number: i + 1,
                begin_ns: frames[i].0,
                duration_ns: frames[i].1 - frames[i].0,
                ran,
            }
        })
        .collect();
    let on_time = frames.len() - late_idx.len();
    let mut sums: HashMap<&str, (u64, u64)> = HashMap::new();
    for (i, names) in per_frame.iter().enumerate() {
        let is_late = late_idx.binary_search(&i).is_ok();
        for (n, t) in names {
            let s = sums.entry(n.as_str()).or_default();
            if is_late {
                s.0 += t;
            } else {
                s.1 += t;
            }
        }
    }
    let mut more_in_late: Vec<(String, u64, u64)> = sums
        .into_iter()
        .map(|(n, (l, o))| {
            let l = l / late_idx.len().max(1) as u64;
            let o = o / on_time.max(1) as u64;
            (n.to_owned(), l, o)
        })
        .filter(|x| x.1 > x.2)
        .collect();
    more_in_late.sort_by(|a, b| (b.1 - b.2).cmp(&(a.1 - a.2)).then_with(|| a.0.cmp(&b.0)));
    more_in_late.truncate(TOP_NAMES);
    FrameReport {
        set: set.to_owned(),
        frames: frames.len(),
        target,
        target_ns,
        median_ns: pct(50.0),
        p95_ns: pct(95.0),
        max_ns: durations.last().copied().unwrap_or(0),
        late,
        more_in_late,
    }
}

/// For each frame, the self time of each name inside it (all threads).
fn time_per_frame(trace: &Trace, frames: &[(u64, u64)]) -> Vec<HashMap<String, u64>> {
    let mut out: Vec<HashMap<String, u64>> = vec![HashMap::new(); frames.len()];
    if frames.is_empty() {
        return out;
    }
    let mut add = |name: &str, from: u64, to: u64| {
        // The first frame that ends after `from`.
        let mut i = frames.partition_point(|f| f.1 <= from);
        while i < frames.len() && frames[i].0 < to {
            let overlap = to.min(frames[i].1).saturating_sub(from.max(frames[i].0));
            if overlap > 0 {
                *out[i].entry(name.to_owned()).or_default() += overlap;
            }
            i += 1;
        }
    };
    for t in trace.threads() {
        // Open spans: name and when its current self segment began.
        let mut stack: Vec<(String, u64)> = Vec::new();
        let mut last = 0;
        for e in t.events().iter() {
            let ts = e.ts_ns;
            let name = match e.kind {
                EventKind::ZoneBegin { name } => Some(trace.name(name).to_owned()),
                EventKind::TaskBegin { kind, .. } => Some(format!("task: {kind}")),
                EventKind::LockWait { name, .. } => Some(format!("wait: {}", trace.name(name))),
                _ => None,
            };
            let closes = matches!(e.kind, EventKind::ZoneEnd | EventKind::TaskEnd)
                || (matches!(e.kind, EventKind::LockAcquired { .. })
                    && stack.last().is_some_and(|s| s.0.starts_with("wait: ")));
            if name.is_some() || closes {
                if let Some((n, since)) = stack.last() {
                    add(n, (*since).max(last), ts);
                }
                last = ts;
            }
            if let Some(n) = name {
                stack.push((n, ts));
            } else if closes {
                stack.pop();
                if let Some(top) = stack.last_mut() {
                    top.1 = ts;
                }
            }
        }
    }
    out
}

impl fmt::Display for FrameReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let target = match self.target {
            FrameTarget::Ns(ns) => format!("target {}", fmt_ns(ns)),
            FrameTarget::Percentile(p) => {
                format!("target p{p} = {}", fmt_ns(self.target_ns))
            }
        };
        writeln!(
            f,
            "Frames `{}`: {} frame(s), median {}, p95 {}, longest {}; {} late ({target})",
            self.set,
            self.frames,
            fmt_ns(self.median_ns),
            fmt_ns(self.p95_ns),
            fmt_ns(self.max_ns),
            self.late.len()
        )?;
        for l in &self.late {
            let ran: Vec<String> = l
                .ran
                .iter()
                .map(|(n, t)| format!("{n} {}", fmt_ns(*t)))
                .collect();
            writeln!(
                f,
                "  frame {} at {}: {} — {}",
                l.number,
                fmt_ns(l.begin_ns),
                fmt_ns(l.duration_ns),
                if ran.is_empty() {
                    "no zone or task recorded".to_owned()
                } else {
                    ran.join(", ")
                }
            )?;
        }
        if !self.more_in_late.is_empty() {
            let more: Vec<String> = self
                .more_in_late
                .iter()
                .map(|(n, l, o)| format!("{n} {} vs {}", fmt_ns(*l), fmt_ns(*o)))
                .collect();
            writeln!(
                f,
                "  more in late frames (mean per late vs on-time frame): {}",
                more.join(", ")
            )?;
        }
        Ok(())
    }
}
