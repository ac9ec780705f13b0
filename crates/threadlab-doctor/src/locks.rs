//! Per named lock: how long threads held it, how long they waited for it (from asking to
//! getting, recorded only when the lock was not free at once), and which threads waited most —
//! Tracy's "lock info" (“Multithreading Isn’t Free” reads 94.86 ms hold against 214.89 ms wait from it).
//! Instances that share a name (`sync::Mutex::named`) are summed under it.

use std::collections::BTreeMap;

use super::states::Walk;
use super::stats::Summary;
use threadlab_trace::Trace;

/// One named lock's figures.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct LockStats {
    /// The lock's name.
    pub name: String,
    /// Distinct lock instances with this name.
    pub instances: usize,
    /// Hold times (every acquisition).
    pub hold: Summary,
    /// Wait times (acquisitions that had to wait).
    pub wait: Summary,
    /// The threads that waited longest, with their total wait, longest first (at most 5).
    #[cfg_attr(feature = "serde", serde(serialize_with = "waiters"))]
    pub top_waiters: Vec<(String, u64)>,
    /// Total wait over total hold (0 when never held).
    pub wait_over_hold: f64,
}

/// `top_waiters` as `[{"thread": …, "wait_ns": …}]`.
#[cfg(feature = "serde")]
fn waiters<S: serde::Serializer>(w: &[(String, u64)], s: S) -> Result<S::Ok, S::Error> {
    #[derive(serde::Serialize)]
    struct Waiter<'a> {
        thread: &'a str,
        wait_ns: u64,
    }
    s.collect_seq(w.iter().map(|(thread, wait_ns)| Waiter {
        thread,
        wait_ns: *wait_ns,
    }))
}

/// Gathers every thread's lock spans by lock name, most waited-for first.
pub(crate) fn locks(trace: &Trace, walks: &[Walk]) -> Vec<LockStats> {
    #[derive(Default)]
    struct Acc {
        ids: Vec<u64>,
        holds: Vec<u64>,
        waits: Vec<u64>,
        waiters: BTreeMap<String, u64>,
    }
    let mut by_name: BTreeMap<String, Acc> = BTreeMap::new();
    for w in walks {
        for l in &w.locks {
            let acc = by_name.entry(trace.name(l.name).to_owned()).or_default();
            if !acc.ids.contains(&l.lock) {
                acc.ids.push(l.lock);
            }
            if l.hold {
                acc.holds.push(l.duration_ns);
            } else {
                acc.waits.push(l.duration_ns);
                let t = acc.waiters.entry(w.stats.name.clone()).or_default();
                *t = t.saturating_add(l.duration_ns);
            }
        }
    }
    let mut out: Vec<LockStats> = by_name
        .into_iter()
        .map(|(name, acc)| {
            let mut top: Vec<(String, u64)> = acc.waiters.into_iter().collect();
            top.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            top.truncate(5);
            let (hold, wait) = (Summary::of(acc.holds), Summary::of(acc.waits));
            LockStats {
                name,
                instances: acc.ids.len(),
                wait_over_hold: super::stats::ratio(wait.total_ns as f64, hold.total_ns as f64),
                hold,
                wait,
                top_waiters: top,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.wait
            .total_ns
            .cmp(&a.wait.total_ns)
            .then_with(|| b.hold.total_ns.cmp(&a.hold.total_ns))
    });
    out
}
