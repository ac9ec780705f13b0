//! How a [`ThreadTrack`](super::ThreadTrack) keeps its events: encoded, a few bytes each, and
//! decoded on iteration ([`Events`]).
//!
//! Each event is the delta of its timestamp from the previous event's (so a dense track's
//! timestamps take one to three bytes, the trick Tracy uses for its zones: Bartosz Taudul,
//! "Tracy Profiler" manual, 2018–, on delta-encoded timestamps), then a kind code and the kind's
//! fields, all LEB128 varints (signed values zigzag-encoded). A zone begin and end take about
//! five bytes together instead of two 40-byte [`Event`]s. The same encoding is the body of a
//! thread in the native `.tltrace` file (`load.rs`), so loading a trace validates each thread's
//! bytes and keeps them as they are: a loaded trace takes about its file size in memory.
//!
//! Only this module writes an [`EventBuf`], so its bytes always decode; iteration stops at the
//! end of the bytes.

use super::event::{Event, EventKind, FlowId, NameId, PlotValue, TaskKind};

/// A decoding error: the byte offset and what was wrong there.
pub(crate) type Bad = (u64, String);

/// Where the codec reads bytes from: a slice (iteration) or a file being streamed (`load.rs`).
pub(crate) trait Source {
    /// The next byte, if any.
    fn byte(&mut self) -> Option<u8>;
    /// The offset of the next byte, for error messages.
    fn pos(&self) -> u64;

    /// A LEB128 varint.
    fn u(&mut self, what: &str) -> Result<u64, Bad> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let Some(b) = self.byte() else {
                return Err((self.pos(), format!("file ends inside {what}")));
            };
            v |= ((b & 0x7f) as u64) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err((self.pos(), format!("{what} is not a valid varint")))
    }

    /// A varint that fits in a `u32`.
    fn u32(&mut self, what: &str) -> Result<u32, Bad> {
        let at = self.pos();
        let v = self.u(what)?;
        u32::try_from(v).map_err(|_| (at, format!("{what} {v} is out of range")))
    }
}

/// Writes a varint.
pub(crate) fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_flow(out: &mut Vec<u8>, f: Option<FlowId>) {
    put(out, f.map_or(0, |f| f.0 + 1));
}

/// Writes one event's kind code and fields.
pub(crate) fn write_kind(w: &mut Vec<u8>, k: &EventKind) {
    use EventKind::*;
    let mut u = |v: u64| put(w, v);
    match *k {
        ZoneBegin { name } => {
            u(0);
            u(name.0 as u64);
        }
        ZoneEnd => u(1),
        TaskBegin { kind, flow } => {
            u(2);
            u(kind.code() as u64);
            put_flow(w, flow);
        }
        TaskEnd => u(3),
        Spawn { flow } => {
            u(4);
            u(flow.0);
        }
        StealAttempt { victim } => {
            u(5);
            u(victim as u64);
        }
        Steal { victim } => {
            u(6);
            u(victim as u64);
        }
        SpinBegin => u(7),
        SpinEnd => u(8),
        ParkBegin => u(9),
        ParkEnd => u(10),
        Wake { woken } => {
            u(11);
            u(woken as u64);
        }
        InjectorPush => u(12),
        Counter { name, value } => {
            u(13);
            u(name.0 as u64);
            u(((value << 1) ^ (value >> 63)) as u64);
        }
        LockWait { lock, name } => {
            u(14);
            u(lock);
            u(name.0 as u64);
        }
        LockAcquired {
            lock,
            name,
            handoff,
        }
        | LockReleased {
            lock,
            name,
            handoff,
        } => {
            u(if matches!(k, LockAcquired { .. }) {
                15
            } else {
                16
            });
            u(lock);
            u(name.0 as u64);
            put_flow(w, handoff);
        }
        OsSched {
            on_cpu_ns,
            runqueue_ns,
        } => {
            u(17);
            u(on_cpu_ns);
            u(runqueue_ns);
        }
        OsSwitches {
            voluntary,
            involuntary,
        } => {
            u(18);
            u(voluntary);
            u(involuntary);
        }
        FrameMark { name } => {
            u(19);
            u(name.0 as u64);
        }
        FrameStart { name } => {
            u(20);
            u(name.0 as u64);
        }
        Plot { name, value } => {
            u(21);
            u(name.0 as u64);
            u(value.0);
        }
        Message { text, rgb } => {
            u(22);
            u(text.0 as u64);
            u(rgb as u64);
        }
        ZoneColor { rgb } => {
            u(23);
            u(rgb as u64);
        }
        Allocs { count, bytes } => {
            u(24);
            u(count);
            u(bytes);
        }
        Arg { key, value } => {
            u(40);
            u(key.0 as u64);
            u(value.0 as u64);
        }
    }
}

