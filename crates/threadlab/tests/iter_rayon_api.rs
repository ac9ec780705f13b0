//! Rayon's iterator surface (sources for `std`'s collections, `iter::split`, the generators,
//! the splitting bounds, `fold` as an iterator, `flat_map`, `chain`, the ordered searches,
//! the indexed cuts, the string and slice splits), each against `std`'s sequential iterator
//! on random inputs, on a 2-worker pool (so the idle worker makes the running one split).
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, LinkedList, VecDeque};
use threadlab::prelude::*;
use threadlab::Pool;
use threadlab_testkit::Rng;

fn inputs(seed: u64) -> Vec<Vec<u32>> {
    let mut rng = Rng::new(seed);
    let mut lens = vec![0usize, 1, 2, 65, 1001, 5000];
    for _ in 0..3 {
        lens.push(rng.below(60_000) as usize);
    }
    lens.iter()
        .map(|&n| {
            let range = 1 + rng.below(1000);
            (0..n).map(|_| rng.below(range) as u32).collect()
        })
        .collect()
}

fn pool() -> Pool {
    Pool::builder().threads(2).build().unwrap()
}

/// `Vec` by value yields the items themselves, and every collection's source yields `std`'s
/// items (in `std`'s order where it has one).
#[test]
fn sources_of_std_collections() {
    let pool = pool();
    for v in inputs(1) {
        pool.install(|| {
            let w: Vec<u64> = v.clone().into_par_iter().map(u64::from).collect();
            assert_eq!(w, v.iter().map(|&x| u64::from(x)).collect::<Vec<_>>());
            let dq: VecDeque<u32> = v.iter().copied().collect();
            assert_eq!(dq.par_iter().copied().collect::<Vec<_>>(), v);
            assert_eq!(dq.into_par_iter().collect::<Vec<_>>(), v);
            let ll: LinkedList<u32> = v.iter().copied().collect();
            assert_eq!(ll.par_iter().copied().collect::<Vec<_>>(), v);
            let bs: BTreeSet<u32> = v.iter().copied().collect();
            assert_eq!(
                bs.par_iter().copied().collect::<Vec<_>>(),
                bs.iter().copied().collect::<Vec<_>>()
            );
            let hs: HashSet<u32> = v.iter().copied().collect();
            assert_eq!(hs.par_iter().count(), hs.len());
            let bm: BTreeMap<u32, usize> = v.iter().map(|&x| (x, x as usize)).collect();
            let c: BTreeMap<u32, usize> = bm.par_iter().map(|(k, v)| (*k, *v)).collect();
            assert_eq!(c, bm);
            let hm: HashMap<u32, u32> = v.par_iter().map(|&x| (x, x)).collect();
            assert_eq!(hm, v.iter().map(|&x| (x, x)).collect::<HashMap<_, _>>());
            let n = v.len() as u32;
            assert_eq!(
                (0..=n).into_par_iter().collect::<Vec<_>>(),
                (0..=n).collect::<Vec<_>>()
            );
            assert_eq!(Some(n).into_par_iter().collect::<Vec<_>>(), [n]);
        });
    }
    assert_eq!((250u8..=255).into_par_iter().count(), 6);
}

/// `split` yields pieces that cover the data in order; `empty`, `once`, `repeat_n`.
#[test]
fn split_and_generators() {
    let pool = pool();
    for v in inputs(2) {
        let n = v.len();
        let pieces: Vec<std::ops::Range<usize>> = pool.install(|| {
            threadlab::iter::split(0..n, |r| {
                if r.len() < 2 {
                    (r, None)
                } else {
                    let m = (r.start + r.end) / 2;
                    (r.start..m, Some(m..r.end))
                }
            })
            .collect()
        });
        let flat: Vec<usize> = pieces.into_iter().flatten().collect();
        assert_eq!(flat, (0..n).collect::<Vec<_>>());
        let r: Vec<u32> = pool.install(|| threadlab::iter::repeat_n(7u32, n).collect());
        assert_eq!(r, vec![7; n]);
    }
    assert_eq!(threadlab::iter::empty::<u8>().count(), 0);
    assert_eq!(threadlab::iter::once(3).collect::<Vec<_>>(), [3]);
}

