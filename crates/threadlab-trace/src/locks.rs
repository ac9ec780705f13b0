//! What a trace knows of each lock beyond its wait and hold events: how often it was taken,
//! its waits and holds as distributions, where the waits came from and which thread held the
//! lock while others waited ([`LockSummary`]).
//!
//! Two kinds of trace carry locks. A recording of threadlab's own `sync::Mutex` has every
//! acquisition as an event (`LockAcquired`, `LockReleased`, and a `LockWait` before the
//! acquisitions that waited): its summaries are read off the events. A program observed from
//! outside (`threadlab run`) is counted inside the process by aggregates — every acquisition,
//! every wait, holds timed for a sample of acquisitions — while its waits become events only up
//! to a budget: its summaries are the trace's *lock table* ([`Trace::lock_table`], filled by
//! [`TraceBuilder::lock`](crate::TraceBuilder::lock)), which the events cannot replace.
//! [`Trace::locks`] gives both the same way: the table's rows, then a summary made from the
//! events of every lock the table does not hold. So the doctor, `compare` and `view` read one
//! set of figures whichever way the trace was made.
//!
//! A wait's call site and the thread that held the lock when the wait began may follow its
//! `LockWait` as arguments ([`ARG_LOCK_SITE`], [`ARG_LOCK_HOLDER`]); without the latter, the
//! holder is the thread whose hold of the lock (its `LockAcquired` → `LockReleased`) covers the
//! wait's start.
//!
//! The figures' types are `lock_summary.rs`'s.

use std::collections::HashMap;

use super::event::{EventKind, NameId};
use super::lock_summary::{Durations, LockSummary, ARG_LOCK_HOLDER, ARG_LOCK_SITE};
use super::trace::Trace;

/// One lock wait of a trace's events: where it was, how long, where from and who held the lock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockWaitSpan {
    /// The waiting thread (its index in [`Trace::threads`]).
    pub thread: usize,
    /// The lock's id.
    pub lock: u64,
    /// The lock's name.
    pub name: NameId,
    /// When the wait began and ended (the lock was taken), ns.
    pub begin_ns: u64,
    /// See `begin_ns`.
    pub end_ns: u64,
    /// Its call site, from its [`ARG_LOCK_SITE`] argument.
    pub site: Option<NameId>,
    /// The thread (OS thread id) that held the lock: its [`ARG_LOCK_HOLDER`] argument, else the
    /// other thread whose hold of the lock covers the wait's start, else the one whose release
    /// handed the lock over to it (the hand-off flow).
    pub holder: Option<u64>,
}

/// One pass over a trace's lock events.
struct LockEvents {
    waits: Vec<LockWaitSpan>,
    /// Per lock: (its name, acquisitions, whether it was ever released, its holds).
    locks: Vec<(u64, NameId, u64, bool, Durations)>,
}

impl Trace {
    /// The lock table: aggregates recorded for locks whose events do not tell everything (a
    /// program observed from outside). Empty for a recording, whose events do. See
    /// [`Trace::locks`] for every lock's figures.
    pub fn lock_table(&self) -> &[LockSummary] {
        &self.locks
    }

    /// Every lock wait the events hold (a `LockWait` then the `LockAcquired` that ends it), in
    /// order of thread then end, each with its holder and call site as far as the trace tells
    /// (see [`LockWaitSpan`]).
    ///
    /// ```
    /// use threadlab_trace::{Event, EventKind as K, TraceBuilder};
    /// let mut b = TraceBuilder::new();
    /// let (holder, waiter) = (b.thread(7, "holder"), b.thread(8, "waiter"));
    /// let q = b.name("queue");
    /// b.push(holder, Event { ts_ns: 0, kind: K::LockAcquired { lock: 1, name: q, handoff: None } });
    /// b.push(holder, Event { ts_ns: 50, kind: K::LockReleased { lock: 1, name: q, handoff: None } });
    /// b.push(waiter, Event { ts_ns: 10, kind: K::LockWait { lock: 1, name: q } });
    /// b.push(waiter, Event { ts_ns: 50, kind: K::LockAcquired { lock: 1, name: q, handoff: None } });
    /// let waits = b.build().lock_waits();
    /// assert_eq!((waits[0].thread, waits[0].holder, waits[0].end_ns), (1, Some(7), 50));
    /// ```
    pub fn lock_waits(&self) -> Vec<LockWaitSpan> {
        self.lock_events().waits
    }

