//! Per-thread buffers of binary records.
//!
//! Each thread that records owns a [`ThreadBuf`]: a list of chunks of bytes holding [`Record`]s in
//! their compact form (2–36 bytes each, see `codec.rs`). Only the owning thread writes; it
//! encodes a record after the last published one, then publishes it by storing the chunk's new
//! length (a release store to a line no other thread writes — on x86-64 a plain `mov`). The
//! collector at `stop` loads each length with acquire and decodes the bytes below it, which are
//! never written again. So the hot path takes no lock and
//! performs no read-modify-write on a shared atomic (the same single-writer design as Tracy's
//! per-thread queues, Bartosz Taudul, "Tracy Profiler", 2018–).
//!
//! Chunks start small (threads that record little cost little) and double up to a cap. In full
//! mode each new chunk comes with the next one, allocated ahead and pre-faulted by a helper
//! thread (`prefault.rs`), so the recording thread rarely takes a first-touch page fault: fresh
//! memory was most of a full recording's cost per event, which the flight recorder (reusing its
//! chunks) does not pay. Adding a
//! chunk takes the buffer's mutex, once per chunk. In flight-recorder mode, adding a chunk drops
//! the oldest ones while the buffer would exceed its byte budget (reusing one of them), so only the newest events
//! remain.
//! The buffer is owned by an `Arc` held by the recording's registry, so a thread that exits keeps
//! its events until `stop`.
//!
//! In full mode the recording's chunks share one memory cap (`Mode::Full` has a default one,
//! `DEFAULT_CAP_BYTES`): every new chunk is counted in `MEMORY` (bytes of chunks allocated by
//! the recording in progress) before it is allocated; a chunk that would pass the cap is not
//! allocated, the thread's buffer is marked full, and its later events are counted as dropped
//! instead of recorded (the oldest events are kept, the newest dropped — the opposite of the
//! flight recorder). At `stop` the chunks are handed to the decoder one at a time and freed as
//! soon as they are decoded (`ThreadBuf::take`), into tracks encoded as they are written
//! (`decode.rs`): `stop` holds the raw chunks and the encoded tracks, never a whole recording's
//! decoded events.

use std::cell::UnsafeCell;
use std::collections::VecDeque;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::codec::{encode, Base, Decoder, MAX_ENCODED};
pub(crate) use super::raw::Record;
use crate::util::lock;

/// Bytes of a thread's first chunk.
const FIRST_CHUNK: usize = 8 << 10;
/// Bytes of the largest chunk.
const MAX_CHUNK: usize = 256 << 10;
/// Bytes of the smallest chunk (a flight recorder with a tiny budget): room for the records a
/// chunk may have to take at once (registration, a birth, an OS sample, a message's group).
const MIN_CHUNK: usize = 16 * MAX_ENCODED;

/// Bytes of chunks allocated by the recording in progress (reset when one starts).
pub(crate) static MEMORY: AtomicUsize = AtomicUsize::new(0);

/// A fixed array of bytes holding records in their compact form (`codec.rs`); the first `len`
/// bytes are published.
pub(crate) struct Chunk {
    len: AtomicUsize,
    /// How many records the chunk holds, stored by its owner when it moves on to its next chunk
    /// (what the flight recorder counts as dropped when it drops the chunk).
    records: AtomicUsize,
    bytes: Box<[UnsafeCell<MaybeUninit<u8>>]>,
}

// SAFETY: bytes below `len` are immutable once published (release store, acquire load); bytes at
// or above it are written only by the owning thread, which is the only writer of `len`. No byte is
// ever read and written concurrently.
unsafe impl Sync for Chunk {}
// SAFETY: a chunk owns its bytes (plain data); moving it between threads is harmless.
unsafe impl Send for Chunk {}

impl Chunk {
    fn new(capacity: usize) -> Chunk {
        let bytes = (0..capacity)
            .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
            .collect();
        Chunk {
            len: AtomicUsize::new(0),
            records: AtomicUsize::new(0),
            bytes,
        }
    }

    /// A chunk with no room (what a thread holds once the memory cap stopped its buffer).
    pub(crate) fn empty() -> Chunk {
        Chunk::new(0)
    }

    /// The chunk's size in bytes.
    pub(crate) fn capacity(&self) -> usize {
        self.bytes.len()
    }

