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
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use super::buffer::{Chunk, Record, ThreadBuf};
use super::clock::{self, Anchor};
use super::codec::{encode_short, Base, MAX_ENCODED};
use super::os;
use crate::util::lock;

/// 0: off; otherwise the generation of the recording in progress.
static STATE: AtomicU64 = AtomicU64::new(0);

/// Whether a spawn has anything to carry: [`SPAWN_HOOKED`] | [`SPAWN_RECORDING`]; the one load a
/// spawn path pays when neither is set (`context::Tag::capture`). The recorder sets and clears
/// its bit with its switch; `context::set_spawn_hook` sets the other.
static SPAWN_ARMED: AtomicU8 = AtomicU8::new(0);
/// A spawn-context hook is installed.
const SPAWN_HOOKED: u8 = 1;
/// A recording is on.
const SPAWN_RECORDING: u8 = 2;

/// Whether a spawn must capture a tag: a hook is installed or a recording is on.
#[inline(always)]
pub(crate) fn spawns_armed() -> bool {
    // Relaxed: a hint for the spawn paths only; a spawn that misses the change records no
    // location (`STATE` decides what is recorded) and a hook installed concurrently with a
    // spawn may miss that one spawn (the hook itself is read through `context`'s `HOOK`).
    SPAWN_ARMED.load(Ordering::Relaxed) != 0
}

/// A spawn-context hook was installed (`context::set_spawn_hook`): spawns capture from now on.
pub(crate) fn arm_spawns_for_hook() {
    // Relaxed: see `spawns_armed`.
    SPAWN_ARMED.fetch_or(SPAWN_HOOKED, Ordering::Relaxed);
}

/// The recording bit of [`SPAWN_ARMED`], set by `switch_on`, cleared by `switch_off` and in a
/// forked child.
fn arm_spawns_for_recording(on: bool) {
    // Relaxed: see `spawns_armed`.
    if on {
        SPAWN_ARMED.fetch_or(SPAWN_RECORDING, Ordering::Relaxed);
    } else {
        SPAWN_ARMED.fetch_and(!SPAWN_RECORDING, Ordering::Relaxed);
    }
}

pub(crate) struct Registry {
    /// Generation of the recording in progress or last stopped.
    pub(crate) generation: u64,
    pub(crate) active: bool,
    pub(crate) budget: Option<usize>,
    /// Cap on the bytes of all chunks of a full recording (`None`: unbounded or flight).
    pub(crate) cap: Option<usize>,
    pub(crate) bufs: Vec<Arc<ThreadBuf>>,
    pub(crate) start: Option<Anchor>,
    /// The threads alive when the recording started (`os::live_tids`, sorted), or `None` if
    /// they could not be listed: a thread that registers and is not among them was born during
    /// the recording, and its track starts with a birth sample (`os::birth_records`).
    pub(crate) live_at_start: Option<Vec<u64>>,
}

pub(crate) static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    generation: 0,
    active: false,
    budget: None,
    cap: None,
    bufs: Vec::new(),
    start: None,
    live_at_start: None,
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
    arm_spawns_for_recording(true);
}

/// Turns recording off (the caller holds the registry lock).
pub(crate) fn switch_off(reg: &mut Registry) {
    reg.active = false;
    // SeqCst: see `switch_on`.
    STATE.store(0, Ordering::SeqCst);
    arm_spawns_for_recording(false);
}

/// In a child process made by `fork()` (its `pthread_atfork` handler, `pool::fork`): recording
/// is off there. The recording belongs to the parent; and the child's threads must not register
/// with it, since the registry's lock may have been held by a parent thread at the fork (and
/// stays locked in the child for good). Only atomic stores: async-signal-safe. (Not under Miri,
/// which has no `fork`.)
#[cfg(all(unix, not(miri)))]
pub(crate) fn off_in_forked_child() {
    // Relaxed: the child has one thread, running this handler before `fork()` returns there.
    STATE.store(0, Ordering::Relaxed);
    arm_spawns_for_recording(false);
}

