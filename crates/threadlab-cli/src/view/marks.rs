//! Tracy's vocabulary on the page: frame sets (and their late frames), plots, messages and
//! zone colours, read from the recorder's marks.

use serde_json::{json, Value};
use std::collections::HashMap;
use threadlab::trace::{EventKind, Trace};
use threadlab_doctor::{Diagnose, FrameTarget};

/// At most this many points per plot and messages in all (evenly thinned beyond).
const MAX_POINTS: usize = 20_000;

/// Tracy's vocabulary for the page: `frames` (per frame set: the frames, which were late
/// against `target`, the target in ns), `plots` (per plot: times and values), `messages`
/// (thread index, time, text, colour) and `colors` (zone name → `#rrggbb`: a zone name takes
/// the colour its zones were last given, as Tracy colours a zone site).
pub fn marks_data(trace: &Trace, target: FrameTarget, head: &mut Value) {
    let frames: Vec<Value> = trace
        .frame_sets()
        .into_iter()
        .map(|set| {
            let name = trace.name(set);
            let report = trace.frame_report(name, target);
            let list: Vec<Value> = trace
                .frames(name)
                .into_iter()
                .map(|(a, b)| json!([a, b]))
                .collect();
            let late: Vec<usize> = report.late.iter().map(|l| l.number - 1).collect();
            json!({ "name": name, "frames": list, "late": late, "target": report.target_ns,
                "median": report.median_ns })
        })
        .collect();
    let mut plots: Vec<(String, Vec<(u64, f64)>)> = Vec::new();
    let mut messages: Vec<(usize, u64, String, u32)> = Vec::new();
    let mut colors: HashMap<String, String> = HashMap::new();
    for (i, t) in trace.threads().iter().enumerate() {
        let mut open: Vec<&str> = Vec::new();
        for e in t.events().iter() {
            match e.kind {
                EventKind::ZoneBegin { name } => open.push(trace.name(name)),
                EventKind::ZoneEnd => {
                    open.pop();
                }
                EventKind::ZoneColor { rgb } => {
                    if let Some(z) = open.last() {
                        colors.insert((*z).to_owned(), format!("#{:06x}", rgb & 0xff_ffff));
                    }
                }
                EventKind::Plot { name, value } => {
                    let name = trace.name(name);
                    let k = match plots.iter().position(|p| p.0 == name) {
                        Some(k) => k,
                        None => {
                            plots.push((name.to_owned(), Vec::new()));
                            plots.len() - 1
                        }
                    };
                    let v = value.get();
                    plots[k]
                        .1
                        .push((e.ts_ns, if v.is_finite() { v } else { 0.0 }));
                }
                EventKind::Message { text, rgb } => {
                    messages.push((i, e.ts_ns, trace.name(text).to_owned(), rgb))
                }
                _ => {}
            }
        }
    }
    let thin = |n: usize| n.div_ceil(MAX_POINTS).max(1);
    let plots: Vec<Value> = plots
        .into_iter()
        .map(|(name, mut points)| {
            points.sort_by_key(|p| p.0);
            let step = thin(points.len());
            let kept: Vec<&(u64, f64)> = points.iter().step_by(step).collect();
            json!({ "name": name, "t": kept.iter().map(|p| p.0).collect::<Vec<_>>(),
                "v": kept.iter().map(|p| p.1).collect::<Vec<_>>() })
        })
        .collect();
    messages.sort_by_key(|m| m.1);
    let step = thin(messages.len());
    let messages: Vec<Value> = messages
        .into_iter()
        .step_by(step)
        .map(|(i, ts, text, rgb)| json!([i, ts, text, rgb]))
        .collect();
    head["frames"] = Value::from(frames);
    head["plots"] = Value::from(plots);
    head["messages"] = Value::from(messages);
    head["colors"] = json!(colors);
}
