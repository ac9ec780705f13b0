//! A [`Mutex`] (and [`Condvar`]) that record, per named lock, the time from asking for it to
//! getting it (wait) and from getting it to releasing it (hold), and which thread released a
//! lock that another was waiting for (a hand-off arrow in Perfetto) — the figures the first seed
//! reads from Tracy's lock view (94.86 ms hold against 214.89 ms wait on its work-sharing queue).
//!
//! Built on `std::sync::Mutex`. `lock()` first tries to take the lock; only if that fails does it
//! record a wait and block, so an uncontended lock costs one `try_lock` plus, while recording,
//! two records. Poisoning is ignored: a panic while holding the lock releases it and the next
//! `lock()` gets the data, as with parking_lot.

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::TryLockError;

use crate::trace::hooks;

/// Hands out lock ids, unique in the process (1, 2, …).
static NEXT_LOCK_ID: AtomicU64 = AtomicU64::new(1);

/// A mutual-exclusion lock that records its wait and hold times under its name.
///
/// ```
/// let queue = threadlab::sync::Mutex::named("queue", Vec::new());
/// queue.lock().push(1);
/// assert_eq!(*queue.lock(), vec![1]);
/// ```
pub struct Mutex<T: ?Sized> {
    name: &'static str,
    id: u64,
    /// Threads blocked in `lock` right now.
    waiting: AtomicU32,
    /// Sequence of hand-offs; written only while holding the lock.
    handoffs: AtomicU64,
    inner: std::sync::Mutex<T>,
}

/// Holds the lock; releases it when dropped.
#[must_use = "the lock is released as soon as the guard is dropped"]
pub struct MutexGuard<'a, T: ?Sized> {
    lock: &'a Mutex<T>,
    inner: Option<std::sync::MutexGuard<'a, T>>,
}

impl<T> Mutex<T> {
    /// A lock named `name` (the name its figures are recorded under).
    pub fn named(name: &'static str, value: T) -> Mutex<T> {
        // Relaxed: only uniqueness matters.
        let id = NEXT_LOCK_ID.fetch_add(1, Ordering::Relaxed);
        Mutex {
            name,
            id,
            waiting: AtomicU32::new(0),
            handoffs: AtomicU64::new(0),
            inner: std::sync::Mutex::new(value),
        }
    }

    /// A lock named `"mutex"`.
    pub fn new(value: T) -> Mutex<T> {
        Mutex::named("mutex", value)
    }

    /// Consumes the lock and returns the data.
    pub fn into_inner(self) -> T {
        self.inner.into_inner().unwrap_or_else(|e| e.into_inner())
    }
}

impl<T: ?Sized> Mutex<T> {
    /// The name the lock records under.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Takes the lock, blocking until it is free.
    #[inline]
    pub fn lock(&self) -> MutexGuard<'_, T> {
        match self.inner.try_lock() {
            Ok(g) => self.acquired(g, false),
            Err(TryLockError::Poisoned(p)) => self.acquired(p.into_inner(), false),
            Err(TryLockError::WouldBlock) => self.lock_contended(),
        }
    }

    /// Takes the lock if it is free.
    pub fn try_lock(&self) -> Option<MutexGuard<'_, T>> {
        match self.inner.try_lock() {
            Ok(g) => Some(self.acquired(g, false)),
            Err(TryLockError::Poisoned(p)) => Some(self.acquired(p.into_inner(), false)),
            Err(TryLockError::WouldBlock) => None,
        }
    }

    /// Mutable access without locking (the borrow proves exclusivity).
    pub fn get_mut(&mut self) -> &mut T {
        self.inner.get_mut().unwrap_or_else(|e| e.into_inner())
    }

    #[cold]
    #[inline(never)]
    fn lock_contended(&self) -> MutexGuard<'_, T> {
        hooks::lock_wait(self.name, self.id);
        // Relaxed: a hint for the releaser (`MutexGuard::drop`) only; a late or early view
        // merely loses or adds a hand-off arrow, never affects locking.
        self.waiting.fetch_add(1, Ordering::Relaxed);
        let g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        // Relaxed: as above.
        self.waiting.fetch_sub(1, Ordering::Relaxed);
        self.acquired(g, true)
    }

    #[inline]
    fn acquired<'a>(&'a self, g: std::sync::MutexGuard<'a, T>, waited: bool) -> MutexGuard<'a, T> {
        if hooks::enabled() {
            // Relaxed: written only while holding the lock; the mutex orders it.
            let seq = if waited {
                Some(self.handoffs.load(Ordering::Relaxed))
            } else {
                None
            };
            hooks::lock_acquired(self.name, self.id, seq);
        }
        MutexGuard {
            lock: self,
            inner: Some(g),
        }
    }
}

