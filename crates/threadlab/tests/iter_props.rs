//! Every adapter and consumer of `threadlab::iter` against `std`'s sequential iterator, on
//! random inputs of random lengths (0, 1, odd, around the block size, large), on a 2-worker pool
//! (so the idle worker makes the running one split) and on the global pool. The bodies spin a
//! little on some items so that runs are long enough for splits to happen.
use std::num::Wrapping;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use threadlab::prelude::*;
use threadlab::Pool;
use threadlab_testkit::Rng;

/// Lengths to try: the edges, the block size's neighbours, and random ones up to 200 000.
fn lengths(rng: &mut Rng) -> Vec<usize> {
    if cfg!(miri) {
        // Miri is some thousand times slower: a few short lengths and one random length past
        // the sorts' sequential cut-off of 2048 (so their parallel paths run).
        return vec![0, 1, 2, 65, 2049 + rng.below(400) as usize];
    }
    let mut v = vec![0, 1, 2, 3, 7, 63, 64, 65, 129, 1001];
    for _ in 0..4 {
        v.push(rng.below(200_000) as usize);
    }
    v
}

/// Some work on a few items, so the run lasts long enough to be split.
fn spin(x: u32) -> u32 {
    if x % 61 == 0 {
        let mut h = x;
        for _ in 0..200 {
            h = std::hint::black_box(h.wrapping_mul(31).wrapping_add(7));
        }
        std::hint::black_box(h);
    }
    x
}

fn input(rng: &mut Rng, len: usize) -> Vec<u32> {
    let range = 1 + rng.below(1000);
    (0..len).map(|_| rng.below(range) as u32).collect()
}

