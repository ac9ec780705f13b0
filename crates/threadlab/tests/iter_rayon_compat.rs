//! Rayon's adapters that threadlab added for ported programs, each against a sequential
//! reference built from `std`'s iterators, on random inputs of random lengths, on a 2-worker
//! pool (so the idle worker makes the running one split) and on the global pool. Pieces are
//! also cut at every position (`with_max_len(1)`), so every way a piece can start is run.
use threadlab::prelude::*;
use threadlab::Pool;
use threadlab_testkit::Rng;

fn lengths(rng: &mut Rng) -> Vec<usize> {
    if cfg!(miri) {
        return vec![0, 1, 2, 3, 70];
    }
    let mut v = vec![0, 1, 2, 3, 4, 5, 64, 1025];
    for _ in 0..3 {
        v.push(rng.below(50_000) as usize);
    }
    v
}

/// Calls `each(pool, rng, len)` for every length of [`lengths`], on one 2-worker pool and one
/// generator seeded with `seed` (so the inputs a test draws from it are the same each run).
fn for_lengths(seed: u64, mut each: impl FnMut(&Pool, &mut Rng, usize)) {
    let pool = Pool::builder().threads(2).build().unwrap();
    let mut rng = Rng::new(seed);
    for len in lengths(&mut rng) {
        each(&pool, &mut rng, len);
    }
}

fn input(rng: &mut Rng, len: usize) -> Vec<i64> {
    (0..len).map(|_| rng.below(1000) as i64).collect()
}

/// An [`input`] of a random length from 0 to `most`.
fn input_up_to(rng: &mut Rng, most: usize) -> Vec<i64> {
    let len = rng.below(most as u64 + 1) as usize;
    input(rng, len)
}

/// `std`'s items with `sep` between every two neighbours.
fn interspersed<T: Clone>(items: impl IntoIterator<Item = T>, sep: T) -> Vec<T> {
    let mut out = Vec::new();
    for (i, x) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(sep.clone());
        }
        out.push(x);
    }
    out
}

fn check_intersperse(v: &[i64]) {
    let n = v.len();
    let want = interspersed(v.iter().copied(), -1);
    let got: Vec<i64> = v.par_iter().copied().intersperse(-1).collect();
    assert_eq!(got, want, "indexed base, len {n}");
    let got: Vec<i64> = v
        .par_iter()
        .copied()
        .with_max_len(1)
        .intersperse(-1)
        .collect();
    assert_eq!(got, want, "pieces of one position, len {n}");
    // A base whose positions are not its items (a filter): separators only between items.
    let kept = v.iter().copied().filter(|x| x % 3 == 0);
    let want_f = interspersed(kept, -1);
    let got: Vec<i64> = v
        .par_iter()
        .copied()
        .filter(|x| x % 3 == 0)
        .intersperse(-1)
        .collect();
    assert_eq!(got, want_f, "filtered base, len {n}");
    // Indexed: positions line up with zip_eq and enumerate, and it reverses.
    let got: Vec<(i64, usize)> = v
        .par_iter()
        .copied()
        .intersperse(-1)
        .zip_eq(0..want.len())
        .collect();
    let want_z: Vec<(i64, usize)> = want.iter().copied().zip(0..).collect();
    assert_eq!(got, want_z, "zip_eq, len {n}");
    let got: Vec<i64> = v.par_iter().copied().intersperse(-1).rev().collect();
    let want_r: Vec<i64> = want.iter().rev().copied().collect();
    assert_eq!(got, want_r, "rev, len {n}");
    // Twice: -2 between all of the first's items, separators included.
    let got: Vec<i64> = v
        .par_iter()
        .copied()
        .intersperse(-1)
        .intersperse(-2)
        .collect();
    assert_eq!(
        got,
        interspersed(want.iter().copied(), -2),
        "twice, len {n}"
    );
    // Counted and summed without collecting.
    assert_eq!(v.par_iter().intersperse(&7).count(), want.len());
    let sum: i64 = v.par_iter().copied().intersperse(5).sum();
    assert_eq!(sum, interspersed(v.iter().copied(), 5).iter().sum::<i64>());
}

