//! The page's data: one pass per thread over its events turns the trace into rows of intervals
//! (task and zone spans by depth, the state strip, lock holds, preemption), the arrows between
//! threads, and the doctor's figures and findings with the threads and time range each one
//! concerns; then every row is merged per level of detail (`lod.rs`) and written as compact
//! JSON columns (start deltas, durations, labels, counts).
//!
//! States follow the doctor's `states.rs` rule (`crates/threadlab-doctor`) (the innermost open span decides: a
//! lock wait is *waiting*, a park *parked*, a spin *spinning*, a task or zone *running*; outside
//! any span a worker is *searching*, another thread *other*), in Superluminal's vocabulary;
//! *preempted* comes from the OS samples (run-queue time growth between two samples over the
//! time between them), and lock holds get a strip of their own since they overlap the rest.
//! In a trace with no task or zone on any thread (a program observed from outside), the time
//! the OS had a thread on a CPU is *running*, as in the doctor's table: the samples say how much
//! of each interval between two of them the thread ran, not when, so that much of the
//! interval's *other* time, from its start, is drawn as running.
//!
//! (Over 600 lines: the rows, arrows and findings of one page come from one pass per thread
//! that shares its state; split, each part would repeat the walk.)

use std::collections::HashMap;
use std::fmt::Write;
use threadlab_doctor::Diagnose;

use serde_json::{json, Value};
use threadlab::trace::{EventKind, Trace};
use threadlab_doctor::{Diagnosis, FrameTarget};

use super::lod::{merge, widths, Iv};

/// State codes, in the order of the page's legend.
pub const STATES: [&str; 6] = [
    "running",
    "searching",
    "spinning",
    "parked",
    "lock wait",
    "other",
];
const RUNNING: u32 = 0;
const SEARCHING: u32 = 1;
const SPINNING: u32 = 2;
const PARKED: u32 = 3;
const WAITING: u32 = 4;
const OTHER: u32 = 5;

/// One thread's rows before level-of-detail merging.
#[derive(Default)]
pub struct Rows {
    pub spans: Vec<Vec<Iv>>,
    pub states: Vec<Iv>,
    pub holds: Vec<Iv>,
    /// Preempted share between two OS samples, in thousandths (the label).
    pub preempted: Vec<Iv>,
    /// Lock waits, labelled with the lock's name and the thread that held it when the wait
    /// began (and the one that handed it over, when the recording says so), for the hover card.
    pub waits: Vec<Iv>,
}

/// Every lock hold of the trace, by lock: (taken, released, thread index), in time order.
pub type Holds = HashMap<u64, Vec<(u64, u64, usize)>>;

/// Who held which lock when: from each thread's `LockAcquired`/`LockReleased` pairs (a hold
/// still open at the thread's end lasts to it).
pub fn lock_holds(trace: &Trace) -> Holds {
    let mut out: Holds = HashMap::new();
    for (i, t) in trace.threads().iter().enumerate() {
        let mut open: HashMap<u64, u64> = HashMap::new();
        let mut last = 0;
        for e in t.events().iter() {
            last = e.ts_ns.max(last);
            match e.kind {
                EventKind::LockAcquired { lock, .. } => {
                    open.insert(lock, last);
                }
                EventKind::LockReleased { lock, .. } => {
                    if let Some(from) = open.remove(&lock) {
                        out.entry(lock).or_default().push((from, last, i));
                    }
                }
                _ => {}
            }
        }
        for (lock, from) in open {
            out.entry(lock).or_default().push((from, last, i));
        }
    }
    for v in out.values_mut() {
        v.sort_unstable();
    }
    out
}

/// The thread (index) holding `lock` at `at`, other than `me`: the latest hold begun by then
/// and not yet released.
fn holder(holds: &Holds, lock: u64, at: u64, me: usize) -> Option<usize> {
    let v = holds.get(&lock)?;
    let k = v.partition_point(|h| h.0 <= at);
    v[..k]
        .iter()
        .rev()
        .find(|h| h.1 > at && h.2 != me)
        .map(|h| h.2)
}

/// An arrow: kind (0 steal, 1 wake-up, 2 lock hand-off), from (thread, ns), to (thread, ns).
pub type Arrow = (u32, usize, u64, usize, u64);

/// Interns span and lock names for the page.
#[derive(Default)]
pub struct Names {
    pub list: Vec<String>,
    ids: HashMap<String, u32>,
}

