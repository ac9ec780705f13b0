//! Reads back the `.pftrace` files that `perfetto.rs` writes, so `Trace::load` (and so `doctor`,
//! `compare`, `view`) takes the file a user saved for ui.perfetto.dev.
//!
//! Algorithm: a protobuf wire-format walk (varints, length-delimited fields, fixed64; the wire
//! format as documented at protobuf.dev/programming-guides/encoding) over the `Trace` message's
//! `TracePacket`s. Track descriptors give each track its role: a thread track (by its
//! `ThreadDescriptor`), its OS counter tracks (thread uuid + 1..4), its lock-hold tracks
//! (`hold: NAME`), the global counter tracks. Track events are then replayed per packet
//! sequence, which is one thread's events in their recorded order: slice begins map back to
//! zones, tasks, spins, parks and lock waits by category and name, and each slice end to the
//! kind of the slice it closes (a stack); instants to spawns, steals, wake-ups and injector
//! pushes; counter pairs to the OS samples. What Perfetto has no field for (the duration, the
//! dropped and CPU counts, worker indexes, lock ids) comes from the debug annotations the
//! encoder adds for this purpose; the lock table comes from the process track's instants
//! (`decode_locks`, below). The arrows the encoder draws onto another thread's track
//! ("stolen from", "woken") are derived data and are skipped. A file without those annotations
//! (a foreign Perfetto trace) is refused with an error naming what is missing; every read is
//! bounds-checked and the encoder's `threadlab end` instant must be the last packet, so any
//! truncated file fails, with the byte offset.

use std::collections::HashMap;

use super::compact::Bad;
#[cfg(test)]
use super::event::PlotValue;
use super::event::{Event, EventKind, FlowId, NameId, TaskKind};
use super::lock_summary::{Durations, LockSummary, WaitHolder, WaitSite, DURATION_BUCKETS};
use super::perfetto::*;
use super::trace::{ThreadTrack, Trace};

/// Bytes [`looks_like_pftrace`] needs: the packet tag, its length (at most 5 varint bytes) and
/// the first packet's opening fields.
pub(crate) const SNIFF_BYTES: usize = 1 + 5 + 3;

/// Whether `prefix` (the file's first bytes, up to [`SNIFF_BYTES`]) opens a `.pftrace` that
/// threadlab wrote: field 1 (packet), length-delimited, its length, then the first packet's
/// `trusted_packet_sequence_id = 1` (field 10, varint) followed by its sequence flags' tag
/// (field 13). One byte alone is not enough: `0x0a` is also a newline, and a text file or an
/// endless stream of newlines must be refused before it is read whole.
pub(crate) fn looks_like_pftrace(prefix: &[u8]) -> bool {
    let Some((&PACKET_TAG, rest)) = prefix.split_first() else {
        return false;
    };
    // The packet's length: a varint of at most 5 bytes, then the packet's first fields.
    let Some(len_end) = rest.iter().take(5).position(|b| b & 0x80 == 0) else {
        return false;
    };
    rest[len_end + 1..].starts_with(&FIRST_FIELDS)
}

/// Field 1 (`packet`), wire type 2 (length-delimited).
const PACKET_TAG: u8 = (PACKET as u8) << 3 | 2;
/// The first packet's opening: `trusted_packet_sequence_id` (field 10, varint) = 1, then the
/// tag of `sequence_flags` (field 13, varint).
const FIRST_FIELDS: [u8; 3] = [(P_SEQUENCE_ID as u8) << 3, 1, (P_SEQUENCE_FLAGS as u8) << 3];

/// One protobuf field: its number and value.
enum Val<'a> {
    Int(u64),
    Bytes(&'a [u8]),
}

/// A cursor over one message's bytes; `base` is its offset in the file, for errors.
struct Wire<'a> {
    bytes: &'a [u8],
    pos: usize,
    base: usize,
}

