use std::time::{Duration, Instant};
use threadlab::Pool;

mod pool_support;
use pool_support::fib;

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
    let pool = Pool::builder().threads(2).build().unwrap();
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
    for (a, b) in m.workers.iter().zip(&m2.workers) {
        assert_eq!(
            a.parks, b.parks,
            "a parked worker woke up while the pool was idle"
        );
    }
    // And it still works.
    assert_eq!(pool.install(|| fib(10)), 55);
}
