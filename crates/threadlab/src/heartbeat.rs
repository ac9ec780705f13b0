//! Heartbeat promotion: a `join` publishes its second half only when an idle worker could take
//! it, and then at most once per beat; every other fork is a plain function call.
//!
//! # The idea, and where it comes from
//!
//! Work-first work stealing (Cilk, rayon-core) publishes every fork: each `join` pushes its
//! second half onto a deque and pops it back, paying a fence even when nobody steals. Heartbeat
//! scheduling (Acar, Charguéraud, Guatto, Rainey, Sieczkowski, "Heartbeat Scheduling: Provable
//! Efficiency for Nested Parallelism", PLDI 2018) keeps forks *latent* and promotes the oldest
//! latent fork to a real task once per heartbeat period, which bounds the cost of promotions to a
//! constant fraction of the work while keeping the parallelism; spice (Zig) and chili (Rust) apply
//! it to `join` with a heartbeat thread that sets a flag on each worker in turn.
//!
//! threadlab goes one step further: a fork is not even *recorded* (latent) unless some worker is
//! idle. Measured on the 2-core development VM (fib(32), a join per call, one worker): recording
//! every fork in a linked list of stack frames, as spice and chili do, costs 2.1–2.4× the plain
//! recursion; reading one flag and calling both halves costs 0.93–1.14×. So:
//!
//! 1. **Requests.** A worker that runs out of work (`WorkerThread::idle`) sets the *wanted* flag of
//!    every other worker ([`Requests::request_from_others`]), marked [`NEW`] so the busy worker's
//!    next poll checks at once. Nothing else sets it.
//! 2. **Fast path.** `join` reads its worker's flag (a relaxed load) and the length of its frame
//!    list: flag unset and list at least [`ALWAYS_REGISTERED`] long, it calls `a` then `b` and is
//!    done — no frame, no clock, no atomics written.
//! 3. **Registered joins.** Otherwise `join` links a [`Frame`] holding its second half (a
//!    `StackJob`, not yet published) onto this worker's frame list, and, if the flag is set, counts
//!    down to the next *check* ([`Heartbeat::poll`]). So the outermost levels of every fork tree
//!    are always registered (cheap: few forks, and they hold the largest pieces), and all forks
//!    are while a worker is idle.
//! 4. **Beats.** A check reads the clock (the countdown adapts so checks come about every
//!    [`CHECK_INTERVAL`]; a NEW request cuts it short). If at least [`HEARTBEAT`] has passed since
//!    this worker's last promotion (or it has never promoted), it promotes; then, if no worker is
//!    idle any more, it withdraws its flag (step 5). Promoting means: the oldest unpromoted
//!    frame's job goes onto its deque, where the sleep protocol wakes an idle worker to steal it. The oldest frame is the outermost pending
//!    fork, so the thief gets the largest piece of work available — provided it is the fork that
//!    is polling now (a coarse `join` polls only then) or has lived through a whole check
//!    interval ([`MIN_AGE`]); else a later check tries again. Loops promote by splitting their
//!    remaining range in half instead (`crate::parallel`), at any check ([`LOOP_SPACING`]).
//! 5. **Withdrawing.** A worker clears its own flag only when it sees no idle worker, and then
//!    re-reads the idle count: `flag := false; fence(SeqCst); read idle count` against the idle
//!    worker's `idle count += 1; fence(SeqCst); read flag; flag := true if clear`. Of the two
//!    fences one comes first in the single total order, so either the busy worker sees the new
//!    idle worker (and sets its flag again) or the idle worker's flag read sees the clear (and
//!    sets it). `loom_tests` checks every interleaving (a fence pair, because loom models SeqCst
//!    fences fully but SeqCst loads and stores only as acquire/release).
//!    A request is therefore never lost, which matters: an idle worker that parked would otherwise
//!    sleep through the rest of the computation.
//!
//! Promoted frames form a contiguous bottom part of the frame list (promotion always takes the
//! lowest unpromoted frame, and frames are pushed and popped in LIFO order), so finding the oldest
//! unpromoted frame walks from the top until it meets a promoted frame.
//!
//! # Offers: a first half blocked in the kernel
//!
//! A beat needs its worker to run: a worker whose `join`'s first half blocks in the kernel (a
//! barrier the second half must also reach, a channel the second half sends on) never beats,
//! so its second half would never be published and the join would hang, where Rayon's `join`,
//! which publishes every second half, returns. The pool's monitor (`pool/spare.rs`) sees such
//! a thread asleep in the kernel for two looks in a row and *offers* its oldest unpromoted fork:
//! it marks the frame promoted and puts its job into the injector, where another worker (or a
//! spare thread) takes it. The owner, when its first half returns, finds the frame promoted and
//! waits for the job's latch as after a beat.
//!
//! The frames live on the owner's stack, so the monitor may read one only while the owner
//! cannot unlink it and return. The list's head and the offer state are in the seat's shared
//! [`SeatBeat`]; the handshake is Dekker's, made asymmetric (`crate::asym`) so that the owner,
//! which unlinks a frame at every registered join, pays no fence:
//!
//! ```text
//!   owner (pop)                          monitor (offer_oldest)
//!   top := frame.prev          (W1)      offer := OFFERING              (W2)
//!   compiler fence                       membarrier: a full barrier on every running thread
//!   read offer                 (R1)      read top, walk to the oldest unpromoted frame (R2)
//!   if OFFERING: wait for IDLE           claim it (compare-and-swap), offer := IDLE (Release)
//! ```
//!
//! The system call orders the owner's thread: its W1 is visible to R2, or its R1 comes after the
//! barrier and sees W2. So a frame the monitor reaches is either not yet unlinked, and its owner
//! will see OFFERING when it unlinks it and wait for the offer to end, or unlinked and out of the
//! monitor's reach. The owner's beat and the monitor may both go for the same frame: each claims
//! it with a compare-and-swap on `promoted`, and only the winner publishes it. Without the system
//! call (not Linux, or a kernel before 4.3) nothing is offered. `loom_tests` checks the handshake
//! (a SeqCst fence standing for the system call).
//!
//! A pool whose workers are all busy pays only the flag read; an idle pool does no heartbeat work
//! at all (there is no heartbeat thread, and a parked worker checks nothing).