/// The splitting bounds change nothing in the answer, whatever the bound.
#[test]
fn bounds_keep_the_answer() {
    let pool = pool();
    for v in inputs(3) {
        let want: Vec<u32> = v.iter().map(|x| x * 3).collect();
        // The same pipeline (each item times three) after the bound.
        fn tripled<'a>(bounded: impl ParallelIterator<Item = &'a u32>) -> Vec<u32> {
            bounded.map(|x| x * 3).collect()
        }
        for b in [1usize, 7, 1000, usize::MAX] {
            pool.install(|| {
                assert_eq!(tripled(v.par_iter().with_max_len(b)), want);
                assert_eq!(tripled(v.par_iter().with_min_len(b)), want);
                assert_eq!(tripled(v.par_iter().by_uniform_blocks(b)), want);
            });
        }
    }
}

/// A bound set before `flat_map` still cuts the base: with pieces of one base position (on one
/// worker, so only the bound cuts), no block of the `map_init` that follows (one state each)
/// holds inner items of two base items, as in Rayon, where `flat_map` splits as its base does.
/// (Without the bound the pieces hold many base items, and blocks of up to a thousand
/// positions mix them.)
#[test]
fn bounds_reach_through_flat_map() {
    let pool = Pool::builder().threads(1).build().unwrap();
    for n in [1u32, 2, 100, 3000] {
        let states = std::sync::atomic::AtomicUsize::new(0);
        let got: Vec<(usize, u32)> = pool.install(|| {
            (0..n)
                .into_par_iter()
                .with_max_len(1)
                .flat_map(|x| vec![x, x])
                .map_init(
                    || states.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
                    |state, x| (*state, x),
                )
                .collect()
        });
        let want: Vec<u32> = (0..n).flat_map(|x| [x, x]).collect();
        assert_eq!(got.iter().map(|&(_, x)| x).collect::<Vec<_>>(), want);
        let mut base_of_state = std::collections::HashMap::new();
        for (state, x) in got {
            let first = *base_of_state.entry(state).or_insert(x);
            assert_eq!(
                first, x,
                "one block held inner items of {first} and {x} (n = {n})"
            );
        }
    }
}

/// `fold` as an iterator of accumulators, `flat_map`, `flatten`, `chain`, `update`,
/// `map_init`, `reduce_with`.
#[test]
fn combining_adapters() {
    let pool = pool();
    for v in inputs(4) {
        pool.install(|| {
            let s: u64 = v.par_iter().fold(|| 0u64, |a, &x| a + u64::from(x)).sum();
            assert_eq!(s, v.iter().map(|&x| u64::from(x)).sum::<u64>());
            let fm: Vec<u32> = v.par_iter().flat_map(|&x| 0..x % 5).collect();
            assert_eq!(fm, v.iter().flat_map(|&x| 0..x % 5).collect::<Vec<_>>());
            let nested: Vec<Vec<u32>> = v.iter().map(|&x| vec![x; (x % 3) as usize]).collect();
            let fl: Vec<u32> = nested.clone().into_par_iter().flatten().collect();
            assert_eq!(fl, nested.into_iter().flatten().collect::<Vec<_>>());
            let ch: Vec<u32> = v
                .par_iter()
                .copied()
                .chain(v.par_iter().copied().rev())
                .collect();
            assert_eq!(
                ch,
                v.iter()
                    .copied()
                    .chain(v.iter().copied().rev())
                    .collect::<Vec<_>>()
            );
            let up: Vec<u32> = v.par_iter().copied().update(|x| *x += 1).collect();
            assert_eq!(up, v.iter().map(|x| x + 1).collect::<Vec<_>>());
            let mi: Vec<u32> = v.par_iter().map_init(|| 2u32, |k, &x| x * *k).collect();
            assert_eq!(mi, v.iter().map(|x| x * 2).collect::<Vec<_>>());
            assert_eq!(
                v.par_iter().copied().reduce_with(u32::max),
                v.iter().copied().max()
            );
        });
    }
}

/// The ordered searches and the indexed cuts.
#[test]
fn searches_and_cuts() {
    let pool = pool();
    for v in inputs(5) {
        let n = v.len();
        pool.install(|| {
            assert_eq!(
                v.par_iter().find_first(|x| *x % 7 == 3),
                v.iter().find(|x| *x % 7 == 3)
            );
            assert_eq!(
                v.par_iter().find_last(|x| *x % 7 == 3),
                v.iter().rev().find(|x| *x % 7 == 3)
            );
            assert_eq!(
                v.par_iter().position_first(|x| *x % 5 == 1),
                v.iter().position(|x| *x % 5 == 1)
            );
            assert_eq!(
                v.par_iter().position_last(|x| *x % 5 == 1),
                v.iter().rposition(|x| *x % 5 == 1)
            );
            for k in [0, 1.min(n), n / 3, n] {
                assert_eq!(v.par_iter().take(k).copied().collect::<Vec<_>>(), v[..k]);
                assert_eq!(v.par_iter().skip(k).copied().collect::<Vec<_>>(), v[k..]);
            }
            for s in [1, 2, 5] {
                let st: Vec<u32> = v.par_iter().copied().step_by(s).collect();
                assert_eq!(st, v.iter().copied().step_by(s).collect::<Vec<_>>());
            }
            let mut out = vec![9; 3];
            v.par_iter().copied().collect_into_vec(&mut out);
            assert_eq!(out, v);
        });
    }
}