fn name<S: Source>(r: &mut S, names: usize) -> Result<NameId, Bad> {
    let at = r.pos();
    let id = r.u32("a name id")?;
    if id as usize >= names {
        return Err((at, format!("name id {id} is not in the name table")));
    }
    Ok(NameId(id))
}

fn flow<S: Source>(r: &mut S) -> Result<Option<FlowId>, Bad> {
    Ok(r.u("a flow id")?.checked_sub(1).map(FlowId))
}

/// Reads one event's kind code and fields; name ids must be below `names`.
pub(crate) fn read_kind<S: Source>(r: &mut S, names: usize) -> Result<EventKind, Bad> {
    use EventKind::*;
    let at = r.pos();
    let code = r.u("an event kind")?;
    Ok(match code {
        0 => ZoneBegin {
            name: name(r, names)?,
        },
        1 => ZoneEnd,
        2 => {
            let k_at = r.pos();
            let k = r.u32("a task kind")?;
            let kind = TaskKind::from_code(k).ok_or((k_at, format!("task kind {k} is unknown")))?;
            TaskBegin {
                kind,
                flow: flow(r)?,
            }
        }
        3 => TaskEnd,
        4 => Spawn {
            flow: FlowId(r.u("a flow id")?),
        },
        5 => StealAttempt {
            victim: r.u32("a victim")?,
        },
        6 => Steal {
            victim: r.u32("a victim")?,
        },
        7 => SpinBegin,
        8 => SpinEnd,
        9 => ParkBegin,
        10 => ParkEnd,
        11 => Wake {
            woken: r.u32("a woken worker")?,
        },
        12 => InjectorPush,
        13 => {
            let name = name(r, names)?;
            let z = r.u("a counter value")?;
            Counter {
                name,
                value: (z >> 1) as i64 ^ -((z & 1) as i64),
            }
        }
        14 => LockWait {
            lock: r.u("a lock id")?,
            name: name(r, names)?,
        },
        15 | 16 => {
            let lock = r.u("a lock id")?;
            let name = name(r, names)?;
            let handoff = flow(r)?;
            if code == 15 {
                LockAcquired {
                    lock,
                    name,
                    handoff,
                }
            } else {
                LockReleased {
                    lock,
                    name,
                    handoff,
                }
            }
        }
        17 => OsSched {
            on_cpu_ns: r.u("an on-CPU time")?,
            runqueue_ns: r.u("a run-queue time")?,
        },
        18 => OsSwitches {
            voluntary: r.u("a switch count")?,
            involuntary: r.u("a switch count")?,
        },
        19 => FrameMark {
            name: name(r, names)?,
        },
        20 => FrameStart {
            name: name(r, names)?,
        },
        21 => Plot {
            name: name(r, names)?,
            value: PlotValue(r.u("a plot value")?),
        },
        22 => Message {
            text: name(r, names)?,
            rgb: r.u32("a colour")?,
        },
        23 => ZoneColor {
            rgb: r.u32("a colour")?,
        },
        24 => Allocs {
            count: r.u("an allocation count")?,
            bytes: r.u("a byte count")?,
        },
        40 => Arg {
            key: name(r, names)?,
            value: name(r, names)?,
        },
        _ => return Err((at, format!("event kind {code} is unknown"))),
    })
}

/// A thread's events, encoded (see the module doc); appended in time order. Public but hidden
/// for the runtime's decoder, which writes a track's events once, encoded, and hands them to
/// [`ThreadTrack::from_encoded`](crate::ThreadTrack::from_encoded); not part of the stable API.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventBuf {
    pub(crate) bytes: Vec<u8>,
    pub(crate) len: usize,
    /// The timestamp of the last event (the base of the next delta).
    pub(crate) last_ts: u64,
    /// The first event's timestamp, kept so `first()` needs no decoding.
    pub(crate) first_ts: u64,
}

impl EventBuf {
    /// Appends `e`; a timestamp before the previous event's is raised to it (tracks are in time
    /// order).
    pub fn push(&mut self, e: Event) {
        let ts = e.ts_ns.max(self.last_ts);
        if self.len == 0 {
            self.first_ts = ts;
        }
        put(&mut self.bytes, ts - self.last_ts);
        write_kind(&mut self.bytes, &e.kind);
        self.last_ts = ts;
        self.len += 1;
    }