use std::cell::Cell;
use std::time::{Duration, Instant};

use crate::job::JobRef;
use crate::loom::cell::UnsafeCell;
use crate::loom::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU8, Ordering};
use crate::util::CachePadded;

/// Shortest time between two promotions by one worker: the heartbeat period. Acar et al. use
/// periods of tens of microseconds; a promotion here costs a deque push, a possible futex wake
/// (tens of µs of CPU on a VM, for the woken thread) and a steal, so 100 µs keeps its cost to a few
/// percent of the promoting worker's time while an idle worker waits at most about one period.
pub(crate) const HEARTBEAT: Duration = Duration::from_micros(100);

/// How often a worker with its flag set reads the clock: a quarter of the beat, so a beat is
/// late by at most about a quarter period. A read costs about 25–35 ns on the VM.
pub(crate) const CHECK_INTERVAL: Duration = Duration::from_micros(25);

/// Shortest time between two splits of loops by one worker: every check. A split costs a push,
/// maybe a wake and a steal (about a microsecond), against at least a check interval of work
/// since the last, so the heartbeat's amortization holds without the full beat; and a loop's
/// tail needs quick splits: when a thief finishes its half early, waiting out a 100 µs beat left
/// it idle for up to that long per round (the doctor saw 27% of two workers' time lost on the
/// lab's image pass).
pub(crate) const LOOP_SPACING: Duration = CHECK_INTERVAL;

/// Checks an older frame must have lived through before a beat promotes it: linked in check
/// interval k, promotable from the check that ends interval k + 1, i.e. after at least one whole
/// interval. Below the newest frame, a young frame is deep in a depth-first descent and small: its
/// owner often finishes it before a parked thief (tens of µs to wake on a VM) arrives, and
/// promoting it costs both of them (a 2-worker tree sum under load promoted 684 frames for 6
/// steals without this rule). An old frame's first half has run for a whole interval, so its
/// second half likely holds work worth the wake-up. The newest frame is exempt (see
/// `take_oldest`), and so is a frame linked before a check that came at least this many
/// intervals after the previous one (`Heartbeat::long_gap`): epochs pass only at checks, which
/// stop while no worker asks, so such a frame may be milliseconds old. (On the lab's quick sort,
/// whose forks are a partition apart, the wait for two more checks left the other worker idle
/// for up to 2.5 ms of a 15 ms sort, 1.05–1.08× Rayon's time; with the exemption 0.97–1.00×.)
const MIN_AGE: u32 = 2;

