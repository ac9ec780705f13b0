//! The engine under both partitioners: a loop cut into chunks, each chunk meant for one worker,
//! handed to that worker through its inbox, and run exactly once.
//!
//! A [`Plan`] gives every worker a list of chunks. The calling worker mails one *participant*
//! job to each other worker's inbox, then takes part itself. A participant running on worker `w`
//! first marks `w` as started and runs `w`'s own list, front to back. Then, if the plan allows
//! taking over (the affinity partitioner), it runs the chunks of workers that have not started
//! yet (busy with something else, or blocked), from the back of their lists, until that worker
//! starts or nothing is left. Every run of a chunk is preceded by a claim (one atomic swap on
//! the chunk's flag), so each chunk runs once, whoever gets to it first.
//!
//! This is TBB's mailbox scheme (Robison, Voss, Kukanov, "Optimization via Reflection on Work
//! Stealing in TBB", IPDPS 2008: a task is both mailed to the thread it has affinity for and
//! left where thieves find it; whoever takes it first runs it, the other copy is a no-op), with
//! one change: instead of a stealable copy of every chunk, every worker receives one mailed
//! participant, and participants take over only the lists of workers that have not started.
//! A free worker therefore always gets its own chunks (the replay is exact when every worker
//! comes), and a busy worker's chunks are still run by the others, so the loop never waits for
//! it (the static plan, which must not move chunks, does wait).
//!
//! The loop is complete when every chunk has run, counted by a [`CountLatch`]; the caller waits
//! on it while running other work. Participants that arrive after that (a worker that was busy
//! during the whole loop) find every chunk claimed and return. They hold the shared state by
//! `Arc`, and they dereference the caller's loop body only after a successful claim, which
//! cannot happen after completion: that is why a mailed copy may outlive the loop.

use std::ops::Range;

use crate::job::HeapJob;
use crate::latch::Latch;
use crate::loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use crate::loom::sync::{Arc, Mutex};
use crate::pool::worker::WorkerThread;
use crate::pool::worker_latch::CountLatch;
use crate::trace::TaskKind;
use crate::unwind::{self, Payload};

/// Which chunks a loop has and who should run each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Chunk `c` covers the indices `chunks[c]`.
    pub(crate) chunks: Vec<Range<usize>>,
    /// For each worker, the chunks meant for it, in the order it runs them.
    pub(crate) lists: Vec<Vec<usize>>,
    /// Whether workers that finished their own list run the chunks of workers that have not
    /// started (affinity) or not (static).
    pub(crate) take_over: bool,
}

/// The caller's loop body, type-erased so that the shared state is `'static`.
struct Body {
    data: *const (),
    call: unsafe fn(*const (), Range<usize>),
}

/// Calls the `F` behind `data`.
///
/// # Safety
/// `data` must point to a live `F`.
unsafe fn call_body<F: Fn(Range<usize>) + Sync>(data: *const (), range: Range<usize>) {
    // SAFETY: the caller's contract.
    let f = unsafe { &*(data as *const F) };
    f(range)
}

/// What the caller and the participants share.
struct Shared {
    chunks: Box<[Range<usize>]>,
    lists: Box<[Box<[usize]>]>,
    take_over: bool,
    /// One flag per chunk: set by whoever claims it.
    claimed: Box<[AtomicBool]>,
    /// The worker that ran each chunk.
    ran_on: Box<[AtomicUsize]>,
    /// One flag per worker: it has begun its own list.
    started: Box<[AtomicBool]>,
    body: Body,
    /// Chunks not yet finished; set when the last one finishes.
    done: CountLatch,
    /// The first panic of the body.
    panic: Mutex<Option<Payload>>,
}

// SAFETY: `body.data` points to an `F: Sync` that is only called (through `&F`) by claimers of a
// chunk while the caller waits for it; the latch is Send + Sync itself; the rest is atomics,
// immutable boxes and a mutex.
unsafe impl Send for Shared {}
// SAFETY: as above.
unsafe impl Sync for Shared {}

