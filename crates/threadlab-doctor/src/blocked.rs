//! Blocked workers: which tasks held a pool's workers blocked in the kernel while work waited.
//!
//! When every awake worker of a pool sits inside a task that waits outside threadlab (a
//! `std::sync::Barrier`, a blocking receive, I/O) while work waits, the pool's monitor starts a
//! *spare thread* that runs the waiting work. While recording, a spare thread records its whole
//! life as a zone ([`SPARE_ZONE`]) whose first argument ([`ARG_SPARE_FOR`]) lists the worker
//! indices (seats) that were blocked when it started. The doctor reads, for each such zone, the
//! tasks open on those seats at the zone's start: the innermost open task of each seat is the one
//! that made the blocking call (or, if the seat's task returned while the spare thread was
//! starting, the last task to end there: see `open_task`). A seat's work is read where the doctor reads it everywhere
//! (`guests`): its worker's track, with the install spans of the guests that held the seat merged
//! in, or the guests' spans alone for a seat whose worker recorded nothing.
//!
//! A task that said it would block, with `threadlab::blocking`, is inside a [`BLOCKING_ZONE`]
//! on its seat: the pool handed its seat to a spare thread up front, as asked, so such a seat is
//! not a stall. A spare thread whose seats were all inside one is kept apart (`declared`) and
//! raises no finding; otherwise only the seats that blocked unannounced are named.
//!
//! Spare threads that stood in for the same blocked tasks (the same names and spawn locations)
//! are one group: a program that blocks in the same place again and again gets one finding,
//! with the number of spare threads it cost, how long they ran and the tasks they ran.
//!
//! A spare thread's track carries a worker index (its spare seat, past the pool's workers), but
//! it is not one of the pool's workers: the per-thread pass (`states`) marks it `spare` and does
//! not read its zone as work, and the figures per worker of the pool leave it out (see
//! `runtime` and `groups`).

use std::collections::BTreeMap;

use super::guests::SeatView;
use threadlab_trace::{
    Event, EventKind, NameId, TaskKind, Trace, ARG_SPARE_FOR, BLOCKING_ZONE, SPARE_ZONE,
};

/// A task that was open on a blocked worker's seat when a spare thread started for it.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct BlockedTask {
    /// Its name (`spawn_named`), if recorded.
    pub name: Option<String>,
    /// Its spawn location (`file:line:column`), if recorded.
    pub location: Option<String>,
    /// `task <kind>` (`task spawn`, `task scope`, …).
    pub kind: String,
}

impl BlockedTask {
    /// How a finding names it: `` `name` (spawned at file:line:col) ``, or its location alone,
    /// or its kind.
    ///
    /// ```
    /// let t = threadlab_doctor::BlockedTask {
    ///     name: Some("reads".into()),
    ///     location: Some("src/main.rs:7:5".into()),
    ///     kind: "task spawn".into(),
    /// };
    /// assert_eq!(t.describe(), "`reads` (spawned at src/main.rs:7:5)");
    /// ```
    pub fn describe(&self) -> String {
        match (&self.name, &self.location) {
            (Some(n), Some(at)) => format!("`{n}` (spawned at {at})"),
            (Some(n), None) => format!("`{n}`"),
            (None, Some(at)) => format!("a {} spawned at {at}", self.kind),
            (None, None) => format!("a {} (no name or spawn location recorded)", self.kind),
        }
    }
}

