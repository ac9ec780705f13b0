//! Pools and `fork()`.
//!
//! A child process made by `fork()` has one thread: the one that called `fork` (POSIX,
//! "fork": "The new process shall be created with a single thread"). Every pool of the parent is
//! copied into the child with its queues, its sleep state and its counters, but none of its
//! workers: a task pushed there waits forever for a thread that does not exist, and a lock a
//! worker held at the instant of the fork stays locked. That is how a child that used Rayon's
//! global pool hangs (rayon-rs/rayon issue 708, "rayon hangs after fork"), and how threadlab's
//! did, at 0% CPU.
//!
//! So the runtime counts forks: the first pool registers a `pthread_atfork` child handler that
//! increments a counter, and each pool remembers the count it was built under. A pool built
//! before the latest fork is *forked away*: its threads are not in this process.
//!
//! - The global pool (the free functions `join`, `scope`, `spawn`, the parallel iterators,
//!   `spawn_future`...) is rebuilt in the child on first use there, with the parent's number of
//!   threads and otherwise the default configuration (`crate::global`); the parent's stays
//!   untouched, leaked in the child.
//! - A pool the program built before the fork refuses work in the child at once: `install`,
//!   `scope`, `spawn`, `spawn_on`, `install_on`, a future's wake-up panic with a message that
//!   says its threads did not survive `fork()` and to build a new pool in the child. Dropping it
//!   there does nothing (no thread to stop or join, and its locks may be held by threads that do
//!   not exist): its memory is leaked.
//!
//! The check costs one relaxed load of the counter where work enters a pool from outside
//! (`Registry::inject`, `push_to`, an `install` from a plain thread) and in the global pool's
//! look-up; a worker pushing onto its own deque pays nothing.
//!
//! A recording in progress stays the parent's: the child records nothing (its new threads must
//! not register with the recorder, whose lock a parent thread may have held at the fork).
//!
//! What it does not cover: `fork()` called from inside a task (on a worker) leaves the child on a
//! copy of that worker's stack, in the parent's pool; such a child should only `exec` or `_exit`.
//! And a fork taken while another thread of the process is starting or exiting: Rust's standard
//! library guards each thread's start and exit with a process-wide lock of its own (the
//! stack-overflow handler's thread info, `std::sys::pal::unix::stack_overflow::thread_info`); a
//! child forked while some thread held it inherits it held, and every thread the child starts
//! then waits for it at its start, forever — the rebuilt global pool's workers included. A
//! stress scenario that forked a process creating thousands of threads a second found it (the
//! child's workers parked in `set_current_info`, under gdb). POSIX allows a child of a
//! multi-threaded process only async-signal-safe calls until `exec`, so no runtime can promise
//! threads there; threadlab's promise is for the common case, a fork while the process's threads
//! are not being created or torn down (a program that forks after using the pool, with its
//! workers idle or busy).
//! Elsewhere than on Unix, and under Miri, there is no `fork()` and nothing is registered.

use std::sync::atomic::{AtomicU64, Ordering};

/// Forks this process has gone through since the first pool was built (incremented in the
/// child). A plain std atomic: a process-wide count, outside the loom models.
static FORKS: AtomicU64 = AtomicU64::new(0);

/// The forks counted so far, for a pool being built (`Registry::start`), which also makes sure
/// the child handler is registered.
pub(crate) fn generation_at_build() -> u64 {
    register();
    generation()
}

/// The forks counted so far. Relaxed: the child handler's increment happens in the child's only
/// thread before `fork()` returns there, and every thread the child has later is started by
/// it, after (thread creation synchronizes).
#[inline]
pub(crate) fn generation() -> u64 {
    FORKS.load(Ordering::Relaxed)
}

#[cfg(all(unix, not(miri)))]
fn register() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        /// Runs in the child, in its only thread, before `fork()` returns: atomic stores only,
        /// which are async-signal-safe, as POSIX asks of these handlers.
        extern "C" fn in_child() {
            // Relaxed: see `generation`.
            FORKS.fetch_add(1, Ordering::Relaxed);
            crate::trace::off_in_forked_child();
        }
        // SAFETY: `pthread_atfork` only records the function pointers; `in_child` is a plain
        // `extern "C" fn` with no arguments, valid for the life of the process, and does nothing
        // but atomic stores (no lock, no allocation), so it is safe to run in a child.
        let rc = unsafe { libc::pthread_atfork(None, None, Some(in_child)) };
        if rc != 0 {
            // ENOMEM only: without the handler, a child's pools hang as they did before.
            eprintln!(
                "threadlab: pthread_atfork failed ({}); pools used in a fork()ed child may hang",
                std::io::Error::from_raw_os_error(rc)
            );
        }
    });
}

#[cfg(not(all(unix, not(miri))))]
fn register() {}

/// Panics with what a pool forked away means and what to do instead
/// (`Registry::refuse_if_forked_away`).
#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn forked_away() -> ! {
    panic!(
        "threadlab: this pool's worker threads did not survive fork(): this process is a child \
         made by fork() after the pool was built, and a child has only the thread that called \
         fork. Build a new pool in the child (Pool::builder().build()) and use that one; the \
         global pool (threadlab::join, scope, spawn, the parallel iterators) is rebuilt in the \
         child by itself."
    )
}
