//! Samples → a [`Trace`] (through the library's `TraceBuilder`) and the per-address futex table.
//!
//! Each thread becomes a track named by its `comm`, holding:
//! - an `OsSched` event per sample (cumulative time on a CPU and runnable-but-waiting, from
//!   `schedstat`) and an `OsSwitches` event whenever `status` was read; a thread created during
//!   the observation also gets zero counts at its estimated creation time, so its first slice of
//!   work counts;
//! - a lock wait (`LockWait` → `LockAcquired`, the lock being the futex address, named by
//!   `symbols.rs`) for each run of samples blocked in `futex` on one address: it begins at the
//!   first such sample and ends at the first sample that finds the thread elsewhere, less the
//!   time the thread spent on a CPU or queued for one since the sample before (`schedstat`:
//!   it was not waiting then). If the thread ran in between (its timeslice count moved) the run
//!   is two waits. Waits are estimated to the sampling period, their total to what `schedstat`
//!   says the thread did besides;
//! - a park (`ParkBegin` → `ParkEnd`) for each run of samples asleep or blocked on I/O;
//! - when the tracer saw the thread die (`births.rs`), a last `OsSched` at its death with its
//!   whole time on a CPU, so a thread never sampled still has its birth, its death and its work.
//!
//! So the doctor's OS findings (oversubscription, preemption, busy machine, thread creation,
//! park/wake churn) and lock contention apply as they do to a recording; sampled futex waits
//! come without hold times (no `LockReleased`), which the doctor says.
//!
//! What the interposer saw inside the processes ([`Exact`]) is merged in: its waits as
//! `LockWait` → `LockAcquired` on the waiting thread's track, each followed by its call site and
//! its holder as arguments ([`threadlab_trace::ARG_LOCK_SITE`],
//! [`threadlab_trace::ARG_LOCK_HOLDER`]), and every lock's aggregates (acquisitions, waits,
//! sampled holds, waits per call site and per holder) as the trace's lock table
//! ([`TraceBuilder::lock`]), the one source of the report's lock lines, the doctor's, `view`'s
//! and the saved trace's.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use threadlab::trace::{Event, EventKind, Trace, TraceBuilder};
use threadlab_trace::{
    Durations, LockSummary, WaitHolder, WaitSite, ARG_LOCK_HOLDER, ARG_LOCK_SITE,
};

use super::sampler::{Observed, Sample};
use super::syscall::State;

/// One futex address: who waited on it, how often, how long.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FutexRow {
    /// The futex word's address.
    pub addr: u64,
    /// `futex 0x… symbol+off (file)`.
    pub name: String,
    /// Waits seen (see the module doc).
    pub waits: u64,
    /// Their total estimated length, ns.
    pub wait_ns: u64,
    /// Waiting threads (name, tid, wait ns), longest first.
    pub waiters: Vec<(String, u64, u64)>,
}

/// What a span of samples is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Span {
    /// A shared futex: a lock wait.
    Lock(u64),
    /// A sleep, I/O, or a futex only this thread waits on (its address).
    Park(Option<u64>),
}

fn span_of(s: &Sample, shared: &HashSet<u64>) -> Option<Span> {
    match s.state {
        State::Futex(a) if shared.contains(&a) => Some(Span::Lock(a)),
        State::Futex(a) => Some(Span::Park(Some(a))),
        State::Sleeping | State::Io => Some(Span::Park(None)),
        State::Runnable | State::Other => None,
    }
}

/// Builds the trace and the futex table (most waited-for address first).
pub fn convert(o: &Observed) -> (Trace, Vec<FutexRow>) {
    convert_with(o, &Exact::default())
}

/// Exact events from inside the observed processes (the interposer, `interpose.rs`), merged
/// into the sampled threads' tracks by thread id; threads the sampler never saw (those of
/// child processes) get tracks of their own.
#[derive(Clone, Debug, Default)]
pub struct Exact {
    /// Events per thread id, any order.
    pub events: HashMap<u64, Vec<(u64, ExactKind)>>,
    /// Threads not sampled: (tid, name).
    pub extra_threads: Vec<(u64, String)>,
    /// When set, waits the sampler saw on shared futexes are parks: the interposer saw the
    /// process's lock waits exactly.
    pub locks_exact: bool,
    /// Every lock's aggregates, for the trace's lock table.
    pub locks: Vec<TableLock>,
}

