//! Rayon-core's remaining entry points under their names: `spawn_fifo`, `scope_fifo`,
//! `in_place_scope`, `yield_now`, `yield_local`, `join_context`, and the pool methods `join`
//! and `current_thread_index`.
//!
//! threadlab has one kind of scope: its `spawn_fifo` (`Scope::spawn_fifo`, in `scope.rs`)
//! runs a spawning thread's FIFO tasks of the scope in spawn order, as Rayon's `ScopeFifo`
//! does, and `ScopeFifo` is `Scope`. The free `spawn_fifo` and `Pool::spawn_fifo` likewise run
//! a spawning thread's tasks in spawn order (`pool/fifo.rs`).

use crate::pool::front::Pool;
use crate::pool::registry::Registry;
use crate::pool::worker::WorkerThread;
use crate::scope::Scope;

/// [`spawn`](crate::spawn) in first-in-first-out order: the tasks one thread spawns with
/// `spawn_fifo` run in the order it spawned them when no other worker takes them (a thief takes
/// the oldest first as well); `spawn`'s run newest first on the spawning worker.
///
/// ```
/// let pool = threadlab::Pool::builder().threads(1).build()?;
/// let (tx, rx) = std::sync::mpsc::channel();
/// pool.install(|| {
///     for i in 0..4 {
///         let tx = tx.clone();
///         threadlab::spawn_fifo(move || tx.send(i).unwrap());
///     }
/// });
/// drop(tx);
/// assert_eq!(rx.iter().collect::<Vec<_>>(), [0, 1, 2, 3]);
/// # Ok::<(), threadlab::BuildError>(())
/// ```
#[track_caller]
pub fn spawn_fifo<F: FnOnce() + Send + 'static>(f: F) {
    crate::pool::front::spawn_fifo_fn(
        crate::global::current_registry(),
        std::panic::Location::caller(),
        f,
    )
}

/// Rayon's name for a scope whose tasks are spawned with `spawn_fifo`: the same scope, whose
/// `spawn_fifo` keeps spawn order.
pub type ScopeFifo<'scope> = Scope<'scope>;

/// `scope`, under Rayon's FIFO name.
///
/// ```
/// let mut v = [0; 2];
/// let (a, b) = v.split_at_mut(1);
/// threadlab::scope_fifo(|s| {
///     s.spawn_fifo(|_| a[0] = 1);
///     s.spawn_fifo(|_| b[0] = 2);
/// });
/// assert_eq!(v, [1, 2]);
/// ```
#[track_caller]
pub fn scope_fifo<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R + Send,
    R: Send,
{
    crate::scope(op)
}

/// A scope whose body runs on the calling thread, so it need not be `Send` (it may hold an
/// `Rc`, a `RefCell` borrow, a `MutexGuard`), as Rayon's: on a worker of a pool the scope is that
/// worker's (as [`scope`](crate::scope()) there); from any other thread the body runs there,
/// outside the current pool (the global one), and its tasks run on the pool. After the body
/// the caller waits for the tasks: as the guest of a sleeping worker if the pool lends one (see
/// [`Pool::install`]), running the pool's work meanwhile, else blocked.
///
/// The body being off the pool, it may block waiting for its own tasks (a barrier they meet, a
/// channel they send on) without holding a worker: the pool's workers run them.
///
/// ```
/// use std::rc::Rc;
/// let shared = Rc::new(std::cell::Cell::new(0)); // not Send
/// let mut n = 0;
/// threadlab::in_place_scope(|s| {
///     shared.set(1);
///     s.spawn(|_| n += 1);
/// });
/// assert_eq!((shared.get(), n), (1, 1));
/// ```
#[track_caller]
pub fn in_place_scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    crate::scope::in_place_scope_in(crate::global::current_registry(), op)
}

/// `in_place_scope` under Rayon's FIFO name (its `spawn_fifo` keeps spawn order).
///
/// ```
/// let cell = std::cell::Cell::new(3); // not Sync
/// assert_eq!(threadlab::in_place_scope_fifo(|_| cell.get()), 3);
/// ```
#[track_caller]
pub fn in_place_scope_fifo<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R,
{
    in_place_scope(op)
}