/// Spare threads that stood in for the same blocked tasks ([`Diagnosis::blocked`]).
///
/// ```
/// use threadlab_trace::{Event, EventKind, TaskKind, TraceBuilder};
/// use threadlab_trace::{ARG_SPARE_FOR, ARG_TASK_NAME, SPARE_ZONE};
/// use threadlab_doctor::{Diagnose, Pitfall};
/// // Worker 0 sits in task `waits` from 1 ms to 9 ms; a spare thread stands in for it at 5 ms.
/// let mut b = TraceBuilder::new();
/// b.duration_ns(10_000_000);
/// let (name_key, name) = (b.name(ARG_TASK_NAME), b.name("waits"));
/// let (zone, for_key, seats) = (b.name(SPARE_ZONE), b.name(ARG_SPARE_FOR), b.name("0"));
/// let worker = b.thread(1, "threadlab-0");
/// b.worker(worker, 0);
/// let spare = b.thread(2, "threadlab-spare-0");
/// b.worker(spare, 1);
/// let task = EventKind::TaskBegin { kind: TaskKind::Spawn, flow: None };
/// for (t, ts_ns, kind) in [
///     (worker, 1_000_000, task),
///     (worker, 1_000_000, EventKind::Arg { key: name_key, value: name }),
///     (worker, 9_000_000, EventKind::TaskEnd),
///     (spare, 5_000_000, EventKind::ZoneBegin { name: zone }),
///     (spare, 5_000_000, EventKind::Arg { key: for_key, value: seats }),
///     (spare, 6_000_000, EventKind::ZoneEnd),
/// ] {
///     b.push(t, Event { ts_ns, kind });
/// }
/// let d = b.build().diagnose();
/// assert_eq!(d.blocked[0].tasks[0].name.as_deref(), Some("waits"));
/// let blocked = &d.blocked[0];
/// assert_eq!((blocked.seats.as_slice(), blocked.spare_ns), (&[0][..], 1_000_000));
/// assert_eq!(blocked.held_ns, 4_000_000); // `waits` had run 4 ms when the spare thread came
/// assert!(d.has(Pitfall::BlockedWorkers));
/// assert_eq!((d.runtime.workers, d.runtime.spare_threads), (1, 1));
/// ```
///
/// [`Diagnosis::blocked`]: crate::Diagnosis::blocked
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Blocked {
    /// The tasks open on the blocked seats when the spare threads started (the innermost of
    /// each seat), each once, in order; empty when the trace holds no task open there (the
    /// recording began inside it).
    pub tasks: Vec<BlockedTask>,
    /// The worker indices that were blocked, over all the group's spare threads.
    pub seats: Vec<u32>,
    /// Spare threads started for them.
    pub spare_threads: u64,
    /// How long those spare threads lived, in all.
    pub spare_ns: u64,
    /// The task spans those spare threads ran (nested ones included).
    pub spare_tasks: u64,
    /// The longest a blocked task had been running when a spare thread arrived for it (0 when
    /// no task was still open then): how long, at most, the pool's workers sat blocked before
    /// one stood in (the task may have worked a while before it blocked).
    pub held_ns: u64,
    /// Whether every seat they stood in for was inside `threadlab::blocking` (a
    /// [`BLOCKING_ZONE`]): the program asked for them, and they are no stall.
    pub declared: bool,
}

/// One spare thread's zone: when it began, which seats it named, how long it lived and the
/// tasks it ran.
struct SpareZone {
    begin_ns: u64,
    seats: Vec<u32>,
    life_ns: u64,
    tasks: u64,
}

/// The spare threads' zones in `trace`, grouped by the tasks they stood in for, the longest
/// group first (see the module doc).
pub(crate) fn blocked(trace: &Trace, view: &SeatView) -> Vec<Blocked> {
    let (Some(zone), Some(key)) = (trace.name_id(SPARE_ZONE), trace.name_id(ARG_SPARE_FOR)) else {
        return Vec::new();
    };
    let task_keys = super::states::TaskArgKeys::of(trace);
    let blocking = trace.name_id(BLOCKING_ZONE);
    let mut groups: BTreeMap<(bool, Vec<BlockedTask>), Blocked> = BTreeMap::new();
    for t in trace.threads() {
        let events: Vec<Event> = t.events().iter().collect();
        let end_ns = trace
            .duration_ns()
            .max(events.last().map_or(0, |e| e.ts_ns));
        for z in spare_zones(trace, &events, zone, key, end_ns) {
            let open: Vec<(u32, Option<OpenTask>)> = z
                .seats
                .iter()
                .map(|&seat| {
                    let open = seat_events(trace, view, seat)
                        .and_then(|e| open_task(trace, e, z.begin_ns, task_keys, blocking));
                    (seat, open)
                })
                .collect();
            // The seats that blocked unannounced, if any; else all of them (asked for).
            let unannounced = |o: &Option<OpenTask>| o.as_ref().map_or(true, |o| !o.declared);
            let declared = !open.iter().any(|(_, o)| unannounced(o));
            let (mut seats, mut tasks, mut held_ns) = (Vec::new(), Vec::new(), 0u64);
            for (seat, o) in open {
                if declared || unannounced(&o) {
                    seats.push(seat);
                    if let Some(o) = o {
                        held_ns = held_ns.max(o.open_ns);
                        tasks.push(o.task);
                    }
                }
            }
            tasks.sort();
            tasks.dedup();
            let g = groups
                .entry((declared, tasks.clone()))
                .or_insert_with(|| Blocked {
                    tasks,
                    declared,
                    ..Blocked::default()
                });
            g.seats.extend(&seats);
            g.seats.sort_unstable();
            g.seats.dedup();
            g.spare_threads += 1;
            g.spare_ns = g.spare_ns.saturating_add(z.life_ns);
            g.spare_tasks = g.spare_tasks.saturating_add(z.tasks);
            g.held_ns = g.held_ns.max(held_ns);
        }
    }
    let mut out: Vec<Blocked> = groups.into_values().collect();
    out.sort_by_key(|b| std::cmp::Reverse(b.spare_ns));
    out
}