/// One lock's aggregates over the processes that used it, as the interposer counted them.
#[derive(Clone, Debug, Default)]
pub struct TableLock {
    /// Its id in the trace (its events carry it).
    pub id: u64,
    /// Its name.
    pub name: Arc<str>,
    /// Every acquisition.
    pub acquisitions: u64,
    /// The contended acquisitions and their waits.
    pub waits: Durations,
    /// The holds timed, a sample of the acquisitions.
    pub holds: Durations,
    /// Waits per call site: (site, waits, ns).
    pub sites: Vec<(String, u64, u64)>,
    /// Waits per thread that held the lock when they began: (tid, waits, ns).
    pub holders: Vec<(u64, u64, u64)>,
}

impl TableLock {
    /// The lock as the trace's lock table keeps it.
    fn summary(&self, b: &mut TraceBuilder) -> LockSummary {
        LockSummary {
            acquisitions: Some(self.acquisitions),
            waits: self.waits.clone(),
            holds: self.holds.clone(),
            holds_sampled: true,
            sites: self
                .sites
                .iter()
                .map(|(site, waits, wait_ns)| WaitSite {
                    site: b.name(site),
                    waits: *waits,
                    wait_ns: *wait_ns,
                })
                .collect(),
            holders: self
                .holders
                .iter()
                .map(|&(tid, waits, wait_ns)| WaitHolder {
                    tid,
                    waits,
                    wait_ns,
                })
                .collect(),
            ..LockSummary::new(self.id, b.name(&self.name))
        }
    }
}

/// One exact event; lock names are resolved already (`interpose.rs`), and shared: a lock storm
/// has hundreds of thousands of waits on one name.
#[derive(Clone, Debug)]
pub enum ExactKind {
    /// A wait for a lock began, from a call site, while a thread (tid) held it, as far as known.
    Wait {
        lock: u64,
        name: std::sync::Arc<str>,
        site: Option<Arc<str>>,
        holder: Option<u64>,
    },
    /// The lock was acquired after a wait.
    Acquired {
        lock: u64,
        name: std::sync::Arc<str>,
    },
    /// A park (condition variable or semaphore that is not a lock) began or ended.
    Park(bool),
    /// Born (zero counts), for threads the sampler never saw.
    Born,
}

/// Appends the events of one exact event at `ts_ns` to `out`: a wait's begin is followed by
/// its call site and holder as arguments.
fn push_exact(b: &mut TraceBuilder, out: &mut Vec<Event>, ts_ns: u64, k: &ExactKind) {
    let mut push = |kind| out.push(Event { ts_ns, kind });
    match k {
        ExactKind::Wait {
            lock,
            name,
            site,
            holder,
        } => {
            push(EventKind::LockWait {
                lock: *lock,
                name: b.name(name),
            });
            if let Some(site) = site {
                let (key, value) = (b.name(ARG_LOCK_SITE), b.name(site));
                push(EventKind::Arg { key, value });
            }
            if let Some(tid) = holder {
                let (key, value) = (b.name(ARG_LOCK_HOLDER), b.name(&tid.to_string()));
                push(EventKind::Arg { key, value });
            }
        }
        ExactKind::Acquired { lock, name } => push(EventKind::LockAcquired {
            lock: *lock,
            name: b.name(name),
            handoff: None,
        }),
        ExactKind::Park(true) => push(EventKind::ParkBegin),
        ExactKind::Park(false) => push(EventKind::ParkEnd),
        ExactKind::Born => push(EventKind::OsSched {
            on_cpu_ns: 0,
            runqueue_ns: 0,
        }),
    }
}

