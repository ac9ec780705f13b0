//! The OS's view of a thread, without root: `/proc/<thread>/schedstat` gives the time on a CPU
//! and the time runnable but waiting for one (run-queue delay, i.e. preemption), both in ns
//! (Documentation/scheduler/sched-stats.rst); the voluntary and involuntary context-switch counts
//! come from `getrusage(RUSAGE_THREAD)` (the same counters as `/proc/<thread>/status`, proc(5)).
//!
//! The time on a CPU is read from the thread's CPU-time clock instead (`clock_gettime` of
//! `CLOCK_THREAD_CPUTIME_ID`, or of another thread's clock id, made from its tid as glibc's
//! `pthread_getcpuclockid` makes it): the same counter, brought up to date by the read. The
//! counter in `schedstat` grows only at the scheduler tick or a context switch (`update_curr`),
//! so a sample of a running thread there lags by up to a tick (4 ms at `HZ=250`), and two
//! samples 20 ms apart held more CPU time than the wall time between them: three threads
//! "used" 2.09 of 2 CPUs.
//!
//! For the calling thread, `/proc/thread-self/schedstat` is opened once and re-read with
//! `pread` at offset 0: about 2–3 µs per sample on the development VM, against about 40 µs for
//! opening and reading `schedstat` and `status` each time. Samples are taken at park/unpark, at
//! a new buffer chunk and at thread exit, at most once per [`MIN_INTERVAL_NS`] per thread (so a
//! thread that parks thousands of times a second pays for a few hundred samples at most), plus
//! once per live thread at `stop` (read by tid, from `/proc/self/task/<tid>/`).
//!
//! Linux only: on other systems there are no samples (`read_self` and `read_other` return
//! `None`) and the thread id is a number unique among the live threads.

use std::cell::{Cell, RefCell};
use std::fs::File;
#[cfg(target_os = "linux")]
use std::os::unix::fs::FileExt;

use super::clock;
use super::raw;
use super::raw::Record;

/// At most one sample per thread per this many ns (1 ms).
pub(crate) const MIN_INTERVAL_NS: u64 = 1_000_000;

thread_local! {
    /// This thread's `/proc/thread-self/schedstat`, opened on first use (`None` if it cannot be).
    static SCHEDSTAT: RefCell<Option<Option<File>>> = const { RefCell::new(None) };
    /// `CLOCK_MONOTONIC` of this thread's last sample.
    static LAST_NS: Cell<u64> = const { Cell::new(0) };
}

/// The CPUs this process may run on now (0 if the OS cannot say).
pub(crate) fn available_cpus() -> u32 {
    std::thread::available_parallelism().map_or(0, |n| n.get() as u32)
}

/// The calling thread's OS thread id.
#[cfg(target_os = "linux")]
pub(crate) fn gettid() -> u64 {
    // SAFETY: `gettid` takes no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as u64 }
}

/// Elsewhere: the address of a thread-local, unique among the live threads.
#[cfg(not(target_os = "linux"))]
pub(crate) fn gettid() -> u64 {
    thread_local!(static ID: u8 = const { 0 });
    ID.with(|id| id as *const u8 as u64)
}

/// Cumulative figures of one thread.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct OsSample {
    pub(crate) on_cpu_ns: u64,
    pub(crate) runqueue_ns: u64,
    pub(crate) voluntary: u64,
    pub(crate) involuntary: u64,
}

fn parse_schedstat(text: &str) -> Option<(u64, u64)> {
    let mut it = text.split_whitespace();
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

fn parse_status(text: &str) -> Option<(u64, u64)> {
    let field = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().parse().ok())
    };
    Some((
        field("voluntary_ctxt_switches:")?,
        field("nonvoluntary_ctxt_switches:")?,
    ))
}

/// The CPU time of a thread of this process, up to date, in ns: `clock_gettime` of its CPU-time
/// clock. `tid == None` is the calling thread. `None` if the thread is gone.
#[cfg(target_os = "linux")]
fn cpu_clock_ns(tid: Option<u64>) -> Option<u64> {
    let clock = match tid {
        None => libc::CLOCK_THREAD_CPUTIME_ID,
        // The clock id of thread `tid` (Linux's ABI, `MAKE_THREAD_CPUCLOCK` in the kernel's
        // posix-timers.h, which glibc's `pthread_getcpuclockid` uses): the bitwise complement of
        // the tid shifted left by 3, with the per-thread bit (4) and the scheduler clock (2).
        Some(tid) => (!(i32::try_from(tid).ok()?) << 3) | 4 | 2,
    };
    // SAFETY: `timespec` is plain data for which all-zero bytes are valid.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: `ts` is a valid, writable timespec; an invalid clock id (a thread that is gone)
    // makes the call fail with EINVAL, which is handled.
    if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
        return None;
    }
    Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

