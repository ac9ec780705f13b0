//! The worker thread: its local state (reached through a thread-local pointer) and its loop.
//!
//! Where work comes from, in order (as in rayon-core and Tokio): the worker's run-next slot (the
//! future its last task woke, see `crate::pool::run_next`), its own deque (LIFO, a warm cache),
//! then its inbox (work addressed to this worker, `super::inbox`; TBB likewise reads its mailbox
//! before stealing), then the injector (a batch), then a random victim's deque (its oldest job,
//! one, as Rayon's thieves take). When all are empty it spins briefly (see [`SPIN_BEFORE_PARK`]), looking also at
//! the other workers' run-next slots, and then sleeps by the protocol of [`super::sleep`].
//!
//! The recorder's events from here: steal attempts and steals in [`WorkerThread::steal_once`],
//! spins in [`WorkerThread::spin`], parks in [`WorkerThread::sleep`]. Task spans and spawn
//! arrows are recorded by the jobs themselves (`crate::job`), wake-ups by the waker
//! (`super::sleep`), injector pushes by `Registry::inject`.
//!
//! (Over 800 lines: the loop, its idle path and a guest's seat share `WorkerThread`'s fields.)

use std::cell::Cell;
use std::time::{Duration, Instant};

use crate::arena::ChunkCache;
use crate::deque::{Steal, Worker};
use crate::heartbeat::Heartbeat;
use crate::job::JobRef;
use crate::latch::CoreLatch;
use crate::loom::sync::atomic::Ordering;
use crate::loom::sync::Arc;
use crate::pool::metrics::WorkerCounters;
use crate::pool::registry::Registry;
use crate::trace::hooks;

/// How long an idle worker keeps looking for work before it parks. Bounded by what a park
/// costs: on the 2-core development VM, the trickle of the lab's `overhead` experiment measured
/// a median of about 11–16 µs from submitting a task to a parked worker starting it (the futex
/// wake, the scheduler, the worker's return from `park`), and Tokio's about 13–19 µs. Spinning longer than
/// one wake-up costs more CPU than the park it tries to avoid; spinning about that long catches
/// work that arrives right after the worker ran dry (the tail of a `join`, a burst) at no wake-up
/// cost. A worker out of work spins this long only while its spins find work
/// ([`SPIN_BUDGET`]); a worker waiting on a latch always does.
pub(crate) const SPIN_BEFORE_PARK: Duration = Duration::from_micros(10);

/// `spin_loop` hints between two looks at the queues while spinning.
const SPIN_PAUSES: u32 = 64;

/// The shortest an idle worker's spin gets (see [`SPIN_BUDGET`]): a few looks at
/// the queues.
const MIN_SPIN: Duration = Duration::from_nanos(SPIN_BEFORE_PARK.as_nanos() as u64 / 16);

thread_local! {
    static CURRENT: Cell<*const WorkerThread> = const { Cell::new(std::ptr::null()) };
    /// This thread is not a worker but the guest of a lent seat (`run_as_guest`).
    static GUEST: Cell<bool> = const { Cell::new(false) };
}

/// The longest a guest waiting on a latch parks before it looks at the queues again: a backstop,
/// as the guest is woken when its latch is set or work is addressed to its seat, but not for new
/// work elsewhere in the pool (it is on no sleeper list). Miri parks without it (no clock).
#[cfg(not(miri))]
const GUEST_PARK: Duration = Duration::from_millis(1);

/// Why a worker's loop returned.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Exit {
    /// The pool is shutting down: the worker is gone for good.
    Shutdown,
    /// Idle past the keep-alive: the thread goes; the seat may get another (`super::seat`).
    Retired,
}

/// How a spin ended.
enum Spun {
    Job(JobRef),
    LatchSet,
    Nothing,
}

thread_local! {
    /// How long this thread, a worker, spins when it runs out of work before it parks, and how
    /// many spins in a row found nothing: the whole [`SPIN_BEFORE_PARK`] after a spin that
    /// found work (or a park that ended within [`SHORT_PARK`]); after [`EMPTY_SPINS`] empty
    /// spins in a row, half as long with each further one (down to [`MIN_SPIN`]). Work that
    /// comes in bursts, right after a worker ran dry (a `join`'s tail), or at intervals around a
    /// spin's length (caught often enough) keeps the spin whole; a trickle of tasks further
    /// apart than a spin, where every spin ends in a park anyway, soon stops paying for it. The
    /// idea is that of adaptive mutexes (glibc's `PTHREAD_MUTEX_ADAPTIVE_NP` spins about as long
    /// as recent waits needed), applied to an idle worker.
    ///
    /// A thread-local rather than a field of `WorkerThread`: with it as a field, the changed
    /// layout of that struct, whose fields `join`'s fast path reads, made the lab's fib(30) on
    /// 2 workers 5–20% slower in alternated runs (1.84 → 1.93–2.2 ms); as a thread-local,
    /// 1.86 → 1.65 ms.
    static SPIN_BUDGET: Cell<(Duration, u32)> = const { Cell::new((SPIN_BEFORE_PARK, 0)) };
}

thread_local! {
    /// This worker just finished a job for a thread outside the pool that waits on a
    /// `LockLatch`: see [`CALLER_COMES_BACK_YIELDS`].
    static CALLER_COMES_BACK: Cell<bool> = const { Cell::new(false) };
}

