//! The `workloads` experiment's programs on their inputs: [`Kernels::workloads`] lists them in
//! table order, each with the checksum every run must give and its runs on each runtime
//! (`peers/each.rs`; Tokio runs skynet as spawned futures, with `--full` only).

use crate::lab::peers::each::{join_runs, scope_runs, serial, timed, Run, TOKIO};
use crate::lab::peers::Runtimes;
use crate::lab::programs::join_kernels::{Fib, Matrix, Multiply, Tree, TreeSum, Triangular};
use crate::lab::programs::scope_kernels::{Queens, Skynet};
use crate::lab::programs::sorts::{sorted_checksum, Sort};
use crate::lab::programs::{xorshift, ScopeKernel, Serial};
use crate::lab::Size;
use std::future::Future;
use std::pin::Pin;

/// A workload: its name, the checksum every variant must return, and the variants it has
/// (by index into [`RUNTIMES`](crate::lab::peers::each::RUNTIMES)).
pub struct Workload<'a> {
    pub name: String,
    pub expect: u64,
    pub runs: [Option<Run<'a>>; 5],
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
