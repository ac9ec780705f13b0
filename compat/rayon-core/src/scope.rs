//! Scopes: [`Scope`] and [`ScopeFifo`], and the functions that open them.
//!
//! A scope opened on a pool's thread is threadlab's own (`threadlab::Scope`, whose `spawn_fifo`
//! keeps spawn order): [`Scope`] and [`ScopeFifo`] are handles that point at it, made afresh for
//! each body and task that receives one.
//!
//! `in_place_scope` runs its body on the calling thread, so the body need not be `Send`. On a
//! thread of the pool, threadlab's scope already runs the body right there. Off the pool (a
//! plain thread, or a thread of another pool for [`ThreadPool::in_place_scope`]), the scope is
//! this file's own [`Outside`] scope: the body runs on the caller; each task is sent to the pool
//! as a fire-and-forget task, counted in the scope; the caller then blocks until the count is
//! back to zero (it is not one of the pool's threads, so blocking holds no worker) and re-raises
//! the first panic, the body's before any task's.
//!
//! [`ThreadPool::in_place_scope`]: crate::ThreadPool::in_place_scope

use std::any::Any;
use std::fmt;
use std::marker::PhantomData;
use std::sync::{Arc, Condvar, Mutex};

use crate::broadcast::BroadcastContext;
use crate::global;

/// A scope in which tasks may borrow whatever outlives `'scope`; the function that opened it
/// returns once every task spawned in it finished. See [`scope()`].
pub struct Scope<'scope> {
    at: At<'scope>,
}

/// A scope whose tasks, spawned with [`ScopeFifo::spawn_fifo`], start in the order they were
/// spawned (when no other thread takes them first). See [`scope_fifo()`].
pub struct ScopeFifo<'scope> {
    at: At<'scope>,
}

/// What a scope handle points at.
#[derive(Clone, Copy)]
enum At<'scope> {
    /// threadlab's scope, alive while the body or task that got this handle runs.
    Threadlab(*const threadlab::Scope<'scope>),
    /// This file's scope for `in_place_scope` off the pool, alive until its count is zero.
    Outside(*const Outside<'scope>),
}

/// What a handle points at, borrowed for as long as the handle.
enum Place<'a, 'scope> {
    Threadlab(&'a threadlab::Scope<'scope>),
    Outside(&'a Outside<'scope>),
}

impl<'scope> At<'scope> {
    fn place(&self) -> Place<'_, 'scope> {
        match *self {
            // SAFETY: a handle is given only to a scope's body or one of its tasks, for the
            // length of that call, and the scope outlives both: threadlab's scope returns after
            // its body and tasks, `in_place` after `Outside::wait`.
            At::Threadlab(s) => Place::Threadlab(unsafe { &*s }),
            // SAFETY: as above.
            At::Outside(o) => Place::Outside(unsafe { &*o }),
        }
    }
}

// SAFETY: a handle only reaches a `threadlab::Scope` (Send and Sync) or an `Outside` (whose
// fields are Send and Sync: an `Arc` of a mutex-guarded state, an `Arc<threadlab::Pool>`), each
// alive while a handle to it can be used (see `At`); the pointers are only read through.
unsafe impl Send for At<'_> {}
// SAFETY: as above.
unsafe impl Sync for At<'_> {}

impl fmt::Debug for Scope<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope").finish_non_exhaustive()
    }
}

impl fmt::Debug for ScopeFifo<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScopeFifo").finish_non_exhaustive()
    }
}

/// [`Scope`] and [`ScopeFifo`]: handles made from what they point at.
trait Handle<'scope> {
    fn of(at: At<'scope>) -> Self;
}

impl<'scope> Handle<'scope> for Scope<'scope> {
    fn of(at: At<'scope>) -> Self {
        Scope { at }
    }
}

impl<'scope> Handle<'scope> for ScopeFifo<'scope> {
    fn of(at: At<'scope>) -> Self {
        ScopeFifo { at }
    }
}

