//! The workloads' input generator, in a file of its own so that the lab's out-of-workspace
//! bench (`compat/iter-bench`, which builds the `iter` kernels' inputs) includes the same code.

/// A small xorshift generator for the workloads' inputs (deterministic, no dependency):
/// Marsaglia's 13/7/17 triple ("Xorshift RNGs", 2003).
pub fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed | 1;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}