/// Reads the figures of thread `tid` of this process (any thread; slow: opens two files).
#[cold]
pub(crate) fn read_other(tid: u64) -> Option<OsSample> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let dir = format!("/proc/self/task/{tid}");
    let sched = std::fs::read_to_string(format!("{dir}/schedstat")).ok()?;
    let status = std::fs::read_to_string(format!("{dir}/status")).ok()?;
    let (lagging_on_cpu_ns, runqueue_ns) = parse_schedstat(&sched)?;
    let (voluntary, involuntary) = parse_status(&status)?;
    #[cfg(target_os = "linux")]
    let on_cpu_ns = cpu_clock_ns(Some(tid)).unwrap_or(lagging_on_cpu_ns);
    #[cfg(not(target_os = "linux"))]
    let on_cpu_ns = lagging_on_cpu_ns;
    Some(OsSample {
        on_cpu_ns,
        runqueue_ns,
        voluntary,
        involuntary,
    })
}

/// Reads the calling thread's figures (fast: a cached file and one syscall). During thread exit,
/// when the cached file's thread-local may already be destroyed (thread-locals are destroyed in
/// reverse order of first use, and the recorder's exit sample runs in an earlier one's
/// destructor), it opens the file afresh.
#[cfg(not(target_os = "linux"))]
pub(crate) fn read_self() -> Option<OsSample> {
    let _ = &SCHEDSTAT;
    None
}

/// Reads the calling thread's figures (see the Linux version).
#[cfg(target_os = "linux")]
#[cold]
pub(crate) fn read_self() -> Option<OsSample> {
    let mut buf = [0u8; 128];
    let cached = SCHEDSTAT.try_with(|cell| {
        let mut cell = cell.borrow_mut();
        let file = cell.get_or_insert_with(|| File::open("/proc/thread-self/schedstat").ok());
        file.as_ref().and_then(|f| f.read_at(&mut buf, 0).ok())
    });
    let n = match cached {
        Ok(n) => n?,
        Err(_) => File::open("/proc/thread-self/schedstat")
            .and_then(|f| f.read_at(&mut buf, 0))
            .ok()?,
    };
    let (lagging_on_cpu_ns, runqueue_ns) = parse_schedstat(std::str::from_utf8(&buf[..n]).ok()?)?;
    let on_cpu_ns = cpu_clock_ns(None).unwrap_or(lagging_on_cpu_ns);
    // SAFETY: `rusage` is plain data for which all-zero bytes are valid.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable rusage; RUSAGE_THREAD is supported since Linux 2.6.26.
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) } != 0 {
        return None;
    }
    Some(OsSample {
        on_cpu_ns,
        runqueue_ns,
        voluntary: ru.ru_nvcsw as u64,
        involuntary: ru.ru_nivcsw as u64,
    })
}

/// Whether the calling thread's last sample is at least [`MIN_INTERVAL_NS`] old; if so, the
/// caller is expected to take one now (the clock is reset).
pub(crate) fn due() -> bool {
    let now = clock::monotonic_ns();
    LAST_NS
        .try_with(|last| {
            let due = last.get() == 0 || now.saturating_sub(last.get()) >= MIN_INTERVAL_NS;
            if due {
                last.set(now);
            }
            due
        })
        .unwrap_or(false)
}

/// The ids of the process's live threads (`/proc/self/task`), sorted; `None` where they cannot
/// be listed (other systems, Miri's isolation). Read when a recording starts, so that a thread
/// that registers later is known to have been born during the recording.
#[cold]
pub(crate) fn live_tids() -> Option<Vec<u64>> {
    #[cfg(all(target_os = "linux", not(miri)))]
    {
        let mut tids: Vec<u64> = std::fs::read_dir("/proc/self/task")
            .ok()?
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .collect();
        tids.sort_unstable();
        Some(tids)
    }
    #[cfg(not(all(target_os = "linux", not(miri))))]
    {
        None
    }
}