/// A handle of type `H` to threadlab's scope `s`.
fn on_threadlab<'scope, H: Handle<'scope>>(s: &threadlab::Scope<'scope>) -> H {
    H::of(At::Threadlab(s))
}

impl<'scope> At<'scope> {
    /// A task of the scope, given a handle of type `H`; `fifo`: in spawn order.
    #[track_caller]
    fn spawn<H, BODY>(self, fifo: bool, body: BODY)
    where
        H: Handle<'scope>,
        BODY: FnOnce(&H) + Send + 'scope,
    {
        match (self.place(), fifo) {
            (Place::Threadlab(s), false) => s.spawn(move |s| body(&on_threadlab(s))),
            (Place::Threadlab(s), true) => s.spawn_fifo(move |s| body(&on_threadlab(s))),
            (Place::Outside(o), false) => o.spawn(move |o| body(&H::of(At::Outside(o)))),
            (Place::Outside(o), true) => o.spawn_fifo(move |o| body(&H::of(At::Outside(o)))),
        }
    }

    /// `body` once on each of the pool's threads, as tasks of the scope.
    fn spawn_broadcast<H, BODY>(self, body: BODY)
    where
        H: Handle<'scope>,
        BODY: Fn(&H, BroadcastContext<'_>) + Send + Sync + 'scope,
    {
        match self.place() {
            Place::Threadlab(s) => s.spawn_broadcast(move |s, ctx| {
                body(&on_threadlab(s), BroadcastContext::from_threadlab(ctx))
            }),
            Place::Outside(o) => o.spawn_broadcast(move |o, ctx| body(&H::of(At::Outside(o)), ctx)),
        }
    }
}

impl<'scope> Scope<'scope> {
    /// The handle of threadlab's scope `s` (for `ThreadPool::scope`).
    pub(crate) fn on_threadlab(s: &threadlab::Scope<'scope>) -> Self {
        on_threadlab(s)
    }

    /// Spawns a task into the scope. It may borrow anything that outlives `'scope`, and gets
    /// the scope, to spawn more.
    ///
    /// ```
    /// let mut a = 0;
    /// let mut b = 0;
    /// rayon_core::scope(|s| {
    ///     s.spawn(|s| {
    ///         a = 1;
    ///         s.spawn(|_| b = 2); // a task may spawn more into the scope
    ///     });
    /// });
    /// assert_eq!((a, b), (1, 2));
    /// ```
    #[track_caller]
    pub fn spawn<BODY>(&self, body: BODY)
    where
        BODY: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        self.at.spawn(false, body)
    }

    /// Spawns `body` once on each of the pool's threads, as tasks of this scope, each told
    /// where it runs.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(3).build()?;
    /// let calls = AtomicUsize::new(0);
    /// pool.scope(|s| s.spawn_broadcast(|_, ctx| {
    ///     assert_eq!(ctx.num_threads(), 3);
    ///     calls.fetch_add(1, Ordering::Relaxed);
    /// }));
    /// assert_eq!(calls.into_inner(), 3);
    /// # Ok::<(), rayon_core::ThreadPoolBuildError>(())
    /// ```
    pub fn spawn_broadcast<BODY>(&self, body: BODY)
    where
        BODY: Fn(&Scope<'scope>, BroadcastContext<'_>) + Send + Sync + 'scope,
    {
        self.at.spawn_broadcast(body)
    }
}

impl<'scope> ScopeFifo<'scope> {
    /// The handle of threadlab's scope `s` (for `ThreadPool::scope_fifo`).
    pub(crate) fn on_threadlab(s: &threadlab::Scope<'scope>) -> Self {
        on_threadlab(s)
    }

