//! `broadcast` and `spawn_broadcast`: one call of an operation on every worker of a pool
//! (Rayon's names and meaning: per-thread set-up, flushing per-thread caches).
//!
//! `broadcast` mails the operation to every other worker's inbox (`install_on`'s path), each
//! from a scoped helper thread that blocks until its worker ran it, and runs the caller's own
//! call in place when the caller is a worker of the pool. The calls run at the same time (an
//! operation that waits at a barrier for all the others returns), which a `join` tree would
//! not promise: threadlab's `join` runs both closures on one worker unless another asks for
//! work, and an operation blocked at a barrier asks for nothing. A worker waiting in a `join`
//! serves its inbox, so a broadcast from inside the pool reaches it. A caller that is a worker (of
//! this pool or another) waits for the helpers in the same way, running its own pool's work and
//! serving its inbox, so that two pools may broadcast into each other: a call that broadcasts
//! back into the caller's pool reaches the caller's worker too. The helper threads cost a
//! thread start per worker per broadcast: a broadcast is set-up work, not a loop body.
//! `spawn_broadcast` pushes one task into every worker's inbox and returns. (The free functions
//! are in `thread_pool/functions.rs`, with the other functions on the current pool; `Pool`'s
//! methods in `thread_pool/mod.rs`.)

use std::marker::PhantomData;

use crate::latch::Latch;
use crate::loom::sync::Arc;
use crate::pool::registry::Registry;
use crate::pool::worker::WorkerThread;
use crate::pool::worker_latch::CountLatch;

/// What a broadcast operation is told about where it runs.
///
/// ```
/// let pool = threadlab::Pool::builder().threads(2).build()?;
/// let seen = pool.broadcast(|ctx| (ctx.index(), ctx.num_threads()));
/// assert_eq!(seen, [(0, 2), (1, 2)]);
/// # Ok::<(), threadlab::BuildError>(())
/// ```
///
/// Its lifetime ties it to the call it was given to (as Rayon's `BroadcastContext<'a>`): it
/// cannot be kept past the operation.
#[derive(Debug, Clone, Copy)]
pub struct BroadcastContext<'a> {
    index: usize,
    num_threads: usize,
    /// Invariant in `'a`.
    marker: PhantomData<&'a mut &'a ()>,
}

impl BroadcastContext<'_> {
    pub(crate) fn new(index: usize, num_threads: usize) -> Self {
        BroadcastContext {
            index,
            num_threads,
            marker: PhantomData,
        }
    }

    /// The index of the worker running this call.
    pub fn index(&self) -> usize {
        self.index
    }
    /// The number of workers of the pool (and of calls of the operation).
    pub fn num_threads(&self) -> usize {
        self.num_threads
    }
}

/// Runs `op` once on every worker of `registry`, the results in worker order.
pub(crate) fn broadcast_in<OP, R>(registry: &Arc<Registry>, op: &OP) -> Vec<R>
where
    OP: Fn(BroadcastContext<'_>) -> R + Sync,
    R: Send,
{
    let n = registry.num_threads();
    let ctx = |index| BroadcastContext::new(index, n);
    let me = on(registry).map(|w| w.index());
    let mut out: Vec<Option<R>> = (0..n).map(|_| None).collect();
    // A caller that is a worker (of this pool or another) waits for the other calls while
    // running its own pool's work, its inbox included, as a `join` does: a call elsewhere may
    // broadcast back into the caller's pool and need the caller's own worker (two pools
    // broadcasting into each other). Each helper counts down this latch when its call is done.
    let waiter = WorkerThread::current();
    let others_count = (0..n).filter(|&j| Some(j) != me).count();
    let done = match waiter {
        Some(w) if others_count > 0 => Some(CountLatch::with_count(
            w.registry(),
            w.index(),
            others_count,
        )),
        _ => None,
    };
    let done = &done;
    std::thread::scope(|s| {
        let others: Vec<_> = (0..n)
            .filter(|&j| Some(j) != me)
            .map(|j| {
                (
                    j,
                    s.spawn(move || {
                        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            Registry::in_worker_at(registry, j, || op(ctx(j)))
                        }));
                        if let Some(latch) = done {
                            // SAFETY: the latch lives on the caller's stack until the scope
                            // has joined this thread, after this call.
                            unsafe { Latch::set(latch) };
                        }
                        r
                    }),
                )
            })
            .collect();
        // This worker's own call runs here, while the others' are on their way.
        let mine = me.map(|i| {
            (
                i,
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| op(ctx(i)))),
            )
        });
        if let (Some(w), Some(latch)) = (waiter, done) {
            w.wait_until(&latch.core);
        }
        let mut panic = None;
        for (j, h) in others {
            match h.join().unwrap_or_else(Err) {
                Ok(r) => out[j] = Some(r),
                Err(p) => panic = panic.or(Some(p)),
            }
        }
        if let Some((i, r)) = mine {
            match r {
                Ok(r) => out[i] = Some(r),
                Err(p) => panic = panic.or(Some(p)),
            }
        }
        if let Some(p) = panic {
            std::panic::resume_unwind(p);
        }
    });
    out.into_iter()
        .map(|r| r.expect("broadcast: every worker ran the operation"))
        .collect()
}

pub(crate) fn spawn_broadcast_in<OP>(registry: &Arc<Registry>, op: OP)
where
    OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
{
    let op = Arc::new(op);
    let n = registry.num_threads();
    for index in 0..n {
        let op = Arc::clone(&op);
        let job = registry.spawn_job(Some(crate::trace::TaskKind::Spawn), move || {
            op(BroadcastContext::new(index, n))
        });
        registry.push_to(index, job);
    }
}

/// True if the current thread is a worker of `registry`.
pub(crate) fn on(registry: &Arc<Registry>) -> Option<&'static WorkerThread> {
    WorkerThread::current().filter(|w| Arc::ptr_eq(w.registry(), registry))
}
