//! Spare threads: a worker blocked in the kernel is stood in for, so the work queued behind it
//! runs.
//!
//! A task that blocks outside threadlab (a `std::sync::Mutex`, `Barrier` or `Condvar`, a
//! channel's blocking `recv`, file or network I/O, `sleep`) holds its worker for as long as it
//! blocks. When every worker blocks, the work queued behind them never runs; when what they wait
//! for *is* that work (a barrier whose last party is a queued task, a receive whose sender is
//! one), the program hangs, silently.
//!
//! # The monitor
//!
//! One thread per pool. Every [`TICK`] while some worker is awake it reads what the workers
//! keep anyway: the tasks the pool finished (the sum of the seats' counters), whether work waits
//! in the shared queues or latent in a seat's registered forks (`crate::heartbeat`), and, for
//! each seat whose occupant (its worker, or the guest it is lent to) is neither parked nor
//! idle-waiting, that thread's scheduler state
//! (`/proc/self/task/<tid>/stat`: `S` or `D` is blocked in the kernel, `R` running or
//! runnable). If no task finished for [`STALLED_TICKS`] ticks in a row while work waited, and
//! some occupant is asleep in the kernel and has wanted a CPU (run or waited for one) for less
//! than half the time since the previous look (`/proc/self/task/<tid>/schedstat`; a thread that
//! sleeps for moments between computing is busy, not blocked) while no spare thread is running,
//! it starts a spare
//! thread: at most one per decision, at most [`Builder::max_spare_threads`] alive at once. Past
//! that bound it says so on stderr, once per pool, with what it saw: a hang it cannot lift is
//! never silent.
//!
//! Before that, a blocked occupant's oldest latent fork is *offered*: the second half of a
//! `join` whose first half sits blocked (a barrier both halves meet, a channel the second
//! half sends on) is put into the injector for the other workers, as Rayon would have made it
//! stealable from the start (`heartbeat::offer_oldest`, "Offers" in `crate::heartbeat`).
//!
//! Where the rule comes from: Go's scheduler hands a P off a thread that has sat in a system
//! call for a monitor tick (`sysmon` and `retake` in the runtime's `proc.go`; the tick is 20 µs
//! to 10 ms); .NET's thread pool injects a thread when its queue has made no progress for a
//! while (its "starvation" rule, about half a second); Java's `ForkJoinPool` compensates for a
//! worker that calls `ManagedBlocker.block`; Tokio's `block_in_place` hands the worker's queue
//! to a new thread. threadlab detects from outside, with no help from the blocking code, as Go
//! and .NET do, and offers the cooperative form as [`blocking`]. Detection needs procfs: on
//! other systems only [`blocking`] starts spare threads.
//!
//! # Spare threads
//!
//! A spare thread is a worker on a seat of its own: the pool allocates
//! [`Builder::max_spare_threads`] seats beyond its workers' (indices `num_threads..`), each with
//! a deque the workers steal from, a heartbeat flag and counters. It takes work as any worker
//! does (the injector, every deque) and runs joins, scopes and futures as any worker does; it
//! takes no part in the sleep protocol: its waits park on their latch as a guest's do (woken by
//! the latch's setter, `Registry::wake_specific`, with the guest's backstop timeout), and it
//! leaves once it finds no work after the usual spin, or once fewer workers are blocked than
//! spare threads run. [`current_thread_index`](crate::current_thread_index) on it is the index
//! of the worker it stands in for (the first, when it stands in for several), so inside the
//! pool's work the index is always below `current_num_threads()` (per-thread scratch indexed by
//! it, `bufs[current_thread_index().unwrap()]`, keeps working): a task that blocked may share
//! its index with the spare thread until it ends.
//!
//! # Cost
//!
//! Nothing on the task path: the monitor reads counters the workers keep anyway, and reads
//! procfs only while the pool has stalled or spare threads run. It sleeps for good (no timer)
//! once every worker has been on the sleeper list for [`QUIET_TICKS`] ticks; whoever next takes
//! a worker off that list or lends a seat rings it, under the list's lock
//! (`Sleep::monitor_may_sleep`), so an idle pool stays at zero CPU.
//!
//! [`Builder::max_spare_threads`]: crate::Builder::max_spare_threads