    /// Spawns a task into the scope; the scope's tasks start in the order they were spawned,
    /// unless another thread takes one first.
    ///
    /// ```
    /// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(1).build()?;
    /// let order = std::sync::Mutex::new(Vec::new());
    /// pool.scope_fifo(|s| {
    ///     for i in 0..4 {
    ///         let order = &order;
    ///         s.spawn_fifo(move |_| order.lock().unwrap().push(i));
    ///     }
    /// });
    /// assert_eq!(order.into_inner().unwrap(), [0, 1, 2, 3]);
    /// # Ok::<(), rayon_core::ThreadPoolBuildError>(())
    /// ```
    #[track_caller]
    pub fn spawn_fifo<BODY>(&self, body: BODY)
    where
        BODY: FnOnce(&ScopeFifo<'scope>) + Send + 'scope,
    {
        self.at.spawn(true, body)
    }

    /// [`Scope::spawn_broadcast`] for a FIFO scope.
    ///
    /// ```
    /// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(2).build()?;
    /// let seen = std::sync::Mutex::new(Vec::new());
    /// pool.scope_fifo(|s| s.spawn_broadcast(|_, ctx| seen.lock().unwrap().push(ctx.index())));
    /// let mut seen = seen.into_inner().unwrap();
    /// seen.sort();
    /// assert_eq!(seen, [0, 1]);
    /// # Ok::<(), rayon_core::ThreadPoolBuildError>(())
    /// ```
    pub fn spawn_broadcast<BODY>(&self, body: BODY)
    where
        BODY: Fn(&ScopeFifo<'scope>, BroadcastContext<'_>) + Send + Sync + 'scope,
    {
        self.at.spawn_broadcast(body)
    }
}

/// Opens a scope on the current thread's pool (else the global pool), runs `op` in it on one of
/// the pool's threads, and returns once `op` and every task spawned in the scope finished. The
/// first panic among them is re-raised here.
///
/// ```
/// let data = [1, 2, 3, 4];
/// let mut sums = [0; 2];
/// let (left, right) = sums.split_at_mut(1);
/// rayon_core::scope(|s| {
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
    global::ensure_outside_pool();
    threadlab::scope(|s| op(&on_threadlab(s)))
}

/// [`scope()`] whose tasks are spawned with [`ScopeFifo::spawn_fifo`], in order.
///
/// ```
/// let mut v = [0; 2];
/// let (a, b) = v.split_at_mut(1);
/// rayon_core::scope_fifo(|s| {
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
    global::ensure_outside_pool();
    threadlab::scope(|s| op(&on_threadlab(s)))
}

/// A scope whose body runs on the calling thread, so it may use what is not `Send` (an `Rc`, a
/// `RefCell` borrow); its tasks run on the current thread's pool, else the global pool, and
/// this returns once the body and all of them finished.
///
/// ```
/// use std::cell::RefCell;
/// let log = RefCell::new(Vec::new()); // not Sync: only the body touches it
/// let mut squares = [0u64; 4];
/// rayon_core::in_place_scope(|s| {
///     for (i, sq) in squares.iter_mut().enumerate() {
///         s.spawn(move |_| *sq = (i * i) as u64);
///     }
///     log.borrow_mut().push("spawned");
/// });
/// assert_eq!(squares, [0, 1, 4, 9]);
/// assert_eq!(log.into_inner(), ["spawned"]);
/// ```
pub fn in_place_scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    in_place_on(None, op)
}

/// [`in_place_scope`] whose tasks are spawned with [`ScopeFifo::spawn_fifo`].
///
/// ```
/// let mut x = 0;
/// rayon_core::in_place_scope_fifo(|s| s.spawn_fifo(|_| x = 3));
/// assert_eq!(x, 3);
/// ```
pub fn in_place_scope_fifo<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R,
{
    in_place_fifo_on(None, op)
}

/// `in_place_scope` on `pool` (`None`: the current thread's pool, else the global one).
pub(crate) fn in_place_on<'scope, OP, R>(pool: Option<&Target>, op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    in_place(pool, |at| op(&Scope::of(at)))
}

