//! The untyped part of a task: its [`Header`] (state word, vtable, the JoinHandle's waker),
//! the [`Scheduled`] prefix that adds the pool it runs on, and the [`JobRef`] that polls it
//! ([`job_ref`]). The pool's queues (the run-next slots) and the JoinHandle hold tasks through
//! their header alone, knowing neither the future's type nor the scheduler's; the typed cell is
//! in `cell.rs`.

use std::ptr::NonNull;
use std::task::Waker;

use crate::job::JobRef;
use crate::loom::cell::UnsafeCell;
use crate::loom::sync::Arc;
use crate::task::state::State;

/// The typed operations of one kind of task.
pub(crate) struct Vtable {
    /// Polls the future once (the task's job).
    pub(crate) poll: unsafe fn(NonNull<Header>),
    /// Frees the cell (the last reference went).
    pub(crate) dealloc: unsafe fn(NonNull<Header>),
    /// Moves the output into `*mut Option<Result<Output, Payload>>`.
    pub(crate) read_output: unsafe fn(NonNull<Header>, *mut ()),
}

/// The untyped head of every task cell.
#[repr(C)]
pub(crate) struct Header {
    pub(crate) state: State,
    pub(crate) vtable: &'static Vtable,
    /// The JoinHandle's waker; who may touch it is said in `super::state`.
    pub(crate) join_waker: UnsafeCell<Option<Waker>>,
    /// References taken (+) and dropped (-) by the waker on the polling thread during the
    /// current poll, not yet in the state word; touched only by the thread holding RUNNING
    /// ("References taken during the task's own poll" in `super::state`).
    pub(crate) local: UnsafeCell<isize>,
}

/// The job that polls `task` once; it owns one reference and the SCHEDULED bit.
#[inline]
pub(crate) fn job_ref(task: NonNull<Header>) -> JobRef {
    // SAFETY: `run_job` is sound to call once per SCHEDULED transition, on any thread (the
    // future and its output are Send); the reference the job owns keeps the cell alive.
    unsafe { JobRef::from_raw(task.as_ptr() as *const (), run_job) }
}

/// The recorder's id for the task: its address, unique while it lives.
#[inline]
pub(crate) fn task_id(task: NonNull<Header>) -> u64 {
    task.as_ptr() as usize as u64
}

/// # Safety
/// `data` is a task cell with SCHEDULED set, whose reference this job owns.
unsafe fn run_job(data: *const ()) {
    let task = NonNull::new(data as *mut Header).expect("run_job: null task");
    // SAFETY: the job's reference keeps the header alive; the vtable matches the cell.
    unsafe { (task.as_ref().vtable.poll)(task) }
}

/// The header and the pool a task runs on, the start of every task cell (`cell::Cell`, whose
/// first field this is), so that code that knows the scheduler's type but not the future's
/// (the waker) reaches the scheduler.
#[repr(C)]
pub(crate) struct Scheduled<S> {
    pub(crate) header: Header,
    /// The pool the task runs on (where a wake from outside its workers injects it).
    pub(crate) scheduler: Arc<S>,
}

/// The scheduler of `task`.
///
/// # Safety
/// `task` is a live cell whose scheduler has the type `S` (a `Cell<_, S>`, which starts with a
/// `Scheduled<S>`; both are `repr(C)`).
#[inline]
pub(crate) unsafe fn scheduler<'a, S>(task: NonNull<Header>) -> &'a Arc<S> {
    // SAFETY: the caller's reference keeps the cell alive; a `Cell<_, S>` begins with a
    // `Scheduled<S>` (`repr(C)`, first field), so the cast reads its own field.
    unsafe { &task.cast::<Scheduled<S>>().as_ref().scheduler }
}
