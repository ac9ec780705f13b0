//! Blocking on a future: on a worker, the worker polls it and runs other work of its pool
//! between polls (so `block_on` inside a task, or on a one-worker pool, cannot deadlock); on any
//! other thread, the thread polls it and sleeps between polls.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use crate::latch::CoreLatch;
use crate::loom::sync::atomic::{AtomicBool, Ordering};
use crate::pool::registry::Registry;
use crate::pool::worker::WorkerThread;

/// Polls `future` to completion on this thread: as a worker if it is one, else by sleeping.
pub(crate) fn block_on_here<F: Future>(future: F) -> F::Output {
    match WorkerThread::current() {
        Some(w) => on_worker(w, future),
        None => on_thread(future),
    }
}

/// The waker of a worker blocked on a future: sets its latch, and wakes it if it sleeps.
struct LatchWaker {
    latch: CoreLatch,
    registry: crate::loom::sync::Arc<Registry>,
    index: usize,
}

impl Wake for LatchWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.latch.set_and_wake(&self.registry, self.index);
    }
}

/// Polls `future` on worker `w`; between polls the worker runs other work until the future's
/// waker sets the latch (`WorkerThread::wait_until`), and at least one queued job, if there is
/// one, when the future woke itself during the poll.
pub(crate) fn on_worker<F: Future>(w: &WorkerThread, future: F) -> F::Output {
    let signal = Arc::new(LatchWaker {
        latch: CoreLatch::new(),
        registry: crate::loom::sync::Arc::clone(w.registry()),
        index: w.index(),
    });
    let waker = Waker::from(Arc::clone(&signal));
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {
            return value;
        }
        if signal.latch.probe() {
            // Woken during its own poll (a yield: `wake_by_ref`, then `Pending`). `wait_until`
            // would return at once, so a future that waits for work it queued on this pool
            // would be polled forever while that work never runs (a livelock on a one-worker
            // pool). Run one queued job between two such polls, as any wait that can make
            // progress by running queued work must.
            w.run_one();
        } else {
            w.wait_until(&signal.latch);
        }
        // Re-armed before the next poll, so a wake during that poll sets it again.
        signal.latch.reset();
    }
}

/// The waker of a plain thread blocked on a future.
struct ThreadWaker {
    thread: std::thread::Thread,
    woken: AtomicBool,
}

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // Release: pairs with the Acquire swap of the sleeper, so what the waker published
        // before waking is visible to the next poll.
        self.woken.store(true, Ordering::Release);
        self.thread.unpark();
    }
}

/// Polls `future` on this (non-worker) thread, parking between polls.
fn on_thread<F: Future>(future: F) -> F::Output {
    let signal = Arc::new(ThreadWaker {
        thread: std::thread::current(),
        woken: AtomicBool::new(false),
    });
    let waker = Waker::from(Arc::clone(&signal));
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {
            return value;
        }
        // Acquire: pairs with the Release store in `wake_by_ref`. `park` may return spuriously;
        // the flag says whether a wake really happened.
        while !signal.woken.swap(false, Ordering::Acquire) {
            std::thread::park();
        }
    }
}