/// How many times a worker that just finished a job for a waiting outside caller (`install`,
/// `join` or `scope` from a plain thread with no guest seat) looks for work and yields its core
/// before its usual spin. Such a caller often calls again as soon as it wakes (a loop of calls
/// from `main`), and its wake-up is slower than a spin: without these rounds the worker had
/// parked by then, and every call paid an unpark of the worker as well as the caller's.
/// Yielding rather than spinning: a `spin_loop` of 20–100 µs made the same calls 1.6–2.4×
/// slower on the 2-core VM (the spinning vCPU takes time from the one the caller wakes on),
/// where yielding hands the core over. Rayon's workers yield 32 rounds before they sleep
/// (`rayon-core`'s `sleep` module); here 8 were as fast as 16 or 32, and much faster than none
/// (an empty `install` on a pool of 2 with guests off, `entry` bench: 24.9 → 19.7 µs a call,
/// Rayon's 18.9, in one run; 9.8 → 8.4 µs, Rayon's 10.6, in another).
const CALLER_COMES_BACK_YIELDS: u32 = 8;

/// Called on a worker at the end of a job run for a waiting outside caller (see
/// [`CALLER_COMES_BACK_YIELDS`]).
#[inline]
pub(crate) fn caller_comes_back() {
    CALLER_COMES_BACK.with(|c| c.set(true));
}

/// Empty spins in a row after which an idle worker's spin starts to shrink.
const EMPTY_SPINS: u32 = 4;

/// A park that ends sooner than this (a whole spin, plus a wake-up's usual latency here) counts
/// as a spin that found work: the work came soon enough for a whole spin to have caught it.
const SHORT_PARK: Duration = Duration::from_micros(2 * SPIN_BEFORE_PARK.as_micros() as u64);

/// An idle worker's next spin budget and count of empty spins in a row, after a spin with
/// `budget` that found work or not (see [`SPIN_BUDGET`]).
fn next_spin_budget((budget, empty): (Duration, u32), found_work: bool) -> (Duration, u32) {
    if found_work {
        (SPIN_BEFORE_PARK, 0)
    } else if empty + 1 < EMPTY_SPINS {
        (budget, empty + 1)
    } else {
        ((budget / 2).max(MIN_SPIN), EMPTY_SPINS)
    }
}

/// The state of one worker, on its own thread's stack.
pub(crate) struct WorkerThread {
    index: usize,
    deque: Worker<JobRef>,
    registry: Arc<Registry>,
    rng: Cell<u64>,
    searching: Cell<bool>,
    awake_since: Cell<Instant>,
    /// The task count when this worker last went idle, and when: the start of its idle stretch,
    /// for the keep-alive (set on the idle path only, so running tasks costs nothing more).
    idle_mark: Cell<(u64, Instant)>,
    /// The job being timed was a future's poll (`WorkerThread::note_poll`).
    polled: Cell<bool>,
    heartbeat: Heartbeat,
    /// Free chunks for the job arenas of the scopes this worker runs (`crate::arena`).
    chunks: ChunkCache,
}

/// The body of a worker thread on seat `index` (`searching`: a waker already counted it as a
/// searcher, see `super::seat`).
pub(crate) fn main(registry: Arc<Registry>, index: usize, searching: bool) {
    pin(&registry, index);
    registry.sleep.register_thread(index);
    let worker = WorkerThread::on_seat(registry, index, searching);
    CURRENT.with(|c| c.set(&worker));
    // Release: pairs with the Acquire load of a guest that borrows this seat (`run_as_guest`).
    worker.registry.guest_seats[index].store(
        &worker as *const WorkerThread as *mut WorkerThread,
        Ordering::Release,
    );
    if let Some(h) = &worker.registry.start_handler {
        if let Err(p) = crate::unwind::halt_unwinding(|| h(index)) {
            worker.registry.handle_panic(p);
        }
    }
    // Every value from the user is dropped where a panic is caught (`crate::unwind`), so no
    // panic should reach here. If one does (a bug of threadlab's), the worker says so and goes
    // back to its loop: a worker never leaves before shutdown, or its inbox would be lost.
    let exit = loop {
        match crate::unwind::halt_unwinding(|| worker.main_loop()) {
            Ok(exit) => break exit,
            Err(p) => {
                eprintln!(
                    "threadlab: worker {index}: a panic escaped every task (a threadlab bug, \
                     please report it): {}; the worker goes on",
                    crate::unwind::payload_message(&p)
                );
                worker.registry.drop_user_value(p);
            }
        }
    };
    if let Some(h) = &worker.registry.exit_handler {
        if let Err(p) = crate::unwind::halt_unwinding(|| h(index)) {
            worker.registry.handle_panic(p);
        }
    }
    CURRENT.with(|c| c.set(std::ptr::null()));
    // No guest can hold the seat's state now: a seat is lent only while its worker sleeps in
    // its loop, which this thread has left. Relaxed: a guest reads it only after a lend, which
    // the sleeper list's lock orders after a later thread's store (`main`).
    worker.registry.guest_seats[index].store(std::ptr::null_mut(), Ordering::Relaxed);
    let WorkerThread {
        deque, registry, ..
    } = worker;
    let counters = &registry.counters[index];
    registry.seats[index].put_deque(deque);
    // Relaxed: statistics (see `WorkerCounters::starts`).
    match exit {
        Exit::Retired => counters.retirements.fetch_add(1, Ordering::Relaxed),
        Exit::Shutdown => counters.exits.fetch_add(1, Ordering::Relaxed),
    };
    if exit == Exit::Shutdown {
        registry.worker_exited();
    }
}

