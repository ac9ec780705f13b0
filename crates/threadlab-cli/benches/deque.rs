//! `cargo bench -p threadlab-cli --bench deque`: the deque and the injector against crossbeam-deque,
//! in the same run. Each operation is timed over many repetitions in alternating order; the
//! table gives the medians in nanoseconds per item and the ratio threadlab / crossbeam (below
//! 1.0 means threadlab is faster). The machines are noisy: read the ratios, not the absolutes.

use std::hint::black_box;
use std::time::Instant;

const N: usize = 1 << 16;
const REPS: usize = 31;

/// The operations both libraries offer, so one timing routine serves both.
trait Deque {
    type W;
    type S: Clone;
    type I;
    fn worker() -> Self::W;
    fn stealer(w: &Self::W) -> Self::S;
    fn push(w: &Self::W, x: usize);
    fn pop(w: &Self::W) -> Option<usize>;
    fn steal(s: &Self::S) -> Option<usize>;
    fn steal_batch_and_pop(s: &Self::S, dest: &Self::W) -> Option<usize>;
    fn injector() -> Self::I;
    fn inj_push(i: &Self::I, x: usize);
    fn inj_steal(i: &Self::I) -> Option<usize>;
    fn inj_steal_batch_and_pop(i: &Self::I, dest: &Self::W) -> Option<usize>;
}

/// `Deque` for a library whose types have these methods (threadlab's deque mirrors
/// crossbeam-deque's API): the two impls differ only in the types and the worker's
/// constructor, which a trait impl cannot take as a parameter, hence a macro.
macro_rules! impl_deque {
    ($name:ident, $w:ty, $s:ty, $i:ty, $new_worker:ident) => {
        struct $name;
        impl Deque for $name {
            type W = $w;
            type S = $s;
            type I = $i;
            fn worker() -> Self::W {
                Self::W::$new_worker()
            }
            fn stealer(w: &Self::W) -> Self::S {
                w.stealer()
            }
            fn push(w: &Self::W, x: usize) {
                w.push(x)
            }
            fn pop(w: &Self::W) -> Option<usize> {
                w.pop()
            }
            fn steal(s: &Self::S) -> Option<usize> {
                s.steal().success()
            }
            fn steal_batch_and_pop(s: &Self::S, dest: &Self::W) -> Option<usize> {
                s.steal_batch_and_pop(dest).success()
            }
            fn injector() -> Self::I {
                Self::I::new()
            }
            fn inj_push(i: &Self::I, x: usize) {
                i.push(x)
            }
            fn inj_steal(i: &Self::I) -> Option<usize> {
                i.steal().success()
            }
            fn inj_steal_batch_and_pop(i: &Self::I, dest: &Self::W) -> Option<usize> {
                i.steal_batch_and_pop(dest).success()
            }
        }
    };
}

impl_deque!(
    Ours,
    threadlab::deque::Worker<usize>,
    threadlab::deque::Stealer<usize>,
    threadlab::injector::Injector<usize>,
    new
);
// A LIFO worker, as threadlab's owner end is.
impl_deque!(
    Crossbeam,
    crossbeam_deque::Worker<usize>,
    crossbeam_deque::Stealer<usize>,
    crossbeam_deque::Injector<usize>,
    new_lifo
);

fn per_item(f: impl FnOnce()) -> f64 {
    let start = Instant::now();
    f();
    start.elapsed().as_nanos() as f64 / N as f64
}

/// Owner push then pop of one item, N times (the fork-join pattern: the deque stays near empty,
/// so every pop races for the last element).
fn push_pop<D: Deque>() -> f64 {
    let w = D::worker();
    per_item(|| {
        for i in 0..N {
            D::push(&w, i);
            black_box(D::pop(&w));
        }
    })
}

/// Owner pushes N, then pops N (the deque grows once, then stays large).
fn push_all_pop_all<D: Deque>() -> f64 {
    let w = D::worker();
    per_item(|| {
        for i in 0..N {
            D::push(&w, i);
        }
        while let Some(x) = D::pop(&w) {
            black_box(x);
        }
    })
}

