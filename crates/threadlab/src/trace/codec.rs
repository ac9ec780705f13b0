//! The compact form of a record in a thread's buffer: what the hot path writes and the
//! collector reads back.
//!
//! A [`Record`] is 32 bytes in memory, but most of its fields are small or repeat the record
//! before: a zone's end carries nothing but its time, consecutive timestamps are a few hundred
//! ticks apart, and a loop that opens the same zone again names the same string. So the buffer
//! holds each record as
//!
//! ```text
//! header  1 byte    kind (6 bits) | a present << 6 | b present << 7
//! ts      varint    ticks since the thread's previous record in this chunk (its first: absolute)
//! c       varint
//! a       varint    when a is not zero: zigzag of (a − the last non-zero a before it)
//! b       varint    when not zero
//! ```
//!
//! with LEB128 varints (7 bits a byte, low bits first, as in protobuf and DWARF). A zone's begin
//! then takes 3–5 bytes and its end 2–4, against 64 for the pair before; Tracy's client
//! delta-encodes its timestamps the same way before it sends them (Bartosz Taudul, "Tracy
//! Profiler" manual, "Data compression"). The two records whose fields carry payload instead of
//! times or names (`TEXT`: text in `ts`, `a`, `b`; `ARG_BYTES`: bytes in `a`, `b`) write those
//! fields as they are and leave the deltas' base alone.
//!
//! Every chunk starts from a zero base, so each chunk decodes on its own: the flight recorder
//! drops whole chunks from the front, and a snapshot reads the chunks while their owner writes.

use super::raw;
use super::raw::Record;

/// The most bytes one record takes: the header, two 10-byte varints and a 5-byte one for the
/// timestamp and `a`/`b`, and `c`.
pub(crate) const MAX_ENCODED: usize = 1 + 10 + 5 + 10 + 10;

const A_PRESENT: u8 = 1 << 6;
const B_PRESENT: u8 = 1 << 7;
const KIND_MASK: u8 = 0x3f;

/// What the next record's deltas are taken against: the previous record's timestamp and `a`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Base {
    ts: u64,
    a: u64,
}

impl Base {
    /// The base at the start of every chunk.
    pub(crate) const ZERO: Base = Base { ts: 0, a: 0 };

    /// The previous record's timestamp (0 at the start of a chunk).
    pub(crate) fn ts(&self) -> u64 {
        self.ts
    }
}

/// Records whose `ts` is payload (not a time): written raw, and not a base for the next.
#[inline(always)]
fn ts_is_payload(kind: u32) -> bool {
    kind == raw::TEXT
}

/// Records whose `a` is payload: written raw, and not a base for the next.
#[inline(always)]
fn a_is_payload(kind: u32) -> bool {
    kind == raw::TEXT || kind == raw::ARG_BYTES
}

/// Writes `v` as a varint at `dst`; returns its length.
///
/// # Safety
/// `dst` is valid for 10 bytes of writes.
#[inline(always)]
unsafe fn put(dst: *mut u8, mut v: u64) -> usize {
    let mut n = 0;
    while v >= 0x80 {
        // SAFETY: at most 9 bytes are written in this loop (a u64 has 64 bits, 7 a byte), and the
        // caller gave 10.
        unsafe { dst.add(n).write(v as u8 | 0x80) };
        v >>= 7;
        n += 1;
    }
    // SAFETY: `n` ≤ 9, within the 10 bytes.
    unsafe { dst.add(n).write(v as u8) };
    n + 1
}

/// The varint of `v` < 2^14 as the low bytes of a word, and its length (1 or 2).
#[inline(always)]
fn short_varint(v: u64) -> (u64, usize) {
    if v < 0x80 {
        (v, 1)
    } else {
        (v & 0x7f | 0x80 | (v >> 7) << 8, 2)
    }
}

#[inline(always)]
fn zigzag(d: u64) -> u64 {
    let d = d as i64;
    ((d << 1) ^ (d >> 63)) as u64
}

#[inline(always)]
fn unzigzag(z: u64) -> u64 {
    ((z >> 1) as i64 ^ -((z & 1) as i64)) as u64
}

/// What `rec` is written as against `base`: its header, its time field and its `a` field (the
/// deltas, or the payload as it is), and the base for the record after it.
#[inline(always)]
fn fields(rec: &Record, base: Base) -> (u8, u64, u64, Base) {
    debug_assert!(rec.kind <= KIND_MASK as u32, "codec: kind past 63");
    let mut next = base;
    let ts = if ts_is_payload(rec.kind) {
        rec.ts
    } else {
        next.ts = rec.ts;
        rec.ts.wrapping_sub(base.ts)
    };
    let a = if a_is_payload(rec.kind) || rec.a == 0 {
        rec.a
    } else {
        next.a = rec.a;
        zigzag(rec.a.wrapping_sub(base.a))
    };
    let mut header = rec.kind as u8;
    if rec.a != 0 {
        header |= A_PRESENT;
    }
    if rec.b != 0 {
        header |= B_PRESENT;
    }
    (header, ts, a, next)
}

