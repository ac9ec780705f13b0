//! A trickle: one empty task every `gap`, as a service with light load sees them. What it shows
//! is the runtime's cost of waking a worker, running one task and going back to sleep (CPU per
//! task, every thread's but the submitter's) and the wake-up latency from submit to start.

use super::chain::Spawn;
use crate::measure::{process_cpu_time, thread_cpu_time};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What a trickle measured.
pub struct Trickle {
    /// CPU seconds per task used by every thread but the submitting one: the runtime's own cost
    /// of waking, running and going back to sleep.
    pub runtime_cpu: f64,
    /// CPU seconds per task of the whole process, the submitter's sleeps and wake-ups included.
    pub process_cpu: f64,
    /// Nanoseconds from submit to start, one per task.
    pub latencies: Vec<f64>,
}

/// Trickle: one empty task every `gap`, `tasks` times.
pub fn trickle<S: Spawn>(q: &S, tasks: usize, gap: Duration) -> Result<Trickle, String> {
    let lat: Arc<Vec<AtomicU64>> = Arc::new((0..tasks).map(|_| AtomicU64::new(0)).collect());
    let done = Arc::new(AtomicUsize::new(0));
    let cpu0 = process_cpu_time();
    let mine0 = thread_cpu_time();
    let t0 = Instant::now();
    for k in 0..tasks {
        let due = t0 + gap * k as u32;
        let now = Instant::now();
        if due > now {
            std::thread::sleep(due - now);
        }
        let (lat, done) = (Arc::clone(&lat), Arc::clone(&done));
        let submitted = Instant::now();
        q.spawn(Box::new(move || {
            // Relaxed: the value is read after `done` is seen complete (Release/Acquire below).
            lat[k].store(submitted.elapsed().as_nanos() as u64, Ordering::Relaxed);
            // Release pairs with the Acquire load in the wait loop.
            done.fetch_add(1, Ordering::Release);
        }))?;
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    // Acquire pairs with the tasks' Release increments.
    while done.load(Ordering::Acquire) < tasks {
        if Instant::now() > deadline {
            return Err("trickle: tasks did not all run within 60 s".into());
        }
        std::thread::sleep(Duration::from_micros(100));
    }
    let process = (process_cpu_time() - cpu0).as_secs_f64();
    let mine = (thread_cpu_time() - mine0).as_secs_f64();
    Ok(Trickle {
        runtime_cpu: (process - mine).max(0.0) / tasks as f64,
        process_cpu: process / tasks as f64,
        latencies: lat
            .iter()
            .map(|a| a.load(Ordering::Relaxed) as f64)
            .collect(),
    })
}
