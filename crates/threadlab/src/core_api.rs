//! Rayon-core's remaining entry points under their names: `spawn_fifo`, `scope_fifo`,
//! `in_place_scope`, `yield_now`, `yield_local`, `join_context`, and the pool methods `join`
//! and `current_thread_index`.
//!
//! threadlab has one kind of scope: its `spawn_fifo` (`Scope::spawn_fifo`, in `scope.rs`)
//! runs the scope's FIFO tasks in spawn order when no thief takes them, as Rayon's
//! `ScopeFifo` does, and `ScopeFifo` is `Scope`. The free `spawn_fifo` and `Pool::spawn_fifo`
//! are `spawn`: a task spawned from a worker goes to that worker's deque and is stolen oldest
//! first, the FIFO order Rayon promises to thieves, but the spawning worker takes its own
//! newest task first.

use crate::pool::front::Pool;
use crate::pool::worker::WorkerThread;
use crate::scope::Scope;

/// `spawn`, under Rayon's FIFO name (see the module doc).
///
/// ```
/// let (tx, rx) = std::sync::mpsc::channel();
/// threadlab::spawn_fifo(move || tx.send(1).unwrap());
/// assert_eq!(rx.recv().unwrap(), 1);
/// ```
#[track_caller]
pub fn spawn_fifo<F: FnOnce() + Send + 'static>(f: F) {
    crate::global::spawn(f)
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

/// A scope whose body may borrow without `Send` bounds from the caller: Rayon runs the body
/// on the calling thread. threadlab's scope runs its body on a worker (the caller's, when it
/// is one), so the body must be `Send`; otherwise this is `scope`.
///
/// ```
/// let mut n = 0;
/// threadlab::in_place_scope(|s| s.spawn(|_| n += 1));
/// assert_eq!(n, 1);
/// ```
#[track_caller]
pub fn in_place_scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    crate::scope(op)
}

/// `in_place_scope` under Rayon's FIFO name.
///
/// ```
/// assert_eq!(threadlab::in_place_scope_fifo(|_| 3), 3);
/// ```
#[track_caller]
pub fn in_place_scope_fifo<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R + Send,
    R: Send,
{
    crate::scope(op)
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
    /// True if the closure runs on another thread than the one that called `join_context`.
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
/// ```
#[track_caller]
pub fn join_context<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce(FnContext) -> RA + Send,
    B: FnOnce(FnContext) -> RB + Send,
    RA: Send,
    RB: Send,
{
    let caller = std::thread::current().id();
    let ctx = move || FnContext {
        migrated: std::thread::current().id() != caller,
    };
    crate::iter::drive::on_worker(|w| crate::join::join_promoted(w, || a(ctx()), || b(ctx())))
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
        crate::broadcast::on(self.registry()).map(|w| w.index())
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

    /// `in_place_scope` on this pool.
    ///
    /// ```
    /// let pool = threadlab::Pool::builder().threads(2).build()?;
    /// assert_eq!(pool.in_place_scope(|_| 4), 4);
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    pub fn in_place_scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R + Send,
        R: Send,
    {
        self.scope(op)
    }

    /// `spawn_fifo` on this pool.
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
        self.spawn(f)
    }
}
