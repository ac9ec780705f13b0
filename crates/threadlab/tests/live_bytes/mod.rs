//! A global allocator for tests that bound memory: the system allocator, counting the bytes live
//! now ([`LIVE`]) and the most live at once ([`PEAK`], which a test resets to `LIVE` before the
//! part it measures). A test file installs it with
//! `#[global_allocator] static ALLOC: live_bytes::Counting = live_bytes::Counting;`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// The system allocator, counting.
pub struct Counting;

// Relaxed throughout: the counters pair with nothing; a test reads them on the thread that did
// the work it measures, after it returned, and other threads' small allocations only add noise
// far below the bounds the tests check.
/// Bytes live now.
pub static LIVE: AtomicUsize = AtomicUsize::new(0);
/// The most bytes live at once since a test last stored into it.
pub static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to `System` with the same arguments; the counters only
// observe.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Relaxed) + layout.size();
            PEAK.fetch_max(live, Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Relaxed);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
}