/// Forks always registered, whether or not a worker is idle: the outermost levels of the fork
/// tree a worker runs (its frame list up to this length). They are few (2^6 - 1 in a balanced
/// tree) and hold the largest pieces of work, so when a worker does become idle, a beat has
/// something large to hand out even if the busy worker has been running unregistered, deeper
/// forks for a long time. Without them, an unbalanced tree (fib: one half 1.6 times the other)
/// left the thief with small, deep pieces after its first one, and two workers ran fib(32) barely
/// faster than one.
pub(crate) const ALWAYS_REGISTERED: u32 = 6;

/// The most forks or loop items between two clock reads (the countdown's ceiling).
const MAX_PERIOD: u32 = 1 << 20;

/// A worker's flag: no worker wants work from it (the fork fast path).
pub(crate) const CLEAR: u8 = 0;
/// Some worker wants work; the busy worker has seen the request at a check.
pub(crate) const WANTED: u8 = 1;
/// A request the busy worker has not checked yet: its next poll reads the clock at once, so a
/// coarse fork, which polls only on entry, is not let through on a countdown left over from
/// earlier fine-grained work.
pub(crate) const NEW: u8 = 2;

/// What other threads share of one seat's heartbeat (in the registry): its wanted flag, which
/// idle workers set, and its list of registered frames with the state of an offer, which the
/// pool's monitor reads (see "Offers" in the module doc). One cache line: the owner reads the
/// flag at every fork and touches the list at every registered one.
pub(crate) struct SeatBeat {
    wanted: AtomicU8,
    /// [`OFFERING`] while the monitor walks the list, else [`IDLE`].
    offer: AtomicU8,
    /// The newest registered frame (null: none). Written only by the seat's occupant.
    top: AtomicPtr<Frame>,
}

impl SeatBeat {
    /// True if the seat's occupant has registered forks (a hint for the monitor).
    pub(crate) fn has_frames(&self) -> bool {
        // Relaxed: a hint, acted on only through `offer_oldest`'s handshake.
        !self.top.load(Ordering::Relaxed).is_null()
    }
}

/// No offer in progress.
const IDLE: u8 = 0;
/// The monitor is offering the list's oldest fork: the owner may not unlink a frame it has not
/// seen yet until the offer is over.
const OFFERING: u8 = 1;

/// The heartbeat state every seat of a pool shares with the others (in the registry).
pub(crate) struct Requests {
    seats: Box<[CachePadded<SeatBeat>]>,
}

impl Requests {
    pub(crate) fn new(workers: usize) -> Requests {
        Requests {
            seats: (0..workers)
                .map(|_| {
                    CachePadded::new(SeatBeat {
                        wanted: AtomicU8::new(CLEAR),
                        offer: AtomicU8::new(IDLE),
                        top: AtomicPtr::new(std::ptr::null_mut()),
                    })
                })
                .collect(),
        }
    }

    /// Worker `index`'s flag.
    #[cfg(test)]
    pub(crate) fn flag(&self, index: usize) -> &AtomicU8 {
        &self.seats[index].wanted
    }

    /// Seat `index`'s shared heartbeat state.
    pub(crate) fn seat(&self, index: usize) -> &SeatBeat {
        &self.seats[index]
    }

    /// An idle worker asks every other worker to promote work. Call it only after this worker's
    /// own SeqCst update of the sleep state that counts it as idle (searching or sleeping): that
    /// update, the fence here, and the fence in `Heartbeat::withdraw` make the handshake of the
    /// module doc (step 5).
    /// Only the first `seats` flags are looked at (the workers' and the spare seats in use).
    pub(crate) fn request_from_others(&self, me: usize, seats: usize) {
        // The idle worker's fence of the pair: our idle-count update is ordered before the flag
        // reads below, against `withdraw`'s clear, fence, idle-count read.
        fence(Ordering::SeqCst);
        for (i, flag) in self.seats[..seats].iter().map(|s| &s.wanted).enumerate() {
            // Relaxed: ordered by the fence pair. Skipping the store when the mark is already
            // there keeps the line shared; after the fence, a non-clear read here cannot be
            // older than a concurrent withdraw's clear unless that withdraw will see us idle and
            // set the flag again.
            if i != me && flag.load(Ordering::Relaxed) != NEW {
                flag.store(NEW, Ordering::Relaxed);
            }
        }
    }
}

