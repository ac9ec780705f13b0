//! [`JoinHandle`]: the output of a spawned future, awaited or joined; its panic re-raised.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::ptr::NonNull;
use std::task::{Context, Poll};

use crate::task::header::Header;
use crate::unwind::{self, Payload};

/// The handle of a future spawned with [`Pool::spawn_future`](crate::Pool::spawn_future) or
/// [`spawn_future`](crate::spawn_future).
///
/// It is itself a future whose output is the task's; awaiting it (or [`JoinHandle::join`])
/// re-raises the task's panic. Dropping it detaches the task, which still runs to completion
/// (a detached task's panic goes to the pool's panic handler). Dropping it after the task
/// finished drops the output; a panic in the output's `Drop` is caught and reported to the pool
/// (counted in [`Metrics::panicked_tasks`](crate::Metrics::panicked_tasks)), not raised here.
///
/// # Cancellation
/// A task woken after its pool's workers exited (the pool shut down, or dropped and its
/// workers done with what was queued) cannot run: it is cancelled, its future dropped on the waking thread (a panic of its `Drop` is caught and
/// reported), and awaiting or joining the handle panics with a message that says the task was
/// cancelled because its pool's workers were gone (compare Tokio's `JoinError::Cancelled`). Catch it
/// with `std::panic::catch_unwind` if a pool may go away under its tasks.
///
/// ```
/// use std::future::poll_fn;
/// use std::sync::{Arc, Mutex};
/// use std::task::{Poll, Waker};
///
/// let slot: Arc<Mutex<Option<Waker>>> = Arc::default();
/// let pool = threadlab::Pool::builder().threads(1).build()?;
/// let s = Arc::clone(&slot);
/// let h = pool.spawn_future(poll_fn(move |cx| {
///     *s.lock().unwrap() = Some(cx.waker().clone());
///     Poll::<u32>::Pending
/// }));
/// while slot.lock().unwrap().is_none() {
///     std::thread::yield_now();
/// }
/// pool.shutdown(); // the workers exit; the task waits for a wake that comes too late
/// slot.lock().unwrap().take().unwrap().wake();
/// let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| h.join())).unwrap_err();
/// assert!(err.downcast_ref::<String>().unwrap().contains("cancelled"));
/// # Ok::<(), threadlab::BuildError>(())
/// ```
///
/// ```
/// let pool = threadlab::Pool::builder().threads(2).build()?;
/// let h = pool.spawn_future(async { 20 + 1 });
/// let doubled = pool.block_on(async move { h.await * 2 });
/// assert_eq!(doubled, 42);
/// # Ok::<(), threadlab::BuildError>(())
/// ```
pub struct JoinHandle<T> {
    task: NonNull<Header>,
    _output: PhantomData<T>,
}

// SAFETY: the handle only moves the task's output (T: Send) to its own thread; the cell is
// shared through atomics and the protocol of `super::state`.
unsafe impl<T: Send> Send for JoinHandle<T> {}
// SAFETY: `&JoinHandle` only reads the state word (`is_finished`).
unsafe impl<T: Send> Sync for JoinHandle<T> {}

impl<T> Unpin for JoinHandle<T> {}

impl<T> std::fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JoinHandle")
            .field("state", &self.header().state.load())
            .finish()
    }
}

impl<T> JoinHandle<T> {
    /// Takes over the reference that `cell::spawn` reserved for the handle.
    pub(crate) fn new(task: NonNull<Header>) -> Self {
        JoinHandle {
            task,
            _output: PhantomData,
        }
    }

    fn header(&self) -> &Header {
        // SAFETY: the handle holds a reference until it is dropped.
        unsafe { self.task.as_ref() }
    }

    /// True once the task finished (returned or panicked); then awaiting or joining does not
    /// wait.
    ///
    /// ```
    /// let pool = threadlab::Pool::builder().threads(1).build()?;
    /// let h = pool.spawn_future(async { 5 });
    /// while !h.is_finished() {
    ///     std::thread::yield_now();
    /// }
    /// assert_eq!(h.join(), 5);
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    pub fn is_finished(&self) -> bool {
        self.header().state.load().is_complete()
    }

    /// Blocks until the task finished and returns its output, re-raising its panic (or
    /// panicking with a message that says so if the task was cancelled, see
    /// [Cancellation](JoinHandle#cancellation)). On a
    /// worker thread, the worker runs other work of its pool while it waits (so joining from
    /// inside a task cannot deadlock the pool); on any other thread, the thread sleeps.
    ///
    /// ```
    /// let pool = threadlab::Pool::builder().threads(2).build()?;
    /// let h = pool.spawn_future(async { "done" });
    /// assert_eq!(h.join(), "done");
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    pub fn join(self) -> T {
        crate::task::block_on::block_on_here(self)
    }

    /// Registers the current waker, or returns false if the task completed first.
    fn register(&self, cx: &Context<'_>) -> bool {
        let header = self.header();
        let snapshot = header.state.load();
        if snapshot.is_complete() {
            return false;
        }
        if snapshot.has_join_waker() {
            let same = header.join_waker.with(|w| {
                // SAFETY: with JOIN_WAKER set, everybody only reads the cell.
                unsafe { &*w }
                    .as_ref()
                    .is_some_and(|w| w.will_wake(cx.waker()))
            });
            if same {
                return true;
            }
            if header.state.unset_join_waker().is_err() {
                return false;
            }
        }
        // SAFETY: JOIN_WAKER is clear and only this handle can set it, so the completing worker
        // will not read the cell (see `super::state`); nobody else writes it.
        header
            .join_waker
            .with_mut(|w| unsafe { *w = Some(cx.waker().clone()) });
        header.state.set_join_waker().is_ok()
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        if self.register(cx) {
            return Poll::Pending;
        }
        let mut out: Option<Result<T, Payload>> = None;
        // SAFETY: the task is complete and this handle's interest was registered when it
        // completed (it is dropped only with the handle); `out` matches the cell's output type
        // (the handle was made for it in `spawn_future`).
        unsafe {
            (self.header().vtable.read_output)(self.task, &mut out as *mut _ as *mut ());
        }
        match out.expect("JoinHandle::poll: the task left no output") {
            Ok(value) => Poll::Ready(value),
            Err(payload) if payload.is::<unwind::Cancelled>() => {
                drop(payload);
                panic!("{}", unwind::CANCELLED)
            }
            Err(payload) => unwind::resume_unwinding(payload),
        }
    }
}

impl<T> Drop for JoinHandle<T> {
    fn drop(&mut self) {
        if self.header().state.drop_join_handle() {
            // SAFETY: that was the last reference.
            unsafe { (self.header().vtable.dealloc)(self.task) };
        }
    }
}
