//! `join`: fork-join with heartbeat promotion (`crate::heartbeat`) on top of work stealing.
//!
//! Three paths, chosen per call:
//! - **Fast** (no worker is idle, the worker's flag is clear, and the fork is not one of the
//!   outermost levels of the worker's fork tree): `a()` then `b()`, nothing else.
//! - **Registered** (some worker is idle, or an outermost level): `b` waits in a stack frame
//!   linked on the worker's frame list, unpublished; a beat may promote the oldest such frame
//!   onto the worker's deque.
//!   If `b`'s frame was not promoted when `a` returns, `b` runs here like a plain call.
//! - **Promoted** (`join_promoted`, and a registered frame a beat promoted): `b` sits in the
//!   deque, where a thief may take it (Blumofe and Leiserson's work-first strategy, as in Cilk and
//!   rayon-core). After `a`, the worker pops its deque: finding `b` there, it runs it; otherwise a
//!   thief has it and the worker runs other work until the thief sets the latch.
//!
//! Panics: both closures always run (as Rayon promises). A panic in `a` is re-raised after `b`
//! finished, wherever `b` ran; a panic in `b` after `a` finished; if both panic, `a`'s is the one
//! re-raised. The pool keeps working.

use std::panic::Location;

use crate::context::Tag;
use crate::heartbeat::{Frame, HEARTBEAT};
use crate::job::JobRef;
use crate::pool::registry::Registry;
use crate::pool::worker::WorkerThread;
use crate::pool::worker_latch::SpinLatch;
use crate::stack_job::StackJob;
use crate::trace::hooks::TaskSpan;
use crate::trace::TaskKind;
use crate::unwind;

/// Runs `a` and `b`, potentially in parallel, and returns both results. On the current worker's
/// pool, else on the global pool.
///
/// When no worker of the pool is idle, this costs about a function call: `b` is handed to
/// another worker only when one is idle, and then at most once per heartbeat period per worker
/// (see the crate docs on heartbeat promotion), always the outermost pending `b`, so no grain
/// size is needed. Both closures always run; a panic in either is re-raised here after both
/// finished (`a`'s if both panic).
///
/// While it waits for a `b` that another worker took, this worker runs other queued tasks. So
/// do not hold a lock across `join` that those tasks may ask for: the worker would wait for
/// itself. A [`threadlab::sync::Mutex`](crate::sync::Mutex) detects it and panics with its
/// name; a `std::sync::Mutex` deadlocks.
///
/// ```
/// fn fib(n: u64) -> u64 {
///     if n < 2 { return n; }
///     let (a, b) = threadlab::join(|| fib(n - 1), || fib(n - 2));
///     a + b
/// }
/// assert_eq!(fib(20), 6765);
/// ```
#[inline]
#[track_caller]
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    match WorkerThread::current() {
        Some(w) if !w.heartbeat().must_register() => match unwind::halt_unwinding(a) {
            Ok(ra) => (ra, b()),
            // Both closures always run: `b` too, then `a`'s panic goes on.
            Err(p) => run_then_resume(b, p),
        },
        Some(w) => join_registered(w, a, b),
        None => join_cold(a, b),
    }
}

/// `a` panicked on the fast path: runs `b` (discarding its own panic: the first closure's panic
/// is the one propagated), then re-raises `a`'s.
#[cold]
#[inline(never)]
fn run_then_resume<B: FnOnce() -> RB, RB>(b: B, payload: unwind::Payload) -> ! {
    // `b`'s output and its panic are dropped where a panic of their `Drop` is caught.
    if let Err(p) = unwind::halt_unwinding(|| drop(b())) {
        unwind::drop_caught_printed(p);
    }
    unwind::resume_unwinding(payload)
}

#[cold]
#[inline(never)]
#[track_caller]
fn join_cold<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    Registry::in_worker(crate::global::registry(), |_, _| join(a, b))
}

/// The registered path: `b` waits in a frame that a beat may promote.
#[inline(never)]
#[track_caller]
fn join_registered<A, B, RA, RB>(w: &WorkerThread, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    match Tag::capture(None, Location::caller()) {
        None => join_registered_job(w, a, |_as_task| b()),
        Some(tag) => join_registered_tagged(w, a, tag, b),
    }
}

/// A registered join whose `b` carries a tag (`crate::context`), out of line: the untagged
/// path stays as it was.
#[cold]
#[inline(never)]
fn join_registered_tagged<A, B, RA, RB>(w: &WorkerThread, a: A, tag: Tag, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    join_registered_job(w, a, |as_task| run_b(as_task, tag, b))
}

