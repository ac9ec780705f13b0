//! The static and affinity partitioners: which worker runs which index, across calls; every index
//! exactly once; no waiting for a blocked worker under the affinity partitioner.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use threadlab::{AffinityPartitioner, Pool};

/// Generous: the CI runs these under load, with Miri/TSan jobs beside them.
const WATCHDOG: Duration = Duration::from_secs(60);

fn pool(n: usize) -> Pool {
    Pool::builder().threads(n).build().unwrap()
}

/// Per index: which worker ran it last, and how many times it ran.
struct Record {
    owner: Vec<AtomicUsize>,
    count: Vec<AtomicUsize>,
}

impl Record {
    fn new(len: usize) -> Self {
        Record {
            owner: (0..len).map(|_| AtomicUsize::new(usize::MAX)).collect(),
            count: (0..len).map(|_| AtomicUsize::new(0)).collect(),
        }
    }

    fn hit(&self, i: usize) {
        let w = threadlab::current_thread_index().expect("the body runs on a worker");
        self.owner[i].store(w, Relaxed);
        self.count[i].fetch_add(1, Relaxed);
    }

    fn owners(&self) -> Vec<usize> {
        self.owner.iter().map(|o| o.load(Relaxed)).collect()
    }

    #[track_caller]
    fn assert_each_ran(&self, times: usize) {
        for (i, c) in self.count.iter().enumerate() {
            assert_eq!(c.load(Relaxed), times, "index {i} ran {c:?} times");
        }
    }
}

/// Makes the first body call of each worker wait until all `n` workers have made theirs, so a
/// test can require that every worker takes part. A worker that never comes fails the test
/// after the watchdog time instead of hanging it.
struct Rendezvous {
    arrived: Vec<AtomicBool>,
    count: AtomicUsize,
}

impl Rendezvous {
    fn new(n: usize) -> Self {
        Rendezvous {
            arrived: (0..n).map(|_| AtomicBool::new(false)).collect(),
            count: AtomicUsize::new(0),
        }
    }

    fn reset(&self) {
        self.arrived.iter().for_each(|a| a.store(false, Relaxed));
        self.count.store(0, Relaxed);
    }

    fn arrive(&self) {
        let w = threadlab::current_thread_index().unwrap();
        if self.arrived[w].swap(true, Relaxed) {
            return;
        }
        self.count.fetch_add(1, Relaxed);
        let deadline = Instant::now() + WATCHDOG;
        while self.count.load(Relaxed) < self.arrived.len() {
            assert!(
                Instant::now() < deadline,
                "only {} of {} workers took part in the loop",
                self.count.load(Relaxed),
                self.arrived.len()
            );
            std::thread::yield_now();
        }
    }
}

/// Calls of a loop compared with each other for the same placement. Under Miri two: the first,
/// and one compared with it; every further call takes the same path.
const CALLS: usize = if cfg!(miri) { 2 } else { 6 };

#[test]
fn static_gives_each_worker_the_same_block_every_call() {
    let pool = pool(3);
    let len = 1000;
    let mut first: Option<Vec<usize>> = None;
    for call in 0..CALLS {
        let rec = Record::new(len);
        pool.install(|| threadlab::for_each_static(0..len, |i| rec.hit(i)));
        rec.assert_each_ran(1);
        let owners = rec.owners();
        // OpenMP's schedule(static): blocks of 334, 333, 333, worker k runs block k.
        for (i, &w) in owners.iter().enumerate() {
            let k = if i < 334 {
                0
            } else if i < 667 {
                1
            } else {
                2
            };
            assert_eq!(w, k, "call {call}: index {i}");
        }
        match &first {
            None => first = Some(owners),
            Some(f) => assert_eq!(f, &owners, "call {call} moved indices"),
        }
    }
}

