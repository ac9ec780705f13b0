//! [`ThreadPool`]: a threadlab pool under Rayon's name, with every method of Rayon's.

use std::fmt;
use std::sync::Arc;

use crate::broadcast::BroadcastContext;
use crate::scope::{self, Scope, ScopeFifo, Target};
use crate::Yield;

/// A pool of threads that runs Rayon's work: [`install`](ThreadPool::install) runs a closure
/// (and the `join`s, scopes and parallel iterators in it) on the pool.
///
/// Dropping it returns at once: the pool's threads finish the tasks already sent to it, then
/// exit.
///
/// ```
/// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(2).build()?;
/// let (a, b) = pool.install(|| rayon_core::join(|| 1 + 1, || 2 + 2));
/// assert_eq!((a, b), (2, 4));
/// # Ok::<(), rayon_core::ThreadPoolBuildError>(())
/// ```
pub struct ThreadPool {
    /// The pool.
    target: Target,
}

impl fmt::Debug for ThreadPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadPool")
            .field("num_threads", &self.current_num_threads())
            .field("pool", self.pool())
            .finish()
    }
}

impl ThreadPool {
    pub(crate) fn from_parts(pool: threadlab::Pool) -> ThreadPool {
        ThreadPool {
            target: Target {
                pool: Arc::new(pool),
            },
        }
    }

    fn target(&self) -> &Target {
        &self.target
    }

    fn pool(&self) -> &threadlab::Pool {
        &self.target().pool
    }

    /// Starts a pool with a deprecated [`Configuration`](crate::Configuration).
    ///
    /// # Errors
    /// As [`ThreadPoolBuilder::build`](crate::ThreadPoolBuilder::build), boxed.
    ///
    /// ```
    /// #![allow(deprecated)]
    /// let pool = rayon_core::ThreadPool::new(rayon_core::Configuration::new().num_threads(2))?;
    /// assert_eq!(pool.current_num_threads(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[deprecated(note = "Use `ThreadPoolBuilder::build`")]
    #[allow(deprecated)]
    pub fn new(
        configuration: crate::Configuration,
    ) -> Result<ThreadPool, Box<dyn std::error::Error>> {
        configuration.build()
    }

    /// Runs `op` on one of the pool's threads and returns its value; a panic in `op` is
    /// re-raised here. The `join`s, scopes and parallel iterators inside `op` run on this pool.
    /// From a thread of this pool, `op` runs at once on it; from a thread of another pool, that
    /// thread runs its own pool's tasks while it waits; from any other thread, the caller
    /// blocks until `op` is done.
    ///
    /// ```
    /// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(2).build()?;
    /// let caller = std::thread::current().id();
    /// let (value, elsewhere) = pool.install(|| (6 * 7, std::thread::current().id() != caller));
    /// assert_eq!((value, elsewhere), (42, true));
    /// # Ok::<(), rayon_core::ThreadPoolBuildError>(())
    /// ```
    #[track_caller]
    pub fn install<OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce() -> R + Send,
        R: Send,
    {
        self.pool().install(op)
    }

