//! The task cell: one heap allocation per spawned future holding its [`State`], the future
//! (later its output), and the JoinHandle's waker; and what a worker does when it runs one.
//!
//! A task is queued as a `JobRef` whose data pointer is the cell and whose function is
//! `header::run_job`, so the deques, the injector and the run-next slots carry futures exactly like
//! fork-join work. The cell names no part of the pool: it holds its scheduler as an `Arc<S>` of a
//! [`Schedule`] type (the pool's `Registry`, `pool/schedule.rs`). The typed parts (polling the
//! future, reading its output, freeing the cell) go through a small vtable, so wakers and the
//! JoinHandle need not know the future's type.
//!
//! Panics from the user's values: the poll runs inside `catch_unwind`, and so does every drop of
//! what the cell holds (the future, an output nobody reads, a panic payload), wherever the last
//! reference goes ([`dealloc`]); a panic there is reported to the pool like a detached task's.
//!
//! Cancellation: a task run after its pool is gone (every worker exited; the wake that queued it
//! found no worker, see the pool's `Registry::worker_exited`) is not polled. Its future is dropped
//! on the thread that runs it (the waker's, or the last worker's), where a panic is caught, and its
//! outcome is the [`unwind::Cancelled`] marker, which `JoinHandle::join` and `.await` turn into a
//! panic saying the task was cancelled (as Tokio's `JoinError::Cancelled` reports a task of a
//! runtime that was shut down). A task nobody wakes again is never run; its future is dropped with
//! its last waker or handle.

use std::future::Future;
use std::mem::ManuallyDrop;
use std::pin::Pin;
use std::ptr::NonNull;
use std::task::{Context, Poll};

use crate::loom::cell::UnsafeCell;
use crate::loom::sync::Arc;
use crate::task::header::{job_ref, task_id, Header, Scheduled, Vtable};
use crate::task::schedule::Schedule;
use crate::task::state::{Idle, State};
use crate::task::waker;
use crate::trace::hooks::{self, TaskSpan};
use crate::trace::TaskKind;
use crate::unwind::{self, Payload};

/// What the cell holds besides the header.
enum Stage<F: Future> {
    Running(F),
    Finished(Result<F::Output, Payload>),
    Consumed,
}

#[repr(C)]
struct Cell<F: Future, S> {
    /// First: the header, then the scheduler (`Scheduled`, read through a `Header` pointer by
    /// `header::scheduler`).
    head: Scheduled<S>,
    /// Touched by the worker holding RUNNING, then (after COMPLETE) by the JoinHandle, or by
    /// the completing worker when there is no handle, and last by `dealloc`.
    stage: UnsafeCell<Stage<F>>,
}

impl<F, S> Cell<F, S>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
    S: Schedule,
{
    const VTABLE: Vtable = Vtable {
        poll: poll::<F, S>,
        dealloc: dealloc::<F, S>,
        read_output: read_output::<F, S>,
    };
}

/// Allocates a task for `future` on `scheduler`, queues it, and returns its cell (the
/// reference the JoinHandle owns; the queued job owns the other).
pub(crate) fn spawn<F, S>(scheduler: &Arc<S>, future: F) -> NonNull<Header>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
    S: Schedule,
{
    let cell = Box::new(Cell {
        head: Scheduled {
            header: Header {
                state: State::new(),
                vtable: &Cell::<F, S>::VTABLE,
                join_waker: UnsafeCell::new(None),
                local: UnsafeCell::new(0),
            },
            scheduler: Arc::clone(scheduler),
        },
        stage: UnsafeCell::new(Stage::Running(future)),
    });
    let task = NonNull::from(Box::leak(cell)).cast::<Header>();
    scheduler.task_spawned();
    let job = job_ref(task);
    hooks::spawn(job.id());
    scheduler.push_spawned(job);
    task
}

/// Polls the future once (the task's job, through its vtable), timing the poll if the pool
/// times them.
///
/// # Safety
/// Called through `header::run_job` only, with `task` a `Cell<F, S>`.
unsafe fn poll<F, S>(task: NonNull<Header>)
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
    S: Schedule,
{
    // SAFETY: the job's reference keeps the cell alive until the poll.
    let timed = unsafe { crate::task::header::scheduler::<S>(task) }.times_tasks();
    // SAFETY: forwarded.
    unsafe { poll_once::<F, S>(task) };
    if timed {
        // After the poll (which may have run other jobs inside it, each counted on its own).
        S::note_poll();
    }
}

