//! Spawn context: what a task carries from the place it was spawned to the worker that runs it —
//! its name, its spawn location, and an opaque context of the program's instrumentation (a
//! `tracing` span, say) — so a task's own spans nest under the span that spawned it, whichever
//! thread runs it.
//!
//! # The mechanism
//!
//! An instrumentation library installs one [`SpawnHook`] per process ([`set_spawn_hook`]): four
//! plain functions over an opaque `u64` token. At each spawn (`Pool::spawn`, `Scope::spawn`,
//! `spawn_future`, `install` from outside the pool, a `join` whose second half may be taken by
//! another worker, a parallel loop's split) the spawning thread calls `capture` and the task keeps
//! the token; the thread that runs the task calls `enter` before the task's body (before each
//! poll, for a future) and `exit` after it, also when it unwinds; `release` is called once when
//! the task is done with the token (or is dropped without running). The runtime knows nothing of
//! what the token means: the `threadlab-tracing` crate's token is a `tracing` span id whose
//! reference it holds.
//!
//! This is what tokio does for `tracing` (its `Instrumented` future enters the span around each
//! poll, tokio-rs/tracing `tracing/src/instrument.rs`) and what rayon was asked for in
//! rayon-rs/rayon#1018 and PR #1282 (a `ThreadPoolBuilder` hook that wraps each job); a hook of
//! plain functions keeps the runtime free of the `tracing` dependency.
//!
//! # Cost
//!
//! With no hook installed and no recording on, a spawn path pays one relaxed load (a flag set
//! when a hook is installed or a recording is on) and a branch, and runs the same code as
//! before: the tagged task is a second instantiation of the spawn path, out of line, taken
//! only when there is something to carry. `join`'s fast path (a plain call) pays nothing:
//! only its registered path, where its second half may move to another worker, captures.
//! With a hook, a spawn costs the hook's `capture` and `release`, a run its `enter` and `exit`.
//!
//! The recorder, when on, writes the task's name (if it has one: `spawn_named`) and its spawn
//! location (`#[track_caller]`) as arguments of the task's span ([`crate::trace::ARG_TASK_NAME`],
//! [`crate::trace::ARG_TASK_LOCATION`]), which the doctor and `compare` use to say *which* task.
//! A spawned task's location (`spawn`, `scope.spawn`, and their named forms) travels with its
//! spawn record instead: the spawning thread defines each location once per buffer chunk and
//! its spawn records name it by a small id (`trace::hooks::spawn`), and the decoder gives the
//! location to the task's span through the spawn's flow, so an empty spawn writes three records
//! (spawn, begin, end), not four. Other tasks (a `join`'s second half, a future's polls, an
//! injected `install`) record theirs on the thread that runs them, as before.

use std::fmt;
use std::future::Future;
use std::panic::Location;
use std::pin::Pin;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::OnceLock;
use std::task::{Context, Poll};

use crate::trace::{hooks, recorder};
use crate::unwind::Payload;

/// The functions an instrumentation library gives the runtime to carry its context into tasks
/// (see the module doc). Tokens are opaque to the runtime; `0` from `capture` means "nothing to
/// carry" (then no other function is called for that task).
///
/// A panic from any of the four is caught where it happens and reported like a panic from a
/// task's value being dropped: on a pool's worker it is counted in
/// [`Metrics::panicked_tasks`](crate::Metrics::panicked_tasks) and handed to the pool's panic
/// handler (printed by default), elsewhere printed. It never unwinds into the runtime, which
/// calls `exit` and `release` while a task unwinds too (a second panic there would abort the
/// process). A `capture` that panicked carries nothing; an `enter` that panicked counts as not
/// entered (no `exit`).
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
/// static CAPTURED: AtomicU64 = AtomicU64::new(0);
/// static ENTERED: AtomicU64 = AtomicU64::new(0);
/// static RELEASED: AtomicU64 = AtomicU64::new(0);
/// static HOOK: threadlab::context::SpawnHook = threadlab::context::SpawnHook {
///     capture: || { CAPTURED.fetch_add(1, Relaxed); 7 },
///     enter: |token| { assert_eq!(token, 7); ENTERED.fetch_add(1, Relaxed); true },
///     exit: |_| {},
///     release: |_| { RELEASED.fetch_add(1, Relaxed); },
/// };
/// threadlab::context::set_spawn_hook(&HOOK).unwrap();
/// let pool = threadlab::Pool::builder().threads(1).build()?;
/// let (tx, rx) = std::sync::mpsc::channel();
/// pool.spawn(move || tx.send(()).unwrap());
/// rx.recv().unwrap();
/// pool.shutdown(); // joins the worker: the task has released its token
/// assert_eq!((CAPTURED.load(Relaxed), ENTERED.load(Relaxed), RELEASED.load(Relaxed)), (1, 1, 1));
/// # Ok::<(), threadlab::BuildError>(())
/// ```
#[derive(Debug)]
pub struct SpawnHook {
    /// On the spawning thread, at the spawn: the context to carry (`0`: none).
    pub capture: fn() -> u64,
    /// On the thread that runs the task, before its body (each poll of a future): makes the
    /// context current. Returns false if it did nothing (then `exit` is not called), e.g.
    /// because the context is already current on this thread.
    pub enter: fn(u64) -> bool,
    /// After the body (poll) returned or unwound, on the same thread, if `enter` returned true.
    pub exit: fn(u64),
    /// Once per captured token, when the task no longer needs it (after its last run, or when
    /// it is dropped without running).
    pub release: fn(u64),
}

