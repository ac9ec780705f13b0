//! What the command inherits, as if `threadlab run` were not there: the signal dispositions,
//! the signal mask and the closed standard streams that `threadlab` itself was started with.
//!
//! Rust's runtime changes them before `main`: it ignores `SIGPIPE` and opens `/dev/null` on a
//! closed descriptor 0, 1 or 2; `std::process::Command` then resets `SIGPIPE` to its default and
//! empties the signal mask in the child; and `run` installs handlers of its own (a handled
//! signal is reset to its default by `execve`, so an inherited "ignore" would be lost). So the
//! start state is read by a function in `.init_array`, which the loader runs before Rust's
//! runtime starts, and [`restore_in_child`] puts it back in the child just before `execve`
//! (`trap '' PIPE; threadlab run -- yes | head -1` then exits 1 as unobserved instead of dying of
//! SIGPIPE; `threadlab run -- echo hi >&-` fails to write as unobserved).

use std::sync::atomic::{AtomicU64, Ordering};

/// The signals whose inherited "ignore" is kept: the ones `run` handles itself, and SIGPIPE,
/// which Rust's runtime and `Command` change.
pub const KEPT: [libc::c_int; 5] = [
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGPIPE,
    libc::SIGQUIT,
];

// The three sets are stored once, relaxed, by `record_start_state` before any other thread
// exists; thread creation (and the fork of the command) orders them before every read.
/// Bit `n`: signal `n` was ignored at start.
static IGNORED: AtomicU64 = AtomicU64::new(0);
/// Bit `n`: signal `n` was blocked at start (signals 1-63).
static BLOCKED: AtomicU64 = AtomicU64::new(0);
/// Bit `fd`: standard descriptor `fd` was closed at start.
static CLOSED: AtomicU64 = AtomicU64::new(0);

/// Reads the start state (see the module doc). Relaxed stores: this runs before any other
/// thread exists, and thread creation orders it before every later read.
extern "C" fn record_start_state() {
    let mut ignored = 0u64;
    for sig in KEPT {
        // SAFETY: a query only (null new action); `old` is a valid sigaction to fill.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction == libc::SIG_IGN
            {
                ignored |= 1 << sig;
            }
        }
    }
    IGNORED.store(ignored, Ordering::Relaxed);
    let mut blocked = 0u64;
    // SAFETY: a query only; `set` is a valid sigset to fill.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        if libc::pthread_sigmask(libc::SIG_SETMASK, std::ptr::null(), &mut set) == 0 {
            for sig in 1..64 {
                if libc::sigismember(&set, sig) == 1 {
                    blocked |= 1 << sig;
                }
            }
        }
    }
    BLOCKED.store(blocked, Ordering::Relaxed);
    let mut closed = 0u64;
    for fd in 0..3 {
        // SAFETY: F_GETFD on any number is harmless.
        if unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1 {
            closed |= 1 << fd;
        }
    }
    CLOSED.store(closed, Ordering::Relaxed);
}

/// Runs [`record_start_state`] before Rust's runtime (the ELF `.init_array`, which the loader
/// calls before `main`).
#[used]
#[link_section = ".init_array"]
static RECORD_START_STATE: extern "C" fn() = record_start_state;

/// Whether `sig` was ignored when threadlab started.
pub fn was_ignored(sig: libc::c_int) -> bool {
    // Relaxed: written once before `main` (see `record_start_state`).
    IGNORED.load(Ordering::Relaxed) & (1 << sig) != 0
}

/// In the forked child, just before `execve`: the start state back. Only async-signal-safe
/// calls (sigaction, sigprocmask, close), no allocation.
pub fn restore_in_child() -> std::io::Result<()> {
    // Relaxed: see `was_ignored`.
    let ignored = IGNORED.load(Ordering::Relaxed);
    let blocked = BLOCKED.load(Ordering::Relaxed);
    let closed = CLOSED.load(Ordering::Relaxed);
    for sig in KEPT {
        let action = if ignored & (1 << sig) != 0 {
            libc::SIG_IGN
        } else {
            libc::SIG_DFL
        };
        // SAFETY: `sa` is fully initialised; sigaction is async-signal-safe.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = action;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
    // SAFETY: `set` is initialised by sigemptyset before use; sigprocmask is async-signal-safe.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in 1..64 {
            if blocked & (1 << sig) != 0 {
                libc::sigaddset(&mut set, sig);
            }
        }
        libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
    }
    for fd in 0..3 {
        if closed & (1 << fd) != 0 {
            // SAFETY: closes a standard descriptor that the command's parent had closed; the
            // child owns its descriptor table.
            unsafe { libc::close(fd) };
        }
    }
    Ok(())
}

/// Dies of `sig` as the command did, so `run`'s parent sees the same end (GNU `timeout` does
/// the same): its default action, unblocked, core dumps off (the core would be threadlab's,
/// not the command's). Returns only if the signal did not end the process (a signal whose
/// default is to continue or stop).
pub fn die_of(sig: libc::c_int) {
    // SAFETY: plain system calls on this process; the new action and limit are initialised.
    unsafe {
        let none = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        let mut cur: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_CORE, &mut cur) == 0 {
            let off = libc::rlimit {
                rlim_cur: none.rlim_cur,
                rlim_max: cur.rlim_max,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &off);
        }
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = libc::SIG_DFL;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(sig, &sa, std::ptr::null_mut());
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(sig);
    }
}
