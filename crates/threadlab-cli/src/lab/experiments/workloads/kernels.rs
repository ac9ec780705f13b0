//! How each runtime runs each of the `workloads` experiment's programs: a kernel written once
//! over [`Par`] ([`JoinKernel`]) runs under serial code, threadlab, Rayon and chili, one over
//! [`ParScope`] ([`ScopeKernel`]) under the three with a scope, each variant on a scratch of
//! its own (a sort's copy of the input, refilled untimed before each run); Tokio runs skynet as
//! spawned futures. [`Kernels::workloads`] lists them in table order with the checksum each run
//! must give.

use crate::lab::peers::{Rayon, Runtimes};
use crate::lab::programs::join_kernels::{
    fib, matmul, tree_sum, tree_sum_right_first, triangular, Matrix, Tree,
};
use crate::lab::programs::scope_kernels::{nqueens, skynet};
use crate::lab::programs::sorts::{merge_sort, quick_sort};
use crate::lab::programs::{xorshift, Chili, Par, ParScope, Serial, Threadlab};
use crate::lab::Size;
use std::future::Future;
use std::pin::Pin;
use std::time::Instant;

/// The variants, in table order; a workload's runs are indexed by them.
pub const VARIANTS: [&str; 5] = ["serial", "threadlab", "rayon", "chili", "tokio"];
pub const SERIAL: usize = 0;
pub const THREADLAB: usize = 1;
pub const RAYON: usize = 2;
pub const CHILI: usize = 3;
pub const TOKIO: usize = 4;

/// One timed run of a variant: its checksum and the seconds of one run of the workload (the
/// input preparation, e.g. a sort's fresh copy, excluded).
pub type Run<'a> = Box<dyn FnMut() -> (u64, f64) + 'a>;

/// A workload: its name, the checksum every variant must return, and the variants it has
/// (by index into [`VARIANTS`]).
pub struct Workload<'a> {
    pub name: String,
    pub expect: u64,
    pub runs: [Option<Run<'a>>; 5],
}

/// A workload written once over [`Par`] (a join at every fork), run under each join runtime
/// on a scratch of each variant's own.
trait JoinKernel: Sync {
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

/// A workload written once over [`ParScope`] (a scope at every node).
trait ScopeKernel: Sync {
    /// One run under the runtime `S`.
    fn run<S: ParScope>(&self) -> u64;
}

/// fib(n) with a join at every call.
struct Fib(u64);
/// The boxed tree's sum, left subtree first (or right first).
struct TreeSum<'t>(&'t Tree, bool);
/// The loop over triangular work.
struct Triangular(u64);
/// Merge sort (`true`) or quick sort of a fresh copy of the input.
struct Sort<'i>(&'i [u32], bool);
/// `c = a · b` into a zeroed matrix of side `n`.
struct Multiply<'i>(&'i Matrix, &'i Matrix, usize);
/// skynet over this many leaves.
struct Skynet(u64);
/// The n-queens search.
struct Queens(usize);

impl JoinKernel for Fib {
    type Scratch = ();
    fn scratch(&self) {}
    fn run<P: Par>(&self, x: &mut P::Ctx<'_>, _: &mut ()) -> u64 {
        fib::<P>(x, self.0)
    }
}

impl JoinKernel for TreeSum<'_> {
    type Scratch = ();
    fn scratch(&self) {}
    fn run<P: Par>(&self, x: &mut P::Ctx<'_>, _: &mut ()) -> u64 {
        match self.1 {
            false => tree_sum::<P>(x, &self.0.root),
            true => tree_sum_right_first::<P>(x, &self.0.root),
        }
    }
}

impl JoinKernel for Triangular {
    type Scratch = ();
    fn scratch(&self) {}
    fn run<P: Par>(&self, x: &mut P::Ctx<'_>, _: &mut ()) -> u64 {
        triangular::<P>(x, 0, self.0)
    }
}

impl JoinKernel for Sort<'_> {
    /// The slice sorted in place, and merge sort's buffer.
    type Scratch = (Vec<u32>, Vec<u32>);
    fn scratch(&self) -> Self::Scratch {
        (self.0.to_vec(), vec![0; self.0.len()])
    }
    fn refill(&self, (v, _): &mut Self::Scratch) {
        v.copy_from_slice(self.0);
    }
    fn run<P: Par>(&self, x: &mut P::Ctx<'_>, (v, buf): &mut Self::Scratch) -> u64 {
        match self.1 {
            true => merge_sort::<P>(x, v, buf),
            false => quick_sort::<P>(x, v),
        }
        0
    }
    fn check(&self, _: u64, (v, _): &Self::Scratch) -> u64 {
        sorted_checksum(v)
    }
}

