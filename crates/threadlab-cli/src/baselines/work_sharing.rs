//! *Multithreading Isn't Free*'s WorkSharingPool: a fixed set of worker threads that all take tasks from one
//! queue protected by one mutex, with one condition variable to wake them (`add` notifies all,
//! as the article does) and to tell `wait_until_finished` that the queue drained.
//!
//! Instrumented the way the article instruments it for Tracy: the queue lock is a
//! `threadlab::sync::Mutex` named [`QUEUE_LOCK`] (the article's `TracyLockable`), so a recording
//! shows its hold and wait times and who handed it to whom; `add`, getting a task, executing it
//! and waiting for the pool are zones (the article's `ZoneScoped`); sleeping on the condition
//! variable is recorded as a park. All of it costs one relaxed load per event when no
//! recording is on.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::thread::JoinHandle;
use threadlab::sync::{Condvar, Mutex, MutexGuard};
use threadlab::trace::hooks;

/// The name the queue lock records under.
pub const QUEUE_LOCK: &str = "work-sharing queue";

type Task = Box<dyn FnOnce() + Send + 'static>;

#[derive(Default)]
struct State {
    queue: VecDeque<Task>,
    /// Tasks taken from the queue and not finished yet.
    running: usize,
    quitting: bool,
    panics: usize,
}

struct Shared {
    state: Mutex<State>,
    cv: Condvar,
}

impl Shared {
    /// The one place the queue lock is taken (see the module docs).
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock()
    }

    /// Sleeps on the condition variable (releasing the lock meanwhile), recorded as a park.
    fn wait<'a>(&self, guard: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        hooks::park_begin();
        let guard = self.cv.wait(guard);
        hooks::park_end();
        guard
    }
}

/// A pool of `n` threads sharing one locked queue.
pub struct WorkSharingPool {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
}

impl WorkSharingPool {
    /// Starts `threads` workers (at least one).
    pub fn new(threads: usize) -> std::io::Result<WorkSharingPool> {
        let shared = Arc::new(Shared {
            state: Mutex::named(QUEUE_LOCK, State::default()),
            cv: Condvar::new(),
        });
        let mut workers = Vec::new();
        for i in 0..threads.max(1) {
            let shared = Arc::clone(&shared);
            workers.push(
                std::thread::Builder::new()
                    .name(format!("work-sharing #{i}"))
                    .spawn(move || work_on_tasks(&shared))?,
            );
        }
        Ok(WorkSharingPool { shared, workers })
    }

    /// Number of worker threads.
    pub fn size(&self) -> usize {
        self.workers.len()
    }

    /// Queues a task and wakes every worker.
    pub fn add(&self, task: impl FnOnce() + Send + 'static) {
        let _z = threadlab::zone!("work-sharing add");
        self.shared.lock().queue.push_back(Box::new(task));
        self.shared.cv.notify_all();
    }

    /// Blocks until the queue is empty and no task is running; returns how many tasks panicked
    /// since the last call.
    pub fn wait_until_finished(&self) -> usize {
        let _z = threadlab::zone!("work-sharing wait until finished");
        let mut st = self.shared.lock();
        while !(st.queue.is_empty() && st.running == 0) {
            st = self.shared.wait(st);
        }
        std::mem::take(&mut st.panics)
    }

    /// The article's `parallel_for` over this pool: `data` split into `size()` bands of whole rows,
    /// one task per band, then `wait_until_finished`. Returns an error if a task panicked.
    pub fn for_each_band(
        &self,
        data: &mut [u8],
        row_len: usize,
        body: &(dyn Fn(&mut [u8]) + Sync),
    ) -> Result<(), String> {
        self.for_each_band_in(data, row_len, self.size(), body)
    }

    /// Like [`WorkSharingPool::for_each_band`], with `bands` tasks (at most one per row).
    pub fn for_each_band_in(
        &self,
        data: &mut [u8],
        row_len: usize,
        bands: usize,
        body: &(dyn Fn(&mut [u8]) + Sync),
    ) -> Result<(), String> {
        let rows = data.len() / row_len.max(1);
        let rows_per_band = rows.div_ceil(bands.max(1)).max(1);
        let tasks: Vec<Box<dyn FnOnce() + Send + '_>> = data
            .chunks_mut(rows_per_band * row_len)
            .map(|band| Box::new(move || body(band)) as Box<dyn FnOnce() + Send + '_>)
            .collect();
        self.run_scoped(tasks)
    }

    /// Runs tasks that borrow from the caller's stack and waits for all of them.
    fn run_scoped<'a>(&self, tasks: Vec<Box<dyn FnOnce() + Send + 'a>>) -> Result<(), String> {
        /// Waits for the pool on drop, so the borrowed tasks are finished before `run_scoped`
        /// returns or unwinds.
        struct WaitOnDrop<'p>(&'p WorkSharingPool, usize);
        impl Drop for WaitOnDrop<'_> {
            fn drop(&mut self) {
                self.1 = self.0.wait_until_finished();
            }
        }
        let mut guard = WaitOnDrop(self, 0);
        for task in tasks {
            // SAFETY: the task only borrows data that lives for 'a, i.e. at least until this
            // function returns; `guard` waits (in its Drop, which also runs on unwinding) until
            // the queue is empty and no task is running, and workers catch panics so every task
            // is accounted for. So no task runs after the borrow ends.
            let task: Task =
                unsafe { std::mem::transmute::<Box<dyn FnOnce() + Send + 'a>, Task>(task) };
            self.add(task);
        }
        guard.1 = self.wait_until_finished();
        let panics = guard.1;
        drop(guard);
        if panics > 0 {
            return Err(format!(
                "{panics} task(s) panicked in the work-sharing pool"
            ));
        }
        Ok(())
    }
}

/// The worker loop: wait for a task or shutdown, run it, repeat (the article's `workOnTasks`).
fn work_on_tasks(shared: &Shared) {
    loop {
        let task = {
            let _z = threadlab::zone!("work-sharing get task");
            let mut st = shared.lock();
            loop {
                if let Some(t) = st.queue.pop_front() {
                    st.running += 1;
                    break t;
                }
                if st.quitting {
                    return;
                }
                st = shared.wait(st);
            }
        };
        let ok = {
            let _z = threadlab::zone!("work-sharing execute task");
            catch_unwind(AssertUnwindSafe(task)).is_ok()
        };
        let mut st = shared.lock();
        st.running -= 1;
        if !ok {
            st.panics += 1;
        }
        if st.queue.is_empty() && st.running == 0 {
            shared.cv.notify_all();
        }
    }
}

impl Drop for WorkSharingPool {
    fn drop(&mut self) {
        self.shared.lock().quitting = true;
        self.shared.cv.notify_all();
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_cover_every_byte_and_panics_are_reported() {
        let pool = WorkSharingPool::new(3).unwrap();
        let mut v = vec![1u8; 13 * 5];
        pool.for_each_band(&mut v, 5, &|b| b.iter_mut().for_each(|x| *x *= 3))
            .unwrap();
        assert!(v.iter().all(|&x| x == 3));
        let r = pool.for_each_band(&mut v, 5, &|b| {
            if b[0] == 3 {
                panic!("boom")
            }
        });
        assert!(r.is_err());
        // The pool still works after a panic.
        pool.for_each_band(&mut v, 5, &|b| b.iter_mut().for_each(|x| *x = 0))
            .unwrap();
        assert!(v.iter().all(|&x| x == 0));
    }
}
