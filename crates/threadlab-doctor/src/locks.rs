//! Per named lock: how often it was taken, how long threads held it, how long they waited for
//! it (from asking to getting, recorded only when the lock was not free at once), where the
//! waits came from, which threads waited most and which thread held it while others waited —
//! Tracy's "lock info" (“Multithreading Isn’t Free” reads 94.86 ms hold against 214.89 ms wait
//! from it) and mutrace's per-mutex table (Lennart Poettering, "Measuring Lock Contention":
//! locked, contended, hold total and average).
//!
//! The figures come from the trace model's [`threadlab_trace::LockSummary`] of each lock
//! (`Trace::locks`), which is the same whether the trace's events hold every acquisition (a
//! recording of `threadlab::sync::Mutex`) or its lock table holds the aggregates an observer
//! counted (`threadlab run`), so both read alike here. Two refinements need the events: the
//! threads that waited most (from the waits kept as events), and, for a lock whose every wait
//! and hold is an event (no table row), percentiles by nearest rank over the events themselves
//! instead of over the histogram (which reads them within 19%). Holds timed for a sample of
//! the acquisitions stand for every acquisition: the hold summary's count is the acquisitions
//! and its total their mean times that count (an estimate, said as "sampled, N of M"), at most
//! the recording × its threads.
//! Instances that share a name (`sync::Mutex::named`, or one name in several processes) are
//! summed under it.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::states::Walk;
use super::stats::{fmt_ns, Summary};
use threadlab_trace::{Durations, Trace};

/// One named lock's figures.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct LockStats {
    /// The lock's name.
    pub name: String,
    /// Distinct lock instances with this name.
    pub instances: usize,
    /// Hold times: every hold, or, when [`LockStats::hold_samples`] is set, estimated from the
    /// holds timed: `count` is then the acquisitions and `total_ns` the timed holds' mean times
    /// them; the mean, percentiles and maximum are the sample's.
    pub hold: Summary,
    /// Wait times (acquisitions that had to wait).
    pub wait: Summary,
    /// The threads that waited longest, with their total wait, longest first (at most 5; from
    /// the waits kept as events).
    #[cfg_attr(feature = "serde", serde(serialize_with = "waiters"))]
    pub top_waiters: Vec<(String, u64)>,
    /// Total wait over total hold (0 when never held).
    pub wait_over_hold: f64,
    /// Times it was taken, every one counted; `None` when only its waits were seen (futex
    /// waits sampled from outside).
    pub acquisitions: Option<u64>,
    /// Waits over acquisitions, when the acquisitions are known.
    pub contended_share: Option<f64>,
    /// `Some(n)`: the holds were timed for `n` of the acquisitions (a sample), and the hold
    /// figures are estimated from them.
    pub hold_samples: Option<u64>,
    /// The threads that held it while others waited, the longest total wait first (at most 5):
    /// the first is the thread that held it most while others waited.
    pub holders: Vec<LockHolder>,
    /// Its waits per call site, the longest total wait first (at most 10).
    pub sites: Vec<LockSite>,
}

/// A thread that held a lock while others waited for it.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct LockHolder {
    /// The thread's name (`tid N` when the trace has no track of it).
    pub thread: String,
    /// Waits that began while it held the lock.
    pub waits: u64,
    /// Their total, ns.
    pub wait_ns: u64,
}

/// The waits of a lock from one call site.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct LockSite {
    /// Where: `function (file:line)`, or `symbol+offset (module)`.
    pub site: String,
    /// Waits from there.
    pub waits: u64,
    /// Their total, ns.
    pub wait_ns: u64,
}

impl LockStats {
    /// `, sampled: N of M timed` for a lock whose holds were sampled (its hold total is their
    /// mean times the acquisitions); empty otherwise.
    pub(crate) fn sampled_note(&self) -> String {
        self.hold_samples.map_or_else(String::new, |n| {
            format!(", sampled: {n} of {} timed", self.hold.count)
        })
    }

    /// ` in M acquisitions, P% contended` when the acquisitions are known; empty otherwise.
    pub(crate) fn contended_note(&self) -> String {
        match (self.acquisitions, self.contended_share) {
            (Some(a), Some(share)) => {
                format!(" in {a} acquisitions, {:.1}% contended", 100.0 * share)
            }
            _ => String::new(),
        }
    }

    /// `; held most while others waited by T (n waits, t); most waited at SITE (n, t)`, for what
    /// the trace knows of them; empty otherwise.
    pub(crate) fn where_note(&self) -> String {
        let mut s = String::new();
        if let Some(h) = self.holders.first() {
            s += &format!(
                "; held most while others waited by {} ({}, {})",
                h.thread,
                waits(h.waits),
                fmt_ns(h.wait_ns)
            );
        }
        if let Some(site) = self.sites.first() {
            s += &format!(
                "; most waited at {} ({}, {})",
                site.site,
                waits(site.waits),
                fmt_ns(site.wait_ns)
            );
        }
        s
    }
}

/// `1 wait`, `N waits`.
pub(crate) fn waits(n: u64) -> String {
    if n == 1 {
        "1 wait".to_owned()
    } else {
        format!("{n} waits")
    }
}

/// Most holders and call sites kept per lock.
const MAX_HOLDERS: usize = 5;
const MAX_SITES: usize = 10;

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