/// A registered fork: the unpublished second half of a `join`, linked on its worker's list.
pub(crate) struct Frame {
    /// The next older frame; written by the owner before the frame is linked, read by the owner
    /// and by the monitor (after its Acquire load of the list's head). Loom's cell under loom,
    /// so the models see a read of a frame whose owner has moved on.
    prev: UnsafeCell<*const Frame>,
    /// Set once, by whoever publishes the job: the owner's beat or the monitor's offer (each with
    /// a compare-and-swap, so only one of them publishes it).
    promoted: AtomicBool,
    /// The worker's check count when the frame was linked (its age, in check intervals).
    epoch: Cell<u32>,
    job: JobRef,
}

impl Frame {
    /// A frame for `job` (not yet published or recorded).
    pub(crate) fn new(job: JobRef) -> Frame {
        Frame {
            prev: UnsafeCell::new(std::ptr::null()),
            promoted: AtomicBool::new(false),
            epoch: Cell::new(0),
            job,
        }
    }

    /// The next older frame.
    #[inline(always)]
    fn prev(&self) -> *const Frame {
        // SAFETY: written only by the owner before the frame is linked (`push`); readers reach
        // the frame through the list's head, after that write.
        self.prev.with(|p| unsafe { *p })
    }

    /// True once a beat or an offer published the job (read by the owner after it unlinked the
    /// frame, see [`Heartbeat::pop`]).
    #[inline]
    pub(crate) fn promoted(&self) -> bool {
        // Relaxed: the owner's own promotion is program-ordered before; the monitor's is ordered
        // before by the offer state's Acquire load in `pop`, which read the monitor's Release
        // store that ended the offer (or saw no offer that could have reached this frame).
        self.promoted.load(Ordering::Relaxed)
    }

    /// Marks the frame promoted; false if someone else already did (then it is theirs to
    /// publish).
    fn claim(&self) -> bool {
        // AcqRel: one winner between the owner's beat and the monitor.
        self.promoted
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    }
}

/// One worker's heartbeat state. Lives in the `WorkerThread`; touched only by its thread, except
/// what it shares in its [`SeatBeat`]: the flag, which other workers set, and the list of frames,
/// which the monitor reads.
pub(crate) struct Heartbeat {
    seat: *const SeatBeat,
    /// How many frames are registered (the length of the list from the seat's `top`).
    depth: Cell<u32>,
    /// Forks or loop items left before the next clock read.
    countdown: Cell<u32>,
    /// The countdown's start value, adapted so reads come about every `CHECK_INTERVAL`.
    period: Cell<u32>,
    last_check: Cell<Instant>,
    last_promotion: Cell<Option<Instant>>,
    /// Clock checks so far (wrapping): frames record it, so a beat can tell their age.
    epoch: Cell<u32>,
    /// The last check came more than [`MIN_AGE`] check intervals after the one before it (the
    /// flag was clear, or the forks are coarse): frames linked before it are old enough.
    long_gap: Cell<bool>,
    /// Forks always registered: [`ALWAYS_REGISTERED`], or 0 in a pool of one worker, where no
    /// other worker could ever take a promoted fork (registering them cost the 1,023-node tree
    /// of the lab's `workloads` a third of its time on one worker).
    always: u32,
}

impl Heartbeat {
    /// The state of a worker on `seat`, in a pool of `workers` workers.
    ///
    /// # Safety
    /// `seat` must stay valid for the life of the `Heartbeat` (it points into the registry,
    /// which the worker keeps alive).
    pub(crate) unsafe fn new(seat: &SeatBeat, workers: usize) -> Heartbeat {
        Heartbeat {
            seat,
            depth: Cell::new(0),
            countdown: Cell::new(0),
            period: Cell::new(64),
            last_check: Cell::new(Instant::now()),
            last_promotion: Cell::new(None),
            epoch: Cell::new(0),
            long_gap: Cell::new(false),
            always: if workers > 1 { ALWAYS_REGISTERED } else { 0 },
        }
    }

