//! The fork's cost as a user's crate pays it: `threadlab::join` and chili's `Scope::join`
//! called from this crate (a separate crate from the runtime, built with the bench profile, as
//! a user's release build is), on fib and on chili's boxed-tree benchmark, against serial code.
//! The lab's `workloads` runs the same shapes through a trait of its own; this one calls each
//! runtime's `join` directly, where LLVM decides what to inline into the caller, which is what
//! made the same `join` twice as fast in one program as in another.
//!
//! A caveat for anyone comparing builds: a fine-grained recursion's speed depends on where the
//! linker places it. The same bytes of a user's `fib` (the join's fast path inlined, 12
//! instructions) ran fib(32) in 7.2 ms at an address 64-byte aligned and in 10.1 ms 0x130 bytes
//! further on, where its first conditional jump ends on a 32-byte boundary (Intel's "jump
//! conditional code" erratum keeps such code out of the decoded-instruction cache); chili's
//! `fib` moved between 7.3 and 9.4 ms the same way, and
//! `RUSTFLAGS="-C llvm-args=-x86-branches-within-32B-boundaries"` took the slow build to 7.5 ms.
//! So compare runtimes within one build, as this benchmark does, never one build with another.
//!
//! Each round runs every variant once (a warm-up round first); each figure is the median of the
//! rounds. The tree is walked in both orders with both runtimes: chili's `join` runs its second
//! closure first, threadlab's (as Rayon's) its first, and on this tree (a node's box allocated
//! after its subtrees') the right subtree first is twice as fast serially.
//!
//! `cargo bench -p threadlab-cli --bench fork_cost [-- ROUNDS [FIB_N [TREE_LEVELS]]]` (defaults
//! 7, 30, 20; `-- 7 32 24` gives the sizes of chili's own tree benchmark and a larger fib).

use std::hint::black_box;
use std::time::Instant;

struct Node {
    value: u64,
    left: Option<Box<Node>>,
    right: Option<Box<Node>>,
}

/// A perfect tree of `levels` levels, each node's box allocated after its subtrees'.
fn tree(levels: u32, next: &mut u64) -> Option<Box<Node>> {
    if levels == 0 {
        return None;
    }
    *next += 1;
    let value = *next;
    let left = tree(levels - 1, next);
    let right = tree(levels - 1, next);
    Some(Box::new(Node { value, left, right }))
}

fn fib_serial(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    black_box(fib_serial(n - 1)) + black_box(fib_serial(n - 2))
}

fn fib_threadlab(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = threadlab::join(|| fib_threadlab(n - 1), || fib_threadlab(n - 2));
    a + b
}

fn fib_chili(s: &mut chili::Scope<'_>, n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = s.join(|s| fib_chili(s, n - 1), |s| fib_chili(s, n - 2));
    a + b
}

/// The sum, visiting `first` then `second` of each node's children (left then right when
/// `right_first` is false).
fn sum_serial(n: &Option<Box<Node>>, right_first: bool) -> u64 {
    let Some(n) = n else { return 0 };
    let (first, second) = children(n, right_first);
    let a = sum_serial(first, right_first);
    n.value + a + sum_serial(second, right_first)
}

fn sum_threadlab(n: &Option<Box<Node>>, right_first: bool) -> u64 {
    let Some(n) = n else { return 0 };
    let (first, second) = children(n, right_first);
    let (a, b) = threadlab::join(
        || sum_threadlab(first, right_first),
        || sum_threadlab(second, right_first),
    );
    n.value + a + b
}

/// chili runs `join`'s second closure first: to visit `first` first, it goes second.
fn sum_chili(s: &mut chili::Scope<'_>, n: &Option<Box<Node>>, right_first: bool) -> u64 {
    let Some(n) = n else { return 0 };
    let (first, second) = children(n, right_first);
    let (b, a) = s.join(
        |s| sum_chili(s, second, right_first),
        |s| sum_chili(s, first, right_first),
    );
    n.value + a + b
}

