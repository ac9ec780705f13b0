//! A panic in a parallel iterator's closure is re-raised at the terminal method, and every item
//! produced before it is dropped exactly once: counted with an element type that counts its
//! creations and drops, at random panic positions, on a 2-worker pool and the global pool.
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use threadlab::prelude::*;
use threadlab::Pool;

static MADE: AtomicUsize = AtomicUsize::new(0);
static DROPPED: AtomicUsize = AtomicUsize::new(0);

/// Counts its creations and drops (the tests in this file run one at a time under a lock).
struct Counted(#[allow(dead_code)] u64);

impl Counted {
    fn new(x: u64) -> Counted {
        MADE.fetch_add(1, Ordering::Relaxed);
        Counted(x)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        DROPPED.fetch_add(1, Ordering::Relaxed);
    }
}

static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn slow(x: u64) {
    if x % 97 == 0 {
        std::hint::black_box((0..300u64).fold(x, |a, b| a.wrapping_mul(b | 1)));
    }
}

/// The work on item `x` ([`slow`]), and the panic ("boom") at item `at`.
fn slow_or_boom(x: u64, at: u64) {
    slow(x);
    if x == at {
        panic!("boom");
    }
}

/// Runs `op`, which must panic with "boom", and checks every `Counted` made was dropped once.
fn expect_boom_and_no_leak(op: impl FnOnce()) {
    let _guard = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    MADE.store(0, Ordering::Relaxed);
    DROPPED.store(0, Ordering::Relaxed);
    let err = catch_unwind(AssertUnwindSafe(op)).expect_err("the closure's panic was re-raised");
    assert_eq!(err.downcast_ref::<&str>(), Some(&"boom"));
    let (made, dropped) = (
        MADE.load(Ordering::Relaxed),
        DROPPED.load(Ordering::Relaxed),
    );
    assert_eq!(made, dropped, "made {made} items, dropped {dropped}");
}

fn scenarios(n: u64, at: u64) {
    let v: Vec<u64> = (0..n).collect();
    // collect: items made before the panic sit in the pieces' Vecs.
    expect_boom_and_no_leak(|| {
        let _: Vec<Counted> = v
            .par_iter()
            .map(|&x| {
                slow_or_boom(x, at);
                Counted::new(x)
            })
            .collect();
    });
    // collect of a filtering pipeline: the pieces' own Vecs, linked in order.
    expect_boom_and_no_leak(|| {
        let _: Vec<Counted> = v
            .par_iter()
            .filter_map(|&x| {
                slow_or_boom(x, at);
                (x % 3 != 0).then(|| Counted::new(x))
            })
            .collect();
    });
    // A panic in a consumer's closure after items were produced.
    expect_boom_and_no_leak(|| {
        (0..n).into_par_iter().map(Counted::new).for_each(|c| {
            slow_or_boom(c.0, at);
        });
    });
    // Reduce over owned items.
    expect_boom_and_no_leak(|| {
        let _ = (0..n).into_par_iter().map(Counted::new).reduce(
            || Counted::new(0),
            |a, b| {
                slow_or_boom(b.0, at);
                Counted::new(a.0 + b.0)
            },
        );
    });
    // partition / unzip hold two lists per piece.
    expect_boom_and_no_leak(|| {
        let _: (Vec<_>, Vec<_>) = (0..n)
            .into_par_iter()
            .map(|x| {
                slow_or_boom(x, at);
                (Counted::new(x), Counted::new(x))
            })
            .unzip();
    });
    // A panicking comparison in both sorts leaves every element in the slice once. Under Miri
    // at most 300 elements, already past every cut-off of the sorts there (`iter/sort.rs`).
    let (n, at) = if cfg!(miri) && n > 300 {
        (300, at % 300)
    } else {
        (n, at)
    };
    for stable in [false, true] {
        expect_boom_and_no_leak(|| {
            let mut items: Vec<Counted> = (0..n).map(|x| Counted::new((x * 7919) % n)).collect();
            let calls = AtomicUsize::new(0);
            let cmp = |a: &Counted, b: &Counted| {
                if calls.fetch_add(1, Ordering::Relaxed) as u64 == at * 3 {
                    panic!("boom");
                }
                a.0.cmp(&b.0)
            };
            let r = catch_unwind(AssertUnwindSafe(|| {
                if stable {
                    items.par_sort_by(cmp)
                } else {
                    items.par_sort_unstable_by(cmp)
                }
            }));
            assert_eq!(items.len() as u64, n);
            drop(items);
            if let Err(p) = r {
                std::panic::resume_unwind(p);
            }
            panic!("boom"); // the comparison count never reached `at * 3`
        });
    }
}

#[test]
fn panics_are_re_raised_and_every_item_is_dropped_once() {
    let pool = Pool::builder().threads(2).build().unwrap();
    let mut seed = 0x1234_5678_9ABC_DEF1u64;
    // Shorter under Miri (some thousand times slower), but still at least 2 * 1024 items, where
    // a loop with an idle worker splits at once (`iter/drive.rs`, `BLOCK`); the sorts take 300
    // of them there (see `scenarios`).
    let sizes: &[u64] = if cfg!(miri) {
        &[1, 2, 65, 2_100]
    } else {
        &[1, 2, 65, 5000, 60_000]
    };
    for &n in sizes {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let at = seed % n;
        pool.install(|| scenarios(n, at));
        // Not under Miri: the global pool's threads outlive the test, which Miri reports.
        if !cfg!(miri) {
            scenarios(n, at);
        }
    }
}

/// `rev` is lazy: building `map(..).rev()` runs nothing, and a panic in the `map` closure is
/// raised by the terminal method (where the caller catches it), with every item dropped once;
/// at random panic positions, on a 2-worker pool.
#[test]
fn rev_runs_its_base_only_when_the_pipeline_runs() {
    let pool = Pool::builder().threads(2).build().unwrap();
    let mut seed = 0x0DDB_A11C_AFE5_EED5u64;
    // Under Miri the last size is 2,100: still past 2 * 1024, where the loop splits at once.
    for n in [1u64, 7, 300, if cfg!(miri) { 2_100 } else { 5000 }] {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let at = seed % n;
        pool.install(|| {
            let pipeline = (0..n)
                .into_par_iter()
                .map(move |x| {
                    if x == at {
                        panic!("boom");
                    }
                    Counted::new(x)
                })
                .rev();
            expect_boom_and_no_leak(move || pipeline.for_each(drop));
        });
    }
}

/// A comparison that panics while the stable sort merges its two sorted halves leaves the slice
/// holding each of its elements once: the merge's partial writes are undone from its buffer.
/// The comparison panics when it compares an element of the first half with one of the second,
/// which only the final merge does (the halves are sorted apart first). Under Miri the length
/// is past the sort's cut-offs for a busy pool too, so the merge is always reached there.
#[test]
fn a_panic_while_the_halves_merge_leaves_every_element_in_the_slice_once() {
    let pool = Pool::builder().threads(2).build().unwrap();
    let n: u64 = if cfg!(miri) { 300 } else { 5000 };
    let half = |c: &Counted| (c.0 & 0xFFFF_FFFF) < n / 2;
    pool.install(|| {
        expect_boom_and_no_leak(|| {
            // An element is its key (high half) and its first position (low half).
            let mut items: Vec<Counted> = (0..n)
                .map(|i| Counted::new(((i * 7919) % n) << 32 | i))
                .collect();
            let r = catch_unwind(AssertUnwindSafe(|| {
                items.par_sort_by(|a, b| {
                    if half(a) != half(b) {
                        panic!("boom");
                    }
                    (a.0 >> 32).cmp(&(b.0 >> 32))
                })
            }));
            let mut firsts: Vec<u64> = items.iter().map(|c| c.0 & 0xFFFF_FFFF).collect();
            firsts.sort_unstable();
            assert!(firsts.iter().copied().eq(0..n), "not a permutation");
            drop(items);
            std::panic::resume_unwind(r.expect_err("the halves were compared"));
        });
    });
}
