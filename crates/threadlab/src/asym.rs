//! Asymmetric fences: a StoreLoad ordering between a hot path and a rare one, where the hot path
//! pays only a compiler fence and the rare path pays for both with one system call.
//!
//! The pattern is Dekker's: thread A stores X then loads Y, thread B stores Y then loads X, and
//! at least one of them must see the other's store. Plain stores and loads do not guarantee that
//! (a store may wait in its CPU's store buffer while the load runs), so each side needs a full
//! fence between its store and its load. When one side runs millions of times a second and the
//! other a few times a second, Linux's `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)` moves the
//! whole cost to the rare side: it makes every running thread of the process execute a full
//! memory barrier (an inter-processor interrupt to each CPU that runs one of them), so a hot side
//! that only keeps the compiler from reordering its store and load ([`light`]) is ordered either
//! before the barrier (its store is visible to the rare side's load) or after it (its load sees
//! the rare side's store). A thread that is not running had its last context switch as a
//! barrier. This is the "asymmetric barrier" of userspace RCU (Desnoyers et al., "User-Level
//! Implementations of Read-Copy Update", IEEE TPDS 2012) and of folly's
//! `asymmetricHeavyBarrier`.
//!
//! Where the system call is missing (an old kernel, a system other than Linux), [`heavy`] says so
//! and the rare side must do without the handshake. Under loom and Miri, which cannot model the
//! system call, both sides are a SeqCst fence: the models check the handshake's logic with the
//! ordering the system call provides.

/// The hot side: keeps the compiler from moving the caller's store after its load; the heavy
/// side's system call orders the processor.
#[inline(always)]
pub(crate) fn light() {
    #[cfg(any(loom, miri))]
    crate::loom::sync::atomic::fence(crate::loom::sync::atomic::Ordering::SeqCst);
    #[cfg(not(any(loom, miri)))]
    std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
}

/// The rare side: a full memory barrier on every running thread of the process. False if the
/// system has no such call (the caller then must not rely on the handshake).
pub(crate) fn heavy() -> bool {
    #[cfg(any(loom, miri))]
    {
        crate::loom::sync::atomic::fence(crate::loom::sync::atomic::Ordering::SeqCst);
        true
    }
    #[cfg(all(not(any(loom, miri)), target_os = "linux"))]
    {
        membarrier::heavy()
    }
    #[cfg(all(not(any(loom, miri)), not(target_os = "linux")))]
    {
        false
    }
}

#[cfg(all(not(any(loom, miri)), target_os = "linux"))]
mod membarrier {
    use std::sync::OnceLock;

    // From the kernel's `include/uapi/linux/membarrier.h`.
    const CMD_QUERY: libc::c_long = 0;
    const CMD_GLOBAL: libc::c_long = 1 << 0;
    const CMD_PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
    const CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

    fn call(cmd: libc::c_long) -> libc::c_long {
        // SAFETY: membarrier takes (cmd, flags, cpu_id) by value and touches no memory of ours.
        unsafe {
            libc::syscall(
                libc::SYS_membarrier,
                cmd,
                0 as libc::c_long,
                0 as libc::c_long,
            )
        }
    }

    /// Which command gives the barrier: the expedited one (registered once per process, a few
    /// microseconds), else the global one (an RCU grace period, milliseconds), else none.
    fn command() -> Option<libc::c_long> {
        static COMMAND: OnceLock<Option<libc::c_long>> = OnceLock::new();
        *COMMAND.get_or_init(|| {
            let supported = call(CMD_QUERY);
            if supported < 0 {
                return None;
            }
            if supported & CMD_PRIVATE_EXPEDITED != 0 && call(CMD_REGISTER_PRIVATE_EXPEDITED) == 0 {
                return Some(CMD_PRIVATE_EXPEDITED);
            }
            (supported & CMD_GLOBAL != 0).then_some(CMD_GLOBAL)
        })
    }

    pub(super) fn heavy() -> bool {
        command().is_some_and(|cmd| call(cmd) == 0)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    /// The system call exists on the kernels this crate is developed and tested on (Linux 4.14
    /// and later have the expedited command), and can be called again and again.
    #[cfg(all(target_os = "linux", not(miri)))]
    #[test]
    fn the_heavy_barrier_is_available_on_linux() {
        for _ in 0..3 {
            assert!(super::heavy());
        }
    }
}