/// [`convert`] with exact events merged in.
pub fn convert_with(o: &Observed, exact: &Exact) -> (Trace, Vec<FutexRow>) {
    let mut b = TraceBuilder::new();
    b.cpus(o.cpus);
    b.duration_ns(o.duration_ns);
    let mut rows: BTreeMap<u64, FutexRow> = BTreeMap::new();
    let mut shared = shared_futexes(o);
    if exact.locks_exact {
        shared.clear();
    }
    for t in &o.threads {
        let i = b.thread(t.tid, &t.name);
        let mut out: Vec<Event> = Vec::new();
        let ev = |out: &mut Vec<Event>, ts_ns, kind| out.push(Event { ts_ns, kind });
        if let Some(born) = t.born_ns {
            let zero = EventKind::OsSched {
                on_cpu_ns: 0,
                runqueue_ns: 0,
            };
            ev(&mut out, born, zero);
            let zero = EventKind::OsSwitches {
                voluntary: 0,
                involuntary: 0,
            };
            ev(&mut out, born, zero);
        }
        let exact_spans = exact_spans(exact.events.get(&t.tid).map_or(&[][..], Vec::as_slice));
        let mut open: Option<(Span, u64)> = None;
        let mut prev_slices = None;
        let mut prev_state = State::Other;
        // The previous sample's cumulative time on a CPU and queued for one.
        let mut prev_sched: Option<(u64, u64)> = None;
        for s in &t.samples {
            let now = span_of(s, &shared);
            let ran = prev_slices.is_some_and(|p| p != s.slices);
            prev_slices = Some(s.slices);
            let state_changed = s.state != prev_state;
            prev_state = s.state;
            let since_prev =
                prev_sched.map_or(0, |p| busy_between(p, (s.on_cpu_ns, s.runqueue_ns)));
            prev_sched = Some((s.on_cpu_ns, s.runqueue_ns));
            if open.map(|o| o.0) != now
                || (ran && now.is_some())
                || (state_changed && now.is_some())
            {
                if let Some((span, begin)) = open.take() {
                    let end = wait_end(begin, s.ts_ns, since_prev);
                    let seen = Seen {
                        begin,
                        end,
                        exact: &exact_spans,
                    };
                    close(&mut b, &mut out, span, seen, o, &t.name, t.tid, &mut rows);
                }
                if let Some(span) = now {
                    open = Some((span, s.ts_ns));
                }
            }
            let sched = EventKind::OsSched {
                on_cpu_ns: s.on_cpu_ns,
                runqueue_ns: s.runqueue_ns,
            };
            ev(&mut out, s.ts_ns, sched);
            if let Some((voluntary, involuntary)) = s.switches {
                let sw = EventKind::OsSwitches {
                    voluntary,
                    involuntary,
                };
                ev(&mut out, s.ts_ns, sw);
            }
        }
        if let Some((span, begin)) = open {
            let end = match (t.exited_ns, t.end, prev_sched) {
                (Some(died), Some(at_death), Some(p)) => {
                    wait_end(begin, died, busy_between(p, at_death))
                }
                (Some(died), ..) => died,
                (None, ..) => o.duration_ns,
            };
            let seen = Seen {
                begin,
                end,
                exact: &exact_spans,
            };
            close(&mut b, &mut out, span, seen, o, &t.name, t.tid, &mut rows);
        }
        if let (Some(died), Some((on_cpu_ns, runqueue_ns))) = (t.exited_ns, t.end) {
            let sched = EventKind::OsSched {
                on_cpu_ns,
                runqueue_ns,
            };
            ev(&mut out, died, sched);
        }
        for (ts_ns, k) in exact.events.get(&t.tid).into_iter().flatten() {
            if matches!(k, ExactKind::Born) {
                continue; // the sampled track has its own counts from birth
            }
            push_exact(&mut b, &mut out, *ts_ns, k);
        }
        out.sort_by_key(|e| e.ts_ns);
        for e in out {
            b.push(i, e);
        }
    }
    let sampled: HashSet<u64> = o.threads.iter().map(|t| t.tid).collect();
    for (tid, name) in &exact.extra_threads {
        if sampled.contains(tid) {
            continue;
        }
        let i = b.thread(*tid, name);
        let mut list: Vec<&(u64, ExactKind)> =
            exact.events.get(tid).into_iter().flatten().collect();
        list.sort_by_key(|e| e.0);
        let mut out = Vec::new();
        for (ts_ns, k) in list {
            push_exact(&mut b, &mut out, *ts_ns, k);
        }
        for e in out {
            b.push(i, e);
        }
    }
    for l in &exact.locks {
        let row = l.summary(&mut b);
        b.lock(row);
    }
    let mut rows: Vec<FutexRow> = rows.into_values().collect();
    for r in &mut rows {
        r.waiters.sort_by(|a, b| b.2.cmp(&a.2).then(a.1.cmp(&b.1)));
    }
    rows.sort_by(|a, b| b.wait_ns.cmp(&a.wait_ns).then(a.addr.cmp(&b.addr)));
    (b.build(), rows)
}