/// `in_place_scope_fifo` on `pool` (`None`: the current thread's pool, else the global one).
pub(crate) fn in_place_fifo_on<'scope, OP, R>(pool: Option<&Target>, op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R,
{
    in_place(pool, |at| op(&ScopeFifo::of(at)))
}

fn in_place<'scope, OP, R>(pool: Option<&Target>, op: OP) -> R
where
    OP: FnOnce(At<'scope>) -> R,
{
    let on_the_pool = match pool {
        Some(p) => p.pool.current_thread_index().is_some(),
        None => threadlab::current_thread_index().is_some(),
    };
    if on_the_pool {
        // On a thread of the pool, threadlab's scope runs its body right here, synchronously
        // (threadlab's `scope` and `Pool::scope` on one of the pool's own workers), so the body
        // and its value never leave this thread.
        let op = AssertSend(op);
        let run =
            move |s: &threadlab::Scope<'scope>| AssertSend((op.into_inner())(At::Threadlab(s)));
        return match pool {
            Some(p) => p.pool.scope(run),
            None => threadlab::scope(run),
        }
        .into_inner();
    }
    if pool.is_none() {
        global::ensure_outside_pool();
    }
    let outside = Outside {
        state: Arc::default(),
        pool: pool.cloned(),
        _scope: PhantomData,
    };
    let result =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| op(At::Outside(&outside))));
    let task_panic = outside.wait();
    match (result, task_panic) {
        (Err(p), _) | (Ok(_), Some(p)) => std::panic::resume_unwind(p),
        (Ok(r), None) => r,
    }
}

/// Moves a value that is not `Send` across a `Send` bound, for a closure that never leaves the
/// thread it was made on (see its one use).
struct AssertSend<T>(T);

// SAFETY: used only for the body of `in_place_scope` and its value on a thread of the pool,
// where threadlab runs the scope's body on the calling thread before `scope` returns: the value
// is made, used and dropped on one thread.
unsafe impl<T> Send for AssertSend<T> {}

impl<T> AssertSend<T> {
    fn into_inner(self) -> T {
        self.0
    }
}

/// The scope of `in_place_scope` off the pool, on the caller's stack while the caller waits.
struct Outside<'scope> {
    state: Arc<Count>,
    /// Where tasks go: this pool, else the current thread's (the global one, off the pools).
    pool: Option<Target>,
    /// Invariant in `'scope`, as the scope handles are.
    _scope: PhantomData<&'scope mut &'scope ()>,
}

/// A `ThreadPool`'s pool: where an [`Outside`] scope of `ThreadPool::in_place_scope` sends its
/// tasks.
#[derive(Clone)]
pub(crate) struct Target {
    pub(crate) pool: Arc<threadlab::Pool>,
}

/// The tasks of an [`Outside`] scope not finished yet, and the first panic among them; each
/// task holds it by `Arc`, so the count it lowers last outlives the scope's stack frame.
#[derive(Default)]
struct Count {
    state: Mutex<CountState>,
    zero: Condvar,
}

#[derive(Default)]
struct CountState {
    pending: usize,
    panic: Option<Box<dyn Any + Send>>,
}

impl Count {
    fn lock(&self) -> std::sync::MutexGuard<'_, CountState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A task (or a broadcast's call) of the scope ended, with `r`: keeps the first panic and
    /// lowers the count, waking the waiting caller at zero.
    fn finish(&self, r: std::thread::Result<()>) {
        let mut state = self.lock();
        if let Err(p) = r {
            if state.panic.is_none() {
                state.panic = Some(p);
            }
            // A later panic is dropped here, its own panic while dropping caught.
        }
        state.pending -= 1;
        if state.pending == 0 {
            self.zero.notify_all();
        }
    }
}

/// A pointer to an [`Outside`] scope, carried by its tasks.
struct OutsidePtr<'scope>(*const Outside<'scope>);

