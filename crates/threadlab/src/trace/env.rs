//! Recording without editing code: `THREADLAB_TRACE=path[.pftrace|.tltrace|.json]` makes the
//! first pool the program starts (the global pool, or one built with `Pool::builder()`) start a
//! recording ([`super::Mode::Full`]) before its first worker starts, and the trace is saved to `path` when the process exits (an `atexit` handler), or earlier when the
//! program calls [`save_env`]. Tracy has the same concern for short-lived programs, the other way
//! round: its client streams to a server, and `TRACY_NO_EXIT=1` holds the program's exit until
//! the data is sent (Bartosz Taudul, "Tracy Profiler" manual, "Short-lived applications"). `%p` in the path is replaced by the process id. A path without one of the three
//! extensions gets `.pftrace`.
//!
//! The recording starts when the first pool does (the global pool's first use — `threadlab::join`,
//! `spawn`, `scope`, a parallel loop, … — or `Builder::build`): events before that are not in it.
//! It records every pool of the process from then on. It says once, on stderr, where the trace
//! will go; a program that ends without ever starting a pool gets a one-line note at exit instead
//! of silence (Linux: a constructor registers that check when the program starts).
//!
//! There is one recording at a time: while this one is on, `trace::start()` in the program
//! panics and `try_start` says a recording is on.
//!
//! The `atexit` handler runs when `main` returns or `std::process::exit` is called, not when
//! the process dies of a signal or `abort`: a program that may end that way calls [`save_env`]
//! itself. The pool's workers are still alive (parked) while it runs; the trace is complete up
//! to that moment.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, Once};

use super::recording::{try_start, Mode, Recording};
use threadlab_trace::TraceError;

/// The environment variable that turns recording on for the global pool.
pub const TRACE_ENV: &str = "THREADLAB_TRACE";

/// The recording started from the environment, and where it goes.
static PENDING: Mutex<Option<(Recording, PathBuf)>> = Mutex::new(None);

/// The variable is read once, when the first pool starts.
static FIRST_POOL: Once = Once::new();

/// Set when a pool has started (read by the exit note for programs that never start one).
static POOL_STARTED: AtomicBool = AtomicBool::new(false);

/// Starts the recording if `THREADLAB_TRACE` asks for one. Called by every pool's start-up; only
/// the first call in the process reads the variable.
pub(crate) fn start_from_env() {
    // Relaxed: the flag is read by the exit note on the thread that runs `exit`, after the pool's
    // start-up on this thread or another; it is a hint for a message, ordered by nothing else.
    POOL_STARTED.store(true, Ordering::Relaxed);
    FIRST_POOL.call_once(start_now);
}

fn start_now() {
    let Some(value) = std::env::var_os(TRACE_ENV).filter(|v| !v.is_empty()) else {
        return;
    };
    let path = env_path(&value.to_string_lossy());
    match try_start(Mode::Full) {
        Ok(rec) => {
            eprintln!(
                "threadlab: {TRACE_ENV}: recording this process's pools; the trace goes to {} at exit",
                path.display()
            );
            *crate::util::lock(&PENDING) = Some((rec, path));
            // SAFETY: `save_at_exit` is an `extern "C" fn()` that never unwinds (it catches
            // panics); registering it has no other precondition.
            if unsafe { libc::atexit(save_at_exit) } != 0 {
                eprintln!("threadlab: {TRACE_ENV}: cannot register the exit handler; call threadlab::trace::save_env() before exiting");
            }
        }
        Err(e) => eprintln!("threadlab: {TRACE_ENV} ignored: {e}"),
    }
}

/// The file `THREADLAB_TRACE`'s value names.
fn env_path(value: &str) -> PathBuf {
    let mut path = value.replace("%p", &std::process::id().to_string());
    let known = [".pftrace", ".tltrace", ".json"];
    if !known.iter().any(|e| path.to_ascii_lowercase().ends_with(e)) {
        path.push_str(".pftrace");
    }
    PathBuf::from(path)
}

/// Stops the recording that `THREADLAB_TRACE` started and saves it; returns the file's path, or
/// `None` if there was no such recording (the variable unset, or already saved). Saving at exit
/// is automatic; call this to save earlier, e.g. before a program ends in a way that skips
/// `atexit` handlers.
///
/// ```
/// // With THREADLAB_TRACE unset there is nothing to save.
/// # if std::env::var_os("THREADLAB_TRACE").is_none() {
/// assert!(threadlab::trace::save_env()?.is_none());
/// # }
/// # Ok::<(), threadlab::trace::TraceError>(())
/// ```
pub fn save_env() -> Result<Option<PathBuf>, TraceError> {
    let pending = crate::util::lock(&PENDING).take();
    let Some((rec, path)) = pending else {
        return Ok(None);
    };
    rec.stop().save(&path)?;
    Ok(Some(path))
}

/// Registered at program start when the variable is set (Linux): a program that never started a
/// pool is told so at exit, instead of finding no file and no message.
#[cfg(target_os = "linux")]
mod exit_note {
    use super::{Ordering, POOL_STARTED, TRACE_ENV};

    extern "C" fn note_if_no_pool() {
        if !POOL_STARTED.load(Ordering::Relaxed) {
            eprintln!(
                "threadlab: {TRACE_ENV} is set, but this program never started a threadlab pool: nothing was recorded"
            );
        }
    }

    extern "C" fn register() {
        if std::env::var_os(TRACE_ENV).is_some_and(|v| !v.is_empty()) {
            // SAFETY: `note_if_no_pool` is an `extern "C" fn()` that neither unwinds nor touches
            // anything torn down before `atexit` handlers run (a static flag and stderr).
            unsafe { libc::atexit(note_if_no_pool) };
        }
    }

    /// A constructor, run by the dynamic loader before `main` (the `.init_array` section that
    /// glibc and musl run at start-up). Reading the environment there is fine: no other thread
    /// exists yet.
    #[used]
    #[link_section = ".init_array"]
    static REGISTER: extern "C" fn() = register;
}

extern "C" fn save_at_exit() {
    let saved = std::panic::catch_unwind(save_env);
    match saved {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => eprintln!("threadlab: {TRACE_ENV}: {e}"),
        Err(_) => eprintln!("threadlab: {TRACE_ENV}: saving the trace at exit panicked"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn paths_get_an_extension_and_the_pid() {
        let pid = std::process::id();
        assert_eq!(
            super::env_path("a/run"),
            std::path::PathBuf::from("a/run.pftrace")
        );
        assert_eq!(
            super::env_path("run.tltrace"),
            std::path::PathBuf::from("run.tltrace")
        );
        assert_eq!(
            super::env_path("run-%p.pftrace"),
            std::path::PathBuf::from(format!("run-{pid}.pftrace"))
        );
    }
}
