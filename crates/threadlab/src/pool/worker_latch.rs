//! Latches a pool's worker waits on while it runs other work: setting one wakes that worker
//! (`Registry::wake_specific`) if it announced it was going to sleep. Their state is a
//! [`CoreLatch`] (`crate::latch`, which states the hazard every `set` here respects: the latch
//! may be freed the moment it is observably set, so what `set` needs afterwards is copied out
//! first).
//!
//! - [`SpinLatch`]: one job (`join`, an `install` from another pool's worker).
//! - [`CountLatch`]: the jobs of a scope, or the chunks of a partitioned loop.
//!
//! rayon-core's `latch.rs` has the same two (`SpinLatch`, `CountLatch`) with the registry
//! reference for the same reason.

use crate::latch::{CoreLatch, Latch};
use crate::loom::sync::atomic::{AtomicUsize, Ordering};
use crate::loom::sync::Arc;
use crate::pool::registry::Registry;

impl CoreLatch {
    /// Sets a latch that stays alive while its setter uses it (it is held by an `Arc`, as in
    /// `block_on`'s waker), waking worker `target` of `registry` if it announced it was going
    /// to sleep.
    pub(crate) fn set_and_wake(&self, registry: &Registry, target: usize) {
        // SAFETY: `self` is a live reference for the whole call.
        if unsafe { Self::set_core(self) } {
            registry.wake_specific(target);
        }
    }
}

/// A latch for a worker that waits while running other work (`join`, cross-pool `install`).
pub(crate) struct SpinLatch<'r> {
    pub(crate) core: CoreLatch,
    registry: &'r Arc<Registry>,
    target: usize,
    /// Set from another pool's worker: the setter keeps the registry alive itself.
    cross: bool,
}

impl<'r> SpinLatch<'r> {
    pub(crate) fn new(registry: &'r Arc<Registry>, target: usize) -> Self {
        SpinLatch {
            core: CoreLatch::new(),
            registry,
            target,
            cross: false,
        }
    }

    /// For a worker of `registry` waiting on a job that runs in another pool.
    pub(crate) fn cross(registry: &'r Arc<Registry>, target: usize) -> Self {
        SpinLatch {
            cross: true,
            ..SpinLatch::new(registry, target)
        }
    }

    #[inline]
    pub(crate) fn probe(&self) -> bool {
        self.core.probe()
    }
}

impl Latch for SpinLatch<'_> {
    #[inline]
    unsafe fn set(this: *const Self) {
        // SAFETY: `this` is live until the swap inside set_core; everything needed afterwards
        // is copied out first. A same-pool setter is a worker of the target's registry, which
        // holds it alive; a cross-pool setter clones the Arc.
        unsafe {
            let target = (*this).target;
            let keep_alive = if (*this).cross {
                Some(Arc::clone((*this).registry))
            } else {
                None
            };
            let registry: *const Registry = &**(*this).registry;
            if CoreLatch::set_core(&(*this).core) {
                (*registry).wake_specific(target);
            }
            drop(keep_alive);
        }
    }
}

/// Counts outstanding jobs of a scope; set when the count reaches zero. It starts at
/// [`CountLatch::BODY`], a bias that stands for the scope's body and for every job the body's
/// own worker spawned before the body returned (those are counted without atomics by the scope
/// and subtracted in one step by [`CountLatch::release`]).
pub(crate) struct CountLatch {
    pub(crate) core: CoreLatch,
    count: AtomicUsize,
    waiter: Waiter,
}

/// Who waits on a [`CountLatch`], to be woken when it is set.
enum Waiter {
    /// A worker (or the guest of a seat) of `registry`, waiting while it runs other work.
    Worker {
        registry: *const Registry,
        index: usize,
    },
    /// A thread that is no seat of a pool (an `in_place_scope` body's caller), which parks
    /// while it waits (or runs the pool's work as a guest, parking on its own thread likewise).
    Thread(crate::loom::thread::Thread),
}

// SAFETY: `registry` points to a Registry kept alive by the scope's owner (a worker of it) for the
// whole life of the latch; the other fields are atomics and a thread handle (Send + Sync).
unsafe impl Send for CountLatch {}
// SAFETY: as above.
unsafe impl Sync for CountLatch {}

impl CountLatch {
    /// The initial bias: larger than any number of jobs, so the count cannot reach zero before
    /// the body released it.
    pub(crate) const BODY: usize = usize::MAX / 2;

    pub(crate) fn new(registry: &Arc<Registry>, target: usize) -> Self {
        CountLatch {
            core: CoreLatch::new(),
            count: AtomicUsize::new(Self::BODY),
            waiter: Waiter::Worker {
                registry: &**registry,
                index: target,
            },
        }
    }

    /// A latch with the body's bias whose waiter is the calling thread, no seat of any pool.
    pub(crate) fn for_this_thread() -> Self {
        CountLatch {
            core: CoreLatch::new(),
            count: AtomicUsize::new(Self::BODY),
            waiter: Waiter::Thread(crate::loom::thread::current()),
        }
    }

    /// A latch set after exactly `n` (at least 1) calls of [`Latch::set`], with no body bias:
    /// the partitioners count the chunks of a loop with it.
    pub(crate) fn with_count(registry: &Arc<Registry>, target: usize, n: usize) -> Self {
        debug_assert!(n > 0, "CountLatch::with_count: a count of 0 is never set");
        CountLatch {
            count: AtomicUsize::new(n),
            ..CountLatch::new(registry, target)
        }
    }

    /// One more job to wait for. Relaxed: the increment happens before the job is pushed
    /// (which publishes it with Release), and the count cannot reach zero meanwhile because the
    /// caller is itself counted (the body, or a running job of the scope).
    #[inline]
    pub(crate) fn increment(&self) {
        self.count.fetch_add(1, Ordering::Relaxed);
    }

    /// Blocks the calling thread, the latch's waiter (`for_this_thread`), until the latch is
    /// set: it announces that it parks (`CoreLatch::get_sleepy`), so the setter unparks it.
    pub(crate) fn wait_parked(&self) {
        while !self.core.probe() {
            if self.core.get_sleepy() {
                // A spurious return or an unpark before the park only loops once more.
                crate::loom::thread::park();
                self.core.wake_up();
            }
        }
    }
}

impl Latch for CountLatch {
    /// One job finished.
    #[inline]
    unsafe fn set(this: *const Self) {
        // SAFETY: forwarded.
        unsafe { Self::release(this, 1) }
    }
}

impl CountLatch {
    /// Subtracts `n`; the one that reaches zero sets the core latch and wakes the waiter.
    ///
    /// # Safety
    /// `this` is live at the call; it may be freed as soon as the count reaches zero.
    #[inline]
    pub(crate) unsafe fn release(this: *const Self, n: usize) {
        // SAFETY: live until the count reaches zero and the core is set; the fields we need
        // afterwards are copied first.
        unsafe {
            // AcqRel: the jobs' effects (Release) are visible to whoever takes the count to zero
            // (Acquire), which then publishes them through the core latch's SeqCst swap.
            if (*this).count.fetch_sub(n, Ordering::AcqRel) != n {
                return;
            }
            match &(*this).waiter {
                &Waiter::Worker { registry, index } => {
                    if CoreLatch::set_core(&(*this).core) {
                        (*registry).wake_specific(index);
                    }
                }
                Waiter::Thread(thread) => {
                    // A handle of our own (a reference count), taken before the latch may be
                    // freed.
                    let thread = thread.clone();
                    if CoreLatch::set_core(&(*this).core) {
                        thread.unpark();
                    }
                }
            }
        }
    }
}
