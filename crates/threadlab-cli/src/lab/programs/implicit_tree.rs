//! The sum of an implicit binary tree (node `i`'s children at `2i+1` and `2i+2` of one vector)
//! with a join at every node: the `overhead` experiment's tree, lighter than the boxed tree of
//! `join_kernels` (no pointer chasing), so the join's own cost dominates.

use super::{JoinKernel, Par};
use std::hint::black_box;

/// The sum of the subtree rooted at `i` of the implicit tree over `v`, forking at every node.
pub fn sum<P: Par>(x: &mut P::Ctx<'_>, v: &[u64], i: usize) -> u64 {
    if i >= v.len() {
        return 0;
    }
    let (a, b) = P::join(
        x,
        |x| sum::<P>(x, v, 2 * i + 1),
        |x| sum::<P>(x, v, 2 * i + 2),
    );
    v[i] + a + b
}

/// [`sum`] of the whole tree over a vector, as a [`JoinKernel`].
pub struct ImplicitTree<'v>(pub &'v [u64]);

impl JoinKernel for ImplicitTree<'_> {
    type Scratch = ();
    fn scratch(&self) {}
    fn run<P: Par>(&self, x: &mut P::Ctx<'_>, _: &mut ()) -> u64 {
        sum::<P>(x, black_box(self.0), 0)
    }
}
