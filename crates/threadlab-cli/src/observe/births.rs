//! Every thread's birth and death, exactly, for `threadlab run`: the observer seizes the
//! command's process (`PTRACE_SEIZE`) before it calls `execve` and asks the kernel to trace
//! each thread it clones (`PTRACE_O_TRACECLONE`). Each `clone` of a thread then stops the
//! creating thread with `PTRACE_EVENT_CLONE` (the new thread's id in `PTRACE_GETEVENTMSG`) and
//! starts the new one, seized too, in a `PTRACE_EVENT_STOP`; the tracer notes the time and lets
//! both go on. A traced thread's exit is reported to the tracer (`waitid` sees it as a zombie
//! until the tracer reaps it), so deaths cost the program no stop: with `WNOWAIT` the tracer
//! first reads the dead thread's `comm` and `schedstat` (its whole time on a CPU and
//! runnable-but-waiting), then reaps it. Semantics: ptrace(2) ("PTRACE_O_TRACECLONE", "Death
//! under ptrace", "Group-stop", "PTRACE_LISTEN").
//!
//! The handshake that seizes the command before its first instruction: `Command::spawn` forks;
//! in the child, before `execve`, the `pre_exec` closure writes the child's pid into a pipe and
//! waits on a second pipe; the tracer thread reads the pid, seizes the child (still one thread,
//! so every thread it will ever have descends from a seized one) and writes "go", and the child
//! goes on to `execve`. `Command::spawn` returns only once `execve` has succeeded or failed, so a
//! helper thread calls it while the tracer thread shakes hands. If the seize is refused (a
//! seccomp filter, Yama's `ptrace_scope` 3), the tracer writes "refused" and the child ends
//! before `execve` with EPERM, having run none of the command's code: `run` then starts the
//! command again, sampled only. An `execve` that fails is reported by `Command::spawn` as
//! without a tracer. (The simpler `PTRACE_TRACEME` in the child makes an old-style tracee,
//! which has no `PTRACE_LISTEN`: its group-stops could only be resumed at once, so a stopped
//! command ran on.)
//!
//! Job control works as without the observer: a group-stop (SIGSTOP, SIGTSTP, SIGTTIN,
//! SIGTTOU) reaches the tracer as a `PTRACE_EVENT_STOP` with the stop signal, and the tracer
//! answers `PTRACE_LISTEN`, which leaves the thread stopped while still reporting to the
//! tracer; a SIGCONT ends the group-stop, each listening thread reports a `PTRACE_EVENT_STOP`
//! with SIGTRAP, and the tracer resumes it. Other signals are passed on.
//!
//! Why ptrace: it needs no privilege for one's own child, which is what `run` promises. The
//! alternatives need more: the `sched:sched_process_fork`/`task:task_newtask` tracepoints
//! through `perf_event_open` need `perf_event_paranoid` ≤ −1 or `CAP_PERFMON` (raw tracepoint
//! access; Debian and Ubuntu ship 2 or more), and the netlink proc connector needs
//! `CAP_NET_ADMIN`. Their advantage would be that the program never stops; ptrace stops the
//! creating thread and the new one once per creation (the README gives the measured cost).
//!
//! The sampler still reads each live thread's state from `/proc`; `merge` puts the two together:
//! a sampled thread gets its exact birth and death and its final time on a CPU; a thread that
//! lived between two samples, which the sampler never saw, is added with those alone.
//!
//! A sampled thread is matched to the life of its id nearest in time: overlapping its samples,
//! or else with the smallest gap between the two. Neither bounds the other: the tracer learns of
//! a birth only once it gets a CPU, and meanwhile the new thread waits in its initial stop where
//! the sampler reads it, still under its creator's name (on a loaded machine, tens of
//! milliseconds: several sampling periods); and a dead thread stays readable as a zombie until
//! the tracer, having noted its death, reaps it. Thread ids are reused (`pid_max` is often
//! 32,768), but the kernel hands ids out in turn (`alloc_pid`'s cyclic allocation) and gives one
//! again only after going round all the others: another life of the same id lies much further
//! from the samples than the tracer's lag.
//!
//! A traced thread's initial stop and its creator's clone event may reach the tracer in either
//! order, and a short-lived thread's death may come before its creator's clone event (the
//! creator waits in its event stop while the new thread runs): whichever of the two comes first
//! is the birth, and the tracer remembers an early initial stop so that the late clone event
//! does not count the thread again.
//!
//! (Over 800 lines: 700 without its tests, which build lives and samples by hand for `merge`.
//! The tracer's loop, its two ways in (`run`'s child, `watch`'s attach) and `merge` share one
//! account of thread lives and are read together.)

