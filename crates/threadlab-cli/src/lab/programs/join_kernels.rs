//! The workloads with a `join` at every fork: fib, the boxed-tree sum, a loop over triangular
//! work, and a recursive matrix multiply. Each is generic over [`Par`], so the serial version
//! makes the same calls as the parallel ones (see the module doc of `super`).

use super::{JoinKernel, Par};
use std::hint::black_box;

/// fib(n) with a join at every call: the classic fork-join microbenchmark, from Cilk-5 (Frigo,
/// Leiserson and Randall, "The Implementation of the Cilk-5 Multithreaded Language", PLDI 1998)
/// and chili's `benches/overhead.rs` (github.com/dragostis/chili). Almost no work per fork, so it
/// measures the fork itself.
pub fn fib<P: Par>(x: &mut P::Ctx<'_>, n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = P::join(x, |x| fib::<P>(x, n - 1), |x| fib::<P>(x, n - 2));
    a + b
}

/// A node of a binary tree where every child is its own heap box.
pub struct Node {
    value: u64,
    left: Option<Box<Node>>,
    right: Option<Box<Node>>,
}

/// A perfect binary tree of boxed nodes: spice's and chili's benchmark tree
/// (github.com/judofyr/spice, `bench/`; github.com/dragostis/chili, `benches/tree.rs`), pointer
/// chasing with a join at every node.
pub struct Tree {
    /// The root (`None` for an empty tree).
    pub root: Option<Box<Node>>,
    /// How many nodes it has.
    pub nodes: u64,
}

impl Tree {
    /// A perfect tree of `levels` levels (2^levels − 1 nodes), valued 1, 2, … in preorder.
    pub fn perfect(levels: u32) -> Tree {
        fn build(levels: u32, next: &mut u64) -> Option<Box<Node>> {
            if levels == 0 {
                return None;
            }
            *next += 1;
            let value = *next;
            let left = build(levels - 1, next);
            let right = build(levels - 1, next);
            Some(Box::new(Node { value, left, right }))
        }
        let mut next = 0;
        let root = build(levels, &mut next);
        Tree { root, nodes: next }
    }

    /// The sum of its values, 1 + 2 + … + nodes.
    pub fn expected_sum(&self) -> u64 {
        self.nodes * (self.nodes + 1) / 2
    }
}

/// The sum of a boxed tree with a join at every node, leaves included (their two halves are
/// empty), as spice's and chili's benchmark does.
pub fn tree_sum<P: Par>(x: &mut P::Ctx<'_>, node: &Option<Box<Node>>) -> u64 {
    match node {
        None => 0,
        Some(n) => {
            let (a, b) = P::join(
                x,
                |x| tree_sum::<P>(x, &n.left),
                |x| tree_sum::<P>(x, &n.right),
            );
            n.value + a + b
        }
    }
}

/// [`tree_sum`] with the right subtree first: the join's first closure sums the right child.
/// [`Tree::perfect`] allocates a node's box after both its subtrees' (as chili's benchmark tree
/// does), so this order walks memory backwards through the allocations, one node after the
/// next, where the left-first order jumps back over the whole right subtree at every node: here
/// the serial right-first sum of 2^24 nodes took 95 ms against 190 ms left first. chili's own
/// `join` runs its second closure first, so chili's benchmark, written left then right, walks
/// this order.
pub fn tree_sum_right_first<P: Par>(x: &mut P::Ctx<'_>, node: &Option<Box<Node>>) -> u64 {
    match node {
        None => 0,
        Some(n) => {
            let (b, a) = P::join(
                x,
                |x| tree_sum_right_first::<P>(x, &n.right),
                |x| tree_sum_right_first::<P>(x, &n.left),
            );
            n.value + a + b
        }
    }
}

/// Dependent steps per unit of `i` in [`triangular`]'s iteration `i`.
const STEPS: u64 = 4;