#[test]
fn static_variants_agree_and_work_from_any_thread() {
    let pool = pool(2);
    let len = 101;
    // The block and slice variants assign like the index variant.
    let blocks: Vec<AtomicUsize> = (0..2).map(|_| AtomicUsize::new(0)).collect();
    let rec = Record::new(len);
    pool.install(|| {
        threadlab::for_each_static_block(0..len, |b| {
            let w = threadlab::current_thread_index().unwrap();
            blocks[w].fetch_add(1, Relaxed);
            assert_eq!(b, if w == 0 { 0..51 } else { 51..101 });
            b.for_each(|i| rec.hit(i));
        })
    });
    rec.assert_each_ran(1);
    assert!(blocks.iter().all(|b| b.load(Relaxed) == 1));
    let mut v = vec![usize::MAX; len];
    pool.install(|| {
        threadlab::for_each_static_mut(&mut v, |_, x| {
            *x = threadlab::current_thread_index().unwrap();
        })
    });
    assert_eq!(v, rec.owners());
    // From a worker that is inside a task of its own (a nested loop), and on the global pool.
    let rec = Record::new(len);
    pool.install(|| {
        threadlab::join(
            || threadlab::for_each_static(0..len, |i| rec.hit(i)),
            || threadlab::for_each_static(0..0, |_| unreachable!()),
        )
    });
    rec.assert_each_ran(1);
    // The global pool's threads outlive the test, which Miri reports as a leak.
    if !cfg!(miri) {
        let rec = Record::new(len);
        threadlab::for_each_static(0..len, |i| rec.hit(i));
        rec.assert_each_ran(1);
    }
}

#[test]
fn static_re_raises_a_panic_after_all_blocks() {
    let pool = pool(2);
    let rec = Record::new(100);
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pool.install(|| {
            threadlab::for_each_static(0..100, |i| {
                rec.hit(i);
                if i == 70 {
                    panic!("index 70 failed");
                }
            })
        })
    }));
    let msg = caught.unwrap_err();
    assert_eq!(msg.downcast_ref::<&str>(), Some(&"index 70 failed"));
    // Block 0 finished entirely; block 1 stopped at the panic.
    assert!((0..71).all(|i| rec.count[i].load(Relaxed) == 1));
    assert_eq!(pool.install(|| 6 * 7), 42, "the pool still works");
}

