//! The registry: what a pool's workers share (the thieves' ends of their deques, the injector,
//! the sleep state, the counters), and the ways work enters the pool (`inject`, `push`,
//! `in_worker`; work for one given worker goes through its inbox, `super::inbox`).

use std::time::Duration;

use crate::deque::Steal;
use crate::deque::{Stealer, Worker};
use crate::error::BuildError;
use crate::heartbeat::Requests;
use crate::injector::Injector;
use crate::job::{HeapJob, JobRef};
use crate::latch::LockLatch;
use crate::loom::sync::atomic::{
    fence, AtomicBool, AtomicI64, AtomicPtr, AtomicU64, AtomicUsize, Ordering,
};
use crate::loom::sync::Arc;
use crate::pool::config::{Config, PanicHandler, ThreadBuilder};
use crate::pool::fifo::Fifo;
use crate::pool::inbox::Inbox;
use crate::pool::metrics::{Metrics, WorkerCounters};
use crate::pool::run_next::RunNext;
use crate::pool::seat::{Seat, ThreadSpec};
use crate::pool::sleep::Sleep;
use crate::pool::worker::WorkerThread;
use crate::pool::worker_latch::SpinLatch;
use crate::stack_job::StackJob;
use crate::trace::{hooks, TaskKind};
use crate::unwind::{self, Payload};
use crate::util::CachePadded;

/// Set once a panic handler panicked: that is said once per process (an application that builds
/// many pools with the same handler would otherwise repeat it for each). A plain std atomic, not
/// the loom facade: a static, and it only decides whether to print.
static HANDLER_PANICKED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// What a pool's workers share. Its fields are the pool's own (`pub(super)`): the rest of the
/// crate goes through the methods below (submitting work, waiting on a worker, the panic and
/// cancellation paths, whether a worker is idle).
pub(crate) struct Registry {
    pub(super) stealers: Box<[Stealer<JobRef>]>,
    pub(super) injector: Injector<JobRef>,
    /// Work addressed to one worker (`Pool::spawn_on`, the partitioners), one inbox each.
    pub(super) inboxes: Box<[CachePadded<Inbox>]>,
    pub(crate) sleep: Sleep,
    /// The workers' heartbeat request flags (`crate::heartbeat`).
    pub(super) requests: Requests,
    /// Each worker's run-next slot (futures it woke), indexed like `stealers`.
    pub(super) run_next: Box<[CachePadded<RunNext>]>,
    /// Each seat's queue of `spawn_fifo` tasks (`super::fifo`), indexed like `stealers`.
    pub(super) fifos: Box<[CachePadded<Fifo>]>,
    /// The queue of the `spawn_fifo` tasks sent from threads that are no seat of this pool.
    outside_fifo: Fifo,
    pub(super) counters: Box<[CachePadded<WorkerCounters>]>,
    /// What each worker is apart from its thread (`super::seat`).
    pub(super) seats: Box<[Seat]>,
    /// How worker threads are made (for the first start and for restarts).
    pub(super) spec: ThreadSpec,
    /// How long a worker may park before its thread exits; `None`: forever.
    pub(super) keep_alive: Option<Duration>,
    /// An elastic pool's reference to itself, for restarting retired workers; emptied by
    /// `terminate` (see `super::seat`).
    self_ref: Option<std::sync::Arc<std::sync::Mutex<Option<Arc<Registry>>>>>,
    /// Each worker's state (`WorkerThread`), published by its current thread when it starts
    /// (null while no thread runs the seat), for a guest that borrows the seat of a sleeping
    /// worker (`worker::run_as_guest`).
    pub(super) guest_seats: Box<[AtomicPtr<WorkerThread>]>,
    /// Work from outside the pool may run on its caller as a guest (`Config::guests_allowed`).
    guests_allowed: bool,
    terminating: AtomicBool,
    /// Workers whose thread left its loop for good; when all have, the pool is gone and its
    /// tasks are cancelled ([`Registry::cancel_orphans`]).
    exited: AtomicUsize,
    panicked: AtomicU64,
    /// Future tasks spawned minus freed by threads that are not this pool's workers.
    pub(super) futures_outside: AtomicI64,
    /// Workers time their tasks into histograms (`Builder::time_histograms`).
    pub(super) time_histograms: bool,
    panic_handler: Option<PanicHandler>,
    /// `Builder::start_handler` and `Builder::exit_handler`, called by `worker::main`.
    pub(crate) start_handler: Option<crate::pool::config::ThreadHandler>,
    pub(crate) exit_handler: Option<crate::pool::config::ThreadHandler>,
    /// The forks counted when the pool was built (`super::fork`).
    pub(super) born_after_forks: u64,
    /// The number of workers. The per-seat arrays (`stealers`, `inboxes`, `run_next`,
    /// `counters`, `seats`, the heartbeat flags) hold the workers' seats, then the spare
    /// threads' (`super::spare`).
    workers: usize,
    /// The spare seats and the monitor's view (`super::spare`).
    pub(super) spares: crate::pool::spare::Spares,
}

