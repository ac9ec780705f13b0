//! `join`: fork-join with work stealing (Blumofe and Leiserson's work-first strategy, as in Cilk
//! and rayon-core).
//!
//! The second half goes onto the worker's deque where a thief can take it; the first half runs
//! here. Then the worker pops its deque: if the second half is still there nobody stole it and it
//! runs inline (no latch, no atomics beyond the deque's own); otherwise a thief has it and the
//! worker runs other work until the thief sets the latch. A panic in either half is caught, and
//! the first half's panic is re-raised only after the second half finished (it may borrow from
//! the same frame).

use crate::job::StackJob;
use crate::latch::SpinLatch;
use crate::pool::registry::Registry;
use crate::pool::worker::WorkerThread;
use crate::trace::hooks::TaskSpan;
use crate::trace::TaskKind;
use crate::unwind;

/// Runs `a` and `b`, potentially in parallel, and returns both results. On the current worker's
/// pool, else on the global pool. A panic in either closure is re-raised here after both have
/// finished.
///
/// ```
/// fn fib(n: u64) -> u64 {
///     if n < 2 { return n; }
///     let (a, b) = threadlab::join(|| fib(n - 1), || fib(n - 2));
///     a + b
/// }
/// assert_eq!(fib(20), 6765);
/// ```
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    join_context(|_| a(), |_| b())
}

/// `join` whose closures learn whether they were stolen (`true` = running on another worker
/// than the caller); the adaptive splitter of [`crate::for_each`] uses it.
pub(crate) fn join_context<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce(bool) -> RA + Send,
    B: FnOnce(bool) -> RB + Send,
    RA: Send,
    RB: Send,
{
    match WorkerThread::current() {
        Some(w) => join_on_worker(w, a, b, false),
        None => Registry::in_worker(crate::global::registry(), |w, injected| {
            join_on_worker(w, a, b, injected)
        }),
    }
}

#[inline]
fn join_on_worker<A, B, RA, RB>(w: &WorkerThread, a: A, b: B, injected: bool) -> (RA, RB)
where
    A: FnOnce(bool) -> RA + Send,
    B: FnOnce(bool) -> RB + Send,
    RA: Send,
    RB: Send,
{
    let job_b = StackJob::new(TaskKind::Join, b, SpinLatch::new(w.registry(), w.index()));
    let job_b_ref = job_b.as_job_ref();
    w.push(job_b_ref);

    let result_a = unwind::halt_unwinding(|| a(injected));

    // Pop until we find b (not stolen) or the deque is empty (stolen).
    while !job_b.latch.probe() {
        match w.take_local() {
            Some(job) if job == job_b_ref => {
                // Closes the spawn arrow `as_job_ref` recorded (a no-op when not recording).
                let _span = TaskSpan::enter(TaskKind::Join, Some(job_b_ref.id()));
                let result_b = job_b.run_inline(injected);
                return (unwrap_or_resume(result_a), result_b);
            }
            Some(job) => w.execute(job),
            None => {
                w.wait_until(&job_b.latch.core);
                break;
            }
        }
    }
    let result_a = unwrap_or_resume(result_a);
    (result_a, job_b.into_result())
}

#[inline]
fn unwrap_or_resume<T>(r: Result<T, unwind::Payload>) -> T {
    match r {
        Ok(v) => v,
        Err(p) => unwind::resume_unwinding(p),
    }
}
