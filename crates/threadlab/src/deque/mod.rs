//! The Chase–Lev work-stealing deque (D. Chase, Y. Lev, "Dynamic Circular Work-Stealing
//! Deque", SPAA 2005), with the memory orderings of N. M. Lê, A. Pop, A. Cohen, F. Zappa
//! Nardelli, "Correct and Efficient Work-Stealing for Weak Memory Models", PPoPP 2013.
//!
//! The owner ([`Worker`]) pushes and pops at the *bottom* (LIFO, warm caches); thieves
//! ([`Stealer`]) take from the *top* (FIFO, the oldest and usually largest work). Items live in a
//! growable circular buffer; a full buffer is replaced by one twice as large, and the old ones are
//! kept until the deque is dropped (they cost less memory than the live buffer). The protocol,
//! the races and why no item is lost or taken twice are in `src/deque/README.md`.
//!
//! ```
//! use threadlab::deque::{Steal, Worker};
//!
//! let w = Worker::new();
//! w.push(1);
//! w.push(2);
//! let s = w.stealer();
//! assert_eq!(s.steal(), Steal::Success(1)); // thieves take the oldest
//! assert_eq!(w.pop(), Some(2)); // the owner takes the newest
//! assert_eq!(w.pop(), None);
//! ```

mod buffer;

use self::buffer::Buffer;
use crate::loom::sync::atomic::{fence, AtomicIsize, AtomicPtr, Ordering};
use crate::loom::sync::Arc;
use crate::util::CachePadded;
use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;
use std::mem::MaybeUninit;

/// Capacity of a new deque's buffer. Tiny under loom so that models reach growth.
#[cfg(not(loom))]
const MIN_CAP: usize = 64;
#[cfg(loom)]
const MIN_CAP: usize = 2;

/// The most items one `steal_batch_and_pop` moves (the one it returns included).
pub const MAX_BATCH: usize = 32;

/// The result of a steal attempt.
#[must_use]
#[derive(Debug, PartialEq, Eq)]
pub enum Steal<T> {
    /// The queue was empty.
    Empty,
    /// One item was taken.
    Success(T),
    /// Lost a race with another thread; try again.
    Retry,
}

impl<T> Steal<T> {
    /// The stolen item, if any.
    pub fn success(self) -> Option<T> {
        match self {
            Steal::Success(t) => Some(t),
            _ => None,
        }
    }

    /// True for [`Steal::Retry`].
    pub fn is_retry(&self) -> bool {
        matches!(self, Steal::Retry)
    }
}

/// The state both sides share.
struct Inner<T> {
    /// Position of the oldest item. Only ever increases, and only by a CAS (thieves, and the
    /// owner when it races a thief for the last item).
    top: CachePadded<AtomicIsize>,
    /// One past the newest item. Written only by the owner.
    bottom: CachePadded<AtomicIsize>,
    /// The current buffer. Written only by the owner, when it grows the deque.
    buffer: CachePadded<AtomicPtr<Buffer<T>>>,
}

impl<T> Drop for Inner<T> {
    fn drop(&mut self) {
        // `&mut self`: the last `Arc` is gone, and `Arc`'s drop made every other handle's
        // accesses happen-before this point, so Relaxed loads see the final values.
        let top = self.top.load(Ordering::Relaxed);
        let bottom = self.bottom.load(Ordering::Relaxed);
        let mut buf = self.buffer.load(Ordering::Relaxed);
        // SAFETY: `buf` is the live buffer, allocated by `Buffer::alloc` and owned by the deque;
        // positions `[top, bottom)` hold the items nobody took, each initialised exactly once.
        // The `prev` chain holds every retired buffer once, each freed exactly once here.
        unsafe {
            for pos in top..bottom {
                (*buf).read(pos).assume_init_drop();
            }
            while !buf.is_null() {
                let prev = (*buf).prev;
                drop(Box::from_raw(buf));
                buf = prev;
            }
        }
    }
}