impl Registry {
    /// Starts the workers. On a spawn failure, stops the ones already started.
    pub(crate) fn start(
        mut config: Config,
        mut handler: Option<&mut dyn FnMut(ThreadBuilder) -> std::io::Result<()>>,
    ) -> Result<Arc<Registry>, BuildError> {
        let n = config.threads();
        let spare = config.max_spare_threads();
        if n == 0 {
            return Err(BuildError::zero_threads());
        }
        if handler.is_some() && config.keep_alive.is_some() {
            return Err(BuildError::spawn_handler_elastic());
        }
        if config.use_current_thread && WorkerThread::current().is_some() {
            return Err(BuildError::current_thread_in_pool());
        }
        crate::pool::limits::check(n)?;
        // `THREADLAB_TRACE`: the first pool of the process starts the recording before its
        // workers do.
        crate::trace::start_from_env();
        let cpus = if config.pin_to_cores {
            crate::pool::affinity::allowed_cpus().map_err(BuildError::pin_unavailable)?
        } else {
            Vec::new()
        };
        // The workers' seats, then the spare threads' (`super::spare`).
        let seats = n + spare;
        let deques: Vec<Worker<JobRef>> = (0..seats).map(|_| Worker::new()).collect();
        let self_ref = config
            .keep_alive
            .map(|_| std::sync::Arc::new(std::sync::Mutex::new(None)));
        let registry = Arc::new(Registry {
            stealers: deques.iter().map(|d| d.stealer()).collect(),
            injector: Injector::new(),
            inboxes: (0..seats).map(|_| CachePadded::default()).collect(),
            sleep: Sleep::new(n, config.wake_policy),
            requests: Requests::new(seats),
            run_next: (0..seats).map(|_| CachePadded::default()).collect(),
            fifos: (0..seats).map(|_| CachePadded::default()).collect(),
            outside_fifo: Fifo::default(),
            counters: (0..seats).map(|_| CachePadded::default()).collect(),
            spec: ThreadSpec {
                named: config.has_name(),
                names: (0..n).map(|_| std::sync::OnceLock::new()).collect(),
                stack_size: config.stack_size,
                cpus,
            },
            seats: deques.into_iter().map(Seat::new).collect(),
            keep_alive: config.keep_alive,
            self_ref: self_ref.clone(),
            guest_seats: (0..n)
                .map(|_| AtomicPtr::new(std::ptr::null_mut()))
                .collect(),
            guests_allowed: config.guests_allowed(),
            terminating: AtomicBool::new(false),
            exited: AtomicUsize::new(0),
            panicked: AtomicU64::new(0),
            futures_outside: AtomicI64::new(0),
            time_histograms: config.time_histograms,
            panic_handler: config.panic_handler.take(),
            start_handler: config.start_handler.take(),
            exit_handler: config.exit_handler.take(),
            born_after_forks: crate::pool::fork::generation_at_build(),
            workers: n,
            spares: crate::pool::spare::Spares::new(n, spare),
        });
        if let Some(cell) = self_ref {
            *cell.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::clone(&registry));
            registry.set_monitor_restart(std::sync::Arc::clone(&cell));
            registry
                .sleep
                .set_restart(Box::new(move |index, searching| {
                    let reg = cell.lock().unwrap_or_else(|e| e.into_inner()).clone();
                    reg.is_some_and(|r| Registry::start_thread(&r, index, searching).is_ok())
                }));
        }
        for index in 0..n {
            // The name is asked for just before the start; a naming function that panics stops
            // the workers already started, and the panic goes on to the caller of `build`.
            match crate::unwind::halt_unwinding(|| config.name(index)) {
                Ok(name) => {
                    let _ = registry.spec.names[index].set(name);
                }
                Err(p) => {
                    registry.abandon();
                    crate::unwind::resume_unwinding(p);
                }
            }
            if index == 0 && config.use_current_thread {
                // This thread is worker 0 from here on, without a loop of its own.
                crate::pool::worker::attach_current(&registry, 0);
                continue;
            }
            let started = match handler.as_mut() {
                None => Registry::start_thread(&registry, index, false),
                Some(h) => Registry::start_thread_by(&registry, index, &mut **h),
            };
            if let Err(e) = started {
                registry.abandon();
                return Err(BuildError::spawn(n, index, e));
            }
        }
        if let Err(e) = registry.check_pinned() {
            registry.abandon();
            return Err(e);
        }
        Registry::start_monitor(&registry);
        Ok(registry)
    }

    /// A pool whose build failed: its workers stop, this thread leaves its seat if it took one
    /// (`use_current_thread`), and the threads started are joined.
    fn abandon(&self) {
        self.terminate();
        crate::pool::worker::detach_current(self);
        self.join_threads();
    }

    /// With `pin_to_cores`, waits until every worker has pinned itself (its first act) and
    /// reports the first that could not (`super::affinity`).
    fn check_pinned(&self) -> Result<(), BuildError> {
        if self.spec.cpus.is_empty() {
            return Ok(());
        }
        for (index, c) in self.counters[..self.workers].iter().enumerate() {
            loop {
                // Acquire: pairs with the worker's Release store of its result.
                let v = c.pin.load(Ordering::Acquire);
                if v == crate::pool::affinity::PIN_PENDING {
                    std::thread::sleep(std::time::Duration::from_micros(20));
                    continue;
                }
                if let Some(e) = crate::pool::affinity::failure(v) {
                    let cpu = self.spec.cpus[index % self.spec.cpus.len()];
                    return Err(BuildError::pin(index, cpu, e));
                }
                break;
            }
        }
        Ok(())
    }

    /// The number of workers (spare threads not counted).
    #[inline]
    pub(crate) fn num_threads(&self) -> usize {
        self.workers
    }

    /// The seats a thief looks at: the workers' and the spare seats used so far.
    #[inline]
    pub(crate) fn seats_in_use(&self) -> usize {
        self.workers + self.spares.used()
    }

    pub(crate) fn terminating(&self) -> bool {
        self.terminating.load(Ordering::SeqCst)
    }

    /// Asks the workers to exit once no work is left, and wakes the sleeping ones (starting
    /// the retired ones of an elastic pool, which then exit the usual way). Once no restart is
    /// under way, an elastic pool drops its reference to itself: nothing retires after
    /// `wake_all` (every re-check sees `terminating`), so nothing needs restarting.
    pub(crate) fn terminate(&self) {
        self.terminating.store(true, Ordering::SeqCst);
        self.sleep.wake_all();
        // The monitor leaves at its next look (`super::spare`).
        self.sleep.bell.ring();
        if let Some(cell) = &self.self_ref {
            self.sleep.wait_for_restarts();
            let me = cell.lock().unwrap_or_else(|e| e.into_inner()).take();
            drop(me); // not the last reference: the caller holds one
        }
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
        !self.injector.is_empty()
            || self.stealers[..self.seats_in_use()]
                .iter()
                .any(|s| !s.is_empty())
    }

    /// True when some worker is searching or sleeping, i.e. could take work now (for the
    /// heartbeat's and the loops' decision to publish work; `super::sleep`).
    #[inline]
    pub(crate) fn idle_exists(&self) -> bool {
        self.sleep.idle_exists()
    }

    /// Workers time their tasks into histograms (`Builder::time_histograms`).
    #[inline]
    pub(crate) fn times_tasks(&self) -> bool {
        self.time_histograms
    }

    pub(crate) fn wake_specific(&self, index: usize) {
        if index < self.workers {
            self.sleep.wake_specific(index);
        } else {
            self.wake_spare(index);
        }
    }

    /// Submits a job from outside the pool (or from another pool's worker).
    pub(crate) fn inject(&self, job: JobRef) {
        self.refuse_if_forked_away();
        self.push_injector(job);
        self.sleep.notify_work();
        // SeqCst: the push, then this fence, then the read of `exited` (see `worker_exited`).
        fence(Ordering::SeqCst);
        if self.gone() {
            self.cancel_orphans();
        }
    }

    /// Pushes onto the injector and records it; the caller tells the sleep protocol (`inject`,
    /// or a re-queued task's `super::run_next`).
    #[inline]
    pub(super) fn push_injector(&self, job: JobRef) {
        self.injector.push(job);
        if hooks::enabled() {
            hooks::injector_push();
            hooks::queue_depth("injector", self.injector.len() as i64);
        }
    }

    /// Submits a job: onto the current worker's deque if it belongs to this pool, else into the
    /// injector. Always inlined: a spawn's hot path (`Scope::spawn` has two callers of it since
    /// tasks carry tags, which made LLVM stop inlining it: 13 more instructions per spawn).
    #[inline(always)]
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

    /// A fire-and-forget task in FIFO order (`super::fifo`): through the current seat's queue
    /// if the caller is a seat of this pool, else through the queue of the threads outside it,
    /// whose stubs go into the injector (a worker may move a batch of the injector's jobs into
    /// its deque and pop them newest first: the stubs keep the order all the same).
    pub(crate) fn spawn_fifo<F: FnOnce() + Send + 'static>(&self, f: F) {
        let job = self.spawn_job(Some(TaskKind::Spawn), f);
        match WorkerThread::current() {
            Some(w) if std::ptr::eq(&**w.registry(), self) => {
                // SAFETY: the registry's queues live as long as the registry, which outlives
                // every job of its deques.
                let stub = unsafe { self.fifos[w.index()].push(job) };
                w.push(stub);
            }
            _ => {
                // SAFETY: as above, the queue lives as long as the registry.
                let stub = unsafe { self.outside_fifo.push(job) };
                self.inject(stub);
            }
        }
    }

    /// The number of seats: the workers' and every spare seat (used or not).
    pub(crate) fn seats_total(&self) -> usize {
        self.stealers.len()
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
        // One read of the idle counts, so that the two figures belong together.
        let idle = self.sleep.state();
        Metrics {
            workers: self.counters[..self.workers]
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let mut m = c.snapshot(i);
                    m.local_queue_depth = self.stealers[i].len();
                    m.inbox_depth = self.inboxes[i].len();
                    m
                })
                .collect(),
            injector_depth: self.injector.len(),
            panicked_tasks: self.panicked(),
            alive_tasks: self.alive_futures(),
            searching: idle.searching() as usize,
            sleeping: idle.sleeping() as usize,
            spare_threads_started: self.spares.started(),
            // Relaxed: statistics.
            spare_tasks_run: self.counters[self.workers..]
                .iter()
                .map(|c| c.tasks.load(Ordering::Relaxed))
                .sum(),
            blocked_workers: self.spares.blocked(),
        }
    }

    /// Runs `op` on a worker of this pool and returns its value: inline on one of our workers,
    /// through the injector otherwise. `op` is told whether the call came from outside the
    /// pool (Rayon's "injected": a plain thread, run as a guest or queued, or another pool's
    /// worker), which `join_context` reports as `migrated()`.
    #[track_caller]
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
    /// (`worker::run_as_guest`), else inject and block on a latch. Recording or not: the
    /// guest's install span names the seat it holds (`trace::ARG_GUEST_SEAT`), and the doctor
    /// reads that span as the seat's worker's work.
    #[cold]
    #[track_caller]
    fn in_worker_cold<OP, R>(this: &Arc<Self>, op: OP) -> R
    where
        OP: FnOnce(&WorkerThread, bool) -> R + Send,
        R: Send,
    {
        this.refuse_if_forked_away();
        if let Some(index) = this.lend_seat() {
            return crate::pool::worker::run_as_guest(this, index, op);
        }
        thread_local!(static LOCK_LATCH: LockLatch = LockLatch::new());
        let tag = crate::context::Tag::capture(None, std::panic::Location::caller());
        LOCK_LATCH.with(|latch| {
            let job = StackJob::new(
                TaskKind::Install,
                |injected| {
                    let w = WorkerThread::current().expect("in_worker_cold: not on a worker");
                    let _entered = tag.as_ref().map(|t| t.enter());
                    let r = op(w, injected);
                    crate::pool::worker::caller_comes_back();
                    r
                },
                latch,
            );
            this.inject(job.as_job_ref());
            latch.wait_and_reset();
            job.into_result()
        })
    }

    /// The seat of a sleeping worker lent to the calling thread, which is no seat of any pool,
    /// if the pool allows guests and a worker sleeps in its main loop (`worker::run_as_guest`,
    /// which the caller must call with it).
    pub(crate) fn lend_seat(&self) -> Option<usize> {
        if !self.guests_allowed {
            return None;
        }
        self.sleep.lend(crate::loom::thread::current())
    }

    /// From another pool's worker: inject here, and keep running the current pool's work while
    /// waiting, so neither pool deadlocks and no extra thread is needed.
    #[cold]
    #[track_caller]
    fn in_worker_cross<OP, R>(this: &Arc<Self>, current: &WorkerThread, op: OP) -> R
    where
        OP: FnOnce(&WorkerThread, bool) -> R + Send,
        R: Send,
    {
        let latch = SpinLatch::cross(current.registry(), current.index());
        let tag = crate::context::Tag::capture(None, std::panic::Location::caller());
        let job = StackJob::new(
            TaskKind::Install,
            |injected| {
                let w = WorkerThread::current().expect("in_worker_cross: not on a worker");
                let _entered = tag.as_ref().map(|t| t.enter());
                op(w, injected)
            },
            latch,
        );
        this.inject(job.as_job_ref());
        current.wait_until(&job.latch.core);
        job.into_result()
    }
}

