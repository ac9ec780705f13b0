//! The lock table (`locks.rs`) in a `.pftrace`: written by `perfetto.rs`, read back by
//! `pftrace_read.rs`.
//!
//! Perfetto has no message for a lock's aggregates, so each row is a few instants at 0 on the
//! process track, whose debug annotations Perfetto's UI lists when one is selected: a
//! `threadlab lock` instant per lock (its id, flags, acquisitions, the waits' and holds' count,
//! total and maximum as integers; its name and the two histograms as text, each a
//! comma-separated list of bucket counts up to the last used bucket), then a `threadlab lock
//! site` instant per call site (the lock, the site's text, its waits and their total) and a
//! `threadlab lock holder` instant per holder (the lock, the tid, its waits and their total).
//! A site or holder of a lock with no `threadlab lock` instant before it is refused.

use super::compact::Bad;
use super::locks::{Durations, LockSummary, WaitHolder, WaitSite, DURATION_BUCKETS};
use super::perfetto::{Ev, Out, INSTANT, PROCESS_UUID};
use super::pftrace_read::{Names, Te};
use super::trace::Trace;

/// The instants' names.
const LOCK_NAME: &str = "threadlab lock";
const LOCK_SITE_NAME: &str = "threadlab lock site";
const LOCK_HOLDER_NAME: &str = "threadlab lock holder";
/// A lock's flags: 1, its acquisitions are known; 2, its holds are sampled.
const ACQUISITIONS_KNOWN: u64 = 1;
const HOLDS_SAMPLED: u64 = 2;

/// A histogram as text: its counts up to the last used bucket, comma-separated.
fn hist_text(d: &Durations) -> String {
    let used = d.hist.iter().rposition(|&n| n > 0).map_or(0, |i| i + 1);
    let counts: Vec<String> = d.hist[..used].iter().map(u64::to_string).collect();
    counts.join(",")
}

/// Writes the lock table of `trace` (on the process's packet sequence, 1).
pub(super) fn encode(out: &mut Out, trace: &Trace) {
    for l in trace.lock_table() {
        let (waits, holds) = (hist_text(&l.waits), hist_text(&l.holds));
        let mut ev = Ev::new(0, PROCESS_UUID, INSTANT, Some(LOCK_NAME));
        let flags = if l.acquisitions.is_some() {
            ACQUISITIONS_KNOWN
        } else {
            0
        } | if l.holds_sampled { HOLDS_SAMPLED } else { 0 };
        ev.args = vec![
            ("lock", l.lock),
            ("flags", flags),
            ("acquisitions", l.acquisitions.unwrap_or(0)),
            ("wait_count", l.waits.count),
            ("wait_total_ns", l.waits.total_ns),
            ("wait_max_ns", l.waits.max_ns),
            ("hold_count", l.holds.count),
            ("hold_total_ns", l.holds.total_ns),
            ("hold_max_ns", l.holds.max_ns),
        ];
        ev.str_args = vec![
            ("name", trace.name(l.name)),
            ("wait_hist", &waits),
            ("hold_hist", &holds),
        ];
        out.event(1, &ev);
        for site in &l.sites {
            let mut ev = Ev::new(0, PROCESS_UUID, INSTANT, Some(LOCK_SITE_NAME));
            ev.args = vec![
                ("lock", l.lock),
                ("waits", site.waits),
                ("wait_ns", site.wait_ns),
            ];
            ev.str_args = vec![("site", trace.name(site.site))];
            out.event(1, &ev);
        }
        for h in &l.holders {
            let mut ev = Ev::new(0, PROCESS_UUID, INSTANT, Some(LOCK_HOLDER_NAME));
            ev.args = vec![
                ("lock", l.lock),
                ("tid", h.tid),
                ("waits", h.waits),
                ("wait_ns", h.wait_ns),
            ];
            out.event(1, &ev);
        }
    }
}

/// A text annotation of `e`.
fn text<'a>(e: &'a Te, name: &str) -> Result<&'a str, Bad> {
    e.str_args
        .iter()
        .find(|(n, _)| n == name)
        .map(|a| a.1.as_str())
        .ok_or((e.at as u64, format!("the `{name}` annotation is missing")))
}

/// A histogram read back from its text.
fn hist_of(e: &Te, name: &str) -> Result<Vec<u64>, Bad> {
    let t = text(e, name)?;
    if t.is_empty() {
        return Ok(Vec::new());
    }
    let bad = || {
        (
            e.at as u64,
            format!("the `{name}` annotation is not a histogram"),
        )
    };
    let counts = t
        .split(',')
        .map(|c| c.parse::<u64>().map_err(|_| bad()))
        .collect::<Result<Vec<u64>, Bad>>()?;
    if counts.len() > DURATION_BUCKETS {
        return Err(bad());
    }
    Ok(counts)
}

/// The lock table from the process's events (sequence 1), names interned into `names`.
pub(super) fn decode(events: &[Te], names: &mut Names) -> Result<Vec<LockSummary>, Bad> {
    let mut locks: Vec<LockSummary> = Vec::new();
    for e in events {
        let row = |locks: &mut Vec<LockSummary>| -> Result<usize, Bad> {
            let lock = e.arg("lock")?;
            locks.iter().rposition(|l| l.lock == lock).ok_or((
                e.at as u64,
                format!("a call site or holder of lock {lock}, which has no `{LOCK_NAME}`"),
            ))
        };
        match e.name.as_deref() {
            Some(LOCK_NAME) => {
                let flags = e.arg("flags")?;
                if flags & !(ACQUISITIONS_KNOWN | HOLDS_SAMPLED) != 0 {
                    return Err((e.at as u64, format!("lock flags {flags} are unknown")));
                }
                let durations = |what: &str, hist: &str| -> Result<Durations, Bad> {
                    Ok(Durations {
                        count: e.arg(&format!("{what}_count"))?,
                        total_ns: e.arg(&format!("{what}_total_ns"))?,
                        max_ns: e.arg(&format!("{what}_max_ns"))?,
                        hist: hist_of(e, hist)?,
                    })
                };
                locks.push(LockSummary {
                    acquisitions: (flags & ACQUISITIONS_KNOWN != 0)
                        .then(|| e.arg("acquisitions"))
                        .transpose()?,
                    waits: durations("wait", "wait_hist")?,
                    holds: durations("hold", "hold_hist")?,
                    holds_sampled: flags & HOLDS_SAMPLED != 0,
                    ..LockSummary::new(e.arg("lock")?, names.id(text(e, "name")?))
                });
            }
            Some(LOCK_SITE_NAME) => {
                let at = row(&mut locks)?;
                let site = WaitSite {
                    site: names.id(text(e, "site")?),
                    waits: e.arg("waits")?,
                    wait_ns: e.arg("wait_ns")?,
                };
                locks[at].sites.push(site);
            }
            Some(LOCK_HOLDER_NAME) => {
                let at = row(&mut locks)?;
                let holder = WaitHolder {
                    tid: e.arg("tid")?,
                    waits: e.arg("waits")?,
                    wait_ns: e.arg("wait_ns")?,
                };
                locks[at].holders.push(holder);
            }
            _ => {}
        }
    }
    Ok(locks)
}