use std::sync::Mutex;
use std::thread::{JoinHandle, Thread};
use std::time::Duration;

use crate::loom::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use crate::loom::sync::Arc;
use crate::pool::registry::Registry;
use crate::pool::worker::WorkerThread;
use crate::util::lock;

/// How often the monitor looks while some worker is awake.
pub(crate) const TICK: Duration = Duration::from_millis(50);
/// Ticks in a row with no task finished while work waits before a spare thread starts.
pub(crate) const STALLED_TICKS: u32 = 2;
/// Ticks in a row with every worker asleep before the monitor sleeps for good.
pub(crate) const QUIET_TICKS: u32 = 20;

/// A pool's spare seats and what the monitor knows (in the registry).
pub(crate) struct Spares {
    /// Spare threads allowed at once (the builder's `max_spare_threads`).
    pub(crate) max: usize,
    /// Spare threads running now.
    live: AtomicUsize,
    /// Spare seats ever used, from the first (the workers and the thieves look this far).
    used: AtomicUsize,
    /// Which spare seats have a thread.
    busy: Box<[AtomicBool]>,
    /// Each spare seat's current thread, for `Registry::wake_specific`.
    threads: Box<[Mutex<Option<Thread>>]>,
    /// For each spare seat, the worker seats its thread was started for (the recording's
    /// `trace::ARG_SPARE_FOR`).
    stands_in_for: Box<[Mutex<String>]>,
    /// For each spare seat, the worker index its thread answers to (`current_thread_index`):
    /// the first worker it was started for.
    index_as: Box<[AtomicUsize]>,
    /// Spare threads started so far.
    started: AtomicU64,
    /// Occupants blocked in the kernel at the monitor's last look (or declared by `blocking`).
    blocked: AtomicUsize,
    /// Per worker seat: the OS id of the guest it is lent to (0: none).
    pub(crate) guest_tids: Box<[AtomicU64]>,
    /// Per worker seat: its occupant is inside `blocking`.
    declared: Box<[AtomicBool]>,
    /// The monitor said, once, that it can start no more spare threads.
    warned: AtomicBool,
    /// The monitor's thread, joined at shutdown.
    monitor: Mutex<Option<JoinHandle<()>>>,
}

impl Spares {
    pub(crate) fn new(workers: usize, max: usize) -> Spares {
        Spares {
            max,
            live: AtomicUsize::new(0),
            used: AtomicUsize::new(0),
            busy: (0..max).map(|_| AtomicBool::new(false)).collect(),
            threads: (0..max).map(|_| Mutex::new(None)).collect(),
            stands_in_for: (0..max).map(|_| Mutex::new(String::new())).collect(),
            index_as: (0..max).map(|_| AtomicUsize::new(0)).collect(),
            started: AtomicU64::new(0),
            blocked: AtomicUsize::new(0),
            guest_tids: (0..workers).map(|_| AtomicU64::new(0)).collect(),
            declared: (0..workers).map(|_| AtomicBool::new(false)).collect(),
            warned: AtomicBool::new(false),
            monitor: Mutex::new(None),
        }
    }

    /// Spare seats the thieves must look at (those ever used).
    #[inline]
    pub(crate) fn used(&self) -> usize {
        // Relaxed: whoever learns of a spare thread's work through the pool's other
        // synchronisation (a wake-up after its push, the thread's start) has the `fetch_max`
        // that preceded its start happen before, so coherence gives it the new count; a thief
        // that has not yet seen it misses only that thread's own forks, which it runs itself.
        self.used.load(Ordering::Relaxed)
    }

    /// Spare threads started so far.
    pub(crate) fn started(&self) -> u64 {
        // Relaxed: a statistic.
        self.started.load(Ordering::Relaxed)
    }

