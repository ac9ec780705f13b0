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

/// How many generations of panicking drops [`drop_caught`] follows (a payload whose `Drop`
/// panics with a payload whose `Drop` panics…) before it leaks the last payload.
pub(crate) const DROP_GENERATIONS: u32 = 8;

/// Drops `value`, a value that came from the user (a closure, a future, an output, a panic
/// payload), where a panic in its `Drop` is caught, so that no such panic unwinds through a
/// worker's loop. Each caught panic is passed to `report`, then its payload is dropped the same
/// way; after [`DROP_GENERATIONS`] panicking drops in a row the last payload is leaked (and said
/// so) rather than followed forever.
#[cold]
pub(crate) fn drop_caught<T>(value: T, mut report: impl FnMut(&Payload)) {
    let mut next = halt_unwinding(move || drop(value)).err();
    let mut generation = 0;
    while let Some(payload) = next {
        report(&payload);
        generation += 1;
        if generation == DROP_GENERATIONS {
            leak_payload(payload);
            return;
        }
        next = halt_unwinding(move || drop(payload)).err();
    }
}

/// [`drop_caught`] where there is no pool to report to: the panics are printed.
#[cold]
pub(crate) fn drop_caught_printed<T>(value: T) {
    drop_caught(value, |p| {
        eprintln!(
            "threadlab: dropping a task's value panicked: {}",
            payload_message(p)
        )
    });
}

/// The payload a task cancelled with its pool stores as its outcome (`crate::task::cell`); the
/// JoinHandle turns it into a panic with [`CANCELLED`] as its message.
pub(crate) struct Cancelled;

/// The message of the panic `JoinHandle::join` and `.await` raise for a cancelled task.
pub(crate) const CANCELLED: &str = "threadlab: the task was cancelled: its pool's workers had all \
     exited (the pool was shut down, or dropped) before the task finished, so it was dropped \
     without finishing";

/// Gives up on a payload after [`DROP_GENERATIONS`] panicking drops in a row: leaks it.
#[cold]
pub(crate) fn leak_payload(payload: Payload) {
    eprintln!(
        "threadlab: {DROP_GENERATIONS} panic payloads in a row panicked when dropped; the last \
         one is leaked"
    );
    std::mem::forget(payload);
}
