//! A kernel written once, run on each runtime of [`Runtimes`]: a [`JoinKernel`] (a join at every
//! fork) under serial code, threadlab, Rayon and chili, a [`ScopeKernel`] (a scope at every
//! node) under the three with a scope; each variant on a scratch of its own (a sort's copy of
//! its input, refilled untimed before each run). The `workloads` and `overhead` experiments time
//! their kernels this way, each run checked ([`checked`]), and index the runs by [`RUNTIMES`].

use super::{Rayon, Runtimes};
use crate::lab::programs::{Chili, JoinKernel, ScopeKernel, Serial, Threadlab};
use crate::lab::Variant;
use std::time::Instant;

/// The runtimes a kernel runs on, in table order: a kernel's runs are indexed by them.
pub const RUNTIMES: [&str; 5] = ["serial", "threadlab", "rayon", "chili", "tokio"];
/// Indexes into [`RUNTIMES`].
pub const SERIAL: usize = 0;
pub const THREADLAB: usize = 1;
pub const RAYON: usize = 2;
pub const CHILI: usize = 3;
pub const TOKIO: usize = 4;

/// One timed run of a variant: its checksum and the seconds of one run of the kernel (the
/// scratch's refill excluded).
pub type Run<'a> = Box<dyn FnMut() -> (u64, f64) + 'a>;

/// A variant's runs of `k`: `call` runs it once under the variant's runtime; a sample is the
/// mean of `reps` back-to-back runs (for a kernel too short to time once: only kernels whose
/// runs leave the scratch as they found it), the refill before them untimed.
pub fn runs_of<'a, K: JoinKernel>(
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
pub fn join_runs<'a, K: JoinKernel>(
    k: &'a K,
    rt: &'a Runtimes,
    reps: usize,
) -> [Option<Run<'a>>; 5] {
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
pub fn scope_runs<'a, K: ScopeKernel>(k: &'a K, rt: &'a Runtimes) -> [Option<Run<'a>>; 5] {
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
pub fn timed(f: impl FnOnce() -> u64) -> (u64, f64) {
    let start = Instant::now();
    let out = f();
    (out, start.elapsed().as_secs_f64())
}

/// A variant whose sample is `run`'s seconds, once its checksum is `want` (else the rounds stop
/// with an error naming `label`).
pub fn checked<'a>(label: String, want: u64, mut run: Run<'a>) -> Variant<'a> {
    Variant::measured(label.clone(), move || {
        let (got, secs) = run();
        if got == want {
            Ok(secs)
        } else {
            Err(format!("{label} computed {got}, expected {want}"))
        }
    })
}

/// `k`'s checksum from one serial run.
pub fn serial<K: JoinKernel>(k: &K) -> u64 {
    let mut s = k.scratch();
    k.refill(&mut s);
    let result = k.run::<Serial>(&mut (), &mut s);
    k.check(result, &s)
}