/// The sample of a thread at its birth, placed at raw time `ts` before its first real sample,
/// for a thread born during the recording: the kernel starts a new thread's counters at zero
/// (schedstat's run time and run-queue delay, the context-switch counts), so the difference
/// to its first sample is its start-up, before it recorded anything, which belongs to the
/// recording as much as the rest of its life (a thread per task spends more of its time starting
/// and exiting than working: without this, a recording counted only its work).
pub(crate) fn birth_records(ts: u64) -> [Record; 2] {
    [
        Record {
            ts,
            kind: raw::OS_SCHED,
            a: 0,
            b: 0,
            c: 0,
        },
        Record {
            ts,
            kind: raw::OS_SWITCHES,
            a: 0,
            b: 0,
            c: 0,
        },
    ]
}

/// The records of one sample taken at raw time `ts`, of the calling thread (`None`) or of
/// thread `tid`; none if the figures cannot be read.
#[cold]
pub(crate) fn sample_records(ts: u64, tid: Option<u64>) -> Vec<Record> {
    let sample = match tid {
        Some(t) => read_other(t),
        None => read_self(),
    };
    match sample {
        Some(s) => vec![
            Record {
                ts,
                kind: raw::OS_SCHED,
                a: s.on_cpu_ns,
                b: s.runqueue_ns,
                c: 0,
            },
            Record {
                ts,
                kind: raw::OS_SWITCHES,
                a: s.voluntary,
                b: s.involuntary,
                c: 0,
            },
        ],
        None => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_files() {
        assert_eq!(parse_schedstat("123 456 7\n"), Some((123, 456)));
        assert_eq!(parse_schedstat("x"), None);
        let status = "Name:\tx\nvoluntary_ctxt_switches:\t5\nnonvoluntary_ctxt_switches:\t9\n";
        assert_eq!(parse_status(status), Some((5, 9)));
    }

    /// The CPU time between two samples of a thread is at most the wall time between them
    /// (from the start of the first read to the end of the second), for the calling thread and
    /// for another: the counter is up to date at each read, not a scheduler tick behind.
    #[cfg(target_os = "linux")]
    #[test]
    fn cpu_time_between_two_samples_never_exceeds_the_wall_time_between_them() {
        fn spin_for(ns: u64) {
            let until = clock::monotonic_ns() + ns;
            while clock::monotonic_ns() < until {
                std::hint::spin_loop();
            }
        }
        fn check(samples: &[(u64, u64, u64)], whose: &str) {
            assert!(samples.len() >= 20, "{whose}: {} samples", samples.len());
            for (i, a) in samples.iter().enumerate() {
                for b in &samples[i + 1..] {
                    let (cpu, wall) = (b.2.saturating_sub(a.2), b.1 - a.0);
                    assert!(
                        cpu <= wall,
                        "{whose}: {cpu} ns on a CPU in {wall} ns between two samples"
                    );
                }
            }
        }
        let sample = |read: &dyn Fn() -> Option<OsSample>| {
            let from = clock::monotonic_ns();
            let s = read().expect("a sample");
            (from, clock::monotonic_ns(), s.on_cpu_ns)
        };
        let mut mine = Vec::new();
        for _ in 0..60 {
            spin_for(300_000);
            mine.push(sample(&read_self));
        }
        check(&mine, "the calling thread");

        let (tx, rx) = std::sync::mpsc::channel();
        let stop = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                tx.send(gettid()).unwrap();
                // Relaxed: a flag polled until the sampler is done; nothing else is published.
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            });
            let tid = rx.recv().unwrap();
            let mut theirs = Vec::new();
            for _ in 0..60 {
                std::thread::sleep(std::time::Duration::from_micros(300));
                theirs.push(sample(&|| read_other(tid)));
            }
            // Relaxed: see the load.
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            check(&theirs, "another thread");
        });
    }

    #[test]
    fn reads_this_thread() {
        let s = read_self().expect("/proc/thread-self readable on Linux");
        std::thread::sleep(std::time::Duration::from_millis(2));
        let t = read_other(gettid()).expect("/proc/self/task/<tid> readable");
        assert!(
            t.voluntary > s.voluntary,
            "a sleep is a voluntary switch: {s:?} {t:?}"
        );
        let u = read_self().expect("cached schedstat re-read");
        assert!(
            u.voluntary >= t.voluntary && u.on_cpu_ns >= s.on_cpu_ns,
            "{t:?} {u:?}"
        );
    }
}