thread_local! {
    /// The worker state of a thread that became worker 0 of a pool it built
    /// (`Builder::use_current_thread`): owned here, as a started worker's is on its stack, and
    /// given back by [`detach_current`] (or when the thread exits).
    static ATTACHED: std::cell::RefCell<Option<Attached>> = const { std::cell::RefCell::new(None) };
}

/// A worker seat held by the thread that built the pool (`Builder::use_current_thread`).
struct Attached(Box<WorkerThread>);

impl Drop for Attached {
    /// The thread exits while still a worker: it leaves its seat as a worker leaves its loop.
    fn drop(&mut self) {
        leave_attached(&mut self.0);
    }
}

/// Makes the calling thread worker `index` of `registry` without a loop of its own (Rayon's
/// `use_current_thread`): it runs the pool's work only when it waits inside the pool (a `join`,
/// a scope, an `install` into another pool), as any worker does there; otherwise it is a busy
/// worker to the sleep protocol, never lent to a guest, and the other workers steal what it
/// spawns. No start or exit handler runs for it (as in Rayon). The caller checked that the
/// thread is no worker yet.
pub(crate) fn attach_current(registry: &Arc<Registry>, index: usize) {
    registry.sleep.register_thread(index);
    let worker = Box::new(WorkerThread::on_seat(Arc::clone(registry), index, false));
    CURRENT.with(|c| c.set(&*worker));
    ATTACHED.with(|a| *a.borrow_mut() = Some(Attached(worker)));
}

/// If the calling thread is attached to `registry` ([`attach_current`]), it runs what waits in
/// its own queues and leaves its seat: the pool counts that worker as gone. True if it was.
pub(crate) fn detach_current(registry: &Registry) -> bool {
    let attached = ATTACHED.with(|a| {
        let mut a = a.borrow_mut();
        let mine = a
            .as_ref()
            .is_some_and(|w| std::ptr::eq(&**w.0.registry(), registry));
        if mine {
            a.take()
        } else {
            None
        }
    });
    // Dropping it leaves the seat (`Attached::drop`).
    attached.is_some()
}

/// The attached worker `w` leaves its seat: runs the jobs in its own queues (nobody else takes
/// from its inbox and run-next slot, and a pool of one worker has nobody to steal its deque),
/// closes its inbox, gives its deque back to the seat and counts as exited.
fn leave_attached(w: &mut WorkerThread) {
    loop {
        let job = w
            .take_run_next()
            .or_else(|| w.take_local())
            .or_else(|| w.take_mail());
        match job {
            Some(job) => w.execute(job),
            None if w.registry.inboxes[w.index].close_if_empty() => break,
            None => {}
        }
    }
    if w.searching.replace(false) {
        w.registry.sleep.stop_searching();
    }
    CURRENT.with(|c| c.set(std::ptr::null()));
    // The seat gets the deque back (its thieves' end stays in the registry); an empty one takes
    // its place in the state about to be freed.
    let deque = std::mem::take(&mut w.deque);
    w.registry.seats[w.index].put_deque(deque);
    // Relaxed: a statistic (see `WorkerCounters::starts`).
    w.registry.counters[w.index]
        .exits
        .fetch_add(1, Ordering::Relaxed);
    w.registry.worker_exited();
}

/// The body of a spare thread on spare seat `index` (`super::spare`): a worker that takes work
/// from every queue until it finds none, or until fewer occupants are blocked than spare threads
/// run, and waits inside a task as a guest does (on its latch, not through the sleep protocol).
pub(crate) fn spare_main(registry: Arc<Registry>, index: usize) {
    let worker = WorkerThread::on_seat(registry, index, false);
    let zone = worker.registry.spare_arrived(index);
    CURRENT.with(|c| c.set(&worker));
    // Its waits park on their latch, as a guest's do (`WorkerThread::idle`).
    GUEST.with(|g| g.set(true));
    loop {
        match crate::unwind::halt_unwinding(|| worker.spare_loop()) {
            Ok(()) => break,
            Err(p) => {
                eprintln!(
                    "threadlab: spare thread {index}: a panic escaped every task (a threadlab \
                     bug, please report it): {}; it goes on",
                    crate::unwind::payload_message(&p)
                );
                worker.registry.drop_user_value(p);
            }
        }
    }
    if worker.searching.replace(false) {
        worker.registry.sleep.stop_searching();
    }
    if zone {
        hooks::zone_exit();
    }
    CURRENT.with(|c| c.set(std::ptr::null()));
    GUEST.with(|g| g.set(false));
    let WorkerThread {
        deque, registry, ..
    } = worker;
    // Its own deque and run-next slot were empty at its last look, and only this thread fills
    // them; nothing is addressed to a spare seat's inbox (`spawn_on` takes worker indices).
    registry.seats[index].put_deque(deque);
    registry.spare_left(index);
}