    /// Occupants blocked at the monitor's last look.
    pub(crate) fn blocked(&self) -> usize {
        // Relaxed: a statistic and a hint (see `spare_surplus`).
        self.blocked.load(Ordering::Relaxed)
    }
}

/// Runs `f`, which is about to block (on I/O, a lock, a channel, a sleep), telling the pool of
/// the calling worker first: unless another worker is idle to take the pool's other work, a
/// spare thread starts at once and runs that work while `f` blocks (it leaves when it finds
/// none). Outside a pool's workers, `f` just runs.
///
/// Without it the pool still notices a worker blocked in the kernel while work waits (see
/// [`Builder::max_spare_threads`](crate::Builder::max_spare_threads)), but only after a
/// hundred milliseconds or so; `blocking` says so up front. While recording, the call is a zone
/// on the calling thread's track ([`BLOCKING_ZONE`](crate::trace::BLOCKING_ZONE)), so the
/// doctor does not count the spare thread it starts as a stall.
///
/// ```
/// let pool = threadlab::Pool::builder().threads(1).build()?;
/// let (tx, rx) = std::sync::mpsc::channel();
/// let got = pool.install(move || {
///     // The sender is queued behind the receive: on the pool's only worker, the receive
///     // would wait for it forever; a spare thread runs it.
///     threadlab::spawn(move || tx.send(7).unwrap());
///     threadlab::blocking(|| rx.recv().unwrap())
/// });
/// assert_eq!(got, 7);
/// # Ok::<(), threadlab::BuildError>(())
/// ```
pub fn blocking<R>(f: impl FnOnce() -> R) -> R {
    let Some(w) = WorkerThread::current() else {
        return f();
    };
    let registry = Arc::clone(w.registry());
    let seat = w.index();
    struct Undeclare<'a>(&'a Registry, Option<usize>);
    impl Drop for Undeclare<'_> {
        fn drop(&mut self) {
            if let Some(seat) = self.1 {
                // Relaxed: hints for the monitor, which reads them at its next tick (and
                // recounts `blocked` whenever it looks).
                self.0.spares.declared[seat].store(false, Ordering::Relaxed);
                let _ =
                    self.0
                        .spares
                        .blocked
                        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| {
                            Some(b.saturating_sub(1))
                        });
            }
        }
    }
    let declared = seat < registry.num_threads();
    if declared {
        // Relaxed: read by the monitor at its next tick; the count below is for the spare
        // started now, which reads it before the monitor's next look.
        registry.spares.declared[seat].store(true, Ordering::Relaxed);
        registry.spares.blocked.fetch_add(1, Ordering::Relaxed);
    }
    let _undeclare = Undeclare(&registry, declared.then_some(seat));
    // While recording, the declared wait is a zone on this thread's track, open before the
    // spare thread starts: the doctor reads a seat inside it as blocked on purpose.
    let _zone = crate::trace::Zone::begin(crate::trace::BLOCKING_ZONE);
    if !registry.idle_exists() {
        Registry::start_spare(&registry, &[seat]);
    }
    f()
}

impl Registry {
    /// Starts the pool's monitor thread (not under Miri, which cannot read procfs, nor loom);
    /// false if the OS refused a thread. An elastic pool's monitor may leave and be started
    /// again (`Bell`): the new one joins the old one first.
    pub(crate) fn start_monitor(this: &Arc<Registry>) -> bool {
        // With no spare thread allowed it still runs: to say why the pool is stuck.
        if cfg!(any(miri, loom)) || !cfg!(target_os = "linux") || this.terminating() {
            return false;
        }
        let mut handle = lock(&this.spares.monitor);
        if let Some(old) = handle.take() {
            // It has left its loop (`Bell::leave`): a short wait.
            let _ = old.join();
        }
        let reg = Arc::clone(this);
        let started = std::thread::Builder::new()
            .name("threadlab-monitor".into())
            .spawn(move || monitor(reg));
        // Without a monitor the pool works as before (no spare thread unless `blocking`).
        match started {
            Ok(h) => {
                *handle = Some(h);
                true
            }
            Err(_) => false,
        }
    }