#[test]
fn intersperse_matches_a_sequential_reference() {
    for_lengths(0x1A7E_5BE5, |pool, rng, len| {
        let v = input(rng, len);
        pool.install(|| check_intersperse(&v));
        if !cfg!(miri) {
            check_intersperse(&v);
        }
    });
    // Strings, through an unindexed source (a split).
    let words: Vec<String> = (0..500).map(|i| i.to_string()).collect();
    let joined = words.join(",");
    let got: String = joined.par_split(',').intersperse(";").collect();
    assert_eq!(got, words.join(";"));
}

/// `IndexedParallelIterator::len` is the number of items the pipeline yields, for every
/// indexed source and adapter, without running it.
fn check_len(v: &[i64], other: &[i64], size: usize) {
    let n = v.len();
    let count = |it: &dyn Fn() -> (usize, usize), what: &str| {
        let (len, items) = it();
        assert_eq!(len, items, "{what}, len {n}, size {size}");
    };
    count(&|| (v.par_iter().len(), v.par_iter().count()), "par_iter");
    count(&|| ((0..n).into_par_iter().len(), n), "range");
    count(
        &|| ((0..=n).into_par_iter().len(), n + 1),
        "range_inclusive",
    );
    let c = || v.par_iter().copied();
    count(&|| (c().map(|x| x + 1).len(), c().count()), "map");
    count(
        &|| (c().zip(other).len(), v.iter().zip(other).count()),
        "zip",
    );
    count(
        &|| (c().chain(other.par_iter().copied()).len(), n + other.len()),
        "chain",
    );
    count(
        &|| (c().chunks(size).len(), v.chunks(size).count()),
        "chunks",
    );
    count(
        &|| (c().step_by(size).len(), v.iter().step_by(size).count()),
        "step_by",
    );
    count(
        &|| (c().skip(size).len(), v.iter().skip(size).count()),
        "skip",
    );
    count(
        &|| (c().take(size).len(), v.iter().take(size).count()),
        "take",
    );
    count(
        &|| {
            (
                c().skip(size).take(3).len(),
                v.iter().skip(size).take(3).count(),
            )
        },
        "skip/take",
    );
    count(&|| (c().enumerate().rev().len(), n), "enumerate/rev");
    count(
        &|| (c().intersperse(0).len(), (2 * n).saturating_sub(1)),
        "intersperse",
    );
    count(&|| (c().with_max_len(2).len(), n), "with_max_len");
    count(&|| (c().panic_fuse().len(), n), "panic_fuse");
    count(
        &|| (c().inspect(|_| ()).update(|_| ()).len(), n),
        "inspect/update",
    );
    count(&|| (c().map_with(0, |_, x| x).len(), n), "map_with");
    count(
        &|| {
            (
                c().fold_chunks(size, || 0, |a, x| a + x).len(),
                v.chunks(size).count(),
            )
        },
        "fold_chunks",
    );
    count(
        &|| (v.par_chunks(size).len(), v.chunks(size).count()),
        "par_chunks",
    );
    count(&|| (v.to_vec().into_par_iter().len(), n), "vec");
    count(&|| (threadlab::iter::repeat_n(1, n).len(), n), "repeat_n");
    count(&|| (c().zip_eq(v.par_iter()).len(), n), "zip_eq");
}

