//! The task cell: one heap allocation per spawned future holding its [`State`], the future
//! (later its output), and the JoinHandle's waker; and what a worker does when it runs one.
//!
//! A task is queued as a [`JobRef`] whose data pointer is the cell and whose function is
//! [`run_job`], so the deques, the injector and the run-next slots carry futures exactly like
//! fork-join work. The typed parts (polling the future, reading its output, freeing the cell) go
//! through a small vtable, so wakers and the JoinHandle need not know the future's type.
//!
//! Panics from the user's values: the poll runs inside `catch_unwind`, and so does every drop of
//! what the cell holds (the future, an output nobody reads, a panic payload), wherever the last
//! reference goes ([`dealloc`]); a panic there is reported to the pool like a detached task's.
//!
//! Cancellation: a task run after its pool is gone (every worker exited; the wake that queued
//! it found no worker, see `Registry::worker_exited`) is not polled. Its future is dropped on
//! the thread that runs it (the waker's, or the last worker's), where a panic is caught, and
//! its outcome is the [`unwind::Cancelled`] marker, which `JoinHandle::join` and `.await` turn
//! into a panic saying the task was cancelled (as Tokio's `JoinError::Cancelled` reports a task
//! of a runtime that was shut down). A task nobody wakes again is never run; its future is
//! dropped with its last waker or handle.

use std::future::Future;
use std::mem::ManuallyDrop;
use std::pin::Pin;
use std::ptr::NonNull;
use std::task::{Context, Poll, Waker};

use crate::job::JobRef;
use crate::loom::cell::UnsafeCell;
use crate::loom::sync::Arc;
use crate::pool::registry::Registry;
use crate::pool::worker::WorkerThread;
use crate::task::state::{Idle, State};
use crate::task::waker;
use crate::trace::hooks::{self, TaskSpan};
use crate::trace::TaskKind;
use crate::unwind::{self, Payload};

/// The typed operations of one kind of task.
pub(crate) struct Vtable {
    /// Polls the future once (the task's job).
    poll: unsafe fn(NonNull<Header>),
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
    /// The pool the task runs on (where a wake from outside its workers injects it).
    pub(crate) registry: Arc<Registry>,
    /// The JoinHandle's waker; who may touch it is said in `super::state`.
    pub(crate) join_waker: UnsafeCell<Option<Waker>>,
    /// References taken (+) and dropped (-) by the waker on the polling thread during the
    /// current poll, not yet in the state word; touched only by the thread holding RUNNING
    /// ("References taken during the task's own poll" in `super::state`).
    pub(crate) local: UnsafeCell<isize>,
}

/// What the cell holds besides the header.
enum Stage<F: Future> {
    Running(F),
    Finished(Result<F::Output, Payload>),
    Consumed,
}

#[repr(C)]
struct Cell<F: Future> {
    header: Header,
    /// Touched by the worker holding RUNNING, then (after COMPLETE) by the JoinHandle, or by
    /// the completing worker when there is no handle, and last by `dealloc`.
    stage: UnsafeCell<Stage<F>>,
}

impl<F> Cell<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    const VTABLE: Vtable = Vtable {
        poll: poll::<F>,
        dealloc: dealloc::<F>,
        read_output: read_output::<F>,
    };
}

/// Allocates a task for `future` on `registry`, queues it, and returns its cell (the reference
/// the JoinHandle owns; the queued job owns the other).
pub(crate) fn spawn<F>(registry: &Arc<Registry>, future: F) -> NonNull<Header>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let cell = Box::new(Cell {
        header: Header {
            state: State::new(),
            vtable: &Cell::<F>::VTABLE,
            registry: Arc::clone(registry),
            join_waker: UnsafeCell::new(None),
            local: UnsafeCell::new(0),
        },
        stage: UnsafeCell::new(Stage::Running(future)),
    });
    let task = NonNull::from(Box::leak(cell)).cast::<Header>();
    registry.task_spawned();
    let job = job_ref(task);
    hooks::spawn(job.id());
    registry.push(job);
    task
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
    // SAFETY: the job's reference keeps the header alive until the poll.
    let timed = unsafe { task.as_ref().registry.times_tasks() };
    // SAFETY: the job's reference keeps the header alive; the vtable matches the cell.
    unsafe { (task.as_ref().vtable.poll)(task) }
    if timed {
        // After the poll (which may have run other jobs inside it, each counted on its own).
        WorkerThread::note_poll();
    }
}

/// Polls the future once and moves the task to its next state.
///
/// # Safety
/// Called through [`run_job`] only, with `task` a `Cell<F>`.
unsafe fn poll<F>(task: NonNull<Header>)
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    // SAFETY: the job's reference keeps the cell alive until this function drops it.
    let cell = unsafe { task.cast::<Cell<F>>().as_ref() };
    let header = &cell.header;
    header.state.transition_to_running();
    let span = TaskSpan::enter(TaskKind::Future, Some(task_id(task)));
    // SAFETY: the job's reference outlives the poll, so this waker may borrow it (it is never
    // dropped, only cloned, which adds a reference of its own).
    let waker = ManuallyDrop::new(unsafe { waker::borrowed(task) });
    let mut cx = Context::from_waker(&waker);
    let polling = waker::Polling::enter(task);
    let polled = if header.registry.gone() {
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
                Idle::Rescheduled => waker::reschedule(task),
                // SAFETY: the last reference went with the transition.
                Idle::Idle { last: true } => unsafe { dealloc::<F>(task) },
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
            header.registry.drop_user_value(value);
            Err(payload)
        }
        (Err(payload), Err(second)) => {
            // The task's own panic goes to its handle; the destructor's is reported here.
            header.registry.handle_panic(second);
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
                Stage::Finished(Err(payload)) => header.registry.handle_panic(payload),
                other => header.registry.drop_user_value(other),
            }
        }
    });
    if let Err(payload) = after {
        header.registry.handle_panic(payload);
    }
    if header.state.ref_dec() {
        // SAFETY: that was the last reference.
        unsafe { dealloc::<F>(task) };
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
/// reported to the pool like a detached task's (`Registry::drop_user_value`): it never unwinds
/// through a worker's loop or out of `JoinHandle::drop`.
///
/// # Safety
/// `task` is a `Cell<F>` whose last reference was just dropped.
unsafe fn dealloc<F>(task: NonNull<Header>)
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    // SAFETY: the cell came from Box::leak in `spawn`, and nobody refers to it any more.
    let cell = unsafe { Box::from_raw(task.cast::<Cell<F>>().as_ptr()) };
    // The cell's own reference goes with it; this one reports a panic of its drop.
    let registry = Arc::clone(&cell.header.registry);
    registry.task_freed();
    registry.drop_user_value(cell);
}

/// # Safety
/// Called by the JoinHandle only, after it saw COMPLETE with its interest registered; `dst`
/// points to an `Option<Result<F::Output, Payload>>`.
unsafe fn read_output<F>(task: NonNull<Header>, dst: *mut ())
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    // SAFETY: the handle's reference keeps the cell alive.
    let cell = unsafe { task.cast::<Cell<F>>().as_ref() };
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
