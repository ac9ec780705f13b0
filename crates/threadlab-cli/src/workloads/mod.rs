//! Well-known parallel programs, each written once over the [`Par`] trait (a `join`) or the
//! [`ParScope`] trait (a scope with one task per child), so that serial code, threadlab, Rayon
//! and chili run the very same kernel: only the runtime's fork changes. The `workloads`
//! experiment (`crate::experiments::workloads`) times them.
//!
//! The serial runtime makes the same calls in the same order as the parallel ones, with each
//! half's result passed through `black_box`: without it LLVM turns recursions such as fib's
//! second call into a loop, which no parallel version can do, and the comparison would measure
//! that rewrite instead of the runtime.

pub mod chain;
pub mod image;
pub mod implicit_tree;
pub mod join_kernels;
pub mod rendezvous;
pub mod scope_kernels;
pub mod sorts;
pub mod trickle;

use std::hint::black_box;

/// A runtime's `join`, with the context chili threads through its calls (`()` elsewhere).
pub trait Par {
    /// What a forked closure receives (chili's `Scope`; nothing for the others).
    type Ctx<'c>;
    /// Runs `a` and `b`, potentially in parallel, and returns both results.
    fn join<A, B, RA, RB>(c: &mut Self::Ctx<'_>, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(&mut Self::Ctx<'_>) -> RA + Send,
        B: FnOnce(&mut Self::Ctx<'_>) -> RB + Send,
        RA: Send,
        RB: Send;
}

/// A runtime's scope: `spawn_each(n, f)` opens a scope, spawns one task per `i` in `0..n` that
/// runs `f(i)`, and returns when all finished.
pub trait ParScope {
    /// See the trait.
    fn spawn_each<F: Fn(usize) + Sync>(n: usize, f: F);
}

/// Serial code: both halves in order on the calling thread (see the module doc on `black_box`).
pub struct Serial;
/// `threadlab::join` and `threadlab::scope` (call inside the pool's `install`).
pub struct Threadlab;
/// `rayon::join` and `rayon::scope` (call inside the pool's `install`).
pub struct Rayon;
/// chili's `Scope::join` (join only: chili has no scope with spawns).
pub struct Chili;

impl Par for Serial {
    type Ctx<'c> = ();
    #[inline]
    fn join<A, B, RA, RB>(c: &mut (), a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(&mut ()) -> RA + Send,
        B: FnOnce(&mut ()) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        let ra = black_box(a(c));
        let rb = black_box(b(c));
        (ra, rb)
    }
}

impl ParScope for Serial {
    #[inline]
    fn spawn_each<F: Fn(usize) + Sync>(n: usize, f: F) {
        for i in 0..n {
            black_box(&f)(i);
        }
    }
}

impl Par for Threadlab {
    type Ctx<'c> = ();
    #[inline]
    fn join<A, B, RA, RB>(_: &mut (), a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(&mut ()) -> RA + Send,
        B: FnOnce(&mut ()) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        threadlab::join(|| a(&mut ()), || b(&mut ()))
    }
}

impl ParScope for Threadlab {
    #[inline]
    fn spawn_each<F: Fn(usize) + Sync>(n: usize, f: F) {
        let f = &f;
        threadlab::scope(|s| {
            for i in 0..n {
                s.spawn(move |_| f(i));
            }
        });
    }
}

impl Par for Rayon {
    type Ctx<'c> = ();
    #[inline]
    fn join<A, B, RA, RB>(_: &mut (), a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(&mut ()) -> RA + Send,
        B: FnOnce(&mut ()) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        rayon::join(|| a(&mut ()), || b(&mut ()))
    }
}

impl ParScope for Rayon {
    #[inline]
    fn spawn_each<F: Fn(usize) + Sync>(n: usize, f: F) {
        let f = &f;
        rayon::scope(|s| {
            for i in 0..n {
                s.spawn(move |_| f(i));
            }
        });
    }
}

impl Par for Chili {
    type Ctx<'c> = chili::Scope<'c>;
    #[inline]
    fn join<A, B, RA, RB>(c: &mut chili::Scope<'_>, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(&mut chili::Scope<'_>) -> RA + Send,
        B: FnOnce(&mut chili::Scope<'_>) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        c.join(a, b)
    }
}

/// A small xorshift generator for the workloads' inputs (deterministic, no dependency).
pub fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed | 1;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

#[cfg(test)]
mod tests {
    use super::join_kernels::*;
    use super::scope_kernels::*;
    use super::sorts::*;
    use super::*;