/// One iteration of the triangular loop: `STEPS · i` dependent multiply-xor steps (a chain
/// LLVM cannot vectorise or shorten).
#[inline]
fn unit(i: u64) -> u64 {
    let mut h = i;
    for j in 0..i * STEPS {
        h = (h ^ j).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    h
}

/// A parallel loop over `lo..hi` whose iteration `i` costs `i`: the triangular (unbalanced)
/// loop that tests load balancing in loop schedulers (as in the OpenMP literature, e.g. Chapman,
/// Jost and van der Pas, "Using OpenMP", MIT Press 2007, on `schedule(dynamic)` for triangular
/// loops). Written as the recursive halving of the range with a join at each split, down to
/// single iterations; returns a hash of the results.
pub fn triangular<P: Par>(x: &mut P::Ctx<'_>, lo: u64, hi: u64) -> u64 {
    match hi - lo {
        0 => 0,
        1 => unit(black_box(lo)),
        len => {
            let mid = lo + len / 2;
            let (a, b) = P::join(
                x,
                |x| triangular::<P>(x, lo, mid),
                |x| triangular::<P>(x, mid, hi),
            );
            a ^ b.rotate_left(1)
        }
    }
}

/// The side of the blocks [`matmul`] multiplies serially.
pub const LEAF: usize = 32;

/// A square matrix (side a power of two, at least [`LEAF`]) stored block-recursively: the four
/// quadrants one after the other (top-left, top-right, bottom-left, bottom-right), recursively,
/// down to `LEAF × LEAF` blocks stored by rows. So every quadrant is a contiguous slice and the
/// recursion needs no index arithmetic and no `unsafe` to hand out disjoint parts.
pub struct Matrix {
    /// The elements, in the layout above.
    pub data: Vec<f64>,
}

/// Where element (i, j) of a side-`n` block-recursive matrix lies.
#[cfg(test)]
fn offset(n: usize, i: usize, j: usize) -> usize {
    if n == LEAF {
        return i * LEAF + j;
    }
    let h = n / 2;
    let quadrant = (i / h) * 2 + j / h;
    quadrant * h * h + offset(h, i % h, j % h)
}

impl Matrix {
    /// The zero matrix of side `n`.
    pub fn zero(n: usize) -> Matrix {
        assert!(n >= LEAF && n.is_power_of_two(), "Matrix: side {n}");
        Matrix {
            data: vec![0.0; n * n],
        }
    }

    /// Small integers (exact in f64 sums) from a seed.
    pub fn random(n: usize, seed: u64) -> Matrix {
        let mut m = Matrix::zero(n);
        let mut next = super::xorshift(seed);
        m.data.iter_mut().for_each(|v| *v = (next() % 8) as f64);
        m
    }

    /// The side.
    #[cfg(test)]
    fn side(&self) -> usize {
        (self.data.len() as f64).sqrt() as usize
    }

    /// The elements by rows.
    #[cfg(test)]
    pub fn to_row_major(&self) -> Vec<f64> {
        let n = self.side();
        (0..n * n)
            .map(|k| self.data[offset(n, k / n, k % n)])
            .collect()
    }

    /// `self · other` by rows, with the textbook triple loop (for tests).
    #[cfg(test)]
    pub fn multiply_naive(&self, other: &Matrix) -> Vec<f64> {
        let (a, b, n) = (self.to_row_major(), other.to_row_major(), self.side());
        let mut c = vec![0.0; n * n];
        for i in 0..n {
            for k in 0..n {
                for j in 0..n {
                    c[i * n + j] += a[i * n + k] * b[k * n + j];
                }
            }
        }
        c
    }
}

/// `c += a · b` for side-`n` block-recursive matrices: the divide-and-conquer multiply of Cilk's
/// `matmul` example and of the cache-oblivious algorithms (Frigo, Leiserson, Prokop and
/// Ramachandran, "Cache-Oblivious Algorithms", FOCS 1999): the eight quadrant products in two
/// rounds of four parallel ones (the two products that add into the same quadrant of `c` never
/// run at once), serial below [`LEAF`].
pub fn matmul<P: Par>(x: &mut P::Ctx<'_>, c: &mut [f64], a: &[f64], b: &[f64], n: usize) {
    if n <= LEAF {
        leaf(c, a, b);
        return;
    }
    let (h, q) = (n / 2, n * n / 4);
    let (c1, c2) = c.split_at_mut(2 * q);
    let ((c11, c12), (c21, c22)) = (c1.split_at_mut(q), c2.split_at_mut(q));
    let [a11, a12, a21, a22] = quarters(a, q);
    let [b11, b12, b21, b22] = quarters(b, q);
    let mut c = [c11, c12, c21, c22];
    quadrant_round::<P>(x, &mut c, [a11, a21], [b11, b12], h);
    quadrant_round::<P>(x, &mut c, [a12, a22], [b21, b22], h);
}

/// One round of [`matmul`]: `c[2i + j] += a[i] · b[j]` for the four quadrants of `c` at once,
/// from a column of `a`'s quadrants and a row of `b`'s (side `h` each).
#[inline]
fn quadrant_round<P: Par>(
    x: &mut P::Ctx<'_>,
    c: &mut [&mut [f64]; 4],
    a: [&[f64]; 2],
    b: [&[f64]; 2],
    h: usize,
) {
    let [c11, c12, c21, c22] = c;
    P::join(
        x,
        |x| {
            P::join(
                x,
                |x| matmul::<P>(x, c11, a[0], b[0], h),
                |x| matmul::<P>(x, c12, a[0], b[1], h),
            )
        },
        |x| {
            P::join(
                x,
                |x| matmul::<P>(x, c21, a[1], b[0], h),
                |x| matmul::<P>(x, c22, a[1], b[1], h),
            )
        },
    );
}

fn quarters(m: &[f64], q: usize) -> [&[f64]; 4] {
    [&m[..q], &m[q..2 * q], &m[2 * q..3 * q], &m[3 * q..]]
}

/// `c += a · b` for `LEAF × LEAF` blocks stored by rows.
fn leaf(c: &mut [f64], a: &[f64], b: &[f64]) {
    for i in 0..LEAF {
        let row = &mut c[i * LEAF..(i + 1) * LEAF];
        for k in 0..LEAF {
            let aik = a[i * LEAF + k];
            let bk = &b[k * LEAF..(k + 1) * LEAF];
            row.iter_mut().zip(bk).for_each(|(c, b)| *c += aik * b);
        }
    }
}

/// [`fib`] of `n`, as a [`JoinKernel`].
pub struct Fib(pub u64);

impl JoinKernel for Fib {
    type Scratch = ();
    fn scratch(&self) {}
    fn run<P: Par>(&self, x: &mut P::Ctx<'_>, _: &mut ()) -> u64 {
        fib::<P>(x, black_box(self.0))
    }
}

/// [`tree_sum`] of a tree (with `true`: [`tree_sum_right_first`]), as a [`JoinKernel`].
pub struct TreeSum<'t>(pub &'t Tree, pub bool);

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

/// [`triangular`] over `0..n`, as a [`JoinKernel`].
pub struct Triangular(pub u64);

impl JoinKernel for Triangular {
    type Scratch = ();
    fn scratch(&self) {}
    fn run<P: Par>(&self, x: &mut P::Ctx<'_>, _: &mut ()) -> u64 {
        triangular::<P>(x, 0, self.0)
    }
}

/// [`matmul`] of `a · b` into a zeroed matrix of side `n`, as a [`JoinKernel`].
pub struct Multiply<'i>(pub &'i Matrix, pub &'i Matrix, pub usize);

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

/// A sum of a matrix's elements (small integers, exact in f64).
fn matrix_checksum(c: &[f64]) -> u64 {
    c.iter().fold(0u64, |s, &x| s.wrapping_add(x as u64))
}