fn children(n: &Node, right_first: bool) -> (&Option<Box<Node>>, &Option<Box<Node>>) {
    if right_first {
        (&n.right, &n.left)
    } else {
        (&n.left, &n.right)
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    // Numbers on the command line: rounds, fib's n, the big tree's levels (cargo's own flags,
    // such as `--bench`, are skipped).
    let numbers: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let arg = |i: usize, default: u64| numbers.get(i).copied().unwrap_or(default);
    let rounds = arg(0, 7) as usize;
    let pool = threadlab::Pool::builder()
        .threads(2)
        .build()
        .expect("a pool");
    let one = threadlab::Pool::builder()
        .threads(1)
        .build()
        .expect("a pool");
    let mut chili_pool = chili::ThreadPool::with_config(chili::Config {
        thread_count: std::num::NonZeroUsize::new(2),
        ..Default::default()
    });
    let (fib_n, levels, small_reps) = (arg(1, 30), arg(2, 20) as u32, 300);
    let fib_want = fib_serial(fib_n);
    let mut next = 0;
    let big = tree(levels, &mut next);
    let big_want = next * (next + 1) / 2;
    let mut next = 0;
    let small = tree(10, &mut next);
    let small_want = next * (next + 1) / 2 * small_reps;

    let chili = std::cell::RefCell::new(&mut chili_pool);
    let (chili, pool, one) = (&chili, &pool, &one);
    type Run<'a> = Box<dyn FnMut() -> u64 + 'a>;
    let mut variants: Vec<(String, u64, Run<'_>)> = Vec::new();
    let big = &big;
    let small = &small;
    variants.push((
        format!("fib({fib_n}) serial"),
        fib_want,
        Box::new(move || fib_serial(black_box(fib_n))),
    ));
    variants.push((
        format!("fib({fib_n}) threadlab, 1 worker"),
        fib_want,
        Box::new(move || one.install(|| fib_threadlab(fib_n))),
    ));
    variants.push((
        format!("fib({fib_n}) threadlab"),
        fib_want,
        Box::new(move || pool.install(|| fib_threadlab(fib_n))),
    ));
    variants.push((
        format!("fib({fib_n}) chili"),
        fib_want,
        Box::new(move || fib_chili(&mut chili.borrow_mut().scope(), fib_n)),
    ));
    for right_first in [false, true] {
        let order = if right_first {
            "right first"
        } else {
            "left first"
        };
        let tree_name = format!("tree 2^{levels}, {order}");
        variants.push((
            format!("{tree_name} serial"),
            big_want,
            Box::new(move || sum_serial(black_box(big), right_first)),
        ));
        variants.push((
            format!("{tree_name} threadlab"),
            big_want,
            Box::new(move || pool.install(|| sum_threadlab(big, right_first))),
        ));
        variants.push((
            format!("{tree_name} chili"),
            big_want,
            Box::new(move || sum_chili(&mut chili.borrow_mut().scope(), big, right_first)),
        ));
    }
    variants.push((
        format!("tree 1023 ×{small_reps} threadlab"),
        small_want,
        Box::new(move || {
            (0..small_reps)
                .map(|_| pool.install(|| sum_threadlab(small, false)))
                .sum()
        }),
    ));
    variants.push((
        format!("tree 1023 ×{small_reps} chili"),
        small_want,
        Box::new(move || {
            (0..small_reps)
                .map(|_| sum_chili(&mut chili.borrow_mut().scope(), small, false))
                .sum()
        }),
    ));

    let mut times = vec![Vec::new(); variants.len()];
    for round in 0..=rounds {
        for (i, (name, want, run)) in variants.iter_mut().enumerate() {
            let t = Instant::now();
            let got = run();
            let secs = t.elapsed().as_secs_f64();
            assert_eq!(got, *want, "{name} computed a wrong sum");
            if round > 0 {
                times[i].push(secs);
            }
        }
    }
    let medians: Vec<f64> = times.into_iter().map(median).collect();
    let find = |name: &str| {
        variants
            .iter()
            .position(|v| v.0 == name)
            .map(|i| medians[i])
            .unwrap_or(f64::NAN)
    };
    println!("medians of {rounds} interleaved rounds, pools of 2 threads unless said");
    for ((name, _, _), m) in variants.iter().zip(&medians) {
        println!("  {name:38} {:10.3} ms", m * 1e3);
    }
    let ratio = |a: &str, b: &str| find(a) / find(b);
    println!(
        "fib threadlab/chili {:.2}×; 1-worker fib / serial {:.2}×; tree left first threadlab/chili {:.2}×, right first {:.2}×; tree 1023 threadlab/chili {:.2}×",
        ratio(&format!("fib({fib_n}) threadlab"), &format!("fib({fib_n}) chili")),
        ratio(&format!("fib({fib_n}) threadlab, 1 worker"), &format!("fib({fib_n}) serial")),
        ratio(&format!("tree 2^{levels}, left first threadlab"), &format!("tree 2^{levels}, left first chili")),
        ratio(&format!("tree 2^{levels}, right first threadlab"), &format!("tree 2^{levels}, right first chili")),
        ratio(&format!("tree 1023 ×{small_reps} threadlab"), &format!("tree 1023 ×{small_reps} chili")),
    );
}
