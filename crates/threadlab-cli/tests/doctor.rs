//! The doctor on small versions of the lab's own runs: each names the pitfall its article
//! describes, and a balanced loop on the pool raises none of them. The baselines are the lab's
//! own files, compiled into this test (the CLI is a binary crate), so what is tested is what the
//! lab runs.
//!
//! The recorder is process-wide, so a recording holds every thread that records meanwhile: this
//! binary has no test harness (`harness = false`) and runs its scenarios one after another on
//! the main thread, and nothing else (not even the baselines' own unit tests, which need
//! `cfg(test)`) runs beside them.
//!
//! Every workload is sized so its pitfall clears its threshold by a wide margin on a noisy
//! 2-core VM: waits and spins are by wall clock, so preemption only lengthens them, and the
//! checks compare figures with thresholds, never durations with bounds.

// The lab's parts this test does not call (and their unit tests' imports) are not dead.
#[path = "../src/baselines/fork_join.rs"]
#[allow(dead_code, unused_imports)]
mod fork_join;
#[path = "../src/baselines/thread_per_task.rs"]
#[allow(dead_code, unused_imports)]
mod thread_per_task;
#[path = "../src/baselines/work_sharing.rs"]
#[allow(dead_code, unused_imports)]
mod work_sharing;

use std::panic::catch_unwind;
use std::sync::mpsc;
use std::time::{Duration, Instant};
use threadlab::trace::Trace;
use threadlab_doctor::Diagnose;
use threadlab_doctor::{Diagnosis, Pitfall};

/// The pitfalls of the articles, none of which a well-behaved run may raise.
const PITFALLS: [Pitfall; 6] = [
    Pitfall::Oversubscription,
    Pitfall::ThreadCreation,
    Pitfall::LockContention,
    Pitfall::Preemption,
    Pitfall::ParkWakeChurn,
    Pitfall::Imbalance,
];

fn record(f: impl FnOnce()) -> (Trace, Diagnosis) {
    let rec = threadlab::trace::start();
    f();
    let trace = rec.stop();
    let d = trace.diagnose();
    (trace, d)
}

