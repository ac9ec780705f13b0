//! threadlab's native trace format (`.tltrace`): written by `Trace::save`, read back by
//! `Trace::load` without loss, for `doctor` and `compare`.
//!
//! Layout: the magic `TLTRACE2`; the duration, dropped count and CPU count; the name table; then per thread
//! its tid, name, worker index (0 = none, else index + 1) and events, each as the delta of its
//! timestamp from the previous one, a kind byte and the kind's fields; all integers are LEB128
//! varints (signed ones zigzag-encoded), strings are a length and UTF-8 bytes; the file ends
//! with `TLEND`. Every count is checked against the bytes left, so no corrupt count allocates
//! much, and any truncation fails (at the latest at the missing end mark) with the byte offset.

use super::event::{Event, EventKind, FlowId, NameId, TaskKind, ThreadTrack, Trace};

/// Version 2 added the CPU count (version 1 was never released).
const MAGIC: &[u8] = b"TLTRACE2";
const END: &[u8] = b"TLEND";

struct W(Vec<u8>);

impl W {
    fn u(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }
    fn s(&mut self, s: &str) {
        self.u(s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
    }
    fn flow(&mut self, f: Option<FlowId>) {
        self.u(f.map_or(0, |f| f.0 + 1));
    }
}

/// Encodes a trace in the native format.
pub(crate) fn encode(trace: &Trace) -> Vec<u8> {
    let mut w = W(MAGIC.to_vec());
    w.u(trace.duration_ns);
    w.u(trace.dropped);
    w.u(trace.cpus as u64);
    w.u(trace.names.len() as u64);
    for n in &trace.names {
        w.s(n);
    }
    w.u(trace.threads.len() as u64);
    for t in &trace.threads {
        w.u(t.tid);
        w.s(&t.name);
        w.u(t.worker.map_or(0, |i| i as u64 + 1));
        w.u(t.events.len() as u64);
        let mut last = 0;
        for e in &t.events {
            w.u(e.ts_ns - last);
            last = e.ts_ns;
            write_kind(&mut w, &e.kind);
        }
    }
    w.0.extend_from_slice(END);
    w.0
}

fn write_kind(w: &mut W, k: &EventKind) {
    use EventKind::*;
    match *k {
        ZoneBegin { name } => {
            w.u(0);
            w.u(name.0 as u64);
        }
        ZoneEnd => w.u(1),
        TaskBegin { kind, flow } => {
            w.u(2);
            w.u(kind.code() as u64);
            w.flow(flow);
        }
        TaskEnd => w.u(3),
        Spawn { flow } => {
            w.u(4);
            w.u(flow.0);
        }
        StealAttempt { victim } => {
            w.u(5);
            w.u(victim as u64);
        }
        Steal { victim } => {
            w.u(6);
            w.u(victim as u64);
        }
        SpinBegin => w.u(7),
        SpinEnd => w.u(8),
        ParkBegin => w.u(9),
        ParkEnd => w.u(10),
        Wake { woken } => {
            w.u(11);
            w.u(woken as u64);
        }
        InjectorPush => w.u(12),
        Counter { name, value } => {
            w.u(13);
            w.u(name.0 as u64);
            w.u(((value << 1) ^ (value >> 63)) as u64);
        }
        LockWait { lock, name } => {
            w.u(14);
            w.u(lock);
            w.u(name.0 as u64);
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
            w.u(if matches!(k, LockAcquired { .. }) {
                15
            } else {
                16
            });
            w.u(lock);
            w.u(name.0 as u64);
            w.flow(handoff);
        }
        OsSched {
            on_cpu_ns,
            runqueue_ns,
        } => {
            w.u(17);
            w.u(on_cpu_ns);
            w.u(runqueue_ns);
        }
        OsSwitches {
            voluntary,
            involuntary,
        } => {
            w.u(18);
            w.u(voluntary);
            w.u(involuntary);
        }
    }
}

/// A decoding error: the byte offset and what was wrong there.
pub(crate) type Bad = (u64, String);

struct R<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl R<'_> {
    fn bad<T>(&self, what: impl Into<String>) -> Result<T, Bad> {
        Err((self.pos as u64, what.into()))
    }
    fn u(&mut self, what: &str) -> Result<u64, Bad> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let Some(&b) = self.bytes.get(self.pos) else {
                return self.bad(format!("file ends inside {what}"));
            };
            self.pos += 1;
            v |= ((b & 0x7f) as u64) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        self.bad(format!("{what} is not a valid varint"))
    }
    fn u32(&mut self, what: &str) -> Result<u32, Bad> {
        let at = self.pos;
        let v = self.u(what)?;
        u32::try_from(v).map_err(|_| (at as u64, format!("{what} {v} is out of range")))
    }
    /// A count of items of at least one byte each, checked against the bytes left.
    fn count(&mut self, what: &str) -> Result<usize, Bad> {
        let at = self.pos;
        let n = self.u(what)?;
        if n > (self.bytes.len() - self.pos) as u64 {
            return Err((at as u64, format!("{what} {n} exceeds the bytes left")));
        }
        Ok(n as usize)
    }
    fn s(&mut self, what: &str) -> Result<String, Bad> {
        let n = self.count(what)?;
        let at = self.pos;
        let text = std::str::from_utf8(&self.bytes[at..at + n])
            .map_err(|_| (at as u64, format!("{what} is not UTF-8")))?;
        self.pos += n;
        Ok(text.to_owned())
    }
    fn name(&mut self, names: usize) -> Result<NameId, Bad> {
        let at = self.pos;
        let id = self.u32("a name id")?;
        if id as usize >= names {
            return Err((at as u64, format!("name id {id} is not in the name table")));
        }
        Ok(NameId(id))
    }
    fn flow(&mut self) -> Result<Option<FlowId>, Bad> {
        Ok(self.u("a flow id")?.checked_sub(1).map(FlowId))
    }
    fn exact(&mut self, want: &[u8], what: &str) -> Result<(), Bad> {
        if self.bytes.len() - self.pos < want.len() {
            return self.bad(format!("file ends before {what}"));
        }
        if &self.bytes[self.pos..self.pos + want.len()] != want {
            return self.bad(format!("{what} not found"));
        }
        self.pos += want.len();
        Ok(())
    }
}

