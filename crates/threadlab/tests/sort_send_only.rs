//! The parallel sorts need only `T: Send`, as Rayon's: elements that are not `Sync` (here each
//! holds a `Cell` that every comparison bumps) sort like `std`'s sorts of the same input, on
//! random inputs of random lengths past the sorts' sequential cut-off, on a 2-worker pool (so
//! the idle worker takes parts) and on the global pool. A comparison that panics part-way
//! leaves every element in the slice once (each dropped exactly once).
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use threadlab::prelude::*;
use threadlab::Pool;
use threadlab_testkit::Rng;

/// A key, its position in the input, and a count of the comparisons it took part in: `Send`
/// but not `Sync`.
#[derive(Debug)]
struct Elem {
    key: u32,
    id: usize,
    seen: Cell<u32>,
}

fn cmp(a: &Elem, b: &Elem) -> std::cmp::Ordering {
    a.seen.set(a.seen.get() + 1);
    b.seen.set(b.seen.get() + 1);
    a.key.cmp(&b.key)
}

fn elems(keys: &[u32]) -> Vec<Elem> {
    keys.iter()
        .enumerate()
        .map(|(id, &key)| Elem {
            key,
            id,
            seen: Cell::new(0),
        })
        .collect()
}

/// (key, id) of each element, in the slice's order.
fn order(v: &[Elem]) -> Vec<(u32, usize)> {
    v.iter().map(|e| (e.key, e.id)).collect()
}

fn check(keys: &[u32]) {
    let n = keys.len();
    let mut want = elems(keys);
    want.sort_by(cmp);
    let want = order(&want);

    // Stable sorts: exactly std's order (ties keep input order).
    let mut v = elems(keys);
    v.par_sort_by(cmp);
    assert_eq!(order(&v), want, "par_sort_by, len {n}");
    let mut v = elems(keys);
    v.par_sort_by_key(|e| {
        e.seen.set(e.seen.get() + 1);
        e.key
    });
    assert_eq!(order(&v), want, "par_sort_by_key, len {n}");
    let mut v = elems(keys);
    v.par_sort_by_cached_key(|e| {
        e.seen.set(e.seen.get() + 1);
        e.key
    });
    assert_eq!(order(&v), want, "par_sort_by_cached_key, len {n}");

    // Unstable sorts: std's keys in order, and a permutation of the input.
    let keys_sorted: Vec<u32> = want.iter().map(|p| p.0).collect();
    for (name, mut v) in [
        ("par_sort_unstable_by", elems(keys)),
        ("_by_key", elems(keys)),
    ] {
        if name == "_by_key" {
            v.par_sort_unstable_by_key(|e| {
                e.seen.set(e.seen.get() + 1);
                e.key
            });
        } else {
            v.par_sort_unstable_by(cmp);
        }
        assert_eq!(
            v.iter().map(|e| e.key).collect::<Vec<_>>(),
            keys_sorted,
            "{name}, len {n}"
        );
        let mut ids: Vec<usize> = v.iter().map(|e| e.id).collect();
        ids.sort_unstable();
        assert!(
            ids.iter().copied().eq(0..n),
            "{name}: a permutation, len {n}"
        );
    }
}

#[test]
fn elements_that_are_not_sync_sort_as_std_sorts_them() {
    let pool = Pool::builder().threads(2).build().unwrap();
    let mut rng = Rng::new(0xC311_5EED);
    // Under Miri the sorts' cut-offs are a few dozen elements (see `iter/sort.rs`), so a few
    // hundred reach their parallel paths.
    let lens: &[usize] = if cfg!(miri) {
        &[0, 1, 300]
    } else {
        &[0, 1, 2, 100, 2049, 5000, 70_000]
    };
    for &n in lens {
        let few_keys = rng.below(2) == 0;
        let range = 1 + rng.below(if few_keys { 10 } else { 1_000_000 });
        let keys: Vec<u32> = (0..n).map(|_| rng.below(range) as u32).collect();
        pool.install(|| check(&keys));
        if !cfg!(miri) {
            check(&keys);
        }
    }
}

static DROPS: AtomicUsize = AtomicUsize::new(0);

/// Counts its drops; not `Sync`.
struct Dropped(u32, Cell<u32>);

impl Drop for Dropped {
    fn drop(&mut self) {
        DROPS.fetch_add(1, Ordering::Relaxed);
    }
}

/// A comparison that panics after a random number of calls: the panic reaches the caller, and
/// the slice still holds every element once (the drops count them).
#[test]
fn a_panicking_comparison_leaves_every_element_once() {
    let pool = Pool::builder().threads(2).build().unwrap();
    let mut rng = Rng::new(0xBAD_C0DE);
    // Under Miri the sorts' cut-offs are a few dozen elements (see `iter/sort.rs`).
    let (n, rounds) = if cfg!(miri) { (300, 2) } else { (20_000, 4) };
    for stable in [true, false] {
        for _ in 0..rounds {
            DROPS.store(0, Ordering::Relaxed);
            let mut v: Vec<Dropped> = (0..n)
                .map(|_| Dropped(rng.below(1000) as u32, Cell::new(0)))
                .collect();
            let left = AtomicUsize::new(1 + rng.below(n as u64 * 4) as usize);
            let cmp = |a: &Dropped, b: &Dropped| {
                a.1.set(a.1.get() + 1);
                if left.fetch_sub(1, Ordering::Relaxed) == 1 {
                    panic!("comparison gives up");
                }
                a.0.cmp(&b.0)
            };
            let r = pool.install(|| {
                catch_unwind(AssertUnwindSafe(|| {
                    if stable {
                        v.par_sort_by(cmp)
                    } else {
                        v.par_sort_unstable_by(cmp)
                    }
                }))
            });
            let panicked = r.is_err();
            assert_eq!(v.len(), n);
            drop(v);
            assert_eq!(
                DROPS.load(Ordering::Relaxed),
                n,
                "stable {stable}, panicked {panicked}"
            );
        }
    }
}