    /// Encodes `rec` at byte `at` against `base` and publishes it; returns the new length.
    ///
    /// # Safety
    /// Only the chunk's owning thread may call this, with `at` equal to the current length and at
    /// most `capacity() - MAX_ENCODED`.
    #[inline(always)]
    pub(crate) unsafe fn push_at(&self, at: usize, rec: &Record, base: &mut Base) -> usize {
        debug_assert!(
            at + MAX_ENCODED <= self.bytes.len(),
            "Chunk::push_at: no room for a record"
        );
        // `UnsafeCell<MaybeUninit<u8>>` has the layout of `u8`; the cells give this thread the
        // right to write through a pointer derived from a shared reference.
        let base_ptr = UnsafeCell::raw_get(self.bytes.as_ptr()).cast::<u8>();
        // SAFETY: by the contract, `at..at + MAX_ENCODED` is in bounds and unpublished, and this
        // is the only writer, so no one reads or writes these bytes now.
        let n = unsafe { encode(base_ptr.add(at), rec, base) };
        // Release: pairs with the acquire load in `published_len`, so the collector sees the
        // record's bytes whenever it sees the new length.
        self.len.store(at + n, Ordering::Release);
        at + n
    }

    /// Writes a record's short form (`word`'s low `n` bytes, `codec::encode_short`) at byte `at`
    /// and publishes it; returns the new length.
    ///
    /// # Safety
    /// As [`Chunk::push_at`].
    #[inline(always)]
    pub(crate) unsafe fn push_short_at(&self, at: usize, word: u64, n: usize) -> usize {
        debug_assert!(
            at + MAX_ENCODED <= self.bytes.len(),
            "Chunk::push_short_at: no room for a record"
        );
        let base_ptr = UnsafeCell::raw_get(self.bytes.as_ptr()).cast::<u8>();
        // SAFETY: by the contract, `at..at + MAX_ENCODED` (more than 8 bytes) is in bounds and
        // unpublished, and this is the only writer; the bytes past `n` are not published (the
        // next record overwrites them).
        unsafe { base_ptr.add(at).cast::<u64>().write_unaligned(word.to_le()) };
        // Release: as in `push_at`.
        self.len.store(at + n, Ordering::Release);
        at + n
    }

    /// The number of published bytes.
    pub(crate) fn published_len(&self) -> usize {
        // Acquire: pairs with the release store in `push_at`.
        self.len.load(Ordering::Acquire)
    }

    /// Notes how many records the chunk holds (its owner, when it moves on to another chunk).
    pub(crate) fn set_records(&self, n: usize) {
        // Relaxed: read by the owner itself in `ThreadBuf::grow`, or by the collector after the
        // recording was switched off under the registry lock, which orders it after this store.
        self.records.store(n, Ordering::Relaxed);
    }

    /// The first `len` bytes, published.
    ///
    /// # Safety
    /// `len` is at most a length returned by `published_len` on this thread.
    unsafe fn published(&self, len: usize) -> &[u8] {
        let ptr = UnsafeCell::raw_get(self.bytes.as_ptr()).cast::<u8>();
        // SAFETY: bytes below a published length were fully written before the release store
        // that `published_len`'s acquire load synchronised with, and are never written again.
        unsafe { std::slice::from_raw_parts(ptr, len) }
    }
}

impl super::prefault::Region for Chunk {
    fn memory(&self) -> (*const u8, usize) {
        (self.bytes.as_ptr().cast(), self.bytes.len())
    }
}

/// The published records of one chunk, decoded; holding the chunk's `Arc`, it frees the chunk
/// (if no one else holds it) when dropped.
pub(crate) struct ChunkRecords {
    chunk: Arc<Chunk>,
    decoder: Decoder,
    /// The published length when the collector took the chunk.
    len: usize,
}

impl ChunkRecords {
    pub(crate) fn new(chunk: Arc<Chunk>) -> ChunkRecords {
        let len = chunk.published_len();
        ChunkRecords {
            chunk,
            decoder: Decoder::new(),
            len,
        }
    }
}

impl Iterator for ChunkRecords {
    type Item = Record;
    fn next(&mut self) -> Option<Record> {
        // SAFETY: `len` was returned by `published_len`.
        let bytes = unsafe { self.chunk.published(self.len) };
        self.decoder.next(bytes)
    }
}