/// The short form of `rec` against `base`, if it has one: the word whose low bytes are the
/// record, its length, and the base for the record after it.
///
/// The common record (a zone's begin or end, a task's, a spawn) has a time delta and `a` each
/// under 2^14 (at most two varint bytes: a job's address a few slots from the previous one), and
/// `c` and `b` under 2^7; its at most 7 bytes are assembled in a register, so that the writer
/// stores them with one 8-byte store.
#[inline(always)]
pub(crate) fn encode_short(rec: &Record, base: Base) -> Option<(u64, usize, Base)> {
    let (header, ts, a, next) = fields(rec, base);
    if !(ts < 1 << 14 && rec.c < 0x80 && a < 1 << 14 && rec.b < 0x80) {
        return None;
    }
    let (t, tn) = short_varint(ts);
    let mut word = header as u64 | t << 8;
    let mut n = 1 + tn;
    word |= (rec.c as u64) << (8 * n);
    n += 1;
    if rec.a != 0 {
        let (x, xn) = short_varint(a);
        word |= x << (8 * n);
        n += xn;
    }
    if rec.b != 0 {
        word |= rec.b << (8 * n);
        n += 1;
    }
    Some((word, n, next))
}

/// Encodes `rec` at `dst` against `base` (which it updates), in its short form when it has one;
/// returns the bytes written.
///
/// # Safety
/// `dst` is valid for [`MAX_ENCODED`] bytes of writes, and `rec.kind` is below 64 (every kind in
/// `raw.rs` is).
pub(crate) unsafe fn encode(dst: *mut u8, rec: &Record, base: &mut Base) -> usize {
    if let Some((word, n, next)) = encode_short(rec, *base) {
        *base = next;
        // SAFETY: 8 bytes, within the `MAX_ENCODED` the caller guarantees; the bytes past `n`
        // are not published (the next record overwrites them).
        unsafe { dst.cast::<u64>().write_unaligned(word.to_le()) };
        return n;
    }
    let (header, ts, a, next) = fields(rec, *base);
    *base = next;
    // SAFETY: the header, then at most 10 + 5 + 10 + 10 bytes of varints, which is `MAX_ENCODED`
    // in all, the room the caller guarantees.
    unsafe {
        dst.write(header);
        let mut n = 1;
        n += put(dst.add(n), ts);
        n += put(dst.add(n), rec.c as u64);
        if rec.a != 0 {
            n += put(dst.add(n), a);
        }
        if rec.b != 0 {
            n += put(dst.add(n), rec.b);
        }
        n
    }
}

/// Reads the records of one chunk's published bytes back, oldest first. It stops at the first
/// record that would run past the end (which a chunk written by [`encode`] never has).
#[derive(Debug)]
pub(crate) struct Decoder {
    pos: usize,
    base: Base,
}

impl Decoder {
    /// A decoder at the start of a chunk.
    pub(crate) fn new() -> Decoder {
        Decoder {
            pos: 0,
            base: Base::ZERO,
        }
    }

