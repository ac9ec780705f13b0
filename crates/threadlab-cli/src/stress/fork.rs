//! `fork()` under stress: a driver thread forks this (busy, many-threaded) process, and the child
//! uses the global pool — `join`, `scope`, `spawn` and a future — then leaves with `_exit`. A
//! child has only the thread that forked: the runtime must rebuild the global pool there
//! instead of queueing work for workers that are not in that process (`threadlab::Pool`'s crate
//! doc, "fork()"). The child runs under an `alarm`, the parent waits for it with a deadline; a
//! hung or failed child is a discrepancy. The child avoids what the rest of the process may have
//! held locked at the fork (printing, panicking): it only computes and exits with a code.

use super::ledger::{Ledger, Rng};
use std::time::{Duration, Instant};

/// How long a child may take (it needs milliseconds).
const CHILD_ALARM_S: u32 = 30;

/// Exit codes of the child: which step went wrong.
const BAD_JOIN: i32 = 2;
const BAD_SCOPE: i32 = 3;
const BAD_SPAWN: i32 = 4;
const BAD_FUTURE: i32 = 5;

fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = threadlab::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

/// The child's work on the global pool; the exit code (0: all well).
fn child(n: u64) -> i32 {
    if fib(n) != fib_serial(n) {
        return BAD_JOIN;
    }
    let mut parts = [0u64; 4];
    threadlab::scope(|s| {
        for (i, p) in parts.iter_mut().enumerate() {
            s.spawn(move |_| *p = fib(n.saturating_sub(i as u64)));
        }
    });
    let want: u64 = (0..4).map(|i| fib_serial(n.saturating_sub(i))).sum();
    if parts.iter().sum::<u64>() != want {
        return BAD_SCOPE;
    }
    let (tx, rx) = std::sync::mpsc::channel();
    threadlab::spawn(move || {
        let _ = tx.send(fib(n));
    });
    if rx.recv() != Ok(fib_serial(n)) {
        return BAD_SPAWN;
    }
    if threadlab::spawn_future(async move { n * 2 }).join() != n * 2 {
        return BAD_FUTURE;
    }
    0
}

fn fib_serial(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        fib_serial(n - 1) + fib_serial(n - 2)
    }
}

/// One fork: the parent has used the global pool; the child uses it again.
pub fn fork_child(rng: &mut Rng, ledger: &Ledger) {
    let n = rng.range(8, 16);
    // The parent's global pool exists and has worked (so the child inherits one to rebuild).
    if fib(n) != fib_serial(n) {
        return ledger.discrepancy("fork: the parent's join went wrong".into());
    }
    // SAFETY: the child only computes with the runtime (which rebuilds its global pool there),
    // allocates (glibc's malloc is fork-safe) and leaves with `_exit`: no lock another thread of
    // this process may have held at the fork is taken, no destructor or `atexit` handler runs.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return ledger.discrepancy(format!("fork: {}", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        // SAFETY: alarm() and _exit() take plain integers and are async-signal-safe.
        unsafe {
            libc::alarm(CHILD_ALARM_S);
            libc::_exit(child(n));
        }
    }
    let deadline = Instant::now() + Duration::from_secs(CHILD_ALARM_S as u64 + 30);
    let mut status = 0;
    loop {
        // SAFETY: `pid` is our child; `status` is a valid out-pointer.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid {
            break;
        }
        if r < 0 || Instant::now() > deadline {
            // SAFETY: killing and reaping our own child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            return ledger.discrepancy(format!("fork: the child {pid} hung"));
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        ledger.tasks(4);
    } else if libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGALRM {
        ledger.discrepancy(format!(
            "fork: the child hung (its {CHILD_ALARM_S} s alarm killed it)"
        ));
    } else if libc::WIFSIGNALED(status) {
        ledger.discrepancy(format!(
            "fork: the child died of signal {}",
            libc::WTERMSIG(status)
        ));
    } else {
        ledger.discrepancy(format!(
            "fork: the child failed at step {} (2 join, 3 scope, 4 spawn, 5 future)",
            libc::WEXITSTATUS(status)
        ));
    }
}
