//! Type-erased jobs: what the deques and the injector carry.
//!
//! A [`JobRef`] is two words, a data pointer and the function that runs it (the same idea as
//! rayon-core's `JobRef`), so one deque carries every kind of work: a `StackJob` that lives on
//! the stack of a thread blocked in `join`/`install` (no allocation; `stack_job.rs`, with the
//! latch that says it finished), a [`HeapJob`] boxed by `spawn`, and later futures and
//! heartbeat-promoted work — anything that can produce a pointer and an `unsafe fn(*const ())`.

use crate::trace::hooks::{self, TaskSpan};
use crate::trace::TaskKind;

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