// SAFETY: `Outside` is Sync (an `Arc<Count>`, a `Target`), and it outlives every task that
// carries this pointer: `Outside::wait` returns only once each has finished.
unsafe impl Send for OutsidePtr<'_> {}
// SAFETY: as above (a broadcast's calls share one pointer).
unsafe impl Sync for OutsidePtr<'_> {}

impl<'scope> Outside<'scope> {
    /// Sends `body` to the pool as a task of this scope.
    #[track_caller]
    fn spawn<BODY>(&self, body: BODY)
    where
        BODY: FnOnce(*const Outside<'scope>) + Send + 'scope,
    {
        let task = self.task(body);
        match &self.pool {
            Some(p) => p.pool.spawn(task),
            None => threadlab::spawn(task),
        }
    }

    /// [`Outside::spawn`] in spawn order.
    #[track_caller]
    fn spawn_fifo<BODY>(&self, body: BODY)
    where
        BODY: FnOnce(*const Outside<'scope>) + Send + 'scope,
    {
        let task = self.task(body);
        match &self.pool {
            Some(p) => p.pool.spawn_fifo(task),
            None => threadlab::spawn_fifo(task),
        }
    }

    /// `body` once on every thread of the pool, as tasks of this scope.
    fn spawn_broadcast<BODY>(&self, body: BODY)
    where
        BODY: Fn(*const Outside<'scope>, BroadcastContext<'_>) + Send + Sync + 'scope,
    {
        let threads = match &self.pool {
            Some(p) => p.pool.current_num_threads(),
            None => threadlab::current_num_threads(),
        };
        self.state.lock().pending += threads;
        let count = Arc::clone(&self.state);
        let me = OutsidePtr(self);
        let call: Box<dyn Fn(threadlab::BroadcastContext) + Send + Sync + 'scope> =
            Box::new(move |ctx| {
                let me = &me;
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    body(me.0, BroadcastContext::from_threadlab(ctx))
                }));
                count.finish(r);
            });
        // SAFETY: only the lifetime changes. Everything the calls borrow outlives `'scope`, and
        // the scope's function does not return before every call has run: the count holds one
        // for each of the pool's threads (the calls threadlab makes), each lowered as a call's
        // last step (after which it touches only its own `Arc<Count>`).
        let call = unsafe {
            std::mem::transmute::<
                Box<dyn Fn(threadlab::BroadcastContext) + Send + Sync + 'scope>,
                Box<dyn Fn(threadlab::BroadcastContext) + Send + Sync + 'static>,
            >(call)
        };
        match &self.pool {
            Some(p) => p.pool.spawn_broadcast(call),
            None => threadlab::spawn_broadcast(call),
        }
    }

    /// Counts a task and returns it, with `'scope` erased so that threadlab's `spawn` takes it.
    fn task<BODY>(&self, body: BODY) -> Box<dyn FnOnce() + Send + 'static>
    where
        BODY: FnOnce(*const Outside<'scope>) + Send + 'scope,
    {
        self.state.lock().pending += 1;
        let count = Arc::clone(&self.state);
        let me = OutsidePtr(self);
        let task: Box<dyn FnOnce() + Send + 'scope> = Box::new(move || {
            let me = me;
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(me.0)));
            count.finish(r);
        });
        // SAFETY: only the lifetime changes. Everything the task borrows outlives `'scope`,
        // and the scope's function does not return before the task has run: `Outside::wait`
        // waits for this task's count, lowered as the task's last step (after which it touches
        // only its own `Arc<Count>`), whether the body and the task returned or panicked.
        unsafe {
            std::mem::transmute::<
                Box<dyn FnOnce() + Send + 'scope>,
                Box<dyn FnOnce() + Send + 'static>,
            >(task)
        }
    }

    /// Blocks until every task of the scope finished; returns the first task's panic.
    fn wait(&self) -> Option<Box<dyn Any + Send>> {
        let mut state = self.state.lock();
        while state.pending > 0 {
            state = self
                .state
                .zero
                .wait(state)
                .unwrap_or_else(|e| e.into_inner());
        }
        state.panic.take()
    }
}