/// The slice and string splits give `std`'s parts.
#[test]
fn slice_and_string_parts() {
    let pool = pool();
    for v in inputs(6) {
        pool.install(|| {
            let w: Vec<u32> = v.par_windows(3).map(|w| w[0] + w[2]).collect();
            assert_eq!(w, v.windows(3).map(|w| w[0] + w[2]).collect::<Vec<_>>());
            assert_eq!(
                v.par_chunks_exact(4).collect::<Vec<_>>(),
                v.chunks_exact(4).collect::<Vec<_>>()
            );
            assert_eq!(
                v.par_rchunks_exact(4).collect::<Vec<_>>(),
                v.rchunks_exact(4).collect::<Vec<_>>()
            );
            assert_eq!(
                v.par_split(|x| x % 9 == 0).collect::<Vec<_>>(),
                v.split(|x| x % 9 == 0).collect::<Vec<_>>()
            );
            let text: String = v
                .iter()
                .map(|x| match x % 6 {
                    0 => ' ',
                    1 => '\n',
                    2 => 'é',
                    _ => 'a',
                })
                .collect();
            assert_eq!(text.par_chars().collect::<String>(), text);
            assert_eq!(
                text.par_split_whitespace().collect::<Vec<_>>(),
                text.split_whitespace().collect::<Vec<_>>()
            );
            assert_eq!(
                text.par_lines().collect::<Vec<_>>(),
                text.lines().collect::<Vec<_>>()
            );
            assert_eq!(
                text.par_split('a').collect::<Vec<_>>(),
                text.split('a').collect::<Vec<_>>()
            );
            assert_eq!(
                text.par_split_inclusive('\n').collect::<Vec<_>>(),
                text.split_inclusive('\n').collect::<Vec<_>>()
            );
            let bridged: Vec<u32> = v.iter().copied().par_bridge().map(|x| x + 1).collect();
            let mut b = bridged;
            b.sort();
            let mut want: Vec<u32> = v.iter().map(|x| x + 1).collect();
            want.sort();
            assert_eq!(b, want);
            let mut ext = vec![1u32];
            ext.par_extend(v.par_iter().copied());
            assert_eq!(ext[1..], v[..]);
        });
    }
}

/// `collect` into `Result`/`Option` (the first `Err` in order wins), `unzip` into nested
/// pairs, `fold_with`, `fold_chunks(_with)`, `char` ranges, `String` from `&char`.
#[test]
fn collections_folds_and_unzip() {
    let pool = pool();
    for v in inputs(7) {
        pool.install(|| {
            let r: Result<Vec<u32>, u32> = v
                .par_iter()
                .map(|&x| if x % 97 == 5 { Err(x) } else { Ok(x) })
                .collect();
            let want: Result<Vec<u32>, u32> = v
                .iter()
                .map(|&x| if x % 97 == 5 { Err(x) } else { Ok(x) })
                .collect();
            assert_eq!(r, want);
            let o: Option<Vec<u32>> = v.par_iter().map(|&x| x.checked_sub(1)).collect();
            assert_eq!(
                o,
                v.iter()
                    .map(|&x| x.checked_sub(1))
                    .collect::<Option<Vec<u32>>>()
            );
            let (a, (b, c)): (Vec<u32>, (Vec<u64>, Vec<u8>)) = v
                .par_iter()
                .map(|&x| (x, (u64::from(x) * 2, x as u8)))
                .unzip();
            assert_eq!(a, v);
            assert_eq!(b, v.iter().map(|&x| u64::from(x) * 2).collect::<Vec<_>>());
            assert_eq!(c, v.iter().map(|&x| x as u8).collect::<Vec<_>>());
            let s: u64 = v.par_iter().fold_with(0u64, |a, &x| a + u64::from(x)).sum();
            assert_eq!(s, v.iter().map(|&x| u64::from(x)).sum::<u64>());
            for size in [1, 3, 64] {
                let fc: Vec<u32> = v
                    .par_iter()
                    .fold_chunks(size, || 0, |a, &x| a.max(x))
                    .collect();
                assert_eq!(
                    fc,
                    v.chunks(size)
                        .map(|c| *c.iter().max().unwrap())
                        .collect::<Vec<_>>()
                );
                let fw: Vec<usize> = v
                    .par_iter()
                    .fold_chunks_with(size, 0usize, |a, _| a + 1)
                    .collect();
                assert_eq!(fw, v.chunks(size).map(|c| c.len()).collect::<Vec<_>>());
            }
        });
    }
    let chars: String = ('a'..='z').into_par_iter().collect();
    assert_eq!(chars, ('a'..='z').collect::<String>());
    assert_eq!(
        ('\u{D7FF}'..'\u{E001}').into_par_iter().count(),
        ('\u{D7FF}'..'\u{E001}').count()
    );
    let v = ['x', 'y'];
    assert_eq!(v.par_iter().collect::<String>(), "xy");
}