    /// Runs `op` once on each of the pool's threads, at the same time, and returns the results
    /// in thread order; a panic in any call is re-raised here once all returned.
    ///
    /// ```
    /// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(3).build()?;
    /// assert_eq!(pool.broadcast(|ctx| ctx.index()), [0, 1, 2]);
    /// # Ok::<(), rayon_core::ThreadPoolBuildError>(())
    /// ```
    pub fn broadcast<OP, R>(&self, op: OP) -> Vec<R>
    where
        OP: Fn(BroadcastContext<'_>) -> R + Sync,
        R: Send,
    {
        self.pool()
            .broadcast(|ctx| op(BroadcastContext::from_threadlab(ctx)))
    }

    /// The number of threads of the pool.
    ///
    /// ```
    /// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(3).build()?;
    /// assert_eq!(pool.current_num_threads(), 3);
    /// # Ok::<(), rayon_core::ThreadPoolBuildError>(())
    /// ```
    pub fn current_num_threads(&self) -> usize {
        self.pool().current_num_threads()
    }

    /// The index of the current thread in this pool; `None` when it is not one of this pool's
    /// threads.
    ///
    /// ```
    /// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(2).build()?;
    /// assert_eq!(pool.current_thread_index(), None);
    /// assert!(pool.install(|| pool.current_thread_index()).is_some());
    /// # Ok::<(), rayon_core::ThreadPoolBuildError>(())
    /// ```
    pub fn current_thread_index(&self) -> Option<usize> {
        self.pool().current_thread_index()
    }

    /// Whether the current thread, a thread of this pool, has tasks of its own waiting (in its
    /// deque, or addressed to it alone); `None` when it is not one of this pool's threads.
    ///
    /// ```
    /// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(1).build()?;
    /// assert_eq!(pool.current_thread_has_pending_tasks(), None);
    /// let pending = pool.install(|| {
    ///     let before = pool.current_thread_has_pending_tasks();
    ///     rayon_core::spawn(|| ()); // waits in this thread's deque
    ///     (before, pool.current_thread_has_pending_tasks())
    /// });
    /// assert_eq!(pending, (Some(false), Some(true)));
    /// # Ok::<(), rayon_core::ThreadPoolBuildError>(())
    /// ```
    pub fn current_thread_has_pending_tasks(&self) -> Option<bool> {
        self.pool().current_thread_index()?;
        threadlab::current_thread_has_pending_tasks()
    }

    /// [`join`](crate::join) on this pool.
    ///
    /// ```
    /// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(2).build()?;
    /// assert_eq!(pool.join(|| 1, || 2), (1, 2));
    /// # Ok::<(), rayon_core::ThreadPoolBuildError>(())
    /// ```
    #[track_caller]
    pub fn join<A, B, RA, RB>(&self, oper_a: A, oper_b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        self.install(|| crate::join(oper_a, oper_b))
    }

    /// [`scope`](crate::scope()) on this pool: the body runs on one of its threads.
    ///
    /// ```
    /// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(2).build()?;
    /// let mut halves = [0u64; 2];
    /// let (lo, hi) = halves.split_at_mut(1);
    /// pool.scope(|s| {
    ///     s.spawn(|_| lo[0] = (0..50).sum());
    ///     s.spawn(|_| hi[0] = (50..100).sum());
    /// });
    /// assert_eq!(halves[0] + halves[1], 4950);
    /// # Ok::<(), rayon_core::ThreadPoolBuildError>(())
    /// ```
    #[track_caller]
    pub fn scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R + Send,
        R: Send,
    {
        self.pool().scope(|s| op(&Scope::on_threadlab(s)))
    }

    /// [`scope_fifo`](crate::scope_fifo()) on this pool.
    ///
    /// ```
    /// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(1).build()?;
    /// let order = std::sync::Mutex::new(Vec::new());
    /// pool.scope_fifo(|s| {
    ///     for i in 0..3 {
    ///         let order = &order;
    ///         s.spawn_fifo(move |_| order.lock().unwrap().push(i));
    ///     }
    /// });
    /// assert_eq!(order.into_inner().unwrap(), [0, 1, 2]);
    /// # Ok::<(), rayon_core::ThreadPoolBuildError>(())
    /// ```
    #[track_caller]
    pub fn scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R + Send,
        R: Send,
    {
        self.pool().scope(|s| op(&ScopeFifo::on_threadlab(s)))
    }

    /// A scope whose body runs on the calling thread (so it need not be `Send`), its tasks on
    /// this pool; see [`in_place_scope`](crate::in_place_scope()).
    ///
    /// ```
    /// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(2).build()?;
    /// let here = std::rc::Rc::new(5); // not Send: stays with the body
    /// let mut sum = 0;
    /// pool.in_place_scope(|s| {
    ///     s.spawn(|_| sum = (1..=4).sum::<i32>());
    ///     assert_eq!(*here, 5);
    /// });
    /// assert_eq!(sum, 10);
    /// # Ok::<(), rayon_core::ThreadPoolBuildError>(())
    /// ```
    pub fn in_place_scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R,
    {
        scope::in_place_on(Some(self.target()), op)
    }

    /// [`in_place_scope`](ThreadPool::in_place_scope) whose tasks are spawned with
    /// [`ScopeFifo::spawn_fifo`].
    ///
    /// ```
    /// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(2).build()?;
    /// let mut x = 0;
    /// pool.in_place_scope_fifo(|s| s.spawn_fifo(|_| x = 1));
    /// assert_eq!(x, 1);
    /// # Ok::<(), rayon_core::ThreadPoolBuildError>(())
    /// ```
    pub fn in_place_scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R,
    {
        scope::in_place_fifo_on(Some(self.target()), op)
    }

    /// Runs `op` on the pool, fire-and-forget. A panic in it goes to the pool's panic handler;
    /// with none, it is printed and counted (Rayon aborts).
    ///
    /// ```
    /// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(2).build()?;
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// pool.spawn(move || tx.send(5).unwrap());
    /// assert_eq!(rx.recv().unwrap(), 5);
    /// # Ok::<(), rayon_core::ThreadPoolBuildError>(())
    /// ```
    #[track_caller]
    pub fn spawn<OP>(&self, op: OP)
    where
        OP: FnOnce() + Send + 'static,
    {
        self.pool().spawn(op)
    }

    /// [`spawn`](ThreadPool::spawn) in first-in-first-out order: the tasks sent through this
    /// handle with `spawn_fifo` start in the order they were sent.
    ///
    /// ```
    /// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(1).build()?;
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// for i in 0..4 {
    ///     let tx = tx.clone();
    ///     pool.spawn_fifo(move || tx.send(i).unwrap());
    /// }
    /// assert_eq!(rx.iter().take(4).collect::<Vec<_>>(), [0, 1, 2, 3]);
    /// # Ok::<(), rayon_core::ThreadPoolBuildError>(())
    /// ```
    #[track_caller]
    pub fn spawn_fifo<OP>(&self, op: OP)
    where
        OP: FnOnce() + Send + 'static,
    {
        self.pool().spawn_fifo(op)
    }

    /// Queues `op` once for each of the pool's threads and returns at once. A panic goes to the
    /// panic handler, as a `spawn`'s does.
    ///
    /// ```
    /// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(2).build()?;
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// let tx = std::sync::Mutex::new(tx);
    /// pool.spawn_broadcast(move |ctx| tx.lock().unwrap().send(ctx.index()).unwrap());
    /// let mut seen: Vec<usize> = rx.iter().take(2).collect();
    /// seen.sort();
    /// assert_eq!(seen, [0, 1]);
    /// # Ok::<(), rayon_core::ThreadPoolBuildError>(())
    /// ```
    pub fn spawn_broadcast<OP>(&self, op: OP)
    where
        OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
    {
        self.pool()
            .spawn_broadcast(move |ctx| op(BroadcastContext::from_threadlab(ctx)))
    }

    /// On a thread of this pool: runs one task waiting in the pool, if any. Elsewhere: `None`.
    ///
    /// ```
    /// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(1).build()?;
    /// assert_eq!(pool.yield_now(), None);
    /// assert_eq!(pool.install(|| pool.yield_now()), Some(rayon_core::Yield::Idle));
    /// # Ok::<(), rayon_core::ThreadPoolBuildError>(())
    /// ```
    pub fn yield_now(&self) -> Option<Yield> {
        self.pool().yield_now()
    }

    /// On a thread of this pool: runs one task of its own queue, if any. Elsewhere: `None`.
    ///
    /// ```
    /// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(1).build()?;
    /// assert_eq!(pool.yield_local(), None);
    /// # Ok::<(), rayon_core::ThreadPoolBuildError>(())
    /// ```
    pub fn yield_local(&self) -> Option<Yield> {
        self.pool().yield_local()
    }
}
