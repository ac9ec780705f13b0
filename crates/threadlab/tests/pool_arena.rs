//! The scope's job arena (`src/arena.rs`): spawns that fill several chunks (so chunks are sealed
//! and recycled while thieves run their jobs), closures too large or too aligned for the arena
//! (heap fallback), spawns from tasks (not the owner: heap), every task run once with its
//! captured data intact. Small enough for Miri, which `scripts/check-unsafe` runs it under.

use std::sync::atomic::{AtomicUsize, Ordering};
use threadlab::Pool;

const TASKS: usize = if cfg!(miri) { 600 } else { 20_000 };

#[repr(align(128))]
struct Aligned(u64);

/// The sum of the bytes of `bytes`, all of which must be equal (as every payload here is). Under
/// Miri it compares the array with one made of its first byte (a `raw_eq` of the whole array,
/// which Miri runs in one step, reading and checking every byte) instead of an interpreted loop,
/// which took four fifths of Miri's time in `arena_jobs_run_once_with_their_data_across_chunks`.
fn byte_sum<const N: usize>(bytes: &[u8; N]) -> usize {
    if cfg!(miri) {
        assert!(*bytes == [bytes[0]; N], "a payload's bytes differ");
        bytes[0] as usize * N
    } else {
        bytes.iter().map(|&b| b as usize).sum()
    }
}

fn check(pool: &Pool) {
    let ran = AtomicUsize::new(0);
    let bytes = AtomicUsize::new(0);
    pool.scope(|s| {
        for i in 0..TASKS {
            // ~270-byte jobs: a 64 KiB chunk holds about 240, so the loop seals and recycles.
            let payload = [(i % 251) as u8; 256];
            let (ran, bytes) = (&ran, &bytes);
            s.spawn(move |s| {
                let sum = byte_sum(&payload);
                bytes.fetch_add(sum, Ordering::Relaxed);
                ran.fetch_add(1, Ordering::Relaxed);
                if i % 97 == 0 {
                    // A spawn from a task: not the owner's, so a heap job.
                    s.spawn(move |_| {
                        ran.fetch_add(1, Ordering::Relaxed);
                    });
                }
            });
            if i % 50 == 0 {
                // Larger than the arena takes: a heap job.
                let big = [1u8; 2048];
                s.spawn(move |_| {
                    assert_eq!(byte_sum(&big), 2048);
                    ran.fetch_add(1, Ordering::Relaxed);
                });
                // Aligned beyond a cache line: a heap job.
                let aligned = Aligned(7);
                s.spawn(move |_| {
                    assert_eq!(&aligned as *const Aligned as usize % 128, 0);
                    assert_eq!(aligned.0, 7);
                    ran.fetch_add(1, Ordering::Relaxed);
                });
            }
        }
    });
    let nested = (0..TASKS).filter(|i| i % 97 == 0).count();
    let big = (0..TASKS).filter(|i| i % 50 == 0).count() * 2;
    assert_eq!(ran.load(Ordering::Relaxed), TASKS + nested + big);
    let want: usize = (0..TASKS).map(|i| (i % 251) * 256).sum();
    assert_eq!(bytes.load(Ordering::Relaxed), want, "captured data intact");
}

#[test]
fn arena_jobs_run_once_with_their_data_across_chunks() {
    for threads in [1, 2] {
        let pool = Pool::builder().threads(threads).build().unwrap();
        for _ in 0..if cfg!(miri) { 1 } else { 3 } {
            check(&pool);
        }
    }
}

#[test]
fn a_panicking_arena_job_does_not_lose_the_others() {
    let pool = Pool::builder().threads(2).build().unwrap();
    let ran = AtomicUsize::new(0);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pool.scope(|s| {
            for i in 0..TASKS {
                let ran = &ran;
                s.spawn(move |_| {
                    ran.fetch_add(1, Ordering::Relaxed);
                    assert!(i != TASKS / 2, "task {i} panics");
                });
            }
        })
    }));
    assert!(r.is_err());
    assert_eq!(ran.load(Ordering::Relaxed), TASKS, "every task ran");
}