impl JoinKernel for Multiply<'_> {
    type Scratch = Matrix;
    fn scratch(&self) -> Matrix {
        Matrix::zero(self.2)
    }
    fn refill(&self, c: &mut Matrix) {
        c.data.iter_mut().for_each(|v| *v = 0.0);
    }
    fn run<P: Par>(&self, x: &mut P::Ctx<'_>, c: &mut Matrix) -> u64 {
        matmul::<P>(x, &mut c.data, &self.0.data, &self.1.data, self.2);
        0
    }
    fn check(&self, _: u64, c: &Matrix) -> u64 {
        matrix_checksum(&c.data)
    }
}

impl ScopeKernel for Skynet {
    fn run<S: ParScope>(&self) -> u64 {
        skynet::<S>(0, self.0)
    }
}

impl ScopeKernel for Queens {
    fn run<S: ParScope>(&self) -> u64 {
        nqueens::<S>(self.0)
    }
}

/// A variant's runs of `k`: `call` runs it once under the variant's runtime; a sample is the
/// mean of `reps` back-to-back runs (for a kernel too short to time once: only kernels whose
/// runs leave the scratch as they found it), the refill before them untimed.
fn runs_of<'a, K: JoinKernel>(
    k: &'a K,
    reps: usize,
    mut call: impl FnMut(&K, &mut K::Scratch) -> u64 + 'a,
) -> Run<'a> {
    let mut scratch = k.scratch();
    Box::new(move || {
        k.refill(&mut scratch);
        let start = Instant::now();
        let mut out = 0;
        for _ in 0..reps {
            out = call(k, &mut scratch);
        }
        let secs = start.elapsed().as_secs_f64() / reps as f64;
        (k.check(out, &scratch), secs)
    })
}

/// `k` on the four join runtimes (serial code, threadlab, Rayon, chili).
fn join_runs<'a, K: JoinKernel>(k: &'a K, rt: &'a Runtimes, reps: usize) -> [Option<Run<'a>>; 5] {
    let (tl, ry, ch) = (&*rt.tl, &*rt.ry, &rt.ch);
    [
        Some(runs_of(k, reps, |k, s| k.run::<Serial>(&mut (), s))),
        Some(runs_of(k, reps, move |k, s| {
            tl.install(|| k.run::<Threadlab>(&mut (), s))
        })),
        Some(runs_of(k, reps, move |k, s| {
            ry.install(|| k.run::<Rayon>(&mut (), s))
        })),
        Some(runs_of(k, reps, move |k, s| {
            k.run::<Chili>(&mut ch.scope(), s)
        })),
        None,
    ]
}

/// `k` on the three runtimes with a scope (chili has none).
fn scope_runs<'a, K: ScopeKernel>(k: &'a K, rt: &'a Runtimes) -> [Option<Run<'a>>; 5] {
    let (tl, ry) = (&*rt.tl, &*rt.ry);
    [
        Some(Box::new(move || timed(|| k.run::<Serial>()))),
        Some(Box::new(move || {
            timed(|| tl.install(|| k.run::<Threadlab>()))
        })),
        Some(Box::new(move || timed(|| ry.install(|| k.run::<Rayon>())))),
        None,
        None,
    ]
}

/// The result and the seconds of one call of `f`.
fn timed(f: impl FnOnce() -> u64) -> (u64, f64) {
    let start = Instant::now();
    let out = f();
    (out, start.elapsed().as_secs_f64())
}

/// skynet with Tokio's tasks (the original benchmark's async form): a spawned task per child.
fn skynet_tokio(num: u64, size: u64) -> Pin<Box<dyn Future<Output = u64> + Send>> {
    Box::pin(async move {
        if size == 1 {
            return num;
        }
        let child = size / 10;
        let handles: Vec<_> = (0..10)
            .map(|i| tokio::spawn(skynet_tokio(num + i * child, child)))
            .collect();
        let mut sum = 0;
        for h in handles {
            sum += h.await.unwrap_or(0);
        }
        sum
    })
}

/// A sum of a sorted slice's elements weighted by position: differs from the unsorted one's.
fn sorted_checksum(v: &[u32]) -> u64 {
    let sorted = v.windows(2).all(|w| w[0] <= w[1]);
    let sum = v.iter().enumerate().fold(0u64, |s, (i, &x)| {
        s.wrapping_add((x as u64).wrapping_mul(i as u64 + 1))
    });
    if sorted {
        sum
    } else {
        0
    }
}

fn matrix_checksum(c: &[f64]) -> u64 {
    c.iter().fold(0u64, |s, &x| s.wrapping_add(x as u64))
}

/// The inputs of every size, built once for every pool size.
pub struct Inputs {
    fib_n: u64,
    big: Tree,
    small: Tree,
    /// Runs of the small tree per sample.
    small_reps: usize,
    skynet_size: u64,
    queens: usize,
    unsorted: Vec<u32>,
    tri_n: u64,
    a: Matrix,
    b: Matrix,
    mat_n: usize,
    /// Tokio's skynet runs (`--full` only: its boxed futures take seconds per run).
    tokio_skynet: bool,
}