    /// The state this worker shares.
    #[inline(always)]
    fn seat(&self) -> &SeatBeat {
        // SAFETY: valid for the life of `self` (the contract of `new`).
        unsafe { &*self.seat }
    }

    /// The newest registered frame (only this worker writes it).
    #[inline(always)]
    fn top(&self) -> *const Frame {
        // Relaxed: the owner reads its own writes.
        self.seat().top.load(Ordering::Relaxed)
    }

    /// This worker's flag: set while some worker is idle (the fork fast path's one load).
    #[inline(always)]
    pub(crate) fn wanted_flag(&self) -> &AtomicU8 {
        &self.seat().wanted
    }

    /// True while some worker wants work from this one.
    #[inline(always)]
    pub(crate) fn wanted(&self) -> bool {
        // Relaxed: a hint; a stale value delays a promotion or costs one registered fork, and the
        // handshake that must not lose a request is in `withdraw` / `request_from_others`.
        self.wanted_flag().load(Ordering::Relaxed) != CLEAR
    }

    /// True when a fork must register its frame: some worker wants work, or the worker's frame
    /// list is still shallower than [`ALWAYS_REGISTERED`] (in a pool of more than one worker).
    #[inline(always)]
    pub(crate) fn must_register(&self) -> bool {
        self.wanted() || self.depth.get() < self.always
    }

    /// Links `frame` as the newest registered frame.
    #[inline]
    pub(crate) fn push(&self, frame: &Frame) {
        self.depth.set(self.depth.get() + 1);
        // SAFETY: the frame is not linked yet: nobody else reads it.
        frame.prev.with_mut(|p| unsafe { *p = self.top() });
        frame.epoch.set(self.epoch.get());
        // Release: the frame's fields are written before the monitor can reach it through its
        // Acquire load of `top` (`offer_oldest`).
        self.seat()
            .top
            .store(frame as *const Frame as *mut Frame, Ordering::Release);
    }

    /// Unlinks `frame`, which must be the newest. If the monitor is offering a fork of this
    /// list right now, waits until it is done (microseconds): the frame, on this thread's
    /// stack, must outlive the monitor's look at it (see "Offers" in the module doc).
    #[inline]
    pub(crate) fn pop(&self, frame: &Frame) {
        debug_assert!(
            std::ptr::eq(self.top(), frame),
            "Heartbeat::pop: frames out of LIFO order"
        );
        let seat = self.seat();
        // Relaxed: the owner's store of the handshake (the monitor's heavy barrier orders it).
        seat.top
            .store(frame.prev() as *mut Frame, Ordering::Relaxed);
        self.depth.set(self.depth.get() - 1);
        // The owner's side of the offer handshake: the unlink above, then the read of the offer
        // state below, with only a compiler fence between (`crate::asym`). Acquire: pairs with
        // the Release store that ends an offer, so a promotion the monitor made is visible.
        crate::asym::light();
        if seat.offer.load(Ordering::Acquire) != IDLE {
            self.wait_for_offer();
        }
    }

    /// The monitor is offering a fork of this list: wait until it is done.
    #[cold]
    #[inline(never)]
    fn wait_for_offer(&self) {
        // Acquire: as in `pop`.
        while self.seat().offer.load(Ordering::Acquire) != IDLE {
            crate::loom::thread::yield_now();
        }
    }

    /// Counts one fork or loop item (with the flag set); true when a beat is due — at a check,
    /// at least `spacing` after this worker's last promotion — in which case the caller promotes
    /// something and calls [`Heartbeat::promoted`]. Forks use [`HEARTBEAT`]; loops use
    /// [`LOOP_SPACING`].
    #[inline]
    pub(crate) fn poll(&self, spacing: Duration, idle_exists: impl Fn() -> bool) -> bool {
        let c = self.countdown.get();
        // Relaxed, as in `wanted`: a NEW request read late is checked at the next poll.
        if c > 0 && self.wanted_flag().load(Ordering::Relaxed) != NEW {
            self.countdown.set(c - 1);
            return false;
        }
        self.check(spacing, idle_exists)
    }

