//! The runtime's hooks into the recorder, public so that other runtimes (the lab's baselines)
//! and tests can record the same events as threadlab's own pool. Each is `#[inline]` and costs
//! one relaxed load and a branch when no recording is on; when one is, it appends one record (2–36
//! bytes, see `codec.rs`) to the calling thread's buffer (see `buffer.rs`), a few nanoseconds
//! beside the `rdtsc` that dates it.
//!
//! # How the pool calls them
//!
//! Every hook records on the *calling* thread's track.
//!
//! - `worker_start(index)` first thing on each worker thread (names the track
//!   `threadlab-worker-<index>` and tells the exporter which thread is worker `index`, so
//!   `steal(victim)` and `wake(woken)` can draw their arrows).
//! - Running a task: `task_begin(kind)` right before calling the task's body and `task_end()`
//!   right after it returns or unwinds (call `task_end` from a drop guard or after
//!   `catch_unwind`, so a panicking task still closes its span). Begin/end pairs must nest.
//! - Spawn → first run: when a job is made runnable (pushed to a deque, the injector or a serial
//!   queue), call `spawn(flow)`; when it starts running, call `task_begin_from(kind, flow)`
//!   instead of `task_begin(kind)`. `flow` is any `u64` that is unique among jobs pending at that
//!   moment: the job's heap address (`ptr as usize as u64`) is the natural choice, since it is
//!   only reused after the job has run. A `join`'s second closure that is popped back by its own
//!   thread may use `task_begin` (no arrow needed) or `task_begin_from` (an arrow to itself).
//!   The runtime's own spawns also carry the task's spawn location: the first spawn a thread
//!   makes from a location in a buffer chunk defines it (a `SPAWN_LOCATION` record, no clock
//!   read), and its spawn records then name it by id.
//! - Stealing: `steal_attempt(victim)` for every attempt on worker `victim`'s deque (successful
//!   or not), then `steal(victim)` when it yielded work; the thief is the calling thread.
//! - Idle: `spin_begin()`/`spin_end()` around the bounded spin before parking;
//!   `park_begin()` right before blocking in the OS and `park_end()` right after waking (these
//!   two also take an OS sample of the thread — on-CPU time, run-queue wait and context switches,
//!   2–3 µs — at most once per millisecond per thread, see `os.rs`).
//! - `wake(woken)` on the thread that unparks worker `woken` (the arrow goes to that worker's next
//!   `park_end`).
//! - `injector_push()` when a job is pushed onto the global injector from outside the pool.
//! - `queue_depth(counter, value)`: a counter track, e.g. `queue_depth("injector", len)`.
//!
//! When the program's global allocator is `alloc::Counting`, task and zone begins and ends also
//! write the thread's allocation counts (one more record each, in the same chunk), which the
//! decoder turns into an `EventKind::Allocs` before each span's end.

use std::cell::{Cell, RefCell};
use std::panic::Location;

use super::intern::raw_name;
use super::raw::Record;
use super::recorder::{generation, record, record_untimed, spawn_now, task_begin_on, task_end_on};
use super::{os, raw};
use threadlab_trace::TaskKind;

/// Whether a recording is on (one relaxed load).
#[inline(always)]
pub fn enabled() -> bool {
    generation() != 0
}

/// Marks the calling thread as pool worker `index` in this and every later recording, and names
/// its track `threadlab-worker-<index>` unless the thread already has a name (a std thread name
/// or [`super::set_thread_name`]).
pub fn worker_start(index: usize) {
    super::recorder::set_worker_index(index as u32);
}

/// A task of kind `kind` starts running on this thread.
#[inline]
pub fn task_begin(kind: TaskKind) {
    let gen = generation();
    if gen != 0 {
        task_begin_on(gen, 0, false, kind.code());
    }
}

/// A task spawned with `spawn(flow)` starts running on this thread.
#[inline]
pub fn task_begin_from(kind: TaskKind, flow: u64) {
    let gen = generation();
    if gen != 0 {
        task_begin_on(gen, flow, true, kind.code());
    }
}

/// A task span on this thread that ends when dropped, also while unwinding; records nothing
/// (and costs one relaxed load) when no recording is on. The pool's own task spans.
pub(crate) struct TaskSpan {
    recorded: bool,
}