use std::cmp::Reverse;
use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::os::unix::thread::JoinHandleExt;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Instant;

use super::bursts::most_at_once;
use super::sampler::{ExactCounts, Observed, ThreadLog};

/// One thread's life as the tracer saw it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Life {
    /// Its id.
    pub tid: u64,
    /// Its name when it died (or `""` if it could not be read).
    pub name: String,
    /// When the tracer learned of its creation, ns since the observation began (0 for the
    /// command's first thread).
    pub born_ns: u64,
    /// When the tracer learned of its death; `None` for the process's last thread, which ends
    /// with the observation.
    pub died_ns: Option<u64>,
    /// Its whole time on a CPU and runnable-but-waiting, ns, read as it died.
    pub on_cpu_ns: u64,
    /// See `on_cpu_ns`.
    pub runqueue_ns: u64,
    /// It existed before the observation began (`watch`): its birth is unknown.
    pub pre_existing: bool,
}

/// What the tracer saw of the whole run.
#[derive(Clone, Debug, Default)]
pub struct Lives {
    /// Every thread, in order of birth.
    pub lives: Vec<Life>,
    /// The tracer's own CPU time, ns.
    pub tracer_cpu_ns: u64,
    /// The command's exit code, or `None` if a signal killed it.
    pub exit_code: Option<i32>,
    /// The signal that killed the command, if one did.
    pub exit_signal: Option<i32>,
    /// When the tracer learned the command's process had exited, ns.
    pub end_ns: u64,
    /// Why tracing stopped early, if it did (the counts are then incomplete).
    pub error: Option<String>,
}

impl Lives {
    /// The command's process (its thread-group leader) has ended with wait status `status`,
    /// seen at `now`: its exit code or signal, and the end of the run.
    fn leader_ended(&mut self, status: i32, now: u64) {
        self.exit_code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
        self.exit_signal = libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status));
        self.end_ns = now;
    }
}

/// The traced command: its pid and the tracer thread, whose result is the lives.
pub struct Traced {
    /// The command's process id.
    pub pid: u32,
    /// Set once the command's process has exited (the sampler stops then).
    pub done: Arc<AtomicBool>,
    tracer: JoinHandle<Lives>,
}

impl Traced {
    /// Waits for the tracer (it ends when the command has exited).
    pub fn finish(self) -> Lives {
        self.tracer.join().unwrap_or_else(|_| Lives {
            error: Some("the tracer thread panicked".into()),
            ..Lives::default()
        })
    }
}

/// What the tracer writes to the waiting child once it has tried to seize it.
const GO: u8 = 1;
/// See [`GO`]: the seize was refused; the child ends before `execve` with EPERM.
const REFUSED: u8 = 0;

