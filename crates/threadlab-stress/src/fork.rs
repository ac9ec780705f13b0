//! The fork scenario: pools used in a child process made by `fork()` after the parent used them.
//! The global pool must be rebuilt in the child on first use, and a pool the parent built must
//! refuse work there at once, saying why (`threadlab/src/pool/fork.rs`).
//!
//! It runs in a process of its own (`PROGRAM stress-fork --seed S`, hidden, where PROGRAM is
//! `threadlab` or `threadlab-stress`, whichever runs the mix: `fork_child`), started by the
//! scenario and watched with a deadline: a fork while another thread of the process starts or
//! exits leaves std's thread-start lock held in the child, where every new thread then waits for
//! it forever, outside any runtime's reach (POSIX allows a child of a multithreaded process only
//! async-signal-safe calls); the stress mix starts and ends threads all the time. The scenario's
//! process forks only once its threads are all running: its pool's workers, parked, and that
//! pool's monitor.

use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use super::ledger::{Ledger, Rng};

/// A child process (the scenario's, or one it forked) longer than this is hung.
const DEADLINE: Duration = Duration::from_secs(60);

/// The scenario: runs `stress-fork` of this program with a seed from `rng` and books what it
/// checked.
pub fn fork_in_a_child_process(rng: &mut Rng, ledger: &Ledger) {
    let seed = rng.next_u64();
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return ledger.discrepancy(format!("fork: cannot find this program: {e}")),
    };
    let program = exe
        .file_name()
        .map_or_else(|| "threadlab".into(), |n| n.to_string_lossy().into_owned());
    let mut child = match Command::new(&exe)
        .args(["stress-fork", "--seed", &seed.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => return ledger.discrepancy(format!("fork: cannot start stress-fork: {e}")),
    };
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() < DEADLINE => {
                std::thread::sleep(Duration::from_millis(5));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return ledger.discrepancy(format!(
                    "fork: `{program} stress-fork --seed {seed}` did not finish within {} s",
                    DEADLINE.as_secs()
                ));
            }
        }
    }
    let out = match child.wait_with_output() {
        Ok(o) => o,
        Err(e) => return ledger.discrepancy(format!("fork: stress-fork: {e}")),
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let tasks = stdout
        .lines()
        .find_map(|l| l.strip_prefix("tasks "))
        .and_then(|n| n.trim().parse::<u64>().ok());
    match (out.status.success(), tasks) {
        (true, Some(n)) => ledger.tasks(n),
        _ => ledger.discrepancy(format!(
            "fork: `{program} stress-fork --seed {seed}` failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )),
    }
}

fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = threadlab::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

/// What a forked child does, and how many tasks that checks; `Err` says what went wrong.
fn in_the_child(op: u64, own: &threadlab::Pool) -> Result<u64, String> {
    match op {
        0 => {
            let (tx, rx) = std::sync::mpsc::channel();
            threadlab::spawn(move || tx.send(41).unwrap());
            (rx.recv() == Ok(41))
                .then_some(1)
                .ok_or("spawn on the global pool: no value".into())
        }
        1 => {
            let mut parts = [0u64; 8];
            threadlab::scope(|s| {
                for (i, p) in parts.iter_mut().enumerate() {
                    s.spawn(move |_| *p = i as u64 + 1);
                }
            });
            (parts.iter().sum::<u64>() == 36)
                .then_some(8)
                .ok_or("scope on the global pool: a task did not run".into())
        }
        2 => (fib(12) == 144)
            .then_some(1)
            .ok_or("join: fib(12) is not 144".into()),
        3 => {
            use threadlab::iter::ParallelSliceMut;
            let mut v: Vec<u32> = (0..2_000u32).rev().collect();
            v.par_sort();
            v.windows(2)
                .all(|w| w[0] <= w[1])
                .then_some(1)
                .ok_or("par_sort: not sorted".into())
        }
        4 => (threadlab::spawn_future(async { 6 * 7 }).join() == 42)
            .then_some(1)
            .ok_or("spawn_future: not 42".into()),
        _ => {
            // The pool the parent built refuses work at once, saying why.
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| own.install(|| 1)));
            let msg = match &r {
                Err(p) => crate::panics::panic_message(p.as_ref()),
                Ok(_) => return Err("the parent's pool ran work in the child".into()),
            };
            msg.contains("did not survive fork()")
                .then_some(1)
                .ok_or(format!(
                    "the parent's pool refused without saying why: {msg}"
                ))
        }
    }
}

/// `PROGRAM stress-fork --seed S`: builds and uses a pool, waits until its threads all run,
/// then forks 1–4 children, each doing one random thing with pools; prints `tasks N` (what the
/// children checked) and exits 0 when every child did it.
#[cfg(unix)]
pub fn child_main(seed: u64) -> ExitCode {
    // The planned refusals of the parent's pool: quiet.
    std::panic::set_hook(Box::new(|_| {}));
    let mut rng = Rng::spread(seed);
    let own = match threadlab::Pool::builder()
        .threads(rng.range(1, 4) as usize)
        .build()
    {
        Ok(p) => p,
        Err(e) => {
            eprintln!("stress-fork: {e}");
            return ExitCode::from(1);
        }
    };
    if own.install(|| fib(15)) != 610 {
        eprintln!("stress-fork: fib(15) on the parent's pool is not 610");
        return ExitCode::from(1);
    }
    // Every thread of this process running (none starting): the workers published their OS
    // ids as they started; the monitor started with the pool, before the work above.
    let start = Instant::now();
    while !own
        .metrics()
        .workers
        .iter()
        .all(|w| w.os_tid != 0 && w.is_parked)
    {
        if start.elapsed() > DEADLINE {
            eprintln!("stress-fork: the pool's workers never all parked");
            return ExitCode::from(1);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    std::thread::sleep(Duration::from_millis(20));
    let mut tasks = 0;
    for _ in 0..rng.range(1, 5) {
        let op = rng.below(6);
        // SAFETY: `fork` has no preconditions; the child runs only `in_the_child` (which
        // starts threads of its own: the global pool is rebuilt there) and leaves with `_exit`.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            eprintln!("stress-fork: fork: {}", std::io::Error::last_os_error());
            return ExitCode::from(1);
        }
        if pid == 0 {
            // SAFETY: `alarm` and `_exit` are async-signal-safe; a hung child dies of SIGALRM.
            unsafe { libc::alarm(DEADLINE.as_secs() as u32) };
            let code = match in_the_child(op, &own) {
                Ok(n) => n.min(100) as i32,
                Err(e) => {
                    eprintln!("stress-fork child, case {op}: {e}");
                    101
                }
            };
            // SAFETY: see above; `_exit` skips the parent's atexit handlers and destructors.
            unsafe { libc::_exit(code) };
        }
        let mut status = 0;
        // SAFETY: waits for our own child, with a valid pointer to `status`.
        if unsafe { libc::waitpid(pid, &mut status, 0) } != pid {
            eprintln!("stress-fork: waitpid: {}", std::io::Error::last_os_error());
            return ExitCode::from(1);
        }
        if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) > 100 {
            eprintln!(
                "stress-fork: the child of case {op} (seed {seed}) ended with status {status:#x}{}",
                if libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGALRM {
                    " (hung: its alarm killed it)"
                } else {
                    ""
                }
            );
            return ExitCode::from(1);
        }
        tasks += libc::WEXITSTATUS(status) as u64;
    }
    println!("tasks {tasks}");
    ExitCode::SUCCESS
}
