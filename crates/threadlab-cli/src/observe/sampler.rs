//! The sampling loop: every period, list the process's threads (`/proc/PID/task`), open the
//! files of the new ones, read every live thread (`procfs.rs`), classify it (`syscall.rs`) and
//! keep the sample; a thread whose files fail to read has exited. Futex addresses get their
//! names (`symbols.rs`) when first seen, while the process is still there to ask.
//!
//! A thread first seen at tick *k* was created after tick *k−1* (for `run`: every thread is).
//! Threads first seen in the same tick are spread evenly over the interval, in thread-id order
//! (the kernel hands ids out in creation order): the sampler cannot see a creation time finer
//! than that, and threads that lived entirely between two ticks are not seen at all — so the
//! counts of created threads are lower bounds at high creation rates.
//!
//! The sampler's own CPU time (`CLOCK_THREAD_CPUTIME_ID`) is kept, so every report says what the
//! observation cost.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use super::procfs::{self, Reading, TaskFiles};
use super::symbols::Symbols;
use super::syscall::{classify, State};

/// Samples per second when none is asked for; keeps the sampler under 2% of one CPU with 64
/// threads (see the README for the measured cost).
pub const DEFAULT_HZ: u32 = 40;

/// `status` (context switches) is read every this many ticks: it is the costliest file to
/// format, and the switch counts are cumulative, so sparse readings lose nothing but resolution.
const STATUS_EVERY: u64 = 10;

/// One thread at one tick.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    /// Nanoseconds since the observation began.
    pub ts_ns: u64,
    /// What it was doing.
    pub state: State,
    /// The CPU it last ran on.
    pub cpu: u32,
    /// Cumulative time on a CPU and runnable-but-waiting, ns.
    pub on_cpu_ns: u64,
    /// See `on_cpu_ns`.
    pub runqueue_ns: u64,
    /// Timeslices run so far.
    pub slices: u64,
    /// Cumulative voluntary and involuntary switches, when read at this tick.
    pub switches: Option<(u64, u64)>,
}

/// One thread's life as seen.
#[derive(Clone, Debug)]
pub struct ThreadLog {
    /// Its id.
    pub tid: u64,
    /// Its latest name.
    pub name: String,
    /// Estimated creation time, when it was created during the observation.
    pub born_ns: Option<u64>,
    /// The first tick that did not find it, if it exited.
    pub exited_ns: Option<u64>,
    /// Its samples.
    pub samples: Vec<Sample>,
    /// Its whole time on a CPU and runnable-but-waiting, ns, read as it died (only when the
    /// tracer saw it die: `births.rs`).
    pub end: Option<(u64, u64)>,
}

/// What a whole observation saw.
#[derive(Debug, Default)]
pub struct Observed {
    /// The process.
    pub pid: u32,
    /// Every thread seen, in order of first sight.
    pub threads: Vec<ThreadLog>,
    /// From the first tick to the last, ns.
    pub duration_ns: u64,
    /// Ticks taken.
    pub ticks: u64,
    /// Thread readings taken.
    pub reads: u64,
    /// The most threads alive at one tick.
    pub max_threads: usize,
    /// CPUs the process may run on.
    pub cpus: u32,
    /// Whether ptrace access (the `syscall` file) was refused.
    pub syscall_denied: bool,
    /// Threads whose files could not be opened (e.g. out of file descriptors).
    pub unopened: u64,
    /// The sampler's own CPU time, ns.
    pub sampler_cpu_ns: u64,
    /// Threads and processes created on the whole machine during the observation: an upper
    /// bound on the threads the process created (the sampler sees only those alive at a tick).
    pub forks: u64,
    /// Names of the futex addresses seen.
    pub futex_names: HashMap<u64, String>,
    /// Exact counts of births and deaths, when the tracer saw them (`births.rs`); the threads'
    /// `born_ns`/`exited_ns` are then exact too.
    pub exact: Option<ExactCounts>,
}