/// Polls the future once and moves the task to its next state.
///
/// # Safety
/// Called through [`poll`] only, with `task` a `Cell<F, S>`.
unsafe fn poll_once<F, S>(task: NonNull<Header>)
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
    S: Schedule,
{
    // SAFETY: the job's reference keeps the cell alive until this function drops it.
    let cell = unsafe { task.cast::<Cell<F, S>>().as_ref() };
    let header = &cell.head.header;
    let scheduler = &*cell.head.scheduler;
    header.state.transition_to_running();
    let span = TaskSpan::enter(TaskKind::Future, Some(task_id(task)));
    // SAFETY: the job's reference outlives the poll, so this waker may borrow it (it is never
    // dropped, only cloned, which adds a reference of its own).
    let waker = ManuallyDrop::new(unsafe { waker::borrowed::<S>(task) });
    let mut cx = Context::from_waker(&waker);
    let polling = waker::Polling::enter(task);
    let polled = if scheduler.gone() {
        // Cancellation (module docs): the pool is gone; the future is dropped below, where a
        // panic is caught, and the handle reports the cancellation.
        Err(Box::new(unwind::Cancelled) as Payload)
    } else {
        unwind::halt_unwinding(|| {
            cell.stage.with_mut(|stage| {
                // SAFETY: RUNNING gives this thread the stage.
                match unsafe { &mut *stage } {
                    Stage::Running(future) => {
                        // SAFETY: the future is never moved out of the cell while it is
                        // `Running` (it is dropped in place), so pinning it where it is is sound.
                        unsafe { Pin::new_unchecked(future) }.poll(&mut cx)
                    }
                    _ => unreachable!("poll: the task has no future"),
                }
            })
        })
    };
    let result = match polled {
        Ok(Poll::Pending) => {
            drop(polling);
            drop(span);
            match header.state.transition_to_idle(take_local(header)) {
                Idle::Rescheduled => waker::reschedule::<S>(task),
                // SAFETY: the last reference went with the transition.
                Idle::Idle { last: true } => unsafe { dealloc::<F, S>(task) },
                Idle::Idle { last: false } => {}
            }
            return;
        }
        Ok(Poll::Ready(value)) => Ok(value),
        Err(payload) => Err(payload),
    };
    // Drop the future before publishing the output; a panic in its destructor becomes the
    // task's panic if it had none.
    let dropped = unwind::halt_unwinding(|| {
        // SAFETY: still RUNNING: the stage is ours.
        cell.stage
            .with_mut(|stage| unsafe { *stage = Stage::Consumed })
    });
    let result = match (result, dropped) {
        (Ok(value), Err(payload)) => {
            scheduler.drop_user_value(value);
            Err(payload)
        }
        (Err(payload), Err(second)) => {
            // The task's own panic goes to its handle; the destructor's is reported here.
            scheduler.handle_panic(second);
            Err(payload)
        }
        (result, Ok(())) => result,
    };
    // SAFETY: still RUNNING; the old value is `Consumed`, nothing to drop.
    cell.stage
        .with_mut(|stage| unsafe { std::ptr::write(stage, Stage::Finished(result)) });
    drop(polling);
    drop(span);
    let prev = header.state.transition_to_complete(take_local(header));
    let after = unwind::halt_unwinding(|| {
        if prev.has_join_interest() {
            if prev.has_join_waker() {
                header.join_waker.with(|w| {
                    // SAFETY: JOIN_WAKER was set when the task completed: the handle no longer
                    // writes the cell (see `super::state`), so reading it is shared.
                    if let Some(w) = unsafe { &*w } {
                        w.wake_by_ref();
                    }
                });
            }
        } else {
            // Nobody will read the output: drop it here; a panic goes to the pool's handler,
            // as for a fire-and-forget `spawn`.
            // SAFETY: without a JoinHandle nobody else touches the stage.
            let out = cell
                .stage
                .with_mut(|stage| std::mem::replace(unsafe { &mut *stage }, Stage::Consumed));
            match out {
                // A detached task cancelled with its pool: nothing to report.
                Stage::Finished(Err(payload)) if payload.is::<unwind::Cancelled>() => {}
                Stage::Finished(Err(payload)) => scheduler.handle_panic(payload),
                other => scheduler.drop_user_value(other),
            }
        }
    });
    if let Err(payload) = after {
        scheduler.handle_panic(payload);
    }
    if header.state.ref_dec() {
        // SAFETY: that was the last reference.
        unsafe { dealloc::<F, S>(task) };
    }
}

/// Reads and resets the poll's local reference count, to fold it into the state word.
#[inline]
fn take_local(header: &Header) -> isize {
    // SAFETY: called by the polling thread, which still holds RUNNING, after its `Polling`
    // guard is gone (no waker call on this thread counts locally any more).
    header
        .local
        .with_mut(|l| unsafe { std::mem::replace(&mut *l, 0) })
}

/// Frees the cell, with what it still holds (a future never finished, an output nobody read, the
/// handle's waker). It runs wherever the last reference goes: a worker, a waker's drop, the
/// JoinHandle's drop. So the destructors run where a panic is caught, and such a panic is
/// reported to the pool like a detached task's (`Schedule::drop_user_value`): it never unwinds
/// through a worker's loop or out of `JoinHandle::drop`.
///
/// # Safety
/// `task` is a `Cell<F, S>` whose last reference was just dropped.
unsafe fn dealloc<F, S>(task: NonNull<Header>)
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
    S: Schedule,
{
    // SAFETY: the cell came from Box::leak in `spawn`, and nobody refers to it any more.
    let cell = unsafe { Box::from_raw(task.cast::<Cell<F, S>>().as_ptr()) };
    // The cell's own reference goes with it; this one reports a panic of its drop.
    let scheduler = Arc::clone(&cell.head.scheduler);
    scheduler.task_freed();
    scheduler.drop_user_value(cell);
}

/// # Safety
/// Called by the JoinHandle only, after it saw COMPLETE with its interest registered; `dst`
/// points to an `Option<Result<F::Output, Payload>>`.
unsafe fn read_output<F, S>(task: NonNull<Header>, dst: *mut ())
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
    S: Schedule,
{
    // SAFETY: the handle's reference keeps the cell alive.
    let cell = unsafe { task.cast::<Cell<F, S>>().as_ref() };
    // SAFETY: after COMPLETE with join interest, only the handle touches the stage.
    let stage = cell
        .stage
        .with_mut(|stage| std::mem::replace(unsafe { &mut *stage }, Stage::Consumed));
    let Stage::Finished(result) = stage else {
        panic!("JoinHandle polled again after it returned the output");
    };
    // SAFETY: the caller passes a pointer to the matching Option.
    unsafe { *(dst as *mut Option<Result<F::Output, Payload>>) = Some(result) };
}