/// The sorts never panic on a comparison that is not a total order (Rayon's promise): every
/// element stays, in some order.
#[test]
fn sorts_survive_an_inconsistent_comparison() {
    let pool = pool();
    for v in inputs(8) {
        let mut rng = std::sync::Mutex::new(Rng::new(v.len() as u64));
        let coin = |_: &u32, _: &u32| match rng.lock().unwrap().below(3) {
            0 => std::cmp::Ordering::Less,
            1 => std::cmp::Ordering::Equal,
            _ => std::cmp::Ordering::Greater,
        };
        let mut want = v.clone();
        want.sort_unstable();
        let mut a = v.clone();
        pool.install(|| a.par_sort_by(coin));
        a.sort_unstable();
        assert_eq!(a, want);
        let mut b = v.clone();
        pool.install(|| b.par_sort_unstable_by(coin));
        b.sort_unstable();
        assert_eq!(b, want);
        let _ = rng.get_mut();
    }
}

/// `par_drain` removes what `std`'s `drain` removes and yields it in order.
#[test]
fn par_drain_matches_std() {
    let pool = pool();
    let mut rng = Rng::new(9);
    for v in inputs(9) {
        let n = v.len();
        let (a, b) = (rng.index(n + 1), rng.index(n + 1));
        let (lo, hi) = (a.min(b), a.max(b));
        let (mut ours, mut std_v) = (v.clone(), v.clone());
        let got: Vec<u32> = pool.install(|| ours.par_drain(lo..hi).collect());
        let want: Vec<u32> = std_v.drain(lo..hi).collect();
        assert_eq!((got, ours), (want, std_v));
        let mut dq: VecDeque<u32> = v.iter().copied().collect();
        let got: Vec<u32> = dq.par_drain(..).collect();
        assert_eq!((got, dq.len()), (v.clone(), 0));
        let mut set: HashSet<u32> = v.iter().copied().collect();
        let distinct = set.len();
        assert_eq!(set.par_drain().count(), distinct);
        assert!(set.is_empty());
    }
}

/// `zip_eq` pairs as `zip` does when the lengths agree, and panics when they differ.
#[test]
fn zip_eq_checks_lengths() {
    let pool = pool();
    for v in inputs(10) {
        let w: Vec<u64> = v.iter().map(|&x| u64::from(x) + 1).collect();
        let got: Vec<(u32, u64)> = pool.install(|| {
            v.par_iter()
                .copied()
                .zip_eq(w.par_iter().copied())
                .collect()
        });
        assert_eq!(
            got,
            v.iter().copied().zip(w.iter().copied()).collect::<Vec<_>>()
        );
        let short = &w[..v.len().saturating_sub(1)];
        if short.len() != v.len() {
            let r = std::panic::catch_unwind(|| v.par_iter().zip_eq(short.par_iter()).count());
            assert!(r.is_err());
        }
    }
}

/// `try_for_each` returns a stop when there is one and the output otherwise; `try_reduce`
/// and `try_reduce_with` give `std`'s `try_fold` answer when there is no stop, and a stop
/// otherwise.
#[test]
fn try_consumers() {
    let pool = pool();
    for v in inputs(11) {
        pool.install(|| {
            let bad = v.iter().copied().find(|x| x % 101 == 7);
            let r = v
                .par_iter()
                .try_for_each(|&x| if x % 101 == 7 { Err(x) } else { Ok(()) });
            match bad {
                None => assert_eq!(r, Ok(())),
                Some(_) => assert!(matches!(r, Err(x) if x % 101 == 7)),
            }
            let sum = v
                .par_iter()
                .map(|&x| Some(u64::from(x)))
                .try_reduce(|| 0, |a, b| a.checked_add(b));
            assert_eq!(sum, Some(v.iter().map(|&x| u64::from(x)).sum::<u64>()));
            let capped = v
                .par_iter()
                .map(|&x| Ok::<u32, u32>(x))
                .try_reduce_with(|a, b| {
                    if a.max(b) > 990 {
                        Err(a.max(b))
                    } else {
                        Ok(a.max(b))
                    }
                });
            let max = v.iter().copied().max();
            match max {
                None => assert_eq!(capped, None),
                Some(m) if m > 990 => assert!(matches!(capped, Some(Err(e)) if e > 990)),
                Some(m) => assert_eq!(capped, Some(Ok(m))),
            }
        });
    }
}