/// The recording buffer of one thread.
pub(crate) struct ThreadBuf {
    pub(crate) tid: u64,
    pub(crate) name: Mutex<String>,
    chunks: Mutex<VecDeque<Arc<Chunk>>>,
    /// Flight-recorder budget in bytes for this thread, if any.
    budget: Option<usize>,
    /// The recording's memory cap in bytes (full mode), if any.
    pub(crate) cap: Option<usize>,
    /// Records dropped by the flight recorder (written under the `chunks` lock).
    dropped: Mutex<u64>,
    /// Events dropped because the recording reached its memory cap (owner thread adds).
    capped: AtomicU64,
    /// Set once a chunk was refused for the cap: the owner records nothing more.
    full: AtomicBool,
    /// Full mode: the next chunk, allocated ahead and being pre-faulted by `prefault.rs`'s
    /// thread (owner thread only; a mutex for `Sync`).
    spare: Mutex<Option<Arc<Chunk>>>,
}

impl ThreadBuf {
    pub(crate) fn new(
        tid: u64,
        name: String,
        budget: Option<usize>,
        cap: Option<usize>,
    ) -> ThreadBuf {
        ThreadBuf {
            tid,
            name: Mutex::new(name),
            chunks: Mutex::new(VecDeque::new()),
            budget,
            cap,
            dropped: Mutex::new(0),
            capped: AtomicU64::new(0),
            full: AtomicBool::new(false),
            spare: Mutex::new(None),
        }
    }

    /// Whether the recording's memory cap stopped this buffer (owner thread only).
    pub(crate) fn is_full(&self) -> bool {
        // Relaxed: only the owner thread stores it, and reads it here.
        self.full.load(Ordering::Relaxed)
    }

    /// Counts one event dropped for the memory cap (owner thread only).
    pub(crate) fn drop_capped(&self) {
        // Relaxed: a counter; `take` reads it after the recording is switched off under the
        // registry lock, which orders it after the owner's last add.
        self.capped.fetch_add(1, Ordering::Relaxed);
    }

    /// Adds a chunk after one of `previous` bytes (0 for the first) and returns it; `None`
    /// when it would take the recording past `limit` bytes of chunks (the buffer is then full).
    #[cold]
    #[inline(never)]
    pub(crate) fn grow(&self, previous: usize, limit: Option<usize>) -> Option<Arc<Chunk>> {
        let mut cap = if previous == 0 {
            FIRST_CHUNK
        } else {
            (previous * 2).min(MAX_CHUNK)
        };
        if let Some(budget) = self.budget {
            // Keep at least four chunks' worth inside the budget so dropping stays fine-grained.
            cap = cap.min((budget / 4).max(MIN_CHUNK));
        }
        let mut chunks = lock(&self.chunks);
        let mut recycled = None;
        if let Some(budget) = self.budget {
            // Drop the oldest chunks until the new one fits; reuse one of the right size that
            // nobody else holds (no collector is copying it), so a flight recording in steady
            // state touches no new memory.
            let mut bytes: usize = chunks.iter().map(|c| c.capacity()).sum();
            while bytes + cap > budget && !chunks.is_empty() {
                let mut old = chunks
                    .pop_front()
                    .expect("ThreadBuf::grow: no chunk to drop");
                bytes -= old.capacity();
                // Relaxed: only this thread (the owner, running `grow`) ever stores `records`,
                // when it left that chunk.
                *lock(&self.dropped) += old.records.load(Ordering::Relaxed) as u64;
                if let Some(c) = Arc::get_mut(&mut old).filter(|c| c.capacity() == cap) {
                    *c.len.get_mut() = 0;
                    *c.records.get_mut() = 0;
                    recycled = Some(old);
                }
            }
        }
        if self.budget.is_none() {
            // Full mode: the spare allocated at the previous chunk, pre-faulted by now (or
            // being), then the next spare, handed to the pre-fault thread.
            let spare = lock(&self.spare).take().filter(|c| c.capacity() == cap);
            recycled = match spare {
                Some(c) => Some(c),
                None => Some(allocate(cap, limit).or_else(|| {
                    // Relaxed: only this (the owner) thread reads it.
                    self.full.store(true, Ordering::Relaxed);
                    None
                })?),
            };
            let next = (cap * 2).min(MAX_CHUNK);
            if let Some(spare) = allocate(next, limit) {
                super::prefault::submit(spare.clone());
                *lock(&self.spare) = Some(spare);
            }
        }
        let chunk = match recycled {
            Some(c) => c,
            None => match allocate(cap, limit) {
                Some(c) => c,
                None => {
                    // Relaxed: only this (the owner) thread reads it.
                    self.full.store(true, Ordering::Relaxed);
                    return None;
                }
            },
        };
        chunks.push_back(chunk.clone());
        Some(chunk)
    }

