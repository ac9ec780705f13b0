//! The free functions, which run on "the current pool": the pool of the worker calling them, else
//! the global one (`global.rs`). Rayon's names and meanings: `spawn`, `spawn_fifo`, `scope`,
//! `scope_fifo`, `in_place_scope`, `broadcast`, `spawn_broadcast`, `current_num_threads`,
//! `current_thread_index`, `max_num_threads`, `yield_now`, `yield_local`, `join_context`; and
//! threadlab's own: `spawn_named`, `current_thread_has_pending_tasks`, and the futures' front ends
//! `spawn_future`, `spawn_future_named`, `block_on`. Most have a `Pool` method of the name in
//! `mod.rs`. Two live with their algorithm instead: `join` in `join.rs` (its fast path is the fork
//! itself) and the loops (`for_each` and the like) in `parallel.rs` and `partition/`.
//!
//! threadlab has one kind of scope: its `spawn_fifo` (`Scope::spawn_fifo`, in `scope.rs`)
//! runs a spawning thread's FIFO tasks of the scope in spawn order, as Rayon's `ScopeFifo`
//! does, and `ScopeFifo` is `Scope`. The free `spawn_fifo` and `Pool::spawn_fifo` likewise run
//! a spawning thread's tasks in spawn order (`pool/fifo.rs`).

use std::future::Future;
use std::panic::Location;

use crate::broadcast::{broadcast_in, spawn_broadcast_in, BroadcastContext};
use crate::context::{tagged, Tag};
use crate::global::{current_registry, registry};
use crate::pool::registry::Registry;
use crate::pool::worker::WorkerThread;
use crate::scope::{scope_on_worker, Scope};
use crate::task::{spawn_tagged, JoinHandle};

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
    spawn_fifo_fn(current_registry(), std::panic::Location::caller(), f)
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
/// [`Pool::install`](crate::Pool::install)), running the pool's work meanwhile, else blocked.
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
    crate::scope::in_place_scope_in(current_registry(), op)
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
        None => Registry::in_worker(registry(), |w, injected| join_context_on(w, injected, a, b)),
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

/// Runs `f` on the current pool (this worker's pool, else the global one), fire-and-forget.
/// A panic goes to that pool's panic handler.
///
/// ```
/// let (tx, rx) = std::sync::mpsc::channel();
/// threadlab::spawn(move || tx.send("done").unwrap());
/// assert_eq!(rx.recv().unwrap(), "done");
/// ```
#[track_caller]
pub fn spawn<F: FnOnce() + Send + 'static>(f: F) {
    spawn_fn(current_registry(), None, std::panic::Location::caller(), f);
}

/// The number of workers of the current pool (this worker's pool, else the global one).
///
/// ```
/// assert!(threadlab::current_num_threads() >= 1);
/// ```
pub fn current_num_threads() -> usize {
    current_registry().num_threads()
}

/// The index of the calling thread among its pool's workers, `Some(i)` with
/// `i < current_num_threads()` on every thread that runs the pool's work: a worker, the guest
/// of a sleeping worker (an `install` from outside, with that worker's index), a spare thread
/// (with the index of the blocked worker it stands in for, see
/// [`Builder::max_spare_threads`](crate::Builder::max_spare_threads)). `None` outside any pool.
///
/// ```
/// assert_eq!(threadlab::current_thread_index(), None);
/// let pool = threadlab::Pool::builder().threads(3).build()?;
/// let i = pool.install(|| threadlab::current_thread_index()).unwrap();
/// assert!(i < 3);
/// # Ok::<(), threadlab::BuildError>(())
/// ```
pub fn current_thread_index() -> Option<usize> {
    WorkerThread::current().map(|w| w.registry().index_as(w.index()))
}

/// [`spawn`] with a name, which the recorder puts on the task's span
/// ([`crate::trace::ARG_TASK_NAME`]) and the doctor and `compare` quote.
///
/// ```
/// let (tx, rx) = std::sync::mpsc::channel();
/// threadlab::spawn_named("flush", move || tx.send(1).unwrap());
/// assert_eq!(rx.recv().unwrap(), 1);
/// ```
#[track_caller]
pub fn spawn_named<F: FnOnce() + Send + 'static>(name: &'static str, f: F) {
    spawn_fn(
        current_registry(),
        Some(name),
        std::panic::Location::caller(),
        f,
    );
}