impl Names {
    pub fn id(&mut self, n: &str) -> u32 {
        if let Some(&i) = self.ids.get(n) {
            return i;
        }
        let i = self.list.len() as u32;
        self.list.push(n.to_owned());
        self.ids.insert(n.to_owned(), i);
        i
    }
}

/// Whether no thread of `trace` has a task or zone: a program observed from outside, whose
/// threads' time on a CPU is their running time.
pub fn observed_only(trace: &Trace) -> bool {
    !trace.threads().iter().any(|t| {
        t.events().iter().any(|e| {
            matches!(
                e.kind,
                EventKind::TaskBegin { .. } | EventKind::ZoneBegin { .. }
            )
        })
    })
}

/// Turns *other* time into *running* in each interval between two OS samples of an observed
/// thread, as much as its time on a CPU grew in it (at most the interval), from the interval's
/// start on. `samples`: (time, on-CPU ns so far), in time order; `states` in time order, not
/// overlapping.
fn on_cpu_as_running(states: Vec<Iv>, samples: &[(u64, u64)]) -> Vec<Iv> {
    // Running time still to place, per interval: (from, to, ns).
    let mut budget: Vec<(u64, u64, u64)> = samples
        .windows(2)
        .filter(|w| w[1].0 > w[0].0)
        .map(|w| {
            (
                w[0].0,
                w[1].0,
                w[1].1.saturating_sub(w[0].1).min(w[1].0 - w[0].0),
            )
        })
        .filter(|b| b.2 > 0)
        .collect();
    let mut out: Vec<Iv> = Vec::with_capacity(states.len());
    let push = |out: &mut Vec<Iv>, start: u64, end: u64, label: u32| {
        if end <= start {
            return;
        }
        match out.last_mut() {
            Some(l) if l.label == label && l.end == start => l.end = end,
            _ => out.push(iv(start, end, label)),
        }
    };
    let mut k = 0;
    for s in states {
        if s.label != OTHER {
            push(&mut out, s.start, s.end, s.label);
            continue;
        }
        let mut at = s.start;
        while at < s.end {
            while k < budget.len() && (budget[k].1 <= at || budget[k].2 == 0) {
                k += 1;
            }
            let Some(b) = budget.get_mut(k) else {
                break;
            };
            if b.0 >= s.end {
                break;
            }
            let from = at.max(b.0);
            push(&mut out, at, from, OTHER);
            let run = b.2.min(s.end.min(b.1) - from);
            push(&mut out, from, from + run, RUNNING);
            b.2 -= run;
            let rest_end = if b.2 == 0 { s.end.min(b.1) } else { from + run };
            push(&mut out, from + run, rest_end, OTHER);
            at = rest_end;
        }
        push(&mut out, at, s.end, OTHER);
    }
    out
}

