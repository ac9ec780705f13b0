//! The registry: what a pool's workers share (the thieves' ends of their deques, the injector,
//! the sleep state, the counters), and the ways work enters the pool (`inject`, `push`,
//! `in_worker`; work for one given worker goes through its inbox, `super::inbox`).

use std::thread::JoinHandle;

use crate::deque::Steal;
use crate::deque::{Stealer, Worker};
use crate::heartbeat::Requests;
use crate::injector::Injector;
use crate::job::{HeapJob, JobRef, StackJob};
use crate::latch::{LockLatch, SpinLatch};
use crate::loom::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use crate::loom::sync::Arc;
use crate::pool::builder::Config;
use crate::pool::inbox::Inbox;
use crate::pool::metrics::{Metrics, WorkerCounters};
use crate::pool::sleep::Sleep;
use crate::pool::worker::{self, WorkerThread};
use crate::task::run_next::RunNext;
use crate::trace::{hooks, TaskKind};
use crate::unwind::{self, Payload};
use crate::util::CachePadded;
use crate::BuildError;

/// A panic handler for fire-and-forget tasks.
pub(crate) type PanicHandler = Box<dyn Fn(Payload) + Send + Sync>;

/// Set once a panic handler panicked: that is said once per process (an application that builds
/// many pools with the same handler would otherwise repeat it for each). A plain std atomic, not
/// the loom facade: a static, and it only decides whether to print.
static HANDLER_PANICKED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub(crate) struct Registry {
    pub(crate) stealers: Box<[Stealer<JobRef>]>,
    pub(crate) injector: Injector<JobRef>,
    /// Work addressed to one worker (`Pool::spawn_on`, the partitioners), one inbox each.
    pub(crate) inboxes: Box<[CachePadded<Inbox>]>,
    pub(crate) sleep: Sleep,
    /// The workers' heartbeat request flags (`crate::heartbeat`).
    pub(crate) requests: Requests,
    /// Each worker's run-next slot (futures it woke), indexed like `stealers`.
    pub(crate) run_next: Box<[CachePadded<RunNext>]>,
    pub(crate) counters: Box<[CachePadded<WorkerCounters>]>,
    /// Each worker's state, published by the worker when it starts (null before and after), for
    /// a guest that borrows the seat of a sleeping worker (`worker::run_as_guest`).
    pub(crate) seats: Box<[AtomicPtr<WorkerThread>]>,
    /// Work from outside the pool may run on its caller as a guest (`Config::guests_allowed`).
    guests_allowed: bool,
    terminating: AtomicBool,
    /// Workers whose thread left its loop for good; when all have, the pool is gone and its
    /// tasks are cancelled ([`Registry::cancel_orphans`]).
    exited: AtomicUsize,
    panicked: AtomicU64,
    panic_handler: Option<PanicHandler>,
}

impl Registry {
    /// Starts the workers. On a spawn failure, stops the ones already started.
    pub(crate) fn start(
        mut config: Config,
    ) -> Result<(Arc<Registry>, Vec<JoinHandle<()>>), BuildError> {
        let n = config.threads;
        if n == 0 {
            return Err(BuildError::zero_threads());
        }
        crate::pool::limits::check(n)?;
        let deques: Vec<Worker<JobRef>> = (0..n).map(|_| Worker::new()).collect();
        let registry = Arc::new(Registry {
            stealers: deques.iter().map(|d| d.stealer()).collect(),
            injector: Injector::new(),
            inboxes: (0..n).map(|_| CachePadded::default()).collect(),
            sleep: Sleep::new(n, config.wake_policy),
            requests: Requests::new(n),
            run_next: (0..n).map(|_| CachePadded::default()).collect(),
            counters: (0..n).map(|_| CachePadded::default()).collect(),
            seats: (0..n)
                .map(|_| AtomicPtr::new(std::ptr::null_mut()))
                .collect(),
            guests_allowed: config.guests_allowed(),
            terminating: AtomicBool::new(false),
            exited: AtomicUsize::new(0),
            panicked: AtomicU64::new(0),
            panic_handler: config.panic_handler.take(),
        });
        let mut handles = Vec::with_capacity(n);
        for (index, deque) in deques.into_iter().enumerate() {
            let mut b = std::thread::Builder::new().name(config.name(index));
            if let Some(size) = config.stack_size {
                b = b.stack_size(size);
            }
            let reg = Arc::clone(&registry);
            let pin = config.pin_to_cores;
            match b.spawn(move || worker::main(reg, index, deque, pin)) {
                Ok(h) => handles.push(h),
                Err(e) => {
                    let started = handles.len();
                    registry.terminate();
                    for h in handles {
                        let _ = h.join();
                    }
                    return Err(BuildError::spawn(n, started, e));
                }
            }
        }
        Ok((registry, handles))
    }