/// One thread's cursor into its current chunk: plain cells, no destructor, so the hot path's
/// thread-local access needs no "already destroyed?" check.
struct Hot {
    generation: Cell<u64>,
    chunk: Cell<*const Chunk>,
    /// Bytes written into the chunk.
    index: Cell<usize>,
    /// The chunk's size in bytes (0: no chunk).
    capacity: Cell<usize>,
    /// What the next record's deltas are taken against (`codec.rs`).
    base: Cell<Base>,
    /// Records written into the chunk.
    records: Cell<usize>,
    /// How many chunks this thread moved to (`switch_to`): names the current one, for what is
    /// defined once per chunk (`hooks::spawn`'s locations).
    serial: Cell<u64>,
}

impl Hot {
    /// Whether a record surely fits in the current chunk.
    #[inline(always)]
    fn has_room(&self) -> bool {
        // `index` never passes `capacity`.
        self.capacity.get() - self.index.get() >= MAX_ENCODED
    }

    /// Writes `rec` into the current chunk.
    ///
    /// # Safety
    /// `has_room()` is true; the chunk is kept alive by `COLD.owned` (whose drop zeroes the
    /// capacity first), and this thread is its only writer.
    #[inline(always)]
    unsafe fn write(&self, rec: &Record) {
        let mut base = self.base.get();
        // SAFETY: the chunk is alive and ours (the contract); `index` is its current length,
        // with `MAX_ENCODED` bytes of room after it (`has_room`).
        let end = unsafe { (*self.chunk.get()).push_at(self.index.get(), rec, &mut base) };
        self.base.set(base);
        self.index.set(end);
        self.records.set(self.records.get() + 1);
    }

    /// [`Hot::write`] of a record in its short form (`codec::encode_short`: `word`'s low `n`
    /// bytes, `next` the base after it).
    ///
    /// # Safety
    /// As [`Hot::write`].
    #[inline(always)]
    unsafe fn write_short(&self, word: u64, n: usize, next: Base) {
        // SAFETY: as in `write`.
        let end = unsafe { (*self.chunk.get()).push_short_at(self.index.get(), word, n) };
        self.base.set(next);
        self.index.set(end);
        self.records.set(self.records.get() + 1);
    }

