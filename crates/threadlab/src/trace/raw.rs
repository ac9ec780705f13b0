//! Record kinds: how `Record { a, b, c }` is read for each (see `decode.rs`).
//! Names are `&'static str` stored as pointer (`a`) and length (`c`), interned at `stop`.

/// a = name ptr, c = name len.
pub(crate) const ZONE_BEGIN: u32 = 1;
pub(crate) const ZONE_END: u32 = 2;
/// c = TaskKind code, a = raw flow id, b = 1 if a flow is given.
pub(crate) const TASK_BEGIN: u32 = 3;
pub(crate) const TASK_END: u32 = 4;
/// a = raw flow id; c = the id of its spawn location (`SPAWN_LOCATION`), 0 for none.
pub(crate) const SPAWN: u32 = 5;
/// c = victim worker.
pub(crate) const STEAL_ATTEMPT: u32 = 6;
/// c = victim worker.
pub(crate) const STEAL: u32 = 7;
pub(crate) const SPIN_BEGIN: u32 = 8;
pub(crate) const SPIN_END: u32 = 9;
pub(crate) const PARK_BEGIN: u32 = 10;
pub(crate) const PARK_END: u32 = 11;
/// c = woken worker.
pub(crate) const WAKE: u32 = 12;
pub(crate) const INJECTOR_PUSH: u32 = 13;
/// a = name ptr, c = name len, b = value (i64 as u64).
pub(crate) const COUNTER: u32 = 14;
/// a = name ptr, c = name len, b = lock id.
pub(crate) const LOCK_WAIT: u32 = 15;
/// a = name ptr, c = name len, b = lock id.
pub(crate) const LOCK_ACQUIRED: u32 = 16;
/// a = name ptr, c = name len, b = lock id.
pub(crate) const LOCK_RELEASED: u32 = 17;
/// Follows LOCK_RELEASED when a thread was waiting: a = hand-off sequence, b = lock id.
pub(crate) const LOCK_HANDOFF_OUT: u32 = 18;
/// Follows LOCK_ACQUIRED after a wait: a = hand-off sequence, b = lock id.
pub(crate) const LOCK_HANDOFF_IN: u32 = 19;
/// a = on-CPU ns, b = run-queue ns.
pub(crate) const OS_SCHED: u32 = 20;
/// a = voluntary, b = involuntary switches.
pub(crate) const OS_SWITCHES: u32 = 21;
/// c = worker index of this thread.
pub(crate) const WORKER: u32 = 22;
/// a = name ptr, c = name len: a frame of that frame set ends.
pub(crate) const FRAME_MARK: u32 = 23;
/// a = name ptr, c = name len: a discontinuous frame starts.
pub(crate) const FRAME_START: u32 = 24;
/// a = name ptr, c = name len, b = the value's `f64` bits.
pub(crate) const PLOT: u32 = 25;
/// b = colour, c = text length; the text follows in `TEXT` records.
pub(crate) const MESSAGE: u32 = 26;
/// a = text ptr, c = text len (a `&'static str`), b = colour.
pub(crate) const MESSAGE_STATIC: u32 = 27;
/// c = name length; a zone begins whose name follows in `TEXT` records.
pub(crate) const ZONE_BEGIN_TEXT: u32 = 28;
/// c = colour of the innermost open zone.
pub(crate) const ZONE_COLOR: u32 = 29;
/// Up to 24 bytes of the text of the record before: `ts`, `a`, `b` in little-endian order,
/// c = how many of them are text. Its `ts` is not a timestamp.
pub(crate) const TEXT: u32 = 30;
/// a = the thread's allocations so far, b = its bytes so far (`alloc::Counting`); c = 1: taken
/// right after a zone or task began, c = 2: right before one ends.
pub(crate) const ALLOC_MARK: u32 = 31;
/// An argument of the open zone or task: a = key ptr, c = key len (low 16 bits) | value len
/// (high 16 bits), b = the value's first 8 bytes; the rest follows in `ARG_BYTES` records.
pub(crate) const ARG: u32 = 40;
/// The next 20 bytes of an `ARG`'s value: a, b (little-endian), then c.
pub(crate) const ARG_BYTES: u32 = 41;
/// The running task's name: a = ptr, c = len; the time of the record before it.
pub(crate) const TASK_NAME: u32 = 42;
/// The running task's spawn location: a = file ptr, c = file len, b = line << 16 | column
/// (`hooks::location_code`). Like `TASK_NAME`, it carries the time of the record before it.
pub(crate) const TASK_LOCATION: u32 = 43;
/// A spawn location this thread spawns from, defined once per chunk for the `SPAWN` records
/// that follow it (their `c`): a = file ptr, b = line << 16 | column (`hooks::location_code`),
/// c = file len (low 16 bits) | the id (high 16 bits, from 1). The time of the record before it.
pub(crate) const SPAWN_LOCATION: u32 = 44;

/// One recorded event, as written on the hot path. `kind` says how to read `a`, `b` and `c`
/// (see the kinds above).
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
            kind: WORKER,
            c: index,
        }
    }
}