/// The exact chunks, from the front and from the back, shared and mutable: the chunks of
/// `std`'s `chunks_exact`/`rchunks_exact` in order, and the same remainder.
fn check_chunks_exact(v: &[i64], size: usize) {
    let n = v.len();
    let c = v.par_chunks_exact(size);
    assert_eq!(
        c.remainder(),
        v.chunks_exact(size).remainder(),
        "len {n}, size {size}"
    );
    assert_eq!(c.len(), v.chunks_exact(size).len());
    let got: Vec<&[i64]> = c.with_max_len(1).collect();
    assert_eq!(
        got,
        v.chunks_exact(size).collect::<Vec<_>>(),
        "chunks_exact"
    );
    let c = v.par_rchunks_exact(size);
    assert_eq!(c.remainder(), v.rchunks_exact(size).remainder());
    assert_eq!(c.len(), v.rchunks_exact(size).len());
    let got: Vec<&[i64]> = c.collect();
    assert_eq!(
        got,
        v.rchunks_exact(size).collect::<Vec<_>>(),
        "rchunks_exact"
    );
    let got: Vec<&[i64]> = v.par_rchunks_exact(size).with_max_len(1).collect();
    assert_eq!(
        got,
        v.rchunks_exact(size).collect::<Vec<_>>(),
        "rchunks_exact cut"
    );
    let got: Vec<(usize, i64)> = v
        .par_rchunks_exact(size)
        .enumerate()
        .map(|(i, c)| (i, c.iter().sum()))
        .collect();
    let want: Vec<(usize, i64)> = v
        .rchunks_exact(size)
        .enumerate()
        .map(|(i, c)| (i, c.iter().sum()))
        .collect();
    assert_eq!(got, want, "rchunks_exact enumerate");

    // Mutable: each chunk reversed in place, the remainder negated through take_remainder.
    for from_back in [false, true] {
        let mut got = v.to_vec();
        let mut want = v.to_vec();
        if from_back {
            let mut c = got.par_rchunks_exact_mut(size);
            assert_eq!(c.len(), want.rchunks_exact_mut(size).len());
            c.take_remainder().iter_mut().for_each(|x| *x = -*x);
            assert!(c.remainder().is_empty());
            c.with_max_len(1).for_each(|c| c.reverse());
            let mut s = want.rchunks_exact_mut(size);
            s.by_ref().for_each(|c| c.reverse());
            s.into_remainder().iter_mut().for_each(|x| *x = -*x);
        } else {
            let mut c = got.par_chunks_exact_mut(size);
            assert_eq!(c.len(), want.chunks_exact_mut(size).len());
            c.take_remainder().iter_mut().for_each(|x| *x = -*x);
            c.with_max_len(1).for_each(|c| c.reverse());
            let mut s = want.chunks_exact_mut(size);
            s.by_ref().for_each(|c| c.reverse());
            s.into_remainder().iter_mut().for_each(|x| *x = -*x);
        }
        assert_eq!(
            got, want,
            "mutable, from the back: {from_back}, len {n}, size {size}"
        );
    }
    let mut w = v.to_vec();
    let rem_len = w.par_chunks_exact_mut(size).into_remainder().len();
    assert_eq!(rem_len, n % size);
    assert_eq!(
        w.par_rchunks_exact_mut(size).into_remainder().len(),
        n % size
    );
}

#[test]
fn len_and_exact_chunks_match_std() {
    for_lengths(0xC4C4_1E57, |pool, rng, len| {
        let v = input(rng, len);
        let other = input_up_to(rng, 2 * len);
        for size in [1, 2, 3, 1 + rng.below(100) as usize] {
            pool.install(|| {
                check_len(&v, &other, size);
                check_chunks_exact(&v, size);
            });
            if !cfg!(miri) {
                check_chunks_exact(&v, size);
            }
        }
    });
}

/// `(0..n).into_par_iter()` with `n` an integer literal of no given type: the method call
/// compiles (the range's element type is inferred afterwards, as `i32`), as with Rayon.
#[test]
fn an_untyped_range_takes_method_calls() {
    let v: Vec<_> = (0..10).into_par_iter().intersperse(-1).collect();
    assert_eq!(v.len(), 19);
    let s = (0..=10).into_par_iter().map(|x| x * 2).sum::<i32>();
    assert_eq!(s, 110);
}

