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
        //! Loom's threads, with std's meaning of `park` and `unpark` built on loom's own.
        //!
        //! std: `unpark` makes the target's token available; a `park` consumes it (returning at
        //! once if it is there) and nothing else looks at it, so an unpark never disturbs a
        //! thread that is waiting for a lock. loom 0.7's `Thread::unpark` instead makes its
        //! target runnable whatever it is blocked on: a target waiting for a loom `Mutex`
        //! resumes without the lock and the model aborts with "expected to be able to acquire
        //! lock" (loom's issue "`JoinHandle.join()` triggers unexpected panic" is the same
        //! defect with `join`). The sleep protocol meets this: a waker or a guest giving a
        //! seat back may unpark a worker that is taking the sleeper list's lock to retire.
        //!
        //! So each model thread has a token word, as in std's futex-based parker (a wait on
        //! the word's address, `library/std/src/sys/sync/thread_parking/futex.rs`): `park`
        //! turns *empty* into *parked* (or consumes *notified* and returns), `unpark` stores
        //! *notified* and calls loom's unpark only if it replaced *parked*. Loom's `park` is
        //! called only between those two, where the thread takes no lock, so loom's unpark
        //! always finds its target parked or about to park.
        pub(crate) use loom::thread::{spawn, yield_now};

        use loom::sync::atomic::{AtomicIsize, Ordering};

        const PARKED: isize = -1;
        const EMPTY: isize = 0;
        const NOTIFIED: isize = 1;

        /// A model thread's token word.
        struct Token(AtomicIsize);

        loom::thread_local! {
            static TOKEN: std::sync::Arc<Token> =
                std::sync::Arc::new(Token(AtomicIsize::new(EMPTY)));
        }

        /// A handle to a model thread, as `std::thread::Thread`.
        #[derive(Clone)]
        pub(crate) struct Thread {
            thread: loom::thread::Thread,
            token: std::sync::Arc<Token>,
        }

        impl std::fmt::Debug for Thread {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct("Thread").finish_non_exhaustive()
            }
        }

        impl Thread {
            /// Makes the thread's token available, waking it if it is parked.
            pub(crate) fn unpark(&self) {
                // Release: pairs with the Acquire RMWs in `park`, so what the caller wrote
                // before is visible when the park returns (std promises the same).
                if self.token.0.swap(NOTIFIED, Ordering::Release) == PARKED {
                    self.thread.unpark();
                }
            }
        }

        /// The calling model thread.
        pub(crate) fn current() -> Thread {
            Thread {
                thread: loom::thread::current(),
                token: TOKEN.with(std::sync::Arc::clone),
            }
        }

        /// Blocks until the token is available, and consumes it.
        pub(crate) fn park() {
            let token = TOKEN.with(std::sync::Arc::clone);
            // Notified → empty (consumed, return), or empty → parked. Acquire: pairs with
            // the Release swap in `unpark`.
            if token.0.fetch_sub(1, Ordering::Acquire) == NOTIFIED {
                return;
            }
            loop {
                loom::thread::park();
                // Acquire: as above. Loom's park returns only once `unpark` saw us parked, so
                // this succeeds at the first turn.
                if token
                    .0
                    .compare_exchange(NOTIFIED, EMPTY, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
                {
                    return;
                }
            }
        }

        /// Loom has no time: a timed park may return at any moment, so it returns at once
        /// (after letting other threads run), leaving any token for the next `park` (a
        /// spurious return there, which std allows).
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
    model_with_preemptions(None, f);
}

/// [`model`], exploring only the interleavings with at most `bound` preemptions (`None`: as
/// `LOOM_MAX_PREEMPTIONS` says, else all of them), for models too large to explore in full.
#[cfg(all(test, loom))]
pub(crate) fn model_with_preemptions(bound: Option<usize>, f: impl Fn() + Sync + Send + 'static) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let runs = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&runs);
    let mut builder = loom::model::Builder::new();
    if bound.is_some() {
        builder.preemption_bound = bound;
    }
    builder.check(move || {
        // Relaxed: a statistic, read after `check` returns.
        counter.fetch_add(1, Ordering::Relaxed);
        f()
    });
    println!(
        "loom: {} interleavings explored",
        runs.load(Ordering::Relaxed)
    );
}

/// The facade's `park`/`unpark` keep std's meaning under loom.
#[cfg(all(test, loom))]
mod tests {
    use super::sync::{Arc, Mutex};
    use super::thread;

    /// An unpark that reaches a thread while it waits for a lock leaves it waiting for the
    /// lock, and its token makes the thread's next `park` return at once. (With loom's own
    /// `Thread::unpark` the waiter resumes without the lock and the model aborts.)
    #[test]
    fn loom_unpark_of_a_thread_waiting_for_a_lock() {
        super::model(|| {
            let lock = Arc::new(Mutex::new(0));
            let main = thread::current();
            let l = Arc::clone(&lock);
            let holder = thread::spawn(move || {
                let mut held = l.lock().unwrap();
                main.unpark();
                *held += 1;
            });
            *lock.lock().unwrap() += 1;
            // The token is there (the holder ran, or will run, its unpark): whether it came
            // before or during our lock wait, or comes now, this park returns.
            thread::park();
            holder.join().unwrap();
            assert_eq!(*lock.lock().unwrap(), 2);
        });
    }
}