    /// An elastic pool (`self_ref`: its reference to itself, emptied at shutdown) lets its
    /// monitor leave while idle and start again when a worker wakes.
    pub(crate) fn set_monitor_restart(
        &self,
        self_ref: std::sync::Arc<Mutex<Option<Arc<Registry>>>>,
    ) {
        let _ = self.sleep.bell.restart.set(Box::new(move || {
            let reg = lock(&self_ref).clone();
            reg.is_some_and(|r| Registry::start_monitor(&r))
        }));
    }

    /// Wakes the monitor so it sees `terminating`, and joins it.
    pub(crate) fn stop_monitor(&self) {
        self.sleep.bell.ring();
        if let Some(h) = lock(&self.spares.monitor).take() {
            let _ = h.join();
        }
    }

    /// Starts a spare thread on a free spare seat, for the seats in `stands_in_for`; false if
    /// none is free, the pool is shutting down or the OS refuses a thread.
    pub(crate) fn start_spare(this: &Arc<Registry>, stands_in_for: &[usize]) -> bool {
        let spares = &this.spares;
        if this.terminating() {
            return false;
        }
        // SeqCst: the bound on spare threads alive holds across concurrent starters.
        if spares.live.fetch_add(1, Ordering::SeqCst) >= spares.max {
            spares.live.fetch_sub(1, Ordering::SeqCst);
            return false;
        }
        // A free seat exists: fewer than `max` threads hold one (each holds its seat until it
        // has left it, then gives up its count).
        let Some(k) = (0..spares.max).find(|&k| {
            spares.busy[k]
                .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        }) else {
            spares.live.fetch_sub(1, Ordering::SeqCst);
            return false;
        };
        // Relaxed: see `Spares::used`.
        spares.used.fetch_max(k + 1, Ordering::Relaxed);
        let index = this.num_threads() + k;
        // Relaxed: read by the spare thread, which the thread's start orders after this, and by
        // no one else while the seat is busy.
        let stand_in = stands_in_for.first().map_or(0, |&s| this.index_as(s));
        spares.index_as[k].store(stand_in, Ordering::Relaxed);
        {
            let mut seats = lock(&spares.stands_in_for[k]);
            seats.clear();
            for (i, s) in stands_in_for.iter().enumerate() {
                if i > 0 {
                    seats.push(',');
                }
                seats.push_str(&s.to_string());
            }
        }
        let name = format!("threadlab-spare-{k}");
        let reg = Arc::clone(this);
        // Counted before the thread exists: it may run the work a caller waits for and that
        // caller read the metrics before this function returns. Relaxed: a statistic; the
        // caller's wait on the work orders the read after it.
        spares.started.fetch_add(1, Ordering::Relaxed);
        match Registry::start_thread_with(this, index, name, move || {
            crate::pool::worker::spare_main(reg, index)
        }) {
            Ok(()) => true,
            Err(_) => {
                // Relaxed: the start that did not happen is taken back.
                spares.started.fetch_sub(1, Ordering::Relaxed);
                spares.busy[k].store(false, Ordering::SeqCst);
                spares.live.fetch_sub(1, Ordering::SeqCst);
                false
            }
        }
    }

    /// The worker index the thread on seat `index` answers to: its own for a worker's seat,
    /// the worker's it stands in for on a spare seat (see the module doc).
    pub(crate) fn index_as(&self, index: usize) -> usize {
        match index.checked_sub(self.num_threads()) {
            None => index,
            // Relaxed: see `start_spare`.
            Some(k) => self.spares.index_as[k].load(Ordering::Relaxed),
        }
    }

