//! Futures on the same workers as the fork-join work: [`Pool::spawn_future`](crate::Pool::spawn_future),
//! [`Pool::block_on`](crate::Pool::block_on), [`spawn_future`](crate::spawn_future),
//! [`block_on`](crate::block_on()) (their front ends are in `thread_pool/`), and [`JoinHandle`].
//!
//! A spawned future is a task: one allocation (`cell`) holding a packed state word (`state`),
//! the future, later its output, and the JoinHandle's waker. A task is queued as an ordinary
//! job (a `JobRef` whose run polls the future once), so futures share the deques, the
//! injector, stealing and the sleep protocol with `join`, `scope` and `spawn`, and one pool
//! serves a program that mixes both. Its waker (`waker`) re-queues it: into the run-next slot of
//! the worker that woke it (`crate::pool::run_next`, stealable by idle workers after a short
//! grace), into the injector when woken from outside the pool, or at the back of the queue when
//! it woke itself or its worker's budget of run-next polls is spent (`crate::pool::run_next`,
//! "The budget"). The design follows
//! the multi-threaded executors of Go (`runnext`, `runqsteal`), Tokio (task state word, LIFO
//! slot, `MAX_LIFO_POLLS_PER_TICK`) and *Rendezvous Benchmark Analysis*'s account of Kyo; see each file.
//!
//! Waking a parked worker for a woken task is the [`WakePolicy`](crate::WakePolicy)'s decision
//! (`crate::pool::sleep`, "Wake policies" in its `README.md`): the default wakes nobody for a
//! task placed in a run-next slot, because the worker that placed it is awake and runs it next.
//!
//! Each poll is a task span of kind [`TaskKind::Future`](crate::trace::TaskKind::Future) in the
//! recorder, with an arrow from the wake (or spawn) that queued it.

pub(crate) mod block_on;
pub(crate) mod cell;
pub(crate) mod header;
mod join_handle;
pub(crate) mod schedule;
#[cfg(loom)]
pub mod state;
#[cfg(not(loom))]
pub(crate) mod state;
pub(crate) mod waker;

use std::future::Future;

pub use join_handle::JoinHandle;

use crate::context::{Tag, Tagged};
use crate::pool::registry::Registry;
use std::panic::Location;

/// A future on `registry`, tagged with its name, location and spawn context when there is any
/// to carry (`crate::context`): each poll then runs inside the tag.
#[inline]
pub(crate) fn spawn_tagged<F>(
    registry: &crate::loom::sync::Arc<Registry>,
    name: Option<&'static str>,
    location: &'static Location<'static>,
    future: F,
) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    match Tag::capture(name, location) {
        None => JoinHandle::new(cell::spawn(registry, future)),
        Some(tag) => spawn_with_tag(registry, tag, future),
    }
}

/// The tagged future, out of line: the untagged path stays as small as it was.
#[cold]
#[inline(never)]
fn spawn_with_tag<F>(
    registry: &crate::loom::sync::Arc<Registry>,
    tag: Tag,
    future: F,
) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    JoinHandle::new(cell::spawn(registry, Tagged::new(tag, future)))
}