/// One name's figures while they are gathered.
#[derive(Default)]
struct Acc {
    ids: Vec<u64>,
    /// Whether any instance is a lock table row (its figures are aggregates).
    table: bool,
    acquisitions: Option<u64>,
    waits: Durations,
    holds: Durations,
    sampled: bool,
    /// The instances' hold totals (estimated for sampled holds).
    hold_total_ns: u64,
    sites: BTreeMap<String, (u64, u64)>,
    holders: HashMap<u64, (u64, u64)>,
    /// The waits and holds kept as events, of instances without a table row.
    event_waits: Vec<u64>,
    event_holds: Vec<u64>,
    waiters: BTreeMap<String, u64>,
}

/// Every lock of the trace by name, most waited-for first.
pub(crate) fn locks(trace: &Trace, walks: &[Walk]) -> Vec<LockStats> {
    let mut by_name: BTreeMap<String, Acc> = BTreeMap::new();
    let in_table: HashSet<u64> = trace.lock_table().iter().map(|t| t.lock).collect();
    let span_ns = trace.duration_ns();
    for l in trace.locks() {
        let acc = by_name.entry(trace.name(l.name).to_owned()).or_default();
        acc.table |= in_table.contains(&l.lock);
        if !acc.ids.contains(&l.lock) {
            acc.ids.push(l.lock);
        }
        if let Some(a) = l.acquisitions {
            acc.acquisitions = Some(acc.acquisitions.unwrap_or(0).saturating_add(a));
        }
        acc.waits.merge(&l.waits);
        acc.holds.merge(&l.holds);
        acc.sampled |= l.holds_sampled;
        acc.hold_total_ns = acc
            .hold_total_ns
            .saturating_add(l.hold_total_within(span_ns, trace.threads().len()));
        for s in &l.sites {
            let e = acc.sites.entry(trace.name(s.site).to_owned()).or_default();
            *e = (e.0.saturating_add(s.waits), e.1.saturating_add(s.wait_ns));
        }
        for h in &l.holders {
            let e = acc.holders.entry(h.tid).or_default();
            *e = (e.0.saturating_add(h.waits), e.1.saturating_add(h.wait_ns));
        }
    }
    // The events: the threads that waited, and each wait and hold of a lock with no table row.
    for w in walks {
        for l in &w.locks {
            let Some(acc) = by_name.get_mut(trace.name(l.name)) else {
                continue;
            };
            if !l.hold {
                let t = acc.waiters.entry(w.stats.name.clone()).or_default();
                *t = t.saturating_add(l.duration_ns);
            }
            if in_table.contains(&l.lock) {
                continue;
            }
            if l.hold {
                acc.event_holds.push(l.duration_ns);
            } else {
                acc.event_waits.push(l.duration_ns);
            }
        }
    }
    let thread_name = |tid: u64| {
        trace
            .threads()
            .iter()
            .find(|t| t.tid() == tid)
            .map_or_else(|| format!("tid {tid}"), |t| t.name().to_owned())
    };
    let mut out: Vec<LockStats> = by_name
        .into_iter()
        .map(|(name, acc)| {
            let mut top: Vec<(String, u64)> = acc.waiters.into_iter().collect();
            top.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            top.truncate(5);
            // A name with no table row: nearest-rank figures over its events.
            let (wait, mut hold) = if acc.table {
                (
                    Summary::of_durations(&acc.waits),
                    Summary::of_durations(&acc.holds),
                )
            } else {
                (Summary::of(acc.event_waits), Summary::of(acc.event_holds))
            };
            // No hold timed: nothing is known of them (not zero).
            let hold_samples =
                (acc.sampled && acc.acquisitions.is_some() && hold.count > 0).then_some(hold.count);
            if let (Some(_), Some(a)) = (hold_samples, acc.acquisitions) {
                hold.count = a;
                hold.total_ns = acc.hold_total_ns;
            }
            let mut holders: Vec<LockHolder> = acc
                .holders
                .into_iter()
                .map(|(tid, (waits, wait_ns))| LockHolder {
                    thread: thread_name(tid),
                    waits,
                    wait_ns,
                })
                .collect();
            holders.sort_by(|a, b| b.wait_ns.cmp(&a.wait_ns).then(a.thread.cmp(&b.thread)));
            holders.truncate(MAX_HOLDERS);
            let mut sites: Vec<LockSite> = acc
                .sites
                .into_iter()
                .map(|(site, (waits, wait_ns))| LockSite {
                    site,
                    waits,
                    wait_ns,
                })
                .collect();
            sites.sort_by(|a, b| b.wait_ns.cmp(&a.wait_ns).then(a.site.cmp(&b.site)));
            sites.truncate(MAX_SITES);
            LockStats {
                name,
                instances: acc.ids.len(),
                wait_over_hold: super::stats::ratio(wait.total_ns as f64, hold.total_ns as f64),
                contended_share: acc
                    .acquisitions
                    .filter(|&a| a > 0)
                    .map(|a| super::stats::ratio(wait.count as f64, a as f64)),
                acquisitions: acc.acquisitions,
                hold_samples,
                hold,
                wait,
                top_waiters: top,
                holders,
                sites,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.wait
            .total_ns
            .cmp(&a.wait.total_ns)
            .then_with(|| b.hold.total_ns.cmp(&a.hold.total_ns))
            .then_with(|| b.acquisitions.cmp(&a.acquisitions))
            .then_with(|| a.name.cmp(&b.name))
    });
    out
}
