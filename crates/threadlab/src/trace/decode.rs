//! Turns the raw records collected at `stop` into a [`Trace`]: converts timestamps to ns, interns
//! names, repairs spans cut by the flight recorder (an end without its begin is dropped, a span
//! still open at the end is closed at the end), and resolves flows to ids unique in the trace by
//! one pass over all threads' flow events in time order (a spawn's raw id is the pointer the
//! runtime passed, which is reused once the task has run: it links to the next run with that id).
//!
//! Memory: each thread's events go straight into its encoded track (`threadlab-trace`'s
//! `compact.rs`, a few bytes an event) while its raw chunks are freed one by one; the flow events
//! are noted on the side (their index and time), and once every thread is decoded the tracks that
//! hold flows are encoded again with their ids, one track at a time. So `stop` holds the raw buffers, the encoded tracks and
//! at most one track's second copy, never the 40-byte [`Event`]s of a whole recording.

use std::collections::HashMap;

use super::clock::Converter;
use super::intern::Interner;
use super::raw;
use super::raw::Record;
use threadlab_trace::{Event, EventBuf, EventKind, FlowId, NameId, TaskKind, ThreadTrack, Trace};

/// What `stop` collected from one thread.
pub(crate) struct RawThread {
    pub(crate) tid: u64,
    pub(crate) name: String,
    /// The records, oldest first, consumed (and their chunks freed) as they are decoded.
    pub(crate) records: Box<dyn Iterator<Item = Record>>,
    pub(crate) dropped: u64,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum FlowKey {
    Spawn(u64),
    Lock(u64, u64),
}

#[derive(Clone, Copy)]
enum Pending {
    /// A flow's start; a spawn's carries its location, if recorded (`raw::SPAWN_LOCATION`).
    Out(FlowKey, Option<NameId>),
    In(FlowKey),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Open {
    Zone,
    Task,
    Spin,
    Park,
    LockWait(u64),
}

fn open_of(kind: &EventKind) -> Option<Open> {
    Some(match kind {
        EventKind::ZoneBegin { .. } => Open::Zone,
        EventKind::TaskBegin { .. } => Open::Task,
        EventKind::SpinBegin => Open::Spin,
        EventKind::ParkBegin => Open::Park,
        EventKind::LockWait { lock, .. } => Open::LockWait(*lock),
        _ => return None,
    })
}

fn closes(kind: &EventKind) -> Option<Open> {
    Some(match kind {
        EventKind::ZoneEnd => Open::Zone,
        EventKind::TaskEnd => Open::Task,
        EventKind::SpinEnd => Open::Spin,
        EventKind::ParkEnd => Open::Park,
        _ => return None,
    })
}

fn end_of(open: Open) -> Option<EventKind> {
    Some(match open {
        Open::Zone => EventKind::ZoneEnd,
        Open::Task => EventKind::TaskEnd,
        Open::Spin => EventKind::SpinEnd,
        Open::Park => EventKind::ParkEnd,
        Open::LockWait(_) => return None,
    })
}

/// Decodes the collected records (`end_raw`: the raw clock at stop).
pub(crate) fn decode(raws: Vec<RawThread>, conv: &Converter, end_raw: u64) -> Trace {
    let duration_ns = conv.ns_since_start(end_raw);
    let mut names = Interner::default();
    let mut threads = Vec::new();
    let mut pendings: Vec<Vec<(usize, u64, Pending)>> = Vec::new();
    let mut dropped = 0;
    for rt in raws {
        dropped += rt.dropped;
        let (track, pending) = decode_thread(rt, conv, duration_ns, &mut names);
        if !track.events.is_empty() {
            threads.push(track);
            pendings.push(pending);
        }
    }
    let patches = resolve_flows(&pendings);
    drop(pendings);
    let located = patches
        .iter()
        .flatten()
        .any(|p| matches!(p.1, Patch::In(_, Some(_))));
    let location_key = located.then(|| names.intern(threadlab_trace::ARG_TASK_LOCATION));
    for (track, patches) in threads.iter_mut().zip(patches) {
        if !patches.is_empty() {
            let old = std::mem::take(&mut track.events);
            track.events = with_flows(&old, &patches, location_key);
        }
    }
    let mut threads: Vec<ThreadTrack> = threads
        .into_iter()
        .map(|t| {
            let mut events = t.events;
            events.shrink_to_fit();
            ThreadTrack::from_encoded(t.tid, t.name, t.worker, events)
        })
        .collect();
    threads.sort_by_key(|t| t.events().first_ts_ns().unwrap_or(u64::MAX));
    Trace::from_parts(
        threads,
        names.names,
        duration_ns,
        dropped,
        super::os::available_cpus(),
    )
}

/// A thread's events, encoded, before their flows are resolved.
struct Decoded {
    tid: u64,
    name: String,
    worker: Option<u32>,
    events: EventBuf,
}

/// A track being written: the encoded events and a copy of the last one (the lock hand-off
/// records look back at it).
struct Out {
    buf: EventBuf,
    last: Option<Event>,
}

impl Out {
    fn push(&mut self, e: Event) {
        self.buf.push(e);
        self.last = Some(e);
    }