    /// The waits, acquisitions and holds of the events (see [`Trace::lock_waits`]).
    fn lock_events(&self) -> LockEvents {
        let (site_key, holder_key) = (self.name_id(ARG_LOCK_SITE), self.name_id(ARG_LOCK_HOLDER));
        let mut out = LockEvents {
            waits: Vec::new(),
            locks: Vec::new(),
        };
        let mut at: HashMap<u64, usize> = HashMap::new();
        // Every hold (taken, released, tid) per lock; the releasing tid per hand-off flow; per
        // finished wait (index in `out.waits`) with no holder argument, its acquisition's
        // hand-off.
        let mut holds: HashMap<u64, Vec<(u64, u64, u64)>> = HashMap::new();
        let mut handed: HashMap<u64, u64> = HashMap::new();
        let mut unnamed: Vec<(usize, Option<u64>)> = Vec::new();
        for (i, t) in self.threads.iter().enumerate() {
            // Waits under way (a wait that never ends is no wait), holds under way (lock, taken).
            let mut waiting: Vec<LockWaitSpan> = Vec::new();
            let mut holding: Vec<(u64, u64)> = Vec::new();
            // Whether the last event was a wait's begin (or one of its arguments): it is then
            // the last of `waiting`.
            let mut after_wait = false;
            for e in &t.events {
                let (lock, name) = match e.kind {
                    EventKind::LockWait { lock, name }
                    | EventKind::LockAcquired { lock, name, .. }
                    | EventKind::LockReleased { lock, name, .. } => (lock, name),
                    EventKind::Arg { key, value } => {
                        // Arguments right after a wait describe it.
                        if let Some(w) = waiting.last_mut().filter(|_| after_wait) {
                            if Some(key) == site_key {
                                w.site = Some(value);
                            } else if Some(key) == holder_key {
                                w.holder = self.name(value).parse().ok();
                            }
                        }
                        continue;
                    }
                    _ => {
                        after_wait = false;
                        continue;
                    }
                };
                after_wait = false;
                let k = *at.entry(lock).or_insert_with(|| {
                    out.locks.push((lock, name, 0, false, Durations::default()));
                    out.locks.len() - 1
                });
                match e.kind {
                    EventKind::LockWait { .. } => {
                        waiting.retain(|w| w.lock != lock);
                        waiting.push(LockWaitSpan {
                            thread: i,
                            lock,
                            name,
                            begin_ns: e.ts_ns,
                            end_ns: e.ts_ns,
                            site: None,
                            holder: None,
                        });
                        after_wait = true;
                    }
                    EventKind::LockAcquired { handoff, .. } => {
                        out.locks[k].2 = out.locks[k].2.saturating_add(1);
                        if let Some(p) = waiting.iter().position(|w| w.lock == lock) {
                            let mut w = waiting.remove(p);
                            w.end_ns = e.ts_ns;
                            if w.holder.is_none() {
                                unnamed.push((out.waits.len(), handoff.map(|f| f.0)));
                            }
                            out.waits.push(w);
                        }
                        holding.retain(|h| h.0 != lock);
                        holding.push((lock, e.ts_ns));
                    }
                    EventKind::LockReleased { handoff, .. } => {
                        out.locks[k].3 = true;
                        if let Some(f) = handoff {
                            handed.insert(f.0, t.tid);
                        }
                        if let Some(p) = holding.iter().position(|h| h.0 == lock) {
                            let (_, taken) = holding.swap_remove(p);
                            out.locks[k].4.record(e.ts_ns.saturating_sub(taken));
                            holds.entry(lock).or_default().push((taken, e.ts_ns, t.tid));
                        }
                    }
                    _ => {}
                }
            }
        }
        for v in holds.values_mut() {
            v.sort_unstable();
        }
        for (w, handoff) in unnamed {
            let wait = &out.waits[w];
            let me = self.threads[wait.thread].tid;
            // The latest hold begun by the wait's start and not yet released, of another thread.
            let covering = holds.get(&wait.lock).and_then(|v| {
                let k = v.partition_point(|h| h.0 <= wait.begin_ns);
                v[..k]
                    .iter()
                    .rev()
                    .find(|h| h.1 > wait.begin_ns && h.2 != me)
                    .map(|h| h.2)
            });
            out.waits[w].holder =
                covering.or_else(|| handoff.and_then(|f| handed.get(&f).copied()));
        }
        out
    }