/// Starts `cmd` traced: see the module doc for the handshake. The tracer thread seizes the
/// command's process and records births and deaths against `start`; a helper thread runs
/// `Command::spawn`, which returns only once the child has called `execve` (or failed to),
/// that is after the handshake. `Err` with EPERM when ptrace is refused (the caller then starts
/// the command again, sampled only: it has run none of its own code), else the error starting
/// it (the program not found…).
pub fn spawn(mut cmd: Command, start: Instant) -> io::Result<Traced> {
    // The child writes its pid into `pid_w`; the tracer writes GO or REFUSED into `go_w`.
    let (pid_r, pid_w) = pipe()?;
    let (go_r, go_w) = pipe()?;
    let (pid_w_fd, go_r_fd, go_w_fd) = (pid_w.as_raw_fd(), go_r.as_raw_fd(), go_w.as_raw_fd());
    // SAFETY: the closure runs in the forked child before `execve` and makes only
    // async-signal-safe system calls (close, getpid, write, read) on descriptors that were open
    // when the child was forked (`pid_w` and `go_r` live in the spawner thread until `spawn`
    // returns, `go_w` in the tracer thread until the handshake is over); it allocates nothing
    // (`from_raw_os_error` and `last_os_error` build an error from a number).
    unsafe {
        cmd.pre_exec(move || {
            // The child's copy of the tracer's end, so that a tracer gone reads as end of file.
            libc::close(go_w_fd);
            let pid = libc::getpid().to_ne_bytes();
            if libc::write(pid_w_fd, pid.as_ptr().cast(), pid.len()) != pid.len() as isize {
                return Err(io::Error::last_os_error());
            }
            let mut answer = [REFUSED];
            loop {
                match libc::read(go_r_fd, answer.as_mut_ptr().cast(), 1) {
                    1 => break,
                    0 => return Err(io::Error::from_raw_os_error(libc::EPIPE)),
                    _ if io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) => {}
                    _ => return Err(io::Error::last_os_error()),
                }
            }
            if answer[0] != GO {
                return Err(io::Error::from_raw_os_error(libc::EPERM));
            }
            Ok(())
        });
    }
    let done = Arc::new(AtomicBool::new(false));
    let done2 = Arc::clone(&done);
    let (tx, rx) = mpsc::channel();
    let tracer = std::thread::Builder::new()
        .name("threadlab-tracer".into())
        .spawn(move || {
            let spawner = std::thread::Builder::new()
                .name("threadlab-spawn".into())
                .spawn(move || {
                    let child = cmd.spawn();
                    // Closing the spawner's ends: once the child has also closed its own (at
                    // `execve` or exit), the tracer reads end of file if no pid came.
                    drop((pid_w, go_r));
                    child
                });
            let spawner = match spawner {
                Ok(s) => s,
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return Lives::default();
                }
            };
            let mut pid = [0u8; 4];
            let pid = std::fs::File::from(pid_r)
                .read_exact(&mut pid)
                .ok()
                .map(|()| i32::from_ne_bytes(pid));
            // Seize the child while it waits before `execve`, single-threaded: every thread it
            // will have descends from this one and is seized too (PTRACE_O_TRACECLONE).
            // PTRACE_O_EXITKILL kills the command if the observer dies.
            let seized = pid.map(|pid| {
                let opts =
                    libc::PTRACE_O_TRACECLONE | libc::PTRACE_O_TRACEEXEC | libc::PTRACE_O_EXITKILL;
                // SAFETY: attaches to process `pid` (our child, waiting in `read`) without
                // stopping it; plain arguments.
                if unsafe { libc::ptrace(libc::PTRACE_SEIZE, pid, 0, opts) } == 0 {
                    Ok(())
                } else {
                    Err(io::Error::last_os_error())
                }
            });
            let answer = [if matches!(seized, Some(Ok(()))) {
                GO
            } else {
                REFUSED
            }];
            // A failed write means the child is gone: `spawn` then says why.
            let _ = std::fs::File::from(go_w).write_all(&answer);
            let spawned = spawner
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("the spawner thread panicked")));
            // `spawn` failed: it has reaped the child, if there was one. Refused, the child
            // ends with EPERM; the seize's own error is the one to give.
            let started = match (spawned, seized) {
                (Ok(child), Some(Ok(()))) => Ok(child),
                (Ok(mut child), seized) => {
                    // The child died before its `execve` (killed from outside): reap it.
                    let _ = child.wait();
                    Err(seized.and_then(Result::err).unwrap_or_else(|| {
                        io::Error::other("the command ended before it could be traced")
                    }))
                }
                (Err(_), Some(Err(e))) | (Err(e), _) => Err(e),
            };
            let child = match started {
                Ok(c) => c,
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return Lives::default();
                }
            };
            let pid = child.id();
            // Every wait from here on is the tracer's own `waitid`/`waitpid`; `child` is never
            // waited on through std (dropping a `Child` neither waits nor kills).
            drop(child);
            let _ = tx.send(Ok(pid));
            let cpu0 = super::sampler::thread_cpu_ns();
            let mut lives = trace_loop(pid, start);
            lives.tracer_cpu_ns = super::sampler::thread_cpu_ns().saturating_sub(cpu0);
            // Pairs with the sampler's Acquire load: the lives are handed over by `join`, this
            // flag only says "stop sampling".
            done2.store(true, Ordering::Release);
            lives
        })?;
    match rx.recv() {
        Ok(Ok(pid)) => Ok(Traced { pid, done, tracer }),
        Ok(Err(e)) => {
            let _ = tracer.join();
            Err(e)
        }
        Err(_) => {
            let _ = tracer.join();
            Err(io::Error::other(
                "the tracer thread ended before the command started",
            ))
        }
    }
}

/// A pipe whose two ends close on `execve` (read end, write end).
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors the kernel writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded: both descriptors are open and owned by nothing else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn ns_since(start: Instant) -> u64 {
    start.elapsed().as_nanos() as u64
}

/// Live threads: tid → index in `Lives::lives`, and whether it has been let go after its
/// initial stop.
type Live = HashMap<u64, (usize, bool)>;

/// The tracer's loop for `run`: the command's first thread is seized from before its `execve`.
fn trace_loop(pid: u32, start: Instant) -> Lives {
    let mut out = Lives::default();
    let mut live = Live::new();
    out.lives.push(Life {
        tid: u64::from(pid),
        ..Life::default()
    });
    live.insert(u64::from(pid), (0, true));
    event_loop(pid, start, out, live, None)
}

