//! The task's state word: scheduling flags, join-handle flags and the reference count packed in
//! one atomic, so every transition is one atomic read-modify-write (the layout follows Tokio's
//! `runtime/task/state.rs`; the code and the names are ours).
//!
//! ```text
//!  bit 0  SCHEDULED      a job for the task is queued, or must be queued again after this poll
//!  bit 1  RUNNING        a worker is polling the future
//!  bit 2  COMPLETE       the future finished; its output (or panic) is in the cell
//!  bit 3  JOIN_INTEREST  a JoinHandle exists
//!  bit 4  JOIN_WAKER     the JoinHandle's waker is in the cell (who may touch it: see below)
//!  bits 6.. references   JoinHandle, each Waker, and the queued job each hold one (signed)
//! ```
//!
//! # References taken during the task's own poll
//!
//! A future that waits registers a clone of its waker somewhere (a channel's wait list, a
//! timer), and the clone is usually dropped during a later poll of the same task. Counting those
//! with atomic read-modify-writes costs two of them per wait, on the path of every hand-off. So
//! the worker polling a task counts the clones and drops made *on its own thread during that
//! poll* in a plain integer (`local`, in the cell; see `super::waker`) and folds the sum into the
//! state word with the transition that ends the poll ([`State::transition_to_idle`],
//! [`State::transition_to_complete`]), a read-modify-write it does anyway. Clones and drops on
//! other threads, or outside the task's poll, stay atomic. This is biased reference counting
//! (Choi, Shull and Torrellas, "Biased Reference Counting", PACT 2018) with the bias given to
//! whichever worker holds RUNNING.
//!
//! While RUNNING is set, the word's count therefore lags the true count by the poll's pending
//! `local`, and a waker cloned in the poll and dropped on another thread can even take it below
//! zero (the count field is read as signed: a borrow out of the top bits leaves the flag bits
//! alone). The true count never reaches zero while RUNNING is set, since the polling job's own
//! reference is in it; so the rule for freeing is: the count is zero *and* RUNNING is clear. A
//! drop that leaves zero with RUNNING set frees nothing; the fold then finds the exact count.
//!
//! The transitions, and what each one hands to its caller:
//!
//! - *wake*: idle → SCHEDULED with one more reference (the caller queues a job that owns it);
//!   RUNNING → RUNNING | SCHEDULED (the poller queues it again when the poll returns);
//!   SCHEDULED or COMPLETE → unchanged. So a task is in at most one queue at a time, and a wake
//!   during a poll is never lost.
//! - *run*: SCHEDULED → RUNNING. Only the job that owns the SCHEDULED bit runs, so one worker at
//!   a time touches the future.
//! - *idle* (the poll returned `Pending`): RUNNING → idle, dropping the job's reference, or, if
//!   woken meanwhile, RUNNING | SCHEDULED → SCHEDULED, keeping it for the job queued again.
//! - *complete*: RUNNING → COMPLETE (the output was stored before, with Release).
//! - The join waker cell belongs to the JoinHandle while JOIN_WAKER is clear and the task is not
//!   complete; once JOIN_WAKER is set the handle only reads it, and the completing worker reads
//!   it to wake the handle if JOIN_WAKER was set when it completed. The handle clears or sets
//!   JOIN_WAKER only with a compare-and-swap that fails once COMPLETE is set. So the cell is
//!   never written while somebody else may read it.
//!
//! Loom checks these transitions in `tests/loom_task.rs`.

use crate::loom::sync::atomic::{AtomicUsize, Ordering};

const SCHEDULED: usize = 1 << 0;
const RUNNING: usize = 1 << 1;
const COMPLETE: usize = 1 << 2;
const JOIN_INTEREST: usize = 1 << 3;
const JOIN_WAKER: usize = 1 << 4;
const REF_SHIFT: usize = 6;
const REF_ONE: usize = 1 << REF_SHIFT;

/// A copy of the state word, with accessors.
#[derive(Copy, Clone, PartialEq, Eq)]
pub struct Snapshot(usize);

