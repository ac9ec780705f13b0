//! Type-erased jobs: what the deques and the injector carry.
//!
//! A [`JobRef`] is two words, a data pointer and the function that runs it (the same idea as
//! rayon-core's `JobRef`), so one deque carries every kind of work: a [`StackJob`] that lives on
//! the stack of a thread blocked in `join`/`install` (no allocation), a [`HeapJob`] boxed by
//! `spawn`, and later futures and heartbeat-promoted work — anything that can produce a pointer
//! and an `unsafe fn(*const ())`.

use crate::latch::Latch;
use crate::loom::cell::UnsafeCell;
use crate::trace::hooks::{self, TaskSpan};
use crate::trace::TaskKind;
use crate::unwind::{self, Payload};

/// A pointer to a job and the function that executes it.
#[derive(Copy, Clone, Debug)]
pub(crate) struct JobRef {
    data: *const (),
    execute_fn: unsafe fn(*const ()),
}

// SAFETY: a JobRef is only created (by `JobRef::new`'s callers) for jobs whose data may be
// executed from any thread: the closures inside are `Send`.
unsafe impl Send for JobRef {}
// SAFETY: as above; a JobRef is an immutable pair of pointers.
unsafe impl Sync for JobRef {}

/// Something a worker can execute through a raw pointer.
pub(crate) trait Job {
    /// Runs the job.
    ///
    /// # Safety
    /// `this` must point to a live job that has not been executed yet; it is executed at most
    /// once.
    unsafe fn execute(this: *const ());
}

/// Two references are the same job when they point to the same data: `join` uses this to
/// recognise its own stack job when it pops it back. (Function pointers are not compared: their
/// addresses are not guaranteed unique. Distinct live jobs never share a data address, except
/// boxed zero-sized closures, which never equal a stack job's address.)
impl PartialEq for JobRef {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.data, other.data)
    }
}

impl Eq for JobRef {}

impl JobRef {
    /// Erases the type of `data`.
    ///
    /// # Safety
    /// `data` must stay valid until the job has executed, and `J::execute` must be callable from
    /// whichever thread pops the reference.
    #[inline]
    pub(crate) unsafe fn new<J: Job>(data: *const J) -> JobRef {
        JobRef {
            data: data.cast(),
            execute_fn: J::execute,
        }
    }

    /// Builds a JobRef from raw parts (for job kinds defined elsewhere, e.g. futures).
    ///
    /// # Safety
    /// As for [`JobRef::new`]: `execute_fn(data)` must be sound to call exactly once, on any thread.
    #[allow(dead_code)]
    pub(crate) unsafe fn from_raw(data: *const (), execute_fn: unsafe fn(*const ())) -> JobRef {
        JobRef { data, execute_fn }
    }

    /// The job's identity for the recorder's spawn → run arrows: its data address, unique among
    /// live jobs (reused only after the job ran).
    #[inline]
    pub(crate) fn id(&self) -> u64 {
        self.data as usize as u64
    }

    /// Runs the job.
    ///
    /// # Safety
    /// Each JobRef is executed exactly once.
    #[inline]
    pub(crate) unsafe fn execute(self) {
        // SAFETY: forwarded from the caller: the job is live and runs once.
        unsafe { (self.execute_fn)(self.data) }
    }
}

/// The outcome of a job that somebody waits for.
pub(crate) enum JobResult<T> {
    None,
    Ok(T),
    Panic(Payload),
}

impl<T> JobResult<T> {
    /// The value, or re-raise the job's panic.
    pub(crate) fn into_return_value(self) -> T {
        match self {
            JobResult::Ok(v) => v,
            JobResult::Panic(p) => unwind::resume_unwinding(p),
            JobResult::None => panic!("JobResult::into_return_value: the job never ran"),
        }
    }
}

/// A job on the stack of the thread that waits for it; `L` is set when it finished.
pub(crate) struct StackJob<L, F, R> {
    pub(crate) latch: L,
    /// What the recorder calls its run (`Join` for a join's second half, `Install`).
    kind: TaskKind,
    func: UnsafeCell<Option<F>>,
    result: UnsafeCell<JobResult<R>>,
}

impl<L: Latch, F: FnOnce(bool) -> R + Send, R: Send> StackJob<L, F, R> {
    pub(crate) fn new(kind: TaskKind, func: F, latch: L) -> Self {
        StackJob {
            latch,
            kind,
            func: UnsafeCell::new(Some(func)),
            result: UnsafeCell::new(JobResult::None),
        }
    }

    /// A reference for a deque, recorded as spawned. The caller must push it, and keep `self`
    /// in place until its latch is set or until it took the reference back and ran it inline
    /// (inside a `TaskSpan` from the reference's id, which closes the recorder's spawn arrow).
    #[inline]
    pub(crate) fn as_job_ref(&self) -> JobRef {
        // SAFETY: the caller keeps the job alive and pinned until it executed (documented above);
        // F and R are Send, so any thread may run it.
        let job = unsafe { JobRef::new(self) };
        hooks::spawn(job.id());
        job
    }

    /// A reference that is not published yet (a heartbeat frame's job): nothing is recorded;
    /// whoever publishes it records the spawn.
    ///
    /// # Safety
    /// As for [`StackJob::as_job_ref`], once it is published.
    #[inline]
    pub(crate) unsafe fn job_ref_unpublished(&self) -> JobRef {
        // SAFETY: forwarded to the caller.
        unsafe { JobRef::new(self) }
    }