/// Runs until the process has exited or, for `watch`, `stop` is set (the caller then interrupts
/// the wait with a signal). Every thread in `live` was attached with PTRACE_SEIZE and
/// PTRACE_O_TRACECLONE, so the threads they create are seized too and start in
/// PTRACE_EVENT_STOP (ptrace(2), "Attaching and detaching").
fn event_loop(
    pid: u32,
    start: Instant,
    mut out: Lives,
    mut live: Live,
    stop: Option<&AtomicBool>,
) -> Lives {
    // Threads whose initial stop came before their creator's clone event: tid → how many such
    // births wait for that event (more than one only if the id was reused meanwhile).
    let mut early: HashMap<u64, u32> = HashMap::new();
    loop {
        // SAFETY: `info` is a plain struct for the kernel to fill.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: valid pointer to `info`; WNOWAIT leaves the child waitable.
        let rc = unsafe {
            libc::waitid(
                libc::P_ALL,
                0,
                &mut info,
                libc::WEXITED | libc::WSTOPPED | libc::__WALL | libc::WNOWAIT,
            )
        };
        if rc != 0 {
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                // Relaxed: the flag only ends the loop; the lives go back through `join`.
                Some(libc::EINTR) if stop.is_some_and(|f| f.load(Ordering::Relaxed)) => break,
                Some(libc::EINTR) => continue,
                Some(libc::ECHILD) => break,
                _ => {
                    out.error = Some(format!("waitid: {e}"));
                    break;
                }
            }
        }
        // SAFETY: waitid filled `info` for a child state change, so si_pid is set.
        let tid = unsafe { info.si_pid() } as u64;
        let now = ns_since(start);
        let code = info.si_code;
        if matches!(code, libc::CLD_EXITED | libc::CLD_KILLED | libc::CLD_DUMPED) {
            // Dead (a zombie until reaped): read what it did, then reap it.
            let entry = live.remove(&tid);
            let (on_cpu_ns, runqueue_ns, name) = read_dead(pid, tid);
            let mut status = 0;
            // SAFETY: reaps the zombie `tid`; `status` is a valid int.
            unsafe { libc::waitpid(tid as i32, &mut status, libc::__WALL) };
            if let Some((i, _)) = entry {
                let l = &mut out.lives[i];
                (l.on_cpu_ns, l.runqueue_ns) = (on_cpu_ns, runqueue_ns);
                if !name.is_empty() {
                    l.name = name;
                }
                if tid != u64::from(pid) {
                    l.died_ns = Some(now);
                }
            }
            if tid == u64::from(pid) {
                // The thread-group leader is reported last, once every other thread is gone.
                out.leader_ended(status, now);
                break;
            }
            continue;
        }
        let mut status = 0;
        // SAFETY: consumes the stop `waitid` reported for `tid`; `status` is a valid int.
        if unsafe { libc::waitpid(tid as i32, &mut status, libc::__WALL) } != tid as i32 {
            continue;
        }
        if !libc::WIFSTOPPED(status) {
            // It died between the two waits (already reaped: no final figures).
            if let Some((i, _)) = live.remove(&tid) {
                if tid != u64::from(pid) {
                    out.lives[i].died_ns = Some(now);
                }
            }
            if tid == u64::from(pid) {
                out.leader_ended(status, now);
                break;
            }
            continue;
        }
        let sig = libc::WSTOPSIG(status);
        let event = status >> 16;
        let mut inject = 0;
        if event == libc::PTRACE_EVENT_CLONE {
            let mut msg: libc::c_ulong = 0;
            // SAFETY: `tid` is in a ptrace stop; the kernel writes the new thread's id to `msg`.
            let ok = unsafe { libc::ptrace(libc::PTRACE_GETEVENTMSG, tid, 0, &mut msg) } == 0;
            // `c_ulong` is 32 bits wide on 32-bit targets.
            #[allow(clippy::useless_conversion)]
            let new = u64::from(msg);
            match early.get_mut(&new) {
                // Its birth is already noted, and it may even have died since.
                Some(n) if ok => {
                    *n -= 1;
                    if *n == 0 {
                        early.remove(&new);
                    }
                }
                _ if ok => born(&mut out, &mut live, new, now),
                _ => {}
            }
        } else if event == PTRACE_EVENT_STOP && !live.get(&tid).is_some_and(|l| l.1) {
            // A new thread's initial stop. Its creator's clone event may come later (the
            // kernel reports a tracer's newest tracees first), even after this thread's death.
            if !live.contains_key(&tid) {
                born(&mut out, &mut live, tid, now);
                *early.entry(tid).or_default() += 1;
            }
            if let Some(l) = live.get_mut(&tid) {
                l.1 = true;
            }
            if is_stop_signal(sig) {
                // Born into a group-stop of its process: it stops with the others (below).
                // SAFETY: `tid` is in a group-stop of a seized tracee.
                unsafe { libc::ptrace(libc::PTRACE_LISTEN, tid, 0, 0) };
                continue;
            }
        } else if event == PTRACE_EVENT_STOP && is_stop_signal(sig) {
            // A group-stop (SIGSTOP, SIGTSTP…): stay stopped but keep reporting, as job control
            // expects, until a SIGCONT (PTRACE_LISTEN exists only for seized tracees).
            // SAFETY: `tid` is in a group-stop of a seized tracee.
            unsafe { libc::ptrace(libc::PTRACE_LISTEN, tid, 0, 0) };
            continue;
        } else if event == PTRACE_EVENT_STOP {
            // A listening tracee woken by SIGCONT reports PTRACE_EVENT_STOP with SIGTRAP
            // (ptrace(2), "Group-stop"): the group-stop is over, let it run (listening again
            // would keep it stopped until the tracer detaches).
        } else if event != 0 {
            // PTRACE_EVENT_EXEC and the like: nothing to note.
        } else {
            // A seized tracee's only other stop is a signal on its way to the program (no
            // syscall stops are asked for): passed on. A stop signal passed on starts the
            // group-stop that the branch above keeps.
            inject = sig;
        }
        // SAFETY: `tid` is in a ptrace stop; resuming it with signal `inject` (0 for none).
        unsafe { libc::ptrace(libc::PTRACE_CONT, tid, 0, inject as libc::c_ulong) };
    }
    out
}