impl Snapshot {
    /// A job for the task is queued (or will be queued again after the running poll).
    pub fn is_scheduled(self) -> bool {
        self.0 & SCHEDULED != 0
    }
    /// A worker is polling the future.
    pub fn is_running(self) -> bool {
        self.0 & RUNNING != 0
    }
    /// The future finished.
    pub fn is_complete(self) -> bool {
        self.0 & COMPLETE != 0
    }
    /// A JoinHandle exists.
    pub fn has_join_interest(self) -> bool {
        self.0 & JOIN_INTEREST != 0
    }
    /// The JoinHandle's waker is registered.
    pub fn has_join_waker(self) -> bool {
        self.0 & JOIN_WAKER != 0
    }
    /// The number of references in the word (signed: while RUNNING it lags the true count by
    /// the poll's pending local count, see the module doc).
    pub fn refs(self) -> isize {
        (self.0 as isize) >> REF_SHIFT
    }

    /// True if nobody refers to the task any more: no reference and no poll running (whose
    /// pending local count is not in the word yet).
    pub fn is_unreferenced(self) -> bool {
        self.refs() == 0 && !self.is_running()
    }
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot")
            .field("scheduled", &self.is_scheduled())
            .field("running", &self.is_running())
            .field("complete", &self.is_complete())
            .field("join_interest", &self.has_join_interest())
            .field("join_waker", &self.has_join_waker())
            .field("refs", &self.refs())
            .finish()
    }
}

/// What a wake asks its caller to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub enum Wake {
    /// Queue a job for the task; the job owns the reference the wake added (or, for
    /// [`State::wake_by_val`], the waker's own reference, handed over).
    Submit,
    /// Nothing to queue (already queued, running — it will be queued again — or complete).
    /// For [`State::wake_by_val`], `last` says the waker's reference was the last one: free the
    /// task.
    Done {
        /// The caller dropped the last reference.
        last: bool,
    },
}

/// How a poll that returned `Pending` left the task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub enum Idle {
    /// Woken during the poll: queue the job again (it keeps its reference).
    Rescheduled,
    /// Idle until woken; `last` says the job's reference was the last one: free the task.
    Idle {
        /// Nobody refers to the task any more.
        last: bool,
    },
}

/// The packed state word of one task.
#[derive(Debug)]
pub struct State(AtomicUsize);

impl State {
    /// A new task with a JoinHandle and a queued job: SCHEDULED, JOIN_INTEREST, two references.
    #[allow(clippy::new_without_default)]
    pub fn new() -> State {
        State(AtomicUsize::new(SCHEDULED | JOIN_INTEREST | (2 * REF_ONE)))
    }

    /// The current state. Acquire: pairs with the Release of `transition_to_complete`, so a
    /// reader that sees COMPLETE sees the output.
    pub fn load(&self) -> Snapshot {
        Snapshot(self.0.load(Ordering::Acquire))
    }

    /// Applies `f` until the compare-and-swap succeeds, or until `f` declines (`None`). Returns
    /// the state before and, if applied, after. AcqRel on success: each transition publishes
    /// what its thread wrote before it (the stage, the join waker) and sees what the previous
    /// transition published; Acquire on failure, to re-read.
    #[inline]
    fn update(&self, mut f: impl FnMut(usize) -> Option<usize>) -> (Snapshot, Option<Snapshot>) {
        let mut cur = self.0.load(Ordering::Acquire);
        loop {
            let Some(next) = f(cur) else {
                return (Snapshot(cur), None);
            };
            match self
                .0
                .compare_exchange_weak(cur, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return (Snapshot(cur), Some(Snapshot(next))),
                Err(actual) => cur = actual,
            }
        }
    }

    /// A waker that stays alive woke the task (`Waker::wake_by_ref`).
    pub fn wake_by_ref(&self) -> Wake {
        let (_, next) = self.update(|cur| {
            if cur & (COMPLETE | SCHEDULED) != 0 {
                None
            } else if cur & RUNNING != 0 {
                Some(cur | SCHEDULED)
            } else {
                Some(ref_inc(cur) | SCHEDULED)
            }
        });
        match next {
            Some(n) if !n.is_running() => Wake::Submit,
            _ => Wake::Done { last: false },
        }
    }