impl TaskSpan {
    /// Begins a span of a task of `kind`; `flow` is the id its `spawn` recorded, if any.
    #[inline(always)]
    pub(crate) fn enter(kind: TaskKind, flow: Option<u64>) -> TaskSpan {
        let recorded = enabled();
        if recorded {
            match flow {
                Some(f) => task_begin_from(kind, f),
                None => task_begin(kind),
            }
        }
        TaskSpan { recorded }
    }
}

impl Drop for TaskSpan {
    #[inline(always)]
    fn drop(&mut self) {
        if self.recorded {
            task_end();
        }
    }
}

/// The innermost running task on this thread ends.
#[inline]
pub fn task_end() {
    let gen = generation();
    if gen != 0 {
        task_end_on(gen);
    }
}

/// A job identified by `flow` became runnable (see the module doc for the id).
#[inline]
pub fn spawn(flow: u64) {
    let gen = generation();
    if gen != 0 {
        spawn_on(gen, flow);
    }
}

/// [`spawn`] while recording: the spawn carries the id of its location when the runtime noted
/// one for it ([`spawn_from`]), defined by a `SPAWN_LOCATION` record the first time this
/// thread spawns from that location in its current chunk.
#[inline(never)]
fn spawn_on(gen: u64, flow: u64) {
    let (g, at) = SPAWN_FROM
        .try_with(|s| s.replace((0, std::ptr::null())))
        .unwrap_or((0, std::ptr::null()));
    let id = if g != gen || at.is_null() {
        0
    } else {
        // The location of this thread's previous spawn, still defined in the chunk the spawn
        // will go to (a loop spawning from one place): its id, without the table.
        let (serial, last, id) = LAST_LOCATION.get();
        if std::ptr::eq(last, at) && super::recorder::room_in_chunk(gen, serial) {
            id
        } else {
            // SAFETY: a non-null pointer here came from a `&'static Location` (`spawn_from`).
            location_id_for_spawn(gen, unsafe { &*at })
        }
    };
    spawn_now(gen, flow, id);
}

/// The id `spawn_on` records for `location` when it is not the previous spawn's: made room
/// for the definition and the spawn in one chunk (the flight recorder drops whole chunks, never
/// the one without the other), then looked up or defined; 0 when there is no room.
#[cold]
#[inline(never)]
fn location_id_for_spawn(gen: u64, location: &'static Location<'static>) -> u32 {
    if !super::recorder::room_for_two(gen) {
        return 0;
    }
    let id = location_id(location);
    if id != 0 {
        LAST_LOCATION.set((super::recorder::chunk_serial(), location, id));
    }
    id
}