    /// Moves to `chunk` (`None`: no chunk, recording nothing), noting how many records the one
    /// it leaves holds.
    fn switch_to(&self, chunk: Option<&Arc<Chunk>>, leaving: Option<&Chunk>) {
        if let Some(old) = leaving {
            old.set_records(self.records.get());
        }
        self.chunk.set(chunk.map_or(std::ptr::null(), Arc::as_ptr));
        self.capacity.set(chunk.map_or(0, |c| c.capacity()));
        self.index.set(0);
        self.records.set(0);
        self.base.set(Base::ZERO);
        self.serial.set(self.serial.get().wrapping_add(1));
    }
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
                    if h.has_room() {
                        // SAFETY: as in `push`; `owned` still holds the chunk (we are in its
                        // owner's destructor, before the fields drop).
                        unsafe { h.write(&rec) };
                    }
                }
            }
        });
        // The chunk is about to lose this owner: make the hot path stop writing to it (a later
        // event, e.g. from another thread-local's destructor, finds `Cold` gone and is dropped).
        let _ = HOT.try_with(|h| {
            let owned = self.owned.borrow();
            h.switch_to(None, owned.as_ref().map(|(_, c)| &**c));
            h.generation.set(0);
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
            base: Cell::new(Base::ZERO),
            records: Cell::new(0),
            serial: Cell::new(0),
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

/// [`record`]'s work when a recording is on, out of line (one copy for the rarer events; the
/// frequent ones have copies of their own with their fixed fields folded in: [`spawn_now`],
/// [`task_begin_on`], [`task_end_on`], [`zone_begin_on`], [`zone_end_on`]).
#[inline(never)]
fn record_on(gen: u64, kind: u32, a: u64, b: u64, c: u32) {
    record_now(gen, kind, a, b, c);
}

#[inline(always)]
fn record_now(gen: u64, kind: u32, a: u64, b: u64, c: u32) {
    let ts = clock::now();
    push(gen, Record { ts, a, b, kind, c });
}

/// Records an event that belongs to the one just recorded on this thread (a task's spawn
/// location after its begin), without reading the clock: it takes the previous record's time.
#[inline(never)]
pub(crate) fn record_untimed(kind: u32, a: u64, b: u64, c: u32) {
    let gen = generation();
    if gen == 0 {
        return;
    }
    // The previous record's time, or 0 at the start of a chunk, which the decoder raises to
    // the time of the event before.
    let ts = hot().map_or(0, |h| h.base.get().ts());
    push(gen, Record { ts, a, b, kind, c });
}

/// Names this thread's current chunk (0 before its first): a record that refers to an earlier
/// one of the same serial finds it in the same chunk, so the flight recorder, which drops whole
/// chunks, never keeps the reference without the definition.
pub(crate) fn chunk_serial() -> u64 {
    hot().map_or(0, |h| h.serial.get())
}

/// This thread's cursor. The closure given to the thread-local is kept tiny so that the access
/// inlines (with the whole encoder inside it, `LocalKey::try_with` stayed an out-of-line call).
#[inline(always)]
fn hot() -> Option<&'static Hot> {
    let ptr = HOT.try_with(|h| h as *const Hot).ok()?;
    // SAFETY: `Hot` has no destructor and a `const` initialiser, so it lives until its thread
    // ends; the reference is only used by this thread, within the call that took it (it is never
    // stored or sent).
    Some(unsafe { &*ptr })
}

#[inline(always)]
fn push(gen: u64, rec: Record) {
    let Some(h) = hot() else { return };
    if h.generation.get() != gen || !h.has_room() {
        return push_cold(gen, rec.ts, rec.kind, rec.a, rec.b, rec.c);
    }
    let Some((word, n, next)) = encode_short(&rec, h.base.get()) else {
        return push_cold(gen, rec.ts, rec.kind, rec.a, rec.b, rec.c);
    };
    // SAFETY: room means a non-zero capacity, so `chunk` is set and kept alive by `COLD.owned`
    // (whose drop zeroes the capacity first); this thread is its only writer.
    unsafe { h.write_short(word, n, next) };
}

/// [`push`] when this thread must register or move to a new chunk first, or the record has no
/// short form: out of line, and given the record's fields in registers, so that the hot path
/// makes only tail calls and keeps no register for after them.
#[cold]
#[inline(never)]
fn push_cold(gen: u64, ts: u64, kind: u32, a: u64, b: u64, c: u32) {
    let Some(h) = hot() else { return };
    if (h.generation.get() != gen || !h.has_room()) && !make_room(h, gen) {
        return;
    }
    // SAFETY: as in `push`.
    unsafe { h.write(&Record { ts, a, b, kind, c }) };
}

/// Whether this thread's current chunk is the one of serial `serial` (`chunk_serial`) and has
/// room for a record in recording `gen`: a record that refers to a definition made in that chunk
/// can go in it.
#[inline(always)]
pub(crate) fn room_in_chunk(gen: u64, serial: u64) -> bool {
    hot().is_some_and(|h| h.generation.get() == gen && h.serial.get() == serial && h.has_room())
}

/// Makes room in this thread's current chunk for two records (a definition and the record
/// that refers to it, `hooks::spawn`'s locations), moving to a new chunk if there is room for
/// one only, so that both land in the same chunk; false if nothing can be recorded now.
#[cold]
#[inline(never)]
pub(crate) fn room_for_two(gen: u64) -> bool {
    let Some(h) = hot() else { return false };
    let two = |h: &Hot| h.capacity.get() - h.index.get() >= 2 * MAX_ENCODED;
    // A new chunk has room for at least 16 records, of which `refill` writes at most five.
    (h.generation.get() == gen && two(h)) || (make_room(h, gen) && two(h))
}

/// Registers this thread or moves it to a new chunk; true if there is room for a record now.
/// Out of line, so the hot path keeps its registers.
#[cold]
#[inline(never)]
fn make_room(h: &Hot, gen: u64) -> bool {
    // `try_with`: once `COLD` is destroyed (thread exit) events are dropped.
    let _ = COLD.try_with(|cold| refill(h, cold, gen));
    h.generation.get() == gen && h.has_room()
}

/// Registers this thread for generation `gen`, or adds a chunk to its buffer.
#[cold]
#[inline(never)]
fn refill(l: &Hot, cold: &Cold, gen: u64) {
    let mut owned = cold.owned.borrow_mut();
    // Registered in this call, and born after the recording started.
    let mut born = false;
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
            born = reg
                .live_at_start
                .as_ref()
                .is_some_and(|live| live.binary_search(&tid).is_err());
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
    // The chunk this thread leaves (its last one in this recording), if any.
    let leaving = owned
        .as_ref()
        .filter(|_| !registering)
        .map(|(_, c)| c.clone());
    let Some(chunk) = buf.grow(previous, cap) else {
        // Over the cap: no chunk; this event and every later one of this thread is dropped.
        buf.drop_capped();
        l.switch_to(None, leaving.as_deref());
        l.generation.set(gen);
        let empty = Arc::new(Chunk::empty());
        *owned = Some((buf, empty));
        return;
    };
    l.switch_to(Some(&chunk), leaving.as_deref());
    l.generation.set(gen);
    *owned = Some((buf, chunk.clone()));
    let ts = clock::now();
    if registering {
        if let Some(index) = cold.worker.get() {
            // SAFETY: as in `push`; a new chunk has room for at least 16 records, and this is
            // the first of at most five written here.
            unsafe { l.write(&Record::worker(ts, index)) };
        }
    }
    // The slow tick: an OS sample at registration and at a new chunk (at most one per ms).
    if !os::due() && !registering {
        return;
    }
    let sample = os::sample_records(ts, None);
    let birth = os::birth_records(ts);
    let births = if born && !sample.is_empty() {
        birth.len()
    } else {
        0
    };
    for rec in birth[..births].iter().chain(&sample) {
        // SAFETY: as in `push`; a new chunk has room for at least 16 records, so the worker
        // record, the two birth records and the sample's two fit.
        unsafe { l.write(rec) };
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

/// The longest text a message or dynamic zone name keeps, in bytes (longer ones are cut at a
/// character boundary).
pub(crate) const MAX_TEXT: usize = 1024;

/// Bytes of text one `TEXT` record carries.
const TEXT_BYTES: usize = 24;

/// Records `kind` (with `b`, and `c` = the text's length) followed by the text in `TEXT`
/// records, all in one chunk (so the flight recorder keeps or drops them together, and no OS
/// sample of a new chunk comes between them).
pub(crate) fn record_text(kind: u32, b: u64, text: &str) {
    record_text_then(kind, b, text, false);
}

/// [`record_text`], then (`allocs`) an `ALLOC_MARK` of a span that just began, in the same chunk.
pub(crate) fn record_text_then(kind: u32, b: u64, text: &str, allocs: bool) {
    let gen = generation();
    if gen == 0 {
        return;
    }
    let mut end = text.len().min(MAX_TEXT);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let bytes = &text.as_bytes()[..end];
    let mut recs = [Record::default(); 2 + MAX_TEXT.div_ceil(TEXT_BYTES)];
    recs[0] = Record {
        ts: clock::now(),
        a: 0,
        b,
        kind,
        c: bytes.len() as u32,
    };
    let mut n = 1;
    for piece in bytes.chunks(TEXT_BYTES) {
        let mut buf = [0u8; TEXT_BYTES];
        buf[..piece.len()].copy_from_slice(piece);
        let word = |i: usize| u64::from_le_bytes(buf[i * 8..i * 8 + 8].try_into().expect("8"));
        recs[n] = Record {
            ts: word(0),
            a: word(1),
            b: word(2),
            kind: super::raw::TEXT,
            c: piece.len() as u32,
        };
        n += 1;
    }
    if allocs {
        let (count, bytes) = crate::alloc::thread_counts();
        recs[n] = Record {
            ts: recs[0].ts,
            a: count,
            b: bytes,
            kind: super::raw::ALLOC_MARK,
            c: 1,
        };
        n += 1;
    }
    push_group(gen, &recs[..n]);
}

/// The text carried by the `TEXT` records that follow a header of `len` bytes.
pub(crate) fn text_of(len: u32, texts: &mut dyn Iterator<Item = Record>) -> String {
    let mut bytes = Vec::with_capacity(len as usize);
    while bytes.len() < len as usize {
        let Some(r) = texts.next() else { break };
        let mut buf = [0u8; TEXT_BYTES];
        buf[..8].copy_from_slice(&r.ts.to_le_bytes());
        buf[8..16].copy_from_slice(&r.a.to_le_bytes());
        buf[16..].copy_from_slice(&r.b.to_le_bytes());
        bytes.extend_from_slice(&buf[..(r.c as usize).min(TEXT_BYTES)]);
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Records `recs` (timestamps taken by the caller) one after another in one chunk, or none of
/// them if they do not fit in a fresh chunk (the memory cap, or a tiny flight-recorder chunk).
pub(crate) fn push_group(gen: u64, recs: &[Record]) {
    let room = recs.len() * MAX_ENCODED;
    let _ = HOT.try_with(|h| {
        if h.generation.get() != gen || h.capacity.get() - h.index.get() < room {
            let _ = COLD.try_with(|cold| refill(h, cold, gen));
        }
        if h.generation.get() != gen || h.capacity.get() - h.index.get() < room {
            return;
        }
        for rec in recs {
            // SAFETY: as in `push`; the room for every record of the group was checked above.
            unsafe { h.write(rec) };
        }
    });
}

/// Records `kind` and, right after it in the same chunk, an `ALLOC_MARK` with the thread's
/// allocation counts (`begin`: the span just began; else it is about to end, and the mark comes
/// first).
#[inline(never)]
pub(crate) fn record_with_allocs(kind: u32, a: u64, b: u64, c: u32, begin: bool) {
    let gen = generation();
    if gen == 0 {
        return;
    }
    let (count, bytes) = crate::alloc::thread_counts();
    let ts = clock::now();
    let span = Record { ts, a, b, kind, c };
    let mark = Record {
        ts,
        a: count,
        b: bytes,
        kind: super::raw::ALLOC_MARK,
        c: if begin { 1 } else { 2 },
    };
    if begin {
        push_group(gen, &[span, mark]);
    } else {
        push_group(gen, &[mark, span]);
    }
}

/// A spawn of job `flow` from the location with id `location` (0: none), for a caller that is
/// itself out of line (`hooks::spawn`'s): the recording path inlined there, with the fields a
/// spawn never varies fixed.
#[inline(always)]
pub(crate) fn spawn_now(gen: u64, flow: u64, location: u32) {
    record_now(gen, super::raw::SPAWN, flow, 0, location);
}

/// A task's begin (`from`: `flow` is the id its spawn recorded), out of line with the fields a
/// task's begin never varies fixed, so that the encoder's tests on them fold away.
#[inline(never)]
pub(crate) fn task_begin_on(gen: u64, flow: u64, from: bool, code: u32) {
    // `code` is a `TaskKind`'s, under 64: the mask tells the encoder it fits one byte.
    record_span_now::<{ super::raw::TASK_BEGIN }, true>(gen, flow, from as u64, code & 0x3f);
}

/// A task's end: nothing but its time.
#[inline(never)]
pub(crate) fn task_end_on(gen: u64) {
    record_span_now::<{ super::raw::TASK_END }, false>(gen, 0, 0, 0);
}

/// Records a span's begin or end (`KIND`): with the thread's allocation counts when a
/// `alloc::Counting` allocator is in use, else as [`record`].
#[inline(always)]
fn record_span_now<const KIND: u32, const BEGIN: bool>(gen: u64, a: u64, b: u64, c: u32) {
    if crate::alloc::counting() {
        record_with_allocs(KIND, a, b, c, BEGIN);
    } else {
        record_now(gen, KIND, a, b, c);
    }
}

/// A zone's begin (its name's address and length), with the fields a zone never uses fixed,
/// so that the encoder's tests on them fold away. Inlined into the zone's site: the call and
/// its register saves were a tenth of a zone's cost (33 ns a zone as a call, 29.5 ns inlined,
/// in a user's crate on the 2-vCPU VM, against 20.4 ns for its two clock reads).
#[inline]
pub(crate) fn zone_begin_on(gen: u64, ptr: u64, len: u32) {
    record_span_now::<{ super::raw::ZONE_BEGIN }, true>(gen, ptr, 0, len);
}

/// A zone's end: nothing but its time.
#[inline]
pub(crate) fn zone_end_on(gen: u64) {
    record_span_now::<{ super::raw::ZONE_END }, false>(gen, 0, 0, 0);
}
