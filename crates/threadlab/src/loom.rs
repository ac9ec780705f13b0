//! The synchronisation facade: std's atomics, cells and threads normally, loom's mocks under
//! `--cfg loom`, so the same lock-free code is model-checked (the way Tokio routes its atomics
//! through `crate::loom`). Everything lock-free in this crate imports from here, never from `std`
//! directly.
#![allow(dead_code, unused_imports)]

#[cfg(not(loom))]
mod imp {
    pub(crate) mod sync {
        pub(crate) use std::sync::{Arc, Condvar, Mutex, MutexGuard};
        pub(crate) mod atomic {
            pub(crate) use std::sync::atomic::{
                fence, AtomicBool, AtomicI64, AtomicIsize, AtomicPtr, AtomicU32, AtomicU64,
                AtomicU8, AtomicUsize, Ordering,
            };
        }
    }
    pub(crate) mod thread {
        pub(crate) use std::thread::{current, park, park_timeout, spawn, yield_now, Thread};
    }
    pub(crate) mod hint {
        pub(crate) use std::hint::spin_loop;
    }
    pub(crate) mod cell {
        /// `std::cell::UnsafeCell` with loom's closure-based access, so the same code compiles
        /// against both.
        #[derive(Debug, Default)]
        #[repr(transparent)]
        pub(crate) struct UnsafeCell<T: ?Sized>(std::cell::UnsafeCell<T>);

        impl<T> UnsafeCell<T> {
            pub(crate) const fn new(data: T) -> Self {
                UnsafeCell(std::cell::UnsafeCell::new(data))
            }
            pub(crate) fn into_inner(self) -> T {
                self.0.into_inner()
            }
        }

        impl<T: ?Sized> UnsafeCell<T> {
            #[inline(always)]
            pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
                f(self.0.get())
            }
            #[inline(always)]
            pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
                f(self.0.get())
            }
        }
    }
}

#[cfg(loom)]
mod imp {
    pub(crate) mod sync {
        pub(crate) use loom::sync::{Arc, Condvar, Mutex, MutexGuard};
        pub(crate) mod atomic {
            pub(crate) use loom::sync::atomic::{
                fence, AtomicBool, AtomicI64, AtomicIsize, AtomicPtr, AtomicU32, AtomicU64,
                AtomicU8, AtomicUsize, Ordering,
            };
        }
    }
    pub(crate) mod thread {
        pub(crate) use loom::thread::{current, park, spawn, yield_now, Thread};

        /// Loom has no time: a timed park may return at any moment, so it returns at once
        /// (after letting other threads run).
        pub(crate) fn park_timeout(_: std::time::Duration) {
            loom::thread::yield_now();
        }
    }
    pub(crate) mod hint {
        pub(crate) use loom::hint::spin_loop;
    }
    pub(crate) mod cell {
        pub(crate) use loom::cell::UnsafeCell;
    }
}

pub(crate) use imp::*;

/// Runs a loom model of a crate-private protocol and prints how many interleavings it explored
/// (run with `--nocapture` to see the counts).
#[cfg(all(test, loom))]
pub(crate) fn model(f: impl Fn() + Sync + Send + 'static) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let runs = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&runs);
    loom::model::Builder::new().check(move || {
        // Relaxed: a statistic, read after `check` returns.
        counter.fetch_add(1, Ordering::Relaxed);
        f()
    });
    println!(
        "loom: {} interleavings explored",
        runs.load(Ordering::Relaxed)
    );
}