/// The most worker threads a pool can have: a builder asking for more is refused by
/// [`Builder::build`](crate::Builder::build) with an error that says so (Rayon's
/// `max_num_threads` caps the count instead). The system's own limits on threads, checked when
/// a pool is built, are usually lower.
///
/// ```
/// assert!(threadlab::max_num_threads() >= threadlab::current_num_threads());
/// ```
pub fn max_num_threads() -> usize {
    crate::pool::limits::MAX_WORKERS
}

/// On a thread of a pool: whether tasks wait in the queues this thread serves first (its own
/// deque, its inbox, its run-next slot), which it would run before looking elsewhere. Off the
/// pools: `None`.
///
/// ```
/// assert_eq!(threadlab::current_thread_has_pending_tasks(), None);
/// let pool = threadlab::Pool::builder().threads(1).build()?;
/// let pending = pool.install(|| {
///     threadlab::spawn(|| ()); // onto this worker's own deque
///     threadlab::current_thread_has_pending_tasks()
/// });
/// assert_eq!(pending, Some(true));
/// # Ok::<(), threadlab::BuildError>(())
/// ```
pub fn current_thread_has_pending_tasks() -> Option<bool> {
    WorkerThread::current().map(WorkerThread::has_pending_tasks)
}

/// What [`yield_now`] and [`yield_local`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Yield {
    /// Ran one pending job.
    Executed,
    /// Found no pending job.
    Idle,
}

/// On a worker: runs one pending job of the pool if there is one. Off the pools: `None`.
///
/// ```
/// assert_eq!(threadlab::yield_now(), None); // not on a worker
/// let pool = threadlab::Pool::builder().threads(1).build()?;
/// assert!(pool.install(threadlab::yield_now).is_some());
/// # Ok::<(), threadlab::BuildError>(())
/// ```
pub fn yield_now() -> Option<Yield> {
    let w = WorkerThread::current()?;
    Some(if w.run_one() {
        Yield::Executed
    } else {
        Yield::Idle
    })
}

/// On a worker: runs one job of its own deque if there is one. Off the pools: `None`.
///
/// ```
/// assert_eq!(threadlab::yield_local(), None);
/// ```
pub fn yield_local() -> Option<Yield> {
    let w = WorkerThread::current()?;
    Some(match w.take_local() {
        Some(job) => {
            w.execute(job);
            Yield::Executed
        }
        None => Yield::Idle,
    })
}

/// What a closure of [`join_context`] is told.
#[derive(Debug, Clone, Copy)]
pub struct FnContext {
    migrated: bool,
}

impl FnContext {
    /// True if the closure runs on another thread than the one that called `join_context`, or
    /// if `join_context` was called from outside the pool, whose call entered the pool
    /// (Rayon's meaning: such a call is injected into the pool, so both closures are
    /// "migrated", also when the caller runs them itself as the guest of a sleeping worker).
    pub fn migrated(&self) -> bool {
        self.migrated
    }
}

/// `join` whose closures learn whether they were moved to another thread.
///
/// Unlike [`join`](crate::join), whose `b` waits for a heartbeat before another worker may
/// take it, `join_context` offers `b` to the other workers at once, as Rayon's `join` does:
/// adaptive code asks `migrated()` to learn whether a thief wanted the work, which only means
/// something if a thief could take it, and `a` may wait for `b` (a barrier both pass) without
/// hanging while another worker is free. Use it for coarse forks; `join` costs less per fork.
///
/// ```
/// let (a, b) = threadlab::join_context(|_| 1, |_| 2);
/// assert_eq!((a, b), (1, 2));
/// // Called from outside any pool: the call entered the global pool.
/// assert_eq!(threadlab::join_context(|a| a.migrated(), |_| ()).0, true);
/// ```
#[track_caller]
pub fn join_context<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce(FnContext) -> RA + Send,
    B: FnOnce(FnContext) -> RB + Send,
    RA: Send,
    RB: Send,
{
    match WorkerThread::current() {
        Some(w) => join_context_on(w, false, a, b),
        None => Registry::in_worker(crate::global::registry(), |w, injected| {
            join_context_on(w, injected, a, b)
        }),
    }
}