    pub(crate) fn num_threads(&self) -> usize {
        self.stealers.len()
    }

    pub(crate) fn terminating(&self) -> bool {
        self.terminating.load(Ordering::SeqCst)
    }

    /// Asks the workers to exit once no work is left, and wakes the sleeping ones.
    pub(crate) fn terminate(&self) {
        self.terminating.store(true, Ordering::SeqCst);
        self.sleep.wake_all();
    }

    /// True once every worker has left its loop for good: nothing queued here will run, so what
    /// reaches the pool now is cancelled (a future woken after its pool was dropped).
    pub(crate) fn gone(&self) -> bool {
        // SeqCst: see `worker_exited`.
        self.exited.load(Ordering::SeqCst) == self.num_threads()
    }

    /// Worker `index` left its loop for good (shutdown). The last one cancels what reached the
    /// injector after the workers had looked at it for the last time.
    ///
    /// No job is stranded: a submitter pushes, fences, then reads `exited` (`inject`); the last
    /// worker increments `exited`, fences, then drains. By the two SeqCst fences, either the
    /// submitter sees every worker gone (and drains itself), or the last worker's drain sees
    /// the push. Both may drain; each job is taken once (the injector hands each out once).
    pub(crate) fn worker_exited(&self) {
        // SeqCst: with the fence below, pairs with the push-fence-load of `inject`.
        if self.exited.fetch_add(1, Ordering::SeqCst) + 1 == self.num_threads() {
            fence(Ordering::SeqCst);
            self.cancel_orphans();
        }
    }

    /// Runs on this thread what is left in the injector of a pool that is gone. Tasks cancel
    /// themselves when run on a gone pool (`crate::task::cell`, "Cancellation"): they drop their
    /// future here, where a panic is caught, and their handles report the cancellation.
    #[cold]
    fn cancel_orphans(&self) {
        loop {
            match self.injector.steal() {
                // SAFETY: the job was queued and is taken out once, here; it is executed once.
                Steal::Success(job) => unsafe { job.execute() },
                Steal::Retry => continue,
                Steal::Empty => return,
            }
        }
    }

    /// True if any queue of the pool that every worker may take from holds work (used by the
    /// re-check before parking, together with the worker's own inbox and run-next slot). The
    /// run-next slots and inboxes are not shared queues: each is re-checked by its owner only
    /// (see `super::sleep`, "The run-next slot" and "Work for one worker").
    pub(crate) fn has_visible_work(&self) -> bool {
        !self.injector.is_empty() || self.stealers.iter().any(|s| !s.is_empty())
    }

    pub(crate) fn wake_specific(&self, index: usize) {
        self.sleep.wake_specific(index);
    }

    /// Submits a job from outside the pool (or from another pool's worker).
    pub(crate) fn inject(&self, job: JobRef) {
        self.injector.push(job);
        if hooks::enabled() {
            hooks::injector_push();
            hooks::queue_depth("injector", self.injector.len() as i64);
        }
        self.sleep.notify_work();
        // SeqCst: the push, then this fence, then the read of `exited` (see `worker_exited`).
        fence(Ordering::SeqCst);
        if self.gone() {
            self.cancel_orphans();
        }
    }

    /// Submits a job: onto the current worker's deque if it belongs to this pool, else into the
    /// injector.
    #[inline]
    pub(crate) fn push(&self, job: JobRef) {
        match WorkerThread::current() {
            Some(w) if std::ptr::eq(&**w.registry(), self) => w.push(job),
            _ => self.inject(job),
        }
    }