    #[cold]
    #[inline(never)]
    fn check(&self, spacing: Duration, idle_exists: impl Fn() -> bool) -> bool {
        let flag = self.wanted_flag();
        // The request is seen. Relaxed: only the mark of urgency is lost if this overwrites a
        // NEW that arrives right now (the flag stays set), and `withdraw` below orders itself.
        if flag.load(Ordering::Relaxed) == NEW {
            flag.store(WANTED, Ordering::Relaxed);
        }
        let now = Instant::now();
        let elapsed = now.duration_since(self.last_check.get()).as_nanos().max(1);
        let period = self.period.get();
        // Aim the next read at CHECK_INTERVAL from the rate of the last period; at most a
        // factor of 4 per step, so a period that included a pause does not swing it wildly.
        let scaled = (period as u128 * CHECK_INTERVAL.as_nanos() / elapsed) as u32;
        let next = scaled.clamp(
            (period / 4).max(1),
            period.saturating_mul(4).min(MAX_PERIOD),
        );
        self.period.set(next);
        self.countdown.set(next);
        self.last_check.set(now);
        self.epoch.set(self.epoch.get().wrapping_add(1));
        self.long_gap
            .set(elapsed >= MIN_AGE as u128 * CHECK_INTERVAL.as_nanos());
        // A beat is due by time alone: the flag says a worker asked, and promoting for one that
        // has just found other work costs a push and a pop, at most once per beat. Deciding by
        // the idle count instead would miss a worker caught between cancelling a sleep and
        // searching again — and a coarse fork, which polls only on entry, would then run alone.
        let due = match self.last_promotion.get() {
            Some(t) => now.duration_since(t) >= spacing,
            None => true,
        };
        if !idle_exists() {
            self.withdraw(idle_exists);
        }
        due
    }