/// Time a thread spent on a CPU or queued for one between two readings of its cumulative
/// (on-CPU, queued) times.
fn busy_between(before: (u64, u64), after: (u64, u64)) -> u64 {
    after
        .0
        .saturating_sub(before.0)
        .saturating_add(after.1.saturating_sub(before.1))
}

/// Where a wait that began at `begin` and was last seen before the sample at `seen_ns` ends:
/// the thread was not waiting while it ran or queued for a CPU (`busy_ns`, since the sample
/// before), so the wait ends that long before `seen_ns`, not after `begin`. A thread that
/// waited, ran and waited again between two samples keeps its total wait; a GIL-bound thread
/// that ran a fifth of every period was counted as waiting the whole period (a report of
/// 0.76 s running for 2.18 s on a CPU).
fn wait_end(begin: u64, seen_ns: u64, busy_ns: u64) -> u64 {
    seen_ns.saturating_sub(busy_ns).max(begin)
}

/// The futex addresses that two or more threads waited on: locks (or condition variables)
/// shared by several threads. A futex only one thread ever waits on is mostly a wait for an
/// event — a `join` (glibc waits on the joined thread's id word), a private condition variable,
/// a parked worker's own slot — so it becomes a park, not a lock wait, though the futex table
/// still lists it.
fn shared_futexes(o: &Observed) -> HashSet<u64> {
    let mut waiters: HashMap<u64, HashSet<u64>> = HashMap::new();
    for t in &o.threads {
        for s in &t.samples {
            if let State::Futex(a) = s.state {
                waiters.entry(a).or_default().insert(t.tid);
            }
        }
    }
    waiters
        .into_iter()
        .filter(|(_, w)| w.len() >= 2)
        .map(|(a, _)| a)
        .collect()
}

fn lock_name(o: &Observed, addr: u64) -> String {
    o.futex_names
        .get(&addr)
        .cloned()
        .unwrap_or_else(|| format!("futex {addr:#x}"))
}

fn open_span(b: &mut TraceBuilder, out: &mut Vec<Event>, span: Span, ts_ns: u64, o: &Observed) {
    let kind = match span {
        Span::Lock(lock) => EventKind::LockWait {
            lock,
            name: b.name(&lock_name(o, lock)),
        },
        Span::Park(_) => EventKind::ParkBegin,
    };
    out.push(Event { ts_ns, kind });
}

/// The waits and parks the interposer saw on one thread, as (begin, end) pairs in time order.
fn exact_spans(events: &[(u64, ExactKind)]) -> Vec<(u64, u64)> {
    let mut list: Vec<&(u64, ExactKind)> = events.iter().collect();
    list.sort_by_key(|e| e.0);
    let mut spans = Vec::new();
    let mut open = None;
    for (ts, k) in list {
        match k {
            ExactKind::Wait { .. } | ExactKind::Park(true) => open = Some(*ts),
            ExactKind::Acquired { .. } | ExactKind::Park(false) => {
                if let Some(begin) = open.take() {
                    spans.push((begin, *ts));
                }
            }
            ExactKind::Born => {}
        }
    }
    spans
}

/// A span of samples as closed: its estimated begin and end, and the thread's exact spans.
struct Seen<'a> {
    begin: u64,
    end: u64,
    exact: &'a [(u64, u64)],
}

impl Seen<'_> {
    /// Whether the interposer saw this wait itself (an exact wait or park of the thread
    /// overlaps it): then the exact spans stand for it in the timeline, and the sampled one,
    /// whose ends are only estimated, would cover the thread's running between them.
    fn seen_exactly(&self) -> bool {
        self.exact
            .iter()
            .any(|&(b, e)| b < self.end.max(self.begin + 1) && e > self.begin)
    }
}