/// [`set_spawn_hook`] found another hook installed (a process has one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookAlreadySet;

impl fmt::Display for HookAlreadySet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "threadlab: another spawn-context hook is already installed (a process has one; \
             install the bridge once, at start-up)",
        )
    }
}

impl std::error::Error for HookAlreadySet {}

/// The installed hook (null: none).
static HOOK: AtomicPtr<SpawnHook> = AtomicPtr::new(std::ptr::null_mut());

/// Installs `hook` for the rest of the process: tasks spawned from now on carry its context.
/// Installing the same hook again is a no-op; a different one is refused (contexts captured by
/// the first must be released by it).
pub fn set_spawn_hook(hook: &'static SpawnHook) -> Result<(), HookAlreadySet> {
    let new = hook as *const SpawnHook as *mut SpawnHook;
    // Release: publishes the hook's fields to the Acquire loads in `installed`; Acquire on
    // failure: reads the installed pointer only to compare it.
    match HOOK.compare_exchange(
        std::ptr::null_mut(),
        new,
        Ordering::Release,
        Ordering::Acquire,
    ) {
        Ok(_) => {
            recorder::arm_spawns_for_hook();
            Ok(())
        }
        Err(old) if old == new => Ok(()),
        Err(_) => Err(HookAlreadySet),
    }
}

/// The installed hook, if any. Acquire: pairs with the Release in `set_spawn_hook`, so the
/// hook's fields are visible (on x86 and most targets' plain loads, the same instruction as a
/// relaxed load).
#[inline(always)]
fn installed() -> Option<&'static SpawnHook> {
    let p = HOOK.load(Ordering::Acquire);
    // SAFETY: a non-null pointer came from a `&'static SpawnHook` in `set_spawn_hook`.
    (!p.is_null()).then(|| unsafe { &*p })
}

/// A context captured by the hook; released when dropped.
struct Captured {
    hook: &'static SpawnHook,
    token: u64,
}

impl Drop for Captured {
    fn drop(&mut self) {
        let (release, token) = (self.hook.release, self.token);
        guarded("release", || release(token), ());
    }
}

/// Calls a hook function, catching its panic (reported by [`hook_panicked`]; then `fallback`).
#[inline]
fn guarded<R>(what: &'static str, f: impl FnOnce() -> R, fallback: R) -> R {
    match crate::unwind::halt_unwinding(f) {
        Ok(r) => r,
        Err(p) => {
            hook_panicked(what, p);
            fallback
        }
    }
}

/// A hook function panicked: reported like a panicking drop of a task's value (counted and
/// handed to the pool's panic handler on a worker, printed elsewhere), so it never unwinds
/// into the runtime, which may itself be unwinding a task's panic.
#[cold]
#[inline(never)]
fn hook_panicked(what: &'static str, payload: Payload) {
    let payload = match TO_WORKERS_POOL.get() {
        Some(to_pool) => match to_pool(payload) {
            Ok(()) => return,
            Err(payload) => payload,
        },
        None => payload,
    };
    eprintln!(
        "threadlab: the spawn-context hook's `{what}` panicked: {}",
        crate::unwind::payload_message(&payload)
    );
    crate::unwind::drop_caught_printed(payload);
}

/// Hands a payload to the panic handler of the pool whose worker the calling thread is (`Ok`),
/// or gives it back on any other thread (`Err`). Set at every pool's start (`thread_pool`), which
/// is before any thread is a worker; a function here rather than a call to the worker, so that
/// this file, which the engine's spawn paths use, does not import the engine back.
static TO_WORKERS_POOL: OnceLock<fn(Payload) -> Result<(), Payload>> = OnceLock::new();

/// Where [`hook_panicked`] sends a hook's panic on a worker (the same function each time; the
/// first call sets it).
pub(crate) fn route_hook_panics(to_workers_pool: fn(Payload) -> Result<(), Payload>) {
    // Err: already set, by an earlier pool's start, to the same function.
    let _ = TO_WORKERS_POOL.set(to_workers_pool);
}