    /// Runs the closure here, because nobody stole it, through a reference: the job stays where
    /// it is. (Moving it to run it copied the whole job in 16-byte
    /// loads right after its fields were written by narrower stores, which the processor cannot
    /// forward: a registered `join` spent most of its time there on a 1,023-node tree.)
    #[inline]
    pub(crate) fn run_inline_in_place(&self, migrated: bool) -> R {
        // SAFETY: the caller owns the job, and it was never published or the caller took its
        // reference back from its own deque, so no other thread can reach `func`.
        let func = unsafe { self.func.with_mut(|f| (*f).take()) };
        func.expect("StackJob::run_inline_in_place: job already taken")(migrated)
    }

    /// The result after the latch was set, through a reference (see
    /// [`StackJob::run_inline_in_place`]).
    #[inline]
    pub(crate) fn take_result(&self) -> R {
        // SAFETY: the latch was set, so the thread that ran the job wrote `result` and no
        // longer touches the job; its owner alone reads it now.
        let r = unsafe {
            self.result
                .with_mut(|r| std::mem::replace(&mut *r, JobResult::None))
        };
        r.into_return_value()
    }

    /// The result after the latch was set.
    #[inline]
    pub(crate) fn into_result(self) -> R {
        self.result.into_inner().into_return_value()
    }
}

impl<L: Latch, F: FnOnce(bool) -> R + Send, R: Send> Job for StackJob<L, F, R> {
    unsafe fn execute(this: *const ()) {
        let this = this as *const Self;
        // SAFETY: the job is alive until its latch is set (its owner waits for the latch), and
        // only this execution touches `func` and `result` before the latch is set.
        let (func, kind) = unsafe { ((*this).func.with_mut(|f| (*f).take()), (*this).kind) };
        let func = func.expect("StackJob::execute: job already taken");
        let span = TaskSpan::enter(kind, Some(this as usize as u64));
        let result = match unwind::halt_unwinding(|| func(true)) {
            Ok(v) => JobResult::Ok(v),
            Err(p) => JobResult::Panic(p),
        };
        // The span ends before the latch lets the owner go on (and reuse this address).
        drop(span);
        // SAFETY: as above, the owner does not read `result` before the latch is set.
        unsafe { (*this).result.with_mut(|r| *r = result) };
        // SAFETY: `this` is live here; after `set` begins the owner may free it, and `set` is
        // written not to touch it afterwards.
        unsafe { L::set(&(*this).latch) };
    }
}

/// A boxed job for fire-and-forget work; the closure itself handles panics and completion.
pub(crate) struct HeapJob<F> {
    /// The recorder's name for its run; `None` for jobs that record their own spans (a serial
    /// queue's drain). Never zero-sized, so two live boxes never share an address (the id).
    kind: Option<TaskKind>,
    func: F,
}

impl<F: FnOnce() + Send> HeapJob<F> {
    /// Boxes `func` and leaks it into a JobRef, recorded as spawned when it has a `kind`;
    /// executing the reference frees it. The caller must push the reference.
    #[inline]
    pub(crate) fn into_job_ref(kind: Option<TaskKind>, func: F) -> JobRef {
        let ptr = Box::into_raw(Box::new(HeapJob { kind, func }));
        // SAFETY: the box is leaked until `execute` reclaims it, exactly once; F is Send.
        let job = unsafe { JobRef::new(ptr) };
        if kind.is_some() {
            hooks::spawn(job.id());
        }
        job
    }
}

impl<F: FnOnce() + Send> Job for HeapJob<F> {
    unsafe fn execute(this: *const ()) {
        // SAFETY: `this` came from Box::into_raw in `into_job_ref`; it is live until reclaimed
        // below.
        let kind = unsafe { (*(this as *const Self)).kind };
        // The span begins while the box still holds the address its spawn recorded, so a new
        // job at the same address cannot be spawned before this run began.
        let _span = kind.map(|k| TaskSpan::enter(k, Some(this as usize as u64)));
        // SAFETY: `this` came from Box::into_raw in `into_job_ref`, and runs exactly once.
        let job = unsafe { Box::from_raw(this as *mut Self) };
        (job.func)();
    }
}

/// A job placed in a scope's [`JobArena`](crate::arena::JobArena) instead of its own heap box.
/// Like [`HeapJob`], the closure handles panics and completion itself.
pub(crate) struct ArenaJob<F> {
    kind: TaskKind,
    func: F,
}

impl<F: FnOnce() + Send> ArenaJob<F> {
    /// Places `func` in `arena` (or, if it does not fit the arena's rules, in a heap box) and
    /// returns a reference recorded as spawned. The caller must push it, and keep the arena alive
    /// until the job started.
    #[inline]
    pub(crate) fn into_job_ref(arena: &crate::arena::JobArena, kind: TaskKind, func: F) -> JobRef {
        match arena.place(ArenaJob { kind, func }) {
            Ok(ptr) => {
                // SAFETY: the job stays in the arena until `execute` moved its closure out and
                // released it; F is Send, so any thread may run it.
                let job = unsafe { JobRef::new(ptr.as_ptr() as *const Self) };
                hooks::spawn(job.id());
                job
            }
            Err(ArenaJob { kind, func }) => HeapJob::into_job_ref(Some(kind), func),
        }
    }
}

impl<F: FnOnce() + Send> Job for ArenaJob<F> {
    unsafe fn execute(this: *const ()) {
        let this = this as *const Self;
        // SAFETY: `this` was placed by `into_job_ref` and runs exactly once; its arena is alive
        // (the scope waits for its jobs).
        let kind = unsafe { (*this).kind };
        // The span begins while the job still holds the address its spawn recorded.
        let _span = TaskSpan::enter(kind, Some(this as usize as u64));
        // SAFETY: as above; the closure is moved out once, and the memory is released right
        // after (nothing reads it again).
        let func = unsafe { std::ptr::read(&(*this).func) };
        // SAFETY: placed by the arena, started exactly once, arena alive (see above).
        unsafe { crate::arena::job_started(this as *const u8) };
        func();
    }
}
