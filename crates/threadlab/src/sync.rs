//! A [`Mutex`] (with [`Condvar`]) and an [`RwLock`] that record, per named lock, the time from asking for it to
//! getting it (wait) and from getting it to releasing it (hold), and which thread released a
//! lock that another was waiting for (a hand-off arrow in Perfetto) — the figures *Multithreading Isn't Free*
//! reads from Tracy's lock view (94.86 ms hold against 214.89 ms wait on its work-sharing queue).
//!
//! Held across `join`: a worker that waits inside `join`, `scope` or `block_on` runs other
//! queued tasks meanwhile (that is how it never blocks while work exists). If it holds a lock
//! while it waits, and one of those tasks asks for the same lock, the worker waits for itself.
//! With `std::sync::Mutex` (or Rayon's pools) that is a silent deadlock at 0% CPU. A
//! [`Mutex`] records its holder (a per-thread token, stored after the lock is taken and cleared
//! before it is released), and `lock()` panics with the lock's name and this explanation when
//! the thread asking already holds it.
//!
//! Built on `std::sync::Mutex`. `lock()` first tries to take the lock; only if that fails does it
//! record a wait and block, so an uncontended lock costs one `try_lock` plus, while recording,
//! two records. Poisoning is ignored: a panic while holding the lock releases it and the next
//! `lock()` gets the data, as with parking_lot.

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::TryLockError;

use crate::trace::hooks;

/// Hands out lock ids, unique in the process (1, 2, …).
static NEXT_LOCK_ID: AtomicU64 = AtomicU64::new(1);

/// A mutual-exclusion lock that records its wait and hold times under its name.
///
/// Do not hold it across [`join`](crate::join), [`scope`](crate::scope()) or
/// [`block_on`](crate::block_on) on a pool's worker: while waiting there, the worker runs other
/// tasks, and a task that asks for the same lock would wait for its own worker. Instead of
/// that deadlock, `lock()` panics with the lock's name when its thread already holds it.
///
/// ```
/// let lock = threadlab::sync::Mutex::named("books", 0);
/// let _held = lock.lock();
/// let again = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| *lock.lock() += 1));
/// assert!(again.is_err()); // a panic naming "books", not a hang
/// ```
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
    /// The holder's [`thread_token`] (0: none); written only by the holder, to catch a thread
    /// locking again a lock it holds (see "Held across `join`").
    owner: AtomicUsize,
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
            owner: AtomicUsize::new(0),
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
        // Relaxed: only this thread ever stores its own token, and it clears it (in program
        // order) before it releases; so reading its token here means it holds the lock, whatever
        // the other threads did (they store 0 or their own tokens).
        if self.owner.load(Ordering::Relaxed) == thread_token() {
            self.relocked();
        }
        hooks::lock_wait(self.name, self.id);
        // Relaxed: a hint for the releaser (`MutexGuard::drop`) only; a late or early view
        // merely loses or adds a hand-off arrow, never affects locking.
        self.waiting.fetch_add(1, Ordering::Relaxed);
        let g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        // Relaxed: as above.
        self.waiting.fetch_sub(1, Ordering::Relaxed);
        self.acquired(g, true)
    }

    /// This thread asked for a lock it holds: with `std::sync::Mutex` that is a silent
    /// deadlock; say what happened instead.
    #[cold]
    #[inline(never)]
    fn relocked(&self) -> ! {
        panic!(
            "threadlab::sync::Mutex \"{}\": this thread already holds this lock and asked for it \
             again, which would deadlock. On a pool worker this happens when the lock is held \
             across join, scope or block_on: while it waits there, the worker runs other queued \
             tasks, and one of them locked this lock. Release the lock before join/scope/block_on \
             (or take what you need out of it first).",
            self.name
        )
    }

    #[inline]
    fn acquired<'a>(&'a self, g: std::sync::MutexGuard<'a, T>, waited: bool) -> MutexGuard<'a, T> {
        // Relaxed: see `lock_contended`; the lock orders it for everybody else.
        self.owner.store(thread_token(), Ordering::Relaxed);
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
        // Relaxed: see `Mutex::lock_contended`; cleared before the release.
        self.lock.owner.store(0, Ordering::Relaxed);
        drop(self.inner.take());
    }
}