/// The spare zones of one track: a `ZoneBegin` of [`SPARE_ZONE`] followed at once by its
/// [`ARG_SPARE_FOR`], up to the `ZoneEnd` that closes it (or `end_ns`, if none does).
fn spare_zones(
    trace: &Trace,
    events: &[Event],
    zone: NameId,
    key: NameId,
    end_ns: u64,
) -> Vec<SpareZone> {
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < events.len() {
        let seats = match (events[i].kind, events[i + 1].kind) {
            (EventKind::ZoneBegin { name }, EventKind::Arg { key: k, value })
                if name == zone && k == key =>
            {
                trace
                    .name(value)
                    .split(',')
                    .filter_map(|s| s.trim().parse::<u32>().ok())
                    .collect::<Vec<u32>>()
            }
            _ => {
                i += 1;
                continue;
            }
        };
        let begin_ns = events[i].ts_ns;
        let (mut depth, mut tasks, mut close) = (0usize, 0u64, None);
        for (j, e) in events.iter().enumerate().skip(i) {
            match e.kind {
                EventKind::ZoneBegin { .. } => depth += 1,
                EventKind::ZoneEnd => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        close = Some((j, e.ts_ns));
                        break;
                    }
                }
                EventKind::TaskBegin { .. } => tasks += 1,
                _ => {}
            }
        }
        let (next, stop_ns) = close.map_or((events.len(), end_ns), |(j, ts)| (j + 1, ts));
        out.push(SpareZone {
            begin_ns,
            seats,
            life_ns: stop_ns.saturating_sub(begin_ns),
            tasks,
        });
        i = next;
    }
    out
}

/// The events the doctor reads as seat `seat`'s (see `guests`): its worker's track (with the
/// guest spans merged in), or, for a seat whose worker recorded nothing, its guests' spans.
fn seat_events<'a>(trace: &'a Trace, view: &'a SeatView, seat: u32) -> Option<SeatEvents<'a>> {
    if let Some(w) = trace.worker_thread(seat) {
        return Some(match view.events.get(w).and_then(|e| e.as_deref()) {
            Some(events) => SeatEvents::Read(events),
            None => SeatEvents::Track(&trace.threads()[w]),
        });
    }
    view.silent_seats
        .iter()
        .find(|(index, _, _)| *index == seat)
        .map(|(_, _, events)| SeatEvents::Read(events))
}