fn check_all(v: &[u32], other: &[u32]) {
    let n = v.len();
    // map + collect keeps order.
    let got: Vec<u64> = v.par_iter().map(|&x| spin(x) as u64 * 3).collect();
    let want: Vec<u64> = v.iter().map(|&x| x as u64 * 3).collect();
    assert_eq!(got, want, "map/collect, len {n}");
    // filter, filter_map.
    let got: Vec<&u32> = v.par_iter().filter(|x| spin(**x) % 3 == 0).collect();
    let want: Vec<&u32> = v.iter().filter(|x| **x % 3 == 0).collect();
    assert_eq!(got, want, "filter, len {n}");
    let got: Vec<u32> = v.par_iter().filter_map(|&x| x.checked_sub(500)).collect();
    let want: Vec<u32> = v.iter().filter_map(|&x| x.checked_sub(500)).collect();
    assert_eq!(got, want, "filter_map, len {n}");
    // enumerate, zip (unequal lengths), copied, cloned.
    let got: Vec<(usize, u32)> = v.par_iter().copied().enumerate().collect();
    let want: Vec<(usize, u32)> = v.iter().copied().enumerate().collect();
    assert_eq!(got, want, "enumerate, len {n}");
    let got: Vec<(u32, u32)> = v
        .par_iter()
        .cloned()
        .zip(other.par_iter().copied())
        .collect();
    let want: Vec<(u32, u32)> = v.iter().cloned().zip(other.iter().copied()).collect();
    assert_eq!(got, want, "zip, len {n}");
    let got: u64 = v
        .par_iter()
        .zip(other)
        .map(|(a, b)| (*a as u64) * (*b as u64))
        .sum();
    let want: u64 = v
        .iter()
        .zip(other)
        .map(|(a, b)| (*a as u64) * (*b as u64))
        .sum();
    assert_eq!(got, want, "dot, len {n}");
    // flat_map_iter, chunks, par_chunks, inspect.
    let got: Vec<u32> = v.par_iter().flat_map_iter(|&x| 0..x % 4).collect();
    let want: Vec<u32> = v.iter().flat_map(|&x| 0..x % 4).collect();
    assert_eq!(got, want, "flat_map_iter, len {n}");
    let got: Vec<Vec<u32>> = v.par_iter().copied().chunks(7).collect();
    let want: Vec<Vec<u32>> = v.chunks(7).map(<[u32]>::to_vec).collect();
    assert_eq!(got, want, "chunks, len {n}");
    let got: Vec<u32> = v.par_chunks(5).map(|c| c.iter().sum()).collect();
    let want: Vec<u32> = v.chunks(5).map(|c| c.iter().sum()).collect();
    assert_eq!(got, want, "par_chunks, len {n}");
    let seen = AtomicUsize::new(0);
    let got = v
        .par_iter()
        .inspect(|_| {
            seen.fetch_add(1, Ordering::Relaxed);
        })
        .count();
    assert_eq!((got, seen.into_inner()), (n, n), "inspect/count, len {n}");
    // for_each, reduce, fold, sum, product.
    let total = AtomicU64::new(0);
    v.par_iter().for_each(|&x| {
        total.fetch_add(spin(x) as u64, Ordering::Relaxed);
    });
    let want_sum: u64 = v.iter().map(|&x| x as u64).sum();
    assert_eq!(total.into_inner(), want_sum, "for_each, len {n}");
    let got = v.par_iter().map(|&x| x as u64).reduce(|| 0, |a, b| a + b);
    assert_eq!(got, want_sum, "reduce, len {n}");
    let got = v
        .par_iter()
        .fold(|| 0u64, |a, &x| a + x as u64)
        .reduce(|| 0, |a, b| a + b);
    assert_eq!(got, want_sum, "fold/reduce, len {n}");
    assert_eq!(v.par_iter().map(|&x| x as u64).sum::<u64>(), want_sum);
    let got: Wrapping<u64> = v.par_iter().map(|&x| Wrapping(x as u64 | 1)).product();
    let want: Wrapping<u64> = v.iter().map(|&x| Wrapping(x as u64 | 1)).product();
    assert_eq!(got, want, "product, len {n}");
    // min/max and their forms: ties resolved as std does (first min, last max).
    assert_eq!(v.par_iter().min(), v.iter().min(), "min, len {n}");
    assert_eq!(v.par_iter().max(), v.iter().max(), "max, len {n}");
    let e = || v.par_iter().copied().enumerate();
    let se = || v.iter().copied().enumerate();
    assert_eq!(e().min_by_key(|p| p.1 % 10), se().min_by_key(|p| p.1 % 10));
    assert_eq!(e().max_by_key(|p| p.1 % 10), se().max_by_key(|p| p.1 % 10));
    let by = |a: &(usize, u32), b: &(usize, u32)| (a.1 % 7).cmp(&(b.1 % 7));
    assert_eq!(e().min_by(by), se().min_by(by), "min_by, len {n}");
    assert_eq!(e().max_by(by), se().max_by(by), "max_by, len {n}");
    // any, all, find_any, position_any.
    let target = v.get(n / 2).copied().unwrap_or(7);
    assert_eq!(
        v.par_iter().any(|&x| spin(x) == target),
        v.contains(&target)
    );
    assert_eq!(
        v.par_iter().all(|&x| x != target),
        !v.contains(&target),
        "all, len {n}"
    );
    match v.par_iter().find_any(|&&x| x == target) {
        Some(x) => assert_eq!(*x, target),
        None => assert!(!v.contains(&target)),
    }
    match v.par_iter().position_any(|&x| x == target) {
        Some(i) => assert_eq!(v[i], target),
        None => assert!(!v.contains(&target)),
    }
    // unzip, partition.
    let (a, b): (Vec<u32>, Vec<u64>) = v.par_iter().map(|&x| (x, x as u64 + 1)).unzip();
    let (sa, sb): (Vec<u32>, Vec<u64>) = v.iter().map(|&x| (x, x as u64 + 1)).unzip();
    assert_eq!((a, b), (sa, sb), "unzip, len {n}");
    let got: (Vec<u32>, Vec<u32>) = v.par_iter().copied().partition(|x| x % 2 == 0);
    let want: (Vec<u32>, Vec<u32>) = v.iter().copied().partition(|x| x % 2 == 0);
    assert_eq!(got, want, "partition, len {n}");
    // par_iter_mut.
    let mut m = v.to_vec();
    m.par_iter_mut().for_each(|x| *x = x.wrapping_mul(3));
    let want: Vec<u32> = v.iter().map(|x| x.wrapping_mul(3)).collect();
    assert_eq!(m, want, "par_iter_mut, len {n}");
    let mut m = v.to_vec();
    m.par_chunks_mut(3)
        .enumerate()
        .for_each(|(i, c)| c.iter_mut().for_each(|x| *x = i as u32));
    let want: Vec<u32> = (0..n).map(|i| (i / 3) as u32).collect();
    assert_eq!(m, want, "par_chunks_mut, len {n}");
    // Sorts: unstable against std, stable by key on (key, original index) pairs.
    let mut s = v.to_vec();
    s.par_sort_unstable();
    let mut want = v.to_vec();
    want.sort_unstable();
    assert_eq!(s, want, "par_sort_unstable, len {n}");
    let mut s = v.to_vec();
    s.par_sort_unstable_by(|a, b| b.cmp(a));
    want.reverse();
    assert_eq!(s, want, "par_sort_unstable_by, len {n}");
    let pairs: Vec<(u32, usize)> = v
        .iter()
        .map(|&x| (x % 50, 0))
        .enumerate()
        .map(|(i, (k, _))| (k, i))
        .collect();
    let mut s = pairs.clone();
    s.par_sort_by_key(|p| p.0);
    let mut want = pairs.clone();
    want.sort_by_key(|p| p.0);
    assert_eq!(s, want, "par_sort_by_key (stable), len {n}");
    let mut s = pairs.clone();
    s.par_sort_by(|a, b| b.0.cmp(&a.0));
    want.sort_by_key(|p| std::cmp::Reverse(p.0));
    assert_eq!(s, want, "par_sort_by (stable), len {n}");
    let mut s = v.to_vec();
    s.par_sort();
    assert!(s.windows(2).all(|w| w[0] <= w[1]), "par_sort, len {n}");
}