/// Whether `sig` stops a process by default: a `PTRACE_EVENT_STOP` with one of these is a
/// group-stop; with `SIGTRAP` it is the end of one (SIGCONT) or the stop of a new thread.
fn is_stop_signal(sig: i32) -> bool {
    matches!(
        sig,
        libc::SIGSTOP | libc::SIGTSTP | libc::SIGTTIN | libc::SIGTTOU
    )
}

/// `PTRACE_EVENT_STOP` (linux/ptrace.h), not in every libc version.
const PTRACE_EVENT_STOP: i32 = 128;

/// A running process traced from outside (`watch`): see [`attach`].
pub struct Attached {
    /// Set once the process has exited.
    pub done: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    tracer: JoinHandle<Lives>,
}

impl Attached {
    /// Ends the tracing: the tracer thread leaves its loop and exits, which detaches every
    /// thread it traced (the kernel restarts the stopped ones; ptrace(2), "If the tracer dies").
    pub fn finish(self) -> Lives {
        // Relaxed: see `event_loop`.
        self.stop.store(true, Ordering::Relaxed);
        let tid = self.tracer.as_pthread_t();
        // The tracer may be between its flag check and `waitid`: signal until it has gone.
        while !self.tracer.is_finished() {
            // SAFETY: `tid` is the tracer thread, alive until `is_finished`, and the wake-up
            // signal's handler (installed by `attach`) does nothing.
            unsafe { libc::pthread_kill(tid, WAKE) };
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        self.tracer.join().unwrap_or_default()
    }
}

/// The signal that interrupts the tracer's `waitid` when `watch` ends.
const WAKE: libc::c_int = libc::SIGUSR2;

extern "C" fn wake_handler(_: libc::c_int) {}

/// Attaches to every thread of running process `pid` (PTRACE_SEIZE with PTRACE_O_TRACECLONE,
/// over and over until a pass finds no new thread: a thread not yet attached may create one
/// meanwhile). `Err` when ptrace access is refused; the caller then samples only. Threads
/// found at attach time are `pre_existing`.
pub fn attach(pid: u32, start: Instant) -> io::Result<Attached> {
    // SAFETY: installs a handler that does nothing, without SA_RESTART, so the signal makes the
    // tracer's `waitid` return EINTR; `sa` is fully initialised.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = wake_handler as *const () as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(WAKE, &sa, std::ptr::null_mut());
    }
    let done = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let (done2, stop2) = (Arc::clone(&done), Arc::clone(&stop));
    let (tx, rx) = mpsc::channel();
    let tracer = std::thread::Builder::new()
        .name("threadlab-tracer".into())
        .spawn(move || {
            let (mut out, mut live) = (Lives::default(), Live::new());
            loop {
                let tids = match super::procfs::tasks(pid) {
                    Ok(t) => t,
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return out;
                    }
                };
                let mut new = 0;
                let mut fresh: Vec<u64> =
                    tids.into_iter().filter(|t| !live.contains_key(t)).collect();
                // The leader first: access is granted per process, so once it is traced an
                // error on another thread means that thread is exiting (ptrace refuses a
                // zombie with EPERM), not that access is refused.
                fresh.sort_by_key(|&t| t != u64::from(pid));
                for tid in fresh {
                    let opts = libc::PTRACE_O_TRACECLONE;
                    // SAFETY: attaches to thread `tid` without stopping it; plain arguments.
                    if unsafe { libc::ptrace(libc::PTRACE_SEIZE, tid, 0, opts) } != 0 {
                        let e = io::Error::last_os_error();
                        if e.raw_os_error() == Some(libc::ESRCH) || !live.is_empty() {
                            continue; // exited or exiting meanwhile
                        }
                        let _ = tx.send(Err(e));
                        return out; // exiting detaches the threads seized so far
                    }
                    out.lives.push(Life {
                        tid,
                        pre_existing: true,
                        ..Life::default()
                    });
                    live.insert(tid, (out.lives.len() - 1, true));
                    new += 1;
                }
                if new == 0 {
                    break;
                }
            }
            let _ = tx.send(Ok(()));
            let cpu0 = super::sampler::thread_cpu_ns();
            let mut lives = event_loop(pid, start, out, live, Some(&stop2));
            lives.tracer_cpu_ns = super::sampler::thread_cpu_ns().saturating_sub(cpu0);
            // Pairs with the sampler's Acquire load (see `spawn`).
            done2.store(true, Ordering::Release);
            lives
        })?;
    match rx.recv() {
        Ok(Ok(())) => Ok(Attached { done, stop, tracer }),
        Ok(Err(e)) => {
            let _ = tracer.join();
            Err(e)
        }
        Err(_) => {
            let _ = tracer.join();
            Err(io::Error::other("the tracer thread ended before attaching"))
        }
    }
}