/// Creates a scope on the current worker's pool (else the global one), runs `op` in it, and
/// returns after `op` and every task spawned in the scope finished. The first panic among them is
/// re-raised here.
///
/// While it waits for the scope's tasks, this worker runs other queued tasks: as with
/// [`join`](crate::join), do not hold a lock across `scope` that those tasks may ask for (a
/// [`threadlab::sync::Mutex`](crate::sync::Mutex) panics with its name; a `std::sync::Mutex`
/// deadlocks).
///
/// ```
/// let data = vec![1, 2, 3, 4];
/// let mut sums = [0; 2];
/// let (left, right) = sums.split_at_mut(1);
/// threadlab::scope(|s| {
///     s.spawn(|_| left[0] = data[..2].iter().sum());
///     s.spawn(|_| right[0] = data[2..].iter().sum());
/// });
/// assert_eq!(sums, [3, 7]);
/// ```
#[track_caller]
pub fn scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    match WorkerThread::current() {
        Some(w) => scope_on_worker(w, op),
        None => Registry::in_worker(registry(), |w, _| scope_on_worker(w, op)),
    }
}

/// Runs `op` on every worker of the current pool (the global pool outside any) and returns
/// the results in worker order. A panic in any call is re-raised here after all returned.
///
/// ```
/// let n = threadlab::broadcast(|ctx| ctx.num_threads()).len();
/// assert_eq!(n, threadlab::current_num_threads());
/// ```
pub fn broadcast<OP, R>(op: OP) -> Vec<R>
where
    OP: Fn(BroadcastContext<'_>) -> R + Sync,
    R: Send,
{
    broadcast_in(current_registry(), &op)
}

/// Queues `op` for every worker of the current pool (the global pool outside any) and
/// returns at once. A panic goes to the pool's panic handler, as a `spawn`'s does.
///
/// ```
/// use std::sync::mpsc::channel;
/// let (tx, rx) = channel();
/// let tx = std::sync::Mutex::new(tx);
/// threadlab::spawn_broadcast(move |ctx| tx.lock().unwrap().send(ctx.index()).unwrap());
/// let mut got: Vec<usize> = rx.iter().take(threadlab::current_num_threads()).collect();
/// got.sort();
/// assert_eq!(got, (0..threadlab::current_num_threads()).collect::<Vec<_>>());
/// ```
pub fn spawn_broadcast<OP>(op: OP)
where
    OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
{
    spawn_broadcast_in(current_registry(), op)
}

/// Runs `future` on the current pool (this worker's pool, else the global one) and returns its
/// [`JoinHandle`].
///
/// ```
/// let h = threadlab::spawn_future(async { "hi" });
/// assert_eq!(h.join(), "hi");
/// ```
#[track_caller]
pub fn spawn_future<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    spawn_tagged(current_registry(), None, Location::caller(), future)
}

/// Runs `future` to completion on this thread and returns its output. On a worker, the worker
/// runs other work of its pool between polls (no deadlock when the future waits for tasks of
/// that pool); on any other thread, the thread sleeps between polls, and tasks spawned with
/// [`spawn_future`] inside go to the global pool.
///
/// ```
/// let n = threadlab::block_on(async {
///     let h = threadlab::spawn_future(async { 20 });
///     h.await + 1
/// });
/// assert_eq!(n, 21);
/// ```
pub fn block_on<F: Future>(future: F) -> F::Output {
    crate::task::block_on::block_on_here(future)
}

/// [`spawn_future`] with a name, which the recorder puts on every poll's task span
/// ([`crate::trace::ARG_TASK_NAME`]) and the doctor and `compare` quote.
///
/// ```
/// let h = threadlab::spawn_future_named("fetch", async { 3 });
/// assert_eq!(h.join(), 3);
/// ```
#[track_caller]
pub fn spawn_future_named<F>(name: &'static str, future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    spawn_tagged(current_registry(), Some(name), Location::caller(), future)
}

/// A fire-and-forget task on `registry`, tagged if there is anything to carry.
#[inline]
pub(crate) fn spawn_fn<F: FnOnce() + Send + 'static>(
    registry: &Registry,
    name: Option<&'static str>,
    location: &'static Location<'static>,
    f: F,
) {
    match Tag::capture_spawned(name, location) {
        None => registry.spawn(f),
        Some(tag) => spawn_with_tag(registry, tag, f),
    }
}

/// The tagged task, out of line: the untagged path stays as small as it was.
#[cold]
#[inline(never)]
fn spawn_with_tag<F: FnOnce() + Send + 'static>(registry: &Registry, tag: Tag, f: F) {
    registry.spawn(tagged(tag, f));
}

/// [`spawn_fn`] in FIFO order per spawning thread (`pool::fifo`).
pub(crate) fn spawn_fifo_fn<F: FnOnce() + Send + 'static>(
    registry: &Registry,
    location: &'static Location<'static>,
    f: F,
) {
    match Tag::capture_spawned(None, location) {
        None => registry.spawn_fifo(f),
        Some(tag) => registry.spawn_fifo(tagged(tag, f)),
    }
}