    /// A spare thread on seat `index` registers its thread, for `wake_specific`, and, while
    /// recording, opens its [`SPARE_ZONE`](crate::trace::SPARE_ZONE) (true if it did).
    pub(crate) fn spare_arrived(&self, index: usize) -> bool {
        let k = index - self.num_threads();
        *lock(&self.spares.threads[k]) = Some(std::thread::current());
        if !crate::trace::hooks::enabled() {
            return false;
        }
        crate::trace::hooks::zone_enter(crate::trace::SPARE_ZONE);
        crate::trace::hooks::arg(
            crate::trace::ARG_SPARE_FOR,
            &lock(&self.spares.stands_in_for[k]),
        );
        true
    }

    /// The spare thread on seat `index` has left its loop (its deque is back in the seat):
    /// the seat is free again.
    pub(crate) fn spare_left(&self, index: usize) {
        let k = index - self.num_threads();
        *lock(&self.spares.threads[k]) = None;
        // SeqCst: with `start_spare`'s claim.
        self.spares.busy[k].store(false, Ordering::SeqCst);
        self.spares.live.fetch_sub(1, Ordering::SeqCst);
    }

    /// Unparks the spare thread on seat `index` (its latch was set).
    pub(crate) fn wake_spare(&self, index: usize) {
        let k = index - self.num_threads();
        if let Some(t) = lock(&self.spares.threads[k]).as_ref() {
            t.unpark();
        }
    }

    /// More spare threads run than occupants are blocked: the one asking may leave.
    pub(crate) fn spare_surplus(&self) -> bool {
        // SeqCst: a fresh count of the live spares; `blocked` is the monitor's hint.
        self.spares.live.load(Ordering::SeqCst) > self.spares.blocked()
    }
}

/// What the monitor remembers between ticks.
struct Watch {
    progress: u64,
    stalled: u32,
    quiet: u32,
    /// Per worker seat: what the previous tick's look found, if it looked.
    seen: Vec<Option<Seen>>,
}

fn monitor(registry: Arc<Registry>) {
    let mut watch = Watch {
        progress: u64::MAX,
        stalled: 0,
        quiet: 0,
        seen: vec![None; registry.num_threads()],
    };
    loop {
        if registry.terminating() {
            return;
        }
        tick(&registry, &mut watch);
        if watch.quiet >= QUIET_TICKS && registry.sleep.monitor_may_sleep() {
            watch.quiet = 0;
            watch.stalled = 0;
            if registry.sleep.bell.restart.get().is_some() {
                if registry.sleep.bell.leave() {
                    return;
                }
                continue;
            }
            registry.sleep.bell.wait(None);
        } else {
            registry.sleep.bell.wait(Some(TICK));
        }
    }
}