/// Owner side of a work-stealing deque: pushes and pops at the bottom (LIFO).
///
/// `Send` (when `T: Send`) but not `Sync`: exactly one thread owns it at a time.
pub struct Worker<T> {
    inner: Arc<Inner<T>>,
    /// The owner's cached copy of `inner.buffer` (only the owner changes the buffer), so push
    /// and pop do not load the shared pointer.
    buffer: Cell<*mut Buffer<T>>,
    _not_sync: PhantomData<Cell<()>>,
}

// SAFETY: a `Worker` moved to another thread takes its items (`T: Send`) with it; the raw
// buffer pointer it caches is owned by the shared `Inner`, which outlives it. `Cell` keeps it
// `!Sync`, so two threads never act as the owner at once.
unsafe impl<T: Send> Send for Worker<T> {}

/// Thief side of a work-stealing deque: takes from the top (FIFO). Cloneable, `Send + Sync`.
pub struct Stealer<T> {
    inner: Arc<Inner<T>>,
}

// SAFETY: thieves only move items out (`T: Send`), and every shared access goes through the
// atomics of the protocol in `README.md`.
unsafe impl<T: Send> Send for Stealer<T> {}
// SAFETY: as for `Send`: `steal` from several threads at once is what the protocol is for.
unsafe impl<T: Send> Sync for Stealer<T> {}

impl<T> Clone for Stealer<T> {
    fn clone(&self) -> Self {
        Stealer {
            inner: self.inner.clone(),
        }
    }
}

impl<T> Default for Worker<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> fmt::Debug for Worker<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Worker").field("len", &self.len()).finish()
    }
}

impl<T> fmt::Debug for Stealer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stealer").field("len", &self.len()).finish()
    }
}

impl<T> Inner<T> {
    /// Items between `top` and `bottom`, clamped at zero (a thief's view may be stale).
    fn len(&self) -> usize {
        // Relaxed: a snapshot for heuristics; the SeqCst fences of the protocol are what make
        // decisions safe, not this figure.
        let b = self.bottom.load(Ordering::Relaxed);
        let t = self.top.load(Ordering::Relaxed);
        b.wrapping_sub(t).max(0) as usize
    }
}

impl<T> Worker<T> {
    /// An empty deque.
    pub fn new() -> Self {
        let buf = Buffer::alloc(MIN_CAP, std::ptr::null_mut());
        Worker {
            inner: Arc::new(Inner {
                top: CachePadded::new(AtomicIsize::new(0)),
                bottom: CachePadded::new(AtomicIsize::new(0)),
                buffer: CachePadded::new(AtomicPtr::new(buf)),
            }),
            buffer: Cell::new(buf),
            _not_sync: PhantomData,
        }
    }

    /// Pushes `item` at the bottom.
    #[inline]
    pub fn push(&self, item: T) {
        self.push_uninit(MaybeUninit::new(item));
    }

    #[inline]
    fn push_uninit(&self, item: MaybeUninit<T>) {
        let inner = &*self.inner;
        // Relaxed: only this thread writes `bottom`.
        let b = inner.bottom.load(Ordering::Relaxed);
        // Acquire: pairs with the SeqCst CAS by which a thief took position `t - 1`; its read of
        // that slot happens-before we overwrite it below.
        let t = inner.top.load(Ordering::Acquire);
        let mut buf = self.buffer.get();
        // SAFETY: `buf` is the live buffer, which only this thread replaces.
        if b.wrapping_sub(t) >= unsafe { (*buf).cap() } as isize {
            buf = self.grow(b, t);
        }
        // SAFETY: `b - t < cap`, so position `b` does not alias any item in `[t, b)`, and no
        // thief reads it as an item before the `bottom` store below publishes it.
        unsafe { (*buf).write(b, item) };
        // Release: pairs with the Acquire load of `bottom` in `steal`; a thief that sees `b + 1`
        // sees the item written above. Lê et al. write a Release fence and a Relaxed store; a
        // Release store instead (and Release on every store of `bottom`, see `pop`) gives the
        // same guarantee for every value a thief can read, costs the same on x86 (a plain
        // `mov`), and is understood by ThreadSanitizer, which does not model fences.
        inner.bottom.store(b.wrapping_add(1), Ordering::Release);
    }

