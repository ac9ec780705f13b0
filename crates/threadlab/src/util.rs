//! Small helpers shared by the runtime's rooms.

use std::ops::{Deref, DerefMut};

/// Pads and aligns a value to 128 bytes, so two values that different threads write never share
/// a cache line (128 rather than 64 because Intel's spatial prefetcher pulls cache lines in
/// pairs; crossbeam-utils' `CachePadded` makes the same choice for x86-64).
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct CachePadded<T> {
    value: T,
}

impl<T> CachePadded<T> {
    /// Wraps `value`.
    pub(crate) const fn new(value: T) -> Self {
        CachePadded { value }
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
    }
}