enum SeatEvents<'a> {
    /// The doctor's reading of the seat (guest spans moved in).
    Read(&'a [Event]),
    /// A track as recorded.
    Track(&'a threadlab_trace::ThreadTrack),
}

/// The task open on a seat when a spare thread started (or the last one to run there), and
/// whether it blocked through `threadlab::blocking`.
struct OpenTask {
    task: BlockedTask,
    declared: bool,
    /// How long it had been running then (0 if it had ended).
    open_ns: u64,
}

/// The task that held a seat when a spare thread arrived at `at_ns`: the innermost task open
/// then, or, if none was, the last task that ended on the seat before. A thread takes a while to
/// start (tens of µs, more on a loaded machine), and a task that asked for a spare thread with
/// `threadlab::blocking` may have returned by then; the monitor, which waits for the pool to
/// stall, finds the seats still blocked. Named by its name and spawn location (if it has
/// neither, by the nearest task around it that has one; its kind stays its own), and declared
/// if a `blocking` zone (`blocking`) was open in it then, or had run in it: its wait may have
/// ended while the spare thread it asked for was starting (a barrier released, the task going
/// on), and the spare thread then arrives to find the task past its `blocking` call.
fn open_task(
    trace: &Trace,
    events: SeatEvents<'_>,
    at_ns: u64,
    keys: super::states::TaskArgKeys,
    blocking: Option<NameId>,
) -> Option<OpenTask> {
    #[derive(Clone, Copy)]
    struct Open {
        kind: TaskKind,
        name: Option<NameId>,
        location: Option<NameId>,
        /// A `blocking` zone began in this task (not in a task nested in it).
        called_blocking: bool,
        begin_ns: u64,
    }
    let mut stack: Vec<Open> = Vec::new();
    // Zones open, innermost last, with the tasks open around each (to close them with it).
    let mut zones: Vec<(NameId, usize)> = Vec::new();
    // The last task to end, and the tasks open around it then.
    let mut last_ended: Option<(Open, Vec<Open>)> = None;
    // Whether the last event was a task's begin or one of its arguments (a task's name and
    // location come right after its begin).
    let mut in_begin = false;
    let mut step = |e: Event| {
        match e.kind {
            EventKind::TaskBegin { kind, .. } => {
                stack.push(Open {
                    kind,
                    name: None,
                    location: None,
                    called_blocking: false,
                    begin_ns: e.ts_ns,
                });
                in_begin = true;
                return;
            }
            EventKind::TaskEnd => {
                if let Some(ended) = stack.pop() {
                    last_ended = Some((ended, stack.clone()));
                }
                zones.retain(|&(_, depth)| depth <= stack.len());
            }
            EventKind::ZoneBegin { name } => {
                zones.push((name, stack.len()));
                if Some(name) == blocking {
                    if let Some(top) = stack.last_mut() {
                        top.called_blocking = true;
                    }
                }
            }
            EventKind::ZoneEnd => {
                zones.pop();
            }
            EventKind::Arg { key, value } if in_begin => {
                if let Some(top) = stack.last_mut() {
                    if Some(key) == keys.name {
                        top.name = Some(value);
                    } else if Some(key) == keys.location {
                        top.location = Some(value);
                    }
                }
                return;
            }
            _ => {}
        }
        in_begin = false;
    };
    match events {
        SeatEvents::Read(events) => events
            .iter()
            .take_while(|e| e.ts_ns <= at_ns)
            .for_each(|e| step(*e)),
        SeatEvents::Track(t) => t
            .events()
            .iter()
            .take_while(|e| e.ts_ns <= at_ns)
            .for_each(&mut step),
    }
    let (innermost, around, declared, open_ns) = match stack.split_last() {
        // Zones still listed are open (those of ended tasks left with them).
        Some((top, around)) => (
            *top,
            around.to_vec(),
            top.called_blocking || zones.iter().any(|&(name, _)| Some(name) == blocking),
            at_ns.saturating_sub(top.begin_ns),
        ),
        None => {
            let (ended, around) = last_ended?;
            (ended, around, ended.called_blocking, 0)
        }
    };
    let labelled = std::iter::once(&innermost)
        .chain(around.iter().rev())
        .find(|o| o.name.is_some() || o.location.is_some())
        .unwrap_or(&innermost);
    Some(OpenTask {
        task: BlockedTask {
            name: labelled.name.map(|n| trace.name(n).to_owned()),
            location: labelled.location.map(|n| trace.name(n).to_owned()),
            kind: format!("task {}", innermost.kind),
        },
        declared,
        open_ns,
    })
}