/// Builds the rows of thread `i` (`holds`: every thread's lock holds, to name a wait's holder;
/// `observed`: [`observed_only`] of the trace).
pub fn rows(trace: &Trace, i: usize, names: &mut Names, holds_of: &Holds, observed: bool) -> Rows {
    let t = &trace.threads()[i];
    let idle = if t.worker().is_some() {
        SEARCHING
    } else {
        OTHER
    };
    let mut r = Rows::default();
    // Open spans: (state, start, label, is a task or zone).
    let mut stack: Vec<(u32, u64, u32, bool)> = Vec::new();
    let mut holds: HashMap<u64, (u64, u32)> = HashMap::new();
    // Lock waits under way: lock → (began, the lock's name).
    let mut waiting: HashMap<u64, (u64, String)> = HashMap::new();
    let thread_name = |k: usize| {
        let t = &trace.threads()[k];
        format!("{} (tid {})", t.name(), t.tid())
    };
    let mut state_since: Option<(u32, u64)> = None;
    let mut last_os: Option<(u64, u64)> = None;
    let mut on_cpu: Vec<(u64, u64)> = Vec::new();
    let mut last_ts = 0;
    for e in t.events().iter() {
        let ts = e.ts_ns.max(last_ts);
        last_ts = ts;
        let depth = stack.iter().filter(|s| s.3).count();
        match e.kind {
            EventKind::ZoneBegin { name } => {
                stack.push((RUNNING, ts, names.id(trace.name(name)), true));
            }
            EventKind::TaskBegin { kind, .. } => {
                stack.push((RUNNING, ts, names.id(&format!("task: {kind}")), true));
            }
            EventKind::SpinBegin => stack.push((SPINNING, ts, 0, false)),
            EventKind::ParkBegin => stack.push((PARKED, ts, 0, false)),
            EventKind::LockWait { lock, name } => {
                stack.push((WAITING, ts, 0, false));
                waiting.insert(lock, (ts, trace.name(name).to_owned()));
            }
            EventKind::ZoneEnd | EventKind::TaskEnd | EventKind::SpinEnd | EventKind::ParkEnd => {
                let want_span = matches!(e.kind, EventKind::ZoneEnd | EventKind::TaskEnd);
                // An end without its begin is ignored (a loaded file can hold anything).
                if stack.last().is_some_and(|s| s.3 == want_span) {
                    let (_, start, label, is_span) = stack.pop().expect("checked");
                    if is_span {
                        push_span(&mut r.spans, depth - 1, start, ts, label);
                    }
                }
            }
            EventKind::LockAcquired { lock, name, .. } => {
                if stack.last().is_some_and(|s| s.0 == WAITING) {
                    stack.pop();
                }
                if let Some((began, lock_name)) = waiting.remove(&lock) {
                    let by = match holder(holds_of, lock, began, i) {
                        Some(k) => format!("held by {}", thread_name(k)),
                        None => "its holder was not recorded".to_owned(),
                    };
                    let label = names.id(&format!("waiting for lock {lock_name}, {by}"));
                    r.waits.push(iv(began, ts, label));
                }
                holds.insert(lock, (ts, names.id(trace.name(name))));
            }
            EventKind::LockReleased { lock, .. } => {
                if let Some((start, label)) = holds.remove(&lock) {
                    r.holds.push(iv(start, ts, label));
                }
            }
            EventKind::OsSched {
                runqueue_ns,
                on_cpu_ns,
            } => {
                on_cpu.push((ts, on_cpu_ns));
                if let Some((t0, q0)) = last_os {
                    if ts > t0 && runqueue_ns > q0 {
                        let share = ((runqueue_ns - q0) * 1000 / (ts - t0)).min(1000) as u32;
                        r.preempted.push(iv(t0, ts, share));
                    }
                }
                last_os = Some((ts, runqueue_ns));
            }
            _ => {}
        }
        let now = stack.last().map_or(idle, |s| s.0);
        match state_since {
            Some((s, _)) if s == now => {}
            Some((s, since)) => {
                r.states.push(iv(since, ts, s));
                state_since = Some((now, ts));
            }
            None => state_since = Some((now, ts)),
        }
    }
    // Spans still open end with the thread's last event.
    while let Some((_, start, label, is_span)) = stack.pop() {
        if is_span {
            let depth = stack.iter().filter(|s| s.3).count();
            push_span(&mut r.spans, depth, start, last_ts, label);
        }
    }
    if let Some((s, since)) = state_since {
        if last_ts > since {
            r.states.push(iv(since, last_ts, s));
        }
    }
    if observed && on_cpu.len() >= 2 {
        r.states = on_cpu_as_running(std::mem::take(&mut r.states), &on_cpu);
    }
    r.holds.sort_by_key(|h| h.start);
    // Holds of different locks may overlap: keep the strip non-overlapping by clipping.
    for k in 1..r.holds.len() {
        let prev_end = r.holds[k - 1].end;
        let h = &mut r.holds[k];
        h.start = h.start.max(prev_end).min(h.end);
    }
    for row in &mut r.spans {
        row.sort_by_key(|s| s.start);
    }
    r
}

fn iv(start: u64, end: u64, label: u32) -> Iv {
    Iv {
        start,
        end: end.max(start),
        label,
        count: 1,
    }
}

fn push_span(spans: &mut Vec<Vec<Iv>>, depth: usize, start: u64, end: u64, label: u32) {
    if spans.len() <= depth {
        spans.resize_with(depth + 1, Vec::new);
    }
    spans[depth].push(iv(start, end, label));
}