impl<'a> Wire<'a> {
    fn new(bytes: &'a [u8], base: usize) -> Wire<'a> {
        Wire {
            bytes,
            pos: 0,
            base,
        }
    }
    fn bad<T>(&self, what: impl Into<String>) -> Result<T, Bad> {
        Err(((self.base + self.pos) as u64, what.into()))
    }
    fn varint(&mut self) -> Result<u64, Bad> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let Some(&b) = self.bytes.get(self.pos) else {
                return self.bad("file ends inside a varint");
            };
            self.pos += 1;
            v |= ((b & 0x7f) as u64) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        self.bad("a varint is longer than 10 bytes")
    }
    /// The next field, with the absolute offset of its value; `None` at the end.
    fn next(&mut self) -> Result<Option<(u32, usize, Val<'a>)>, Bad> {
        if self.pos == self.bytes.len() {
            return Ok(None);
        }
        let key = self.varint()?;
        let field = (key >> 3) as u32;
        let at = self.base + self.pos;
        let val = match key & 7 {
            0 => Val::Int(self.varint()?),
            1 => {
                let Some(b) = self.bytes.get(self.pos..self.pos + 8) else {
                    return self.bad("file ends inside a fixed64");
                };
                self.pos += 8;
                Val::Int(u64::from_le_bytes(b.try_into().expect("8 bytes")))
            }
            2 => {
                let n = self.varint()?;
                if n > (self.bytes.len() - self.pos) as u64 {
                    return self.bad(format!("a field of {n} bytes exceeds the bytes left"));
                }
                let b = &self.bytes[self.pos..self.pos + n as usize];
                self.pos += n as usize;
                Val::Bytes(b)
            }
            5 => {
                if self.bytes.len() - self.pos < 4 {
                    return self.bad("file ends inside a fixed32");
                }
                self.pos += 4;
                Val::Int(0)
            }
            w => return self.bad(format!("wire type {w} is not one threadlab writes")),
        };
        Ok(Some((field, at, val)))
    }
}

fn text(b: &[u8], at: usize) -> Result<String, Bad> {
    std::str::from_utf8(b)
        .map(str::to_owned)
        .map_err(|_| (at as u64, "a name is not UTF-8".to_owned()))
}

#[derive(Default)]
struct Desc {
    uuid: u64,
    parent: Option<u64>,
    name: String,
    thread: Option<(u64, String)>,
    counter: bool,
}

fn descriptor(b: &[u8], base: usize) -> Result<Desc, Bad> {
    let mut d = Desc::default();
    let mut w = Wire::new(b, base);
    while let Some((f, at, v)) = w.next()? {
        match (f, v) {
            (TD_UUID, Val::Int(u)) => d.uuid = u,
            (TD_PARENT, Val::Int(p)) => d.parent = Some(p),
            (TD_NAME, Val::Bytes(n)) => d.name = text(n, at)?,
            (TD_COUNTER, _) => d.counter = true,
            (TD_THREAD, Val::Bytes(t)) => {
                let (mut tid, mut name) = (0, String::new());
                let mut tw = Wire::new(t, at);
                while let Some((f, at, v)) = tw.next()? {
                    match (f, v) {
                        (THD_TID, Val::Int(x)) => tid = x,
                        (THD_NAME, Val::Bytes(n)) => name = text(n, at)?,
                        _ => {}
                    }
                }
                d.thread = Some((tid, name));
            }
            _ => {}
        }
    }
    Ok(d)
}

/// One decoded TrackEvent.
#[derive(Default)]
pub(super) struct Te {
    pub(super) at: usize,
    ts: u64,
    ty: u64,
    track: u64,
    pub(super) name: Option<String>,
    category: Option<String>,
    counter: u64,
    double: Option<f64>,
    flow: Option<u64>,
    terminating: Option<u64>,
    args: Vec<(String, u64)>,
    /// Text annotations: the trace's `EventKind::Arg`s, in order.
    pub(super) str_args: Vec<(String, String)>,
}