/// Ends a span of samples: counted in the futex table (a futex wait), and put in the thread's
/// timeline unless the interposer saw that futex wait exactly.
#[allow(clippy::too_many_arguments)]
fn close(
    b: &mut TraceBuilder,
    out: &mut Vec<Event>,
    span: Span,
    seen: Seen<'_>,
    o: &Observed,
    thread: &str,
    tid: u64,
    rows: &mut BTreeMap<u64, FutexRow>,
) {
    let (begin, ts_ns) = (seen.begin, seen.end);
    // A sleep or I/O is not a pthread wait: the interposer never sees one.
    let timeline = span == Span::Park(None) || !seen.seen_exactly();
    if timeline {
        open_span(b, out, span, begin, o);
    }
    let addr = match span {
        Span::Lock(a) | Span::Park(Some(a)) => a,
        Span::Park(None) => {
            if timeline {
                out.push(Event {
                    ts_ns,
                    kind: EventKind::ParkEnd,
                });
            }
            return;
        }
    };
    let name = lock_name(o, addr);
    let row = rows.entry(addr).or_insert_with(|| FutexRow {
        addr,
        name: name.clone(),
        ..FutexRow::default()
    });
    let d = ts_ns.saturating_sub(begin);
    row.waits += 1;
    row.wait_ns += d;
    match row.waiters.iter_mut().find(|w| w.1 == tid) {
        Some(w) => w.2 += d,
        None => row.waiters.push((thread.to_owned(), tid, d)),
    }
    if !timeline {
        return;
    }
    let kind = match span {
        Span::Lock(lock) => EventKind::LockAcquired {
            lock,
            name: b.name(&name),
            handoff: None,
        },
        Span::Park(_) => EventKind::ParkEnd,
    };
    out.push(Event { ts_ns, kind });
}

#[cfg(test)]
mod tests {
    use super::super::sampler::ThreadLog;
    use super::*;

    fn sample(ts_ns: u64, state: State, slices: u64) -> Sample {
        Sample {
            ts_ns,
            state,
            cpu: 0,
            on_cpu_ns: 0,
            runqueue_ns: 0,
            slices,
            switches: None,
        }
    }

    fn thread(tid: u64, samples: Vec<Sample>) -> ThreadLog {
        ThreadLog {
            tid,
            name: format!("w{tid}"),
            born_ns: None,
            exited_ns: Some(50),
            samples,
            end: None,
        }
    }

    fn count(trace: &Trace, t: usize, f: fn(&EventKind) -> bool) -> usize {
        trace.threads()[t]
            .events()
            .iter()
            .filter(|e| f(&e.kind))
            .count()
    }

