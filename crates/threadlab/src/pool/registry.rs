//! The registry: what a pool's workers share (the thieves' ends of their deques, the injector,
//! the sleep state, the counters), and the ways work enters the pool (`inject`, `push`,
//! `in_worker`).

use std::thread::JoinHandle;

use crate::deque::{Stealer, Worker};
use crate::heartbeat::Requests;
use crate::injector::Injector;
use crate::job::{HeapJob, JobRef, StackJob};
use crate::latch::{LockLatch, SpinLatch};
use crate::loom::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use crate::loom::sync::Arc;
use crate::pool::builder::Config;
use crate::pool::metrics::{Metrics, WorkerCounters};
use crate::pool::sleep::Sleep;
use crate::pool::worker::{self, WorkerThread};
use crate::trace::{hooks, TaskKind};
use crate::unwind::{self, Payload};
use crate::util::CachePadded;
use crate::BuildError;

/// A panic handler for fire-and-forget tasks.
pub(crate) type PanicHandler = Box<dyn Fn(Payload) + Send + Sync>;

pub(crate) struct Registry {
    pub(crate) stealers: Box<[Stealer<JobRef>]>,
    pub(crate) injector: Injector<JobRef>,
    pub(crate) sleep: Sleep,
    /// The workers' heartbeat request flags (`crate::heartbeat`).
    pub(crate) requests: Requests,
    pub(crate) counters: Box<[CachePadded<WorkerCounters>]>,
    terminating: AtomicBool,
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
        let deques: Vec<Worker<JobRef>> = (0..n).map(|_| Worker::new()).collect();
        let registry = Arc::new(Registry {
            stealers: deques.iter().map(|d| d.stealer()).collect(),
            injector: Injector::new(),
            sleep: Sleep::new(n),
            requests: Requests::new(n),
            counters: (0..n).map(|_| CachePadded::default()).collect(),
            terminating: AtomicBool::new(false),
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

    /// True if any queue of the pool holds work (used by the re-check before parking).
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
        self.spawn_job(Some(TaskKind::Spawn), f);
    }

    /// [`Registry::spawn`] for a job of `kind` (`None`: the job records its own spans).
    pub(crate) fn spawn_job<F: FnOnce() + Send + 'static>(&self, kind: Option<TaskKind>, f: F) {
        let job = HeapJob::into_job_ref(kind, move || {
            if let Err(p) = unwind::halt_unwinding(f) {
                if let Some(w) = WorkerThread::current() {
                    w.registry().handle_panic(p);
                }
            }
        });
        self.push(job);
    }

    #[cold]
    pub(crate) fn handle_panic(&self, payload: Payload) {
        // Relaxed: a statistic read by metrics/shutdown, which join the threads first (or accept
        // a stale figure).
        self.panicked.fetch_add(1, Ordering::Relaxed);
        match &self.panic_handler {
            Some(h) => {
                if unwind::halt_unwinding(|| h(payload)).is_err() {
                    eprintln!("threadlab: the panic handler itself panicked; ignored");
                }
            }
            None => eprintln!(
                "threadlab: a spawned task panicked: {}",
                unwind::payload_message(&payload)
            ),
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

    /// From a plain thread: inject and block on a latch.
    #[cold]
    fn in_worker_cold<OP, R>(this: &Arc<Self>, op: OP) -> R
    where
        OP: FnOnce(&WorkerThread, bool) -> R + Send,
        R: Send,
    {
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
