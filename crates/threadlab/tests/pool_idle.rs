use std::time::{Duration, Instant};
use threadlab::Pool;

mod pool_support;
use pool_support::{fib, watchdog};

/// utime + stime of one thread, in clock ticks, from /proc/self/task/<tid>/stat.
fn cpu_ticks(tid: u64) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).unwrap();
    // Fields after the command name (which is in parentheses and may contain spaces).
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // rest starts at field 3 (state); utime is field 14, stime field 15.
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

#[test]
fn idle_means_parked_and_no_cpu() {
    idle_pool_parks_and_costs_no_cpu(Pool::builder().threads(2).build().unwrap());
}

/// A keep-alive too long to add to an `Instant` (`Duration::MAX`) means "never retire": the
/// idle pool parks and costs no CPU like any other, and no panic is counted. (The deadline
/// `now + keep_alive` once overflowed inside the idle loop: the panic escaped to the worker's
/// last-resort handler, which printed it and looped again, at full CPU, forever.)
#[test]
fn a_keep_alive_of_duration_max_never_retires_and_idles_at_no_cpu() {
    let pool = Pool::builder()
        .threads(2)
        .keep_alive(Duration::MAX)
        .build()
        .unwrap();
    let pool = idle_pool_parks_and_costs_no_cpu(pool);
    let m = pool.metrics();
    assert_eq!(m.panicked_tasks, 0, "{m:?}");
    assert_eq!(m.alive_threads(), 2, "a worker retired: {m:?}");
    assert!(m.workers.iter().all(|w| w.retirements == 0), "{m:?}");
}

/// Runs a little work on `pool`, waits until its workers park, and checks that for half a
/// second none of them uses CPU time or wakes up; returns the pool, still working.
fn idle_pool_parks_and_costs_no_cpu(pool: Pool) -> Pool {
    assert_eq!(pool.install(|| fib(22)), 17_711);
    for _ in 0..100 {
        pool.spawn(|| {});
    }
    // Wait for the workers to settle: 100 ms without work (polling with a generous deadline).
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        std::thread::sleep(Duration::from_millis(100));
        if pool.metrics().all_parked() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "workers never parked: {:?}",
            pool.metrics()
        );
    }
    let m = pool.metrics();
    assert!(
        m.workers.iter().all(|w| w.parks > 0 && w.os_tid > 0),
        "{m:?}"
    );
    let before: Vec<u64> = m.workers.iter().map(|w| cpu_ticks(w.os_tid)).collect();
    std::thread::sleep(Duration::from_millis(500));
    let after: Vec<u64> = m.workers.iter().map(|w| cpu_ticks(w.os_tid)).collect();
    assert_eq!(before, after, "parked workers used CPU time");
    let m2 = pool.metrics();
    assert!(m2.all_parked(), "{m2:?}");
    assert_eq!((m2.searching, m2.sleeping), (0, 2), "{m2:?}");
    for (a, b) in m.workers.iter().zip(&m2.workers) {
        assert_eq!(
            a.parks, b.parks,
            "a parked worker woke up while the pool was idle"
        );
    }
    // And it still works.
    assert_eq!(pool.install(|| fib(10)), 55);
    pool
}

/// A worker that waited on a latch (a scope here) and searched for work meanwhile is no
/// searcher once the latch is set and it goes back to the code that waited. A stale count
/// made every later push skip the wake-up (somebody searches, it will find the work), so a
/// sleeping worker stayed asleep while the other ran everything: tasks that wait for each other
/// then met only after a timeout (seen as a flaky `threadlab-tracing` nesting test).
///
/// Each round: two scope tasks that each wait until both have started (so the two workers run
/// one each; the one on the other worker ends 0–15 µs later, so the scope's owner waits on the
/// scope's latch, spinning or asleep, when it is set); then, on the worker that ran the scope, wait until the other worker is parked and
/// read the counts. Nothing runs but our code there, so nobody may count as searching.
#[test]
fn a_worker_back_from_a_wait_is_no_searcher() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    watchdog(|| {
        let pool = Arc::new(Pool::builder().threads(2).build().unwrap());
        let p = Arc::clone(&pool);
        let stale = pool.install(move || {
            let mut stale = Vec::new();
            for round in 0..400u64 {
                let (started, unmet) = (AtomicUsize::new(0), AtomicUsize::new(0));
                let owner = threadlab::current_thread_index();
                threadlab::scope(|s| {
                    for _ in 0..2 {
                        let (started, unmet) = (&started, &unmet);
                        s.spawn(move |_| {
                            started.fetch_add(1, Ordering::SeqCst);
                            // Fork while waiting: a busy worker hands a fork to the idle one
                            // at its heartbeat, so the second task is taken even if the
                            // other worker was asleep.
                            let deadline = Instant::now() + Duration::from_secs(5);
                            while started.load(Ordering::SeqCst) < 2 {
                                if Instant::now() > deadline {
                                    // Stale searcher counts also look like this: a push
                                    // wakes nobody. Say so, then let the other task run here.
                                    unmet.fetch_add(1, Ordering::SeqCst);
                                    break;
                                }
                                threadlab::join(std::hint::spin_loop, || ());
                            }
                            // The other worker's task ends last, so the scope's owner waits
                            // on the latch when it is set; by 0 to 15 µs, so in some rounds it
                            // still spins (searching) then, and in others it sleeps.
                            if threadlab::current_thread_index() != owner {
                                let t = Instant::now();
                                while t.elapsed() < Duration::from_micros(round % 16) {
                                    std::hint::spin_loop();
                                }
                            }
                        });
                    }
                });
                assert_eq!(
                    unmet.load(Ordering::SeqCst),
                    0,
                    "round {round}: the other worker never took a scope task in 5 s (stale \
                     searchers so far: {stale:?}; {:?})",
                    p.metrics()
                );
                let me = threadlab::current_thread_index().expect("on a worker");
                let other = 1 - me;
                let deadline = Instant::now() + Duration::from_secs(10);
                let m = loop {
                    let m = p.metrics();
                    if m.workers[other].is_parked && m.sleeping == 1 {
                        break m;
                    }
                    assert!(
                        Instant::now() < deadline,
                        "round {round}: worker {other} never parked: {m:?}"
                    );
                    std::hint::spin_loop();
                };
                if m.searching != 0 {
                    stale.push((round, m.searching));
                }
            }
            stale
        });
        assert!(
            stale.is_empty(),
            "rounds (round, searching) where a worker still counted as searching while it ran \
             our code and the other slept: {stale:?}"
        );
    });
}