/// `join_context` on worker `w`; `injected`: the call came from outside the pool.
#[track_caller]
fn join_context_on<A, B, RA, RB>(w: &WorkerThread, injected: bool, a: A, b: B) -> (RA, RB)
where
    A: FnOnce(FnContext) -> RA + Send,
    B: FnOnce(FnContext) -> RB + Send,
    RA: Send,
    RB: Send,
{
    let here = std::thread::current().id();
    crate::join::join_promoted(
        w,
        || a(FnContext { migrated: injected }),
        move || {
            b(FnContext {
                migrated: injected || std::thread::current().id() != here,
            })
        },
    )
}

impl Pool {
    /// `join` on this pool.
    ///
    /// ```
    /// let pool = threadlab::Pool::builder().threads(2).build()?;
    /// assert_eq!(pool.join(|| 1, || 2), (1, 2));
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    pub fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        self.install(|| crate::join(a, b))
    }

    /// The index of the current thread among this pool's workers; `None` off this pool.
    ///
    /// ```
    /// let pool = threadlab::Pool::builder().threads(2).build()?;
    /// assert_eq!(pool.current_thread_index(), None);
    /// assert!(pool.install(|| pool.current_thread_index()).is_some());
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    pub fn current_thread_index(&self) -> Option<usize> {
        crate::broadcast::on(self.registry()).map(|w| self.registry().index_as(w.index()))
    }

    /// `yield_now` for a thread of this pool; `None` off it.
    ///
    /// ```
    /// let pool = threadlab::Pool::builder().threads(1).build()?;
    /// assert_eq!(pool.yield_now(), None);
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    pub fn yield_now(&self) -> Option<Yield> {
        crate::broadcast::on(self.registry())?;
        yield_now()
    }

    /// `yield_local` for a thread of this pool; `None` off it.
    ///
    /// ```
    /// let pool = threadlab::Pool::builder().threads(1).build()?;
    /// assert_eq!(pool.yield_local(), None);
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    pub fn yield_local(&self) -> Option<Yield> {
        crate::broadcast::on(self.registry())?;
        yield_local()
    }

    /// `scope_fifo` on this pool.
    ///
    /// ```
    /// let pool = threadlab::Pool::builder().threads(2).build()?;
    /// assert_eq!(pool.scope_fifo(|_| 4), 4);
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    pub fn scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R + Send,
        R: Send,
    {
        self.scope(op)
    }

    /// [`in_place_scope`] on this pool: the body runs on the calling thread (no `Send` bound),
    /// the tasks on this pool.
    ///
    /// ```
    /// let pool = threadlab::Pool::builder().threads(1).build()?;
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// pool.in_place_scope(|s| {
    ///     s.spawn(move |_| tx.send(5).unwrap());
    ///     // The body waits for its own task: the pool's only worker runs it.
    ///     assert_eq!(rx.recv().unwrap(), 5);
    /// });
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    pub fn in_place_scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R,
    {
        crate::scope::in_place_scope_in(self.registry(), op)
    }

    /// [`in_place_scope_fifo`] on this pool.
    ///
    /// ```
    /// let pool = threadlab::Pool::builder().threads(2).build()?;
    /// let rc = std::rc::Rc::new(4); // not Send
    /// assert_eq!(pool.in_place_scope_fifo(|_| *rc), 4);
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    pub fn in_place_scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R,
    {
        self.in_place_scope(op)
    }

    /// [`spawn_fifo`] on this pool: [`Pool::spawn`] in first-in-first-out order per
    /// spawning thread.
    ///
    /// ```
    /// let pool = threadlab::Pool::builder().threads(2).build()?;
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// pool.spawn_fifo(move || tx.send(2).unwrap());
    /// assert_eq!(rx.recv().unwrap(), 2);
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    #[track_caller]
    pub fn spawn_fifo<F: FnOnce() + Send + 'static>(&self, f: F) {
        crate::pool::front::spawn_fifo_fn(self.registry(), std::panic::Location::caller(), f)
    }
}