impl<T: ?Sized> Drop for MutexGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        if hooks::enabled() {
            let m = self.lock;
            // Relaxed: see `lock_contended`.
            let seq = if m.waiting.load(Ordering::Relaxed) > 0 {
                // Relaxed: written only while holding the lock (we still do); the mutex orders
                // it before the next holder's load.
                let s = m.handoffs.load(Ordering::Relaxed) + 1;
                m.handoffs.store(s, Ordering::Relaxed);
                Some(s)
            } else {
                None
            };
            hooks::lock_released(m.name, m.id, seq);
        }
        drop(self.inner.take());
    }
}

impl<T: ?Sized> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.inner
            .as_ref()
            .expect("MutexGuard::deref: guard already released")
    }
}

impl<T: ?Sized> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.inner
            .as_mut()
            .expect("MutexGuard::deref_mut: guard already released")
    }
}

impl<T: ?Sized + std::fmt::Debug> std::fmt::Debug for Mutex<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("Mutex");
        d.field("name", &self.name);
        match self.inner.try_lock() {
            Ok(g) => d.field("data", &&*g),
            Err(TryLockError::Poisoned(p)) => d.field("data", &&*p.into_inner()),
            Err(TryLockError::WouldBlock) => d.field("data", &"<locked>"),
        };
        d.finish()
    }
}

impl<T: ?Sized + std::fmt::Debug> std::fmt::Debug for MutexGuard<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

impl<T: Default> Default for Mutex<T> {
    fn default() -> Self {
        Mutex::new(T::default())
    }
}

/// A condition variable for [`Mutex`]. Waiting releases the lock (recorded as a release), sleeps
/// until notified, then takes the lock again through [`Mutex::lock`]: the time asleep is neither
/// hold nor lock wait, but waiting for the lock after the wake-up is a lock wait, as Tracy records
/// it for the first seed's `condition_variable_any` over a lockable (a `notify_all` that wakes
/// every worker into one lock shows as contention).
///
/// Built like C++'s `condition_variable_any`: a waiter takes an internal gate before it releases
/// the lock and sleeps on the gate; a notifier takes the gate before it notifies. So a notify
/// that follows the waiter's release cannot slip in before the waiter sleeps and be lost.
///
/// ```
/// use std::sync::Arc;
/// let pair = Arc::new((threadlab::sync::Mutex::named("ready", false), threadlab::sync::Condvar::new()));
/// let p = pair.clone();
/// std::thread::spawn(move || { *p.0.lock() = true; p.1.notify_one(); });
/// let mut ready = pair.0.lock();
/// while !*ready { ready = pair.1.wait(ready); }
/// ```
#[derive(Debug, Default)]
pub struct Condvar {
    gate: std::sync::Mutex<()>,
    inner: std::sync::Condvar,
}

impl Condvar {
    /// A new condition variable.
    pub fn new() -> Condvar {
        Condvar {
            gate: std::sync::Mutex::new(()),
            inner: std::sync::Condvar::new(),
        }
    }

    /// Releases the lock, sleeps until notified (or spuriously), takes the lock again.
    pub fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
        let lock = guard.lock;
        let gate = self.gate.lock().unwrap_or_else(|e| e.into_inner());
        // Released while holding the gate: a notifier needs the gate, so it notifies only once
        // this thread sleeps on it.
        drop(guard);
        let gate = self.inner.wait(gate).unwrap_or_else(|e| e.into_inner());
        drop(gate);
        lock.lock()
    }

    /// Wakes one waiting thread.
    pub fn notify_one(&self) {
        let _gate = self.gate.lock().unwrap_or_else(|e| e.into_inner());
        self.inner.notify_one();
    }

    /// Wakes every waiting thread.
    pub fn notify_all(&self) {
        let _gate = self.gate.lock().unwrap_or_else(|e| e.into_inner());
        self.inner.notify_all();
    }
}