/// The unordered adapters: on one worker (no piece is split off) each is its `std`
/// counterpart exactly; on two workers each keeps its promise whatever order the pieces ran
/// in. `positions` is `enumerate`/`filter`/`map` on both.
fn check_unordered(v: &[i64], one_worker: bool) {
    let n = v.len();
    let k = n / 3;
    let opts: Vec<Option<i64>> = v.iter().map(|&x| (x % 17 != 0).then_some(x)).collect();
    let got: Vec<i64> = opts.par_iter().copied().while_some().collect();
    let got_take: Vec<i64> = v.par_iter().copied().take_any(k).collect();
    let got_skip: Vec<i64> = v.par_iter().copied().skip_any(k).collect();
    let got_tw: Vec<i64> = v
        .par_iter()
        .copied()
        .take_any_while(|x| x % 13 != 0)
        .collect();
    let got_sw: Vec<i64> = v
        .par_iter()
        .copied()
        .skip_any_while(|x| x % 13 != 0)
        .collect();
    let got_pos: Vec<usize> = v.par_iter().positions(|x| x % 5 == 0).collect();
    let want_pos: Vec<usize> = v
        .iter()
        .enumerate()
        .filter(|(_, x)| *x % 5 == 0)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(got_pos, want_pos, "positions, len {n}");
    if one_worker {
        let want: Vec<i64> = opts.iter().map_while(|x| *x).collect();
        assert_eq!(got, want, "while_some, len {n}");
        assert_eq!(got_take, v[..k], "take_any, len {n}");
        assert_eq!(got_skip, v[k..], "skip_any, len {n}");
        let want: Vec<i64> = v.iter().copied().take_while(|x| x % 13 != 0).collect();
        assert_eq!(got_tw, want, "take_any_while, len {n}");
        let want: Vec<i64> = v.iter().copied().skip_while(|x| x % 13 != 0).collect();
        assert_eq!(got_sw, want, "skip_any_while, len {n}");
        return;
    }
    // Items are the input's values; the multiset of yielded items is within the input's.
    let within = |got: &[i64], from: &[i64], what: &str| {
        let mut pool: Vec<i64> = from.to_vec();
        pool.sort_unstable();
        for x in got {
            let at = pool
                .binary_search(x)
                .unwrap_or_else(|_| panic!("{what}: {x} not in input"));
            pool.remove(at);
        }
    };
    let somes: Vec<i64> = opts.iter().flatten().copied().collect();
    within(&got, &somes, "while_some");
    if opts.iter().all(Option::is_some) {
        assert_eq!(got, somes, "while_some without a None, len {n}");
    }
    assert_eq!(got_take.len(), k, "take_any, len {n}");
    within(&got_take, v, "take_any");
    assert_eq!(got_skip.len(), n - k, "skip_any, len {n}");
    within(&got_skip, v, "skip_any");
    assert!(
        got_tw.iter().all(|x| x % 13 != 0),
        "take_any_while, len {n}"
    );
    within(&got_tw, v, "take_any_while");
    if v.iter().all(|x| x % 13 != 0) {
        assert_eq!(got_tw, v, "take_any_while, all pass, len {n}");
    }
    // Every item that fails the predicate passes skip_any_while, in order among themselves.
    let fails: Vec<i64> = v.iter().copied().filter(|x| x % 13 == 0).collect();
    let got_fails: Vec<i64> = got_sw.iter().copied().filter(|x| x % 13 == 0).collect();
    assert_eq!(got_fails, fails, "skip_any_while, len {n}");
    within(&got_sw, v, "skip_any_while");
}

#[test]
fn unordered_adapters_keep_their_promises() {
    let one = Pool::builder().threads(1).build().unwrap();
    let two = Pool::builder().threads(2).build().unwrap();
    let mut rng = Rng::new(0xA110_F7E5);
    for len in lengths(&mut rng) {
        let v = input(&mut rng, len);
        one.install(|| check_unordered(&v, true));
        two.install(|| check_unordered(&v, false));
    }
}

/// `try_fold`/`try_fold_with` reduced with `try_reduce` give `std`'s `try_fold` of the whole:
/// the sum when nothing stops, the stop when one item stops it (one stopping item, so the
/// stop is the same whichever piece meets it), and a piece that stopped folds nothing more.
fn check_try_fold(v: &[i64], stop_at: Option<usize>) {
    let n = v.len();
    let bad = stop_at.map(|i| v[i]);
    let op = |a: i64, x: i64| if Some(x) == bad { Err(x) } else { Ok(a + x) };
    let want = v.iter().try_fold(0i64, |a, &x| op(a, x));
    let got = v
        .par_iter()
        .copied()
        .try_fold(|| 0i64, op)
        .try_reduce(|| 0, |a, b| Ok(a + b));
    assert_eq!(got, want, "try_fold, len {n}, stop at {stop_at:?}");
    let got = v
        .par_iter()
        .copied()
        .with_max_len(3)
        .try_fold_with(0i64, op)
        .try_reduce(|| 0, |a, b| Ok(a + b));
    assert_eq!(got, want, "try_fold_with, len {n}, stop at {stop_at:?}");
    // Option: every accumulator is Some when nothing stops, and they add up to the sum.
    let accs: Vec<Option<i64>> = v
        .par_iter()
        .copied()
        .try_fold(|| 0i64, |a, x| a.checked_add(x))
        .collect();
    assert!(accs.iter().all(Option::is_some));
    assert_eq!(accs.iter().flatten().sum::<i64>(), v.iter().sum::<i64>());
}