/// Runs `op` on the calling thread, which is no worker of any pool, as the guest of `registry`'s
/// sleeping worker `index`, whose seat `Sleep::lend` gave us: its deque, heartbeat flag, index and
/// caches are ours until we leave, its thread stays parked, and the other workers steal from the
/// seat as usual. So an `install` from outside the pool costs no wake-up and no context switch
/// when nobody needs to steal, and the pool still computes on at most as many threads as it has
/// workers. chili and spice likewise run the caller's closure on the calling thread while the
/// workers steal from it (github.com/dragostis/chili, `Scope`; github.com/judofyr/spice); the
/// borrowed seat is what keeps a 1-worker pool on one thread here.
///
/// Leaving (also by a panic of `op`): jobs still in the seat (fire-and-forget tasks that outlive
/// `op`) stay there, and `Sleep::give_back` wakes the worker to run them.
pub(crate) fn run_as_guest<OP, R>(registry: &Registry, index: usize, op: OP) -> R
where
    OP: FnOnce(&WorkerThread, bool) -> R,
{
    // Acquire: pairs with the worker's Release store in `main`; the worker stored it before it
    // ever slept, and it was lent to us because it sleeps (the sleeper list's lock orders both).
    let seat = registry.guest_seats[index].load(Ordering::Acquire);
    // SAFETY: the pointer is the seat's `WorkerThread`, live on its worker's stack until the
    // worker leaves its loop, which it cannot while parked with its seat lent; and the lend
    // makes us its only user until `give_back`. The invariant that keeps this sound: the guest
    // never touches the `WorkerThread` once `give_back` has begun. From the moment the seat is
    // back on the sleeper list a waker may unpark the worker, which may run a job, retire and
    // exit, freeing its stack (an elastic pool). `Leave::drop` therefore uses `seat` only
    // before `give_back` (`WorkerThread::leave_as_guest`), and for the re-check after it only
    // what lives in the registry, which the caller of `install` keeps alive (`registry`, and
    // the `index` copied out beforehand).
    let seat: &WorkerThread = unsafe { &*seat };
    struct Leave<'a> {
        seat: &'a WorkerThread,
        registry: &'a Registry,
        index: usize,
    }
    impl Drop for Leave<'_> {
        fn drop(&mut self) {
            // Relaxed: a hint for the monitor (`super::spare`).
            self.registry.spares.guest_tids[self.index].store(0, Ordering::Relaxed);
            self.seat.leave_as_guest();
            // From here on `self.seat` may dangle: only the registry and the copied index.
            give_back_seat(self.registry, self.index);
        }
    }
    CURRENT.with(|c| c.set(seat));
    GUEST.with(|g| g.set(true));
    // The worker may have gone to sleep as a searcher: its count moved to the sleepers then
    // (`Sleep::sleep`), but its flag is reset only when it wakes. The guest starts not searching;
    // the worker sets the flag again from its wake-up.
    seat.searching.set(false);
    seat.heartbeat.new_task();
    // Relaxed: a hint for the monitor, which reads this guest's state instead of the parked
    // worker's (`super::spare`).
    registry.spares.guest_tids[index].store(cached_thread_id(), Ordering::Relaxed);
    let _leave = Leave {
        seat,
        registry,
        index,
    };
    // The install's span, on the guest's own track (dropped before `_leave`, also on a panic),
    // marked with the seat it holds (`trace::ARG_GUEST_SEAT`): the doctor reads it as the
    // seat's worker's work.
    let _span = hooks::TaskSpan::enter(crate::trace::TaskKind::Install, None);
    if hooks::enabled() {
        guest_seat_arg(index);
    }
    // `true`: the call came from outside the pool (Rayon's "injected"), wherever it runs.
    op(seat, true)
}

/// Records the [`crate::trace::ARG_GUEST_SEAT`] argument of a guest's install span: the seat's
/// worker index, in decimal.
#[cold]
#[inline(never)]
fn guest_seat_arg(index: usize) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = index;
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let text = std::str::from_utf8(&digits[at..]).expect("ASCII digits");
    hooks::arg(crate::trace::ARG_GUEST_SEAT, text);
}

/// [`os_thread_id`], asked of the OS once per thread.
pub(crate) fn cached_thread_id() -> u64 {
    thread_local!(static TID: Cell<u64> = const { Cell::new(0) });
    TID.with(|t| {
        if t.get() == 0 {
            t.set(os_thread_id());
        }
        t.get()
    })
}

/// The OS's id of the calling thread (Linux `gettid`; elsewhere a number unique among the
/// process's live threads, from the address of a thread-local).
fn os_thread_id() -> u64 {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: gettid has no preconditions.
        unsafe { libc::gettid() as u64 }
    }
    #[cfg(not(target_os = "linux"))]
    {
        thread_local!(static ID: u8 = const { 0 });
        ID.with(|id| id as *const u8 as u64)
    }
}

/// Pins this thread as `pin_to_cores` asked (`super::affinity`) and publishes the result.
fn pin(registry: &Registry, index: usize) {
    let cpus = &registry.spec.cpus;
    if cpus.is_empty() {
        return;
    }
    let cpu = cpus[index % cpus.len()];
    let result = super::affinity::pin_current(cpu);
    if let Err(e) = &result {
        // The first start is reported by `build()`; a restart's failure only here.
        static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        // Relaxed: only decides whether to print.
        if registry.counters[index].starts.load(Ordering::Relaxed) > 1
            && !SAID.swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            eprintln!(
                "threadlab: worker {index} restarted but could not be pinned to CPU {cpu} \
                 ({e}); it runs unpinned (printed once per process)"
            );
        }
    }
    // Release: pairs with `Registry::check_pinned`'s Acquire load.
    registry.counters[index]
        .pin
        .store(super::affinity::encode(cpu, &result), Ordering::Release);
}

