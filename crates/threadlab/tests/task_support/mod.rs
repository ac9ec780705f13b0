//! Helpers shared by the `task_*` tests: the pool tests' deadlock watchdog and a two-player baton
//! that two futures hand back and forth.
#![allow(dead_code, unused_imports)]

use std::future::poll_fn;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::task::{Poll, Waker};

use threadlab::{Pool, WakePolicy};

#[path = "../pool_support/mod.rs"]
mod pool_support;
pub use pool_support::{counting_panics, panic_message, watchdog, watched_pool};

/// Every wake policy, for tests that must hold under each.
pub const POLICIES: [WakePolicy; 3] = [WakePolicy::Default, WakePolicy::Eager, WakePolicy::Lazy];

/// Runs `body` under the watchdog on a fresh pool of `threads` workers with wake policy
/// `policy`.
pub fn with_pool(threads: usize, policy: WakePolicy, body: impl FnOnce(&Pool) + Send + 'static) {
    watchdog(move || {
        let pool = Pool::builder()
            .threads(threads)
            .wake_policy(policy)
            .build()
            .unwrap();
        body(&pool);
    });
}

/// Runs `body` once under each wake policy ([`with_pool`]), given the pool and its policy.
pub fn on_every_policy(threads: usize, body: impl Fn(&Pool, WakePolicy) + Clone + Send + 'static) {
    for policy in POLICIES {
        let body = body.clone();
        with_pool(threads, policy, move |pool| body(pool, policy));
    }
}

/// A baton two players pass back and forth: `wait(me)` completes when it is `me`'s turn,
/// `pass(to)` gives the turn away and wakes the other player.
#[derive(Default)]
pub struct Baton {
    turn: AtomicUsize,
    wakers: Mutex<[Option<Waker>; 2]>,
}

impl Baton {
    /// Waits for `me`'s turn (0 or 1).
    pub async fn wait(&self, me: usize) {
        poll_fn(|cx| {
            if self.turn.load(Ordering::Acquire) == me {
                return Poll::Ready(());
            }
            self.wakers.lock().unwrap()[me] = Some(cx.waker().clone());
            // Re-check after registering: a pass in between found no waker to wake.
            if self.turn.load(Ordering::Acquire) == me {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await
    }

    /// True if player `me` is waiting with a registered waker.
    pub fn has_waiter(&self, me: usize) -> bool {
        self.wakers.lock().unwrap()[me].is_some()
    }

    /// Gives the turn to `to` and wakes it.
    pub fn pass(&self, to: usize) {
        self.turn.store(to, Ordering::Release);
        let waker = self.wakers.lock().unwrap()[to].take();
        if let Some(w) = waker {
            w.wake();
        }
    }
}

/// One player: `rounds` times, wait for the turn, count, pass it on.
pub async fn play(
    baton: std::sync::Arc<Baton>,
    me: usize,
    rounds: usize,
    count: std::sync::Arc<AtomicUsize>,
) {
    for _ in 0..rounds {
        baton.wait(me).await;
        count.fetch_add(1, Ordering::Relaxed);
        baton.pass(1 - me);
    }
}

/// A future that returns `Pending` `n` times, waking itself each time (a yield loop).
pub async fn yield_times(n: usize) {
    let mut left = n;
    poll_fn(move |cx| {
        if left == 0 {
            return Poll::Ready(());
        }
        left -= 1;
        cx.waker().wake_by_ref();
        Poll::Pending
    })
    .await
}
