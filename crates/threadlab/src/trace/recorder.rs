//! The recorder's global state: the on/off flag, the registry of per-thread buffers, and each
//! thread's cursor into its own buffer.
//!
//! `STATE` is 0 when no recording is on, else the recording's generation (1, 2, …; never reused).
//! The hot path ([`record`]) loads it once (relaxed) and returns when it is 0. When it is not, the
//! thread compares it with the generation of its cached buffer; on a mismatch (first event of
//! this thread in this recording, or a buffer left over from an earlier one) it registers a new
//! buffer under the registry lock, so a stale buffer is never mixed into a later recording.
//!
//! The recorder is not part of the loom models (its globals need `const` atomics, which loom's
//! are not), so it uses std's atomics directly; under `cfg(loom)` recording is always off.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::buffer::{lock, Chunk, Record, ThreadBuf};
use super::clock::{self, Anchor};
use super::os;

/// 0: off; otherwise the generation of the recording in progress.
static STATE: AtomicU64 = AtomicU64::new(0);

pub(crate) struct Registry {
    /// Generation of the recording in progress or last stopped.
    pub(crate) generation: u64,
    pub(crate) active: bool,
    pub(crate) budget: Option<usize>,
    /// Cap on the bytes of all chunks of a full recording (`None`: unbounded or flight).
    pub(crate) cap: Option<usize>,
    pub(crate) bufs: Vec<Arc<ThreadBuf>>,
    pub(crate) start: Option<Anchor>,
}

pub(crate) static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    generation: 0,
    active: false,
    budget: None,
    cap: None,
    bufs: Vec::new(),
    start: None,
});

/// The current generation if a recording is on, else 0.
#[inline(always)]
pub(crate) fn generation() -> u64 {
    if cfg!(loom) {
        return 0;
    }
    // Relaxed: a flag only. Events of a thread that has not yet seen a new value are simply not
    // recorded (or recorded into the previous generation's buffer, which `stop` already
    // collected); the buffers themselves are published through the registry mutex.
    STATE.load(Ordering::Relaxed)
}

/// Turns recording on with a new generation (the caller holds the registry lock).
pub(crate) fn switch_on(reg: &mut Registry) {
    reg.generation += 1;
    reg.active = true;
    // SeqCst: orders the flag after the registry update for threads that read both; the hot
    // path's relaxed load only needs to see it eventually.
    STATE.store(reg.generation, Ordering::SeqCst);
    crate::context::set_recording(true);
}

/// Turns recording off (the caller holds the registry lock).
pub(crate) fn switch_off(reg: &mut Registry) {
    reg.active = false;
    // SeqCst: see `switch_on`.
    STATE.store(0, Ordering::SeqCst);
    crate::context::set_recording(false);
}

/// One thread's cursor into its current chunk: plain cells, no destructor, so the hot path's
/// thread-local access needs no "already destroyed?" check.
struct Hot {
    generation: Cell<u64>,
    chunk: Cell<*const Chunk>,
    index: Cell<usize>,
    capacity: Cell<usize>,
}

/// What keeps `Hot::chunk` alive, and the rest of the thread's recording state (slow path only).
struct Cold {
    owned: RefCell<Option<(Arc<ThreadBuf>, Arc<Chunk>)>>,
    /// Name set by `set_thread_name`, used at registration.
    name: RefCell<Option<String>>,
    /// The pool worker index set by `set_worker_index`, written into every recording this
    /// thread joins (a recording usually starts after the pool's threads did).
    worker: Cell<Option<u32>>,
}

impl Drop for Cold {
    fn drop(&mut self) {
        // Thread exit: a last OS sample while the chunk is still ours, if this thread records
        // in the current recording (the last figures of a short-lived thread).
        let _ = HOT.try_with(|h| {
            if h.generation.get() == generation() && h.generation.get() != 0 {
                let ts = clock::now();
                for rec in os::sample_records(ts, None) {
                    let index = h.index.get();
                    if index < h.capacity.get() {
                        // SAFETY: as in `record_on`; `owned` still holds the chunk (we are in
                        // its owner's destructor, before the fields drop).
                        unsafe { (*h.chunk.get()).push_at(index, rec) };
                        h.index.set(index + 1);
                    }
                }
            }
        });
        // The chunk is about to lose this owner: make the hot path stop writing to it (a later
        // event, e.g. from another thread-local's destructor, finds `Cold` gone and is dropped).
        let _ = HOT.try_with(|h| {
            h.capacity.set(0);
            h.index.set(0);
            h.generation.set(0);
            h.chunk.set(std::ptr::null());
        });
    }
}

thread_local! {
    static HOT: Hot = const {
        Hot {
            generation: Cell::new(0),
            chunk: Cell::new(std::ptr::null()),
            index: Cell::new(0),
            capacity: Cell::new(0),
        }
    };
    static COLD: Cold = const {
        Cold { owned: RefCell::new(None), name: RefCell::new(None), worker: Cell::new(None) }
    };
}

