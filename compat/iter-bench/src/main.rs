//! `threadlab-rayon-iter THREADS SQUARES N SORT_N BODIES`: the `iter` experiment's kernels with
//! Rayon's iterators, built with the rayon-core package patched in, so they run on threadlab's
//! workers. The lab drives it (`crates/threadlab-cli/src/lab/peers/rayon_on_threadlab.rs`):
//! it builds the inputs, prints `ready`, then answers each line `K` on its input by running
//! kernel `K` once inside its pool of THREADS and printing `CHECK SECONDS`; `quit` or the end of
//! its input ends it.
//!
//! The kernels and the inputs' generator are the lab's own files, compiled here too.

use std::io::{BufRead, Write};

#[path = "../../../crates/threadlab-cli/src/lab/programs/xorshift.rs"]
mod xorshift;

// The lab's file: the sequential kernels are the lab's alone.
#[allow(dead_code)]
#[path = "../../../crates/threadlab-cli/src/lab/programs/iter_kernels.rs"]
mod iter_kernels;

use iter_kernels::{par_kernels, Data, KERNELS, SEED};

par_kernels!(on_rayon, [crate::iter_kernels], rayon);

fn arg(args: &[String], i: usize, what: &str) -> u64 {
    args.get(i).and_then(|a| a.parse().ok()).unwrap_or_else(|| {
        eprintln!("usage: threadlab-rayon-iter THREADS SQUARES N SORT_N BODIES ({what})");
        std::process::exit(2)
    })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let threads = arg(&args, 0, "THREADS") as usize;
    let [squares, n, sort_n, bodies] = [1, 2, 3, 4].map(|i| arg(&args, i, "sizes"));
    let data = Data::new(
        squares,
        n as usize,
        sort_n as usize,
        bodies as usize,
        xorshift::xorshift(SEED),
    );
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap_or_else(|e| panic!("threadlab-rayon-iter: a pool of {threads}: {e}"));
    let mut out = std::io::stdout().lock();
    writeln!(out, "ready")
        .and_then(|_| out.flush())
        .expect("stdout");
    for line in std::io::stdin().lock().lines() {
        let line = line.expect("stdin");
        let line = line.trim();
        if line == "quit" {
            break;
        }
        let k: usize = match line.parse() {
            Ok(k) if k < KERNELS => k,
            _ => panic!("threadlab-rayon-iter: {line:?} is no kernel index (0..{KERNELS})"),
        };
        let (check, secs) = pool.install(|| on_rayon::run(k, &data));
        writeln!(out, "{check} {secs}")
            .and_then(|_| out.flush())
            .expect("stdout");
    }
}
