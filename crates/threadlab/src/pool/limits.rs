//! The system's limits on threads, checked before a pool starts any: a count the system cannot
//! give is refused by `Builder::build` with a [`BuildError`] at once, instead of the process
//! aborting thousands of threads later.
//!
//! Linux has three limits a pool's threads count against (see `proc(5)`, `getrlimit(2)`):
//! - `/proc/sys/kernel/threads-max`, threads in the whole system (the running total is the
//!   denominator of the fourth field of `/proc/loadavg`);
//! - `RLIMIT_NPROC`, threads of this user (the kernel does not apply it to root);
//! - `/proc/sys/vm/max_map_count`, memory mappings of this process. Each Rust thread takes about
//!   [`MAPS_PER_THREAD`] of them (its stack and guard page, the signal stack `std` gives it and
//!   its guard page). Past this limit `std` cannot set up a new thread's guard page and the
//!   process aborts — the failure the check exists for (`threads(100_000)` aborted after about
//!   35 s on a VM whose limit is 65,530 mappings).
//!
//! A limit that cannot be read is not checked; a spawn that fails anyway is still reported as
//! a [`BuildError`] (`Registry::start` joins the threads already started). On systems other
//! than Linux nothing is checked up front (only that last report remains).

use crate::error::BuildError;

/// Memory mappings one thread adds: measured 4.3 on Linux x86-64 with glibc (100 threads of a
/// plain `std::thread::spawn` program), the fraction being malloc's per-thread arenas.
pub(crate) const MAPS_PER_THREAD: usize = 4;

/// The most workers a pool can count: the sleep protocol packs the counts of searching and of
/// sleeping workers into 32 bits each (`super::sleep::State`). [`crate::max_num_threads`].
pub(crate) const MAX_WORKERS: usize = u32::MAX as usize;

/// Refuses `threads` if the pool cannot count that many workers, or if one of the system's
/// limits cannot accommodate that many more threads.
pub(crate) fn check(threads: usize) -> Result<(), BuildError> {
    if threads > MAX_WORKERS {
        return Err(BuildError::limit(
            threads,
            MAX_WORKERS,
            "the pool's own counters (32-bit counts of searching and sleeping workers)",
        ));
    }
    if cfg!(any(miri, loom, not(target_os = "linux"))) {
        // Miri isolates the program from /proc and has no getrlimit; loom's models are small.
        return Ok(());
    }
    if let Some(left) = threads_left_in_system() {
        if threads > left {
            return Err(BuildError::limit(
                threads,
                left,
                "/proc/sys/kernel/threads-max (threads in the system)",
            ));
        }
    }
    if let Some(limit) = user_thread_limit() {
        if threads > limit {
            return Err(BuildError::limit(
                threads,
                limit,
                "RLIMIT_NPROC (ulimit -u)",
            ));
        }
    }
    if let Some(left) = maps_left() {
        let fit = left / MAPS_PER_THREAD;
        if threads > fit {
            return Err(BuildError::limit(
                threads,
                fit,
                "/proc/sys/vm/max_map_count (memory mappings of this process)",
            ));
        }
    }
    Ok(())
}

fn read_number(path: &str) -> Option<usize> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// `threads-max` minus the threads that exist now.
fn threads_left_in_system() -> Option<usize> {
    let max = read_number("/proc/sys/kernel/threads-max")?;
    let loadavg = std::fs::read_to_string("/proc/loadavg").ok()?;
    let running: usize = loadavg
        .split_whitespace()
        .nth(3)?
        .split('/')
        .nth(1)?
        .parse()
        .ok()?;
    Some(max.saturating_sub(running))
}

/// Not checked elsewhere.
#[cfg(not(target_os = "linux"))]
fn user_thread_limit() -> Option<usize> {
    None
}

/// The soft `RLIMIT_NPROC`, unless unlimited or we are root (whom the kernel exempts).
#[cfg(target_os = "linux")]
fn user_thread_limit() -> Option<usize> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return None;
    }
    // SAFETY: a zeroed rlimit is a valid value for getrlimit to overwrite.
    let mut lim: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: `lim` is a valid, writable rlimit.
    if unsafe { libc::getrlimit(libc::RLIMIT_NPROC, &mut lim) } != 0
        || lim.rlim_cur == libc::RLIM_INFINITY
    {
        return None;
    }
    usize::try_from(lim.rlim_cur).ok()
}

/// `max_map_count` minus the mappings this process has now.
fn maps_left() -> Option<usize> {
    let max = read_number("/proc/sys/vm/max_map_count")?;
    let maps = std::fs::read("/proc/self/maps").ok()?;
    let now = maps.iter().filter(|&&b| b == b'\n').count();
    Some(max.saturating_sub(now))
}
