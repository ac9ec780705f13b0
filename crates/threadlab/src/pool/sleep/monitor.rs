//! The spare-thread monitor's sleep (`pool/spare.rs`): the monitor watches for workers blocked
//! outside threadlab while any worker is busy, and sleeps for good while every worker is on the
//! sleeper list. Its mark, `monitor_asleep`, is read and written only under the sleeper list's
//! lock: set by the monitor when it finds every worker listed, taken by whoever next takes a
//! worker off the list (a waker, a lender, a worker cancelling its sleep), who then rings the
//! monitor's bell (`pool/bell.rs`) after dropping the lock. So the monitor is awake whenever a
//! worker may be running: the list's lock orders the monitor's look before the worker's leaving
//! (the leaver then rings it) or after (the monitor then sees the list short and stays awake).

use super::Sleep;
use crate::loom::sync::atomic::Ordering;

impl Sleep {
    /// The monitor's question before it sleeps for good: is every worker on the sleeper list
    /// (idle or retired, no seat lent)? If so, it is marked asleep under the list's lock, and
    /// the next waker, lender or sleeper that cancels rings it ([`Sleep::monitor_wanted`]).
    pub(crate) fn monitor_may_sleep(&self) -> bool {
        let sleepers = self.lock_sleepers();
        let all = sleepers.len() == self.num_workers;
        if all {
            // Relaxed: under the sleeper-list lock (see the field).
            self.monitor_asleep.store(true, Ordering::Relaxed);
        }
        all
    }

    /// A worker leaves the sleeper list (the caller holds its lock): true if the monitor slept
    /// and must be rung (after the lock is dropped).
    pub(super) fn monitor_wanted(&self) -> bool {
        // Relaxed: under the sleeper-list lock (see the field), which orders both accesses; the
        // store happens only when the monitor slept, so the common path writes nothing.
        let asleep = self.monitor_asleep.load(Ordering::Relaxed);
        if asleep {
            self.monitor_asleep.store(false, Ordering::Relaxed);
        }
        asleep
    }
}