/// Steals (victim → thief), wake-ups (waker → the woken worker's next park end) and lock
/// hand-offs (release → acquisition carrying the same flow).
pub fn arrows(trace: &Trace) -> Vec<Arrow> {
    let mut out = Vec::new();
    let mut park_ends: HashMap<u32, Vec<u64>> = HashMap::new();
    let mut releases = HashMap::new();
    for t in trace.threads() {
        for e in t.events().iter() {
            match e.kind {
                EventKind::ParkEnd => {
                    if let Some(w) = t.worker() {
                        park_ends.entry(w).or_default().push(e.ts_ns);
                    }
                }
                EventKind::LockReleased {
                    handoff: Some(f), ..
                } => {
                    releases.insert(f, (t.tid(), e.ts_ns));
                }
                _ => {}
            }
        }
    }
    let index: HashMap<u64, usize> = trace
        .threads()
        .iter()
        .enumerate()
        .map(|(i, t)| (t.tid(), i))
        .collect();
    for (i, t) in trace.threads().iter().enumerate() {
        for e in t.events().iter() {
            match e.kind {
                EventKind::Steal { victim } => {
                    if let Some(v) = trace.worker_thread(victim) {
                        out.push((0, v, e.ts_ns, i, e.ts_ns));
                    }
                }
                EventKind::Wake { woken } => {
                    let to = trace.worker_thread(woken);
                    let end = park_ends.get(&woken).and_then(|ends| {
                        let k = ends.partition_point(|&x| x < e.ts_ns);
                        ends.get(k).copied()
                    });
                    if let (Some(to), Some(end)) = (to, end) {
                        out.push((1, i, e.ts_ns, to, end));
                    }
                }
                EventKind::LockAcquired {
                    handoff: Some(f), ..
                } => {
                    if let Some(&(tid, ts)) = releases.get(&f) {
                        if let Some(&from) = index.get(&tid) {
                            out.push((2, from, ts, i, e.ts_ns));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    out.sort_by_key(|a| a.2);
    out
}

/// The threads and time range a finding concerns, from its subject: `lock NAME` (the threads
/// that waited for it, from the first wait to the end of the last), `threads GROUP` (that group's
/// lifetimes), `pool workers`, a thread's name (its longest task, if the doctor named one),
/// or the whole trace.
pub fn finding_scope(trace: &Trace, d: &Diagnosis, subject: &str) -> (Vec<usize>, u64, u64) {
    let all = (0..trace.threads().len()).collect::<Vec<_>>();
    let life = |ids: &[usize]| {
        let t0 = ids
            .iter()
            .map(|&i| d.threads[i].first_ns)
            .min()
            .unwrap_or(0);
        let t1 = ids.iter().map(|&i| d.threads[i].last_ns).max().unwrap_or(0);
        (t0, t1)
    };
    let pick = |ids: Vec<usize>| {
        if ids.is_empty() {
            (all.clone(), 0, trace.duration_ns())
        } else {
            let (t0, t1) = life(&ids);
            (ids, t0, t1)
        }
    };
    if let Some(lock) = subject.strip_prefix("lock ") {
        let (mut ids, mut t0, mut t1) = (vec![], u64::MAX, 0);
        for (i, t) in trace.threads().iter().enumerate() {
            let mut waiting = false;
            for e in t.events().iter() {
                match e.kind {
                    EventKind::LockWait { name, .. } if trace.name(name) == lock => {
                        if ids.last() != Some(&i) {
                            ids.push(i);
                        }
                        waiting = true;
                        t0 = t0.min(e.ts_ns);
                        t1 = t1.max(e.ts_ns);
                    }
                    // The wait ends when the lock is taken.
                    EventKind::LockAcquired { name, .. } if waiting && trace.name(name) == lock => {
                        waiting = false;
                        t1 = t1.max(e.ts_ns);
                    }
                    _ => {}
                }
            }
        }
        return if ids.is_empty() {
            pick(ids)
        } else {
            (ids, t0, t1.max(t0 + 1))
        };
    }
    if let Some(group) = subject.strip_prefix("threads ") {
        return pick(
            all.iter()
                .copied()
                .filter(|&i| d.threads[i].group == group)
                .collect(),
        );
    }
    if subject == "pool workers" {
        return pick(
            all.iter()
                .copied()
                .filter(|&i| d.threads[i].worker.is_some())
                .collect(),
        );
    }
    pick(
        all.iter()
            .copied()
            .filter(|&i| d.threads[i].name == subject)
            .collect(),
    )
}

/// Writes `row` merged at every level as `[[starts…],[durs…],[labels…],[counts…]]` per level
/// (starts as deltas from the previous start).
fn write_levels(out: &mut String, row: &[Iv], levels: &[u64]) {
    out.push('[');
    write_row(out, row);
    let mut prev = row.to_vec();
    for &w in levels {
        if prev.len() <= 1 {
            // Nothing left to merge: the page uses the last level it has for every coarser one.
            break;
        }
        // Each level merges the one below (cheaper than the raw row again); a block counts as
        // small or wide by its own width, like a raw interval.
        prev = merge(&prev, w);
        out.push(',');
        write_row(out, &prev);
    }
    out.push(']');
}

fn write_row(out: &mut String, row: &[Iv]) {
    let mut last = 0;
    out.push_str("[[");
    for (k, s) in row.iter().enumerate() {
        let sep = if k == 0 { "" } else { "," };
        let _ = write!(out, "{sep}{}", s.start - last);
        last = s.start;
    }
    out.push_str("],[");
    for (k, s) in row.iter().enumerate() {
        let sep = if k == 0 { "" } else { "," };
        let _ = write!(out, "{sep}{}", s.end - s.start);
    }
    out.push_str("],[");
    for (k, s) in row.iter().enumerate() {
        let sep = if k == 0 { "" } else { "," };
        let _ = write!(out, "{sep}{}", s.label);
    }
    out.push_str("],[");
    for (k, s) in row.iter().enumerate() {
        let sep = if k == 0 { "" } else { "," };
        let _ = write!(out, "{sep}{}", s.count);
    }
    out.push_str("]]");
}

/// The page's whole data object, as JSON text.
pub fn page_data(trace: &Trace, title: &str, target: FrameTarget) -> String {
    let d = trace.diagnose();
    let mut names = Names::default();
    let end = trace
        .threads()
        .iter()
        .filter_map(|t| t.events().iter().last().map(|e| e.ts_ns))
        .max()
        .unwrap_or(0)
        .max(trace.duration_ns());
    let levels = widths(end);
    let holds_of = lock_holds(trace);
    let observed = observed_only(trace);
    let mut threads = String::from("[");
    for (i, t) in trace.threads().iter().enumerate() {
        let r = rows(trace, i, &mut names, &holds_of, observed);
        let s = &d.threads[i];
        let summary = json!({
            "running": s.running_ns, "searching": s.searching_ns, "spinning": s.spinning_ns,
            "parked": s.parked_ns, "lock wait": s.lock_wait_ns, "other": s.other_ns,
            "preempted": s.preempted_ns, "lifetime": s.lifetime_ns,
            "tasks": s.tasks, "zones": s.zones, "steals": s.steals, "parks": s.parks,
        });
        if i > 0 {
            threads.push(',');
        }
        let _ = write!(
            threads,
            "{{\"name\":{},\"tid\":{},\"worker\":{},\"summary\":{summary},\"spans\":[",
            Value::from(t.name()),
            t.tid(),
            t.worker().map_or(Value::Null, Value::from),
        );
        for (k, row) in r.spans.iter().enumerate() {
            if k > 0 {
                threads.push(',');
            }
            write_levels(&mut threads, row, &levels);
        }
        threads.push_str("],\"states\":");
        write_levels(&mut threads, &r.states, &levels);
        threads.push_str(",\"holds\":");
        write_levels(&mut threads, &r.holds, &levels);
        threads.push_str(",\"preempted\":");
        write_row(&mut threads, &r.preempted);
        threads.push_str(",\"waits\":");
        write_row(&mut threads, &r.waits);
        threads.push('}');
    }
    threads.push(']');
    let arrows: Vec<Value> = arrows(trace)
        .into_iter()
        .map(|(k, a, ta, b, tb)| json!([k, a, ta, b, tb]))
        .collect();
    let findings: Vec<Value> = d
        .findings
        .iter()
        .map(|f| {
            let (ids, t0, t1) = finding_scope(trace, &d, &f.subject);
            json!({
                "pitfall": f.pitfall.as_str(), "subject": f.subject, "evidence": f.evidence,
                "suggestion": f.suggestion, "threads": ids, "t0": t0, "t1": t1,
            })
        })
        .collect();
    let answers: Vec<Value> = d
        .answers
        .iter()
        .map(|a| {
            json!({
                "question": a.question, "answer": a.answer, "ok": a.ok,
                // No figure: the trace holds too little to judge (drawn as such, never as 0).
                "figure": a.figure.as_ref().map(|f| f.name.as_str()),
                "value": a.figure.as_ref().map(|f| f.value),
                "unit": a.figure.as_ref().map(|f| f.unit),
                "threshold": a.figure.as_ref().and_then(|f| f.threshold),
            })
        })
        .collect();
    let mut head = json!({
        "title": title, "duration": end, "events": trace.event_count(), "cpus": trace.cpus(),
        "levels": levels, "names": names.list, "states": STATES, "arrows": arrows,
        "findings": findings, "answers": answers,
    });
    marks_data(trace, target, &mut head);
    let head = head.to_string();
    // Splice the threads in before the closing brace.
    format!("{},\"threads\":{threads}}}", &head[..head.len() - 1])
}

/// What the page calls a late frame unless `--frame-target` says otherwise: the slowest tenth.
pub const DEFAULT_FRAME_TARGET: FrameTarget = FrameTarget::Percentile(90.0);

/// At most this many points per plot and messages in all (evenly thinned beyond).
const MAX_POINTS: usize = 20_000;

/// Tracy's vocabulary for the page: `frames` (per frame set: the frames, which were late
/// against `target`, the target in ns), `plots` (per plot: times and values), `messages`
/// (thread index, time, text, colour) and `colors` (zone name → `#rrggbb`: a zone name takes
/// the colour its zones were last given, as Tracy colours a zone site).
fn marks_data(trace: &Trace, target: FrameTarget, head: &mut Value) {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Other unit tests of this binary may be recording (the recorder is process-wide).
    fn start() -> threadlab::trace::Recording {
        let t = std::time::Instant::now();
        loop {
            match threadlab::trace::try_start(threadlab::trace::Mode::Full) {
                Ok(r) => return r,
                Err(e) if t.elapsed().as_secs() < 60 => {
                    let _ = e;
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Err(e) => panic!("no recording within 60 s: {e}"),
            }
        }
    }

    /// A waiter blocked on a held lock: one hand-off arrow from the holder to the waiter, and
    /// the lock's finding scope is the waiter's thread, from its wait on.
    #[test]
    fn a_lock_hand_off_is_an_arrow_and_scopes_the_lock() {
        use std::sync::{mpsc, Arc};
        let rec = start();
        let m = Arc::new(threadlab::sync::Mutex::named("handed", 0));
        let (held_tx, held_rx) = mpsc::channel();
        let m2 = Arc::clone(&m);
        let holder = std::thread::spawn(move || {
            threadlab::trace::set_thread_name("holder");
            let mut g = m2.lock();
            held_tx.send(()).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(30));
            *g += 1;
        });
        held_rx.recv().unwrap();
        let m3 = Arc::clone(&m);
        let waiter = std::thread::spawn(move || {
            threadlab::trace::set_thread_name("waiter");
            *m3.lock() += 1;
        });
        holder.join().unwrap();
        waiter.join().unwrap();
        let trace = rec.stop();
        let idx = |n: &str| trace.threads().iter().position(|t| t.name() == n).unwrap();
        let (h, w) = (idx("holder"), idx("waiter"));
        let handoffs: Vec<_> = arrows(&trace).into_iter().filter(|a| a.0 == 2).collect();
        assert_eq!(handoffs.len(), 1, "{handoffs:?}");
        assert_eq!((handoffs[0].1, handoffs[0].3), (h, w));
        assert!(handoffs[0].2 <= handoffs[0].4, "release before acquisition");
        let d = trace.diagnose();
        let (ids, t0, t1) = finding_scope(&trace, &d, "lock handed");
        assert_eq!(ids, vec![w]);
        // From the wait to the acquisition the hand-off arrow ends at.
        assert!(t0 < t1, "{t0}..{t1}");
        assert_eq!(t1, handoffs[0].4);
        let (all, _, _) = finding_scope(&trace, &d, "process");
        assert_eq!(all.len(), trace.threads().len());
        // The hover card of the wait names the lock and the thread that held it.
        let mut names = Names::default();
        let r = rows(&trace, w, &mut names, &lock_holds(&trace), false);
        assert_eq!(r.waits.len(), 1, "one wait");
        let holder = &trace.threads()[h];
        assert_eq!(
            names.list[r.waits[0].label as usize],
            format!(
                "waiting for lock handed, held by holder (tid {})",
                holder.tid()
            )
        );
        let json = page_data(&trace, "t", DEFAULT_FRAME_TARGET);
        let v: Value = serde_json::from_str(&json).expect("valid JSON");
        assert_eq!(v["threads"][w]["waits"][1].as_array().unwrap().len(), 1);
    }

    /// A thread observed from outside: OS samples at 0, 100, 200 and 300 ns saying it was on a
    /// CPU 60 ns of the first interval, none of the second and (more than) all of the third,
    /// in which it also waited 40 ns for a lock.
    fn observed_thread(with_zone: bool) -> Trace {
        use threadlab::trace::{Event, TraceBuilder};
        let mut b = TraceBuilder::new();
        let lock = b.name("big_lock");
        let t = b.thread(7, "app");
        let mut push = |ts_ns, kind| b.push(t, Event { ts_ns, kind });
        let os = |on_cpu_ns| EventKind::OsSched {
            on_cpu_ns,
            runqueue_ns: 0,
        };
        push(0, os(0));
        push(100, os(60));
        push(200, os(60));
        push(
            210,
            EventKind::LockWait {
                lock: 1,
                name: lock,
            },
        );
        let handoff = None;
        push(
            250,
            EventKind::LockAcquired {
                lock: 1,
                name: lock,
                handoff,
            },
        );
        push(
            260,
            EventKind::LockReleased {
                lock: 1,
                name: lock,
                handoff,
            },
        );
        if with_zone {
            push(270, EventKind::ZoneBegin { name: lock });
            push(280, EventKind::ZoneEnd);
        }
        push(300, os(400));
        b.duration_ns(300);
        b.build()
    }

    #[test]
    fn an_observed_threads_time_on_a_cpu_is_drawn_as_running() {
        let trace = observed_thread(false);
        assert!(observed_only(&trace));
        let mut names = Names::default();
        let r = rows(&trace, 0, &mut names, &lock_holds(&trace), true);
        let strip: Vec<(u64, u64, &str)> = r
            .states
            .iter()
            .map(|s| (s.start, s.end, STATES[s.label as usize]))
            .collect();
        assert_eq!(
            strip,
            [
                (0, 60, "running"),
                (60, 200, "other"),
                (200, 210, "running"),
                (210, 250, "lock wait"),
                (250, 300, "running"),
            ]
        );
        // A recorded program's thread outside its spans stays *other*, on-CPU or not.
        let recorded = observed_thread(true);
        assert!(!observed_only(&recorded));
        let json = page_data(&recorded, "t", DEFAULT_FRAME_TARGET);
        let v: Value = serde_json::from_str(&json).expect("valid JSON");
        let r = rows(&recorded, 0, &mut names, &lock_holds(&recorded), false);
        assert!(r
            .states
            .iter()
            .all(|s| s.label != RUNNING || (270..=280).contains(&s.start)));
        assert_eq!(v["threads"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn rows_nest_spans_and_derive_states() {
        let rec = start();
        std::thread::spawn(|| {
            let _outer = threadlab::zone!("outer");
            let _inner = threadlab::zone!("inner");
            let m = threadlab::sync::Mutex::named("m", 0);
            *m.lock() += 1;
        })
        .join()
        .unwrap();
        let trace = rec.stop();
        let i = trace
            .threads()
            .iter()
            .position(|t| {
                t.events()
                    .iter()
                    .any(|e| matches!(e.kind, EventKind::ZoneBegin { .. }))
            })
            .expect("the zone thread");
        let mut names = Names::default();
        let r = rows(&trace, i, &mut names, &lock_holds(&trace), false);
        assert_eq!(r.spans.len(), 2, "two depths");
        assert_eq!(names.list[r.spans[0][0].label as usize], "outer");
        assert_eq!(names.list[r.spans[1][0].label as usize], "inner");
        assert!(r.spans[0][0].start <= r.spans[1][0].start);
        assert!(r.spans[0][0].end >= r.spans[1][0].end);
        assert_eq!(r.holds.len(), 1, "one lock hold");
        assert!(r.states.iter().any(|s| s.label == RUNNING));
        let json = page_data(&trace, "t", DEFAULT_FRAME_TARGET);
        let v: Value = serde_json::from_str(&json).expect("valid JSON");
        assert_eq!(
            v["threads"].as_array().unwrap().len(),
            trace.threads().len()
        );
    }
}
