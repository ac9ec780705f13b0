//! The tasks' `Waker` (one vtable for every task type of a scheduler: the data pointer is the
//! task cell, and each waker holds one reference), and when a woken or re-queued task goes to
//! its scheduler ([`Schedule`]), which says where (the pool's, `pool/schedule.rs`):
//!
//! - woken on a worker of the task's pool: that worker's run-next slot (`pool/run_next.rs`), so
//!   the task runs right after the one that woke it, on a warm cache;
//! - woken anywhere else (a plain thread, another pool's worker): the pool's injector, with the
//!   fence and the wake of `Sleep::notify_work`;
//! - woken during its own poll (a yield, or a wake from elsewhere while it ran): the back of the
//!   pool's queues ([`reschedule`]), so it cannot hold its worker against the work waiting there.
//!
//! The functions are generic over the scheduler and instantiated for the pool's alone, so the
//! wake path makes no dynamic call; the vtable is a `static` of the scheduler's
//! ([`Schedule::waker_vtable`], built by [`vtable`]), so its address is one.
//!
//! A clone or drop of a task's waker on the thread that is polling that task, during the poll,
//! changes the cell's plain `local` count instead of the state word ([`Polling`]; the fold and
//! why it is sound: "References taken during the task's own poll" in `super::state`).

use std::cell::Cell;
use std::ptr::NonNull;
use std::task::{RawWaker, RawWakerVTable, Waker};

use crate::task::header::{scheduler, task_id, Header};
use crate::task::schedule::Schedule;
use crate::task::state::Wake;
use crate::trace::hooks;

/// The wakers' vtable for the tasks of scheduler `S`, for its `static` (see the module doc).
pub(crate) const fn vtable<S: Schedule>() -> RawWakerVTable {
    RawWakerVTable::new(clone::<S>, wake::<S>, wake_by_ref::<S>, drop_waker::<S>)
}

thread_local! {
    /// The task this thread is polling now (the innermost, if polls nest), or null.
    static POLLING: Cell<*const Header> = const { Cell::new(std::ptr::null()) };
}

/// This thread polls a task: while it lives, the task's waker clones and drops on this thread
/// count in the cell's `local` count (see `super::state`).
pub(crate) struct Polling {
    outer: *const Header,
}

impl Polling {
    /// Marks `task` as polled by this thread. The caller holds RUNNING for `task` and folds
    /// the local count into the state word after dropping the guard, before it gives RUNNING
    /// up.
    #[inline]
    pub(crate) fn enter(task: NonNull<Header>) -> Polling {
        Polling {
            outer: POLLING.with(|p| p.replace(task.as_ptr())),
        }
    }
}

impl Drop for Polling {
    #[inline]
    fn drop(&mut self) {
        POLLING.with(|p| p.set(self.outer));
    }
}

/// If this thread is polling `data` now, adds `delta` to its local count and returns true.
#[inline]
fn count_locally(data: *const (), delta: isize) -> bool {
    if !std::ptr::eq(POLLING.with(Cell::get), data as *const Header) {
        return false;
    }
    // SAFETY: `data` is the task this thread polls (the `Polling` guard of its poll is alive),
    // so this thread holds RUNNING for it, and only the thread holding RUNNING touches `local`
    // (the next holder starts after the fold, an AcqRel transition of the state word).
    unsafe { header(data) }
        .local
        .with_mut(|l| unsafe { *l += delta });
    true
}

/// A waker for `task` that does not own a reference (wrap it in `ManuallyDrop`).
///
/// # Safety
/// The caller holds a reference to `task` for as long as the waker is used.
pub(crate) unsafe fn borrowed<S: Schedule>(task: NonNull<Header>) -> Waker {
    // SAFETY: the vtable's functions uphold the RawWaker contract for a task pointer.
    unsafe { Waker::from_raw(RawWaker::new(task.as_ptr() as *const (), S::waker_vtable())) }
}

/// # Safety
/// `data` is a live task cell (the caller's waker holds a reference).
unsafe fn header<'a>(data: *const ()) -> &'a Header {
    // SAFETY: forwarded.
    unsafe { &*(data as *const Header) }
}

unsafe fn clone<S: Schedule>(data: *const ()) -> RawWaker {
    if !count_locally(data, 1) {
        // SAFETY: the waker being cloned holds a reference.
        unsafe { header(data) }.state.ref_inc();
    }
    RawWaker::new(data, S::waker_vtable())
}

unsafe fn wake<S: Schedule>(data: *const ()) {
    // SAFETY: a waker's data pointer is a task cell, never null.
    let task = unsafe { NonNull::new_unchecked(data as *mut Header) };
    // SAFETY: the consumed waker held a reference, which `wake_by_val` hands on or drops.
    match unsafe { task.as_ref() }.state.wake_by_val() {
        Wake::Submit => schedule_woken::<S>(task),
        // SAFETY: our reference was the last.
        Wake::Done { last: true } => unsafe { (task.as_ref().vtable.dealloc)(task) },
        Wake::Done { last: false } => {}
    }
}

unsafe fn wake_by_ref<S: Schedule>(data: *const ()) {
    // SAFETY: a waker's data pointer is a task cell, never null.
    let task = unsafe { NonNull::new_unchecked(data as *mut Header) };
    // SAFETY: the waker holds a reference for the whole call.
    if unsafe { task.as_ref() }.state.wake_by_ref() == Wake::Submit {
        schedule_woken::<S>(task);
    }
}

unsafe fn drop_waker<S: Schedule>(data: *const ()) {
    if count_locally(data, -1) {
        // Dropped during the task's own poll: the job's reference keeps it alive.
        return;
    }
    // SAFETY: a waker's data pointer is a task cell, never null.
    let task = unsafe { NonNull::new_unchecked(data as *mut Header) };
    // SAFETY: the dropped waker held a reference until this call.
    if unsafe { task.as_ref() }.state.ref_dec() {
        // SAFETY: it was the last.
        unsafe { (task.as_ref().vtable.dealloc)(task) };
    }
}

/// Queues a task a wake just scheduled (the job owns the reference the wake provided).
fn schedule_woken<S: Schedule>(task: NonNull<Header>) {
    hooks::spawn(task_id(task));
    // SAFETY: the job's reference keeps the cell alive; its scheduler is an `S` (this waker's
    // vtable is `S`'s).
    unsafe { scheduler::<S>(task) }.push_woken(task);
}

/// Queues again a task that was woken during its own poll (it keeps its job's reference).
pub(crate) fn reschedule<S: Schedule>(task: NonNull<Header>) {
    hooks::spawn(task_id(task));
    // SAFETY: the job's reference keeps the cell alive; the caller polled it as a `Cell<_, S>`.
    unsafe { scheduler::<S>(task) }.push_yielded(task);
}