    fn len(&self) -> usize {
        self.buf.len()
    }

    fn last(&self) -> Option<&Event> {
        self.last.as_ref()
    }
}

fn decode_thread(
    rt: RawThread,
    conv: &Converter,
    duration_ns: u64,
    names: &mut Interner,
) -> (Decoded, Vec<(usize, u64, Pending)>) {
    let mut events = Out {
        buf: EventBuf::default(),
        last: None,
    };
    let mut pending = Vec::new();
    let mut stack: Vec<Open> = Vec::new();
    let mut holds: Vec<(u64, NameId)> = Vec::new();
    let mut worker = None;
    let mut last_ts = 0;
    // Allocation counts at the begin of open spans: (stack depth, allocations, bytes).
    let mut alloc_open: Vec<(usize, u64, u64)> = Vec::new();
    let mut alloc_end: Option<(usize, u64, u64)> = None;
    // An `ARG` whose value is still arriving in `ARG_BYTES` records: key, bytes, length.
    let mut partial: Option<(NameId, Vec<u8>, usize)> = None;
    // The spawn locations this thread defined (`raw::SPAWN_LOCATION`), by id.
    let mut locations: HashMap<u32, NameId> = HashMap::new();
    let mut records = rt.records;
    while let Some(r) = records.next() {
        if r.kind == raw::TEXT {
            continue; // text whose header was not kept
        }
        if r.kind == raw::ARG_BYTES {
            if let Some((key, mut bytes, len)) = partial.take() {
                bytes.extend_from_slice(&r.a.to_le_bytes());
                bytes.extend_from_slice(&r.b.to_le_bytes());
                bytes.extend_from_slice(&r.c.to_le_bytes());
                if bytes.len() >= len {
                    bytes.truncate(len);
                    let value = names.intern(&String::from_utf8_lossy(&bytes));
                    let ts_ns = conv.ns_since_start(r.ts).max(last_ts);
                    last_ts = ts_ns;
                    let kind = EventKind::Arg { key, value };
                    events.push(Event { ts_ns, kind });
                } else {
                    partial = Some((key, bytes, len));
                }
            }
            continue;
        }
        // An argument cut short (by the flight recorder or the cap) is dropped.
        partial = None;
        let r = &r;
        let ts_ns = conv.ns_since_start(r.ts).max(last_ts);
        last_ts = ts_ns;
        // SAFETY: name fields of records were written by this process from `&'static str`s
        // (`intern::raw_name`).
        let mut name = || unsafe { names.intern_static(r.a, r.c) };
        let kind = match r.kind {
            raw::ZONE_BEGIN => EventKind::ZoneBegin { name: name() },
            raw::ZONE_END => EventKind::ZoneEnd,
            raw::TASK_BEGIN => {
                let Some(kind) = TaskKind::from_code(r.c) else {
                    continue;
                };
                if r.b == 1 {
                    pending.push((events.len(), ts_ns, Pending::In(FlowKey::Spawn(r.a))));
                }
                EventKind::TaskBegin { kind, flow: None }
            }
            raw::TASK_END => EventKind::TaskEnd,
            raw::SPAWN => {
                let at = (r.c != 0).then(|| locations.get(&r.c).copied()).flatten();
                pending.push((events.len(), ts_ns, Pending::Out(FlowKey::Spawn(r.a), at)));
                EventKind::Spawn { flow: FlowId(0) }
            }
            raw::STEAL_ATTEMPT => EventKind::StealAttempt { victim: r.c },
            raw::STEAL => EventKind::Steal { victim: r.c },
            raw::SPIN_BEGIN => EventKind::SpinBegin,
            raw::SPIN_END => EventKind::SpinEnd,
            raw::PARK_BEGIN => EventKind::ParkBegin,
            raw::PARK_END => EventKind::ParkEnd,
            raw::WAKE => EventKind::Wake { woken: r.c },
            raw::INJECTOR_PUSH => EventKind::InjectorPush,
            raw::COUNTER => EventKind::Counter {
                name: name(),
                value: r.b as i64,
            },
            raw::LOCK_WAIT => EventKind::LockWait {
                lock: r.b,
                name: name(),
            },
            raw::LOCK_ACQUIRED => {
                let n = name();
                if stack.last() == Some(&Open::LockWait(r.b)) {
                    stack.pop();
                }
                holds.push((r.b, n));
                EventKind::LockAcquired {
                    lock: r.b,
                    name: n,
                    handoff: None,
                }
            }
            raw::LOCK_RELEASED => {
                let Some(i) = holds.iter().rposition(|h| h.0 == r.b) else {
                    continue;
                };
                holds.remove(i);
                EventKind::LockReleased {
                    lock: r.b,
                    name: name(),
                    handoff: None,
                }
            }
            raw::LOCK_HANDOFF_OUT | raw::LOCK_HANDOFF_IN => {
                let want_out = r.kind == raw::LOCK_HANDOFF_OUT;
                let matches = events.last().is_some_and(|e| match e.kind {
                    EventKind::LockReleased { lock, .. } => want_out && lock == r.b,
                    EventKind::LockAcquired { lock, .. } => !want_out && lock == r.b,
                    _ => false,
                });
                if matches {
                    let key = FlowKey::Lock(r.b, r.a);
                    let p = if want_out {
                        Pending::Out(key, None)
                    } else {
                        Pending::In(key)
                    };
                    let at = events.last().map_or(ts_ns, |e| e.ts_ns);
                    pending.push((events.len() - 1, at, p));
                }
                continue;
            }
            raw::OS_SCHED => EventKind::OsSched {
                on_cpu_ns: r.a,
                runqueue_ns: r.b,
            },
            raw::OS_SWITCHES => EventKind::OsSwitches {
                voluntary: r.a,
                involuntary: r.b,
            },
            raw::WORKER => {
                worker = Some(r.c);
                continue;
            }
            raw::FRAME_MARK => EventKind::FrameMark { name: name() },
            raw::FRAME_START => EventKind::FrameStart { name: name() },
            raw::PLOT => EventKind::Plot {
                name: name(),
                value: threadlab_trace::PlotValue(r.b),
            },
            raw::MESSAGE_STATIC => EventKind::Message {
                text: name(),
                rgb: r.b as u32,
            },
            raw::MESSAGE | raw::ZONE_BEGIN_TEXT => {
                let text = super::recorder::text_of(r.c, &mut records);
                let id = names.intern(&text);
                if r.kind == raw::MESSAGE {
                    EventKind::Message {
                        text: id,
                        rgb: r.b as u32,
                    }
                } else {
                    EventKind::ZoneBegin { name: id }
                }
            }
            raw::ZONE_COLOR => {
                if stack.last() != Some(&Open::Zone) {
                    continue;
                }
                EventKind::ZoneColor { rgb: r.c }
            }
            raw::ALLOC_MARK => {
                if r.c == 1 {
                    alloc_open.push((stack.len(), r.a, r.b));
                } else {
                    alloc_end = Some((stack.len(), r.a, r.b));
                }
                continue;
            }
            raw::ARG => {
                // SAFETY: an `ARG`'s key is a `&'static str` recorded by `hooks::arg`.
                let key = unsafe { names.intern_static(r.a, r.c & 0xffff) };
                let len = (r.c >> 16) as usize;
                let head = r.b.to_le_bytes();
                if len > head.len() {
                    partial = Some((key, head.to_vec(), len));
                    continue;
                }
                let value = names.intern(&String::from_utf8_lossy(&head[..len]));
                EventKind::Arg { key, value }
            }
            raw::TASK_NAME => {
                let value = name();
                EventKind::Arg {
                    key: names.intern(threadlab_trace::ARG_TASK_NAME),
                    value,
                }
            }
            raw::TASK_LOCATION => {
                // SAFETY: the file name of a `&'static Location` (`hooks::task_tag`).
                let value = unsafe { location_name(names, r.a, r.c, r.b) };
                EventKind::Arg {
                    key: names.intern(threadlab_trace::ARG_TASK_LOCATION),
                    value,
                }
            }
            raw::SPAWN_LOCATION => {
                // SAFETY: the file name of a `&'static Location` (`hooks::spawn`), its length
                // in the low 16 bits.
                let value = unsafe { location_name(names, r.a, r.c & 0xffff, r.b) };
                locations.insert(r.c >> 16, value);
                continue;
            }
            _ => continue,
        };
        if let Some(open) = open_of(&kind) {
            stack.push(open);
        } else if let Some(want) = closes(&kind) {
            if stack.last() != Some(&want) {
                continue; // its begin was dropped by the flight recorder, or misnested
            }
            let depth = stack.len();
            if let Some((d, n, b)) = alloc_end.take().filter(|e| e.0 == depth) {
                if let Some(&(_, n0, b0)) = alloc_open.last().filter(|o| o.0 == d) {
                    let kind = EventKind::Allocs {
                        count: n.saturating_sub(n0),
                        bytes: b.saturating_sub(b0),
                    };
                    events.push(Event { ts_ns, kind });
                }
            }
            alloc_open.retain(|o| o.0 < depth);
            stack.pop();
        }
        events.push(Event { ts_ns, kind });
        alloc_end = None;
    }
    let end = duration_ns.max(last_ts);
    while let Some(open) = stack.pop() {
        if let Some(kind) = end_of(open) {
            events.push(Event { ts_ns: end, kind });
        }
    }
    for (lock, name) in holds.into_iter().rev() {
        events.push(Event {
            ts_ns: end,
            kind: EventKind::LockReleased {
                lock,
                name,
                handoff: None,
            },
        });
    }
    let track = Decoded {
        tid: rt.tid,
        name: rt.name,
        worker,
        events: events.buf,
    };
    (track, pending)
}

/// The name `file:line:column` of a location recorded as a file name and
/// `hooks::location_code`.
///
/// # Safety
/// `ptr` and `len` are a `&'static str` of this process (`intern::raw_name`).
unsafe fn location_name(names: &mut Interner, ptr: u64, len: u32, code: u64) -> NameId {
    // SAFETY: the caller's contract.
    let file = unsafe { names.intern_static(ptr, len) };
    let file = names.names[file.0 as usize].clone();
    names.intern(&format!("{file}:{}:{}", code >> 16, code & 0xffff))
}

/// A flow id to write into the event at an index of a track; a task's begin also gets the
/// location its spawn carried.
#[derive(Clone, Copy)]
enum Patch {
    Out(FlowId),
    In(Option<FlowId>, Option<NameId>),
}

/// `events` again, with the flow ids of `patches` (sorted by index) written in, and the spawn
/// location a task's begin got from its spawn as its [`threadlab_trace::ARG_TASK_LOCATION`]
/// argument (`location_key`), after the arguments its run recorded (its name): where the run
/// recorded it before spawns carried it.
fn with_flows(
    events: &EventBuf,
    patches: &[(usize, Patch)],
    location_key: Option<NameId>,
) -> EventBuf {
    let mut out = EventBuf::default();
    let mut next = patches.iter().peekable();
    // The location argument waiting for the end of its task begin's arguments.
    let mut held: Option<Event> = None;
    for (i, mut e) in events.iter().enumerate() {
        if !matches!(e.kind, EventKind::Arg { .. }) {
            if let Some(arg) = held.take() {
                out.push(arg);
            }
        }
        while let Some(&&(at, patch)) = next.peek() {
            if at > i {
                break;
            }
            next.next();
            if at < i {
                continue;
            }
            match (&mut e.kind, patch) {
                (EventKind::Spawn { flow }, Patch::Out(id)) => *flow = id,
                (EventKind::LockReleased { handoff, .. }, Patch::Out(id)) => *handoff = Some(id),
                (EventKind::TaskBegin { flow, .. }, Patch::In(id, at)) => {
                    *flow = id;
                    if let (Some(key), Some(value)) = (location_key, at) {
                        let kind = EventKind::Arg { key, value };
                        held = Some(Event {
                            ts_ns: e.ts_ns,
                            kind,
                        });
                    }
                }
                (EventKind::LockAcquired { handoff, .. }, Patch::In(id, _)) => *handoff = id,
                _ => {}
            }
        }
        out.push(e);
    }
    if let Some(arg) = held {
        out.push(arg);
    }
    out
}

/// Pairs every flow's out with its in, in time order across threads; returns each thread's
/// patches, sorted by event index.
fn resolve_flows(pendings: &[Vec<(usize, u64, Pending)>]) -> Vec<Vec<(usize, Patch)>> {
    let mut all: Vec<(u64, bool, usize, usize, Pending)> = Vec::new();
    for (t, list) in pendings.iter().enumerate() {
        for &(i, ts, p) in list {
            let is_in = matches!(p, Pending::In(_));
            all.push((ts, is_in, t, i, p));
        }
    }
    // Time order; at equal times an out comes before an in.
    all.sort_by_key(|x| (x.0, x.1, x.2, x.3));
    let mut open: HashMap<FlowKey, (FlowId, Option<NameId>)> = HashMap::new();
    let mut next = 1;
    let mut patches: Vec<Vec<(usize, Patch)>> = vec![Vec::new(); pendings.len()];
    for (_, _, t, i, p) in all {
        let patch = match p {
            Pending::Out(key, at) => {
                let id = FlowId(next);
                next += 1;
                open.insert(key, (id, at));
                Patch::Out(id)
            }
            Pending::In(key) => match open.remove(&key) {
                Some((id, at)) => Patch::In(Some(id), at),
                None => Patch::In(None, None),
            },
        };
        patches[t].push((i, patch));
    }
    for list in &mut patches {
        list.sort_by_key(|p| p.0);
    }
    patches
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::clock::Anchor;
    use crate::trace::intern::raw_name;

    fn rec(ts: u64, kind: u32, a: u64, b: u64, c: u32) -> Record {
        Record { ts, kind, a, b, c }
    }

    fn thread(tid: u64, records: Vec<Record>) -> RawThread {
        RawThread {
            tid,
            name: format!("t{tid}"),
            records: Box::new(records.into_iter()),
            dropped: 0,
        }
    }

    fn conv() -> Converter {
        let a = Anchor { raw: 0, ns: 0 };
        Converter::new(a, a)
    }

    #[test]
    fn repairs_spans_cut_by_the_flight_recorder() {
        let (p, l) = raw_name("z");
        let t = thread(
            1,
            vec![
                rec(1, raw::ZONE_END, 0, 0, 0),      // begin dropped: dropped too
                rec(2, raw::LOCK_RELEASED, p, 7, l), // acquire dropped: dropped too
                rec(3, raw::TASK_BEGIN, 0, 0, 1),    // still open at the end: closed
                rec(4, raw::ZONE_BEGIN, p, 0, l),    // still open at the end: closed
                rec(5, raw::LOCK_ACQUIRED, p, 9, l), // still held: released at the end
                rec(6, raw::TASK_BEGIN, 0, 0, 99),   // unknown task kind: skipped
            ],
        );
        let trace = decode(vec![t], &conv(), 10);
        let kinds: Vec<_> = trace.threads()[0].events().iter().map(|e| e.kind).collect();
        let z = trace.name_id("z").unwrap();
        assert_eq!(
            kinds,
            vec![
                EventKind::TaskBegin {
                    kind: TaskKind::Spawn,
                    flow: None
                },
                EventKind::ZoneBegin { name: z },
                EventKind::LockAcquired {
                    lock: 9,
                    name: z,
                    handoff: None
                },
                EventKind::ZoneEnd,
                EventKind::TaskEnd,
                EventKind::LockReleased {
                    lock: 9,
                    name: z,
                    handoff: None
                },
            ]
        );
    }

    #[test]
    fn resolves_reused_spawn_ids_in_time_order() {
        // Raw id 5 is spawned twice (the job's address reused after it ran).
        let a = thread(
            1,
            vec![rec(10, raw::SPAWN, 5, 0, 0), rec(30, raw::SPAWN, 5, 0, 0)],
        );
        let b = thread(
            2,
            vec![
                rec(20, raw::TASK_BEGIN, 5, 1, 0),
                rec(21, raw::TASK_END, 0, 0, 0),
                rec(40, raw::TASK_BEGIN, 5, 1, 0),
                rec(41, raw::TASK_END, 0, 0, 0),
                rec(50, raw::TASK_BEGIN, 5, 1, 0), // no spawn pending: no flow
                rec(51, raw::TASK_END, 0, 0, 0),
            ],
        );
        let trace = decode(vec![a, b], &conv(), 100);
        let spawns: Vec<FlowId> = trace.threads()[0]
            .events()
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::Spawn { flow } => Some(flow),
                _ => None,
            })
            .collect();
        let runs: Vec<Option<FlowId>> = trace.threads()[1]
            .events()
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::TaskBegin { flow, .. } => Some(flow),
                _ => None,
            })
            .collect();
        assert_ne!(spawns[0], spawns[1]);
        assert_eq!(runs, vec![Some(spawns[0]), Some(spawns[1]), None]);
    }
}