impl WorkerThread {
    /// The state of this thread on seat `index` (a worker's or a spare thread's): it takes the
    /// seat's deque, says so to the recorder, and publishes its OS id.
    fn on_seat(registry: Arc<Registry>, index: usize, searching: bool) -> WorkerThread {
        let deque = registry.seats[index].take_deque();
        hooks::worker_start(index);
        let counters = &registry.counters[index];
        // Relaxed: read only by metrics and the monitor, as statistics and hints. A seat's
        // threads run one after the other (each joins the previous one), so these stay
        // single-writer.
        counters.os_tid.store(os_thread_id(), Ordering::Relaxed);
        counters.parked.store(false, Ordering::Relaxed);
        // SAFETY: the seat's state lives in the registry, which the worker keeps alive (its
        // `registry` field) for as long as the heartbeat state exists.
        let heartbeat =
            unsafe { Heartbeat::new(registry.requests.seat(index), registry.num_threads()) };
        WorkerThread {
            index,
            deque,
            registry,
            rng: Cell::new(0x9E37_79B9_7F4A_7C15 ^ ((index as u64 + 1) << 17)),
            searching: Cell::new(searching),
            awake_since: Cell::new(Instant::now()),
            idle_mark: Cell::new((u64::MAX, Instant::now())),
            polled: Cell::new(false),
            heartbeat,
            chunks: ChunkCache::new(),
        }
    }

