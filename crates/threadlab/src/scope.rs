//! `scope`: spawn tasks that borrow from the caller's frame; the scope returns when all finished.
//!
//! One counter per scope (a [`CountLatch`]), started at a large bias for the body. A `spawn` by
//! the body's own worker while the body runs (the common case: a loop of spawns) only bumps a
//! plain owner-written count; the body subtracts the bias minus that count in one step when it
//! returns. Spawns from elsewhere (other workers, or after the body) increment the shared counter.
//! So a task costs one contended atomic (its completion) instead of two. `spawn` then boxes the
//! task (no reference count, no registry clone: the task finds its pool through the
//! worker that runs it) and pushes it onto the spawning worker's deque. The scope's owner, when
//! its body returns, runs other work until the count reaches zero. Panics of the body or the
//! tasks are caught; the first is re-raised by `scope` after every task finished.
//!
//! `spawn_fifo` keeps Rayon's order for `scope_fifo`: with no thief, the FIFO tasks one thread
//! spawns into a scope run in the order it spawned them. The task goes into the scope's queue
//! for the spawning seat, and a *stub* job onto the seat's deque in its place; whichever stub
//! runs first (the deque's owner pops its newest) runs the oldest task of that queue
//! (`pool/fifo.rs`). One stub per task, so each task runs once; a stub touches the scope only
//! before it runs its task, which the scope's count still holds open. This is rayon-core's
//! design for `scope_fifo` (a FIFO per worker and scope, entered through the deque). From a
//! thread that is no seat of the pool (an `in_place_scope` body) the task goes to the pool's
//! injector, FIFO already.

use std::marker::PhantomData;
use std::sync::OnceLock;

use crate::arena::JobArena;
use crate::context::Tag;
use crate::job::{ArenaJob, HeapJob, JobRef};
use crate::latch::Latch;
use crate::loom::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use crate::loom::sync::Arc;
use crate::pool::fifo::Fifo;
use crate::pool::registry::Registry;
use crate::pool::worker::WorkerThread;
use crate::pool::worker_latch::CountLatch;
use crate::trace::TaskKind;
use crate::unwind::{self, Payload};

/// A scope in which tasks may borrow data that outlives `'scope`. See [`scope()`](crate::scope()).
pub struct Scope<'scope> {
    /// The scope's pool; a raw pointer, not an `Arc` clone (a shared counter every nested scope
    /// would bump twice): the caller of the scope keeps it alive (the owner worker, or the
    /// `in_place_scope` caller's pool handle), and the scope lives on the caller's stack.
    registry: *const Registry,
    latch: CountLatch,
    /// The worker running the body; null for an `in_place_scope` body run off the pool.
    owner: *const WorkerThread,
    /// Jobs spawned by the owner while the body runs; written only by the owner.
    owner_spawned: AtomicUsize,
    /// The body returned (written and read only by the owner).
    body_done: AtomicBool,
    /// The first panic of a task, boxed once more so it fits a thin pointer.
    panic: AtomicPtr<Payload>,
    /// Where the owner's spawns during the body are placed (`crate::arena`); owner-only, apart
    /// from the arena's free list.
    arena: JobArena,
    /// The tasks of `spawn_fifo` not started yet, a queue per seat of the pool, oldest first
    /// (see the module doc); made at the first `spawn_fifo`.
    fifos: OnceLock<Box<[Fifo]>>,
    /// Invariant in `'scope`, like `std::thread::Scope`.
    marker: PhantomData<&'scope mut &'scope ()>,
}

impl std::fmt::Debug for Scope<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scope").finish_non_exhaustive()
    }
}

pub(crate) fn scope_on_worker<'scope, OP, R>(w: &WorkerThread, op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    scope_owned_by(w, w.registry(), op)
}