/// A number unique to the calling thread among live threads, never 0: the address of a
/// thread-local.
#[inline]
fn thread_token() -> usize {
    thread_local!(static TOKEN: u8 = const { 0 });
    TOKEN.with(|t| t as *const u8 as usize)
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
/// it for *Multithreading Isn't Free*'s `condition_variable_any` over a lockable (a `notify_all` that wakes
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

/// A reader-writer lock that records wait and hold times under its name, as [`Mutex`] does:
/// many readers or one writer (Tracy's `TracySharedLockable` beside `TracyLockable`, for locks
/// that meet C++'s SharedMutex requirement: "Tracy Profiler" manual, "Marking locks"). A read hold and
/// a write hold are both recorded as holds of the lock on the holding thread's track, so readers
/// holding it at once show as overlapping holds on their threads; a thread that could not take
/// it at once records a wait. A release while some thread waits draws a hand-off arrow to the
/// next thread that gets it after waiting.
///
/// Built on `std::sync::RwLock` (whose fairness between readers and writers is the platform's);
/// poisoning is ignored. A thread that asks for the lock in a way that can only deadlock gets a
/// panic naming the lock instead, as with [`Mutex`] (see "Held across `join`" in the module
/// doc): it holds the write lock and asks for it again (or for a read); it holds a read and asks
/// for the write lock (it would wait for its own read to end); or it holds a read and asks for
/// another while a writer waits (the writer waits for the first read, the new read for the
/// writer). Each thread keeps the ids of the read guards it holds (a short thread-local list,
/// pushed and popped with the guards) for that; it is read only when the lock is contended.
///
/// ```
/// let lock = threadlab::sync::RwLock::named("shared", 0);
/// let _reading = lock.read();
/// let write = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| *lock.write() += 1));
/// assert!(write.is_err()); // a panic naming "shared", not a hang
/// ```
///
/// ```
/// let config = threadlab::sync::RwLock::named("config", vec![1, 2]);
/// {
///     let a = config.read();
///     let b = config.read(); // readers share it
///     assert_eq!(a.len() + b.len(), 4);
/// }
/// config.write().push(3);
/// assert_eq!(*config.read(), vec![1, 2, 3]);
/// ```
pub struct RwLock<T: ?Sized> {
    name: &'static str,
    id: u64,
    /// Threads blocked in `read` or `write` right now.
    waiting: AtomicU32,
    /// Sequence of hand-offs (readers release concurrently: read-modify-writes).
    handoffs: AtomicU64,
    /// The writer's [`thread_token`] (0: none); written only by the writer.
    writer: AtomicUsize,
    inner: std::sync::RwLock<T>,
}

/// Shared access to an [`RwLock`]'s data; released when dropped.
#[must_use = "the lock is released as soon as the guard is dropped"]
pub struct RwLockReadGuard<'a, T: ?Sized> {
    lock: &'a RwLock<T>,
    inner: Option<std::sync::RwLockReadGuard<'a, T>>,
}

/// Exclusive access to an [`RwLock`]'s data; released when dropped.
#[must_use = "the lock is released as soon as the guard is dropped"]
pub struct RwLockWriteGuard<'a, T: ?Sized> {
    lock: &'a RwLock<T>,
    inner: Option<std::sync::RwLockWriteGuard<'a, T>>,
}

impl<T> RwLock<T> {
    /// A lock named `name` (the name its figures are recorded under).
    pub fn named(name: &'static str, value: T) -> RwLock<T> {
        // Relaxed: only uniqueness matters.
        let id = NEXT_LOCK_ID.fetch_add(1, Ordering::Relaxed);
        RwLock {
            name,
            id,
            waiting: AtomicU32::new(0),
            handoffs: AtomicU64::new(0),
            writer: AtomicUsize::new(0),
            inner: std::sync::RwLock::new(value),
        }
    }

    /// A lock named `"rwlock"`.
    pub fn new(value: T) -> RwLock<T> {
        RwLock::named("rwlock", value)
    }

    /// Consumes the lock and returns the data.
    pub fn into_inner(self) -> T {
        self.inner.into_inner().unwrap_or_else(|e| e.into_inner())
    }
}