#[test]
fn try_fold_matches_std() {
    for_lengths(0x7F01_D5ED, |pool, rng, len| {
        // Distinct values, so exactly one item stops the fold.
        let v: Vec<i64> = (0..len as i64).map(|i| i * 7 + 1).collect();
        let stop_at = (len > 0).then(|| rng.below(len as u64) as usize);
        for stop in [None, stop_at] {
            pool.install(|| check_try_fold(&v, stop));
            if !cfg!(miri) {
                check_try_fold(&v, stop);
            }
        }
    });
}

/// `interleave` and `interleave_shortest` against a sequential reference, on sides of random
/// (often different) lengths, with their `len`.
fn check_interleave(a: &[i64], b: &[i64]) {
    let (la, lb) = (a.len(), b.len());
    let mut want: Vec<&i64> = Vec::new();
    for i in 0..la.max(lb) {
        want.extend(a.get(i));
        want.extend(b.get(i));
    }
    let it = a.par_iter().interleave(b);
    assert_eq!(it.len(), la + lb);
    let got: Vec<&i64> = it.collect();
    assert_eq!(got, want, "interleave, {la} and {lb}");
    let mut want: Vec<&i64> = Vec::new();
    for i in 0.. {
        match a.get(i) {
            Some(x) => want.push(x),
            None => break,
        }
        match b.get(i) {
            Some(y) => want.push(y),
            None => break,
        }
    }
    let it = a.par_iter().interleave_shortest(b);
    assert_eq!(it.len(), want.len());
    let got: Vec<&i64> = it.with_max_len(1).collect();
    assert_eq!(got, want, "interleave_shortest, {la} and {lb}");
}

/// Tuples zip their sides (as long as the shortest), array windows are `std`'s windows,
/// `par_split_inclusive_mut` reaches `std`'s parts, and a `Result`'s `Ok` is iterated mutably.
fn check_tuples_and_views(v: &[i64], w: &[i64]) {
    let n = v.len().min(w.len());
    let it = (v, w).into_par_iter();
    assert_eq!(it.len(), n);
    let got: Vec<(&i64, &i64)> = it.collect();
    assert_eq!(got, v.iter().zip(w).collect::<Vec<_>>());
    let got: Vec<i64> = (v, w, v.to_vec())
        .into_par_iter()
        .map(|(a, b, c)| a + b * 2 + c * 3)
        .collect();
    let want: Vec<i64> = v.iter().zip(w).map(|(a, b)| a * 4 + b * 2).collect();
    assert_eq!(got, want, "three sides");
    let twelve = (v, v, v, v, v, v, v, v, v, v, v, w).into_par_iter();
    assert_eq!(twelve.len(), n);
    let sums: Vec<i64> = twelve
        .map(|(a, b, c, d, e, f, g, h, i, j, k, l)| a + b + c + d + e + f + g + h + i + j + k + l)
        .collect();
    let want: Vec<i64> = v.iter().zip(w).map(|(a, b)| a * 11 + b).collect();
    assert_eq!(sums, want, "twelve sides");
    let got: Vec<[i64; 3]> = v.par_array_windows::<3>().map(|w| *w).collect();
    let want: Vec<[i64; 3]> = v.windows(3).map(|w| [w[0], w[1], w[2]]).collect();
    assert_eq!(got, want, "par_array_windows");
    let mut mine = v.to_vec();
    mine.par_split_inclusive_mut(|x| x % 7 == 0)
        .for_each(|part| part.reverse());
    let mut want = v.to_vec();
    want.split_inclusive_mut(|x| x % 7 == 0)
        .for_each(|part| part.reverse());
    assert_eq!(mine, want, "par_split_inclusive_mut");
    let mut r: Result<i64, ()> = Ok(5);
    r.par_iter_mut().for_each(|x| *x += 1);
    assert_eq!(r, Ok(6));
}

