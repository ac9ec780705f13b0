//! One pass per thread over its events, turning it into the page's rows of intervals: task and
//! zone spans by depth, the state strip, lock holds, preemption and lock waits.
//!
//! States follow the doctor's `states.rs` rule (`crates/threadlab-doctor`) (the innermost open
//! span decides: a lock wait is *waiting*, a park *parked*, a spin *spinning*, a task or zone
//! *running*; outside any span a worker is *searching*, another thread *other*), in
//! Superluminal's vocabulary; *preempted* comes from the OS samples (run-queue time growth
//! between two samples over the time between them), and lock holds get a strip of their own
//! since they overlap the rest. In a trace with no task or zone on any thread (a program
//! observed from outside), the time the OS had a thread on a CPU is *running*, as in the
//! doctor's table: the samples say how much of each interval between two of them the thread
//! ran, not when, so that much of the interval's *other* time, from its start, is drawn as
//! running.

use std::collections::HashMap;
use threadlab::trace::{EventKind, Trace};

use super::lod::Iv;

/// State codes, in the order of the page's legend.
pub const STATES: [&str; 6] = [
    "running",
    "searching",
    "spinning",
    "parked",
    "lock wait",
    "other",
];
/// The state codes, indexes into [`STATES`].
pub const RUNNING: u32 = 0;
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

/// Every lock wait of the trace as hover labels, per thread (index): the lock, the thread that
/// held it and the call site that asked, as the trace model tells them
/// ([`Trace::lock_waits`]: a wait's arguments, else the hold that covers its start, else the
/// hand-off).
pub fn lock_waits(trace: &Trace, names: &mut Names) -> Vec<Vec<Iv>> {
    let threads = trace.threads();
    let mut out: Vec<Vec<Iv>> = vec![Vec::new(); threads.len()];
    for w in trace.lock_waits() {
        let by = match w.holder {
            Some(tid) => match threads.iter().find(|t| t.tid() == tid) {
                Some(t) => format!("held by {} (tid {tid})", t.name()),
                None => format!("held by tid {tid}"),
            },
            None => "its holder was not recorded".to_owned(),
        };
        let at = w
            .site
            .map_or_else(String::new, |s| format!(", asked at {}", trace.name(s)));
        let label = names.id(&format!(
            "waiting for lock {}, {by}{at}",
            trace.name(w.name)
        ));
        if let Some(row) = out.get_mut(w.thread) {
            row.push(iv(w.begin_ns, w.end_ns.max(w.begin_ns), label));
        }
    }
    for row in &mut out {
        row.sort_by_key(|w| w.start);
    }
    out
}

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

/// Builds the rows of thread `i` (`waits`: its lock waits from [`lock_waits`]; `observed`:
/// [`observed_only`] of the trace).
pub fn rows(trace: &Trace, i: usize, names: &mut Names, waits: Vec<Iv>, observed: bool) -> Rows {
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
    r.waits = waits;
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
            EventKind::LockWait { .. } => stack.push((WAITING, ts, 0, false)),
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
