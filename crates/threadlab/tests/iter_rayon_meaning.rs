//! Rayon's meaning in the iterators, one test per promise: a source written by the user on
//! Rayon's plumbing (a `Producer`, an `UnindexedProducer`, a consumer driven by `bridge`, a
//! `ProducerCallback`); `Either` and the `vec` module; a `find_last` over a range too long to
//! scan; and the adapters' observable behaviour (the skipped items of `skip` are made, `count`
//! makes every item, `repeat_n` clones as `std`'s does, `fold`'s accumulators respect the
//! splitting bounds, the comparisons, `opt_len`). On a 2-worker pool, against `std`'s sequential
//! iterators. (`flat_map`'s memory is checked in `iter_flat_map_memory.rs`, a binary of its own.)
mod pool_support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use pool_support::watchdog;
use threadlab::iter::plumbing::{
    bridge, from_producer, from_unindexed, Consumer, Folder, Producer, ProducerCallback, Reducer,
    UnindexedConsumer, UnindexedProducer,
};
use threadlab::iter::Either;
use threadlab::prelude::*;
use threadlab::Pool;

fn pool() -> Pool {
    Pool::builder().threads(2).build().unwrap()
}

/// The multiples of `step` in `start..end` (from `start`), as a Rayon-style producer a user
/// writes.
struct Multiples {
    start: u32,
    end: u32,
    step: u32,
}

impl Producer for Multiples {
    type Item = u32;
    type IntoIter = std::iter::StepBy<std::ops::Range<u32>>;
    fn into_iter(self) -> Self::IntoIter {
        (self.start..self.end).step_by(self.step as usize)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let mid = (self.start + index as u32 * self.step).min(self.end);
        let left = Multiples {
            start: self.start,
            end: mid,
            step: self.step,
        };
        (left, Multiples { start: mid, ..self })
    }
}

/// The numbers of a range, halved while more than 100 are left (an unindexed source).
struct Halves(std::ops::Range<u64>);

impl UnindexedProducer for Halves {
    type Item = u64;
    fn split(self) -> (Self, Option<Self>) {
        let r = self.0;
        if r.end - r.start <= 100 {
            return (Halves(r), None);
        }
        let mid = r.start + (r.end - r.start) / 2;
        (Halves(r.start..mid), Some(Halves(mid..r.end)))
    }
    fn fold_with<F: Folder<u64>>(self, folder: F) -> F {
        folder.consume_iter(self.0)
    }
}

/// A consumer a user writes: collects its pieces' items in order, counting the pieces.
struct Gather<'a>(&'a AtomicUsize);
struct Piece<'a>(Vec<u32>, &'a AtomicUsize);
struct Append;

impl<'a> Folder<u32> for Piece<'a> {
    type Result = Vec<u32>;
    fn consume(mut self, x: u32) -> Self {
        self.0.push(x);
        self
    }
    fn complete(self) -> Vec<u32> {
        self.1.fetch_add(1, Ordering::Relaxed);
        self.0
    }
    fn full(&self) -> bool {
        false
    }
}

impl Reducer<Vec<u32>> for Append {
    fn reduce(self, mut l: Vec<u32>, r: Vec<u32>) -> Vec<u32> {
        l.extend(r);
        l
    }
}

impl<'a> Consumer<u32> for Gather<'a> {
    type Folder = Piece<'a>;
    type Reducer = Append;
    type Result = Vec<u32>;
    fn split_at(self, _index: usize) -> (Self, Self, Append) {
        (Gather(self.0), Gather(self.0), Append)
    }
    fn into_folder(self) -> Piece<'a> {
        Piece(Vec::new(), self.0)
    }
    fn full(&self) -> bool {
        false
    }
}

impl<'a> UnindexedConsumer<u32> for Gather<'a> {
    fn split_off_left(&self) -> Self {
        Gather(self.0)
    }
    fn to_reducer(&self) -> Append {
        Append
    }
}

/// The first `n` items and the last one, through the producer handed to a callback.
struct HeadAndLast(usize);

impl<T> ProducerCallback<T> for HeadAndLast {
    type Output = (Vec<T>, Option<T>);
    fn callback<P: Producer<Item = T>>(self, producer: P) -> Self::Output {
        let (head, rest) = producer.split_at(self.0);
        let mut rest = rest.into_iter();
        (head.into_iter().collect(), rest.next_back())
    }
}

