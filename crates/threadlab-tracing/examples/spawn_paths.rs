//! The spawn paths without a hook and without a recording, for counting instructions before
//! and after a change to them (`valgrind --tool=callgrind`, since timings on a shared machine
//! are noise): `scope` spawns, `Pool::spawn`, `spawn_future`, `join` (a fib tree), `install`
//! from outside, on one worker. Uses only API older than the spawn-context hook, so the same
//! file builds against an older threadlab.
//!
//! ```sh
//! cargo build --release -p threadlab-tracing --example spawn_paths
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/examples/spawn_paths 2>&1 | grep refs
//! ```

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

const N: u64 = 20_000;

fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = threadlab::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

fn main() {
    let pool = threadlab::Pool::builder().threads(1).build().expect("pool");
    let count = AtomicU64::new(0);
    let which = std::env::args().nth(1).unwrap_or_default();
    let all = which.is_empty();
    if all || which == "scope" {
        pool.install(|| {
            threadlab::scope(|s| {
                for _ in 0..N {
                    s.spawn(|_| {
                        count.fetch_add(1, Relaxed);
                    });
                }
            })
        });
    }
    if all || which == "spawn" {
        let (tx, rx) = std::sync::mpsc::channel();
        for _ in 0..N {
            let tx = tx.clone();
            pool.spawn(move || tx.send(()).unwrap());
        }
        for _ in 0..N {
            rx.recv().unwrap();
        }
    }
    if all || which == "future" {
        pool.block_on(async {
            for _ in 0..N / 10 {
                threadlab::spawn_future(async {}).await;
            }
        });
    }
    if all || which == "join" {
        count.fetch_add(pool.install(|| fib(22)), Relaxed);
    }
    if all || which == "install" {
        for _ in 0..N / 10 {
            pool.install(|| count.fetch_add(1, Relaxed));
        }
    }
    println!("{}", count.load(Relaxed));
}