    /// A waker woke the task and is consumed (`Waker::wake`): its reference goes to the queued
    /// job, or is dropped.
    pub fn wake_by_val(&self) -> Wake {
        let mut submit = false;
        let (_, next) = self.update(|cur| {
            submit = cur & (COMPLETE | SCHEDULED | RUNNING) == 0;
            if submit {
                Some(cur | SCHEDULED)
            } else if cur & (COMPLETE | RUNNING) == RUNNING {
                // A wake during the poll: noted; the waker's reference is dropped.
                Some(ref_dec(cur) | SCHEDULED)
            } else {
                Some(ref_dec(cur))
            }
        });
        let next = next.expect("State::wake_by_val: the update always applies");
        if submit {
            Wake::Submit
        } else {
            Wake::Done {
                last: next.is_unreferenced(),
            }
        }
    }

    /// A job starts polling the task: SCHEDULED → RUNNING.
    pub fn transition_to_running(&self) {
        // AcqRel: sees the previous poll's writes to the future (published by its transition to
        // idle) and the waker's schedule. Flipping both bits is one atomic step.
        let prev = Snapshot(self.0.fetch_xor(SCHEDULED | RUNNING, Ordering::AcqRel));
        assert!(
            prev.is_scheduled() && !prev.is_running() && !prev.is_complete(),
            "State::transition_to_running: the task was not scheduled: {prev:?}"
        );
    }

    /// The poll returned `Pending`; `local` is the net count of references the poll took and
    /// dropped on its own thread (see the module doc), folded in here.
    pub fn transition_to_idle(&self, local: isize) -> Idle {
        let local = fold(local);
        let (prev, next) = self.update(|cur| {
            debug_assert!(cur & RUNNING != 0, "transition_to_idle: not running");
            let cur = cur.wrapping_add(local);
            if cur & SCHEDULED != 0 {
                Some(cur & !RUNNING)
            } else {
                Some(ref_dec(cur & !RUNNING))
            }
        });
        let next = next.expect("State::transition_to_idle: the update always applies");
        debug_assert!(
            next.refs() >= 0,
            "transition_to_idle: negative count {next:?}"
        );
        if prev.is_scheduled() {
            Idle::Rescheduled
        } else {
            Idle::Idle {
                last: next.is_unreferenced(),
            }
        }
    }

    /// The future finished (its output is stored): RUNNING → COMPLETE, folding in the poll's
    /// `local` count as [`State::transition_to_idle`] does. Returns the state just before,
    /// which says whether a JoinHandle wants the output and has a waker registered. The job's
    /// reference is not dropped here (see [`State::ref_dec`]).
    pub fn transition_to_complete(&self, local: isize) -> Snapshot {
        let local = fold(local);
        let (prev, _) =
            self.update(|cur| Some((cur.wrapping_add(local) & !(RUNNING | SCHEDULED)) | COMPLETE));
        debug_assert!(prev.is_running(), "transition_to_complete: not running");
        prev
    }

    /// One more reference (a waker clone). Relaxed: the caller already holds a reference, so
    /// the task cannot be freed meanwhile (as in `Arc::clone`).
    pub fn ref_inc(&self) {
        let prev = self.0.fetch_add(REF_ONE, Ordering::Relaxed);
        if (prev as isize).checked_add(REF_ONE as isize).is_none() {
            std::process::abort(); // about 2^57 wakers: a leak, never a real count
        }
    }

    /// One reference fewer; true if it was the last (the caller frees the task). AcqRel: this
    /// thread's use of the task happens before the free, whichever thread frees it.
    pub fn ref_dec(&self) -> bool {
        let prev = Snapshot(self.0.fetch_sub(REF_ONE, Ordering::AcqRel));
        debug_assert!(
            prev.refs() > 0 || prev.is_running(),
            "State::ref_dec: no reference left: {prev:?}"
        );
        prev.refs() == 1 && !prev.is_running()
    }

