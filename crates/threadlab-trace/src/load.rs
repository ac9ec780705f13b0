//! threadlab's native trace format (`.tltrace`): written by `Trace::save`, read back by
//! `Trace::load` without loss, for `doctor` and `compare`.
//!
//! Layout: the magic `TLTRACE3`; the duration, dropped count and CPU count; the name table; then
//! per thread its tid, name, worker index (0 = none, else index + 1), event count and events,
//! each encoded as in memory (`compact.rs`: the delta of its timestamp from the previous one, a
//! kind code and the kind's fields); then the lock table (`locks.rs`): its row count and per
//! row the lock id, its name id, flags (1: the acquisitions are known, 2: the holds are
//! sampled), the acquisitions if known, the waits and the holds (each a count, total, maximum,
//! and the histogram's length and buckets), the call sites (count, then name id, waits and
//! total each) and the holders (count, then tid, waits and total each); all integers are LEB128
//! varints (signed ones zigzag-encoded), strings are a length and UTF-8 bytes; the file ends
//! with `TLEND`. A `TLTRACE2` file (before the lock table) is read too: it ends after its
//! threads.
//!
//! Loading streams the file through a small buffer: the magic is checked on the first eight
//! bytes (a 1 GB file that is not a trace fails at once), each event is validated as it is read
//! and its bytes are kept as they are, so a loaded trace takes about its file size in memory,
//! and the file is never held whole. Every count is checked against the bytes left in the file,
//! so no corrupt count allocates much, and any truncation fails (at the latest at the missing
//! end mark) with the byte offset.
//!
//! A count is checked against the bytes left at the item's smallest encoding (a name: its
//! one-byte length; a thread: four one-byte varints; an event: a delta and a kind code) and,
//! beyond [`RESERVE_CAP`] items, at its size in memory (a `String`, a `ThreadTrack`; events are
//! kept as their bytes); no vector is reserved from a count beyond `RESERVE_CAP` items, so
//! memory grows with the items actually read, never with what a count claims (a sparse 2 GiB
//! file with a name count just under its size would otherwise ask for 24 bytes per claimed name
//! at once). Names are interned when recorded, so a repeated name is refused: a run of zero
//! bytes is not a table of a billion empty names; nor is it a lock table of a million lock 0s
//! (a lock id is repeated nowhere either).

use std::io::{BufRead, BufReader, Read};

use super::compact::{put, read_kind, Bad, EventBuf, Source};
use super::event::NameId;
use super::lock_summary::{Durations, LockSummary, WaitHolder, WaitSite, DURATION_BUCKETS};
use super::trace::{ThreadTrack, Trace};

/// Version 3 added the lock table; version 2, the CPU count (version 1 was never released).
const MAGIC: &[u8] = b"TLTRACE3";
/// The previous version's magic, still read.
const MAGIC_V2: &[u8] = b"TLTRACE2";
const END: &[u8] = b"TLEND";

/// Most items reserved up front from a count read in the file; beyond, vectors grow as read.
pub(crate) const RESERVE_CAP: usize = 4096;

/// Smallest encoding of a thread: its tid, name length, worker index and event count.
const MIN_THREAD_BYTES: u64 = 4;
/// Smallest encoding of an event: its timestamp delta and kind code.
const MIN_EVENT_BYTES: u64 = 2;
/// Smallest encoding of a lock table row: id, name, flags, two empty duration sets (count,
/// total, maximum, histogram length), and the site and holder counts.
const MIN_LOCK_BYTES: u64 = 3 + 4 + 4 + 2;
/// Smallest encoding of a call site's or holder's row: three varints.
const MIN_KEYED_BYTES: u64 = 3;
const LOCK_ACQUISITIONS_KNOWN: u64 = 1;
const LOCK_HOLDS_SAMPLED: u64 = 2;

struct W(Vec<u8>);