impl Inputs {
    pub fn new(size: Size) -> Inputs {
        let sort_len: usize = size.pick(1 << 14, 1 << 19, 1 << 23);
        let mat_n: usize = size.pick(64, 256, 512);
        let mut next = xorshift(42);
        Inputs {
            fib_n: size.pick(18, 30, 32),
            big: Tree::perfect(size.pick(12, 20, 24)),
            small: Tree::perfect(10),
            small_reps: size.pick(10, 300, 1000),
            skynet_size: size.pick(10_000, 1_000_000, 1_000_000),
            queens: size.pick(6, 10, 11),
            unsorted: (0..sort_len).map(|_| next() as u32).collect(),
            tri_n: size.pick(200, 2_000, 8_000),
            a: Matrix::random(mat_n, 1),
            b: Matrix::random(mat_n, 2),
            mat_n,
            tokio_skynet: size == Size::Full,
        }
    }
}

/// Every workload's kernel, on the inputs.
pub struct Kernels<'i> {
    fib: Fib,
    big: TreeSum<'i>,
    big_right_first: TreeSum<'i>,
    small: TreeSum<'i>,
    skynet: Skynet,
    queens: Queens,
    merge: Sort<'i>,
    quick: Sort<'i>,
    triangular: Triangular,
    multiply: Multiply<'i>,
}

impl<'i> Kernels<'i> {
    pub fn new(i: &'i Inputs) -> Kernels<'i> {
        Kernels {
            fib: Fib(i.fib_n),
            big: TreeSum(&i.big, false),
            big_right_first: TreeSum(&i.big, true),
            small: TreeSum(&i.small, false),
            skynet: Skynet(i.skynet_size),
            queens: Queens(i.queens),
            merge: Sort(&i.unsorted, true),
            quick: Sort(&i.unsorted, false),
            triangular: Triangular(i.tri_n),
            multiply: Multiply(&i.a, &i.b, i.mat_n),
        }
    }

    /// The workloads in table order with the checksum each must give, on the runtimes `rt`.
    pub fn workloads<'a>(&'a self, i: &Inputs, rt: &'a Runtimes) -> Vec<Workload<'a>> {
        let (big, small, n) = (i.big.nodes, i.small.nodes, i.skynet_size);
        let mut skynet = scope_runs(&self.skynet, rt);
        if i.tokio_skynet {
            let rt = &rt.rt;
            skynet[TOKIO] = Some(Box::new(move || timed(|| rt.block_on(skynet_tokio(0, n)))));
        }
        // The sorts are checked against the standard library's sort.
        let mut sorted = i.unsorted.clone();
        sorted.sort_unstable();
        let (len, sorted) = (sorted.len(), sorted_checksum(&sorted));
        let w =
            |name: String, expect: u64, runs: [Option<Run<'a>>; 5]| Workload { name, expect, runs };
        vec![
            w(
                format!("fib({})", i.fib_n),
                serial(&self.fib),
                join_runs(&self.fib, rt, 1),
            ),
            w(
                format!("boxed tree, {big} nodes"),
                i.big.expected_sum(),
                join_runs(&self.big, rt, 1),
            ),
            w(
                format!("boxed tree, {big} nodes, right subtree first"),
                i.big.expected_sum(),
                join_runs(&self.big_right_first, rt, 1),
            ),
            w(
                format!("boxed tree, {small} nodes"),
                i.small.expected_sum(),
                join_runs(&self.small, rt, i.small_reps),
            ),
            w(
                format!("skynet, {n} leaves (scopes)"),
                n * (n - 1) / 2,
                skynet,
            ),
            w(
                format!("n-queens {} (BOTS, scopes)", i.queens),
                self.queens.run::<Serial>(),
                scope_runs(&self.queens, rt),
            ),
            w(
                format!("merge sort, {len} u32"),
                sorted,
                join_runs(&self.merge, rt, 1),
            ),
            w(
                format!("quick sort, {len} u32"),
                sorted,
                join_runs(&self.quick, rt, 1),
            ),
            w(
                format!("triangular loop, {} iterations", i.tri_n),
                serial(&self.triangular),
                join_runs(&self.triangular, rt, 1),
            ),
            w(
                format!("matrix multiply {m}×{m}", m = i.mat_n),
                serial(&self.multiply),
                join_runs(&self.multiply, rt, 1),
            ),
        ]
    }
}

/// `k`'s checksum from one serial run.
fn serial<K: JoinKernel>(k: &K) -> u64 {
    let mut s = k.scratch();
    k.refill(&mut s);
    let result = k.run::<Serial>(&mut (), &mut s);
    k.check(result, &s)
}