/// Notes the birth of `tid` unless it is already known (its initial stop and its creator's clone
/// event both announce it; `event_loop` keeps the one that comes second from counting a thread
/// that has died meanwhile).
fn born(out: &mut Lives, live: &mut Live, tid: u64, now: u64) {
    live.entry(tid).or_insert_with(|| {
        out.lives.push(Life {
            tid,
            born_ns: now,
            ..Life::default()
        });
        (out.lives.len() - 1, false)
    });
}

/// A dead (zombie) thread's time on a CPU, time runnable-but-waiting, and name.
fn read_dead(pid: u32, tid: u64) -> (u64, u64, String) {
    let dir = format!("/proc/{pid}/task/{tid}");
    let sched = std::fs::read_to_string(format!("{dir}/schedstat")).unwrap_or_default();
    let mut it = sched
        .split_ascii_whitespace()
        .map(|x| x.parse::<u64>().unwrap_or(0));
    let (on, rq) = (it.next().unwrap_or(0), it.next().unwrap_or(0));
    let name = std::fs::read_to_string(format!("{dir}/comm")).unwrap_or_default();
    (on, rq, name.trim_end().to_owned())
}

/// How far apart in time life `l` and samples taken from `first` to `last` are: 0 when they
/// overlap, else the gap between the two.
fn apart(l: &Life, first: u64, last: u64) -> u64 {
    let died = l.died_ns.unwrap_or(u64::MAX);
    if last < l.born_ns {
        l.born_ns - last
    } else {
        first.saturating_sub(died)
    }
}