/// Runs `plan` on `w`'s pool, calling `body` once per chunk, and returns after every chunk ran.
/// The result says which worker ran each chunk. The body's first panic is re-raised here after
/// every chunk ran.
pub(crate) fn run<F>(w: &WorkerThread, plan: Plan, body: &F) -> Vec<usize>
where
    F: Fn(Range<usize>) + Sync,
{
    let registry = w.registry();
    let n = registry.num_threads();
    debug_assert_eq!(plan.lists.len(), n, "mailed::run: one list per worker");
    let total = plan.chunks.len();
    if total == 0 {
        return Vec::new();
    }
    let shared = Arc::new(Shared {
        chunks: plan.chunks.into_boxed_slice(),
        lists: plan.lists.into_iter().map(Vec::into_boxed_slice).collect(),
        take_over: plan.take_over,
        claimed: (0..total).map(|_| AtomicBool::new(false)).collect(),
        ran_on: (0..total).map(|_| AtomicUsize::new(usize::MAX)).collect(),
        started: (0..n).map(|_| AtomicBool::new(false)).collect(),
        body: Body {
            data: body as *const F as *const (),
            call: call_body::<F>,
        },
        done: CountLatch::with_count(registry, w.index(), total),
        panic: Mutex::new(None),
    });
    for p in (0..n).filter(|&p| p != w.index()) {
        if !shared.take_over && shared.lists[p].is_empty() {
            continue;
        }
        let mine = Arc::clone(&shared);
        let job = HeapJob::into_job_ref(Some(TaskKind::LoopChunk), move || {
            if let Some(me) = WorkerThread::current() {
                mine.participate(me.index());
            }
        });
        registry.push_to(p, job);
    }
    shared.participate(w.index());
    w.wait_until(&shared.done.core);
    let panic = shared
        .panic
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take();
    if let Some(p) = panic {
        unwind::resume_unwinding(p);
    }
    // Relaxed: every chunk's store happened before its `set` of the latch, which the wait above
    // acquired (CountLatch's AcqRel count, then the core's SeqCst swap and Acquire probe).
    shared
        .ran_on
        .iter()
        .map(|r| r.load(Ordering::Relaxed))
        .collect()
}

impl Shared {
    /// Worker `me` takes part: its own list, then (if allowed) the lists of workers that have
    /// not started, from their backs.
    fn participate(&self, me: usize) {
        if let Some(own) = self.lists.get(me) {
            // Relaxed: a hint for the others; a late view only makes them take a chunk that
            // `me` would have claimed, and the claim decides.
            self.started[me].store(true, Ordering::Relaxed);
            for &c in own.iter() {
                self.try_run(c, me);
            }
        }
        if !self.take_over {
            return;
        }
        let n = self.lists.len();
        for k in 1..n {
            let other = (me + k) % n;
            for &c in self.lists[other].iter().rev() {
                // Relaxed: see above.
                if self.started[other].load(Ordering::Relaxed) {
                    break;
                }
                self.try_run(c, me);
            }
        }
    }

    /// Claims chunk `c` and runs it on worker `me`; false if somebody else had claimed it.
    fn try_run(&self, c: usize, me: usize) -> bool {
        // Relaxed: only the atomicity of the swap matters (exactly one claimer sees `false`).
        // The chunk's data was published to us with the job that brought us here, and what the
        // body does is published to the caller by the latch.
        if self.claimed[c].load(Ordering::Relaxed) || self.claimed[c].swap(true, Ordering::Relaxed)
        {
            return false;
        }
        // Relaxed: read by the caller after the latch (see `run`).
        self.ran_on[c].store(me, Ordering::Relaxed);
        let range = self.chunks[c].clone();
        // SAFETY: we hold an unfinished chunk, so the latch is not set and the caller is still
        // waiting in `run`, where the body lives.
        let result = unwind::halt_unwinding(|| unsafe { (self.body.call)(self.body.data, range) });
        if let Err(p) = result {
            let mut first = self.panic.lock().unwrap_or_else(|e| e.into_inner());
            if first.is_none() {
                *first = Some(p);
            }
        }
        // SAFETY: the latch lives in `self`, which our `Arc` (or the caller's wait) keeps alive;
        // the registry it wakes through is the pool we run on.
        unsafe { Latch::set(&self.done) };
        true
    }
}
