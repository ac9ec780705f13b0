//! Catching and re-raising panics, so a task's panic never aborts the process: it is caught where
//! the task runs and re-raised where somebody waits for the task (`join`, `scope`, `install`), or
//! handed to the pool's panic handler for fire-and-forget tasks.

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};

/// A caught panic payload.
pub(crate) type Payload = Box<dyn Any + Send + 'static>;

/// Runs `f`, catching a panic. The closures that reach here belong to tasks whose results (or
/// panics) are only observed after they finished, so observing a half-updated value is the
/// caller's business, as with `std::thread::spawn`; hence `AssertUnwindSafe`.
#[inline]
pub(crate) fn halt_unwinding<F: FnOnce() -> R, R>(f: F) -> Result<R, Payload> {
    panic::catch_unwind(AssertUnwindSafe(f))
}

/// Re-raises a caught panic in the current thread.
#[cold]
#[inline(never)]
pub(crate) fn resume_unwinding(payload: Payload) -> ! {
    panic::resume_unwind(payload)
}

/// The panic's message, when it carries one (`panic!("...")` gives a `&str` or a `String`).
pub(crate) fn payload_message(payload: &Payload) -> &str {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "<non-string panic payload>"
    }
}
