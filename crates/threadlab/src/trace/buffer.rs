//! Per-thread buffers of fixed-size binary records.
//!
//! Each thread that records owns a [`ThreadBuf`]: a list of chunks of 32-byte [`Record`]s. Only
//! the owning thread writes; it writes a record into the slot after the last published one, then
//! publishes it by storing the chunk's new length (a release store to a line no other thread
//! writes — on x86-64 a plain `mov`). The collector at `stop` loads each length with acquire and
//! copies the slots below it, which are never written again. So the hot path takes no lock and
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
//! soon as they are decoded (`ThreadBuf::take`), so `stop` holds the raw chunks and the decoded
//! events, not a third copy.

use std::cell::UnsafeCell;
use std::collections::VecDeque;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// One recorded event, as written on the hot path. `kind` says how to read `a`, `b` and `c`
/// (see `event.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub(crate) struct Record {
    pub(crate) ts: u64,
    pub(crate) a: u64,
    pub(crate) b: u64,
    pub(crate) kind: u32,
    pub(crate) c: u32,
}

impl Record {
    /// The record that marks its thread as pool worker `index`.
    pub(crate) fn worker(ts: u64, index: u32) -> Record {
        Record {
            ts,
            a: 0,
            b: 0,
            kind: super::raw::WORKER,
            c: index,
        }
    }
}

/// Size of a record in bytes (the unit of the flight recorder's budget).
pub(crate) const RECORD_BYTES: usize = std::mem::size_of::<Record>();

/// Records in a thread's first chunk (8 KiB).
const FIRST_CHUNK: usize = 256;
/// Largest chunk, in records (256 KiB).
const MAX_CHUNK: usize = 8192;

/// Bytes of chunks allocated by the recording in progress (reset when one starts).
pub(crate) static MEMORY: AtomicUsize = AtomicUsize::new(0);

/// A fixed array of record slots; `len` slots are published.
pub(crate) struct Chunk {
    len: AtomicUsize,
    slots: Box<[UnsafeCell<MaybeUninit<Record>>]>,
}

// SAFETY: slots below `len` are immutable once published (release store, acquire load); slots at
// or above it are written only by the owning thread, which is the only writer of `len`. No slot is
// ever read and written concurrently.
unsafe impl Sync for Chunk {}
// SAFETY: a chunk owns its records (plain data); moving it between threads is harmless.
unsafe impl Send for Chunk {}

impl Chunk {
    fn new(capacity: usize) -> Chunk {
        let slots = (0..capacity)
            .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
            .collect();
        Chunk {
            len: AtomicUsize::new(0),
            slots,
        }
    }

    /// A chunk with no slots (what a thread holds once the memory cap stopped its buffer).
    pub(crate) fn empty() -> Chunk {
        Chunk::new(0)
    }

    pub(crate) fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// The chunk's memory: its address and length in bytes.
    pub(crate) fn memory(&self) -> (*const u8, usize) {
        (self.slots.as_ptr().cast(), self.slots.len() * RECORD_BYTES)
    }

    /// Writes `rec` at `index` and publishes it.
    ///
    /// # Safety
    /// Only the chunk's owning thread may call this, with `index` equal to the current length
    /// and below the capacity.
    #[inline(always)]
    pub(crate) unsafe fn push_at(&self, index: usize, rec: Record) {
        debug_assert!(
            index < self.slots.len(),
            "Chunk::push_at: index past capacity"
        );
        // SAFETY: by the contract, `index` is in bounds, unpublished, and this is the only writer,
        // so no one reads or writes this slot now.
        unsafe { (*self.slots.get_unchecked(index).get()).write(rec) };
        // Release: pairs with the acquire load in `published`, so the collector sees the slot's
        // contents whenever it sees the new length.
        self.len.store(index + 1, Ordering::Release);
    }

    /// The number of published records.
    pub(crate) fn published_len(&self) -> usize {
        // Acquire: pairs with the release store in `push_at`.
        self.len.load(Ordering::Acquire)
    }

    /// Published record `i`.
    ///
    /// # Safety
    /// `i` is below a length returned by `published_len` on this thread.
    unsafe fn published_at(&self, i: usize) -> Record {
        // SAFETY: slots below the published length were fully written before the release store
        // that `published_len`'s acquire load synchronised with, and are never written again.
        unsafe { (*self.slots.get_unchecked(i).get()).assume_init() }
    }
}

/// The published records of one chunk, by value; holding the chunk's `Arc`, it frees the chunk
/// (if no one else holds it) when dropped.
pub(crate) struct ChunkRecords {
    chunk: Arc<Chunk>,
    next: usize,
    len: usize,
}

impl ChunkRecords {
    pub(crate) fn new(chunk: Arc<Chunk>) -> ChunkRecords {
        let len = chunk.published_len();
        ChunkRecords {
            chunk,
            next: 0,
            len,
        }
    }
}

impl ChunkRecords {
    /// How many records are left.
    pub(crate) fn len(&self) -> usize {
        self.len - self.next
    }
}

impl Iterator for ChunkRecords {
    type Item = Record;
    fn next(&mut self) -> Option<Record> {
        if self.next == self.len {
            return None;
        }
        // SAFETY: `next` is below `len`, which `published_len` returned.
        let rec = unsafe { self.chunk.published_at(self.next) };
        self.next += 1;
        Some(rec)
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

    /// Adds a chunk after one of `previous` records (0 for the first) and returns it; `None`
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
            cap = cap.min((budget / RECORD_BYTES / 4).max(16));
        }
        let mut chunks = lock(&self.chunks);
        let mut recycled = None;
        if let Some(budget) = self.budget {
            // Drop the oldest chunks until the new one fits; reuse one of the right size that
            // nobody else holds (no collector is copying it), so a flight recording in steady
            // state touches no new memory.
            let mut bytes: usize = chunks.iter().map(|c| c.capacity() * RECORD_BYTES).sum();
            while bytes + cap * RECORD_BYTES > budget && !chunks.is_empty() {
                let mut old = chunks
                    .pop_front()
                    .expect("ThreadBuf::grow: no chunk to drop");
                bytes -= old.capacity() * RECORD_BYTES;
                // Relaxed: only this thread (the owner, running `grow`) ever stores `len`.
                *lock(&self.dropped) += old.len.load(Ordering::Relaxed) as u64;
                if let Some(c) = Arc::get_mut(&mut old).filter(|c| c.capacity() == cap) {
                    *c.len.get_mut() = 0;
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

/// A new chunk of `cap` records, counted in `MEMORY`; `None` if that would pass `limit`.
fn allocate(cap: usize, limit: Option<usize>) -> Option<Arc<Chunk>> {
    let bytes = cap * RECORD_BYTES;
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

/// Locks a std mutex, ignoring poisoning (the data behind these locks stays consistent).
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
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