/// A scope of `registry`'s pool whose body runs on `w` (a worker of that pool, or of another
/// one: its spawns then go to `registry`'s injector) and which waits for its tasks on `w`,
/// running `w`'s own pool's work meanwhile.
fn scope_owned_by<'scope, OP, R>(w: &WorkerThread, registry: &Registry, op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    let scope = Scope {
        registry,
        latch: CountLatch::new(w.registry(), w.index()),
        owner: w,
        owner_spawned: AtomicUsize::new(0),
        body_done: AtomicBool::new(false),
        panic: AtomicPtr::new(std::ptr::null_mut()),
        arena: JobArena::new(w.chunk_cache()),
        fifos: OnceLock::new(),
        marker: PhantomData,
    };
    let result = unwind::halt_unwinding(|| op(&scope));
    // Relaxed: written and read by this thread only.
    scope.body_done.store(true, Ordering::Relaxed);
    let owner_spawned = scope.owner_spawned.load(Ordering::Relaxed);
    // SAFETY: the latch is live (on our stack); this releases the body's bias, minus the jobs
    // the body spawned, which still count until they finish.
    unsafe { CountLatch::release(&scope.latch, CountLatch::BODY - owner_spawned) };
    w.wait_until(&scope.latch.core);
    // Every job has run, so every arena job has started.
    scope.arena.free_all();
    scope.finish(result)
}

/// `in_place_scope` on `registry`'s pool: the body runs on the calling thread, so it need not
/// be `Send` (Rayon's meaning). On a worker of any pool the scope is that worker's, as
/// [`scope_on_worker`]'s; from any other thread the body runs there, off the pool (its spawns go
/// to the injector), and the caller then waits for the scope's tasks, as the guest of a
/// sleeping worker if the pool lends one (running the pool's work meanwhile), else parked.
pub(crate) fn in_place_scope_in<'scope, OP, R>(registry: &Arc<Registry>, op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    if let Some(w) = WorkerThread::current() {
        return scope_owned_by(w, registry, op);
    }
    registry.refuse_if_forked_away();
    let scope = Scope {
        registry: &**registry,
        latch: CountLatch::for_this_thread(),
        owner: std::ptr::null(),
        owner_spawned: AtomicUsize::new(0),
        body_done: AtomicBool::new(true),
        panic: AtomicPtr::new(std::ptr::null_mut()),
        arena: JobArena::unused(),
        fifos: OnceLock::new(),
        marker: PhantomData,
    };
    let result = unwind::halt_unwinding(|| op(&scope));
    // SAFETY: the latch is live (on our stack); every spawn of the body was counted on the
    // latch itself (no owner worker), so only the bias is released.
    unsafe { CountLatch::release(&scope.latch, CountLatch::BODY) };
    if !scope.latch.core.probe() {
        wait_outside(registry, &scope.latch);
    }
    scope.finish(result)
}

/// The caller of an `in_place_scope` outside the pool waits for the scope's tasks: as a guest
/// of a sleeping worker's seat if the pool allows guests and one sleeps (it then runs the
/// pool's work, the scope's tasks among it, and parks on its own thread when there is none,
/// which the latch's setter unparks), else parked until the latch is set.
#[cold]
fn wait_outside(registry: &Registry, latch: &CountLatch) {
    match registry.lend_seat() {
        Some(index) => {
            crate::pool::worker::run_as_guest(registry, index, |seat, _| {
                seat.wait_until(&latch.core)
            });
        }
        None => latch.wait_parked(),
    }
}

/// A raw pointer to a scope, sent to its tasks.
struct ScopePtr<'scope>(*const Scope<'scope>);
// SAFETY: the scope is Sync (see below) and outlives its tasks, because `scope` waits for the
// count to reach zero before returning.
unsafe impl Send for ScopePtr<'_> {}

// SAFETY: every field is an atomic or a Sync latch, except `registry`, a pointer to a `Sync`
// registry that the owner worker keeps alive while the scope exists, `owner`, which is only
// compared by address, never dereferenced, and `arena`, whose `Cell`s only the owner's thread
// touches (`spawn` places a job in it only when `count_spawn` found it on the owner's thread, and
// `scope_on_worker` frees it there) while other threads only push onto its returned list (an atomic stack).
unsafe impl Sync for Scope<'_> {}
// SAFETY: as above.
unsafe impl Send for Scope<'_> {}

