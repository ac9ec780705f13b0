//! The workloads' own tests: every runtime computes the same results as serial code.

use super::join_kernels::*;
use super::scope_kernels::*;
use super::sorts::*;
use super::*;
use crate::lab::peers::Rayon;

fn tl_pool() -> threadlab::Pool {
    threadlab::Pool::builder().threads(2).build().unwrap()
}

#[test]
fn join_kernels_agree_across_runtimes() {
    let tl = tl_pool();
    let ry = crate::lab::peers::rayon_pool(2).unwrap();
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
    let ry = crate::lab::peers::rayon_pool(2).unwrap();
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