#[test]
fn every_adapter_and_consumer_matches_std_on_a_two_worker_pool() {
    let pool = Pool::builder().threads(2).build().unwrap();
    let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15);
    for round in 0..if cfg!(miri) { 1 } else { 3 } {
        for len in lengths(&mut rng) {
            let v = input(&mut rng, len);
            let other_len = if round == 1 {
                len
            } else {
                rng.below(len as u64 + 5) as usize
            };
            let other = input(&mut rng, other_len);
            pool.install(|| check_all(&v, &other));
        }
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "the global pool's threads outlive the test, which Miri reports"
)]
fn every_adapter_and_consumer_matches_std_on_the_global_pool() {
    let mut rng = Rng::new(42);
    for len in lengths(&mut rng) {
        let v = input(&mut rng, len);
        let other = input(&mut rng, len);
        check_all(&v, &other);
    }
}

#[test]
fn ranges_of_every_integer_type_match_std() {
    let pool = Pool::builder().threads(2).build().unwrap();
    pool.install(|| {
        assert_eq!(
            (-500i32..700).into_par_iter().sum::<i32>(),
            (-500..700).sum()
        );
        assert_eq!((5u64..5).into_par_iter().count(), 0);
        #[allow(clippy::reversed_empty_ranges)]
        let empty = (9i64..3).into_par_iter().count();
        assert_eq!(empty, 0);
        assert_eq!(
            (0u8..255).into_par_iter().map(u32::from).sum::<u32>(),
            (0..255u32).sum()
        );
        let got: Vec<i16> = (-300i16..300)
            .into_par_iter()
            .filter(|x| x % 7 == 0)
            .collect();
        let want: Vec<i16> = (-300i16..300).filter(|x| x % 7 == 0).collect();
        assert_eq!(got, want);
        let n = if cfg!(miri) { 20_000 } else { 1_000_000 };
        assert_eq!(
            (0usize..n).into_par_iter().map(|x| x as u64).sum::<u64>(),
            (0..n as u64).sum()
        );
    });
}

