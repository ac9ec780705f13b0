//! The programs the experiments run, one file each: job chains (`chain.rs`), the trickle, the
//! image kernel, the rendezvous pair, the allocators, first touch (`numa.rs`), division, false
//! sharing, the iterator kernels, the recorder's timed loops (`recorder.rs`), and the well-known
//! parallel programs of the `workloads` experiment (`crate::lab::experiments::workloads`): fib,
//! trees, skynet, n-queens, sorts and a matrix multiply, each written once over the [`Par`]
//! trait (a `join`) or the [`ParScope`] trait (a scope with one task per child), so that serial
//! code, threadlab, Rayon and chili run the very same kernel: only the runtime's fork changes.
//!
//! The serial runtime makes the same calls in the same order as the parallel ones, with each
//! half's result passed through `black_box`: without it LLVM turns recursions such as fib's
//! second call into a loop, which no parallel version can do, and the comparison would measure
//! that rewrite instead of the runtime.

pub mod alloc;
pub mod chain;
pub mod division;
pub mod falseshare;
pub mod image;
pub mod implicit_tree;
pub mod iter_kernels;
pub mod join_kernels;
pub mod numa;
pub mod pipeline;
pub mod recorder;
pub mod rendezvous;
pub mod scope_kernels;
pub mod sorts;
pub mod trickle;
mod xorshift;

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

/// A program written once over [`Par`] (a join at every fork), as the experiments run it under
/// each join runtime (`peers/each.rs`): on a scratch of each variant's own, with a checksum.
pub trait JoinKernel: Sync {
    /// What one variant's runs work on (a sort's copy of its input, the multiply's output).
    type Scratch: Send;
    /// A variant's scratch.
    fn scratch(&self) -> Self::Scratch;
    /// Readies the scratch before a run, untimed.
    fn refill(&self, _: &mut Self::Scratch) {}
    /// One run under the runtime `P`.
    fn run<P: Par>(&self, x: &mut P::Ctx<'_>, s: &mut Self::Scratch) -> u64;
    /// A run's checksum: its result, unless what it left in the scratch says more.
    fn check(&self, result: u64, _: &Self::Scratch) -> u64 {
        result
    }
}

/// A program written once over [`ParScope`] (a scope at every node).
pub trait ScopeKernel: Sync {
    /// One run under the runtime `S`.
    fn run<S: ParScope>(&self) -> u64;
}

/// Serial code: both halves in order on the calling thread (see the module doc on `black_box`).
pub struct Serial;
/// `threadlab::join` and `threadlab::scope` (call inside the pool's `install`).
pub struct Threadlab;
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

/// [`Par`] and [`ParScope`] for `$runtime` through the free functions `$krate::join(a, b)` and
/// `$krate::scope(|s| s.spawn(|_| …))`, which threadlab and Rayon both have (a macro: a
/// function cannot take another crate's generic functions as a parameter).
macro_rules! par_by_join_and_scope {
    ($runtime:ty, $krate:ident) => {
        impl $crate::lab::programs::Par for $runtime {
            type Ctx<'c> = ();
            #[inline]
            fn join<A, B, RA, RB>(_: &mut (), a: A, b: B) -> (RA, RB)
            where
                A: FnOnce(&mut ()) -> RA + Send,
                B: FnOnce(&mut ()) -> RB + Send,
                RA: Send,
                RB: Send,
            {
                $krate::join(|| a(&mut ()), || b(&mut ()))
            }
        }

        impl $crate::lab::programs::ParScope for $runtime {
            #[inline]
            fn spawn_each<F: Fn(usize) + Sync>(n: usize, f: F) {
                let f = &f;
                $krate::scope(|s| {
                    for i in 0..n {
                        s.spawn(move |_| f(i));
                    }
                });
            }
        }
    };
}
pub(crate) use par_by_join_and_scope;

par_by_join_and_scope!(Threadlab, threadlab);

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
        // chili runs the second closure on the calling thread first and offers the first to
        // the other threads; Rayon and threadlab run the first and offer the second (Rayon
        // documents that only the second may move). Swapped here, so that every runtime walks a
        // kernel in the same order: on a boxed tree that order alone made a 2× difference
        // (`tree_sum_right_first`).
        let (rb, ra) = c.join(b, a);
        (ra, rb)
    }
}

pub use xorshift::xorshift;

#[cfg(test)]
mod tests;