    fn tl_pool() -> threadlab::Pool {
        threadlab::Pool::builder().threads(2).build().unwrap()
    }

    #[test]
    fn join_kernels_agree_across_runtimes() {
        let tl = tl_pool();
        let ry = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let ch = chili::ThreadPool::new();
        assert_eq!(fib::<Serial>(&mut (), 20), 6765);
        assert_eq!(tl.install(|| fib::<Threadlab>(&mut (), 20)), 6765);
        assert_eq!(ry.install(|| fib::<Rayon>(&mut (), 20)), 6765);
        assert_eq!(fib::<Chili>(&mut ch.scope(), 20), 6765);
        let tree = Tree::perfect(10);
        let want = (1..=1023u64).sum::<u64>();
        assert_eq!(tree_sum::<Serial>(&mut (), &tree.root), want);
        assert_eq!(
            tl.install(|| tree_sum::<Threadlab>(&mut (), &tree.root)),
            want
        );
        assert_eq!(tree_sum::<Chili>(&mut ch.scope(), &tree.root), want);
        let tri = triangular::<Serial>(&mut (), 0, 300);
        assert_eq!(tl.install(|| triangular::<Threadlab>(&mut (), 0, 300)), tri);
        assert_eq!(triangular::<Chili>(&mut ch.scope(), 0, 300), tri);
        let (a, b) = (Matrix::random(128, 1), Matrix::random(128, 2));
        let want = a.multiply_naive(&b);
        let mut c = Matrix::zero(128);
        tl.install(|| matmul::<Threadlab>(&mut (), &mut c.data, &a.data, &b.data, 128));
        assert_eq!(c.to_row_major(), want);
        let mut c = Matrix::zero(128);
        matmul::<Chili>(&mut ch.scope(), &mut c.data, &a.data, &b.data, 128);
        assert_eq!(c.to_row_major(), want);
    }

    #[test]
    fn sorts_sort() {
        let tl = tl_pool();
        let mut next = xorshift(7);
        let input: Vec<u32> = (0..50_000).map(|_| next() as u32).collect();
        let mut want = input.clone();
        want.sort_unstable();
        let mut v = input.clone();
        let mut buf = vec![0; v.len()];
        tl.install(|| merge_sort::<Threadlab>(&mut (), &mut v, &mut buf));
        assert_eq!(v, want);
        let mut v = input.clone();
        tl.install(|| quick_sort::<Threadlab>(&mut (), &mut v));
        assert_eq!(v, want);
        let mut v = input;
        quick_sort::<Serial>(&mut (), &mut v);
        assert_eq!(v, want);
    }

    #[test]
    fn scope_kernels_agree_across_runtimes() {
        let tl = tl_pool();
        let ry = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let want = 9_999u64 * 10_000 / 2;
        assert_eq!(skynet::<Serial>(0, 10_000), want);
        assert_eq!(tl.install(|| skynet::<Threadlab>(0, 10_000)), want);
        assert_eq!(ry.install(|| skynet::<Rayon>(0, 10_000)), want);
        // Solutions of the n-queens problem for n = 1..=8 (OEIS A000170).
        let known = [1, 0, 0, 2, 10, 4, 40, 92];
        for n in 1..=8 {
            assert_eq!(nqueens::<Serial>(n), known[n - 1], "serial n={n}");
            assert_eq!(
                tl.install(|| nqueens::<Threadlab>(n)),
                known[n - 1],
                "n={n}"
            );
            assert_eq!(
                ry.install(|| nqueens::<Rayon>(n)),
                known[n - 1],
                "rayon n={n}"
            );
        }
    }
}
