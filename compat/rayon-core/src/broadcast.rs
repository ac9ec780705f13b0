//! Broadcasts: one call of an operation on each of a pool's threads, and
//! [`BroadcastContext`], what each call is told.

use std::fmt;
use std::marker::PhantomData;

use crate::global;

/// Where a broadcast's call runs: which of the pool's threads, of how many.
///
/// ```
/// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(2).build()?;
/// let seen = pool.broadcast(|ctx| (ctx.index(), ctx.num_threads()));
/// assert_eq!(seen, [(0, 2), (1, 2)]);
/// # Ok::<(), rayon_core::ThreadPoolBuildError>(())
/// ```
pub struct BroadcastContext<'a> {
    index: usize,
    num_threads: usize,
    /// Valid during the call it was given to, as Rayon's.
    _call: PhantomData<&'a ()>,
}

impl fmt::Debug for BroadcastContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BroadcastContext")
            .field("index", &self.index)
            .field("num_threads", &self.num_threads)
            .finish()
    }
}

impl BroadcastContext<'_> {
    pub(crate) fn from_threadlab(ctx: threadlab::BroadcastContext) -> Self {
        BroadcastContext {
            index: ctx.index(),
            num_threads: ctx.num_threads(),
            _call: PhantomData,
        }
    }

    /// The index of the thread running this call, in `0..num_threads()`.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The number of the pool's threads, which is the number of calls.
    pub fn num_threads(&self) -> usize {
        self.num_threads
    }
}

/// Runs `op` once on each thread of the current thread's pool (else the global pool), at the
/// same time, and returns the results in thread order. A panic in any call is re-raised here
/// once all returned. For per-thread set-up or clean-up: it costs a message to every thread.
///
/// ```
/// let ids = rayon_core::broadcast(|ctx| ctx.index());
/// assert_eq!(ids, (0..rayon_core::current_num_threads()).collect::<Vec<_>>());
/// ```
pub fn broadcast<OP, R>(op: OP) -> Vec<R>
where
    OP: Fn(BroadcastContext<'_>) -> R + Sync,
    R: Send,
{
    global::ensure_outside_pool();
    threadlab::broadcast(|ctx| op(BroadcastContext::from_threadlab(ctx)))
}

/// Queues `op` once for each thread of the current thread's pool (else the global pool) and
/// returns at once. A panic goes to the pool's panic handler, as a `spawn`'s does.
///
/// ```
/// let (tx, rx) = std::sync::mpsc::channel();
/// let tx = std::sync::Mutex::new(tx);
/// rayon_core::spawn_broadcast(move |ctx| tx.lock().unwrap().send(ctx.index()).unwrap());
/// let n = rayon_core::current_num_threads();
/// let mut seen: Vec<usize> = rx.iter().take(n).collect();
/// seen.sort();
/// assert_eq!(seen, (0..n).collect::<Vec<_>>());
/// ```
pub fn spawn_broadcast<OP>(op: OP)
where
    OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
{
    global::ensure_outside_pool();
    threadlab::spawn_broadcast(move |ctx| op(BroadcastContext::from_threadlab(ctx)))
}
