//! The peers the lab measures threadlab against, built in one place: Rayon's and Tokio's pools
//! and chili's, their queues as job queues for the chains (`programs::chain`), Tokio's
//! spawn-at-every-level fib and tree sum (it has no fork-join), and Go (`go.rs`, for
//! `rendezvous`). Each peer is used through its public API with its defaults, as its users would.
//! The kernels that run on every runtime alike (fib and tree with a join, skynet, sorts) are
//! written once over `programs::Par`.

pub mod each;
pub mod go;
pub mod rayon_on_threadlab;
pub mod subprocess;

use crate::lab::programs::chain::{Job, Spawn};
use crate::lab::programs::par_by_join_and_scope;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// A Rayon pool with `threads` workers.
pub fn rayon_pool(threads: usize) -> Result<Arc<rayon::ThreadPool>, String> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map(Arc::new)
        .map_err(|e| format!("rayon pool: {e}"))
}

/// A multi-thread Tokio runtime with `threads` workers.
pub fn tokio_runtime(threads: usize) -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_time()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))
}

/// A chili pool with `threads` threads (chili counts the calling thread among them).
pub fn chili_pool(threads: usize) -> chili::ThreadPool {
    chili::ThreadPool::with_config(chili::Config {
        thread_count: std::num::NonZero::new(threads),
        ..Default::default()
    })
}

/// The four runtimes the `workloads` and `overhead` experiments compare, each with `threads`
/// workers: threadlab's shared pool ([`crate::lab::tl::shared_pool`]), Rayon's, chili's and Tokio's.
pub struct Runtimes {
    /// threadlab's pool, shared with the other experiments at this size.
    pub tl: Arc<crate::lab::tl::Joined>,
    /// A Rayon pool.
    pub ry: Arc<rayon::ThreadPool>,
    /// A chili pool.
    pub ch: chili::ThreadPool,
    /// A multi-thread Tokio runtime.
    pub rt: tokio::runtime::Runtime,
}

impl Runtimes {
    /// The four, built in this order (see [`Runtimes`]).
    pub fn new(threads: usize) -> Result<Runtimes, String> {
        Ok(Runtimes {
            tl: crate::lab::tl::shared_pool(threads)?,
            ry: rayon_pool(threads)?,
            ch: chili_pool(threads),
            rt: tokio_runtime(threads)?,
        })
    }
}

/// Rayon, the one adapter: its pool's `ThreadPool::spawn` for the chains; `rayon::join` and
/// `rayon::scope` as [`Par`](crate::lab::programs::Par) and
/// [`ParScope`](crate::lab::programs::ParScope) (the kernels call those inside the pool's
/// `install`, as Rayon's users do, so they take no pool: `fib::<Rayon>`).
#[derive(Clone)]
pub struct Rayon(pub Arc<rayon::ThreadPool>);
impl Spawn for Rayon {
    fn spawn(&self, job: Job) -> Result<(), String> {
        self.0.spawn(job);
        Ok(())
    }
}

par_by_join_and_scope!(Rayon, rayon);

/// Tokio: `Handle::spawn` chains on a multi-thread runtime.
#[derive(Clone)]
pub struct Tokio(pub tokio::runtime::Handle);
impl Spawn for Tokio {
    fn spawn(&self, job: Job) -> Result<(), String> {
        drop(self.0.spawn(async move { job() }));
        Ok(())
    }
}

type BoxedTask<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// fib(n) on Tokio: `tokio::spawn` for one half at every level (Tokio has no fork-join).
pub fn tokio_fib(n: u64) -> BoxedTask<u64> {
    Box::pin(async move {
        if n < 2 {
            return n;
        }
        let a = tokio::spawn(tokio_fib(n - 1));
        let b = tokio_fib(n - 2).await;
        a.await.unwrap_or(0) + b
    })
}

/// The implicit binary tree's sum (`programs::implicit_tree`) on Tokio: `tokio::spawn` for
/// the left child at every node.
pub fn tokio_tree(v: Arc<Vec<u64>>, i: usize) -> BoxedTask<u64> {
    Box::pin(async move {
        if i >= v.len() {
            return 0;
        }
        let a = tokio::spawn(tokio_tree(Arc::clone(&v), 2 * i + 1));
        let b = tokio_tree(Arc::clone(&v), 2 * i + 2).await;
        v[i] + a.await.unwrap_or(0) + b
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::programs::chain::run;
    use std::time::Duration;

    #[test]
    fn chains_complete_on_the_peers_queues() {
        let t = Duration::from_secs(30);
        let r = Rayon(rayon_pool(2).unwrap());
        run(&[r.clone(), r], 100, t).unwrap();
        let rt = tokio_runtime(2).unwrap();
        run(&[Tokio(rt.handle().clone())], 100, t).unwrap();
        assert_eq!(rt.block_on(tokio_fib(10)), 55);
        assert_eq!(
            rt.block_on(tokio_tree(Arc::new((0..100).collect()), 0)),
            4950
        );
    }
}