impl Te {
    pub(super) fn arg(&self, name: &str) -> Result<u64, Bad> {
        self.args
            .iter()
            .find(|(n, _)| n == name)
            .map(|a| a.1)
            .ok_or((
                self.at as u64,
                format!("the `{name}` annotation is missing"),
            ))
    }
}

fn track_event(b: &[u8], base: usize, ts: u64) -> Result<Te, Bad> {
    let mut e = Te {
        at: base,
        ts,
        ..Te::default()
    };
    let mut w = Wire::new(b, base);
    while let Some((f, at, v)) = w.next()? {
        match (f, v) {
            (TE_TYPE, Val::Int(t)) => e.ty = t,
            (TE_TRACK, Val::Int(t)) => e.track = t,
            (TE_NAME, Val::Bytes(n)) => e.name = Some(text(n, at)?),
            (TE_CATEGORY, Val::Bytes(n)) => e.category = Some(text(n, at)?),
            (TE_COUNTER, Val::Int(c)) => e.counter = c,
            (TE_DOUBLE_COUNTER, Val::Int(bits)) => e.double = Some(f64::from_bits(bits)),
            (TE_FLOW, Val::Int(c)) => e.flow = Some(c),
            (TE_TERMINATING_FLOW, Val::Int(c)) => e.terminating = Some(c),
            (TE_DEBUG, Val::Bytes(a)) => {
                let (mut name, mut val, mut string) = (String::new(), 0, None);
                let mut aw = Wire::new(a, at);
                while let Some((f, at, v)) = aw.next()? {
                    match (f, v) {
                        (DA_NAME, Val::Bytes(n)) => name = text(n, at)?,
                        (DA_UINT, Val::Int(x)) => val = x,
                        (DA_STRING, Val::Bytes(s)) => string = Some(text(s, at)?),
                        _ => {}
                    }
                }
                match string {
                    Some(s) => e.str_args.push((name, s)),
                    None => e.args.push((name, val)),
                }
            }
            _ => {}
        }
    }
    Ok(e)
}

/// What a track is to the decoder.
enum Role {
    Thread(usize),
    Os(usize, usize),
    Hold(usize, String),
    Counter(String),
    Plot(String),
    Other,
}

/// Interns names in first-use order.
#[derive(Default)]
pub(super) struct Names {
    list: Vec<String>,
    ids: HashMap<String, u32>,
}

impl Names {
    pub(super) fn id(&mut self, n: &str) -> NameId {
        if let Some(&i) = self.ids.get(n) {
            return NameId(i);
        }
        let i = self.list.len() as u32;
        self.list.push(n.to_owned());
        self.ids.insert(n.to_owned(), i);
        NameId(i)
    }
}

