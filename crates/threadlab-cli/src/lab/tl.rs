//! The threadlab side of the experiments, in one place: the pool, its parallel loop, its global
//! queue and serial queues as job queues (the kernels that run on every runtime alike are in
//! `programs/`, written over `programs::Par`). Everything here uses only threadlab's public API, exactly as a user would.

use crate::lab::programs::chain::{Job, Spawn};
use std::sync::Arc;
use threadlab::{Pool, SerialQueue};

/// A pool that is shut down (its threads joined, `Pool::shutdown`) when it is dropped.
/// Dropping a plain `Pool` returns at once and its threads exit by themselves; the lab times
/// each runtime with no other threads about, so its pools are joined before the next
/// measurement starts.
pub struct Joined(Option<Pool>);

impl Joined {
    pub fn new(pool: Pool) -> Joined {
        Joined(Some(pool))
    }
}

impl std::ops::Deref for Joined {
    type Target = Pool;
    fn deref(&self) -> &Pool {
        self.0
            .as_ref()
            .expect("Joined: the pool is there until the drop")
    }
}

impl Drop for Joined {
    fn drop(&mut self) {
        if let Some(pool) = self.0.take() {
            pool.shutdown();
        }
    }
}

/// A pool of `threads` workers, joined when dropped.
pub fn pool(threads: usize) -> Result<Joined, String> {
    Pool::builder()
        .threads(threads)
        .build()
        .map(Joined::new)
        .map_err(|e| format!("threadlab pool: {e}"))
}

/// `kernel` on `buf` split into `bands` bands of whole rows (at most one per row), one
/// `scope` task per band: the same split as the work-sharing pool's `for_each_band_in`.
pub fn for_each_band_in(
    pool: &Pool,
    buf: &mut [u8],
    pitch: usize,
    bands: usize,
    kernel: &(dyn Fn(&mut [u8]) + Sync),
) {
    let rows = buf.len() / pitch.max(1);
    let rows_per_band = rows.div_ceil(bands.max(1)).max(1);
    pool.scope(|s| {
        for band in buf.chunks_mut(rows_per_band * pitch) {
            s.spawn(move |_| kernel(band));
        }
    });
}

/// A pool behind an `Arc`, for job queues that outlive a borrow.
pub fn shared_pool(threads: usize) -> Result<Arc<Joined>, String> {
    pool(threads).map(Arc::new)
}

/// `kernel` on every row of `buf` with threadlab's parallel loop over row-sized chunks.
pub fn for_each_row(
    pool: &Pool,
    buf: &mut [u8],
    pitch: usize,
    kernel: &(dyn Fn(&mut [u8]) + Sync),
) {
    pool.install(|| threadlab::for_each_chunk_mut(buf, pitch, |_, row| kernel(row)));
}

/// The pool's global queue: `Pool::spawn` chains.
#[derive(Clone)]
pub struct GlobalQueue(Arc<Joined>);

impl Spawn for GlobalQueue {
    fn spawn(&self, job: Job) -> Result<(), String> {
        self.0.spawn(job);
        Ok(())
    }
}

/// A job queue that spawns on `pool`.
pub fn global_queue(pool: &Arc<Joined>) -> GlobalQueue {
    GlobalQueue(Arc::clone(pool))
}

/// A serial queue on the pool as a job queue.
#[derive(Clone)]
pub struct Serial(SerialQueue);

impl Spawn for Serial {
    fn spawn(&self, job: Job) -> Result<(), String> {
        self.0.push(job);
        Ok(())
    }
}

/// `n` serial queues on `pool`.
pub fn serial_queues(pool: &Pool, n: usize) -> Vec<Serial> {
    (0..n).map(|_| Serial(SerialQueue::new(pool))).collect()
}

/// `n` empty tasks spawned in a scope.
pub fn spawn_empty(pool: &Pool, n: usize) {
    pool.scope(|s| (0..n).for_each(|_| s.spawn(|_| {})));
}