/// What a task carries from its spawn: the hook's context, its name and spawn location.
pub(crate) struct Tag {
    ctx: Option<Captured>,
    name: Option<&'static str>,
    location: &'static Location<'static>,
    /// The location travels with the task's spawn record (`hooks::spawn_from`), so its run does
    /// not record it again.
    at_spawn: bool,
}

impl Tag {
    /// A tag for a task spawned here, or `None` when there is nothing to carry: no hook, no
    /// recording and no name (then the caller spawns the untagged task, as before).
    #[inline(always)]
    pub(crate) fn capture(
        name: Option<&'static str>,
        location: &'static Location<'static>,
    ) -> Option<Tag> {
        Tag::capture_as(name, location, false)
    }

    /// [`Tag::capture`] for a task whose spawn the recorder notes next on this thread, before
    /// any other spawn (a job made by `HeapJob::into_job_ref` with a kind, or
    /// `ArenaJob::into_job_ref`, right after this call): while recording, the spawn record
    /// carries the location, defined once per thread and location (`hooks::spawn`), and the
    /// task's run records none.
    #[inline(always)]
    pub(crate) fn capture_spawned(
        name: Option<&'static str>,
        location: &'static Location<'static>,
    ) -> Option<Tag> {
        Tag::capture_as(name, location, true)
    }

    /// [`Tag::capture`] (`spawned` false) or [`Tag::capture_spawned`] (true).
    #[inline(always)]
    fn capture_as(
        name: Option<&'static str>,
        location: &'static Location<'static>,
        spawned: bool,
    ) -> Option<Tag> {
        if !recorder::spawns_armed() && name.is_none() {
            return None;
        }
        Tag::capture_cold(installed(), name, location, spawned)
    }

    /// The tag, or `None` when it would carry nothing to the task's run: no context, no name,
    /// and the location travels with the spawn record. Then the caller spawns the untagged task,
    /// as when nothing is recorded: the job stays as small as an untagged one (a tagged job is
    /// about 56 bytes larger, which cost a traced empty spawn a fifth of its time in page
    /// faults) and its run enters nothing.
    #[cold]
    #[inline(never)]
    fn capture_cold(
        hook: Option<&'static SpawnHook>,
        name: Option<&'static str>,
        location: &'static Location<'static>,
        spawned: bool,
    ) -> Option<Tag> {
        let ctx = hook.and_then(|hook| {
            let token = guarded("capture", hook.capture, 0);
            (token != 0).then(|| Captured { hook, token })
        });
        // After the hook's capture (user code, which may record or spawn itself): the next
        // spawn on this thread is the task's.
        let at_spawn = spawned && hooks::enabled() && hooks::spawn_from(location);
        if ctx.is_none() && name.is_none() && at_spawn {
            return None;
        }
        Some(Tag {
            ctx,
            name,
            location,
            at_spawn,
        })
    }

    /// On the thread that runs the task, inside its task span: records the name and location
    /// (when recording) and enters the context, until the guard drops.
    #[inline(never)]
    pub(crate) fn enter(&self) -> Entered<'_> {
        if hooks::enabled() {
            hooks::task_tag(self.name, (!self.at_spawn).then_some(self.location));
        }
        let entered = self
            .ctx
            .as_ref()
            .filter(|c| guarded("enter", || (c.hook.enter)(c.token), false))
            .is_some();
        Entered { tag: self, entered }
    }
}

/// A tag's context entered on this thread; exits it when dropped (also while unwinding).
pub(crate) struct Entered<'a> {
    tag: &'a Tag,
    entered: bool,
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        if let (true, Some(c)) = (self.entered, &self.tag.ctx) {
            guarded("exit", || (c.hook.exit)(c.token), ());
        }
    }
}

/// A future that runs each poll of `inner` inside its tag (the tag is released with it).
pub(crate) struct Tagged<F> {
    tag: Tag,
    inner: F,
}

impl<F> Tagged<F> {
    pub(crate) fn new(tag: Tag, inner: F) -> Tagged<F> {
        Tagged { tag, inner }
    }
}

impl<F: Future> Future for Tagged<F> {
    type Output = F::Output;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: `inner` is structurally pinned: it is never moved out of `self`, and `Tagged`
        // has no `Drop` or `Unpin` impl of its own that could move it.
        let this = unsafe { self.get_unchecked_mut() };
        let _entered = this.tag.enter();
        // SAFETY: as above, `inner` stays where it is while pinned.
        unsafe { Pin::new_unchecked(&mut this.inner) }.poll(cx)
    }
}

/// `f` run inside `tag` (a closure task's body).
#[inline]
pub(crate) fn tagged<F: FnOnce() -> R, R>(tag: Tag, f: F) -> impl FnOnce() -> R {
    move || {
        let _entered = tag.enter();
        f()
    }
}
