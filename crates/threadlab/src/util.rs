//! Small helpers shared by the runtime's rooms; [`CachePadded`] is also public, for users' own
//! per-thread data.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::{Mutex, MutexGuard};

/// Pads and aligns a value to 128 bytes, so two values that different threads write never share
/// a cache line.
///
/// When two threads write to different variables that sit in the same cache line, the line
/// moves back and forth between their cores on every write although they share no data ("false
/// sharing": contention that no lock shows, as the allocator-contention follow-up to *The Whipping Boy Approach to Job Scheduling* puts it). Wrapping each
/// thread's slot in `CachePadded` gives it a line of its own. The runtime uses it for the
/// deques' indices, the injector's length, the sleep state and the per-worker counters.
///
/// 128 rather than 64 bytes because Intel's spatial prefetcher pulls cache lines in adjacent
/// pairs, so neighbours 64 bytes apart still interfere; crossbeam-utils' `CachePadded` makes the
/// same choice on x86-64.
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use threadlab::CachePadded;
///
/// // One counter per worker, each on its own cache line.
/// let counters: Vec<CachePadded<AtomicU64>> =
///     (0..4).map(|_| CachePadded::new(AtomicU64::new(0))).collect();
/// threadlab::for_each(0..1000, |i| {
///     counters[i % 4].fetch_add(1, Ordering::Relaxed);
/// });
/// let total: u64 = counters.iter().map(|c| c.load(Ordering::Relaxed)).sum();
/// assert_eq!(total, 1000);
/// assert!(std::mem::align_of::<CachePadded<u8>>() >= 128);
/// ```
#[derive(Default, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(align(128))]
pub struct CachePadded<T> {
    value: T,
}

impl<T> CachePadded<T> {
    /// Wraps `value`.
    ///
    /// ```
    /// let x = threadlab::CachePadded::new(7u32);
    /// assert_eq!(*x, 7);
    /// ```
    pub const fn new(value: T) -> Self {
        CachePadded { value }
    }

    /// Unwraps the value.
    ///
    /// ```
    /// let x = threadlab::CachePadded::new(String::from("a"));
    /// assert_eq!(x.into_inner(), "a");
    /// ```
    pub fn into_inner(self) -> T {
        self.value
    }
}

impl<T> Deref for CachePadded<T> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> DerefMut for CachePadded<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut T {
        &mut self.value
    }
}

impl<T> From<T> for CachePadded<T> {
    fn from(value: T) -> Self {
        CachePadded::new(value)
    }
}

impl<T: fmt::Debug> fmt::Debug for CachePadded<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CachePadded")
            .field("value", &self.value)
            .finish()
    }
}

/// Locks a std mutex, ignoring poisoning: every lock of the crate taken this way guards data that
/// a panic cannot leave half written (flags, handles, moves of `Option`s, whole chunks).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::CachePadded;

    #[test]
    fn padded_values_sit_on_separate_lines() {
        let pair = [CachePadded::new(1u8), CachePadded::new(2u8)];
        let a = &*pair[0] as *const u8 as usize;
        let b = &*pair[1] as *const u8 as usize;
        assert!(b - a >= 128);
        assert_eq!((*pair[0], *pair[1]), (1, 2));
        assert_eq!(std::mem::size_of::<CachePadded<[u8; 129]>>(), 256);
    }
}
