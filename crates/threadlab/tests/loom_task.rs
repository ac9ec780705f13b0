//! Loom models of the task state word (`src/task/state.rs`): a wake during a poll is never
//! lost, one worker at a time touches the future, the JoinHandle's waker cell and the output
//! are never accessed by two threads at once, and the task is freed exactly once. Run by CI
//! with `RUSTFLAGS="--cfg loom"`.
//!
//! The models drive the state word as `src/task/cell.rs`, `waker.rs` and `join_handle.rs` do,
//! with loom cells standing in for the future, the output and the join waker.
#![cfg(loom)]

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use loom::sync::Arc;
use loom::thread;
use threadlab::task_state::{Idle, State, Wake};

mod loom_support;
use loom_support::model;

/// One task: its state word and stand-ins for what the cell holds.
struct Task {
    state: State,
    /// The future: polled by whoever holds RUNNING.
    future: UnsafeCell<u32>,
    /// The output: written before COMPLETE, read by the handle after it.
    output: UnsafeCell<Option<u32>>,
    /// The JoinHandle's waker (an id).
    join_waker: UnsafeCell<Option<u32>>,
    /// The event the future waits for.
    ready: AtomicBool,
    /// The handle's waker was woken.
    handle_woken: AtomicBool,
    /// The poll's local reference count (`Header::local` in `src/task/cell.rs`).
    local: UnsafeCell<isize>,
    freed: AtomicUsize,
}

impl Task {
    fn new() -> Arc<Task> {
        Arc::new(Task {
            state: State::new(),
            future: UnsafeCell::new(0),
            output: UnsafeCell::new(None),
            join_waker: UnsafeCell::new(None),
            ready: AtomicBool::new(false),
            handle_woken: AtomicBool::new(false),
            local: UnsafeCell::new(0),
            freed: AtomicUsize::new(0),
        })
    }

    /// A task whose event has happened, its queued job running on a thread of its own: the
    /// task and that thread.
    fn ready_and_running() -> (Arc<Task>, thread::JoinHandle<()>) {
        let task = Task::new();
        task.ready.store(true, Ordering::Release);
        let runner = {
            let task = Arc::clone(&task);
            thread::spawn(move || task.run())
        };
        (task, runner)
    }

    fn free(&self) {
        self.freed.fetch_add(1, Ordering::SeqCst);
    }

    /// A queued job runs: polls until the future is pending and not woken, or complete.
    fn run(&self) {
        self.run_with(|_| {});
    }

    /// The poll's local count, read and reset for the fold.
    fn take_local(&self) -> isize {
        self.local
            .with_mut(|l| unsafe { std::mem::replace(&mut *l, 0) })
    }

    /// As `run`, calling `during(poll number)` inside each poll (while RUNNING is held), where
    /// a future would clone or drop its waker.
    fn run_with(&self, mut during: impl FnMut(u32)) {
        loop {
            self.state.transition_to_running();
            // SAFETY (model): RUNNING gives this thread the future.
            let n = self.future.with_mut(|f| unsafe {
                *f += 1;
                *f
            });
            during(n);
            if self.ready.load(Ordering::Acquire) {
                self.output.with_mut(|o| unsafe { *o = Some(42) });
                let prev = self.state.transition_to_complete(self.take_local());
                if prev.has_join_interest() {
                    if prev.has_join_waker() {
                        let id = self.join_waker.with(|w| unsafe { *w });
                        assert!(id.is_some(), "JOIN_WAKER set without a waker");
                        self.handle_woken.store(true, Ordering::SeqCst);
                    }
                } else {
                    // No handle: the worker drops the output.
                    self.output.with_mut(|o| unsafe { *o = None });
                }
                if self.state.ref_dec() {
                    self.free();
                }
                return;
            }
            match self.state.transition_to_idle(self.take_local()) {
                Idle::Rescheduled => continue,
                Idle::Idle { last } => {
                    if last {
                        self.free();
                    }
                    return;
                }
            }
        }
    }

    /// The JoinHandle's poll: Some(output) if complete, None if its waker is registered.
    fn poll_handle(&self, waker_id: u32) -> Option<u32> {
        let s = self.state.load();
        if !s.is_complete() {
            let mut register = true;
            if s.has_join_waker() {
                let same = self.join_waker.with(|w| unsafe { *w }) == Some(waker_id);
                if same {
                    return None;
                }
                register = self.state.unset_join_waker().is_ok();
            }
            if register {
                self.join_waker.with_mut(|w| unsafe { *w = Some(waker_id) });
                if self.state.set_join_waker().is_ok() {
                    return None;
                }
            }
        }
        let out = self.output.with_mut(|o| unsafe { (*o).take() });
        assert_eq!(out, Some(42), "complete without an output");
        out
    }

    /// Drops the handle as the last reference: the task is freed, and exactly once.
    fn drop_handle_last(&self) {
        self.drop_handle();
        assert_eq!(self.freed.load(Ordering::SeqCst), 1);
    }

