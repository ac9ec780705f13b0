//! Seats: what a worker is apart from its thread, so that an elastic pool
//! ([`Builder::keep_alive`](crate::Builder::keep_alive)) can let the thread go and start
//! another one later.
//!
//! Everything the pool shares about worker `i` is indexed by `i` and lives in the registry for
//! the pool's whole life: the thieves' end of its deque, its inbox, run-next slot, heartbeat
//! flag, counters and parker. The seat adds the two things a thread owns: the owner's end of
//! the deque (kept here while no thread holds it: before the first start and while retired)
//! and the latest thread's `JoinHandle`.
//!
//! # Starting, retiring, starting again
//!
//! - [`Registry::start_thread`](super::registry::Registry::start_thread) starts the seat's
//!   next thread ([`Seat::start_thread`]). The new thread first joins the seat's previous one
//!   (a retired thread may still be on its way out), then takes the owner's end of the deque
//!   from the seat. So at most one thread runs a seat's loop at a
//!   time, and the counters' single-writer rule holds across threads (the join orders them).
//! - A worker retires from its idle loop only (never inside a `join`, `scope` or `block_on`
//!   wait, whose frames are on its stack), after the sleep protocol let it (`super::sleep`,
//!   "Retiring"); its deque, run-next slot and inbox are empty then (its re-check before parking
//!   saw so). It puts its deque back here and its thread returns.
//! - A wake-up that reaches a retired worker calls the `restart` installed in `Sleep`, which
//!   starts a thread through the registry. The registry keeps a reference to itself for that
//!   (an elastic pool only), dropped by `Registry::terminate` once no restart is under way.
//! - Shutdown wakes every sleeper, retired ones included: each gets a thread that finds the
//!   pool terminating, closes its inbox (running what it holds first) and exits as usual.
//!   Then `Pool::shutdown` joins every seat's latest thread, which joined its predecessors.

use std::sync::Mutex;
use std::thread::JoinHandle;

use crate::deque::Worker;
use crate::job::JobRef;
use crate::loom::sync::atomic::{AtomicU64, Ordering};
use crate::util::lock;

/// One worker's seat.
#[derive(Default)]
pub(crate) struct Seat {
    /// The owner's end of the worker's deque while no thread holds it.
    deque: Mutex<Option<Worker<JobRef>>>,
    /// The seat's latest thread.
    handle: Mutex<Option<JoinHandle<()>>>,
}

impl Seat {
    pub(crate) fn new(deque: Worker<JobRef>) -> Self {
        Seat {
            deque: Mutex::new(Some(deque)),
            handle: Mutex::new(None),
        }
    }

    /// The deque, for the thread that starts on this seat.
    pub(crate) fn take_deque(&self) -> Worker<JobRef> {
        lock(&self.deque)
            .take()
            .expect("Seat::take_deque: two threads on one seat")
    }

    /// A leaving thread gives the deque back.
    pub(crate) fn put_deque(&self, deque: Worker<JobRef>) {
        *lock(&self.deque) = Some(deque);
    }

    /// The latest thread's handle, to join it.
    pub(crate) fn take_handle(&self) -> Option<JoinHandle<()>> {
        lock(&self.handle).take()
    }

    /// Starts a thread named `name` (with `stack_size`, the builder's) on this seat that runs
    /// `body` once it has joined the seat's previous thread. The handle lock is held from taking
    /// the previous handle until the new one is stored, so a thread always finds its
    /// predecessor's handle. `starts` (the seat's counter) counts the start before the thread
    /// exists, so a submitter that started it sees the pool's alive count include it as soon as
    /// its submission returns; a failed start is taken back.
    pub(crate) fn start_thread(
        &self,
        name: String,
        stack_size: Option<usize>,
        starts: &AtomicU64,
        body: impl FnOnce() + Send + 'static,
    ) -> std::io::Result<()> {
        let mut handle = lock(&self.handle);
        let previous = handle.take();
        let mut b = std::thread::Builder::new().name(name);
        if let Some(size) = stack_size {
            b = b.stack_size(size);
        }
        // Relaxed: a statistic.
        starts.fetch_add(1, Ordering::Relaxed);
        // The closure owns `previous` only if the spawn succeeds; keep a way to put it back.
        let previous = std::sync::Arc::new(Mutex::new(previous));
        let prev_for_thread = std::sync::Arc::clone(&previous);
        match b.spawn(move || {
            if let Some(p) = lock(&prev_for_thread).take() {
                let _ = p.join();
            }
            body();
        }) {
            Ok(h) => {
                *handle = Some(h);
                Ok(())
            }
            Err(e) => {
                // Relaxed: a statistic (the start that did not happen is taken back).
                starts.fetch_sub(1, Ordering::Relaxed);
                *handle = lock(&previous).take();
                Err(e)
            }
        }
    }
}

/// How a worker's threads are made (the builder's settings, kept for restarts).
pub(crate) struct ThreadSpec {
    /// The workers' thread names (`threadlab-<index>` unless the builder named them), each
    /// asked of the builder just before its worker's first start (as Rayon does: a naming
    /// function that panics for worker `i` leaves workers `0..i` started, and stops them).
    pub(crate) names: Box<[std::sync::OnceLock<String>]>,
    /// The builder named them (`Builder::thread_name`).
    pub(crate) named: bool,
    pub(crate) stack_size: Option<usize>,
    /// With `pin_to_cores`: the CPUs the process may use (`super::affinity`); else empty.
    pub(crate) cpus: Vec<usize>,
}

impl ThreadSpec {
    /// Worker `index`'s thread name (set before its first start).
    pub(crate) fn name(&self, index: usize) -> String {
        self.names[index]
            .get()
            .cloned()
            .unwrap_or_else(|| format!("threadlab-{index}"))
    }
}