    /// Takes the chunks, oldest first, and the number of events dropped (by the flight recorder
    /// or the memory cap). Call after the recording was switched off.
    pub(crate) fn take(&self) -> (Vec<Arc<Chunk>>, u64) {
        drop(lock(&self.spare).take());
        let chunks = std::mem::take(&mut *lock(&self.chunks)).into();
        // Relaxed: see `drop_capped`.
        let capped = self.capped.load(Ordering::Relaxed);
        (chunks, *lock(&self.dropped) + capped)
    }
}

/// A new chunk of `cap` bytes, counted in `MEMORY`; `None` if that would pass `limit`.
fn allocate(cap: usize, limit: Option<usize>) -> Option<Arc<Chunk>> {
    let bytes = cap;
    // Relaxed: a byte count shared by the recording's threads; the read-modify-write alone makes
    // the cap exact, no other memory is published through it.
    let before = MEMORY.fetch_add(bytes, Ordering::Relaxed);
    if limit.is_some_and(|limit| before + bytes > limit) {
        // Relaxed: as above.
        MEMORY.fetch_sub(bytes, Ordering::Relaxed);
        return None;
    }
    Some(Arc::new(Chunk::new(cap)))
}

impl ThreadBuf {
    /// The chunks, oldest first, and the events dropped so far, leaving them in place: what
    /// `Recording::snapshot` copies while the owner keeps writing (it reads only the records
    /// published before it took each chunk's length; holding the chunks keeps the flight
    /// recorder from reusing them meanwhile, so it allocates fresh ones instead).
    pub(crate) fn peek(&self) -> (Vec<Arc<Chunk>>, u64) {
        let chunks = lock(&self.chunks).iter().cloned().collect();
        // Relaxed: see `drop_capped`; a snapshot's count may miss the owner's latest drops.
        let capped = self.capped.load(Ordering::Relaxed);
        (chunks, *lock(&self.dropped) + capped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A collector decoding a chunk while its owner writes reads only whole records, in order,
    /// with the fields they were written with (under Miri: no data race on the bytes, no read of
    /// uninitialised memory).
    #[test]
    fn a_chunk_reads_back_while_its_owner_writes() {
        const N: u64 = if cfg!(miri) { 60 } else { 5_000 };
        let chunk = Arc::new(Chunk::new(N as usize * MAX_ENCODED));
        let writer = {
            let chunk = chunk.clone();
            std::thread::spawn(move || {
                let (mut at, mut base) = (0, Base::ZERO);
                for i in 0..N {
                    let rec = Record {
                        ts: 1000 + i * 7,
                        a: 0x5555_0000 + i % 3,
                        b: i,
                        kind: super::super::raw::COUNTER,
                        c: 5,
                    };
                    // SAFETY: this thread is the chunk's only writer; `at` is its length, and
                    // the chunk has `MAX_ENCODED` bytes for every record.
                    at = unsafe { chunk.push_at(at, &rec, &mut base) };
                }
            })
        };
        let mut seen = 0;
        while seen < N {
            // Each pass reads what is published now, from the start, as a snapshot does.
            seen = ChunkRecords::new(chunk.clone())
                .enumerate()
                .map(|(i, r)| {
                    let i = i as u64;
                    assert_eq!(
                        (r.ts, r.a, r.b, r.c),
                        (1000 + i * 7, 0x5555_0000 + i % 3, i, 5)
                    );
                    i + 1
                })
                .last()
                .unwrap_or(0);
            std::thread::yield_now();
        }
        writer.join().unwrap();
    }
}