/// A user's `Producer` is an indexed parallel iterator through `from_producer`, and its items
/// are `std`'s; an `UnindexedProducer` through `from_unindexed`; a user's consumer folds every
/// item once, in order, through `bridge` and `drive_unindexed`; `with_producer` hands over a
/// producer that splits at any index and iterates from both ends.
#[test]
fn a_source_and_a_consumer_written_on_rayons_plumbing() {
    watchdog(|| {
        let pool = pool();
        pool.install(|| {
            for (end, step) in [(0u32, 1u32), (1, 1), (1000, 3), (200_000, 7)] {
                let want: Vec<u32> = (0..end).step_by(step as usize).collect();
                let make = || {
                    from_producer(
                        want.len(),
                        Multiples {
                            start: 0,
                            end,
                            step,
                        },
                    )
                };
                assert_eq!(make().len(), want.len());
                assert_eq!(make().map(|x| x * 2).collect::<Vec<_>>(), {
                    want.iter().map(|x| x * 2).collect::<Vec<_>>()
                });
                let pieces = AtomicUsize::new(0);
                assert_eq!(bridge(make(), Gather(&pieces)), want);
                assert!(pieces.load(Ordering::Relaxed) >= 1);
                let odd = make().filter(|x| x % 2 == 1);
                let want_odd: Vec<u32> = want.iter().copied().filter(|x| x % 2 == 1).collect();
                assert_eq!(odd.drive_unindexed(Gather(&pieces)), want_odd);
            }
            let sum: u64 = from_unindexed(Halves(0..100_000)).sum();
            assert_eq!(sum, (0..100_000u64).sum());
            let v: Vec<u32> = (0..1000).collect();
            let (head, last) = v.par_iter().map(|x| x + 1).with_producer(HeadAndLast(3));
            assert_eq!((head, last), (vec![1, 2, 3], Some(1000)));
        });
    });
}

/// `Either` runs whichever iterator it holds (indexed when both are), extends whichever
/// collection it holds, and is what `partition_map` routes by; `vec::IntoIter` is a `Vec`'s
/// parallel iterator.
#[test]
fn either_and_the_vec_module() {
    let pool = pool();
    pool.install(|| {
        let v: Vec<i32> = (0..1024).collect();
        let left: Either<threadlab::vec::IntoIter<i32>, threadlab::vec::IntoIter<i32>> =
            Either::Left(v.clone().into_par_iter());
        assert!(left.enumerate().eq(v.clone().into_par_iter().enumerate()));
        let right: Either<threadlab::vec::IntoIter<i32>, threadlab::iter::RangeIter<i32>> =
            Either::Right((0..1024).into_par_iter());
        assert_eq!(right.sum::<i32>(), v.iter().sum());
        let mut sets: Either<Vec<i32>, std::collections::BTreeSet<i32>> =
            Either::Right(Default::default());
        sets.par_extend(v.clone());
        assert_eq!(sets.as_ref().right().map(|s| s.len()), Some(1024));
        let (even, odd): (Vec<i32>, Vec<String>) = v.par_iter().partition_map(|&x| {
            if x % 2 == 0 {
                Either::Left(x)
            } else {
                Either::Right(x.to_string())
            }
        });
        assert_eq!(
            even,
            v.iter().copied().filter(|x| x % 2 == 0).collect::<Vec<_>>()
        );
        assert_eq!(odd.len(), 512);
        assert_eq!(odd[0], "1");
    });
}

/// `find_last` over a range too long to scan to its end, alone and inside a `flat_map` of such
/// ranges, returns the last item at once: it searches from the right end.
#[test]
fn find_last_over_a_range_too_long_to_scan() {
    watchdog(|| {
        let pool = pool();
        pool.install(|| {
            assert_eq!(
                (0..u64::MAX).into_par_iter().find_last(|_| true),
                Some(u64::MAX - 1)
            );
            assert_eq!(
                (0..u64::MAX).into_par_iter().find_last(|x| x % 3 == 0),
                Some(u64::MAX - 3)
            );
            let nested = (0u64..1_000_000)
                .into_par_iter()
                .flat_map(|i| (0u64..1 << 40).into_par_iter().map(move |j| (i, j)))
                .find_last(|&(_, j)| j % 2 == 0);
            assert_eq!(nested, Some((999_999, (1 << 40) - 2)));
        });
    });
}

