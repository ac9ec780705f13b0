//! Self-requeueing jobs (*The overhead of spawning threads*'s workload): each of N queues holds one job that, when
//! it runs, queues itself again until it has run M times. Shared by `jobs` and `overhead`; the
//! peers' queues (Rayon, Tokio) are in `crate::lab::peers`.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// A job as every variant receives it: boxed, like the article's one job object per queue.
pub type Job = Box<dyn FnOnce() + Send + 'static>;

/// Something jobs can be queued on: a pool, a serial queue, a dedicated thread, a fresh thread…
pub trait Spawn: Clone + Send + 'static {
    /// Queues `job`; an error if it cannot (e.g. the OS refused a thread).
    fn spawn(&self, job: Job) -> Result<(), String>;
}

/// Counts finished chains; the first error wins.
struct Latch {
    state: Mutex<(usize, Option<String>)>,
    cv: Condvar,
}

impl Latch {
    fn finish(&self, err: Option<String>) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.0 -= 1;
        if st.1.is_none() {
            st.1 = err;
        }
        if st.0 == 0 {
            self.cv.notify_all();
        }
    }
}

fn chain<S: Spawn>(queue: S, left: u64, latch: Arc<Latch>) {
    let next = queue.clone();
    let on_error = Arc::clone(&latch);
    let job: Job = Box::new(move || {
        if left > 1 {
            chain(next, left - 1, latch);
        } else {
            latch.finish(None);
        }
    });
    if let Err(e) = queue.spawn(job) {
        on_error.finish(Some(e));
    }
}

/// Runs one chain of `per_queue` jobs on each of `queues` and returns the wall time until the
/// last one finished. Gives up after `timeout`.
pub fn run<S: Spawn>(queues: &[S], per_queue: u64, timeout: Duration) -> Result<f64, String> {
    let latch = Arc::new(Latch {
        state: Mutex::new((queues.len(), None)),
        cv: Condvar::new(),
    });
    let start = Instant::now();
    for q in queues {
        chain(q.clone(), per_queue, Arc::clone(&latch));
    }
    let st = latch.state.lock().unwrap_or_else(|e| e.into_inner());
    let (st, res) = latch
        .cv
        .wait_timeout_while(st, timeout, |s| s.0 > 0)
        .unwrap_or_else(|e| e.into_inner());
    let secs = start.elapsed().as_secs_f64();
    if res.timed_out() {
        return Err(format!(
            "jobs did not finish within {} s",
            timeout.as_secs()
        ));
    }
    match &st.1 {
        Some(e) => Err(e.clone()),
        None => Ok(secs),
    }
}

/// The control case (SingleThreadedQueue): one VecDeque on the calling thread, no threads.
pub fn run_one_thread(queues: usize, per_queue: u64) -> f64 {
    use std::collections::VecDeque;
    type Body = Box<dyn FnOnce(&mut VecDeque<LocalJob>)>;
    struct LocalJob(Body);
    fn local(left: u64, done: std::rc::Rc<std::cell::Cell<usize>>) -> LocalJob {
        LocalJob(Box::new(move |q| {
            if left > 1 {
                q.push_back(local(left - 1, done));
            } else {
                done.set(done.get() + 1);
            }
        }))
    }
    let start = Instant::now();
    let done = std::rc::Rc::new(std::cell::Cell::new(0));
    let mut q = VecDeque::new();
    for _ in 0..queues {
        q.push_back(local(per_queue, done.clone()));
    }
    while let Some(job) = q.pop_front() {
        (job.0)(&mut q);
    }
    assert_eq!(done.get(), queues, "run_one_thread: every chain finishes");
    start.elapsed().as_secs_f64()
}

/// A dedicated thread per queue (the RunLoop analog).
impl Spawn for crate::baselines::dedicated_thread::Handle {
    fn spawn(&self, job: Job) -> Result<(), String> {
        self.send(job);
        Ok(())
    }
}

/// A fresh OS thread per job (DetachThreadQueue); `verify` waits until it started.
#[derive(Clone, Copy)]
pub struct ThreadPerJob {
    /// Wait for the new thread to signal it runs (DetachThreadWithVerificationQueue).
    pub verify: bool,
}
impl Spawn for ThreadPerJob {
    fn spawn(&self, job: Job) -> Result<(), String> {
        use crate::baselines::thread_per_task::{spawn, spawn_verified};
        if self.verify {
            spawn_verified(job)
        } else {
            spawn(job)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_complete_on_every_queue_kind() {
        let t = Duration::from_secs(30);
        assert!(run_one_thread(4, 100) >= 0.0);
        let d = crate::baselines::dedicated_thread::DedicatedThread::new("q").unwrap();
        run(&[d.handle(), d.handle()], 100, t).unwrap();
        run(&[ThreadPerJob { verify: true }; 2], 20, t).unwrap();
        run(&[ThreadPerJob { verify: false }; 2], 20, t).unwrap();
    }
}