impl W {
    fn u(&mut self, v: u64) {
        put(&mut self.0, v);
    }
    fn s(&mut self, s: &str) {
        self.u(s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
    }
    /// A duration set: its histogram without the empty buckets past the last used one.
    fn durations(&mut self, d: &Durations) {
        self.u(d.count);
        self.u(d.total_ns);
        self.u(d.max_ns);
        let used = d.hist.iter().rposition(|&n| n > 0).map_or(0, |i| i + 1);
        self.u(used as u64);
        for &n in &d.hist[..used] {
            self.u(n);
        }
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
        // The in-memory encoding is the file's.
        w.0.extend_from_slice(&t.events.bytes);
    }
    w.u(trace.locks.len() as u64);
    for l in &trace.locks {
        w.u(l.lock);
        w.u(l.name.0 as u64);
        let flags = if l.acquisitions.is_some() {
            LOCK_ACQUISITIONS_KNOWN
        } else {
            0
        } | if l.holds_sampled {
            LOCK_HOLDS_SAMPLED
        } else {
            0
        };
        w.u(flags);
        if let Some(a) = l.acquisitions {
            w.u(a);
        }
        w.durations(&l.waits);
        w.durations(&l.holds);
        w.u(l.sites.len() as u64);
        for s in &l.sites {
            w.u(s.site.0 as u64);
            w.u(s.waits);
            w.u(s.wait_ns);
        }
        w.u(l.holders.len() as u64);
        for h in &l.holders {
            w.u(h.tid);
            w.u(h.waits);
            w.u(h.wait_ns);
        }
    }
    w.0.extend_from_slice(END);
    w.0
}

/// Reads the file: a buffered reader that counts its offset and can keep the bytes it reads.
struct R<I> {
    input: I,
    pos: u64,
    /// File size, for the counts' checks.
    size: u64,
    /// Set while an event is read: its bytes are appended here.
    keep: Option<Vec<u8>>,
    /// The first I/O error, reported as the file ending there.
    io_error: Option<std::io::Error>,
}

impl<I: BufRead> Source for R<I> {
    fn byte(&mut self) -> Option<u8> {
        let b = match self.input.fill_buf() {
            Ok(buf) => *buf.first()?,
            Err(e) => {
                self.io_error.get_or_insert(e);
                return None;
            }
        };
        self.input.consume(1);
        self.pos += 1;
        if let Some(k) = &mut self.keep {
            k.push(b);
        }
        Some(b)
    }
    fn pos(&self) -> u64 {
        self.pos
    }
}

impl<I: BufRead> R<I> {
    fn bad<T>(&self, what: impl Into<String>) -> Result<T, Bad> {
        let mut what = what.into();
        if let Some(e) = &self.io_error {
            what = format!("{what} (read error: {e})");
        }
        Err((self.pos, what))
    }
    /// A count of items of at least `min_bytes` bytes each in the file and `mem_bytes` each in
    /// memory, checked against the bytes left: each item must fit at its smallest encoding and,
    /// beyond [`RESERVE_CAP`] items, at its size in memory, so the items a count admits never
    /// take more memory than the file has bytes left (plus a small allowance).
    fn count(&mut self, what: &str, min_bytes: u64, mem_bytes: usize) -> Result<usize, Bad> {
        let at = self.pos;
        let n = self.u(what)?;
        let left = self.size.saturating_sub(self.pos);
        let fits = |each: u64| matches!(n.checked_mul(each), Some(need) if need <= left);
        let small = n <= RESERVE_CAP as u64;
        if !fits(min_bytes) || !(small || fits(mem_bytes as u64)) {
            return Err((at, format!("{what} {n} exceeds the bytes left")));
        }
        usize::try_from(n).map_err(|_| (at, format!("{what} {n} exceeds the bytes left")))
    }
    fn s(&mut self, what: &str) -> Result<String, Bad> {
        let n = self.count(what, 1, 1)?;
        let at = self.pos;
        let mut bytes = Vec::with_capacity(n.min(RESERVE_CAP));
        for _ in 0..n {
            match self.byte() {
                Some(b) => bytes.push(b),
                None => return self.bad(format!("file ends inside {what}")),
            }
        }
        String::from_utf8(bytes).map_err(|_| (at, format!("{what} is not UTF-8")))
    }
    /// A name id, checked against the name table's length.
    fn name(&mut self, what: &str, names: usize) -> Result<NameId, Bad> {
        let at = self.pos;
        let id = self.u32(what)?;
        if id as usize >= names {
            return Err((at, format!("{what} {id} is not in the name table")));
        }
        Ok(NameId(id))
    }
    /// A duration set; its histogram has at most [`DURATION_BUCKETS`] buckets.
    fn durations(&mut self, what: &str) -> Result<Durations, Bad> {
        let count = self.u(what)?;
        let total_ns = self.u(what)?;
        let max_ns = self.u(what)?;
        let at = self.pos;
        let n = self.count("a histogram's length", 1, 8)?;
        if n > DURATION_BUCKETS {
            return Err((
                at,
                format!("a histogram of {n} buckets (at most {DURATION_BUCKETS})"),
            ));
        }
        let mut hist = Vec::with_capacity(n);
        for _ in 0..n {
            hist.push(self.u("a histogram bucket")?);
        }
        Ok(Durations {
            count,
            total_ns,
            max_ns,
            hist,
        })
    }
    /// The lock table (version 3 on), its name ids checked against `names` entries.
    fn lock_table(&mut self, names: usize) -> Result<Vec<LockSummary>, Bad> {
        let n = self.count(
            "the lock count",
            MIN_LOCK_BYTES,
            std::mem::size_of::<LockSummary>(),
        )?;
        let mut locks = Vec::with_capacity(n.min(RESERVE_CAP));
        let mut ids = std::collections::HashSet::with_capacity(n.min(RESERVE_CAP));
        for _ in 0..n {
            let at = self.pos;
            let lock = self.u("a lock id")?;
            // A lock has one row: a run of zero bytes is not a table of a million lock 0s.
            if !ids.insert(lock) {
                return Err((at, format!("lock {lock} is repeated in the lock table")));
            }
            let name = self.name("a lock's name id", names)?;
            let at = self.pos;
            let flags = self.u("a lock's flags")?;
            if flags & !(LOCK_ACQUISITIONS_KNOWN | LOCK_HOLDS_SAMPLED) != 0 {
                return Err((at, format!("lock flags {flags} are unknown")));
            }
            let acquisitions = if flags & LOCK_ACQUISITIONS_KNOWN != 0 {
                Some(self.u("a lock's acquisitions")?)
            } else {
                None
            };
            let waits = self.durations("a lock's waits")?;
            let holds = self.durations("a lock's holds")?;
            let n_sites = self.count(
                "the call site count",
                MIN_KEYED_BYTES,
                std::mem::size_of::<WaitSite>(),
            )?;
            let mut sites = Vec::with_capacity(n_sites.min(RESERVE_CAP));
            for _ in 0..n_sites {
                sites.push(WaitSite {
                    site: self.name("a call site's name id", names)?,
                    waits: self.u("a call site's waits")?,
                    wait_ns: self.u("a call site's wait time")?,
                });
            }
            let n_holders = self.count(
                "the holder count",
                MIN_KEYED_BYTES,
                std::mem::size_of::<WaitHolder>(),
            )?;
            let mut holders = Vec::with_capacity(n_holders.min(RESERVE_CAP));
            for _ in 0..n_holders {
                holders.push(WaitHolder {
                    tid: self.u("a holder's thread id")?,
                    waits: self.u("a holder's waits")?,
                    wait_ns: self.u("a holder's wait time")?,
                });
            }
            locks.push(LockSummary {
                lock,
                name,
                acquisitions,
                waits,
                holds,
                holds_sampled: flags & LOCK_HOLDS_SAMPLED != 0,
                sites,
                holders,
            });
        }
        Ok(locks)
    }
    /// The magic: this version's or the previous one's (`true` for this version).
    fn magic(&mut self) -> Result<bool, Bad> {
        let mut got = Vec::with_capacity(MAGIC.len());
        for (i, &w) in MAGIC.iter().enumerate() {
            match self.byte() {
                // The versions differ in their last byte only.
                Some(b) if b == w || (i + 1 == MAGIC.len() && b == MAGIC_V2[i]) => got.push(b),
                Some(_) => return Err((0, "the TLTRACE3 (or TLTRACE2) magic not found".into())),
                None => return self.bad("file ends before the TLTRACE3 magic"),
            }
        }
        Ok(got == MAGIC)
    }
    fn exact(&mut self, want: &[u8], what: &str) -> Result<(), Bad> {
        let at = self.pos;
        for &w in want {
            match self.byte() {
                Some(b) if b == w => {}
                Some(_) => return Err((at, format!("{what} not found"))),
                None => return self.bad(format!("file ends before {what}")),
            }
        }
        Ok(())
    }
}

/// Decodes the native format from a byte slice (tests, fuzzing).
#[cfg(test)]
pub(crate) fn decode(bytes: &[u8]) -> Result<Trace, Bad> {
    read(bytes, bytes.len() as u64)
}

/// Decodes the native format from `input`, a file of `size` bytes, streaming.
pub(crate) fn read(input: impl Read, size: u64) -> Result<Trace, Bad> {
    let mut r = R {
        input: BufReader::with_capacity(64 * 1024, input),
        pos: 0,
        size,
        keep: None,
        io_error: None,
    };
    let current = r.magic()?;
    let duration_ns = r.u("the duration")?;
    let dropped = r.u("the dropped count")?;
    let cpus = r.u32("the CPU count")?;
    // A name takes at least its length byte. Names are interned, so each is distinct: a
    // repeated one is refused (a run of zero bytes is not a table of empty names).
    let n_names = r.count("the name count", 1, std::mem::size_of::<String>())?;
    let mut names: Vec<String> = Vec::with_capacity(n_names.min(RESERVE_CAP));
    let mut hashes = std::collections::HashSet::with_capacity(n_names.min(RESERVE_CAP));
    for _ in 0..n_names {
        let at = r.pos;
        let name = r.s("a name")?;
        let hash = {
            use std::hash::{BuildHasher, BuildHasherDefault};
            BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default()
                .hash_one(&name)
        };
        // A hash seen before is checked against the names (a collision is not a repeat).
        if !hashes.insert(hash) && names.contains(&name) {
            return Err((at, format!("the name `{name}` is repeated")));
        }
        names.push(name);
    }
    let n_threads = r.count(
        "the thread count",
        MIN_THREAD_BYTES,
        std::mem::size_of::<ThreadTrack>(),
    )?;
    let mut threads = Vec::with_capacity(n_threads.min(RESERVE_CAP));
    for _ in 0..n_threads {
        let tid = r.u("a thread id")?;
        let name = r.s("a thread name")?;
        let worker = r.u32("a worker index")?.checked_sub(1);
        let n_events = r.count("the event count", MIN_EVENT_BYTES, 1)?;
        let mut events = EventBuf::default();
        r.keep = Some(Vec::new());
        for i in 0..n_events {
            let at = r.pos;
            let delta = r.u("a timestamp")?;
            let ts_ns = events
                .last_ts
                .checked_add(delta)
                .ok_or((at, "timestamp overflows".to_owned()))?;
            read_kind(&mut r, names.len())?;
            if i == 0 {
                events.first_ts = ts_ns;
            }
            events.last_ts = ts_ns;
        }
        events.bytes = r.keep.take().unwrap_or_default();
        events.bytes.shrink_to_fit();
        events.len = n_events;
        threads.push(ThreadTrack {
            tid,
            name,
            worker,
            events,
        });
    }
    let locks = if current {
        r.lock_table(names.len())?
    } else {
        Vec::new()
    };
    r.exact(END, "the TLEND end mark")?;
    if r.byte().is_some() {
        return Err((r.pos - 1, "unexpected bytes after the end mark".to_owned()));
    }
    if r.io_error.is_some() {
        return r.bad("the file could not be read to its end");
    }
    Ok(Trace {
        threads,
        names,
        duration_ns,
        dropped,
        cpus,
        locks,
    })
}
