//! `Builder::pin_to_cores`: which CPU each worker is pinned to, and how a failure is reported.
//!
//! The CPUs come from the set the process may run on, read with `sched_getaffinity` when the
//! pool is built (what `taskset`, a cgroup's cpuset or a container's `--cpuset-cpus` left it):
//! worker `i` goes to the `i mod n`-th of those `n` CPUs, in increasing order. (Taking
//! `i mod available_parallelism()` as a CPU number instead would name CPUs outside that set,
//! which the kernel refuses, when the set is not `0..n`.)
//!
//! Failures: a user who asked for pinning wants to know it did not happen, at the place they
//! asked for it. So `build()` returns a [`BuildError`](crate::BuildError) when the allowed set
//! cannot be read (or pinning is not supported: Linux only), and it waits for the first
//! threads to pin themselves and returns an error naming the worker, the CPU and the OS's
//! reason if one could not (the threads already started are stopped). A worker's thread
//! started again later by an elastic pool pins itself again; if that fails, the worker runs
//! unpinned, says so once on stderr, and [`WorkerMetrics::pinned_cpu`] shows `None`.
//!
//! [`WorkerMetrics::pinned_cpu`]: crate::WorkerMetrics::pinned_cpu

use std::io;

/// The CPUs the calling thread may run on, in increasing order.
#[cfg(target_os = "linux")]
pub(crate) fn allowed_cpus() -> io::Result<Vec<usize>> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid, writable cpu_set_t of the size passed; pid 0 is this thread.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
        // SAFETY: `cpu` is below CPU_SETSIZE, within the set.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect();
    if cpus.is_empty() {
        return Err(io::Error::other("sched_getaffinity returned an empty set"));
    }
    Ok(cpus)
}

/// Pinning is supported on Linux only.
#[cfg(not(target_os = "linux"))]
pub(crate) fn allowed_cpus() -> io::Result<Vec<usize>> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "pinning threads to CPUs is supported on Linux only",
    ))
}

/// Pins the calling thread to `cpu`.
#[cfg(target_os = "linux")]
pub(crate) fn pin_current(cpu: usize) -> io::Result<()> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET writes within it (the caller's
    // `cpu` came from `allowed_cpus`, below CPU_SETSIZE); the syscall reads it for the calling
    // thread (pid 0).
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Never called: `allowed_cpus` already refused.
#[cfg(not(target_os = "linux"))]
pub(crate) fn pin_current(_cpu: usize) -> io::Result<()> {
    allowed_cpus().map(|_| ())
}

/// A worker's pinning as its counter holds it (`WorkerCounters::pin`): not (yet) pinned.
pub(crate) const PIN_PENDING: i64 = i64::MIN;

/// The counter's value for a pin result: the CPU, or `-2 - errno` for a failure.
pub(crate) fn encode(cpu: usize, r: &io::Result<()>) -> i64 {
    match r {
        Ok(()) => cpu as i64,
        Err(e) => -2 - i64::from(e.raw_os_error().unwrap_or(0)),
    }
}

/// The failure a counter's value says, if any.
pub(crate) fn failure(v: i64) -> Option<io::Error> {
    (v != PIN_PENDING && v <= -2).then(|| io::Error::from_raw_os_error((-2 - v) as i32))
}