fn spin_for(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// *Multithreading Isn't Free*'s kernel.
fn kernel(band: &mut [u8]) {
    for p in band {
        *p = p.wrapping_mul(2).wrapping_add(1);
    }
}

fn cpus() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

#[track_caller]
fn assert_names(d: &Diagnosis, any_of: &[Pitfall]) {
    assert!(
        any_of.iter().any(|p| d.has(*p)),
        "expected one of {any_of:?}, found {:?}\n{d}",
        d.findings.iter().map(|f| f.pitfall).collect::<Vec<_>>()
    );
    for f in &d.findings {
        assert!(
            !f.suggestion.is_empty() && f.figure.threshold.is_some(),
            "{f:?}"
        );
    }
}

/// `image`, a thread per row (*Multithreading Isn't Free*'s ThreadPerRow), on 200 rows of 4 kB.
fn a_thread_per_row_is_thread_creation_or_oversubscription() {
    let mut buf = vec![1u8; 200 * 4096];
    let (_, d) = record(|| thread_per_task::for_each_row(&mut buf, 4096, &kernel));
    assert_names(&d, &[Pitfall::ThreadCreation, Pitfall::Oversubscription]);
    let g = d.group("thread N").expect("the row threads form one group");
    assert_eq!(g.threads, 200, "{g:?}");
}

/// `contention`: the work-sharing pool with the article's 8 workers, one task per row, a few
/// passes. (With more workers than CPUs, workers meet at the lock even when other processes
/// hold the CPUs: a holder preempted with the lock keeps the others waiting.)
fn the_work_sharing_pool_contends_on_its_queue_lock() {
    let pool = work_sharing::WorkSharingPool::new(8).unwrap();
    let mut buf = vec![1u8; 1000 * 1024];
    let (_, d) = record(|| {
        for _ in 0..4 {
            pool.for_each_band_in(&mut buf, 1024, 1000, &kernel)
                .unwrap();
        }
    });
    assert_names(&d, &[Pitfall::LockContention]);
    let f = d.finding(Pitfall::LockContention).unwrap();
    assert_eq!(f.subject, format!("lock {}", work_sharing::QUEUE_LOCK));
    let lock = d.lock(work_sharing::QUEUE_LOCK).unwrap();
    assert!(lock.wait.total_ns > lock.hold.total_ns, "{lock:?}");
    assert!(!d.answers[2].ok);
}

/// Busy for `d` of this thread's CPU time (so it stays runnable until it got that much).
fn spin_cpu(d: Duration) {
    let cpu = || {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant Linux knows.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
    };
    let start = cpu();
    while cpu() - start < d {
        std::hint::spin_loop();
    }
}

/// 64 busy threads on the machine's few cores (the allocator-contention article's preemption), each needing 2 ms
/// of CPU. Each records before a start barrier, so the recording sees all of them waiting for a
/// CPU however slowly the OS creates them.
fn sixty_four_busy_threads_are_preempted() {
    let start = std::sync::Barrier::new(64);
    let (_, d) = record(|| {
        std::thread::scope(|s| {
            for _ in 0..64 {
                s.spawn(|| {
                    drop(threadlab::zone!("ready"));
                    start.wait();
                    let _z = threadlab::zone!("busy");
                    spin_cpu(Duration::from_millis(2));
                });
            }
        })
    });
    assert_names(&d, &[Pitfall::Preemption]);
    assert!(d.has(Pitfall::Oversubscription), "{d}");
}

/// *Rendezvous Benchmark Analysis*'s rendezvous: a producer and a consumer thread pass 2,000 numbers through a
/// zero-capacity channel.
fn a_rendezvous_between_os_threads_churns() {
    let (_, d) = record(|| {
        let (tx, rx) = mpsc::sync_channel::<u64>(0);
        let producer = std::thread::spawn(move || {
            threadlab::trace::set_thread_name("producer");
            let _z = threadlab::zone!("produce");
            for i in 0..2000 {
                tx.send(i).unwrap();
            }
        });
        let consumer = std::thread::spawn(move || {
            threadlab::trace::set_thread_name("consumer");
            let _z = threadlab::zone!("consume");
            rx.iter().sum::<u64>()
        });
        producer.join().unwrap();
        assert_eq!(consumer.join().unwrap(), 1999 * 2000 / 2);
    });
    assert_names(&d, &[Pitfall::ParkWakeChurn]);
}

/// *Multithreading Isn't Free*'s fork-join `parallel_for` with a band per CPU, one 10× longer
/// than the others (the article's four bands on four cores). With more bands than CPUs the
/// short ones would share a CPU while the long one runs, and less of the machine's capacity
/// would be lost: four such bands on 2 CPUs lose 35% of it, not the 67% of `1 - mean/max`.
fn a_loop_with_one_chunk_ten_times_longer_is_imbalanced() {
    let bands = cpus().max(2);
    let mut buf = vec![0u8; bands];
    buf[0] = 1;
    let (_, d) = record(|| {
        fork_join::for_each_band(&mut buf, 1, bands, &|band| {
            let ms = if band[0] == 1 { 10 } else { 1 };
            spin_for(Duration::from_millis(ms));
        })
    });
    assert_names(&d, &[Pitfall::Imbalance]);
    assert!(d.group("thread N").unwrap().imbalance > 0.4, "{d}");
}

/// The same on the pool: two chunks, one 10× longer; stealing cannot split a chunk. Both
/// workers asleep first, so the `install` runs on this thread as a guest in a worker's seat: the
/// doctor reads the guest's span as that worker's.
fn a_pool_loop_with_one_chunk_ten_times_longer_is_imbalanced() {
    let pool = threadlab::Pool::builder().threads(2).build().unwrap();
    all_parked(&pool);
    let (_, d) = record(|| {
        pool.install(|| {
            threadlab::for_each(0..2, |i| {
                spin_for(Duration::from_millis(if i == 0 { 10 } else { 1 }))
            })
        })
    });
    assert_names(&d, &[Pitfall::Imbalance]);
    assert!(d.runtime.workers == 2, "{d}");
}

/// Waits until every worker of `pool` is parked (failing after 60 s).
fn all_parked(pool: &threadlab::Pool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !pool.metrics().all_parked() {
        assert!(Instant::now() < deadline, "workers never parked");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// A balanced loop on a pool of one worker per CPU: 400 iterations of 50 µs. On a machine
/// whose other processes take the CPUs (the doctor's busy-machine finding), a thread's share of
/// the loop depends on who got a CPU, and the doctor says so instead of judging: such a
/// recording is taken again (up to five times); if every one was busy, each pitfall raised must
/// carry the doctor's warning that other processes held the CPUs.
fn a_balanced_loop_on_the_pool_raises_none() {
    let pool = threadlab::Pool::builder().threads(cpus()).build().unwrap();
    for attempt in 1..=5 {
        let (_, d) = record(|| {
            pool.install(|| threadlab::for_each(0..400, |_| spin_for(Duration::from_micros(50))))
        });
        assert!(d.runtime.tasks >= 2 && d.runtime.workers >= 1, "{d}");
        assert!(d.answers[2].ok, "no lock: {:?}", d.answers[2]);
        let raised: Vec<&threadlab_doctor::Finding> = d
            .findings
            .iter()
            .filter(|f| PITFALLS.contains(&f.pitfall))
            .collect();
        let busy = d.findings.iter().any(|f| f.pitfall == Pitfall::BusyMachine);
        if !busy {
            let names: Vec<Pitfall> = raised.iter().map(|f| f.pitfall).collect();
            assert!(names.is_empty(), "{names:?}\n{d}");
            return;
        }
        if attempt == 5 {
            for f in raised {
                assert!(
                    f.evidence.contains("other processes held the CPUs"),
                    "a pitfall raised on a busy machine without saying so: {f:?}\n{d}"
                );
            }
            eprintln!("a_balanced_loop_on_the_pool_raises_none: the machine was busy in all 5 recordings; checked the warnings only");
        }
    }
}

fn main() {
    let tests: [(&str, fn()); 7] = [
        (
            "a_thread_per_row_is_thread_creation_or_oversubscription",
            a_thread_per_row_is_thread_creation_or_oversubscription,
        ),
        (
            "the_work_sharing_pool_contends_on_its_queue_lock",
            the_work_sharing_pool_contends_on_its_queue_lock,
        ),
        (
            "sixty_four_busy_threads_are_preempted",
            sixty_four_busy_threads_are_preempted,
        ),
        (
            "a_rendezvous_between_os_threads_churns",
            a_rendezvous_between_os_threads_churns,
        ),
        (
            "a_loop_with_one_chunk_ten_times_longer_is_imbalanced",
            a_loop_with_one_chunk_ten_times_longer_is_imbalanced,
        ),
        (
            "a_pool_loop_with_one_chunk_ten_times_longer_is_imbalanced",
            a_pool_loop_with_one_chunk_ten_times_longer_is_imbalanced,
        ),
        (
            "a_balanced_loop_on_the_pool_raises_none",
            a_balanced_loop_on_the_pool_raises_none,
        ),
    ];
    // `cargo test -- NAME` runs the scenarios whose name contains NAME; flags are ignored.
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let mut failed = Vec::new();
    let mut ran = 0;
    for (name, test) in tests {
        if !filters.is_empty() && !filters.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        ran += 1;
        match catch_unwind(test) {
            Ok(()) => println!("test {name} ... ok"),
            Err(_) => {
                println!("test {name} ... FAILED");
                failed.push(name);
            }
        }
    }
    println!(
        "\ntest result: {}. {} passed; {} failed",
        if failed.is_empty() { "ok" } else { "FAILED" },
        ran - failed.len(),
        failed.len()
    );
    if !failed.is_empty() {
        std::process::exit(101);
    }
}