impl<T: ?Sized> RwLock<T> {
    /// The name the lock records under.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Takes the lock for reading, blocking while a writer holds it.
    #[inline]
    pub fn read(&self) -> RwLockReadGuard<'_, T> {
        let g = match self.inner.try_read() {
            Ok(g) => Some(g),
            Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        };
        let (g, waited) = match g {
            Some(g) => (g, false),
            None => (
                self.contended(|| self.inner.read().unwrap_or_else(|e| e.into_inner())),
                true,
            ),
        };
        self.acquired(waited);
        reads_held(|ids| ids.push(self.id));
        RwLockReadGuard {
            lock: self,
            inner: Some(g),
        }
    }

    /// Takes the lock for writing, blocking while anybody holds it.
    #[inline]
    pub fn write(&self) -> RwLockWriteGuard<'_, T> {
        let g = match self.inner.try_write() {
            Ok(g) => Some(g),
            Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        };
        let (g, waited) = match g {
            Some(g) => (g, false),
            None => (
                self.contended(|| self.inner.write().unwrap_or_else(|e| e.into_inner())),
                true,
            ),
        };
        // Relaxed: as `Mutex::owner`; only this thread stores its own token, and clears it
        // before it releases.
        self.writer.store(thread_token(), Ordering::Relaxed);
        self.acquired(waited);
        RwLockWriteGuard {
            lock: self,
            inner: Some(g),
        }
    }

    /// Mutable access without locking (the borrow proves exclusivity).
    pub fn get_mut(&mut self) -> &mut T {
        self.inner.get_mut().unwrap_or_else(|e| e.into_inner())
    }

    /// Records a wait, blocks in `take`, and returns its guard.
    #[cold]
    #[inline(never)]
    fn contended<G>(&self, take: impl FnOnce() -> G) -> G {
        // Relaxed: see `Mutex::lock_contended`.
        if self.writer.load(Ordering::Relaxed) == thread_token() {
            panic!(
                "threadlab::sync::RwLock \"{}\": this thread holds the write lock and asked for \
                 the lock again, which would deadlock (see threadlab::sync::Mutex on holding a \
                 lock across join, scope or block_on).",
                self.name
            );
        }
        // Contended while this thread holds a read: a write waits for that read, which waits
        // for this thread; a read was refused because a writer waits, and the writer waits for
        // that same read. Either way, nothing can ever let this thread go.
        if reads_held(|ids| ids.contains(&self.id)) {
            panic!(
                "threadlab::sync::RwLock \"{}\": this thread holds a read guard of this lock and \
                 asked for the lock again (for writing, or for reading while a writer waits), \
                 which would deadlock: the request waits for this thread's own read to end. On \
                 a pool worker this happens when a read guard is held across join, scope or \
                 block_on: while it waits there, the worker runs other queued tasks, and one of \
                 them asked for this lock. Drop the read guard first (or copy out what you need).",
                self.name
            );
        }
        hooks::lock_wait(self.name, self.id);
        // Relaxed: a hint for the releasers only, as in `Mutex::lock_contended`.
        self.waiting.fetch_add(1, Ordering::Relaxed);
        let g = take();
        // Relaxed: as above.
        self.waiting.fetch_sub(1, Ordering::Relaxed);
        g
    }

    #[inline]
    fn acquired(&self, waited: bool) {
        if hooks::enabled() {
            // Relaxed: the hand-off number links a release to this acquisition only in the
            // trace; a stale one loses an arrow, never affects locking.
            let seq = waited.then(|| self.handoffs.load(Ordering::Relaxed));
            hooks::lock_acquired(self.name, self.id, seq);
        }
    }

    #[inline]
    fn released(&self) {
        if hooks::enabled() {
            // Relaxed: see `acquired`.
            let seq = (self.waiting.load(Ordering::Relaxed) > 0)
                .then(|| self.handoffs.fetch_add(1, Ordering::Relaxed) + 1);
            hooks::lock_released(self.name, self.id, seq);
        }
    }
}

impl<T: ?Sized> Drop for RwLockReadGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        let id = self.lock.id;
        // The guard is `!Send`: dropped on the thread that pushed its id.
        reads_held(|ids| {
            if let Some(at) = ids.iter().rposition(|&i| i == id) {
                ids.swap_remove(at);
            }
        });
        self.lock.released();
        drop(self.inner.take());
    }
}

/// Runs `f` on the ids of the [`RwLock`]s this thread holds read guards of (one entry per
/// guard). During thread teardown (the list already destroyed) `f` sees an empty list.
#[inline]
fn reads_held<R>(f: impl FnOnce(&mut Vec<u64>) -> R) -> R {
    thread_local!(static READS: std::cell::RefCell<Vec<u64>> = const {
        std::cell::RefCell::new(Vec::new())
    });
    let mut f = Some(f);
    READS
        .try_with(|r| (f.take().expect("called once"))(&mut r.borrow_mut()))
        .unwrap_or_else(|_| (f.take().expect("not called"))(&mut Vec::new()))
}

impl<T: ?Sized> Drop for RwLockWriteGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        self.lock.released();
        // Relaxed: see `RwLock::write`; cleared before the release.
        self.lock.writer.store(0, Ordering::Relaxed);
        drop(self.inner.take());
    }
}

impl<T: ?Sized> Deref for RwLockReadGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.inner
            .as_ref()
            .expect("RwLockReadGuard::deref: guard already released")
    }
}

impl<T: ?Sized> Deref for RwLockWriteGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.inner
            .as_ref()
            .expect("RwLockWriteGuard::deref: guard already released")
    }
}

impl<T: ?Sized> DerefMut for RwLockWriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.inner
            .as_mut()
            .expect("RwLockWriteGuard::deref_mut: guard already released")
    }
}

impl<T: ?Sized> std::fmt::Debug for RwLock<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RwLock").field("name", &self.name).finish()
    }
}

/// The data, as `MutexGuard`'s and std's guards show it.
impl<T: ?Sized + std::fmt::Debug> std::fmt::Debug for RwLockReadGuard<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

/// The data, as `MutexGuard`'s and std's guards show it.
impl<T: ?Sized + std::fmt::Debug> std::fmt::Debug for RwLockWriteGuard<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

impl<T: Default> Default for RwLock<T> {
    fn default() -> Self {
        RwLock::new(T::default())
    }
}