    /// No worker is idle: clear our flag, then re-check (step 5 of the module doc).
    #[cold]
    fn withdraw(&self, idle_exists: impl Fn() -> bool) {
        let flag = self.wanted_flag();
        // Relaxed stores, ordered by the fence pair with `Requests::request_from_others`: either
        // the idle count read below sees the new idle worker, or that worker's flag read (after
        // its fence) sees this clear and sets the flag again.
        flag.store(CLEAR, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        if idle_exists() {
            flag.store(WANTED, Ordering::Relaxed);
        } else {
            // The next registered fork checks at once, so a new request is served promptly.
            self.countdown.set(0);
        }
    }

    /// The worker starts a task: its first registered poll checks the clock. A countdown left
    /// from earlier fine-grained work would otherwise let a coarse fork, which polls only on
    /// entry, run without ever offering its second half (seen as a hang in a test whose first
    /// half waits for the second: 462 polls left from a previous `fib`).
    #[inline]
    pub(crate) fn new_task(&self) {
        self.countdown.set(0);
    }

    /// The caller promoted work at this beat.
    #[inline]
    pub(crate) fn promoted(&self) {
        self.last_promotion.set(Some(self.last_check.get()));
    }

    /// Marks the oldest unpromoted registered frame promoted and returns its job, if there is one
    /// worth promoting: the frame that is polling right now (the newest) when it is also the
    /// oldest unpromoted one — a coarse join polls only on entry, so this is its one chance —
    /// or an older frame that has lived through at least one whole check interval ([`MIN_AGE`]).
    /// Otherwise `None`, and a later check tries again.
    pub(crate) fn take_oldest(&self) -> Option<JobRef> {
        let top = self.top();
        // SAFETY: every frame on the list is a live stack frame of this thread, linked by
        // `push` and unlinked by `pop` before its owner returns (also when unwinding: the owner
        // catches the unwinding, pops, and only then re-raises).
        let frame = unsafe { oldest_unpromoted(top).as_ref()? };
        let age = self.epoch.get().wrapping_sub(frame.epoch.get());
        let old_enough = age >= MIN_AGE || (age == 1 && self.long_gap.get());
        if !std::ptr::eq(frame, top) && !old_enough {
            return None;
        }
        // The monitor may have offered it meanwhile: then it is published already.
        frame.claim().then_some(frame.job)
    }
}

/// The oldest frame not yet promoted on the list from `top` (null if none): promoted frames form
/// the list's oldest part (promotion always takes the oldest unpromoted frame), so it is the last
/// one before the first promoted frame, walking from the newest.
///
/// # Safety
/// Every frame reachable from `top` must be live for the call.
unsafe fn oldest_unpromoted(top: *const Frame) -> *const Frame {
    let mut oldest: *const Frame = std::ptr::null();
    let mut f = top;
    // SAFETY: live (the caller's contract).
    unsafe {
        // Relaxed: a frame found promoted is skipped; one found unpromoted is claimed with a
        // compare-and-swap, which settles any race.
        while !f.is_null() && !(*f).promoted.load(Ordering::Relaxed) {
            oldest = f;
            f = (*f).prev();
        }
    }
    oldest
}

/// The monitor offers the oldest unpromoted fork of a seat whose occupant is blocked in the
/// kernel inside a `join`'s first half (see "Offers" in the module doc): returns its job, now
/// marked promoted, for the caller to publish; `None` if the list is empty, the owner's beat
/// took the fork first, or the system lacks the heavy barrier.
pub(crate) fn offer_oldest(seat: &SeatBeat) -> Option<JobRef> {
    // Relaxed: a hint that there is something to offer.
    if seat.top.load(Ordering::Relaxed).is_null() {
        return None;
    }
    // SeqCst: the monitor's store of the handshake (only the monitor writes OFFERING).
    if seat
        .offer
        .compare_exchange(IDLE, OFFERING, Ordering::SeqCst, Ordering::Relaxed)
        .is_err()
    {
        return None;
    }
    let job = if crate::asym::heavy() {
        // Acquire: pairs with `push`'s Release, so the frames' fields are visible. After the
        // heavy barrier, every frame this load can reach stays linked, hence live, until the
        // offer ends: its owner's `pop` sees OFFERING and waits.
        let top = seat.top.load(Ordering::Acquire);
        // SAFETY: the frames reachable from `top` are live until the offer ends (above).
        let frame = unsafe { oldest_unpromoted(top).as_ref() };
        frame.and_then(|f| f.claim().then_some(f.job))
    } else {
        None
    };
    // Release: the claim above happens before the owner's Acquire read of the offer's end.
    seat.offer.store(IDLE, Ordering::Release);
    job
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Runs nothing: the frames below are never published.
    unsafe fn never_run(_: *const ()) {}

    /// Forks linked while no worker asked (no clock checks, so no epochs pass) may be
    /// milliseconds old when a request finally comes: the first check after such a stretch
    /// promotes the oldest of them at once instead of waiting out two more checks (which a sort
    /// whose forks are a partition apart took milliseconds to reach).
    #[test]
    fn the_first_check_after_a_long_stretch_promotes_the_oldest_frame() {
        let requests = Requests::new(1);
        let flag = requests.flag(0);
        // SAFETY: `requests` outlives `hb`.
        let hb = unsafe { Heartbeat::new(requests.seat(0), 2) };
        // SAFETY: the reference is never run (`never_run` does nothing anyway).
        let job = unsafe { JobRef::from_raw(std::ptr::null(), never_run) };
        let (outer, inner) = (Frame::new(job), Frame::new(job));
        hb.push(&outer);
        hb.push(&inner);
        std::thread::sleep(CHECK_INTERVAL * (MIN_AGE + 1));
        flag.store(NEW, Ordering::Relaxed);
        assert!(
            hb.poll(HEARTBEAT, || true),
            "a first request to a worker that never promoted is due at once"
        );
        assert!(
            hb.take_oldest().is_some() && outer.promoted() && !inner.promoted(),
            "the outermost frame, linked before the late check, was not promoted"
        );
        hb.pop(&inner);
        hb.pop(&outer);
    }

    /// Without a long stretch the age rule holds: a frame linked after the last check is not
    /// promoted unless it is the newest (the polling fork itself).
    #[test]
    fn a_young_frame_below_the_newest_waits() {
        let requests = Requests::new(1);
        requests.flag(0).store(NEW, Ordering::Relaxed);
        // SAFETY: `requests` outlives `hb`.
        let hb = unsafe { Heartbeat::new(requests.seat(0), 2) };
        // SAFETY: as above.
        let job = unsafe { JobRef::from_raw(std::ptr::null(), never_run) };
        assert!(hb.poll(HEARTBEAT, || true));
        hb.long_gap.set(false);
        let (outer, inner) = (Frame::new(job), Frame::new(job));
        hb.push(&outer);
        hb.push(&inner);
        assert!(
            hb.take_oldest().is_none(),
            "a frame of age 0 below the newest was promoted"
        );
        hb.pop(&inner);
        hb.pop(&outer);
    }
}

/// Loom model of the request/withdraw handshake (module doc, step 5): run by `.ci/run` as
/// `RUSTFLAGS="--cfg loom" cargo test -p threadlab --lib loom_`.
#[cfg(all(test, loom))]
mod loom_tests {
    use super::{Heartbeat, Requests};
    use crate::loom::sync::atomic::{AtomicU64, Ordering};
    use crate::loom::sync::Arc;

