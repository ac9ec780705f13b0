//! The deque's circular buffer: a power-of-two array of possibly-uninitialised slots indexed by
//! the deque's ever-growing `isize` positions (position `i` lives in slot `i & (cap - 1)`).
//!
//! The buffer never drops the values in it: the deque decides which slots hold live items.
//! Each buffer links to the smaller one it replaced (`prev`), so the deque can free the whole
//! chain when it is dropped (see `README.md`, "Old buffers").

use crate::loom::cell::UnsafeCell;
use std::mem::MaybeUninit;

pub(super) struct Buffer<T> {
    slots: Box<[UnsafeCell<MaybeUninit<T>>]>,
    mask: isize,
    /// The buffer this one replaced, or null. Written once before the buffer is published.
    pub(super) prev: *mut Buffer<T>,
}

impl<T> Buffer<T> {
    /// A heap-allocated buffer of `cap` slots (a power of two), as a raw pointer.
    pub(super) fn alloc(cap: usize, prev: *mut Buffer<T>) -> *mut Buffer<T> {
        debug_assert!(cap.is_power_of_two(), "Buffer::alloc: capacity {cap}");
        let slots = (0..cap)
            .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
            .collect();
        Box::into_raw(Box::new(Buffer {
            slots,
            mask: cap as isize - 1,
            prev,
        }))
    }

    /// Number of slots.
    #[inline]
    pub(super) fn cap(&self) -> usize {
        self.slots.len()
    }

    #[inline]
    fn slot(&self, pos: isize) -> &UnsafeCell<MaybeUninit<T>> {
        // `mask` is `len - 1`, so the index is always in bounds; the bounds check folds away.
        &self.slots[(pos & self.mask) as usize]
    }

    /// Writes `value` at position `pos`, without dropping what was there.
    ///
    /// # Safety
    /// Only the deque's owner writes, and only to a slot that no other thread can be reading
    /// as a live item (position `pos` is outside `[top, bottom)` for every thief that could still
    /// take it; see `README.md`).
    #[inline]
    pub(super) unsafe fn write(&self, pos: isize, value: MaybeUninit<T>) {
        // SAFETY: the caller guarantees exclusive write access to this slot; the pointer comes
        // from a live `UnsafeCell` in `self.slots`.
        self.slot(pos).with_mut(|p| unsafe { p.write(value) })
    }

    /// Reads the bits at position `pos` as a `MaybeUninit<T>` (the owner's reads: `pop`, `grow`,
    /// drop). The copy is never dropped by the buffer.
    ///
    /// # Safety
    /// `pos` must be a position the caller may read: inside `[top, bottom)` as the caller
    /// observed them with the orderings of the algorithm, and no other thread may be writing it.
    #[inline]
    pub(super) unsafe fn read(&self, pos: isize) -> MaybeUninit<T> {
        // SAFETY: the pointer comes from a live `UnsafeCell` in `self.slots` and is aligned;
        // reading a `MaybeUninit<T>` is valid for any bits.
        self.slot(pos).with(|p| unsafe { std::ptr::read(p) })
    }

    /// A thief's read of position `pos`, made *before* its CAS on `top` says whether the item is
    /// its own: the caller `assume_init`s the copy only if it wins, and otherwise lets it go
    /// (never dropped, so losing costs nothing). If it loses, the owner may be overwriting this
    /// slot at the same moment; the read is volatile, as in crossbeam-deque, and has a name of its
    /// own so that `scripts/tsan-suppressions.txt` names exactly it (`README.md`, "The speculative
    /// read").
    ///
    /// # Safety
    /// `pos` must be inside `[top, bottom)` as the caller observed them with the orderings of the
    /// algorithm, and the caller must not use the copy unless its CAS from `pos` succeeds.
    #[inline]
    pub(super) unsafe fn read_speculative(&self, pos: isize) -> MaybeUninit<T> {
        // SAFETY: the pointer comes from a live `UnsafeCell` in `self.slots` and is aligned;
        // reading a `MaybeUninit<T>` is valid for any bits.
        self.slot(pos)
            .with(|p| unsafe { std::ptr::read_volatile(p) })
    }
}