    pub(crate) fn from_events(events: impl IntoIterator<Item = Event>) -> EventBuf {
        let mut b = EventBuf::default();
        for e in events {
            b.push(e);
        }
        b.bytes.shrink_to_fit();
        b
    }

    pub(crate) fn view(&self) -> Events<'_> {
        Events { buf: self }
    }

    /// The events, decoded as they are iterated.
    pub fn iter(&self) -> EventIter<'_> {
        self.view().iter()
    }

    /// How many events.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Gives back the spare capacity of the bytes (a finished track).
    pub fn shrink_to_fit(&mut self) {
        self.bytes.shrink_to_fit();
    }
}

impl<'a> IntoIterator for &'a EventBuf {
    type Item = Event;
    type IntoIter = EventIter<'a>;
    fn into_iter(self) -> EventIter<'a> {
        self.iter()
    }
}

impl FromIterator<Event> for EventBuf {
    fn from_iter<I: IntoIterator<Item = Event>>(events: I) -> EventBuf {
        EventBuf::from_events(events)
    }
}

/// The events of a [`ThreadTrack`](super::ThreadTrack), in time order, decoded on iteration;
/// each [`Event`] is yielded by value.
///
/// ```
/// use threadlab_trace::{Event, EventKind, TraceBuilder};
/// let mut b = TraceBuilder::new();
/// let t = b.thread(1, "main");
/// let z = b.name("z");
/// b.push(t, Event { ts_ns: 3, kind: EventKind::ZoneBegin { name: z } });
/// b.push(t, Event { ts_ns: 8, kind: EventKind::ZoneEnd });
/// let trace = b.build();
/// let events = trace.threads()[0].events();
/// assert_eq!(events.len(), 2);
/// assert!(events.iter().zip(events.iter().skip(1)).all(|(a, b)| a.ts_ns <= b.ts_ns));
/// for e in events {
///     let _: Event = e;
/// }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Events<'a> {
    buf: &'a EventBuf,
}

impl<'a> Events<'a> {
    /// The events, oldest first.
    pub fn iter(&self) -> EventIter<'a> {
        EventIter {
            bytes: &self.buf.bytes,
            pos: 0,
            ts: 0,
            left: self.buf.len,
        }
    }
    /// How many events.
    pub fn len(&self) -> usize {
        self.buf.len
    }
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.buf.len == 0
    }
    /// The first event.
    pub fn first(&self) -> Option<Event> {
        self.iter().next()
    }
    /// The last event (decodes the whole track).
    pub fn last(&self) -> Option<Event> {
        self.iter().last()
    }
    /// The first event's timestamp, without decoding.
    pub fn first_ts_ns(&self) -> Option<u64> {
        (self.buf.len > 0).then_some(self.buf.first_ts)
    }
    /// The last event's timestamp, without decoding.
    pub fn last_ts_ns(&self) -> Option<u64> {
        (self.buf.len > 0).then_some(self.buf.last_ts)
    }
    /// The events decoded into a vector (40 bytes each: for code that needs slices).
    pub fn to_vec(&self) -> Vec<Event> {
        self.iter().collect()
    }
}

impl<'a> IntoIterator for Events<'a> {
    type Item = Event;
    type IntoIter = EventIter<'a>;
    fn into_iter(self) -> EventIter<'a> {
        self.iter()
    }
}

impl<'a> IntoIterator for &Events<'a> {
    type Item = Event;
    type IntoIter = EventIter<'a>;
    fn into_iter(self) -> EventIter<'a> {
        self.iter()
    }
}

/// Decodes a track's events one at a time ([`Events::iter`]).
#[derive(Clone, Debug)]
pub struct EventIter<'a> {
    bytes: &'a [u8],
    pos: usize,
    ts: u64,
    left: usize,
}

impl Source for EventIter<'_> {
    #[inline]
    fn byte(&mut self) -> Option<u8> {
        let b = self.bytes.get(self.pos).copied();
        self.pos += 1;
        b
    }
    fn pos(&self) -> u64 {
        self.pos as u64
    }
}

impl Iterator for EventIter<'_> {
    type Item = Event;
    fn next(&mut self) -> Option<Event> {
        if self.left == 0 {
            return None;
        }
        // The bytes were written by `EventBuf::push` or validated by `load`, so they decode;
        // name ids were checked against the name table when written.
        let delta = self.u("a timestamp").ok()?;
        let kind = read_kind(self, usize::MAX).ok()?;
        self.left -= 1;
        self.ts += delta;
        Some(Event {
            ts_ns: self.ts,
            kind,
        })
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for EventIter<'_> {}