/// Records one event if a recording is on: one relaxed load and a branch when it is off.
#[inline(always)]
pub(crate) fn record(kind: u32, a: u64, b: u64, c: u32) {
    let gen = generation();
    if gen != 0 {
        record_on(gen, kind, a, b, c);
    }
}

#[inline]
fn record_on(gen: u64, kind: u32, a: u64, b: u64, c: u32) {
    let ts = clock::now();
    let _ = HOT.try_with(|h| {
        if h.generation.get() != gen || h.index.get() == h.capacity.get() {
            // `try_with`: once `COLD` is destroyed (thread exit) events are dropped.
            let _ = COLD.try_with(|cold| refill(h, cold, gen));
        }
        let index = h.index.get();
        if index < h.capacity.get() {
            // SAFETY: a non-zero capacity means `chunk` is set and kept alive by `COLD.owned`
            // (whose drop zeroes the capacity first); this thread is its only writer, and
            // `index` is its current length, below its capacity (checked just above).
            unsafe { (*h.chunk.get()).push_at(index, Record { ts, a, b, kind, c }) };
            h.index.set(index + 1);
        }
    });
}

/// Registers this thread for generation `gen`, or adds a chunk to its buffer.
#[cold]
#[inline(never)]
fn refill(l: &Hot, cold: &Cold, gen: u64) {
    let mut owned = cold.owned.borrow_mut();
    let (buf, cap) = match owned.as_ref() {
        Some((buf, _)) if l.generation.get() == gen => {
            if buf.is_full() {
                // The recording reached its memory cap: count the event and drop it.
                buf.drop_capped();
                return;
            }
            // The cap only changes between recordings; this one's is fixed.
            (buf.clone(), buf.cap)
        }
        _ => {
            let mut reg = lock(&REGISTRY);
            if !reg.active || reg.generation != gen {
                // The recording stopped (or restarted) since the flag was read.
                l.capacity.set(0);
                l.index.set(0);
                return;
            }
            let tid = os::gettid();
            let name = cold
                .name
                .borrow()
                .clone()
                .unwrap_or_else(|| default_name(tid));
            let buf = Arc::new(ThreadBuf::new(tid, name, reg.budget, reg.cap));
            reg.bufs.push(buf.clone());
            (buf, reg.cap)
        }
    };
    let registering = l.generation.get() != gen;
    let previous = if registering { 0 } else { l.capacity.get() };
    let Some(chunk) = buf.grow(previous, cap) else {
        // Over the cap: no chunk; this event and every later one of this thread is dropped.
        buf.drop_capped();
        l.capacity.set(0);
        l.index.set(0);
        l.generation.set(gen);
        let empty = Arc::new(Chunk::empty());
        l.chunk.set(Arc::as_ptr(&empty));
        *owned = Some((buf, empty));
        return;
    };
    l.chunk.set(Arc::as_ptr(&chunk));
    l.capacity.set(chunk.capacity());
    l.index.set(0);
    l.generation.set(gen);
    *owned = Some((buf, chunk.clone()));
    let ts = clock::now();
    if registering {
        if let Some(index) = cold.worker.get() {
            // SAFETY: as in `record_on`; a new chunk has at least 16 slots, and this is the
            // first of at most three records written here.
            unsafe { chunk.push_at(l.index.get(), Record::worker(ts, index)) };
            l.index.set(l.index.get() + 1);
        }
    }
    // The slow tick: an OS sample at registration and at a new chunk (at most one per ms).
    if !os::due() && !registering {
        return;
    }
    for rec in os::sample_records(ts, None) {
        let index = l.index.get();
        // SAFETY: as in `record_on`; a new chunk has at least 16 slots, so the worker record
        // and these two fit.
        unsafe { chunk.push_at(index, rec) };
        l.index.set(index + 1);
    }
}

fn default_name(tid: u64) -> String {
    std::thread::current()
        .name()
        .map_or_else(|| format!("thread {tid}"), str::to_owned)
}

/// Names the calling thread's track (now, and in later recordings).
pub(crate) fn set_thread_name(name: &str) {
    let _ = COLD.try_with(|l| {
        *l.name.borrow_mut() = Some(name.to_owned());
        if let Some((buf, _)) = l.owned.borrow().as_ref() {
            *lock(&buf.name) = name.to_owned();
        }
    });
}

/// Marks the calling thread as pool worker `index` in this and every later recording; names its
/// track `threadlab-worker-<index>` unless the thread has a name already.
pub(crate) fn set_worker_index(index: u32) {
    let _ = COLD.try_with(|cold| {
        cold.worker.set(Some(index));
        let named = cold.name.borrow().is_some() || std::thread::current().name().is_some();
        if !named {
            *cold.name.borrow_mut() = Some(format!("threadlab-worker-{index}"));
        }
    });
    let gen = generation();
    let _ = HOT.try_with(|h| {
        // Already registered in the recording in progress: the registration missed the index.
        if gen != 0 && h.generation.get() == gen {
            record(super::raw::WORKER, 0, 0, index);
        }
    });
}