/// Blocks worker `w` of `pool` on a channel; it is blocked when this returns, and free again
/// when the returned sender is dropped or sent to.
fn block_worker(pool: &Pool, w: usize) -> mpsc::Sender<()> {
    let (started_tx, started_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    pool.spawn_on(w, move || {
        started_tx.send(()).unwrap();
        let _ = release_rx.recv_timeout(WATCHDOG);
    })
    .unwrap();
    started_rx
        .recv_timeout(WATCHDOG)
        .unwrap_or_else(|_| panic!("worker {w} never started its blocking task"));
    release_tx
}

/// Runs an affinity loop over `0..len` on `pool` from another thread, failing the test if it
/// does not finish within the watchdog time (a deadlock).
fn affinity_loop_with_watchdog(
    pool: &std::sync::Arc<Pool>,
    len: usize,
    mut ap: AffinityPartitioner,
    rec: &std::sync::Arc<Record>,
) -> AffinityPartitioner {
    let (done_tx, done_rx) = mpsc::channel();
    let (pool, rec) = (pool.clone(), rec.clone());
    let t = std::thread::spawn(move || {
        pool.install(|| threadlab::for_each_affinity(0..len, &mut ap, |i| rec.hit(i)));
        done_tx.send(()).unwrap();
        ap
    });
    if done_rx.recv_timeout(WATCHDOG).is_err() {
        panic!("deadlock: the affinity loop waited for a blocked worker");
    }
    t.join().unwrap()
}

#[test]
fn affinity_replays_when_every_worker_is_free() {
    let n = 3;
    let pool = std::sync::Arc::new(pool(n));
    let len = 600;
    // Record an assignment that is not the initial contiguous one: with workers 1 and 2
    // blocked, worker 0 runs every chunk, and the next plan hands the excess to 1 and 2.
    let releases = [block_worker(&pool, 1), block_worker(&pool, 2)];
    let rec = std::sync::Arc::new(Record::new(len));
    let mut ap = affinity_loop_with_watchdog(&pool, len, AffinityPartitioner::new(), &rec);
    rec.assert_each_ran(1);
    assert!(ap.assignment().iter().all(|&w| w == 0));
    drop(releases);

    // Now every worker is free; each one's first index waits until all have arrived, so all
    // take part, and the assignment must replay exactly from call to call.
    let rv = Rendezvous::new(n);
    let mut previous: Option<(Vec<usize>, Vec<usize>)> = None;
    for call in 0..CALLS {
        let rec = Record::new(len);
        rv.reset();
        pool.install(|| {
            threadlab::for_each_affinity(0..len, &mut ap, |i| {
                rv.arrive();
                rec.hit(i);
            })
        });
        rec.assert_each_ran(1);
        let owners = rec.owners();
        let assignment = ap.assignment().to_vec();
        let chunks = assignment.len();
        for w in 0..n {
            let mine = assignment.iter().filter(|&&x| x == w).count();
            assert_eq!(mine, chunks / n, "call {call}: worker {w}'s share");
        }
        let contiguous: Vec<usize> = (0..chunks).map(|c| c * n / chunks).collect();
        assert_ne!(
            assignment, contiguous,
            "call {call}: the record was not replayed"
        );
        if let Some((o, a)) = &previous {
            assert_eq!(o, &owners, "call {call}: an index moved to another worker");
            assert_eq!(
                a, &assignment,
                "call {call}: a chunk moved to another worker"
            );
        }
        previous = Some((owners, assignment));
    }
}

#[test]
fn affinity_completes_while_a_worker_is_blocked_and_rebalances_after() {
    let n = 3;
    let pool = std::sync::Arc::new(pool(n));
    let len = 900;
    // Worker 1 blocks on a channel until the loop has finished. A fresh partitioner plans a
    // third of the chunks for it.
    let release = block_worker(&pool, 1);
    let rec = std::sync::Arc::new(Record::new(len));
    let mut ap = affinity_loop_with_watchdog(&pool, len, AffinityPartitioner::new(), &rec);
    rec.assert_each_ran(1);
    assert!(
        rec.owners().iter().all(|&w| w != 1),
        "the blocked worker ran an index"
    );
    assert!(ap.assignment().iter().all(|&w| w != 1));
    drop(release);

    // Once it is free again, worker 1 gets a fair share back.
    let rv = Rendezvous::new(n);
    let rec = Record::new(len);
    pool.install(|| {
        threadlab::for_each_affinity(0..len, &mut ap, |i| {
            rv.arrive();
            rec.hit(i);
        })
    });
    rec.assert_each_ran(1);
    let chunks = ap.assignment().len();
    for w in 0..n {
        let mine = ap.assignment().iter().filter(|&&x| x == w).count();
        assert_eq!(mine, chunks / n, "worker {w}'s share after rebalancing");
    }
}

#[test]
fn affinity_on_tiny_and_empty_ranges() {
    let pool = pool(3);
    let mut ap = AffinityPartitioner::new();
    for len in [0usize, 1, 2, 5, 24, 25] {
        let rec = Record::new(len);
        pool.install(|| threadlab::for_each_affinity(0..len, &mut ap, |i| rec.hit(i)));
        rec.assert_each_ran(1);
        assert_eq!(ap.assignment().len(), len.min(24));
    }
    // An offset range, from outside any pool (the global pool, except under Miri: see above).
    let rec = Record::new(50);
    let mut run = || threadlab::for_each_affinity(10..50, &mut ap, |i| rec.hit(i));
    if cfg!(miri) {
        pool.install(run);
    } else {
        run();
    }
    assert!((0..10).all(|i| rec.count[i].load(Relaxed) == 0));
    assert!((10..50).all(|i| rec.count[i].load(Relaxed) == 1));
}