    /// Every lock's figures: the lock table's rows, then, for each lock the table does not
    /// hold, a summary of its events (see the module doc), in order of first appearance. Every
    /// acquisition counts when the trace holds the lock's releases (a recording); without them
    /// (waits sampled from outside) the acquisitions are unknown.
    ///
    /// ```
    /// let locks = threadlab_trace::sample::every_kind().locks();
    /// assert_eq!(locks.len(), 1);
    /// assert!(locks[0].holds_sampled, "the sample's table says so");
    /// ```
    pub fn locks(&self) -> Vec<LockSummary> {
        let mut out: Vec<LockSummary> = self.locks.clone();
        let in_table: std::collections::HashSet<u64> = self.locks.iter().map(|l| l.lock).collect();
        let ev = self.lock_events();
        let mut at: HashMap<u64, usize> = HashMap::new();
        for (lock, name, acquired, released, holds) in ev.locks {
            if in_table.contains(&lock) {
                continue;
            }
            at.insert(lock, out.len());
            out.push(LockSummary {
                acquisitions: released.then_some(acquired),
                holds,
                ..LockSummary::new(lock, name)
            });
        }
        for w in ev.waits {
            let Some(&k) = at.get(&w.lock) else {
                continue;
            };
            let s = &mut out[k];
            let ns = w.end_ns.saturating_sub(w.begin_ns);
            s.waits.record(ns);
            if let Some(site) = w.site {
                s.add_site(site, 1, ns);
            }
            if let Some(tid) = w.holder {
                s.add_holder(tid, 1, ns);
            }
        }
        for &k in at.values() {
            out[k].sort();
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::TraceBuilder;
    use crate::event::Event;
    use crate::lock_summary::{WaitHolder, WaitSite, DURATION_BUCKETS};

    /// The interposer's C `bucket`, as `observe/preload/interpose.c` writes it: the histogram
    /// it fills is carried as it is, so the two must agree.
    fn c_bucket(ns: u64) -> usize {
        if ns < 4 {
            return ns as usize;
        }
        let p = 63 - ns.leading_zeros() as usize;
        let b = 4 * (p - 1) + ((ns >> (p - 2)) & 3) as usize;
        b.min(DURATION_BUCKETS - 1)
    }

    #[test]
    fn every_bucket_starts_where_the_bucketing_puts_its_first_value() {
        for b in 0..DURATION_BUCKETS - 1 {
            let low = Durations::bucket_low(b);
            assert_eq!(Durations::bucket(low), b, "bucket {b} low {low}");
            assert_eq!(c_bucket(low), b);
            assert_eq!(Durations::bucket(Durations::bucket_low(b + 1) - 1), b);
        }
        assert_eq!(Durations::bucket(u64::MAX), DURATION_BUCKETS - 1);
    }

    #[test]
    fn a_quantile_is_within_its_bucket_and_never_past_the_maximum() {
        let mut d = Durations::default();
        for _ in 0..99 {
            d.record(1000);
        }
        d.record(1_000_000);
        let p50 = d.quantile(0.5);
        assert!((1000..1000 * 119 / 100).contains(&p50), "{p50}");
        assert_eq!(d.quantile(1.0), 1_000_000);
        assert_eq!(Durations::default().quantile(0.5), 0);
        // Counts that disagree with the histogram (a hostile file) read without a panic.
        let odd = Durations {
            count: 5,
            total_ns: 1,
            max_ns: 0,
            hist: vec![u64::MAX; DURATION_BUCKETS + 3],
        };
        assert_eq!(odd.quantile(f64::NAN), 0);
    }

    /// A recording's locks from its events: every acquisition, the waits with their sites and
    /// holders (from arguments, or from the other thread's hold that covers the wait's start),
    /// every hold; a lock whose releases the trace lacks has unknown acquisitions.
    #[test]
    fn a_recordings_locks_are_read_off_its_events() {
        let mut b = TraceBuilder::new();
        let (a, h) = (b.thread(1, "a"), b.thread(2, "holder"));
        let q = b.name("queue");
        let f = b.name("futex 0x40");
        let (site_key, holder_key) = (b.name(ARG_LOCK_SITE), b.name(ARG_LOCK_HOLDER));
        let site = b.name("insert (q.c:9)");
        let two = b.name("2");
        let ev = |ts_ns, kind| Event { ts_ns, kind };
        // The holder takes `queue` at 0 and releases it at 100, then again 200-260.
        for (taken, released) in [(0, 100), (200, 260)] {
            b.push(
                h,
                ev(
                    taken,
                    EventKind::LockAcquired {
                        lock: 1,
                        name: q,
                        handoff: None,
                    },
                ),
            );
            b.push(
                h,
                ev(
                    released,
                    EventKind::LockReleased {
                        lock: 1,
                        name: q,
                        handoff: None,
                    },
                ),
            );
        }
        // Thread a: a wait at 10 (site and holder as arguments) until 100, held to 150; a wait
        // at 210 with no argument until 260 (the holder's hold covers 210), held to 300; and an
        // uncontended acquisition.
        b.push(a, ev(10, EventKind::LockWait { lock: 1, name: q }));
        b.push(
            a,
            ev(
                10,
                EventKind::Arg {
                    key: site_key,
                    value: site,
                },
            ),
        );
        b.push(
            a,
            ev(
                10,
                EventKind::Arg {
                    key: holder_key,
                    value: two,
                },
            ),
        );
        b.push(
            a,
            ev(
                100,
                EventKind::LockAcquired {
                    lock: 1,
                    name: q,
                    handoff: None,
                },
            ),
        );
        b.push(
            a,
            ev(
                150,
                EventKind::LockReleased {
                    lock: 1,
                    name: q,
                    handoff: None,
                },
            ),
        );
        b.push(a, ev(210, EventKind::LockWait { lock: 1, name: q }));
        b.push(
            a,
            ev(
                260,
                EventKind::LockAcquired {
                    lock: 1,
                    name: q,
                    handoff: None,
                },
            ),
        );
        b.push(
            a,
            ev(
                300,
                EventKind::LockReleased {
                    lock: 1,
                    name: q,
                    handoff: None,
                },
            ),
        );
        b.push(
            a,
            ev(
                310,
                EventKind::LockAcquired {
                    lock: 1,
                    name: q,
                    handoff: None,
                },
            ),
        );
        b.push(
            a,
            ev(
                311,
                EventKind::LockReleased {
                    lock: 1,
                    name: q,
                    handoff: None,
                },
            ),
        );
        // A sampled futex wait: no release.
        b.push(
            a,
            ev(
                400,
                EventKind::LockWait {
                    lock: 0x40,
                    name: f,
                },
            ),
        );
        b.push(
            a,
            ev(
                450,
                EventKind::LockAcquired {
                    lock: 0x40,
                    name: f,
                    handoff: None,
                },
            ),
        );
        let trace = b.build();
        let locks = trace.locks();
        assert_eq!(locks.len(), 2);
        let l = &locks[0];
        assert_eq!((l.lock, l.name, l.acquisitions), (1, q, Some(5)));
        assert_eq!(
            (l.waits.count, l.waits.total_ns, l.waits.max_ns),
            (2, 140, 90)
        );
        assert_eq!(
            (l.holds.count, l.holds.total_ns, l.holds.max_ns),
            (5, 251, 100)
        );
        assert!(!l.holds_sampled);
        assert_eq!(l.hold_total_ns(), 251);
        assert_eq!(
            l.sites,
            vec![WaitSite {
                site,
                waits: 1,
                wait_ns: 90
            }]
        );
        assert_eq!(
            l.holders,
            vec![WaitHolder {
                tid: 2,
                waits: 2,
                wait_ns: 140
            }]
        );
        assert_eq!(l.contended_share(), Some(0.4));
        let futex = &locks[1];
        assert_eq!((futex.acquisitions, futex.waits.count), (None, 1));
        assert_eq!(futex.contended_share(), None);
    }

    /// A wait no hold covers (its holder's hold was not recorded, or ended before the wait's
    /// begin was) is the thread's that handed the lock over to it; a wait that never ended is
    /// no wait.
    #[test]
    fn a_waits_holder_is_else_the_thread_that_handed_the_lock_over() {
        use crate::event::FlowId;
        let mut b = TraceBuilder::new();
        let (a, h) = (b.thread(1, "a"), b.thread(2, "releaser"));
        let q = b.name("queue");
        let ev = |ts_ns, kind| Event { ts_ns, kind };
        let (flow, lock) = (Some(FlowId(5)), 1);
        b.push(a, ev(10, EventKind::LockWait { lock, name: q }));
        b.push(
            h,
            ev(
                20,
                EventKind::LockReleased {
                    lock,
                    name: q,
                    handoff: flow,
                },
            ),
        );
        b.push(
            a,
            ev(
                30,
                EventKind::LockAcquired {
                    lock,
                    name: q,
                    handoff: flow,
                },
            ),
        );
        b.push(
            a,
            ev(
                40,
                EventKind::LockReleased {
                    lock,
                    name: q,
                    handoff: None,
                },
            ),
        );
        b.push(a, ev(50, EventKind::LockWait { lock, name: q }));
        let trace = b.build();
        let waits = trace.lock_waits();
        assert_eq!(waits.len(), 1);
        assert_eq!(
            (waits[0].begin_ns, waits[0].end_ns, waits[0].holder),
            (10, 30, Some(2))
        );
        assert_eq!(
            trace.locks()[0].holders,
            vec![WaitHolder {
                tid: 2,
                waits: 1,
                wait_ns: 20
            }]
        );
    }

    /// A lock in the table is the table's: its events (a budget's worth) add nothing.
    #[test]
    fn the_table_stands_for_its_locks_events() {
        let mut b = TraceBuilder::new();
        let t = b.thread(1, "a");
        let q = b.name("queue");
        b.push(
            t,
            Event {
                ts_ns: 0,
                kind: EventKind::LockWait { lock: 1, name: q },
            },
        );
        b.push(
            t,
            Event {
                ts_ns: 9,
                kind: EventKind::LockAcquired {
                    lock: 1,
                    name: q,
                    handoff: None,
                },
            },
        );
        b.lock(LockSummary {
            acquisitions: Some(1000),
            waits: Durations::of([9, 30, 40]),
            ..LockSummary::new(1, q)
        });
        let trace = b.build();
        assert_eq!(trace.locks(), trace.lock_table().to_vec());
        assert_eq!(trace.locks()[0].waits.count, 3);
    }
}
