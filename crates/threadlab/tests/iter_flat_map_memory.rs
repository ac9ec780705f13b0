//! `flat_map` streams: the heap holds the items in flight (a small buffer per piece and level),
//! never an inner iterator's whole output. A counting global allocator (hence a binary of its
//! own) records the most bytes live at once while a `flat_map` whose inner iterators yield
//! megabytes of items runs; its results are checked against `std`'s.

use std::sync::atomic::Ordering;

use threadlab::prelude::*;

mod live_bytes;
use live_bytes::{LIVE, PEAK};

#[global_allocator]
static ALLOC: live_bytes::Counting = live_bytes::Counting;

/// Runs `f` and returns its value and the most heap bytes live at once during it, beyond what
/// was live when it started.
fn peak_during<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let r = f();
    (r, PEAK.load(Ordering::Relaxed).saturating_sub(base))
}

#[test]
fn flat_map_holds_the_items_in_flight_not_the_whole_output() {
    let pool = threadlab::Pool::builder().threads(2).build().unwrap();
    // Warm up: the pool's own lazily allocated state is not the flat_map's.
    pool.install(|| (0u64..1000).into_par_iter().flat_map(|i| 0..i).count());
    // 16 inner iterators of 2^20 `u64`s: 8 MiB each if gathered, 128 MiB in all.
    let inner = 1u64 << 20;
    let (sum, peak) = peak_during(|| {
        pool.install(|| {
            (0u64..16)
                .into_par_iter()
                .flat_map(|i| (0..inner).into_par_iter().map(move |j| i ^ j))
                .map(|x| x & 0xff)
                .sum::<u64>()
        })
    });
    let want: u64 = (0u64..16)
        .flat_map(|i| (0..inner).map(move |j| (i ^ j) & 0xff))
        .sum();
    assert_eq!(sum, want);
    assert!(
        peak < 1 << 20,
        "{peak} bytes live at once for a flat_map whose output is 128 MiB"
    );
    // A search that stops early stops inside an inner iterator.
    let (first, peak) = peak_during(|| {
        pool.install(|| {
            (0u64..1 << 20)
                .into_par_iter()
                .flat_map(|i| (0..inner).into_par_iter().map(move |j| (i, j)))
                .find_first(|&(_, j)| j == 12_345)
        })
    });
    assert_eq!(first, Some((0, 12_345)));
    assert!(peak < 1 << 20, "{peak} bytes live at once for a search");
}