/// Against `std`: `skip` makes the items it skips (the pipeline's side effects run for them);
/// `count` makes every item; `repeat_n` clones its item `n - 1` times (the item itself is the
/// last); `fold`'s accumulators hold at least `with_min_len` and at most `with_max_len` items;
/// the comparisons and `unzip_into_vecs` agree with `std`'s; `by_uniform_blocks` runs its
/// blocks one after another; `opt_len` knows the length of the indexed sources and adapters,
/// and not of a filter.
#[test]
fn the_adapters_observable_behaviour() {
    let pool = pool();
    pool.install(|| {
        let made = AtomicUsize::new(0);
        let kept = (0..1000)
            .into_par_iter()
            .map(|x| {
                made.fetch_add(1, Ordering::Relaxed);
                x
            })
            .skip(600)
            .count();
        assert_eq!((kept, made.load(Ordering::Relaxed)), (400, 1000));

        static CLONES: AtomicUsize = AtomicUsize::new(0);
        struct Counted;
        impl Clone for Counted {
            fn clone(&self) -> Self {
                CLONES.fetch_add(1, Ordering::Relaxed);
                Counted
            }
        }
        assert_eq!(threadlab::iter::repeat_n(Counted, 100).count(), 100);
        assert_eq!(CLONES.load(Ordering::Relaxed), 99);

        for (min, max) in [(1, 1), (10, 100), (1000, 10), (7, usize::MAX)] {
            let sizes = Mutex::new(Vec::new());
            (0..10_000)
                .into_par_iter()
                .with_min_len(min)
                .with_max_len(max)
                .fold(|| 0usize, |n, _| n + 1)
                .for_each(|n| sizes.lock().unwrap().push(n));
            let sizes = sizes.into_inner().unwrap();
            let upper = max.max(2 * min - 1);
            assert_eq!(sizes.iter().sum::<usize>(), 10_000);
            assert!(
                sizes.iter().all(|&n| n >= min && n <= upper),
                "({min}, {max}): {sizes:?}"
            );
        }

        let a: Vec<u32> = (0..500).collect();
        let mut b = a.clone();
        b[321] = 7;
        use std::cmp::Ordering as O;
        assert_eq!(a.par_iter().cmp(&b), a.iter().cmp(&b));
        assert_eq!(a.par_iter().cmp(&a[..499]), O::Greater);
        assert!(a.par_iter().eq(&a) && a.par_iter().ne(&b) && a.par_iter().gt(&b));
        assert_eq!(
            [1.0, f64::NAN].par_iter().partial_cmp(&[1.0, 2.0]),
            [1.0, f64::NAN].iter().partial_cmp(&[1.0, 2.0])
        );
        let (mut x, mut y) = (vec![5u32], vec![]);
        a.par_iter()
            .map(|&v| (v, v * 2))
            .unzip_into_vecs(&mut x, &mut y);
        assert_eq!((x, y.len()), (a.clone(), 500));

        // `by_uniform_blocks`: every item of a block is made before any of the next.
        let order = AtomicUsize::new(0);
        let seen: Vec<usize> = (0..1000)
            .into_par_iter()
            .map(|_| order.fetch_add(1, Ordering::Relaxed))
            .by_uniform_blocks(100)
            .collect();
        let last_of_block: Vec<usize> =
            seen.chunks(100).map(|c| *c.iter().max().unwrap()).collect();
        let first_of_block: Vec<usize> =
            seen.chunks(100).map(|c| *c.iter().min().unwrap()).collect();
        assert!(
            (1..10).all(|b| first_of_block[b] > last_of_block[b - 1]),
            "blocks overlapped: {seen:?}"
        );

        assert_eq!(a.par_iter().map(|x| x + 1).opt_len(), Some(500));
        assert_eq!((0..=100u8).into_par_iter().opt_len(), Some(101));
        assert_eq!(a.par_iter().filter(|x| **x > 3).opt_len(), None);
    });
}
