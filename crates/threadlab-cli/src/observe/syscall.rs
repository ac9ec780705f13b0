//! What a blocked thread is waiting for, from the system call it sits in
//! (`/proc/PID/task/TID/syscall`) and its state letter (`stat`).
//!
//! A `futex` wait is a lock or a condition variable (glibc's and Rust std's mutexes, condition
//! variables, `pthread_join`, and most runtimes' parking all end in `futex`); its first argument
//! is the futex word's address, which is what identifies the lock: threads blocked on the same
//! address wait for the same lock or condition variable. `nanosleep`/`clock_nanosleep` is a sleep;
//! reads, writes, polls and socket calls are I/O. System call numbers: the kernel's
//! `arch/x86/entry/syscalls/syscall_64.tbl` and `include/uapi/asm-generic/unistd.h` (arm64).

/// The state of a thread at one sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// `R`: on a CPU or runnable (the sampler splits the two with `schedstat`).
    Runnable,
    /// Blocked in `futex` on this address: a lock or a condition variable.
    Futex(u64),
    /// Blocked on I/O (a read, write, poll, socket call, or `D` state).
    Io,
    /// In `nanosleep`/`clock_nanosleep`.
    Sleeping,
    /// Blocked in another system call, or in one the sampler may not see.
    Other,
}

#[cfg(target_arch = "x86_64")]
mod nr {
    pub const FUTEX: &[i64] = &[202];
    pub const SLEEP: &[i64] = &[35, 230];
    /// read write pread pwrite readv writev poll select connect accept sendto recvfrom sendmsg
    /// recvmsg epoll_wait io_getevents pselect6 ppoll epoll_pwait accept4 io_uring_enter
    /// epoll_pwait2
    pub const IO: &[i64] = &[
        0, 1, 17, 18, 19, 20, 7, 23, 42, 43, 44, 45, 46, 47, 232, 208, 270, 271, 281, 288, 426, 441,
    ];
}

#[cfg(target_arch = "aarch64")]
mod nr {
    pub const FUTEX: &[i64] = &[98];
    pub const SLEEP: &[i64] = &[101, 115];
    /// epoll_pwait pselect6 ppoll read write readv writev pread64 pwrite64 accept connect
    /// sendto recvfrom sendmsg recvmsg accept4 io_getevents io_uring_enter epoll_pwait2
    pub const IO: &[i64] = &[
        22, 72, 73, 63, 64, 65, 66, 67, 68, 202, 203, 206, 207, 211, 212, 242, 4, 426, 441,
    ];
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
mod nr {
    pub const FUTEX: &[i64] = &[];
    pub const SLEEP: &[i64] = &[];
    pub const IO: &[i64] = &[];
}

/// Classifies a thread from its state letter and, when visible, its system call (number and
/// first argument).
pub fn classify(state: char, syscall: Option<(i64, u64)>) -> State {
    match (state, syscall) {
        ('R', _) => State::Runnable,
        (_, Some((n, addr))) if nr::FUTEX.contains(&n) => State::Futex(addr),
        (_, Some((n, _))) if nr::SLEEP.contains(&n) => State::Sleeping,
        (_, Some((n, _))) if nr::IO.contains(&n) => State::Io,
        ('D', _) => State::Io,
        _ => State::Other,
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    #[test]
    fn futex_sleep_io_other() {
        assert_eq!(classify('S', Some((202, 0x1000))), State::Futex(0x1000));
        assert_eq!(classify('S', Some((230, 0))), State::Sleeping);
        assert_eq!(classify('S', Some((232, 0))), State::Io);
        assert_eq!(classify('D', None), State::Io);
        assert_eq!(classify('S', None), State::Other);
        assert_eq!(classify('R', Some((202, 1))), State::Runnable);
    }
}