#[inline(always)]
fn join_registered_job<A, FB, RA, RB>(w: &WorkerThread, a: A, fb: FB) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    FB: FnOnce(bool) -> RB + Send,
    RA: Send,
    RB: Send,
{
    let job_b = StackJob::new(TaskKind::Join, fb, SpinLatch::new(w.registry(), w.index()));
    // SAFETY: `job_b` stays in place (it is only borrowed) until it runs inline or, once a beat
    // published it, until `reclaim_or_wait` took it back or saw its latch set.
    let job_b_ref = unsafe { job_b.job_ref_unpublished() };
    let frame = Frame::new(job_b_ref);
    let hb = w.heartbeat();
    hb.push(&frame);
    if hb.wanted() && hb.poll(HEARTBEAT, || w.registry().idle_exists()) {
        w.promote_oldest();
    }
    let result_a = unwind::halt_unwinding(a);
    hb.pop(&frame);
    if !frame.promoted() {
        // Never published: nobody else can have `b`; it runs here, as a plain call (its panic
        // goes on as any callee's would), without `finish`'s catching and latch reads.
        return match result_a {
            Ok(ra) => (ra, job_b.run_inline_in_place(false)),
            Err(p) => run_then_resume(|| job_b.run_inline_in_place(false), p),
        };
    }
    let reclaimed = reclaim_or_wait(w, &job_b, job_b_ref);
    finish(&job_b, reclaimed.then_some(job_b_ref), result_a)
}

/// A join whose `b` is published at once (a loop's split at a beat): the classic work-first join.
/// `a` runs here (so it need not be `Send`); `b` finds its own worker with
/// `WorkerThread::current`, as it may run on a thief.
#[track_caller]
pub(crate) fn join_promoted<A, B, RA, RB>(w: &WorkerThread, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA,
    B: FnOnce() -> RB + Send,
    RB: Send,
{
    match Tag::capture(None, Location::caller()) {
        None => join_promoted_job(w, a, |_as_task| b()),
        Some(tag) => join_promoted_tagged(w, a, tag, b),
    }
}

/// A promoted join whose `b` carries a tag (`crate::context`), out of line.
#[cold]
#[inline(never)]
fn join_promoted_tagged<A, B, RA, RB>(w: &WorkerThread, a: A, tag: Tag, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA,
    B: FnOnce() -> RB + Send,
    RB: Send,
{
    join_promoted_job(w, a, |as_task| run_b(as_task, tag, b))
}

#[inline(always)]
fn join_promoted_job<A, FB, RA, RB>(w: &WorkerThread, a: A, fb: FB) -> (RA, RB)
where
    A: FnOnce() -> RA,
    FB: FnOnce(bool) -> RB + Send,
    RB: Send,
{
    let job_b = StackJob::new(TaskKind::Join, fb, SpinLatch::new(w.registry(), w.index()));
    let job_b_ref = job_b.as_job_ref();
    w.publish(job_b_ref);
    let result_a = unwind::halt_unwinding(a);
    let reclaimed = reclaim_or_wait(w, &job_b, job_b_ref);
    finish(&job_b, reclaimed.then_some(job_b_ref), result_a)
}

/// `b` was published (`job_b_ref` is in this worker's deque, or a thief took it): pops the deque
/// until it finds `b` (true: nobody took it) or the deque runs dry, then runs other work until the
/// thief sets `b`'s latch (false). `job_b` stays in place throughout: the reference points to it.
fn reclaim_or_wait<FB, RB>(
    w: &WorkerThread,
    job_b: &StackJob<SpinLatch<'_>, FB, RB>,
    job_b_ref: JobRef,
) -> bool
where
    FB: FnOnce(bool) -> RB + Send,
    RB: Send,
{
    while !job_b.latch.probe() {
        match w.take_local() {
            Some(job) if job == job_b_ref => return true,
            Some(job) => w.execute(job),
            None => {
                w.wait_until(&job_b.latch.core);
                return false;
            }
        }
    }
    false
}

/// Runs `b` here if it is still ours — never published, or published and `reclaimed` (its id,
/// to close the recorder's spawn arrow) — else takes the thief's result. Then re-raises `a`'s
/// panic (after `b` ran, discarding a panic of `b`), or returns both results, re-raising `b`'s.
fn finish<FB, RA, RB>(
    job_b: &StackJob<SpinLatch<'_>, FB, RB>,
    reclaimed: Option<JobRef>,
    result_a: Result<RA, unwind::Payload>,
) -> (RA, RB)
where
    FB: FnOnce(bool) -> RB + Send,
    RB: Send,
{
    if job_b.latch.probe() {
        // A thief ran `b` and set the latch.
        let result_a = unwrap_or_resume(result_a);
        return (result_a, job_b.take_result());
    }
    // Closes the spawn arrow the publication recorded (a no-op when not recording).
    let span = reclaimed.map(|job| TaskSpan::enter(TaskKind::Join, Some(job.id())));
    let result_b = unwind::halt_unwinding(|| job_b.run_inline_in_place(span.is_some()));
    drop(span);
    let result_a = unwrap_or_resume(result_a);
    (result_a, unwrap_or_resume(result_b))
}

#[inline]
fn unwrap_or_resume<T>(r: Result<T, unwind::Payload>) -> T {
    match r {
        Ok(v) => v,
        Err(p) => unwind::resume_unwinding(p),
    }
}

/// Runs `b`; `as_task`: in a task span of its own (a thief's, or a published `b` its owner took
/// back), where its tag (`crate::context`) is entered: its location is recorded and the
/// spawning span carried over. Run as a plain call, `b` needs neither.
#[inline]
fn run_b<B: FnOnce() -> RB, RB>(as_task: bool, tag: Tag, b: B) -> RB {
    if as_task {
        let _entered = tag.enter();
        b()
    } else {
        b()
    }
}