    #[test]
    fn futex_runs_become_waits_split_where_the_thread_ran() {
        let samples = vec![
            sample(0, State::Runnable, 1),
            sample(10, State::Futex(0x40), 2),
            sample(20, State::Futex(0x40), 2), // same wait
            sample(30, State::Futex(0x40), 3), // ran in between: a second wait
            sample(40, State::Sleeping, 4),
        ];
        let other = vec![
            sample(0, State::Futex(0x40), 1),
            sample(10, State::Runnable, 2),
        ];
        let o = Observed {
            threads: vec![thread(9, samples), thread(10, other)],
            duration_ns: 60,
            ..Observed::default()
        };
        let (trace, rows) = convert(&o);
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].waits, rows[0].wait_ns), (3, 40));
        assert_eq!(
            rows[0].waiters,
            vec![("w9".to_owned(), 9, 30), ("w10".to_owned(), 10, 10)]
        );
        let waits = |k: &EventKind| matches!(k, EventKind::LockWait { .. });
        let parks = |k: &EventKind| matches!(k, EventKind::ParkBegin);
        assert_eq!((count(&trace, 0, waits), count(&trace, 0, parks)), (2, 1));
        let last = trace.threads()[0].events().last().unwrap();
        assert_eq!(
            (last.ts_ns, last.kind),
            (50, EventKind::ParkEnd),
            "the sleep ends when the thread is gone"
        );
    }

    #[test]
    fn a_futex_only_one_thread_waits_on_is_a_park() {
        let samples = vec![
            sample(0, State::Futex(0x80), 1),
            sample(10, State::Runnable, 2),
        ];
        let o = Observed {
            threads: vec![thread(9, samples)],
            duration_ns: 60,
            ..Observed::default()
        };
        let (trace, rows) = convert(&o);
        assert_eq!((rows.len(), rows[0].waits), (1, 1), "still in the table");
        let waits = |k: &EventKind| matches!(k, EventKind::LockWait { .. });
        let parks = |k: &EventKind| matches!(k, EventKind::ParkBegin);
        assert_eq!((count(&trace, 0, waits), count(&trace, 0, parks)), (0, 1));
    }

    fn timed(ts_ns: u64, state: State, slices: u64, on_cpu_ns: u64, runqueue_ns: u64) -> Sample {
        Sample {
            on_cpu_ns,
            runqueue_ns,
            ..sample(ts_ns, state, slices)
        }
    }

    /// Thread 9 with `samples`, and thread 10 waiting on the futex at 0x40 at 0, so that the
    /// futex is shared (a lock).
    fn with_a_second_waiter(samples: Vec<Sample>) -> Observed {
        let other = vec![timed(0, State::Futex(0x40), 1, 0, 0)];
        Observed {
            threads: vec![thread(9, samples), thread(10, other)],
            duration_ns: 300,
            ..Observed::default()
        }
    }

    #[test]
    fn a_wait_leaves_out_the_time_the_thread_ran_or_queued_since_the_last_sample() {
        // Samples 100 ns apart; the thread waits on a shared futex at 0 and 100, ran 20 and
        // queued 10 between them (a second wait), and at 200 runs, having run 50 and queued 5
        // since 100. Each wait ends that much before the sample that closed it.
        let samples = vec![
            timed(0, State::Futex(0x40), 1, 0, 0),
            timed(100, State::Futex(0x40), 2, 20, 10),
            timed(200, State::Runnable, 3, 70, 15),
        ];
        let o = with_a_second_waiter(samples);
        let (trace, rows) = convert(&o);
        let spans: Vec<(u64, bool)> = trace.threads()[0]
            .events()
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::LockWait { .. } => Some((e.ts_ns, true)),
                EventKind::LockAcquired { .. } => Some((e.ts_ns, false)),
                _ => None,
            })
            .collect();
        assert_eq!(
            spans,
            [(0, true), (70, false), (100, true), (145, false)],
            "waits [0, 100 - 30] and [100, 200 - 55]"
        );
        assert_eq!(rows[0].waiters[0], ("w9".to_owned(), 9, 70 + 45));
    }

    #[test]
    fn a_futex_wait_the_interposer_saw_is_left_to_its_exact_spans() {
        // The sampler saw the thread on a futex from 0 to 100; the interposer saw two lock waits
        // inside (10-40, 60-90) and the thread running between them. The timeline keeps the two
        // exact waits only; the futex table still counts what the sampler saw.
        let samples = vec![
            timed(0, State::Futex(0x40), 1, 0, 0),
            timed(100, State::Runnable, 1, 0, 0),
        ];
        let o = with_a_second_waiter(samples);
        let name: std::sync::Arc<str> = "the lock".into();
        let wait = |ts, lock| {
            let kind = if lock {
                ExactKind::Wait {
                    lock: 7,
                    name: name.clone(),
                    site: None,
                    holder: None,
                }
            } else {
                ExactKind::Acquired {
                    lock: 7,
                    name: name.clone(),
                }
            };
            (ts, kind)
        };
        let exact = Exact {
            events: HashMap::from([(
                9,
                vec![
                    wait(10, true),
                    wait(40, false),
                    wait(60, true),
                    wait(90, false),
                ],
            )]),
            extra_threads: Vec::new(),
            locks_exact: true,
            locks: Vec::new(),
        };
        let (trace, rows) = convert_with(&o, &exact);
        let waits: Vec<u64> = trace.threads()[0]
            .events()
            .iter()
            .filter(|e| matches!(e.kind, EventKind::LockWait { .. } | EventKind::ParkBegin))
            .map(|e| e.ts_ns)
            .collect();
        assert_eq!(
            waits,
            [10, 60],
            "the exact waits, and no sampled park over them"
        );
        // One wait of each thread; this one's 100 ns as sampled.
        assert_eq!((rows[0].waits, rows[0].waiters[0].1), (2, 9));
        assert_eq!(rows[0].waiters[0].2, 100);
        // The other thread's sampled wait, which no exact span covers, stays in its timeline.
        let parks = |k: &EventKind| matches!(k, EventKind::ParkBegin);
        assert_eq!(count(&trace, 1, parks), 1);
    }
}