/// Puts the tracer's lives into the samples: see the module doc.
pub fn merge(o: &mut Observed, lives: &Lives) {
    let mut by_tid: HashMap<u64, Vec<usize>> = HashMap::new();
    for (i, l) in lives.lives.iter().enumerate() {
        by_tid.entry(l.tid).or_default().push(i);
    }
    let mut matched = vec![false; lives.lives.len()];
    for t in &mut o.threads {
        let first = t.samples.first().map_or(0, |s| s.ts_ns);
        let last = t.samples.last().map_or(first, |s| s.ts_ns);
        // The nearest life in time; of two as near (both overlap the samples), the later born.
        let Some(i) = by_tid.get(&t.tid).and_then(|v| {
            v.iter()
                .copied()
                .filter(|&i| !matched[i])
                .min_by_key(|&i| (apart(&lives.lives[i], first, last), Reverse(i)))
        }) else {
            continue;
        };
        matched[i] = true;
        let l = &lives.lives[i];
        // The tracer may learn of a birth just after a tick read the new thread, and a dead
        // thread stays readable (a zombie) until the tracer reaps it: the samples bound the
        // life.
        t.born_ns = (!l.pre_existing).then(|| l.born_ns.min(first));
        if let Some(d) = l.died_ns {
            t.samples.retain(|s| s.ts_ns <= d);
            t.exited_ns = l.died_ns;
            // Both are running totals, so the end is at least the last sample: the tracer reads
            // them at the death, the interposer only the CPU time (its run-queue time is 0).
            let last = t
                .samples
                .last()
                .map_or((0, 0), |s| (s.on_cpu_ns, s.runqueue_ns));
            t.end = Some((l.on_cpu_ns.max(last.0), l.runqueue_ns.max(last.1)));
        }
        // The name at death: a thread sampled right after its birth may not have set its own.
        if !l.name.is_empty() {
            t.name.clone_from(&l.name);
        }
    }
    for (i, l) in lives.lives.iter().enumerate() {
        if !matched[i] {
            o.threads.push(ThreadLog {
                tid: l.tid,
                name: l.name.clone(),
                born_ns: (!l.pre_existing).then_some(l.born_ns),
                exited_ns: l.died_ns,
                samples: Vec::new(),
                end: l.died_ns.map(|_| (l.on_cpu_ns, l.runqueue_ns)),
            });
        }
    }
    o.threads.sort_by_key(|t| (t.born_ns.unwrap_or(0), t.tid));
    o.duration_ns = o.duration_ns.max(lives.end_ns);
    // The most threads alive at once, from the exact births and deaths.
    let mut edges: Vec<(u64, i64)> = Vec::new();
    for l in &lives.lives {
        edges.push((l.born_ns, 1));
        if let Some(d) = l.died_ns {
            edges.push((d, -1));
        }
    }
    o.max_threads = most_at_once(edges);
    let pre = lives.lives.iter().filter(|l| l.pre_existing).count();
    // `run`: the first life is the command's first thread, not one it created.
    let first = usize::from(pre == 0 && !lives.lives.is_empty());
    o.exact = Some(ExactCounts {
        created: (lives.lives.len() - pre - first) as u64,
        exited: lives.lives.iter().filter(|l| l.died_ns.is_some()).count() as u64,
        tracer_cpu_ns: lives.tracer_cpu_ns,
        error: lives.error.clone(),
        attached: pre > 0,
        by_interposer: false,
    });
}

#[cfg(test)]
mod tests {
    use super::super::sampler::Sample;
    use super::super::syscall::State;
    use super::*;

    fn sample(ts_ns: u64) -> Sample {
        Sample {
            ts_ns,
            state: State::Runnable,
            cpu: 0,
            on_cpu_ns: 0,
            runqueue_ns: 0,
            slices: 0,
            switches: None,
        }
    }

    fn life(tid: u64, born_ns: u64, died_ns: Option<u64>, on_cpu_ns: u64) -> Life {
        Life {
            tid,
            name: format!("t{tid}"),
            born_ns,
            died_ns,
            on_cpu_ns,
            ..Life::default()
        }
    }

    /// Thread id 7 lives twice (reused); the sampler saw only its second life, and one sample
    /// after it died (a zombie not yet reaped). Thread 8 was never sampled.
    #[test]
    fn lives_fill_in_the_samples_with_reused_ids() {
        let mut o = Observed {
            threads: vec![
                ThreadLog {
                    tid: 1,
                    name: "main".into(),
                    born_ns: Some(0),
                    exited_ns: None,
                    samples: vec![sample(0), sample(100)],
                    end: None,
                },
                ThreadLog {
                    tid: 7,
                    name: String::new(),
                    born_ns: Some(45),
                    exited_ns: Some(100),
                    samples: vec![sample(50), sample(75)],
                    end: None,
                },
            ],
            duration_ns: 100,
            ..Observed::default()
        };
        let lives = Lives {
            lives: vec![
                life(1, 0, None, 90),
                life(7, 10, Some(20), 5),
                life(8, 30, Some(35), 3),
                life(7, 40, Some(70), 25),
            ],
            end_ns: 120,
            ..Lives::default()
        };
        merge(&mut o, &lives);
        let x = o.exact.as_ref().expect("exact counts");
        assert_eq!((x.created, x.exited, x.attached), (3, 3, false));
        assert_eq!(o.threads.len(), 4, "{:?}", o.threads);
        let sevens: Vec<&ThreadLog> = o.threads.iter().filter(|t| t.tid == 7).collect();
        assert_eq!(sevens.len(), 2);
        let (first, second) = (sevens[0], sevens[1]);
        assert_eq!(
            (first.born_ns, first.exited_ns, first.samples.len()),
            (Some(10), Some(20), 0)
        );
        assert_eq!(first.end, Some((5, 0)));
        assert_eq!((second.born_ns, second.exited_ns), (Some(40), Some(70)));
        assert_eq!(
            second.samples.len(),
            1,
            "the sample after its death is dropped"
        );
        assert_eq!((second.name.as_str(), second.end), ("t7", Some((25, 0))));
        assert!(o.threads.iter().any(|t| t.tid == 8 && t.samples.is_empty()));
        assert_eq!(
            o.duration_ns, 120,
            "the observation ends when the process has"
        );
        assert_eq!(o.max_threads, 2, "main and one other at a time");
    }