    fn drop_handle(&self) {
        if self.state.drop_join_handle() {
            self.free();
        }
    }
}

#[test]
fn a_wake_during_the_poll_is_not_lost() {
    model(|| {
        let task = Task::new();
        task.state.ref_inc(); // the waker the future registered
        let waker = {
            let task = Arc::clone(&task);
            thread::spawn(move || {
                task.ready.store(true, Ordering::Release);
                match task.state.wake_by_val() {
                    Wake::Submit => task.run(), // the queued job runs (here, in the model)
                    Wake::Done { last } => {
                        if last {
                            task.free();
                        }
                    }
                }
            })
        };
        task.run(); // the job queued at spawn
        waker.join().unwrap();
        assert!(task.state.load().is_complete(), "the wake was lost");
        assert_eq!(task.poll_handle(1), Some(42));
        task.drop_handle_last();
    });
}

#[test]
fn two_wakers_queue_the_task_once() {
    model(|| {
        let task = Task::new();
        task.run(); // polled once: pending, idle; refs: handle
        task.state.ref_inc();
        task.state.ref_inc(); // two wakers
        task.ready.store(true, Ordering::Release);
        let wakers: Vec<_> = (0..2)
            .map(|_| {
                let task = Arc::clone(&task);
                thread::spawn(move || {
                    if task.state.wake_by_ref() == Wake::Submit {
                        task.run();
                    }
                    if task.state.ref_dec() {
                        task.free();
                    }
                })
            })
            .collect();
        for w in wakers {
            w.join().unwrap();
        }
        assert_eq!(task.poll_handle(1), Some(42));
        assert_eq!(
            task.future.with(|f| unsafe { *f }),
            2,
            "polled once more, not twice"
        );
        task.drop_handle_last();
    });
}

#[test]
fn the_join_waker_is_never_written_while_read() {
    model(|| {
        let (task, runner) = Task::ready_and_running();
        // The handle polls twice with different wakers (the second replaces the first).
        let mut out = task.poll_handle(1);
        if out.is_none() {
            out = task.poll_handle(2);
        }
        runner.join().unwrap();
        if out.is_none() {
            assert!(
                task.handle_woken.load(Ordering::SeqCst),
                "the handle was not woken"
            );
            out = task.poll_handle(2);
        }
        assert_eq!(out, Some(42));
        task.drop_handle_last();
    });
}

#[test]
fn dropping_the_handle_while_the_task_completes() {
    model(|| {
        let (task, runner) = Task::ready_and_running();
        task.drop_handle();
        runner.join().unwrap();
        assert!(task.state.load().is_complete());
        assert_eq!(task.freed.load(Ordering::SeqCst), 1);
    });
}

/// A waker cloned during the task's own poll counts in the poll's local count, not the word;
/// dropped on another thread meanwhile, it takes the word's count to zero while the poll still
/// runs. The task is freed once, by whoever ends up with the last reference.
#[test]
fn a_clone_counted_locally_and_dropped_elsewhere_frees_once() {
    model(|| {
        let task = Task::new();
        task.drop_handle(); // detached: the queued job holds the only reference
        let mut other = None;
        task.run_with(|poll| {
            if poll == 1 {
                // The future clones its waker (locally) and hands the clone to another thread.
                task.local.with_mut(|l| unsafe { *l += 1 });
                let clone = Arc::clone(&task);
                other = Some(thread::spawn(move || {
                    if clone.state.ref_dec() {
                        clone.free();
                    }
                }));
            }
        });
        other.unwrap().join().unwrap();
        assert_eq!(task.freed.load(Ordering::SeqCst), 1, "freed once");
    });
}

/// A waker cloned locally in the first poll wakes the task from another thread (by value)
/// while the poll may still run, and a second local clone is dropped on the polling thread: the
/// wake is not lost, the task completes, and it is freed once.
#[test]
fn a_wake_by_a_locally_counted_clone_is_not_lost() {
    model(|| {
        let task = Task::new();
        let mut other = None;
        task.run_with(|poll| {
            if poll == 1 {
                task.local.with_mut(|l| unsafe { *l += 2 }); // two clones
                let waker = Arc::clone(&task);
                other = Some(thread::spawn(move || {
                    waker.ready.store(true, Ordering::Release);
                    match waker.state.wake_by_val() {
                        Wake::Submit => waker.run(),
                        Wake::Done { last } => {
                            if last {
                                waker.free();
                            }
                        }
                    }
                }));
                task.local.with_mut(|l| unsafe { *l -= 1 }); // one dropped here, in the poll
            }
        });
        other.unwrap().join().unwrap();
        assert!(task.state.load().is_complete(), "the wake was lost");
        assert_eq!(task.poll_handle(1), Some(42));
        task.drop_handle();
        assert_eq!(task.freed.load(Ordering::SeqCst), 1, "freed once");
    });
}