thread_local! {
    /// The location of the task this thread is about to spawn (`spawn_from`), with the
    /// recording's generation: the next `spawn` on this thread takes it.
    static SPAWN_FROM: Cell<(u64, *const Location<'static>)> =
        const { Cell::new((0, std::ptr::null())) };
    /// The locations this thread spawned from in its current chunk, by id − 1, and that
    /// chunk's serial (`recorder::chunk_serial`).
    static SPAWN_LOCATIONS: RefCell<(u64, Vec<*const Location<'static>>)> =
        const { RefCell::new((0, Vec::new())) };
    /// The location this thread last spawned from, with the serial of the chunk and the id it
    /// has there.
    static LAST_LOCATION: Cell<(u64, *const Location<'static>, u32)> =
        const { Cell::new((0, std::ptr::null(), 0)) };
}

/// Locations a thread keeps ids for in one chunk; past that the table starts again (every
/// location is defined again, once). Four in the crate's tests, so that a test with a few
/// spawn sites fills the table.
const MAX_SPAWN_LOCATIONS: usize = if cfg!(test) { 4 } else { 64 };

/// The task this thread spawns next (its `spawn` follows before any other on this thread)
/// was spawned at `location`: its spawn carries the location, and its run records none
/// (`context::Tag`). Called only while recording; `false` when the location cannot travel
/// that way (a file name past the record's 65,535 bytes), so the run records it as before.
pub(crate) fn spawn_from(location: &'static Location<'static>) -> bool {
    location.file().len() <= 0xffff
        && SPAWN_FROM
            .try_with(|s| s.set((generation(), location as *const _)))
            .is_ok()
}

/// The id of `location` in this thread's current chunk, defining it first if it has none
/// (the chunk has room for the definition and the spawn: `recorder::room_for_two`).
fn location_id(location: &'static Location<'static>) -> u32 {
    let serial = super::recorder::chunk_serial();
    let known = SPAWN_LOCATIONS.try_with(|t| {
        let mut t = t.borrow_mut();
        if t.0 != serial || t.1.len() == MAX_SPAWN_LOCATIONS {
            *t = (serial, Vec::new());
        }
        match t.1.iter().position(|&l| std::ptr::eq(l, location)) {
            Some(i) => (i + 1, true),
            None => {
                t.1.push(location);
                (t.1.len(), false)
            }
        }
    });
    let Ok((id, defined)) = known else {
        return 0;
    };
    if !defined {
        let (ptr, len) = raw_name(location.file());
        record_untimed(
            raw::SPAWN_LOCATION,
            ptr,
            location_code(location.line(), location.column()),
            len | (id as u32) << 16,
        );
    }
    id as u32
}

/// This thread tries to steal from worker `victim`.
#[inline]
pub fn steal_attempt(victim: usize) {
    record(raw::STEAL_ATTEMPT, 0, 0, victim as u32);
}

/// This thread stole work from worker `victim`.
#[inline]
pub fn steal(victim: usize) {
    record(raw::STEAL, 0, 0, victim as u32);
}

/// This thread starts spinning before it parks.
#[inline]
pub fn spin_begin() {
    record(raw::SPIN_BEGIN, 0, 0, 0);
}

/// The spin ends (work found, or about to park).
#[inline]
pub fn spin_end() {
    record(raw::SPIN_END, 0, 0, 0);
}

/// This thread is about to block in the OS.
#[inline]
pub fn park_begin() {
    if enabled() {
        os_sample_if_due();
        record(raw::PARK_BEGIN, 0, 0, 0);
    }
}

/// This thread runs again after a park.
#[inline]
pub fn park_end() {
    if enabled() {
        record(raw::PARK_END, 0, 0, 0);
        os_sample_if_due();
    }
}

/// An OS sample of the calling thread now, registering it in the recording if it was not (see
/// `super::try_start`).
#[cold]
pub(crate) fn os_sample_now() {
    if enabled() {
        for Record { kind, a, b, c, .. } in os::sample_records(0, None) {
            record(kind, a, b, c);
        }
    }
}

#[cold]
#[inline(never)]
fn os_sample_if_due() {
    if os::due() {
        for Record { kind, a, b, c, .. } in os::sample_records(0, None) {
            record(kind, a, b, c);
        }
    }
}

/// This thread wakes worker `woken`.
#[inline]
pub fn wake(woken: usize) {
    record(raw::WAKE, 0, 0, woken as u32);
}

/// A job was pushed onto the injector.
#[inline]
pub fn injector_push() {
    record(raw::INJECTOR_PUSH, 0, 0, 0);
}

/// Counter `counter` now has `value` (drawn as a counter track).
#[inline]
pub fn queue_depth(counter: &'static str, value: i64) {
    if enabled() {
        let (ptr, len) = raw_name(counter);
        record(raw::COUNTER, ptr, value as u64, len);
    }
}

/// Records a user zone's begin; used by [`super::Zone`].
#[inline(always)]
pub(crate) fn zone_begin(name: &'static str) {
    let gen = generation();
    if gen != 0 {
        let (ptr, len) = raw_name(name);
        super::recorder::zone_begin_on(gen, ptr, len);
    }
}

/// Records a user zone's end.
#[inline(always)]
pub(crate) fn zone_end() {
    let gen = generation();
    if gen != 0 {
        super::recorder::zone_end_on(gen);
    }
}

/// `sync::Mutex`: this thread starts waiting for lock `id`.
#[inline]
pub(crate) fn lock_wait(name: &'static str, id: u64) {
    let (ptr, len) = raw_name(name);
    record(raw::LOCK_WAIT, ptr, id, len);
}

/// `sync::Mutex`: this thread holds lock `id`; `handoff` is the hand-off sequence it waited for.
#[inline]
pub(crate) fn lock_acquired(name: &'static str, id: u64, handoff: Option<u64>) {
    let (ptr, len) = raw_name(name);
    record(raw::LOCK_ACQUIRED, ptr, id, len);
    if let Some(seq) = handoff {
        record(raw::LOCK_HANDOFF_IN, seq, id, 0);
    }
}

/// `sync::Mutex`: this thread released lock `id`; `handoff` is set when a thread was waiting.
#[inline]
pub(crate) fn lock_released(name: &'static str, id: u64, handoff: Option<u64>) {
    let (ptr, len) = raw_name(name);
    record(raw::LOCK_RELEASED, ptr, id, len);
    if let Some(seq) = handoff {
        record(raw::LOCK_HANDOFF_OUT, seq, id, 0);
    }
}

/// Begins a zone named `name` on this thread's track without a guard (what a bridge from
/// another instrumentation API calls on a span's entry; pair it with [`zone_exit`]). Costs one
/// relaxed load when no recording is on.
#[inline]
pub fn zone_enter(name: &'static str) {
    if enabled() {
        zone_begin(name);
    }
}

/// Ends the innermost zone begun with [`zone_enter`] (or `zone!`) on this thread.
#[inline]
pub fn zone_exit() {
    zone_end();
}

/// Attaches an argument to the innermost zone or task open on this thread (recorded as
/// [`EventKind::Arg`](super::EventKind::Arg)). The value is copied into the thread's buffer:
/// 8 bytes in the first record, 20 in each further one; keys and values longer than
/// 65,535 bytes are cut there (at a character boundary).
///
/// ```
/// use threadlab::trace::{hooks, EventKind};
/// let rec = threadlab::trace::start();
/// hooks::zone_enter("request");
/// hooks::arg("path", "/index.html");
/// hooks::zone_exit();
/// let trace = rec.stop();
/// let args: Vec<_> = trace.threads()[0].events().iter().filter_map(|e| match e.kind {
///     EventKind::Arg { key, value } => Some((trace.name(key).to_owned(), trace.name(value).to_owned())),
///     _ => None,
/// }).collect();
/// assert_eq!(args, [("path".to_owned(), "/index.html".to_owned())]);
/// ```
#[inline]
pub fn arg(key: &'static str, value: &str) {
    if enabled() {
        arg_on(key, value);
    }
}

#[inline(never)]
fn arg_on(key: &'static str, value: &str) {
    let key = cut(key);
    let value = cut(value).as_bytes();
    let mut first = [0u8; 8];
    let n = value.len().min(8);
    first[..n].copy_from_slice(&value[..n]);
    let c = key.len() as u32 | (value.len() as u32) << 16;
    record(raw::ARG, key.as_ptr() as u64, u64::from_le_bytes(first), c);
    for chunk in value[n..].chunks(20) {
        let mut b = [0u8; 20];
        b[..chunk.len()].copy_from_slice(chunk);
        let word = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let last = u32::from_le_bytes(b[16..20].try_into().expect("4 bytes"));
        record(raw::ARG_BYTES, word(0), word(8), last);
    }
}

/// `s` cut to at most 65,535 bytes at a character boundary (what an `ARG` record's length
/// fields hold).
fn cut(s: &str) -> &str {
    let mut end = s.len().min(u16::MAX as usize);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// A line and column in one number (`TASK_LOCATION`'s `b`): the line above 16 bits, the
/// column (at most 65,535) below, so that it takes three or four bytes in the buffers.
pub(crate) fn location_code(line: u32, column: u32) -> u64 {
    (line as u64) << 16 | column.min(0xffff) as u64
}

/// The running task's name and spawn location, recorded right after its `task_begin` as
/// [`super::ARG_TASK_NAME`] and [`super::ARG_TASK_LOCATION`] arguments; `location` is `None`
/// when its spawn carried it (`spawn_from`: the decoder gives it to the task's begin).
#[inline(never)]
pub(crate) fn task_tag(name: Option<&'static str>, location: Option<&'static Location<'static>>) {
    // Both belong to the task's begin, just recorded: they take its time (no clock read).
    if let Some(name) = name {
        let (ptr, len) = raw_name(name);
        record_untimed(raw::TASK_NAME, ptr, 0, len);
    }
    let Some(location) = location else {
        return;
    };
    let (ptr, len) = raw_name(location.file());
    record_untimed(
        raw::TASK_LOCATION,
        ptr,
        location_code(location.line(), location.column()),
        len,
    );
}
