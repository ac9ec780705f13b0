//! The monitor's bell (`super::spare`): how the sleep protocol and a blocking call wake the
//! monitor thread that starts spare threads. A flag under a lock with a condition variable: the
//! monitor sleeps rarely and is woken rarely, so a lock costs nothing that matters here, and a
//! ring cannot be lost between the monitor's look and its wait (the flag is read and consumed
//! under the same lock the ringer sets it under).

use std::sync::{Condvar, Mutex};
use std::time::Duration;

use crate::util::lock;

/// Wakes the monitor: a flag under a lock, with a condition variable. An elastic pool's
/// monitor leaves instead of sleeping for good (the pool keeps no thread while idle); the next
/// ring starts it again through `restart`.
#[derive(Default)]
pub(crate) struct Bell {
    state: Mutex<BellState>,
    cv: Condvar,
    /// An elastic pool's way to start its monitor again (false if it could not).
    pub(crate) restart: std::sync::OnceLock<Box<dyn Fn() -> bool + Send + Sync>>,
}

#[derive(Default)]
struct BellState {
    rung: bool,
    /// The monitor left (an elastic pool): a ring restarts it.
    gone: bool,
}

impl Bell {
    pub(crate) fn ring(&self) {
        let mut state = lock(&self.state);
        if state.gone {
            let Some(restart) = self.restart.get() else {
                return;
            };
            state.gone = false;
            drop(state);
            if !restart() {
                lock(&self.state).gone = true;
            }
            return;
        }
        state.rung = true;
        self.cv.notify_all();
    }

    /// Waits until rung, or until `timeout` (`None`: no timeout); consumes the ring.
    pub(crate) fn wait(&self, timeout: Option<Duration>) {
        let mut state = lock(&self.state);
        match timeout {
            None => {
                while !state.rung {
                    state = self.cv.wait(state).unwrap_or_else(|e| e.into_inner());
                }
            }
            Some(t) => {
                if !state.rung {
                    state = self
                        .cv
                        .wait_timeout(state, t)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
            }
        }
        state.rung = false;
    }

    /// An elastic pool's monitor is about to leave instead of sleeping: false if it was rung
    /// meanwhile (then it goes on); else the next ring restarts it.
    pub(crate) fn leave(&self) -> bool {
        let mut state = lock(&self.state);
        if std::mem::take(&mut state.rung) {
            return false;
        }
        state.gone = true;
        true
    }
}