/// Samples process `pid` at `hz`, with times counted from `start`, until `done` says stop
/// (checked after each tick) or the process is gone. `all_new`: every thread was created
/// during the observation (`run`).
pub fn sample_from(
    pid: u32,
    hz: u32,
    all_new: bool,
    start: Instant,
    mut done: impl FnMut() -> bool,
) -> Observed {
    // Three files stay open per thread; a reserve of descriptors stays free for listing the
    // threads and naming futexes, so a thread past it is counted as not observed instead of
    // leaving the sampler unable to list the process's threads (and stopping as if it had
    // exited).
    let max_open = (raise_fd_limit().saturating_sub(FD_RESERVE) / 3) as usize;
    let period = period(hz);
    let cpu0 = thread_cpu_ns();
    let mut o = Observed {
        pid,
        cpus: procfs::cpus_of(pid),
        ..Observed::default()
    };
    let mut live: BTreeMap<u64, (usize, TaskFiles, Option<Reading>)> = BTreeMap::new();
    let forks0 = forks_since_boot();
    let mut symbols = Symbols::default();
    let mut buf = Vec::new();
    let mut prev_ns = 0u64;
    // Threads whose files could not be opened (out of descriptors): tried again at every tick,
    // counted once each, and no longer once opened.
    let mut unopened: std::collections::HashSet<u64> = std::collections::HashSet::new();
    loop {
        let ts = start.elapsed().as_nanos() as u64;
        let Ok(tids) = procfs::tasks(pid) else {
            // Gone: the observation lasted until now (a tick that took long, naming futexes
            // in large files, must not end the window at its start).
            o.duration_ns = ts;
            break;
        };
        let new: Vec<u64> = tids
            .iter()
            .copied()
            .filter(|t| !live.contains_key(t))
            .collect();
        for (k, &tid) in new.iter().enumerate() {
            let born = if o.ticks == 0 {
                all_new.then_some(0)
            } else {
                let step = ts.saturating_sub(prev_ns) / (new.len() as u64 + 1);
                Some(prev_ns + step * (k as u64 + 1))
            };
            if live.len() >= max_open {
                unopened.insert(tid);
                continue;
            }
            match TaskFiles::open(pid, tid, &mut o.syscall_denied) {
                Ok(files) => {
                    unopened.remove(&tid);
                    o.threads.push(ThreadLog {
                        tid,
                        name: String::new(),
                        born_ns: born,
                        exited_ns: None,
                        samples: Vec::new(),
                        end: None,
                    });
                    live.insert(tid, (o.threads.len() - 1, files, None));
                }
                Err(e) if e.raw_os_error() == Some(libc::EMFILE) => {
                    unopened.insert(tid);
                }
                Err(_) => {} // exited before it could be opened
            }
        }
        let mut gone = Vec::new();
        for (&tid, (i, files, prev)) in live.iter_mut() {
            let log = &mut o.threads[*i];
            let with_status = log.samples.is_empty() || o.ticks % STATUS_EVERY == 0;
            o.reads += 1;
            match files.read(prev.as_ref(), with_status, &mut buf) {
                Ok(r) => {
                    *prev = Some(r.clone());
                    let state = classify(r.state, r.syscall.map(|s| (s.0, s.1)));
                    if let State::Futex(addr) = state {
                        o.futex_names.entry(addr).or_insert_with(|| {
                            let sym = symbols.name(pid, addr).unwrap_or_default();
                            format!("futex {addr:#x} {sym}").trim_end().to_owned()
                        });
                    }
                    log.name.clone_from(&r.comm);
                    log.samples.push(Sample {
                        ts_ns: ts,
                        state,
                        cpu: r.cpu,
                        on_cpu_ns: r.on_cpu_ns,
                        runqueue_ns: r.runqueue_ns,
                        slices: r.slices,
                        switches: r.switches,
                    });
                }
                Err(_) => {
                    log.exited_ns = Some(ts);
                    gone.push(tid);
                }
            }
        }
        for tid in gone {
            live.remove(&tid);
        }
        o.max_threads = o.max_threads.max(live.len());
        o.ticks += 1;
        o.duration_ns = ts;
        prev_ns = ts;
        if done() {
            // The end was seen now, not at this tick's start.
            o.duration_ns = start.elapsed().as_nanos() as u64;
            break;
        }
        let next = start + period * o.ticks as u32;
        if let Some(wait) = next.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }
    // Threads whose last sample is the last tick were alive at the end; a sample-less thread
    // (opened, then gone) is dropped.
    o.threads.retain(|t| !t.samples.is_empty());
    o.unopened = unopened.len() as u64;
    o.sampler_cpu_ns = thread_cpu_ns().saturating_sub(cpu0);
    o.forks = forks_since_boot().saturating_sub(forks0);
    o
}

/// The sampling period at `hz`.
pub fn period(hz: u32) -> Duration {
    Duration::from_nanos(1_000_000_000 / u64::from(hz.max(1)))
}

/// Processes and threads created on the whole machine since boot (`processes` in `/proc/stat`).
fn forks_since_boot() -> u64 {
    std::fs::read_to_string("/proc/stat")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("processes "))
                .and_then(|v| v.trim().parse().ok())
        })
        .unwrap_or(0)
}

/// This thread's CPU time, ns.
pub fn thread_cpu_ns() -> u64 {
    crate::measure::thread_cpu_time().as_nanos() as u64
}

/// Descriptors the sampler leaves free of thread files (`sample_from`).
const FD_RESERVE: u64 = 32;

/// Three files stay open per thread: a program with thousands of threads needs more
/// descriptors than the usual soft limit of 1,024, so raise it to the hard limit. The limit in
/// force after.
fn raise_fd_limit() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid rlimit for the kernel to fill, then read back.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return 1024;
        }
        if lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max;
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim);
            }
        }
    }
    lim.rlim_cur
}

/// The tracer's counts, kept in `Observed`.
#[derive(Clone, Debug, Default)]
pub struct ExactCounts {
    /// Threads the command created (its first thread not counted).
    pub created: u64,
    /// Of which exited before the command's process did.
    pub exited: u64,
    /// The tracer's own CPU time, ns.
    pub tracer_cpu_ns: u64,
    /// Why tracing stopped early, if it did.
    pub error: Option<String>,
    /// The process was running before (`watch`): only threads created since attaching count.
    pub attached: bool,
    /// Counted by the interposer inside the process (nothing stopped), not by ptrace.
    pub by_interposer: bool,
}