/// Decodes a `.pftrace` written by threadlab.
pub(crate) fn decode(bytes: &[u8]) -> Result<Trace, Bad> {
    // Pass 1: the packets, split into descriptors and events per sequence.
    let mut descs = Vec::new();
    let mut seqs: HashMap<u64, Vec<Te>> = HashMap::new();
    let mut w = Wire::new(bytes, 0);
    while let Some((f, at, v)) = w.next()? {
        let (PACKET, Val::Bytes(p)) = (f, v) else {
            return Err((at as u64, format!("field {f} is not a trace packet")));
        };
        let (mut ts, mut seq, mut ev, mut desc) = (0, 0, None, None);
        let mut pw = Wire::new(p, at);
        while let Some((f, at, v)) = pw.next()? {
            match (f, v) {
                (P_TIMESTAMP, Val::Int(t)) => ts = t,
                (P_SEQUENCE_ID, Val::Int(s)) => seq = s,
                (P_TRACK_EVENT, Val::Bytes(b)) => ev = Some((b, at)),
                (P_TRACK_DESCRIPTOR, Val::Bytes(b)) => desc = Some((b, at)),
                _ => {}
            }
        }
        if let Some((b, at)) = desc {
            descs.push(descriptor(b, at)?);
        }
        if let Some((b, at)) = ev {
            seqs.entry(seq).or_default().push(track_event(b, at, ts)?);
        }
    }
    // The end mark: a file cut at a packet boundary is still valid protobuf.
    let whole = seqs
        .get(&1)
        .and_then(|s| s.last())
        .is_some_and(|e| e.name.as_deref() == Some(END_NAME));
    if !whole
        && seqs
            .get(&1)
            .is_some_and(|s| s.iter().any(|e| e.name.as_deref() == Some(META_NAME)))
    {
        return Err((
            bytes.len() as u64,
            format!("no `{END_NAME}` instant at the end: the file is truncated"),
        ));
    }
    // The metadata instant.
    let meta = seqs
        .get(&1)
        .and_then(|s| s.iter().find(|e| e.name.as_deref() == Some(META_NAME)))
        .ok_or((
            0,
            format!(
                "no `{META_NAME}` instant: not a trace threadlab wrote (a foreign Perfetto trace \
                 lacks threadlab's duration, CPU count, worker and lock annotations)"
            ),
        ))?;
    let duration_ns = meta.arg("duration_ns")?;
    let dropped = meta.arg("dropped")?;
    let cpus = u32::try_from(meta.arg("cpus")?)
        .map_err(|_| (meta.at as u64, "bad CPU count".to_owned()))?;
    // Track roles.
    let mut roles: HashMap<u64, Role> = HashMap::new();
    let mut threads = Vec::new();
    for d in &descs {
        if let Some((tid, name)) = &d.thread {
            roles.insert(d.uuid, Role::Thread(threads.len()));
            threads.push(Track {
                tid: *tid,
                name: name.clone(),
                worker: None,
                events: Vec::new(),
            });
        }
    }
    for d in &descs {
        let parent = d.parent.and_then(|p| match roles.get(&p) {
            Some(Role::Thread(i)) => Some(*i),
            _ => None,
        });
        let role = match (parent, d.counter) {
            (Some(i), true) => {
                let base = d.parent.unwrap_or(0);
                let k = d.uuid.wrapping_sub(base).wrapping_sub(1) as usize;
                if k >= OS_COUNTERS.len() {
                    return Err((
                        0,
                        format!("counter track `{}` is not an OS counter", d.name),
                    ));
                }
                Role::Os(i, k)
            }
            (Some(i), false) => match d.name.strip_prefix("hold: ") {
                Some(n) => Role::Hold(i, n.to_owned()),
                None => Role::Other,
            },
            (None, true) => match d.name.strip_prefix(PLOT_PREFIX) {
                Some(n) => Role::Plot(n.to_owned()),
                None => Role::Counter(d.name.clone()),
            },
            (None, false) => continue,
        };
        roles.insert(d.uuid, role);
    }
    // Pass 2: replay each thread's sequence.
    let mut names = Names::default();
    for (i, t) in threads.iter_mut().enumerate() {
        let Some(evs) = seqs.get(&(i as u64 + 2)) else {
            continue;
        };
        let mut open: Vec<EventKind> = Vec::new();
        let mut os = [0u64; 4];
        let mut handoff = None;
        for e in evs {
            if let Some(allocs) = allocs_of(e, &roles, i) {
                t.events.push(Event {
                    ts_ns: e.ts,
                    kind: allocs,
                });
            }
            let kind = match roles.get(&e.track) {
                Some(Role::Thread(j)) if *j == i => thread_event(e, &mut open, &mut names, t)?,
                Some(Role::Os(j, k)) if *j == i => {
                    os[*k] = e.counter;
                    match k {
                        1 => Some(EventKind::OsSched {
                            on_cpu_ns: os[0],
                            runqueue_ns: os[1],
                        }),
                        3 => Some(EventKind::OsSwitches {
                            voluntary: os[2],
                            involuntary: os[3],
                        }),
                        _ => None,
                    }
                }
                Some(Role::Hold(j, n)) if *j == i => {
                    let name = names.id(n);
                    match e.ty {
                        SLICE_BEGIN => Some(EventKind::LockAcquired {
                            lock: e.arg("lock")?,
                            name,
                            handoff: e.terminating.map(FlowId),
                        }),
                        INSTANT => {
                            handoff = e.flow.map(FlowId);
                            None
                        }
                        SLICE_END => Some(EventKind::LockReleased {
                            lock: e.arg("lock")?,
                            name,
                            handoff: handoff.take(),
                        }),
                        _ => None,
                    }
                }
                Some(Role::Counter(n)) => Some(EventKind::Counter {
                    name: names.id(n),
                    value: e.counter as i64,
                }),
                Some(Role::Plot(n)) => Some(EventKind::Plot {
                    name: names.id(n),
                    value: super::event::PlotValue::new(e.double.unwrap_or(0.0)),
                }),
                // Arrow ends drawn on another thread's track.
                Some(Role::Thread(_)) => None,
                _ => {
                    return Err((
                        e.at as u64,
                        format!("an event on unknown track {}", e.track),
                    ))
                }
            };
            if let Some(kind) = kind {
                t.events.push(Event { ts_ns: e.ts, kind });
            }
            if matches!(roles.get(&e.track), Some(Role::Thread(j)) if *j == i) {
                for (key, value) in &e.str_args {
                    let (key, value) = (names.id(key), names.id(value));
                    let kind = EventKind::Arg { key, value };
                    t.events.push(Event { ts_ns: e.ts, kind });
                }
            }
        }
    }
    // The lock table, its names after the events' (which keep their first-use order).
    let locks = decode_locks(seqs.get(&1).map_or(&[][..], Vec::as_slice), &mut names)?;
    let mut trace = build(threads, names.list, duration_ns, dropped, cpus);
    trace.locks = locks;
    Ok(trace)
}

