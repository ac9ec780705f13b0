//! The stress run's books and dice: the [`Ledger`] every scenario accounts its tasks, panics and
//! drops in, and the seeded generator [`Rng`] the drivers pick scenarios with.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// The drivers' dice: xorshift64*, seeded per driver with [`Rng::spread`].
pub use super::dice::Rng;

/// The books of a run: what was checked, and every discrepancy. The counters are statistics:
/// Relaxed increments, read by `report` after the scoped threads that wrote them were joined
/// (the join orders them); the discrepancies are behind a mutex.
#[derive(Default)]
pub struct Ledger {
    pub(super) tasks: AtomicU64,
    pub(super) panics: AtomicU64,
    pub(super) pools: AtomicU64,
    pub(super) recordings: AtomicU64,
    pub(super) scenarios: AtomicU64,
    pub(super) cancelled: AtomicU64,
    pub(super) drops: AtomicU64,
    pub(super) spare_threads: AtomicU64,
    pub(super) spare_tasks: AtomicU64,
    /// Per scenario: how many times the drivers ran it.
    pub(super) runs: Mutex<std::collections::BTreeMap<&'static str, u64>>,
    pub(super) discrepancies: Mutex<Vec<String>>,
}

impl Ledger {
    /// `n` tasks were checked to have run exactly once.
    pub fn tasks(&self, n: u64) {
        self.tasks.fetch_add(n, Ordering::Relaxed);
    }
    /// `n` planned panics were delivered exactly once.
    pub fn panics(&self, n: u64) {
        self.panics.fetch_add(n, Ordering::Relaxed);
    }
    /// `n` tasks were checked to be cancelled exactly once (woken after their pool was
    /// dropped: dropped once, and their handles said so).
    pub fn cancelled(&self, n: u64) {
        self.cancelled.fetch_add(n, Ordering::Relaxed);
    }
    /// `n` values whose `Drop` panics were checked to be dropped exactly once, their panics
    /// reported once.
    pub fn drops(&self, n: u64) {
        self.drops.fetch_add(n, Ordering::Relaxed);
    }
    /// A pool started `threads` spare threads, which ran `tasks` tasks.
    pub fn spares(&self, threads: u64, tasks: u64) {
        self.spare_threads.fetch_add(threads, Ordering::Relaxed);
        self.spare_tasks.fetch_add(tasks, Ordering::Relaxed);
    }
    /// A driver ran scenario `name` once more.
    pub(super) fn ran(&self, name: &'static str) {
        *self
            .runs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(name)
            .or_default() += 1;
    }
    /// A pool was built (and will be dropped).
    pub fn pool_built(&self) {
        self.pools.fetch_add(1, Ordering::Relaxed);
    }
    /// Books the pool a scenario built, or the error that kept it from being built as a
    /// discrepancy of scenario `what`.
    pub fn built<P>(&self, what: &str, pool: Result<P, threadlab::BuildError>) -> Option<P> {
        match pool {
            Ok(p) => {
                self.pool_built();
                Some(p)
            }
            Err(e) => {
                self.discrepancy(format!("{what}: {e}"));
                None
            }
        }
    }
    /// Something did not add up.
    pub fn discrepancy(&self, what: String) {
        self.discrepancies
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(what);
    }
    pub(super) fn failed(&self) -> bool {
        !self
            .discrepancies
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
    }
}