    /// A fire-and-forget task; its panic goes to the handler.
    pub(crate) fn spawn<F: FnOnce() + Send + 'static>(&self, f: F) {
        self.push(self.spawn_job(Some(TaskKind::Spawn), f));
    }

    /// The job of a fire-and-forget task of `kind` (`None`: the job records its own spans), for
    /// `spawn`, a serial queue's drain, and `push_to` a given worker. The caller pushes it.
    pub(crate) fn spawn_job<F: FnOnce() + Send + 'static>(
        &self,
        kind: Option<TaskKind>,
        f: F,
    ) -> JobRef {
        HeapJob::into_job_ref(kind, move || {
            if let Err(p) = unwind::halt_unwinding(f) {
                match WorkerThread::current() {
                    Some(w) => w.registry().handle_panic(p),
                    // Run off a worker only by the drain of a pool that is gone
                    // (`Registry::cancel_orphans`): nobody to report to but stderr.
                    None => unwind::drop_caught_printed(p),
                }
            }
        })
    }

    /// Reports the panic of a task nobody waits for: counts it and hands the payload to the
    /// panic handler (or prints it). Whatever comes back is dropped where a panic is caught: a
    /// payload whose `Drop` panics (with no handler), or what a handler throws. A panic from
    /// such a drop is reported the same way, as a panic of its own, up to
    /// [`unwind::DROP_GENERATIONS`] in a row (then the last payload is leaked, and said so). So
    /// no panic from the user unwinds through a worker.
    #[cold]
    pub(crate) fn handle_panic(&self, payload: Payload) {
        let mut next = Some(payload);
        let mut generation = 0;
        while let Some(payload) = next {
            // Relaxed: a statistic read by metrics/shutdown, which join the threads first (or
            // accept a stale figure).
            self.panicked.fetch_add(1, Ordering::Relaxed);
            let rest = match &self.panic_handler {
                Some(h) => match unwind::halt_unwinding(|| h(payload)) {
                    Ok(()) => return,
                    Err(thrown) => {
                        // Relaxed: only decides whether to print.
                        if !HANDLER_PANICKED.swap(true, Ordering::Relaxed) {
                            eprintln!(
                                "threadlab: a pool's panic handler itself panicked ({}); \
                                 ignored (printed once per process)",
                                unwind::payload_message(&thrown)
                            );
                        }
                        thrown
                    }
                },
                None => {
                    eprintln!(
                        "threadlab: a spawned task panicked: {}",
                        unwind::payload_message(&payload)
                    );
                    payload
                }
            };
            generation += 1;
            if generation == unwind::DROP_GENERATIONS {
                unwind::leak_payload(rest);
                return;
            }
            next = unwind::halt_unwinding(move || drop(rest)).err();
        }
    }

    /// Drops a value that came from the user (a detached task's output or future, a cancelled
    /// future) where a panic in its `Drop` is caught; such a panic is reported like a
    /// fire-and-forget task's ([`Registry::handle_panic`]).
    #[cold]
    pub(crate) fn drop_user_value<T>(&self, value: T) {
        if let Err(p) = unwind::halt_unwinding(move || drop(value)) {
            self.handle_panic(p);
        }
    }

    pub(crate) fn panicked(&self) -> u64 {
        self.panicked.load(Ordering::Relaxed)
    }

    pub(crate) fn metrics(&self) -> Metrics {
        Metrics {
            workers: self
                .counters
                .iter()
                .enumerate()
                .map(|(i, c)| c.snapshot(i))
                .collect(),
            injector_depth: self.injector.len(),
            panicked_tasks: self.panicked(),
        }
    }

    /// Runs `op` on a worker of this pool and returns its value: inline on one of our workers,
    /// through the injector otherwise.
    pub(crate) fn in_worker<OP, R>(this: &Arc<Self>, op: OP) -> R
    where
        OP: FnOnce(&WorkerThread, bool) -> R + Send,
        R: Send,
    {
        match WorkerThread::current() {
            Some(w) if Arc::ptr_eq(w.registry(), this) => op(w, false),
            Some(w) => Self::in_worker_cross(this, w, op),
            None => Self::in_worker_cold(this, op),
        }
    }

    /// From a plain thread: as the guest of a sleeping worker's seat if one sleeps
    /// (`worker::run_as_guest`), else inject and block on a latch.
    #[cold]
    fn in_worker_cold<OP, R>(this: &Arc<Self>, op: OP) -> R
    where
        OP: FnOnce(&WorkerThread, bool) -> R + Send,
        R: Send,
    {
        if this.guests_allowed {
            if let Some(index) = this.sleep.lend(crate::loom::thread::current()) {
                return worker::run_as_guest(this, index, op);
            }
        }
        thread_local!(static LOCK_LATCH: LockLatch = LockLatch::new());
        LOCK_LATCH.with(|latch| {
            let job = StackJob::new(
                TaskKind::Install,
                |injected| {
                    let w = WorkerThread::current().expect("in_worker_cold: not on a worker");
                    op(w, injected)
                },
                latch,
            );
            this.inject(job.as_job_ref());
            latch.wait_and_reset();
            job.into_result()
        })
    }

    /// From another pool's worker: inject here, and keep running the current pool's work while
    /// waiting, so neither pool deadlocks and no extra thread is needed.
    #[cold]
    fn in_worker_cross<OP, R>(this: &Arc<Self>, current: &WorkerThread, op: OP) -> R
    where
        OP: FnOnce(&WorkerThread, bool) -> R + Send,
        R: Send,
    {
        let latch = SpinLatch::cross(current.registry(), current.index());
        let job = StackJob::new(
            TaskKind::Install,
            |injected| {
                let w = WorkerThread::current().expect("in_worker_cross: not on a worker");
                op(w, injected)
            },
            latch,
        );
        this.inject(job.as_job_ref());
        current.wait_until(&job.latch.core);
        job.into_result()
    }
}