/// One event on the thread's own track; `open` is the stack of its open slices.
fn thread_event(
    e: &Te,
    open: &mut Vec<EventKind>,
    names: &mut Names,
    t: &mut Track,
) -> Result<Option<EventKind>, Bad> {
    use EventKind::*;
    let name = e.name.as_deref().unwrap_or("");
    let missing = |what: &str| (e.at as u64, format!("{what} `{name}` is not threadlab's"));
    Ok(match e.ty {
        SLICE_BEGIN => {
            let k = match (e.category.as_deref(), name) {
                (Some("zone"), n) => ZoneBegin { name: names.id(n) },
                (Some("task"), n) => {
                    let kind = n
                        .strip_prefix("task: ")
                        .and_then(|k| TaskKind::ALL.into_iter().find(|x| x.as_str() == k))
                        .ok_or_else(|| missing("task slice"))?;
                    TaskBegin {
                        kind,
                        flow: e.terminating.map(FlowId),
                    }
                }
                (Some("lock"), n) => LockWait {
                    lock: e.arg("lock")?,
                    name: names.id(n.strip_prefix("wait: ").ok_or_else(|| missing("lock"))?),
                },
                (None, "spinning") => SpinBegin,
                (None, "parked") => ParkBegin,
                _ => return Err(missing("slice")),
            };
            open.push(k);
            // A lock wait's end is implied by its `LockAcquired`.
            Some(k)
        }
        SLICE_END => match open.pop() {
            Some(ZoneBegin { .. }) => Some(ZoneEnd),
            Some(TaskBegin { .. }) => Some(TaskEnd),
            Some(SpinBegin) => Some(SpinEnd),
            Some(ParkBegin) => Some(ParkEnd),
            Some(_) => None,
            None => return Err((e.at as u64, "a slice ends that never began".to_owned())),
        },
        INSTANT => match (e.category.as_deref(), name) {
            (Some(FRAME_MARK_CATEGORY), n) => Some(FrameMark { name: names.id(n) }),
            (Some(FRAME_START_CATEGORY), n) => Some(FrameStart { name: names.id(n) }),
            (Some(MESSAGE_CATEGORY), n) => Some(Message {
                text: names.id(n),
                rgb: e.arg(COLOR_ARG).unwrap_or(0) as u32,
            }),
            (None, ZONE_COLOR_NAME) => Some(ZoneColor {
                rgb: e.arg(COLOR_ARG)? as u32,
            }),
            (_, WORKER_NAME) => {
                t.worker = Some(
                    u32::try_from(e.arg("worker")?)
                        .map_err(|_| (e.at as u64, "bad worker index".to_owned()))?,
                );
                None
            }
            (_, "spawn") => Some(Spawn {
                flow: FlowId(e.flow.ok_or_else(|| missing("flow-less spawn"))?),
            }),
            (_, "steal attempt") => Some(StealAttempt {
                victim: e.arg("victim")? as u32,
            }),
            (_, "steal") => Some(Steal {
                victim: e.arg("victim")? as u32,
            }),
            (_, "wake") => Some(Wake {
                woken: e.arg("woken")? as u32,
            }),
            (_, "injector push") => Some(InjectorPush),
            // Its argument follows, from the text annotation.
            (_, ARG_NAME) => None,
            _ => return Err(missing("instant")),
        },
        _ => return Err(missing("event type of")),
    })
}

