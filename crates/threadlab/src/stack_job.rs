//! The job on the stack of the thread that waits for it (a `join`'s second half, an `install`
//! from outside the pool): no allocation; whoever runs it stores the result (or the panic) in
//! the job and sets its latch, and the owner, which waits on that latch, takes the result. Apart
//! from `job.rs` because it is the one kind of job that knows a latch (rayon-core's `StackJob`).

use crate::job::{Job, JobRef};
use crate::latch::Latch;
use crate::loom::cell::UnsafeCell;
use crate::trace::hooks::{self, TaskSpan};
use crate::trace::TaskKind;
use crate::unwind::{self, Payload};

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