    /// The worker running on this thread, if any.
    #[inline]
    pub(crate) fn current() -> Option<&'static WorkerThread> {
        let ptr = CURRENT.with(|c| c.get());
        // SAFETY: the pointer is set only while `main` runs on this thread, and the
        // WorkerThread outlives every use (all uses are on this thread, inside `main_loop`).
        unsafe { ptr.as_ref() }
    }

    pub(crate) fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    pub(crate) fn index(&self) -> usize {
        self.index
    }

    fn counters(&self) -> &WorkerCounters {
        &self.registry.counters[self.index]
    }

    /// This worker's free arena chunks, for the scopes whose body runs here (`crate::arena`).
    #[inline]
    pub(crate) fn chunk_cache(&self) -> &ChunkCache {
        &self.chunks
    }

    /// This worker's heartbeat state (`crate::heartbeat`).
    #[inline(always)]
    pub(crate) fn heartbeat(&self) -> &Heartbeat {
        &self.heartbeat
    }

    /// A beat: publishes the oldest registered fork, if there is one old enough
    /// (`crate::heartbeat`, step 4).
    #[cold]
    #[inline(never)]
    pub(crate) fn promote_oldest(&self) {
        if let Some(job) = self.heartbeat.take_oldest() {
            crate::trace::hooks::spawn(job.id());
            self.publish(job);
        }
    }

    /// Publishes a promoted job: onto the deque, waking an idle worker with the fenced
    /// notification (promotions are rare, and an idle worker is waiting for exactly this), and
    /// counts the promotion.
    #[cold]
    pub(crate) fn publish(&self, job: JobRef) {
        self.deque.push(job);
        self.registry.sleep.notify_work();
        self.heartbeat.promoted();
        WorkerCounters::add(&self.counters().promotions, 1);
    }

    /// Pushes onto this worker's deque and tells the sleep protocol about it.
    #[inline]
    pub(crate) fn push(&self, job: JobRef) {
        self.deque.push(job);
        self.registry.sleep.notify_local_work();
    }

    /// Pops this worker's newest job (the deque's LIFO end).
    #[inline]
    pub(crate) fn take_local(&self) -> Option<JobRef> {
        self.deque.pop()
    }

    /// True if this worker's deque looks empty.
    pub(crate) fn deque_is_empty(&self) -> bool {
        self.deque.is_empty()
    }

    /// True if tasks wait in this seat's own queues: its deque, its inbox, its run-next slot
    /// (`current_thread_has_pending_tasks`).
    pub(crate) fn has_pending_tasks(&self) -> bool {
        !self.deque.is_empty()
            || self.has_run_next()
            || self
                .registry
                .inboxes
                .get(self.index)
                .is_some_and(|inbox| !inbox.is_empty())
    }

    /// Runs a job (its task span is recorded by the job itself, see `crate::job`).
    #[inline]
    pub(crate) fn execute(&self, job: JobRef) {
        self.heartbeat.new_task();
        if self.registry.time_histograms {
            self.execute_timed(job);
        } else {
            // SAFETY: every JobRef in our queues is executed exactly once: it was popped or
            // stolen.
            unsafe { job.execute() };
        }
        WorkerCounters::add(&self.counters().tasks, 1);
    }

    /// The job this worker is running (with time histograms on) was a future's poll
    /// (`crate::task::cell`, at the end of the poll).
    pub(crate) fn note_poll() {
        if let Some(w) = WorkerThread::current() {
            w.polled.set(true);
        }
    }

    /// [`WorkerThread::execute`] with the job's wall time counted in a histogram
    /// (`super::metrics`, "Histograms").
    #[inline(never)]
    fn execute_timed(&self, job: JobRef) {
        self.polled.set(false);
        let start = Instant::now();
        // SAFETY: as in `execute`: the job was popped or stolen, and runs once.
        unsafe { job.execute() };
        let nanos = start.elapsed().as_nanos() as u64;
        let counters = self.counters();
        // Set by the job if it was a future's poll (`note_poll`); a job run inside this one
        // consumed its own mark before.
        if self.polled.replace(false) {
            counters.poll_time.record(nanos);
        } else {
            counters.task_time.record(nanos);
        }
    }

    /// A spare thread's loop (`spare_main`): work while there is some and it is still wanted.
    fn spare_loop(&self) {
        loop {
            if let Some(job) = self.find_work() {
                self.execute(job);
                if self.registry.spare_surplus() {
                    return;
                }
                continue;
            }
            if self.registry.terminating() || !self.spin(None) {
                return;
            }
        }
    }

    fn main_loop(&self) -> Exit {
        let exit = loop {
            if let Some(job) = self.find_work() {
                self.execute(job);
                continue;
            }
            // Exit only with the inbox empty and closed: later pushes go to the injector.
            if self.registry.terminating()
                && !self.registry.has_visible_work()
                && self.registry.inboxes[self.index].close_if_empty()
            {
                break Exit::Shutdown;
            }
            if self.idle(None) {
                break Exit::Retired;
            }
        };
        if self.searching.replace(false) {
            self.registry.sleep.stop_searching();
        }
        exit
    }

    /// Runs other work until `latch` is set (a stolen `join` half, a scope, a cross-pool
    /// `install`): the waiting worker never blocks while work exists.
    pub(crate) fn wait_until(&self, latch: &CoreLatch) {
        while !latch.probe() {
            match self.find_work() {
                Some(job) => self.execute(job),
                None => {
                    self.idle(Some(latch));
                }
            }
        }
        // The latch may have been set while we searched (its setter saw us spinning, or a waker
        // counted us as a searcher and the latch came first): back to the caller's work.
        self.end_search();
    }

    /// Runs one job from the queues if there is one (true if it ran one): for a wait whose
    /// latch is already set but which must still let queued work run (a `block_on` whose future
    /// yields, `crate::task::block_on`).
    pub(crate) fn run_one(&self) -> bool {
        match self.find_work() {
            Some(job) => {
                self.execute(job);
                true
            }
            None => false,
        }
    }

    /// Own run-next slot (futures, `crate::pool::run_next`), own deque, own inbox, then the
    /// injector and the other workers.
    #[inline]
    fn find_work(&self) -> Option<JobRef> {
        if let Some(job) = self.take_run_next() {
            self.end_search();
            return Some(job);
        }
        let job = self
            .take_local()
            .or_else(|| self.take_mail())
            .or_else(|| self.steal());
        if job.is_some() {
            // The run-next budget counts slot tasks in a row (see `crate::pool::run_next`).
            self.end_run_next_streak();
            // From any source, our own deque included (a promoted fork of ours, found while we
            // spun): the search is over.
            self.end_search();
        }
        job
    }

    /// The oldest job addressed to this worker.
    #[inline]
    fn take_mail(&self) -> Option<JobRef> {
        self.registry.inboxes[self.index].pop()
    }

    /// Looks through the injector and every other deque, starting at a random victim.
    /// Records each attempt on a victim and each steal (victim → this thief).
    fn steal(&self) -> Option<JobRef> {
        let job = self.steal_once();
        if job.is_some() {
            WorkerCounters::add(&self.counters().steals, 1);
        } else {
            WorkerCounters::add(&self.counters().failed_steals, 1);
        }
        job
    }

    fn steal_once(&self) -> Option<JobRef> {
        loop {
            let mut retry = false;
            match self.registry.injector.steal_batch_and_pop(&self.deque) {
                Steal::Success(job) => {
                    if hooks::enabled() {
                        hooks::queue_depth("injector", self.registry.injector.len() as i64);
                    }
                    return Some(job);
                }
                Steal::Retry => retry = true,
                Steal::Empty => {}
            }
            let n = self.registry.seats_in_use();
            let start = self.next_random() as usize % n;
            for i in 0..n {
                let victim = (start + i) % n;
                if victim == self.index {
                    continue;
                }
                if hooks::enabled() {
                    hooks::steal_attempt(victim);
                }
                // One job, the victim's oldest, as Rayon's and chili's thieves take: in a deque
                // of `join`s the oldest is the largest piece, and the right of everything the
                // victim holds. A batch (half the deque, as from the injector) moved the next
                // oldest pieces into the thief's deque, where the victim stole them back in
                // place of the thief's own oldest: a `find_last` over Rayon's nested `flat_map`s
                // (its `octillion` test), which reaches its answer only by stealing rightmost
                // pieces, did not end in a minute where one-job steals take 5 s (Rayon's own
                // pool: 7 s).
                match self.registry.stealers[victim].steal() {
                    Steal::Success(job) => {
                        hooks::steal(victim);
                        return Some(job);
                    }
                    Steal::Retry => retry = true,
                    Steal::Empty => {}
                }
            }
            if !retry {
                return None;
            }
        }
    }

    /// Ends this worker's search, if it is searching: rule 3 of the sleep protocol (the last
    /// searcher wakes the next one if more work is visible). Every way out of a search passes
    /// here: a job found anywhere (`find_work`, a run-next slot taken while spinning), the latch
    /// it waited on set (`wait_until`), a guest going to wait or leaving. A worker still counted
    /// as searching while it runs a job or the caller's code would keep every pusher from waking
    /// a sleeper (`Sleep::notify`: somebody searches, it will find the work), and the pool would
    /// run on one worker until its next search ended.
    #[inline]
    fn end_search(&self) {
        if self.searching.get() {
            self.searching.set(false);
            if self.registry.sleep.stop_searching() && self.registry.has_visible_work() {
                self.registry.sleep.notify_work();
            }
        }
    }

    /// Nothing to do: spin a little (if allowed to search, or if waiting on a latch), then sleep.
    /// True if the worker retired (only from the main loop, `latch` being `None`).
    #[cold]
    fn idle(&self, latch: Option<&CoreLatch>) -> bool {
        if !self.searching.get() && self.registry.sleep.try_start_searching() {
            self.searching.set(true);
            // After the SeqCst RMW that counts us as searching (`crate::heartbeat`, step 5).
            self.registry
                .requests
                .request_from_others(self.index, self.registry.seats_in_use());
        }
        if (self.searching.get() || latch.is_some()) && self.spin(latch) {
            return false;
        }
        if let Some(l) = latch {
            if GUEST.with(|g| g.get()) {
                self.guest_wait(l);
                return false;
            }
        }
        if latch.is_some() {
            return self.sleep(latch);
        }
        let parked = Instant::now();
        let retired = self.sleep(None);
        if parked.elapsed() < SHORT_PARK {
            // Woken soon after it parked: work comes at intervals a whole spin would catch
            // (another worker's promotions, say), so the next spin is whole again.
            SPIN_BUDGET.with(|b| b.set(next_spin_budget(b.get(), true)));
        }
        retired
    }

    /// When this worker retires if it stays idle: the start of its idle stretch plus the
    /// keep-alive, for an elastic pool's main loop only (`latch` is `None`). A keep-alive too
    /// long for an `Instant` to hold (`Duration::MAX`, say) saturates: never (`None`), never
    /// a panic in the worker.
    fn retire_at(&self, latch: Option<&CoreLatch>) -> Option<Instant> {
        let keep_alive = self.registry.keep_alive?;
        if latch.is_some() {
            return None;
        }
        // Relaxed: our own counter.
        let tasks = self.counters().tasks.load(Ordering::Relaxed);
        let (seen, mut since) = self.idle_mark.get();
        if seen != tasks {
            since = Instant::now();
            self.idle_mark.set((tasks, since));
        }
        since.checked_add(keep_alive)
    }

    /// Spins for up to [`SPIN_BEFORE_PARK`] while waiting on a latch, else for the worker's
    /// [`SPIN_BUDGET`] (after [`CALLER_COMES_BACK_YIELDS`] rounds of looking and yielding, if
    /// its last job was a waiting outside caller's); true if it found work (and ran it) or the
    /// latch was set. The spin's span ends before the task it found begins.
    fn spin(&self, latch: Option<&CoreLatch>) -> bool {
        if latch.is_none() && CALLER_COMES_BACK.with(|c| c.replace(false)) {
            for _ in 0..CALLER_COMES_BACK_YIELDS {
                if let Some(job) = self.find_work() {
                    self.execute(job);
                    return true;
                }
                crate::loom::thread::yield_now();
            }
        }
        hooks::spin_begin();
        let budget = if latch.is_some() {
            SPIN_BEFORE_PARK
        } else {
            SPIN_BUDGET.with(Cell::get).0
        };
        let found = self.spin_until_deadline(latch, budget);
        hooks::spin_end();
        if latch.is_none() {
            let found_work = !matches!(found, Spun::Nothing);
            SPIN_BUDGET.with(|b| b.set(next_spin_budget(b.get(), found_work)));
        }
        match found {
            Spun::Job(job) => {
                self.execute(job);
                true
            }
            Spun::LatchSet => true,
            Spun::Nothing => false,
        }
    }

    fn spin_until_deadline(&self, latch: Option<&CoreLatch>, budget: Duration) -> Spun {
        let deadline = Instant::now() + budget;
        // Futures: the other workers' run-next slots, taken only after a grace (see
        // `crate::pool::run_next`).
        let mut watch = None;
        let mut first = true;
        loop {
            for _ in 0..SPIN_PAUSES {
                crate::loom::hint::spin_loop();
            }
            if latch.is_some_and(|l| l.probe()) {
                return Spun::LatchSet;
            }
            if let Some(job) = self.find_work() {
                return Spun::Job(job);
            }
            let now = Instant::now();
            let past = now >= deadline;
            // Past the deadline (unless on the first look) no new slot is watched, but one
            // being watched gets its grace.
            if let Some(job) = self.steal_run_next(&mut watch, now, first || !past) {
                WorkerCounters::add(&self.counters().steals, 1);
                self.end_search();
                return Spun::Job(job);
            }
            if self.registry.terminating() || (past && watch.is_none()) {
                return Spun::Nothing;
            }
            first = false;
        }
    }

    /// Sleeps by the protocol of `super::sleep`, recording the park (the waker records the wake).
    /// True if the worker retired instead (an elastic pool's keep-alive ran out).
    fn sleep(&self, latch: Option<&CoreLatch>) -> bool {
        let counters = self.counters();
        let registry = &self.registry;
        let retire_at = self.retire_at(latch);
        let woken = registry.sleep.sleep(
            self.index,
            self.searching.get(),
            latch,
            retire_at,
            // R2 of the sleep protocol: the shared queues, and this worker's own run-next slot
            // and inbox (`super::sleep`, "The run-next slot" and "Work for one worker").
            || {
                registry.has_visible_work()
                    || self.has_run_next()
                    || !registry.inboxes[self.index].is_empty()
                    || registry.terminating()
            },
            || {
                let awake = self.awake_since.get().elapsed().as_nanos() as u64;
                WorkerCounters::add(&counters.awake_nanos, awake);
                WorkerCounters::add(&counters.parks, 1);
                // Relaxed: a statistic; readers tolerate a stale value.
                counters.parked.store(true, Ordering::Relaxed);
                // After the SeqCst RMW that counts us as sleeping (`crate::heartbeat`, step 5):
                // whoever is busy now hands out its outermost pending fork at its next beat.
                registry
                    .requests
                    .request_from_others(self.index, registry.seats_in_use());
                hooks::park_begin();
            },
        );
        if woken.retired {
            hooks::park_end();
            // Its searcher count moved to the sleepers when it went to sleep.
            self.searching.set(false);
            return true;
        }
        if woken.parked {
            hooks::park_end();
            counters.parked.store(false, Ordering::Relaxed);
            // A lazy-policy poll ended by its timeout is a park, not a wake-up.
            if !woken.timed_out {
                WorkerCounters::add(&counters.wakeups, 1);
            }
            self.awake_since.set(Instant::now());
        }
        self.searching.set(woken.searching);
        false
    }

    /// The guest of this seat leaves (`run_as_guest`): it stops searching and lets go of the
    /// seat. The last use of the seat's state by the guest: [`give_back_seat`] follows.
    fn leave_as_guest(&self) {
        self.end_search();
        CURRENT.with(|c| c.set(std::ptr::null()));
        GUEST.with(|g| g.set(false));
    }

    /// A guest with nothing to do while it waits on `latch`: it announces that it sleeps on the
    /// latch and parks, to be woken by the latch's setter (`Sleep::wake_specific` finds the seat
    /// lent and wakes the guest), by work addressed to its seat, or after [`GUEST_PARK`].
    #[cold]
    fn guest_wait(&self, latch: &CoreLatch) {
        self.end_search();
        if !latch.get_sleepy() {
            return;
        }
        // The inbox may have been filled between our last look and the announcement; its pusher's
        // wake (`wake_specific`) then unparks us at once.
        hooks::park_begin();
        // A guest of a worker's seat is counted as waiting (W2), then the fence in
        // `request_from_others`, then the re-check (R2): work published before the count was
        // seen is found here, work published after it finds us (see "Waiting guests" in
        // `super::sleep`); the busy workers are asked to promote work, as for a worker going to
        // sleep. A spare thread's seat is no lent seat: it is not counted, and parks until its
        // latch is set or the backstop ends.
        let sleep = &self.registry.sleep;
        let counted = sleep.guest_parks(self.index);
        if counted {
            self.registry
                .requests
                .request_from_others(self.index, self.registry.seats_in_use());
        }
        if !(counted && self.registry.has_visible_work()) {
            // Miri cannot wait on the clock; the backstop is not needed for progress (the
            // latch's setter wakes us, and so does new work), only for the latency of work a
            // worker pushed without the fence.
            #[cfg(not(miri))]
            std::thread::park_timeout(GUEST_PARK);
            #[cfg(miri)]
            std::thread::park();
        }
        sleep.guest_unparks(self.index);
        hooks::park_end();
        latch.wake_up();
    }

    /// xorshift64 (Marsaglia, 2003) for picking victims.
    #[inline]
    fn next_random(&self) -> u64 {
        let mut x = self.rng.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng.set(x);
        x
    }
}