#[test]
fn interleave_tuples_and_views_match_std() {
    for_lengths(0x1E7E_A5ED, |pool, rng, len| {
        let v = input(rng, len);
        let w = input_up_to(rng, 2 * len + 1);
        pool.install(|| {
            check_interleave(&v, &w);
            check_interleave(&w, &v);
            check_tuples_and_views(&v, &w);
        });
    });
}

/// A clone of a pipeline that has not run yields what the pipeline yields (and what `std`'s
/// iterator yields): the sources' views, the closure adapters (their closure shared), and the
/// unordered adapters (their state fresh in the clone).
fn check_clones(v: &[i64]) {
    fn same<I>(it: I, want: &[I::Item], what: &str)
    where
        I: ParallelIterator + Clone,
        I::Item: PartialEq + std::fmt::Debug,
    {
        let a: Vec<I::Item> = it.clone().collect();
        let b: Vec<I::Item> = it.collect();
        assert_eq!(a, want, "{what}: the clone");
        assert_eq!(b, want, "{what}: the original");
    }
    let n = v.len();
    let c = || v.par_iter().copied();
    same(v.par_iter(), &v.iter().collect::<Vec<_>>(), "par_iter");
    same(
        c().map(|x| x * 2),
        &v.iter().map(|x| x * 2).collect::<Vec<_>>(),
        "map",
    );
    let want: Vec<i64> = v.iter().copied().filter(|x| x % 2 == 0).collect();
    same(c().filter(|x| x % 2 == 0), &want, "filter");
    let want: Vec<(usize, i64)> = v.iter().copied().enumerate().collect();
    same(c().enumerate(), &want, "enumerate");
    let want: Vec<(i64, &i64)> = v.iter().copied().zip(v.iter().rev()).collect();
    same(c().zip(v.par_iter().rev()), &want, "zip/rev");
    let want: Vec<&[i64]> = v.chunks(5).collect();
    same(v.par_chunks(5), &want, "par_chunks");
    let want: Vec<&[i64]> = v.chunks_exact(5).collect();
    same(v.par_chunks_exact(5), &want, "par_chunks_exact");
    let want: Vec<&[i64]> = v.rchunks_exact(5).collect();
    same(v.par_rchunks_exact(5), &want, "par_rchunks_exact");
    let want: Vec<i64> = v.iter().copied().skip(3).step_by(2).collect();
    same(
        c().skip(3).step_by(2).with_max_len(4),
        &want,
        "skip/step_by/with_max_len",
    );
    let want: Vec<i64> = v
        .iter()
        .map_while(|x| (x % 11 != 0).then_some(*x))
        .collect();
    let one = Pool::builder().threads(1).build().unwrap();
    one.install(|| {
        same(
            c().map(|x| (x % 11 != 0).then_some(x)).while_some(),
            &want,
            "while_some",
        );
        let want: Vec<i64> = v.iter().copied().take(n / 2).collect();
        same(c().take_any(n / 2), &want, "take_any");
    });
    let want: Vec<usize> = (0..n).filter(|i| v[*i] % 3 == 0).collect();
    same(v.par_iter().positions(|x| x % 3 == 0), &want, "positions");
    let want: Vec<i64> = v.iter().copied().chain(v.iter().copied()).collect();
    same(c().chain(c()).panic_fuse(), &want, "chain/panic_fuse");
    let want: Vec<(&i64, &i64)> = v.iter().zip(v).collect();
    same((v, v).into_par_iter(), &want, "tuple");
}

#[test]
fn clones_yield_what_the_original_yields() {
    for_lengths(0xC10E_5EED, |pool, rng, len| {
        let v = input(rng, len);
        pool.install(|| check_clones(&v));
    });
}