fn tick(registry: &Arc<Registry>, watch: &mut Watch) {
    let spares = &registry.spares;
    let n = registry.num_threads();
    let span = n + spares.used();
    // Relaxed: statistics; the monitor acts on what stays true over several ticks.
    let progress: u64 = registry.counters[..span]
        .iter()
        .map(|c| c.tasks.load(Ordering::Relaxed))
        .sum();
    let waiting = registry.has_visible_work();
    // A seat with registered forks (latent second halves of `join`s, `crate::heartbeat`) may
    // hold work nobody can see: if its occupant is blocked in the kernel inside the first half,
    // the second half is offered to the pool (below).
    let latent = (0..n).any(|i| registry.requests.seat(i).has_frames());
    if progress != watch.progress || !(waiting || latent) {
        watch.stalled = 0;
    } else {
        watch.stalled += 1;
    }
    watch.progress = progress;
    // SeqCst: a fresh count (see `spare_surplus`).
    let live = spares.live.load(Ordering::SeqCst);
    let mut awake = 0;
    let mut blocked = Vec::new();
    // Look from the first stalled tick: a seat counts as blocked when its thread is asleep now
    // and wanted a CPU for less than half the time since the previous look. A thread that
    // sleeps for moments between computing (a contended lock inside the allocator or a
    // sanitizer's runtime, a page fault, a short `sleep`) is caught asleep now and then, but it
    // is busy: a spare thread would only compete with it for a CPU. Time spent waiting for a
    // CPU counts as wanting one, so a busy thread on an overloaded machine is not taken for a
    // blocked one either.
    let look = watch.stalled >= 1 || live > 0;
    let now = std::time::Instant::now();
    for i in 0..n {
        let before = watch.seen[i].take();
        // Relaxed, all: hints about the seats, re-read every tick.
        let guest = spares.guest_tids[i].load(Ordering::Relaxed);
        let tid = if guest != 0 {
            if registry.sleep.guest_waiting(i) {
                continue;
            }
            guest
        } else {
            if registry.counters[i].parked.load(Ordering::Relaxed) {
                continue;
            }
            registry.counters[i].os_tid.load(Ordering::Relaxed)
        };
        awake += 1;
        if !look {
            continue;
        }
        if spares.declared[i].load(Ordering::Relaxed) {
            blocked.push(i);
        } else {
            let (state, wanted) = thread_look(tid);
            if state == State::Blocked
                && before.is_some_and(|b| {
                    b.tid == tid && wanted.saturating_sub(b.wanted) * 2 < now.duration_since(b.at)
                })
            {
                blocked.push(i);
            }
            watch.seen[i] = Some(Seen {
                tid,
                at: now,
                wanted,
            });
        }
    }
    if look {
        // Relaxed: a hint for the spare threads (`spare_surplus`).
        spares.blocked.store(blocked.len(), Ordering::Relaxed);
    }
    // A blocked occupant's oldest latent fork goes to the injector, where an idle worker (or a
    // spare thread started at a later tick) takes it: a `join` whose first half waits for its
    // second does not hang (heartbeat scheduling publishes a fork only at a beat, which a
    // thread blocked in the kernel never reaches).
    for &i in &blocked {
        if let Some(job) = crate::heartbeat::offer_oldest(registry.requests.seat(i)) {
            crate::trace::hooks::spawn(job.id());
            registry.inject(job);
            watch.stalled = 0;
        }
    }
    if watch.stalled >= STALLED_TICKS && !blocked.is_empty() && waiting {
        watch.stalled = 0;
        let running = (n..n + spares.used()).any(|j| {
            // Relaxed: hints, as above.
            let c = &registry.counters[j];
            spares.busy[j - n].load(Ordering::Relaxed)
                && thread_state(c.os_tid.load(Ordering::Relaxed)) == State::Running
        });
        if !running && !Registry::start_spare(registry, &blocked) {
            warn_once(registry, blocked.len());
        }
    }
    if awake == 0 && live == 0 {
        watch.quiet += 1;
    } else {
        watch.quiet = 0;
    }
}

#[cold]
fn warn_once(registry: &Registry, blocked: usize) {
    // Relaxed: only decides whether to print.
    if registry.spares.warned.swap(true, Ordering::Relaxed) {
        return;
    }
    eprintln!(
        "threadlab: a pool of {} workers is stuck: {blocked} of its threads are blocked outside \
         threadlab (a lock, a channel, I/O) inside tasks, work waits in its queues, no task has \
         finished for {} ms, and its {} spare threads are all in use. Wrap calls that block in \
         `threadlab::blocking`, or raise `Builder::max_spare_threads` (said once per pool)",
        registry.num_threads(),
        TICK.as_millis() * u128::from(STALLED_TICKS),
        registry.spares.max,
    );
}

#[derive(Debug, PartialEq, Eq)]
enum State {
    /// Running or runnable.
    Running,
    /// Asleep in the kernel (`S`, `D`).
    Blocked,
    /// Gone, or not readable.
    Unknown,
}

/// What a look found of a seat's thread.
#[derive(Clone, Copy)]
struct Seen {
    tid: u64,
    at: std::time::Instant,
    /// The time it had spent on a CPU or waiting for one then.
    wanted: Duration,
}

/// The scheduler state of thread `tid` of this process, from procfs.
fn thread_state(tid: u64) -> State {
    thread_stat(tid).map_or(State::Unknown, |stat| parse_stat(&stat).0)
}