    fn track(tid: u64, name: &str, ts: &[u64]) -> ThreadLog {
        ThreadLog {
            tid,
            name: name.into(),
            born_ns: ts.first().copied(),
            exited_ns: None,
            samples: ts.iter().map(|&t| sample(t)).collect(),
            end: None,
        }
    }

    /// The command's first thread, sampled from the start and never seen dying.
    fn first_thread() -> (ThreadLog, Life) {
        (track(1, "main", &[0]), life(1, 0, None, 0))
    }

    /// The tracer learns of a birth only when it gets a CPU: here 44 ms (more than a 25 ms
    /// period) after a tick read the new thread, which waited that long in its initial ptrace
    /// stop (the figures of thread 1493 in a saved failing run). Its id also had an earlier
    /// life, long over. The samples go with the life they overlap, once: not with the earlier
    /// life, and not beside the late one as a second thread.
    #[test]
    fn a_birth_the_tracer_learns_of_late_keeps_its_samples_in_one_thread() {
        let (main, main_life) = first_thread();
        let ts = [
            187_591_178,
            200_087_510,
            225_096_575,
            283_880_403,
            284_467_073,
        ];
        let mut o = Observed {
            threads: vec![main, track(1493, "task 2", &ts)],
            duration_ns: 300_000_000,
            ..Observed::default()
        };
        let lives = Lives {
            lives: vec![
                main_life,
                life(1493, 5_000_000, Some(6_000_000), 10),
                life(1493, 231_859_246, Some(284_576_418), 194_664),
            ],
            end_ns: 300_000_000,
            ..Lives::default()
        };
        merge(&mut o, &lives);
        let ours: Vec<&ThreadLog> = o.threads.iter().filter(|t| t.tid == 1493).collect();
        assert_eq!(ours.len(), 2, "one thread per life: {ours:?}");
        let (old, late) = (ours[0], ours[1]);
        assert_eq!((old.born_ns, old.samples.len()), (Some(5_000_000), 0));
        assert_eq!(
            (late.born_ns, late.exited_ns, late.samples.len()),
            (Some(187_591_178), Some(284_576_418), 5),
            "born when first sampled, dead when the tracer saw it, every sample kept"
        );
        assert_eq!(late.end, Some((194_664, 0)));
    }

    /// A thread sampled while it still had its creator's name (it waited in its initial ptrace
    /// stop) and named itself later: the tracer learned of its birth 34 ms after the first
    /// sample (more than the 25 ms period; thread 26573 of a saved failing run) and of its new
    /// name at its death. One thread, with the name it died with.
    #[test]
    fn a_thread_renamed_after_a_late_birth_is_one_thread_with_its_new_name() {
        let (main, main_life) = first_thread();
        let mut o = Observed {
            threads: vec![
                main,
                track(26573, "threadlab", &[341_762_840, 350_098_391, 375_090_324]),
            ],
            duration_ns: 400_000_000,
            ..Observed::default()
        };
        let mut renamed = life(26573, 376_072_295, Some(376_369_793), 224_151);
        renamed.name = "task 0".into();
        let lives = Lives {
            lives: vec![main_life, renamed],
            end_ns: 400_000_000,
            ..Lives::default()
        };
        merge(&mut o, &lives);
        let ours: Vec<&ThreadLog> = o.threads.iter().filter(|t| t.tid == 26573).collect();
        assert_eq!(ours.len(), 1, "one thread, not a piece per name: {ours:?}");
        assert_eq!(ours[0].name, "task 0");
        assert_eq!(ours[0].samples.len(), 3);
        assert_eq!(
            (ours[0].born_ns, ours[0].exited_ns),
            (Some(341_762_840), Some(376_369_793))
        );
        let x = o.exact.as_ref().expect("exact counts");
        assert_eq!((x.created, o.threads.len()), (1, 2));
    }
}