    /// Replaces the full buffer by one twice as large holding the same items `[t, b)`.
    #[cold]
    #[inline(never)]
    fn grow(&self, b: isize, t: isize) -> *mut Buffer<T> {
        let old = self.buffer.get();
        // SAFETY: `old` is live (retired buffers are freed only when `Inner` drops).
        let cap = unsafe { (*old).cap() } * 2;
        let new = Buffer::alloc(cap, old);
        for pos in t..b {
            // SAFETY: `new` is not yet published, so only we access it; reading `old` races only
            // with thieves' reads, never with a write (only the owner writes).
            unsafe { (*new).write(pos, (*old).read(pos)) };
        }
        self.buffer.set(new);
        // Release: pairs with the Acquire load of `buffer` in the thieves; one that loads `new`
        // sees the copies made above.
        self.inner.buffer.store(new, Ordering::Release);
        new
    }

    /// Pops the newest item from the bottom, or `None` when the deque is empty.
    #[inline]
    pub fn pop(&self) -> Option<T> {
        let inner = &*self.inner;
        // Relaxed: only this thread writes `bottom`.
        let b = inner.bottom.load(Ordering::Relaxed);
        // Relaxed: a quick emptiness check; `top` only grows, so a stale value can only make the
        // deque look fuller, never emptier, and the full protocol below runs then.
        let t = inner.top.load(Ordering::Relaxed);
        if b.wrapping_sub(t) <= 0 {
            return None;
        }
        let b = b.wrapping_sub(1);
        // Store + SeqCst fence (Lê et al., `take`): the fence pairs with the SeqCst fence in
        // `steal`: either that thief sees this smaller `bottom`, or we see its `top` below. The
        // store is Release (Relaxed in Lê et al.) so that a thief reading this value still
        // synchronises with the pushes of the items below it (see `push`).
        inner.bottom.store(b, Ordering::Release);
        fence(Ordering::SeqCst);
        // Relaxed: ordered by the fence above.
        let t = inner.top.load(Ordering::Relaxed);
        let len = b.wrapping_sub(t);
        if len < 0 {
            // Thieves emptied it first; put `bottom` back to `top`. Release: as in `push`.
            inner.bottom.store(b.wrapping_add(1), Ordering::Release);
            return None;
        }
        // SAFETY: `t <= b`: position `b` holds an item that, when `len > 0`, no thief can take
        // (they stop at our `bottom`), and that we race for with a CAS below when `len == 0`.
        let item = unsafe { (*self.buffer.get()).read(b) };
        if len == 0 {
            // The last item: race the thieves for it on `top`. SeqCst, as in Lê et al.; on
            // failure nothing was written, so Relaxed.
            let won = inner
                .top
                .compare_exchange(t, t.wrapping_add(1), Ordering::SeqCst, Ordering::Relaxed)
                .is_ok();
            // Either way the deque is now empty at `t + 1`. Release: as in `push`.
            inner.bottom.store(b.wrapping_add(1), Ordering::Release);
            if !won {
                // A thief owns the item; our bitwise copy is simply forgotten.
                return None;
            }
        }
        // SAFETY: we won position `b` (no thief could reach it, or our CAS succeeded), and the
        // owner itself initialised it in `push`.
        Some(unsafe { item.assume_init() })
    }

    /// A thief handle for this deque.
    pub fn stealer(&self) -> Stealer<T> {
        Stealer {
            inner: self.inner.clone(),
        }
    }