    fn varint(&mut self, bytes: &[u8]) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *bytes.get(self.pos)?;
            self.pos += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Some(v);
            }
        }
        None
    }

    /// The next record in `bytes` (the chunk's published bytes, the same slice or a longer
    /// prefix of the same chunk at every call), or `None` at the end.
    pub(crate) fn next(&mut self, bytes: &[u8]) -> Option<Record> {
        let start = self.pos;
        let decoded = self.read(bytes);
        if decoded.is_none() {
            // Leave the position where it was: a truncated record is not consumed.
            self.pos = start;
        }
        decoded
    }

    fn read(&mut self, bytes: &[u8]) -> Option<Record> {
        let header = *bytes.get(self.pos)?;
        self.pos += 1;
        let kind = u32::from(header & KIND_MASK);
        let ts = self.varint(bytes)?;
        let c = u32::try_from(self.varint(bytes)?).ok()?;
        let a_present = header & A_PRESENT != 0;
        let a = if a_present { self.varint(bytes)? } else { 0 };
        let b = if header & B_PRESENT != 0 {
            self.varint(bytes)?
        } else {
            0
        };
        let mut base = self.base;
        let ts = if ts_is_payload(kind) {
            ts
        } else {
            base.ts = base.ts.wrapping_add(ts);
            base.ts
        };
        let a = if a_is_payload(kind) || !a_present {
            a
        } else {
            base.a = base.a.wrapping_add(unzigzag(a));
            base.a
        };
        self.base = base;
        Some(Record { ts, a, b, kind, c })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(recs: &[Record]) -> usize {
        let mut buf = vec![0u8; recs.len() * MAX_ENCODED];
        let mut base = Base::default();
        let mut n = 0;
        for r in recs {
            // SAFETY: `buf` has `MAX_ENCODED` bytes for every record.
            n += unsafe { encode(buf.as_mut_ptr().add(n), r, &mut base) };
        }
        let mut d = Decoder::new();
        let back: Vec<Record> = std::iter::from_fn(|| d.next(&buf[..n])).collect();
        assert_eq!(back, recs, "every record comes back as written");
        n
    }

    #[test]
    fn records_come_back_exactly() {
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let mut recs = Vec::new();
        let mut ts = 1u64 << 40;
        for i in 0..if cfg!(miri) { 300 } else { 10_000 } {
            // Mostly forward in time, sometimes backward (another CPU's counter), with fields
            // small, large, zero and at the extremes.
            ts = ts
                .wrapping_add(next() % 5000)
                .wrapping_sub(if i % 97 == 0 { 3000 } else { 0 });
            let pick = |x: u64| match x % 5 {
                0 => 0,
                1 => x % 100,
                2 => u64::MAX,
                3 => x,
                _ => 0x5555_5555_0000 + x % 4096,
            };
            let kind = (next() % 45) as u32;
            recs.push(Record {
                ts: if kind == raw::TEXT { next() } else { ts },
                a: pick(next()),
                b: pick(next()),
                kind,
                c: match next() % 3 {
                    0 => 0,
                    1 => u32::MAX,
                    _ => next() as u32 % 300,
                },
            });
        }
        roundtrip(&recs);
    }

    #[test]
    fn a_zone_takes_a_few_bytes() {
        let name = 0x5555_5555_1234u64;
        let mut recs = Vec::new();
        for i in 0..1000u64 {
            recs.push(Record {
                ts: 1_000_000 + i * 200,
                a: name,
                kind: raw::ZONE_BEGIN,
                c: 6,
                b: 0,
            });
            recs.push(Record {
                ts: 1_000_000 + i * 200 + 90,
                kind: raw::ZONE_END,
                ..Record::default()
            });
        }
        let bytes = roundtrip(&recs);
        // The first begin is absolute (12 bytes); after it a begin is the header, a 1-byte time
        // delta, `c` and a zero name delta, and an end the header, a 1-byte delta and `c`.
        assert_eq!(bytes, 12 + 3 + 999 * 7, "bytes for 1000 zones");
    }

    #[test]
    fn a_spawned_task_takes_a_few_bytes() {
        // A loop spawning tasks whose jobs sit 96 bytes apart, then running them newest first:
        // each spawn, each begin (with its flow and kind) and each end takes the short form.
        let job = |i: u64| 0x5555_5555_0000 + i * 96;
        let mut recs = Vec::new();
        for i in 0..100u64 {
            recs.push(Record {
                ts: 1_000_000 + i * 300,
                a: job(i),
                kind: raw::SPAWN,
                c: 1,
                b: 0,
            });
        }
        for i in (0..100u64).rev() {
            let ts = 2_000_000 + (100 - i) * 400;
            recs.push(Record {
                ts,
                a: job(i),
                b: 1,
                kind: raw::TASK_BEGIN,
                c: 2,
            });
            recs.push(Record {
                ts: ts + 150,
                kind: raw::TASK_END,
                ..Record::default()
            });
        }
        let bytes = roundtrip(&recs);
        // The first spawn is absolute (12 bytes); a later spawn is the header, a 2-byte time
        // delta, `c` and a 2-byte job delta (6); the first begin has a 3-byte time delta and a
        // zero job delta, a later one a 2-byte time delta and a 2-byte job delta, each with `c`
        // and `b` (7); an end is the header, a 2-byte time delta and `c` (4).
        assert_eq!(
            bytes,
            12 + 99 * 6 + 7 + 99 * 7 + 100 * 4,
            "bytes for 100 spawned tasks"
        );
    }

    #[test]
    fn a_truncated_record_is_not_read() {
        let rec = Record {
            ts: u64::MAX,
            a: 7,
            b: u64::MAX,
            kind: raw::COUNTER,
            c: 3,
        };
        let mut buf = [0u8; MAX_ENCODED];
        // SAFETY: `buf` holds `MAX_ENCODED` bytes.
        let n = unsafe { encode(buf.as_mut_ptr(), &rec, &mut Base::default()) };
        for cut in 0..n {
            let mut d = Decoder::new();
            assert_eq!(d.next(&buf[..cut]), None, "cut at {cut}");
            // Once the rest arrives, the record reads whole.
            assert_eq!(d.next(&buf[..n]), Some(rec));
        }
    }
}