/// The allocation counts a zone's or task's slice end carries, as the event that precedes it.
fn allocs_of(e: &Te, roles: &HashMap<u64, Role>, i: usize) -> Option<EventKind> {
    if e.ty != SLICE_END || !matches!(roles.get(&e.track), Some(Role::Thread(j)) if *j == i) {
        return None;
    }
    Some(EventKind::Allocs {
        count: e.arg(ALLOCS_ARG).ok()?,
        bytes: e.arg(ALLOC_BYTES_ARG).ok()?,
    })
}

/// One decoded thread, before it becomes a [`ThreadTrack`] in [`build`].
pub(super) struct Track {
    pub(super) tid: u64,
    pub(super) name: String,
    pub(super) worker: Option<u32>,
    pub(super) events: Vec<Event>,
}

/// The one place a decoded `.pftrace` becomes a [`Trace`] (and its [`ThreadTrack`]s).
pub(super) fn build(
    threads: Vec<Track>,
    names: Vec<String>,
    duration_ns: u64,
    dropped: u64,
    cpus: u32,
) -> Trace {
    let threads = threads
        .into_iter()
        .map(|t| ThreadTrack::from_events(t.tid, t.name, t.worker, t.events))
        .collect();
    Trace::from_parts(threads, names, duration_ns, dropped, cpus)
}

// The lock table, as `perfetto.rs` writes it (see the comment above its `encode_locks`).

/// A text annotation of `e`.
fn annotation<'a>(e: &'a Te, name: &str) -> Result<&'a str, Bad> {
    e.str_args
        .iter()
        .find(|(n, _)| n == name)
        .map(|a| a.1.as_str())
        .ok_or((e.at as u64, format!("the `{name}` annotation is missing")))
}

/// A histogram read back from its text.
fn hist_of(e: &Te, name: &str) -> Result<Vec<u64>, Bad> {
    let t = annotation(e, name)?;
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
fn decode_locks(events: &[Te], names: &mut Names) -> Result<Vec<LockSummary>, Bad> {
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
                    ..LockSummary::new(e.arg("lock")?, names.id(annotation(e, "name")?))
                });
            }
            Some(LOCK_SITE_NAME) => {
                let at = row(&mut locks)?;
                let site = WaitSite {
                    site: names.id(annotation(e, "site")?),
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

#[cfg(test)]
#[path = "pftrace_read_tests.rs"]
mod tests;