impl<'scope> Scope<'scope> {
    /// After every task finished: the body's value, or the first panic (the body's, else a
    /// task's) re-raised.
    fn finish<R>(&self, result: Result<R, Payload>) -> R {
        let task_panic = self.panic.swap(std::ptr::null_mut(), Ordering::Acquire);
        let task_panic = if task_panic.is_null() {
            None
        } else {
            // SAFETY: a non-null pointer came from Box::into_raw in `record_panic`, swapped out
            // once.
            Some(unsafe { *Box::from_raw(task_panic) })
        };
        match (result, task_panic) {
            (Err(p), _) | (Ok(_), Some(p)) => unwind::resume_unwinding(p),
            (Ok(v), None) => v,
        }
    }

    /// Spawns a task into the scope. It may borrow anything that outlives `'scope`, and gets the
    /// scope to spawn more. The recorder marks its task span with the spawn's location (and
    /// [`Scope::spawn_named`] with a name too).
    #[inline]
    #[track_caller]
    pub fn spawn<F>(&self, body: F)
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        self.spawn_tagged(None, std::panic::Location::caller(), body);
    }

    /// The task, tagged with its name, location and spawn context when there is any to carry
    /// (`crate::context`).
    #[inline(always)]
    fn spawn_tagged<F>(
        &self,
        name: Option<&'static str>,
        location: &'static std::panic::Location<'static>,
        body: F,
    ) where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        match Tag::capture_spawned(name, location) {
            None => self.spawn_untagged(body),
            Some(tag) => self.spawn_with_tag(tag, body),
        }
    }

    /// The tagged task, out of line: the untagged path stays as small as it was.
    #[cold]
    #[inline(never)]
    fn spawn_with_tag<F>(&self, tag: Tag, body: F)
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        self.spawn_untagged(move |s: &Scope<'scope>| {
            let _entered = tag.enter();
            body(s)
        });
    }

    #[inline(always)]
    fn spawn_untagged<F>(&self, body: F)
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        let job = self.task_job(body);
        // SAFETY: the owner worker holds the registry for as long as the scope exists (above).
        unsafe { &*self.registry }.push(job);
    }

    /// The job of a task of this scope, counted in it; the caller pushes it.
    #[inline(always)]
    fn task_job<F>(&self, body: F) -> JobRef
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        let by_owner = self.count_spawn();
        let ptr = ScopePtr(self);
        // The body travels in a `MaybeUninit`, which is opaque to the borrow model: the job's
        // closure is an argument of the call that runs it, and a reference the body captured
        // (`&mut slot`) would stay protected until that call returns, after `Latch::set` below
        // let the scope's owner read `slot` again (Miri's Stacked Borrows reported exactly that).
        // Moved out into a local, the body's references are protected only while it runs.
        let body = std::mem::MaybeUninit::new(body);
        let task = move || {
            let ptr = ptr;
            // SAFETY: written just above and read exactly once, here (the closure is `FnOnce`).
            let body = unsafe { body.assume_init() };
            // SAFETY: see ScopePtr: the scope waits for this task's count before it is freed.
            let scope = unsafe { &*ptr.0 };
            if let Err(p) = unwind::halt_unwinding(|| body(scope)) {
                scope.record_panic(p);
            }
            // SAFETY: the latch is live until its count reaches zero, which this call may do;
            // we touch `scope` no more afterwards.
            unsafe { Latch::set(&scope.latch) };
        };
        if by_owner {
            // Only the owner touches the arena's bump state (see `Sync for Scope`).
            ArenaJob::into_job_ref(&self.arena, TaskKind::Spawn, task)
        } else {
            HeapJob::into_job_ref(Some(TaskKind::Spawn), task)
        }
    }

    /// Spawns a task into the scope to run in spawn order (see the module doc): with no
    /// thief, a scope's `spawn_fifo` tasks run oldest first (Rayon's `ScopeFifo::spawn_fifo`;
    /// `spawn`'s run newest first).
    ///
    /// ```
    /// let pool = threadlab::Pool::builder().threads(1).build()?;
    /// let order = std::sync::Mutex::new(Vec::new());
    /// pool.scope_fifo(|s| {
    ///     for i in 0..4 {
    ///         let order = &order;
    ///         s.spawn_fifo(move |_| order.lock().unwrap().push(i));
    ///     }
    /// });
    /// assert_eq!(order.into_inner().unwrap(), [0, 1, 2, 3]);
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    #[track_caller]
    pub fn spawn_fifo<F>(&self, body: F)
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        let job = match Tag::capture(None, std::panic::Location::caller()) {
            None => self.task_job(body),
            Some(tag) => self.task_job(move |s: &Scope<'scope>| {
                let _entered = tag.enter();
                body(s)
            }),
        };
        // SAFETY: the owner worker holds the registry for as long as the scope exists (above).
        let registry = unsafe { &*self.registry };
        match WorkerThread::current() {
            Some(w) if std::ptr::eq(&**w.registry(), registry) => {
                let fifos = self.fifos.get_or_init(|| {
                    (0..registry.seats_total())
                        .map(|_| Fifo::default())
                        .collect()
                });
                // SAFETY: the scope's queues live until the scope ends, which waits for `job`;
                // the stub runs before `job` does.
                let stub = unsafe { fifos[w.index()].push(job) };
                w.push(stub);
            }
            _ => registry.inject(job),
        }
    }

    /// Runs `body` once on every worker of the scope's pool, as tasks of the scope (Rayon's
    /// `Scope::spawn_broadcast`): each call gets the scope and where it runs, and the scope
    /// waits for all of them. The calls are mailed to each worker's inbox, so they run on the
    /// workers at once (calls that meet at a barrier return).
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// let pool = threadlab::Pool::builder().threads(3).build()?;
    /// let sum = AtomicUsize::new(0);
    /// pool.scope(|s| s.spawn_broadcast(|_, ctx| {
    ///     sum.fetch_add(ctx.index(), Ordering::Relaxed);
    /// }));
    /// assert_eq!(sum.into_inner(), 0 + 1 + 2);
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    pub fn spawn_broadcast<B>(&self, body: B)
    where
        B: Fn(&Scope<'scope>, crate::broadcast::BroadcastContext<'_>) + Send + Sync + 'scope,
    {
        // SAFETY: the owner worker holds the registry for as long as the scope exists (above).
        let registry = unsafe { &*self.registry };
        let n = registry.num_threads();
        let body = std::sync::Arc::new(body);
        for index in 0..n {
            let body = std::sync::Arc::clone(&body);
            let ctx = crate::broadcast::BroadcastContext::new(index, n);
            let job = self.task_job(move |s: &Scope<'scope>| body(s, ctx));
            registry.push_to(index, job);
        }
    }

    /// Counts a spawn; true when it is the owner's, during the body (counted without atomics).
    #[inline]
    fn count_spawn(&self) -> bool {
        let on_owner = WorkerThread::current().is_some_and(|w| std::ptr::eq(w, self.owner));
        // Relaxed: `body_done` and `owner_spawned` are only touched by the owner's thread.
        if on_owner && !self.body_done.load(Ordering::Relaxed) {
            let n = self.owner_spawned.load(Ordering::Relaxed);
            self.owner_spawned.store(n + 1, Ordering::Relaxed);
            true
        } else {
            self.latch.increment();
            false
        }
    }

    /// [`Scope::spawn`] with a name, which the recorder puts on the task's span
    /// ([`crate::trace::ARG_TASK_NAME`]) and the doctor and `compare` quote.
    ///
    /// ```
    /// let rec = threadlab::trace::start();
    /// threadlab::scope(|s| s.spawn_named("flush", |_| {}));
    /// let trace = rec.stop();
    /// assert!(trace.name_id("flush").is_some());
    /// ```
    #[track_caller]
    pub fn spawn_named<F>(&self, name: &'static str, body: F)
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        self.spawn_tagged(Some(name), std::panic::Location::caller(), body);
    }

    #[cold]
    fn record_panic(&self, p: Payload) {
        let boxed = Box::into_raw(Box::new(p));
        // AcqRel: publishes the payload (Release) to the owner's Acquire swap.
        if self
            .panic
            .compare_exchange(
                std::ptr::null_mut(),
                boxed,
                Ordering::AcqRel,
                Ordering::Relaxed,
            )
            .is_err()
        {
            // Not the first panic: drop it.
            // SAFETY: `boxed` was not published, so we still own it.
            // Dropped where a panic of the payload's `Drop` is caught: this runs on a worker.
            unwind::drop_caught_printed(unsafe { Box::from_raw(boxed) });
        }
    }
}
