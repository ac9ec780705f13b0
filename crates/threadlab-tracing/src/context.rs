//! The spawn-context hook: carries the spawning thread's current `tracing` span, with its
//! subscriber, into the task, and enters it where the task runs (see the crate doc).
//!
//! A token is a `Box<Carried>` turned into an address: made by `capture` on the spawning
//! thread, read by `enter`/`exit` on the running thread while the task runs, freed by
//! `release` once (threadlab calls it exactly once per non-zero token, after the last
//! `exit`).

use std::cell::RefCell;

use threadlab::context::{set_spawn_hook, HookAlreadySet, SpawnHook};
use tracing_core::dispatcher::{self, DefaultGuard, Dispatch};
use tracing_core::span;

/// The span to enter in the task, and the subscriber it belongs to (the spawning thread's
/// default, which the worker thread may not share: a `with_default` subscriber).
struct Carried {
    dispatch: Dispatch,
    id: span::Id,
}

impl Drop for Carried {
    fn drop(&mut self) {
        // Gives back the reference `capture` took with `clone_span`.
        self.dispatch.try_close(self.id.clone());
    }
}

thread_local! {
    /// The default-subscriber guards of the tasks' entries open on this thread, innermost last.
    static GUARDS: RefCell<Vec<DefaultGuard>> = const { RefCell::new(Vec::new()) };
}

static HOOK: SpawnHook = SpawnHook {
    capture,
    enter,
    exit,
    release,
};

/// Installs the spawn-context hook (done by [`crate::layer`]; call it yourself to carry spans
/// into tasks under another subscriber, e.g. `tracing_subscriber::fmt`). Installing it twice is
/// a no-op; it fails only if another library installed a hook of its own.
///
/// ```
/// threadlab_tracing::install_context().unwrap();
/// threadlab_tracing::install_context().unwrap(); // again: fine
/// ```
pub fn install_context() -> Result<(), HookAlreadySet> {
    set_spawn_hook(&HOOK)
}

fn capture() -> u64 {
    dispatcher::get_default(|d| {
        let current = d.current_span();
        let Some(id) = current.id() else {
            return 0;
        };
        let carried = Carried {
            dispatch: d.clone(),
            id: d.clone_span(id),
        };
        Box::into_raw(Box::new(carried)) as usize as u64
    })
}

/// The `Carried` behind a token.
///
/// # Safety
/// `token` came from `capture` and has not been released.
unsafe fn carried<'a>(token: u64) -> &'a Carried {
    // SAFETY: by the contract, a live `Box<Carried>`.
    unsafe { &*(token as usize as *const Carried) }
}

fn enter(token: u64) -> bool {
    // SAFETY: threadlab calls `enter` only with a token from `capture`, before its `release`.
    let c = unsafe { carried(token) };
    // Taken back by the thread that spawned it, the span is current already.
    let current = dispatcher::get_default(|d| d.current_span().id() == Some(&c.id));
    if current {
        return false;
    }
    let guard = dispatcher::set_default(&c.dispatch);
    c.dispatch.enter(&c.id);
    GUARDS.with(|g| g.borrow_mut().push(guard));
    true
}

fn exit(token: u64) {
    // SAFETY: threadlab calls `exit` after `enter` and before `release` of the same token.
    let c = unsafe { carried(token) };
    c.dispatch.exit(&c.id);
    let guard = GUARDS.with(|g| g.borrow_mut().pop());
    drop(guard);
}

fn release(token: u64) {
    // SAFETY: the token is a `Box<Carried>` from `capture`, released once (threadlab's
    // contract), after its last use.
    drop(unsafe { Box::from_raw(token as usize as *mut Carried) });
}