    /// Worker 0 is busy and about to withdraw its flag because it saw no idle worker; worker 1
    /// goes idle at the same time (its idle count, then its requests). Whatever the
    /// interleaving, worker 0's flag ends up set: the request is not lost.
    #[test]
    fn loom_a_request_is_never_lost_to_a_withdraw() {
        crate::loom::model(|| {
            let idle = Arc::new(AtomicU64::new(0));
            let requests = Arc::new(Requests::new(2));
            requests.flag(0).store(super::WANTED, Ordering::SeqCst);
            let (idle0, req0) = (Arc::clone(&idle), Arc::clone(&requests));
            let busy = loom::thread::spawn(move || {
                // SAFETY: `req0` outlives `hb` (both live in this closure, hb dropped first).
                let hb = unsafe { Heartbeat::new(req0.seat(0), 2) };
                hb.withdraw(|| idle0.load(Ordering::SeqCst) > 0);
            });
            // Worker 1 goes idle: the SeqCst RMW that counts it, then its requests.
            idle.fetch_add(1, Ordering::SeqCst);
            requests.request_from_others(1, 2);
            busy.join().unwrap();
            assert!(
                requests.flag(0).load(Ordering::SeqCst) != super::CLEAR,
                "worker 1 is idle but worker 0's flag is clear: a lost request"
            );
        });
    }

    /// Runs nothing: the model counts who would run the job instead.
    unsafe fn never_run(_: *const ()) {}

    /// The monitor offers the oldest fork of a worker that registered one and is about to
    /// unlink it (its first half returned). Whatever the interleaving, exactly one of them has
    /// the job (the owner runs it inline if it finds the frame unpromoted, the monitor
    /// publishes it if its offer claimed it), and the monitor never reads the frame after the
    /// owner let go of it (the owner's last write to it stands for the frame's memory being
    /// reused once `join` returned; loom reports a read racing with it).
    #[test]
    fn loom_an_offer_and_a_pop_never_both_have_the_job() {
        crate::loom::model(|| {
            let requests = Arc::new(Requests::new(1));
            let had = Arc::new(AtomicU64::new(0));
            let (req0, had0) = (Arc::clone(&requests), Arc::clone(&had));
            let owner = loom::thread::spawn(move || {
                // SAFETY: `req0` outlives `hb`.
                let hb = unsafe { Heartbeat::new(req0.seat(0), 2) };
                // SAFETY: never run (`never_run` does nothing anyway).
                let job = unsafe { crate::job::JobRef::from_raw(std::ptr::null(), never_run) };
                let frame = super::Frame::new(job);
                hb.push(&frame);
                hb.pop(&frame);
                if !frame.promoted() {
                    had0.fetch_add(1, Ordering::SeqCst);
                }
                // SAFETY: the frame is this thread's; a racing read is what loom looks for.
                frame.prev.with_mut(|p| unsafe { *p = std::ptr::null() });
            });
            // Let the owner start first in some executions (loom otherwise explores only the
            // order in which the monitor looks before the owner linked anything).
            loom::thread::yield_now();
            if super::offer_oldest(requests.seat(0)).is_some() {
                had.fetch_add(1, Ordering::SeqCst);
            }
            owner.join().unwrap();
            assert_eq!(
                had.load(Ordering::SeqCst),
                1,
                "the owner and the monitor both had the job, or neither"
            );
        });
    }
}