#[test]
fn zero_sized_items_and_empty_inputs_work() {
    if cfg!(miri) {
        // On a pool of its own: the global pool's threads would outlive the test, which Miri
        // reports.
        let pool = Pool::builder().threads(2).build().unwrap();
        pool.install(zero_sized_and_empty);
    } else {
        zero_sized_and_empty();
    }
}

fn zero_sized_and_empty() {
    let n = if cfg!(miri) { 5_003 } else { 100_003 };
    let units = vec![(); n];
    assert_eq!(units.par_iter().count(), n);
    let got: Vec<()> = units.par_iter().copied().collect();
    assert_eq!(got.len(), n);
    let mut zs = [(); 5000];
    zs.par_sort();
    zs.par_sort_unstable();
    let empty: Vec<u8> = Vec::new();
    assert_eq!(empty.par_iter().max(), None);
    assert_eq!(empty.par_iter().copied().sum::<u8>(), 0);
    assert_eq!(empty.par_iter().copied().product::<u8>(), 1);
    assert!(empty.par_iter().all(|_| false));
    assert!(!empty.par_iter().any(|_| true));
    assert_eq!(empty.par_chunks(3).count(), 0);
}

/// A worker that goes idle only after a sort began (here: busy until the sort has made 10,000
/// comparisons) still takes part in it: while long, the pieces a busy pool sorts stay
/// splittable by heartbeat. Before, a sort that began with nobody idle went whole to std's
/// sort on the worker that called it, and the late worker got no comparison at all.
#[test]
fn a_worker_idle_after_a_sort_began_takes_part_in_it() {
    use std::sync::atomic::AtomicBool;
    if cfg!(miri) {
        return; // two million elements: far too long under Miri.
    }
    let pool = Pool::builder().threads(2).build().unwrap();
    let mut rng = Rng::new(0x50_27);
    for stable in [false, true] {
        // Longer than the lengths below which a busy pool stops cutting (2^16 and 2^20).
        let len = if stable { (1 << 21) + 1 } else { 1 << 18 };
        let mut v: Vec<u64> = (0..len).map(|_| rng.next_u64()).collect();
        let mut want = v.clone();
        want.sort_unstable();
        let (busy, release) = (AtomicBool::new(false), AtomicBool::new(false));
        let (comparisons, elsewhere) = (AtomicUsize::new(0), AtomicUsize::new(0));
        pool.install(|| {
            let me = threadlab::current_thread_index();
            let compare = |a: &u64, b: &u64| {
                if !release.load(Ordering::Relaxed)
                    && comparisons.fetch_add(1, Ordering::Relaxed) == 10_000
                {
                    release.store(true, Ordering::Relaxed);
                }
                if threadlab::current_thread_index() != me {
                    elsewhere.fetch_add(1, Ordering::Relaxed);
                }
                a.cmp(b)
            };
            threadlab::scope(|s| {
                // The other worker takes this task and stays busy until released.
                s.spawn(|_| {
                    busy.store(true, Ordering::Release);
                    while !release.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                });
                while !busy.load(Ordering::Acquire) {
                    std::hint::spin_loop();
                }
                if stable {
                    v.par_sort_by(compare);
                } else {
                    v.par_sort_unstable_by(compare);
                }
            });
        });
        assert_eq!(v, want, "stable: {stable}");
        assert!(
            elsewhere.load(Ordering::Relaxed) > 0,
            "stable: {stable}: the worker released after the sort began made no comparison"
        );
    }
}