    /// Number of items (exact when no thief is active).
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// True when the deque holds no item.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T> Stealer<T> {
    /// Takes the oldest item from the top.
    ///
    /// Returns [`Steal::Retry`] when another thief (or the owner, for the last item) won the race.
    pub fn steal(&self) -> Steal<T> {
        let inner = &*self.inner;
        // Acquire: pairs with the SeqCst CAS of the thief that took `t - 1`, so the buffer and
        // `bottom` we read next are at least as new as what it saw.
        let t = inner.top.load(Ordering::Acquire);
        // SeqCst fence: pairs with the one in `pop` (see there).
        fence(Ordering::SeqCst);
        // Acquire: pairs with the Release fence in `push`, so the slot at `t` is initialised.
        let b = inner.bottom.load(Ordering::Acquire);
        if b.wrapping_sub(t) <= 0 {
            return Steal::Empty;
        }
        // Acquire: pairs with the Release store in `grow` (a `consume` load in Lê et al.).
        let buf = inner.buffer.load(Ordering::Acquire);
        // SAFETY: `t < b`; `buf` stays allocated until `Inner` drops. The read is speculative:
        // the value is ours only if the CAS below succeeds (README.md, "The speculative read").
        let item = unsafe { (*buf).read_speculative(t) };
        // SeqCst, as in Lê et al.: orders this claim with the fences above and in `pop`.
        match inner
            .top
            .compare_exchange(t, t.wrapping_add(1), Ordering::SeqCst, Ordering::Relaxed)
        {
            // SAFETY: the CAS made position `t` ours; the owner initialised it before
            // publishing `bottom > t`.
            Ok(_) => Steal::Success(unsafe { item.assume_init() }),
            Err(_) => Steal::Retry,
        }
    }

    /// Steals about half of the items (at most [`MAX_BATCH`]), moves all but the first into
    /// `dest`, and returns the first.
    ///
    /// Each item is claimed with its own CAS on `top`: a single CAS for the whole batch is
    /// unsound against the owner's CAS-free `pop` (README.md, "Why the batch is claimed item by
    /// item"). The batch still saves the thief a victim search per item.
    pub fn steal_batch_and_pop(&self, dest: &Worker<T>) -> Steal<T> {
        let inner = &*self.inner;
        // Orderings as in `steal`.
        let mut t = inner.top.load(Ordering::Acquire);
        fence(Ordering::SeqCst);
        let b = inner.bottom.load(Ordering::Acquire);
        let len = b.wrapping_sub(t);
        if len <= 0 {
            return Steal::Empty;
        }
        let batch = (len as usize).div_ceil(2).min(MAX_BATCH);
        let buf = inner.buffer.load(Ordering::Acquire);
        // SAFETY: as in `steal`.
        let first = unsafe { (*buf).read_speculative(t) };
        if inner
            .top
            .compare_exchange(t, t.wrapping_add(1), Ordering::SeqCst, Ordering::Relaxed)
            .is_err()
        {
            return Steal::Retry;
        }
        t = t.wrapping_add(1);
        for _ in 1..batch {
            // Our successful SeqCst CAS stands for the `top` load of `steal`; the fence and the
            // loads below are those of `steal`, with the same pairings.
            fence(Ordering::SeqCst);
            let b = inner.bottom.load(Ordering::Acquire);
            if b.wrapping_sub(t) <= 0 {
                break;
            }
            let buf = inner.buffer.load(Ordering::Acquire);
            // SAFETY: as in `steal`.
            let item = unsafe { (*buf).read_speculative(t) };
            if inner
                .top
                .compare_exchange(t, t.wrapping_add(1), Ordering::SeqCst, Ordering::Relaxed)
                .is_err()
            {
                break;
            }
            // `dest` is a `Worker` (not `Sync`), so this thread is its owner.
            dest.push_uninit(item);
            t = t.wrapping_add(1);
        }
        // SAFETY: our first CAS made position `t0` ours; it was initialised before `bottom`
        // was published past it.
        Steal::Success(unsafe { first.assume_init() })
    }

    /// True when the deque looks empty (a snapshot).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of items (a snapshot).
    pub fn len(&self) -> usize {
        self.inner.len()
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
