//! The page's arrows between threads: steals (victim → thief), wake-ups (waker → the woken
//! worker's next park end) and lock hand-offs (release → acquisition carrying the same flow).

use std::collections::HashMap;
use threadlab::trace::{EventKind, Trace};

/// An arrow: kind (0 steal, 1 wake-up, 2 lock hand-off), from (thread, ns), to (thread, ns).
pub type Arrow = (u32, usize, u64, usize, u64);

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
