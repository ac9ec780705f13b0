//! [`Schedule`]: what a future task needs of the pool it runs on, so that the task's files
//! (`cell.rs`, `waker.rs`) name no part of the pool and the pool's files may name the task's
//! (a run-next slot holds a task's [`Header`]). The pool's `Registry` implements it
//! (`pool/schedule.rs`); the task's code is generic over it and monomorphised for that one
//! implementation, so every call is static, as before (Tokio's `Schedule` trait in its
//! `runtime/task/mod.rs` separates its tasks from its schedulers in the same way).

use std::ptr::NonNull;
use std::task::RawWakerVTable;

use crate::job::JobRef;
use crate::task::header::Header;
use crate::unwind::Payload;

/// The pool a task runs on, as the task sees it. Every method is called with the task's own
/// scheduler (the one it was spawned on, which its cell holds).
pub(crate) trait Schedule: Send + Sync + Sized + 'static {
    /// The wakers' vtable for tasks of this scheduler: one `static` (`waker::vtable`), so that
    /// every waker of such a task has the same vtable address and `Waker::will_wake` holds
    /// between two of them.
    fn waker_vtable() -> &'static RawWakerVTable;

    /// A task was spawned on this pool (the count of alive futures).
    fn task_spawned(&self);

    /// A task of this pool was freed.
    fn task_freed(&self);

    /// Queues the first poll of a spawned task: on the current worker if it is one of this
    /// pool's, else through the injector.
    fn push_spawned(&self, job: JobRef);

    /// Queues a task a wake just scheduled (the job owns the reference the wake provided).
    fn push_woken(&self, task: NonNull<Header>);

    /// Queues again a task that was woken during its own poll (it keeps its job's reference).
    fn push_yielded(&self, task: NonNull<Header>);

    /// Whether each poll's time is recorded (`Builder::time_histograms`); if so, the task calls
    /// [`Schedule::note_poll`] after the poll.
    fn times_tasks(&self) -> bool;

    /// A poll ended on the current thread (its time goes to the poll histogram).
    fn note_poll();

    /// Every worker of the pool exited: a task run now is cancelled, not polled.
    fn gone(&self) -> bool;

    /// A panic of a task nobody awaits, or of a value's drop: to the pool's panic handler.
    fn handle_panic(&self, payload: Payload);

    /// Drops a user's value where a panic of its destructor is caught and reported.
    fn drop_user_value<T>(&self, value: T);
}
