//! The `iter` experiment's kernels and their inputs, in a file of their own: the lab compiles
//! it (as `crate::lab::programs::iter_kernels`), and so does `compat/iter-bench`, the program that
//! runs the same kernels with Rayon's iterators on threadlab's workers (a build of its own:
//! that Rayon is patched onto the `rayon-core` package, and one build holds one rayon-core).
//! Nothing here names the lab's crate.
//!
//! The kernels are the ones Rayon users write: a sum of squares, `map` + `collect`,
//! `filter` + `count`, a dot product (`zip` + `sum`), both sorts of random `u64`s, and one step
//! of the all-pairs n-body simulation of rayon-demo (`rayon-demo/src/nbody`, after the classic
//! O(n²) update: each body's acceleration is the sum of the other bodies' pulls, then positions
//! move).

/// What a kernel returns, for the cross-check of variants.
pub type Check = u64;

/// How many kernels [`par_kernels!`] and [`sequential`] have (indexes `0..KERNELS`).
pub const KERNELS: usize = 7;

/// The inputs' seed: the lab and the bench build the same inputs from it.
pub const SEED: u64 = 0x9E37_79B9_7F4A_7C15;

/// The data every kernel reads (built once per size). Its fields are public for the kernels,
/// which [`par_kernels!`] writes in another module.
pub struct Data {
    pub squares_n: u64,
    pub a: Vec<u64>,
    pub b: Vec<u64>,
    pub unsorted: Vec<u64>,
    pub bodies: Vec<Body>,
}

#[derive(Clone, Copy)]
pub struct Body {
    pos: [f64; 3],
    vel: [f64; 3],
    mass: f64,
}

impl Data {
    /// The inputs, drawn from `r` (the workloads' xorshift from [`SEED`]).
    pub fn new(
        squares_n: u64,
        n: usize,
        sort_n: usize,
        bodies: usize,
        mut r: impl FnMut() -> u64,
    ) -> Data {
        let a = (0..n).map(|_| r() >> 44).collect();
        let b = (0..n).map(|_| r() >> 44).collect();
        let unsorted = (0..sort_n).map(|_| r()).collect();
        let mut f = || (r() >> 11) as f64 / (1u64 << 53) as f64;
        let bodies = (0..bodies)
            .map(|_| Body {
                pos: [f() * 100.0, f() * 100.0, f() * 100.0],
                vel: [f() - 0.5, f() - 0.5, f() - 0.5],
                mass: 1.0 + f(),
            })
            .collect();
        Data {
            squares_n,
            a,
            b,
            unsorted,
            bodies,
        }
    }
}

/// The pull of every body on `me` (softened, so close pairs stay finite).
pub fn accel(me: &Body, all: &[Body]) -> [f64; 3] {
    let mut acc = [0.0; 3];
    for o in all {
        let d = [
            o.pos[0] - me.pos[0],
            o.pos[1] - me.pos[1],
            o.pos[2] - me.pos[2],
        ];
        let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + 0.01;
        let s = o.mass / (r2 * r2.sqrt());
        for (a, dk) in acc.iter_mut().zip(d) {
            *a += dk * s;
        }
    }
    acc
}

/// One time step from the accelerations: a checksum of the new positions.
pub fn advance(bodies: &[Body], acc: &[[f64; 3]]) -> Check {
    let dt = 0.01;
    let mut sum = 0.0;
    for (b, a) in bodies.iter().zip(acc) {
        for ((p, v), a) in b.pos.iter().zip(&b.vel).zip(a) {
            sum += p + (v + a * dt) * dt;
        }
    }
    // The same sequential sum in every variant: the bits must match exactly.
    sum.to_bits()
}

/// The kernels, timed inside the pool (the sorts after copying their input), written once per
/// library with the same calls: `mod $name` gets `run(k, data) -> (check, seconds)`, with the
/// prelude of the crate `$p` in scope; `[$($k)*]` is the path of this file's module.
macro_rules! par_kernels {
    ($name:ident, [$($k:tt)*], $($p:tt)*) => {
        mod $name {
            use $($k)*::{accel, advance, Check, Data};
            use $($p)*::prelude::*;

            /// The kernel's result and its own time in seconds.
            pub fn run(k: usize, d: &Data) -> (Check, f64) {
                let mut t = std::time::Instant::now();
                let check = match k {
                    0 => (0..d.squares_n).into_par_iter().map(|x| (x & 1023) * (x & 1023)).sum(),
                    1 => {
                        let v: Vec<u64> = d.a.par_iter().map(|x| x * 3 + 1).collect();
                        v.len() as u64 + v[v.len() / 2]
                    }
                    2 => d.a.par_iter().filter(|x| *x % 3 == 0).count() as u64,
                    3 => d.a.par_iter().zip(&d.b).map(|(x, y)| x * y).sum(),
                    4 | 5 => {
                        let mut v = d.unsorted.clone();
                        t = std::time::Instant::now();
                        if k == 4 { v.par_sort_unstable() } else { v.par_sort() }
                        v[v.len() / 3] ^ v[v.len() - 1]
                    }
                    _ => {
                        let acc: Vec<[f64; 3]> =
                            d.bodies.par_iter().map(|b| accel(b, &d.bodies)).collect();
                        advance(&d.bodies, &acc)
                    }
                };
                (check, t.elapsed().as_secs_f64())
            }
        }
    };
}
pub(crate) use par_kernels;

/// The sequential `std` versions of the kernels.
pub fn sequential(k: usize, d: &Data) -> (Check, f64) {
    let mut t = std::time::Instant::now();
    let check = match k {
        0 => (0..d.squares_n).map(|x| (x & 1023) * (x & 1023)).sum(),
        1 => {
            let v: Vec<u64> = d.a.iter().map(|x| x * 3 + 1).collect();
            v.len() as u64 + v[v.len() / 2]
        }
        2 => d.a.iter().filter(|x| *x % 3 == 0).count() as u64,
        3 => d.a.iter().zip(&d.b).map(|(x, y)| x * y).sum(),
        4 | 5 => {
            let mut v = d.unsorted.clone();
            t = std::time::Instant::now();
            if k == 4 {
                v.sort_unstable()
            } else {
                v.sort()
            }
            v[v.len() / 3] ^ v[v.len() - 1]
        }
        _ => {
            let acc: Vec<[f64; 3]> = d.bodies.iter().map(|b| accel(b, &d.bodies)).collect();
            advance(&d.bodies, &acc)
        }
    };
    (check, t.elapsed().as_secs_f64())
}