// Pools and `fork()`: the counting and the rules are `super::fork`'s.
impl Registry {
    /// True in a child process forked after this pool was built: its workers are not here.
    #[inline]
    pub(crate) fn forked_away(&self) -> bool {
        self.born_after_forks != crate::pool::fork::generation()
    }

    /// Panics if this pool's threads did not survive a `fork()`: work sent here would wait
    /// forever.
    #[inline]
    pub(crate) fn refuse_if_forked_away(&self) {
        if self.forked_away() {
            crate::pool::fork::forked_away();
        }
    }
}

// Seats and their threads (`super::seat`).
impl Registry {
    /// Starts a worker's thread on seat `index` (`searching`: it starts counted as a searcher),
    /// through [`Seat::start_thread`].
    pub(crate) fn start_thread(
        this: &Arc<Registry>,
        index: usize,
        searching: bool,
    ) -> std::io::Result<()> {
        let reg = Arc::clone(this);
        Registry::start_thread_with(this, index, this.spec.name(index), move || {
            crate::pool::worker::main(reg, index, searching)
        })
    }

    /// Starts worker `index`'s thread with a spawn handler (`Builder::spawn_handler`): once,
    /// at build time, so there is no previous thread to join, and no handle to keep (the
    /// handler's caller joins its threads).
    pub(crate) fn start_thread_by(
        this: &Arc<Registry>,
        index: usize,
        handler: &mut dyn FnMut(ThreadBuilder) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let reg = Arc::clone(this);
        let thread = ThreadBuilder {
            index,
            name: this.spec.named.then(|| this.spec.name(index)),
            stack_size: this.spec.stack_size,
            body: Box::new(move || crate::pool::worker::main(reg, index, false)),
        };
        // Relaxed: a statistic, as in `Seat::start_thread` (taken back if the handler fails).
        let starts = &this.counters[index].starts;
        starts.fetch_add(1, Ordering::Relaxed);
        handler(thread).inspect_err(|_| {
            starts.fetch_sub(1, Ordering::Relaxed);
        })
    }

    /// Starts a thread named `name` on seat `index` that runs `body` once it has joined the
    /// seat's previous thread (a worker's loop, or a spare thread's, `super::spare`).
    pub(crate) fn start_thread_with(
        this: &Arc<Registry>,
        index: usize,
        name: String,
        body: impl FnOnce() + Send + 'static,
    ) -> std::io::Result<()> {
        this.seats[index].start_thread(
            name,
            this.spec.stack_size,
            &this.counters[index].starts,
            body,
        )
    }

    /// Joins the monitor and every seat's latest thread (each joined its predecessors), spare
    /// seats included.
    pub(crate) fn join_threads(&self) {
        self.stop_monitor();
        for seat in self.seats.iter() {
            if let Some(h) = seat.take_handle() {
                let _ = h.join();
            }
        }
    }
}