/// Decodes the native format.
pub(crate) fn decode(bytes: &[u8]) -> Result<Trace, Bad> {
    let mut r = R { bytes, pos: 0 };
    r.exact(MAGIC, "the TLTRACE2 magic")?;
    let duration_ns = r.u("the duration")?;
    let dropped = r.u("the dropped count")?;
    let cpus = r.u32("the CPU count")?;
    let n_names = r.count("the name count")?;
    let mut names = Vec::with_capacity(n_names);
    for _ in 0..n_names {
        names.push(r.s("a name")?);
    }
    let n_threads = r.count("the thread count")?;
    let mut threads = Vec::with_capacity(n_threads);
    for _ in 0..n_threads {
        let tid = r.u("a thread id")?;
        let name = r.s("a thread name")?;
        let worker = r.u32("a worker index")?.checked_sub(1);
        let n_events = r.count("the event count")?;
        let mut events = Vec::with_capacity(n_events);
        let mut ts_ns: u64 = 0;
        for _ in 0..n_events {
            let at = r.pos;
            let delta = r.u("a timestamp")?;
            ts_ns = ts_ns
                .checked_add(delta)
                .ok_or((at as u64, "timestamp overflows".to_owned()))?;
            let kind = read_kind(&mut r, names.len())?;
            events.push(Event { ts_ns, kind });
        }
        threads.push(ThreadTrack {
            tid,
            name,
            worker,
            events,
        });
    }
    r.exact(END, "the TLEND end mark")?;
    if r.pos != bytes.len() {
        return r.bad("unexpected bytes after the end mark");
    }
    Ok(Trace {
        threads,
        names,
        duration_ns,
        dropped,
        cpus,
    })
}

fn read_kind(r: &mut R<'_>, names: usize) -> Result<EventKind, Bad> {
    use EventKind::*;
    let at = r.pos;
    let code = r.u("an event kind")?;
    Ok(match code {
        0 => ZoneBegin {
            name: r.name(names)?,
        },
        1 => ZoneEnd,
        2 => {
            let k_at = r.pos;
            let k = r.u32("a task kind")?;
            let kind =
                TaskKind::from_code(k).ok_or((k_at as u64, format!("task kind {k} is unknown")))?;
            TaskBegin {
                kind,
                flow: r.flow()?,
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
            let name = r.name(names)?;
            let z = r.u("a counter value")?;
            Counter {
                name,
                value: (z >> 1) as i64 ^ -((z & 1) as i64),
            }
        }
        14 => LockWait {
            lock: r.u("a lock id")?,
            name: r.name(names)?,
        },
        15 | 16 => {
            let lock = r.u("a lock id")?;
            let name = r.name(names)?;
            let handoff = r.flow()?;
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
        _ => return Err((at as u64, format!("event kind {code} is unknown"))),
    })
}