    /// The JoinHandle registered its waker (written into the cell before this call). Fails,
    /// returning the state, if the task completed first: then the handle reads the output.
    pub fn set_join_waker(&self) -> Result<(), Snapshot> {
        let (prev, next) = self.update(|cur| {
            debug_assert!(cur & JOIN_INTEREST != 0 && cur & JOIN_WAKER == 0);
            (cur & COMPLETE == 0).then_some(cur | JOIN_WAKER)
        });
        match next {
            Some(_) => Ok(()),
            None => Err(prev),
        }
    }

    /// The JoinHandle takes its waker cell back to replace the waker. Fails if the task
    /// completed first (the completing worker may be reading the waker).
    pub fn unset_join_waker(&self) -> Result<(), Snapshot> {
        let (prev, next) = self.update(|cur| {
            debug_assert!(cur & JOIN_INTEREST != 0 && cur & JOIN_WAKER != 0);
            (cur & COMPLETE == 0).then_some(cur & !JOIN_WAKER)
        });
        match next {
            Some(_) => Ok(()),
            None => Err(prev),
        }
    }

    /// The JoinHandle is dropped: no more interest in the output, and its reference goes.
    /// Returns true if that was the last reference.
    pub fn drop_join_handle(&self) -> bool {
        let (_, next) = self.update(|cur| Some(ref_dec(cur & !JOIN_INTEREST)));
        next.expect("State::drop_join_handle: the update always applies")
            .is_unreferenced()
    }
}

#[inline]
fn ref_inc(cur: usize) -> usize {
    cur + REF_ONE
}

#[inline]
fn ref_dec(cur: usize) -> usize {
    debug_assert!(
        Snapshot(cur).refs() > 0 || Snapshot(cur).is_running(),
        "State: reference count underflow"
    );
    cur.wrapping_sub(REF_ONE)
}

/// A poll's local count as an addend of the word (two's complement: a negative count
/// subtracts; the flag bits are untouched since the addend's low bits are zero).
#[inline]
fn fold(local: isize) -> usize {
    (local as usize).wrapping_shl(REF_SHIFT as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_life() {
        let s = State::new();
        s.transition_to_running();
        // A waker clone, then a wake while running: queued again after the poll.
        s.ref_inc();
        assert_eq!(s.wake_by_ref(), Wake::Done { last: false });
        assert_eq!(s.transition_to_idle(0), Idle::Rescheduled);
        s.transition_to_running();
        assert_eq!(s.transition_to_idle(0), Idle::Idle { last: false });
        // Idle: the waker's wake queues it (and hands its reference to the job).
        assert_eq!(s.wake_by_val(), Wake::Submit);
        assert_eq!(s.load().refs(), 2);
        assert_eq!(
            s.wake_by_ref(),
            Wake::Done { last: false },
            "already queued"
        );
        s.transition_to_running();
        let prev = s.transition_to_complete(0);
        assert!(prev.has_join_interest() && !prev.has_join_waker());
        assert!(!s.ref_dec(), "the handle still holds one");
        assert!(s.set_join_waker().is_err(), "complete: read the output");
        assert!(s.drop_join_handle(), "the handle's reference was the last");
    }

    #[test]
    fn local_counts_fold_in_and_the_word_may_go_below_zero_meanwhile() {
        let s = State::new();
        assert!(!s.drop_join_handle(), "the job still holds one");
        s.transition_to_running();
        // The poll clones its waker twice on its own thread (local +2); both clones are dropped
        // on other threads (atomic -2): the word reads -1 references, yet nothing is freed.
        assert!(!s.ref_dec());
        assert!(!s.ref_dec());
        assert_eq!(s.load().refs(), -1);
        assert!(s.load().is_running() && !s.load().is_unreferenced());
        // The fold: -1 + 2 = 1 (the job's), which the idle transition drops: the last.
        assert_eq!(s.transition_to_idle(2), Idle::Idle { last: true });
        assert_eq!(s.load().refs(), 0);
    }

    #[test]
    fn a_negative_local_count_folds_in() {
        let s = State::new();
        s.ref_inc(); // a waker from an earlier poll
        s.transition_to_running();
        // The poll drops that waker on its own thread: local -1.
        assert_eq!(s.transition_to_idle(-1), Idle::Idle { last: false });
        assert_eq!(s.load().refs(), 1, "the handle's");
        assert!(s.drop_join_handle());
    }
}