/// The scheduler state of thread `tid` of this process and the time it has spent on a CPU or
/// waiting for one, from procfs: `schedstat` (run and run-queue time in nanoseconds, kept when
/// the kernel has `CONFIG_SCHED_INFO`, as distributions' kernels do), else the CPU time in
/// `stat`, which leaves the waits out.
fn thread_look(tid: u64) -> (State, Duration) {
    let Some(stat) = thread_stat(tid) else {
        return (State::Unknown, Duration::ZERO);
    };
    let (state, cpu) = parse_stat(&stat);
    let wanted = std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat"))
        .ok()
        .and_then(|line| parse_schedstat(&line))
        .unwrap_or(cpu);
    (state, wanted)
}

fn thread_stat(tid: u64) -> Option<String> {
    if tid == 0 {
        return None;
    }
    std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()
}

/// The state and CPU time (user plus system) in a `stat` line (fields 3, 14 and 15 in proc(5);
/// the times count clock ticks of `USER_HZ`, 100 a second on Linux). The fields follow the
/// command name, which is in parentheses and may hold anything (spaces and parentheses too):
/// they start after the last `)`.
fn parse_stat(stat: &str) -> (State, Duration) {
    let Some(at) = stat.rfind(')') else {
        return (State::Unknown, Duration::ZERO);
    };
    let mut fields = stat[at + 1..].split_ascii_whitespace();
    let state = match fields.next().and_then(|f| f.chars().next()) {
        Some('R') => State::Running,
        Some('S' | 'D') => State::Blocked,
        _ => State::Unknown,
    };
    // Fields 14 and 15 (utime, stime): 10 and 11 after the state (field 3).
    let mut fields = fields.skip(10);
    let mut ticks = || {
        fields
            .next()
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let cpu = ticks() + ticks();
    (state, Duration::from_millis(cpu.saturating_mul(10)))
}

/// The time on a CPU plus the time waiting for one in a `schedstat` line (its first two
/// fields, in nanoseconds).
fn parse_schedstat(line: &str) -> Option<Duration> {
    let mut fields = line.split_ascii_whitespace();
    let mut ns = || fields.next().and_then(|f| f.parse::<u64>().ok());
    let run = ns()?;
    let wait = ns()?;
    Some(Duration::from_nanos(run.saturating_add(wait)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_gives_the_state_and_cpu_time_whatever_the_command_name() {
        // A name with spaces and a parenthesis, as `prctl(PR_SET_NAME)` allows.
        let line = "4242 (a b) c)) S 1 4242 4242 0 -1 4194368 120 0 0 0 37 5 0 0 20 0 3 0 \
                    1234 0 0";
        assert_eq!(
            parse_stat(line),
            (State::Blocked, Duration::from_millis(420))
        );
        let running = "7 (w) R 1 7 7 0 -1 0 0 0 0 0 1000 234 0 0 20 0 1 0 5";
        assert_eq!(
            parse_stat(running),
            (State::Running, Duration::from_millis(12_340))
        );
        assert_eq!(parse_stat("7 (w"), (State::Unknown, Duration::ZERO));
    }

    #[test]
    fn a_schedstat_line_gives_run_plus_wait_time() {
        assert_eq!(
            parse_schedstat("98912190 6541005 244\n"),
            Some(Duration::from_nanos(105_453_195))
        );
        assert_eq!(parse_schedstat("98912190"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_thread_reads_as_running_and_the_time_it_wants_a_cpu_grows() {
        let tid = crate::pool::worker::cached_thread_id();
        let (state, before) = thread_look(tid);
        assert_eq!(state, State::Running);
        let until = std::time::Instant::now() + Duration::from_millis(60);
        let mut x = 0u64;
        while std::time::Instant::now() < until {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(1));
        }
        let (_, after) = thread_look(tid);
        assert!(
            after >= before + Duration::from_millis(20),
            "{before:?} -> {after:?} after 60 ms on a CPU or waiting for one"
        );
    }
}