/// After a panic in one piece, `panic_fuse` stops the others: on one worker, with every item
/// its own piece (`with_max_len(1)`), fewer items run than without it (every other item).
#[test]
fn panic_fuse_stops_the_other_pieces() {
    let pool = Pool::builder().threads(1).build().unwrap();
    let n = 1000u32;
    let count = |fused: bool| {
        let seen = std::sync::atomic::AtomicUsize::new(0);
        let body = |x: u32| {
            if x == 100 {
                panic!("boom");
            }
            seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        };
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.install(|| {
                let it = (0..n).into_par_iter().with_max_len(1);
                if fused {
                    it.panic_fuse().for_each(body)
                } else {
                    it.for_each(body)
                }
            })
        }));
        assert!(r.is_err());
        seen.into_inner()
    };
    assert_eq!(count(false), n as usize - 1);
    assert!(count(true) < n as usize - 1);
}

/// `par_sort_by_cached_key` is `std`'s `sort_by_cached_key` (stable); `par_sort_unstable_by_key`
/// sorts by the key.
#[test]
fn keyed_sorts_match_std() {
    let pool = pool();
    for v in inputs(12) {
        let key = |x: &u32| x % 37;
        let mut ours = v.clone();
        pool.install(|| ours.par_sort_by_cached_key(key));
        let mut want = v.clone();
        want.sort_by_cached_key(key);
        assert_eq!(ours, want);
        let mut un = v.clone();
        pool.install(|| un.par_sort_unstable_by_key(key));
        assert!(un.windows(2).all(|w| key(&w[0]) <= key(&w[1])));
        un.sort_unstable();
        let mut all = v.clone();
        all.sort_unstable();
        assert_eq!(un, all);
    }
}

/// `u128` and `i128` ranges (`a..b` and `a..=b`) yield `std`'s values, in order, at either end
/// of the types; a range of more values than `usize` can count runs too (a position is then a
/// run of values), and its first match is found at once.
#[test]
fn ranges_of_128_bit_integers() {
    let pool = pool();
    let mut rng = Rng::new(128);
    pool.install(|| {
        for _ in 0..20 {
            let len = rng.below(5000) as u128;
            let at = u128::from(rng.below(u64::MAX)) << rng.below(64);
            for (a, b) in [(at, at.saturating_add(len)), (u128::MAX - len, u128::MAX)] {
                let want: Vec<u128> = (a..b).collect();
                assert_eq!((a..b).into_par_iter().collect::<Vec<_>>(), want);
                assert_eq!((a..b).into_par_iter().count(), want.len());
                let want: Vec<u128> = (a..=b).filter(|x| x % 3 == 0).collect();
                let got: Vec<u128> = (a..=b).into_par_iter().filter(|x| x % 3 == 0).collect();
                assert_eq!(got, want);
                assert_eq!(
                    (a..=b).into_par_iter().find_last(|x| x % 7 == 0),
                    (a..=b).rev().find(|x| x % 7 == 0)
                );
            }
            let a = i128::MIN + len as i128;
            for (a, b) in [(i128::MIN, a), (-(len as i128), len as i128)] {
                let want: Vec<i128> = (a..b).collect();
                assert_eq!((a..b).into_par_iter().collect::<Vec<_>>(), want);
                assert_eq!(
                    (a..=b).into_par_iter().map(|x| x % 1000).sum::<i128>(),
                    (a..=b).map(|x| x % 1000).sum::<i128>()
                );
            }
        }
        // More values than positions: 10^27 (Rayon's octillion), and all of `i128`.
        let octillion = 10u128.pow(27);
        assert_eq!((0..octillion).into_par_iter().find_first(|_| true), Some(0));
        assert_eq!(
            (5..=octillion)
                .into_par_iter()
                .find_first(|x| x % 1000 == 999),
            Some(999)
        );
        assert_eq!(
            (i128::MIN..i128::MAX)
                .into_par_iter()
                .find_first(|x| *x > i128::MIN + 2),
            Some(i128::MIN + 3)
        );
        assert_eq!((0..octillion).into_par_iter().take_any(5).count(), 5);
    });
}