/// One thief steals N items one by one (uncontended).
fn steal<D: Deque>() -> f64 {
    let w = D::worker();
    for i in 0..N {
        D::push(&w, i);
    }
    let s = D::stealer(&w);
    per_item(|| {
        while let Some(x) = D::steal(&s) {
            black_box(x);
        }
    })
}

/// One thief takes N items by batches into its own deque and runs them from there.
fn steal_batch<D: Deque>() -> f64 {
    let w = D::worker();
    for i in 0..N {
        D::push(&w, i);
    }
    let s = D::stealer(&w);
    let dest = D::worker();
    per_item(|| {
        while let Some(x) = D::steal_batch_and_pop(&s, &dest) {
            black_box(x);
            while let Some(y) = D::pop(&dest) {
                black_box(y);
            }
        }
    })
}

/// Injector: push N, then steal N one by one.
fn injector_push_steal<D: Deque>() -> f64 {
    let inj = D::injector();
    per_item(|| {
        for i in 0..N {
            D::inj_push(&inj, i);
        }
        while let Some(x) = D::inj_steal(&inj) {
            black_box(x);
        }
    })
}

/// Injector: push N, then take them by batches into a worker deque.
fn injector_batch<D: Deque>() -> f64 {
    let inj = D::injector();
    let dest = D::worker();
    per_item(|| {
        for i in 0..N {
            D::inj_push(&inj, i);
        }
        while let Some(x) = D::inj_steal_batch_and_pop(&inj, &dest) {
            black_box(x);
            while let Some(y) = D::pop(&dest) {
                black_box(y);
            }
        }
    })
}

/// The owner pushes and pops while one thief steals from the other end (two threads).
fn contended<D: Deque>() -> f64
where
    D::S: Send + Sync,
{
    let w = D::worker();
    let s = D::stealer(&w);
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|sc| {
        sc.spawn(|| {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                black_box(D::steal(&s));
            }
        });
        let t = per_item(|| {
            for i in 0..N {
                D::push(&w, i);
                if i % 2 == 0 {
                    black_box(D::pop(&w));
                }
            }
            while let Some(x) = D::pop(&w) {
                black_box(x);
            }
        });
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        t
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    type Case = (&'static str, fn() -> f64, fn() -> f64);
    let cases: [Case; 7] = [
        (
            "deque push+pop (near empty)",
            push_pop::<Ours>,
            push_pop::<Crossbeam>,
        ),
        (
            "deque push all, pop all",
            push_all_pop_all::<Ours>,
            push_all_pop_all::<Crossbeam>,
        ),
        ("deque steal", steal::<Ours>, steal::<Crossbeam>),
        (
            "deque steal_batch_and_pop",
            steal_batch::<Ours>,
            steal_batch::<Crossbeam>,
        ),
        (
            "deque owner vs 1 thief",
            contended::<Ours>,
            contended::<Crossbeam>,
        ),
        (
            "injector push+steal",
            injector_push_steal::<Ours>,
            injector_push_steal::<Crossbeam>,
        ),
        (
            "injector push+batch",
            injector_batch::<Ours>,
            injector_batch::<Crossbeam>,
        ),
    ];
    println!("{N} items per run, {REPS} runs each, alternating; medians in ns per item");
    println!(
        "{:<30} {:>10} {:>10} {:>8}",
        "operation", "threadlab", "crossbeam", "ratio"
    );
    for (name, ours, theirs) in cases {
        // Warm up both, then alternate so drift in the machine's load hits both alike.
        ours();
        theirs();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for _ in 0..REPS {
            a.push(ours());
            b.push(theirs());
        }
        let (a, b) = (median(a), median(b));
        println!("{name:<30} {a:>10.2} {b:>10.2} {:>7.2}x", a / b);
    }
}
