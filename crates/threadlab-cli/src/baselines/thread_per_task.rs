//! A thread per task: *Multithreading Isn't Free*'s "ThreadPerRow" and *The overhead of spawning threads*'s DetachThreadQueue
//! (and its variant that verifies the thread really started, with a 10-second timeout). Each
//! thread's work runs in a zone (`thread-per-task row`, `thread-per-task job`) so a recording
//! shows every short-lived thread; a zone costs one relaxed load when no recording is on.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Runs `body` on every row of `data` (rows of `row_len` bytes), one fresh OS thread per row.
pub fn for_each_row(data: &mut [u8], row_len: usize, body: &(dyn Fn(&mut [u8]) + Sync)) {
    std::thread::scope(|s| {
        for row in data.chunks_mut(row_len.max(1)) {
            s.spawn(move || {
                let _z = threadlab::zone!("thread-per-task row");
                body(row)
            });
        }
    });
}

/// Starts `task` on a new detached thread; an error if the OS refuses to create it.
pub fn spawn(task: impl FnOnce() + Send + 'static) -> Result<(), String> {
    std::thread::Builder::new()
        .spawn(move || {
            let _z = threadlab::zone!("thread-per-task job");
            task()
        })
        .map(drop)
        .map_err(|e| format!("thread creation failed: {e}"))
}

/// Like [`spawn`], then waits (up to 10 s, as the article does) until the new thread signals that it
/// is running before returning.
pub fn spawn_verified(task: impl FnOnce() + Send + 'static) -> Result<(), String> {
    let started = Arc::new((Mutex::new(false), Condvar::new()));
    let signal = Arc::clone(&started);
    spawn(move || {
        {
            let (flag, cv) = &*signal;
            *flag.lock().unwrap_or_else(|e| e.into_inner()) = true;
            cv.notify_one();
        }
        task();
    })?;
    let (flag, cv) = &*started;
    let guard = flag.lock().unwrap_or_else(|e| e.into_inner());
    let (guard, timeout) = cv
        .wait_timeout_while(guard, Duration::from_secs(10), |s| !*s)
        .unwrap_or_else(|e| e.into_inner());
    if timeout.timed_out() && !*guard {
        return Err("a thread did not start within 10 s".into());
    }
    Ok(())
}