/// The guest of seat `index` gives it back (`run_as_guest`'s `Leave`): `Sleep::give_back`
/// wakes the worker if anything waits in its queues. Reads nothing of the seat's
/// `WorkerThread`, which lives on the worker's stack: once the seat is back on the sleeper list
/// the worker may wake, retire and exit. Everything the re-check reads (the injector, the
/// seat's run-next slot and inbox) lives in the registry, which outlives the worker's thread.
fn give_back_seat(registry: &Registry, index: usize) {
    registry.sleep.give_back(index, || {
        registry.has_visible_work()
            || registry.run_next[index].is_occupied()
            || !registry.inboxes[index].is_empty()
            || registry.terminating()
    });
    // The worker is a sleeper again: after the SeqCst RMW that counted it (in `give_back`),
    // it asks the busy workers for work, as when it went to sleep (`crate::heartbeat`, step
    // 5). While its seat was lent it was not counted idle, so they may have withdrawn their
    // flags; without this, a later guest of another seat would never promote a fork.
    registry
        .requests
        .request_from_others(index, registry.seats_in_use());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spin budget stays whole through a few empty spins, then halves with every further
    /// one down to its floor and no further, and is whole again after one spin that found work.
    #[test]
    fn the_spin_budget_shrinks_after_empty_spins_and_is_whole_again_after_work() {
        let mut b = (SPIN_BEFORE_PARK, 0);
        let mut budgets = vec![b.0];
        for _ in 0..(EMPTY_SPINS + 8) {
            b = next_spin_budget(b, false);
            budgets.push(b.0);
        }
        let whole = EMPTY_SPINS as usize;
        assert!(
            budgets[..whole].iter().all(|&d| d == SPIN_BEFORE_PARK),
            "{budgets:?}"
        );
        assert_eq!(budgets[whole], SPIN_BEFORE_PARK / 2, "{budgets:?}");
        assert!(budgets.windows(2).all(|w| w[1] <= w[0]), "{budgets:?}");
        assert_eq!(*budgets.last().unwrap(), MIN_SPIN);
        assert!(MIN_SPIN > Duration::ZERO && MIN_SPIN < SPIN_BEFORE_PARK);
        // One spin that finds work: whole again, and the count of empty spins starts over.
        let b = next_spin_budget(b, true);
        assert_eq!(b, (SPIN_BEFORE_PARK, 0));
        assert_eq!(next_spin_budget(b, false), (SPIN_BEFORE_PARK, 1));
    }
}
