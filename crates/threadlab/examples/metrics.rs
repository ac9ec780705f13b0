//! Prints `Pool::metrics()` after some work: per worker the tasks run, steals, parks, the
//! queues' depths, thread starts and retirements (an elastic pool), and the histograms of task
//! run time and future poll time. Run with `cargo run -p threadlab --example metrics`.

use std::time::Duration;

use threadlab::{Histogram, Pool};

fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = threadlab::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

/// One line per non-empty bucket: its range and a bar.
fn print_histogram(name: &str, h: &Histogram) {
    println!(
        "  {name}: {} counted, median under {:?}, p99 under {:?}",
        h.count(),
        h.quantile(0.5).unwrap_or_default(),
        h.quantile(0.99).unwrap_or_default()
    );
    let most = h.counts.iter().copied().max().unwrap_or(0).max(1);
    for (i, &c) in h.counts.iter().enumerate().filter(|(_, &c)| c > 0) {
        let (lo, hi) = Histogram::bucket_range(i);
        let hi = hi.map_or_else(|| "…".to_string(), |d| format!("{d:?}"));
        let bar = "#".repeat(((c * 40).div_ceil(most)) as usize);
        println!("    {:>9?} – {hi:<9} {c:>8} {bar}", lo);
    }
}

fn main() -> Result<(), threadlab::BuildError> {
    let pool = Pool::builder()
        .threads(2)
        .time_histograms(true)
        .keep_alive(Duration::from_millis(100))
        .build()?;

    // Fork-join work, fire-and-forget tasks, and futures passing values over a channel.
    println!("fib(25) = {}", pool.install(|| fib(25)));
    let (tx, rx) = threadlab::channel::bounded::<u64>(0);
    let consumer = pool.spawn_future(async move {
        let mut sum = 0;
        while let Ok(v) = rx.recv().await {
            sum += v;
        }
        sum
    });
    let producer = pool.spawn_future(async move {
        for i in 0..10_000 {
            tx.send(i).await.unwrap();
        }
    });
    let m = pool.metrics();
    println!(
        "future tasks alive while the channel runs: {}",
        m.alive_tasks
    );
    pool.block_on(producer);
    println!("sum over the channel = {}", pool.block_on(consumer));
    for i in 0..1_000 {
        pool.spawn(move || {
            std::hint::black_box(fib(i % 15));
        });
    }
    // Idle past the keep-alive: the workers' threads exit.
    std::thread::sleep(Duration::from_millis(300));

    let m = pool.metrics();
    println!(
        "pool: {} tasks run, {} panicked, {} threads alive, injector depth {}, future tasks alive {}",
        m.tasks_run(),
        m.panicked_tasks,
        m.alive_threads(),
        m.injector_depth,
        m.alive_tasks
    );
    for w in &m.workers {
        println!(
            "worker {}: {} tasks, {} steals ({} failed searches), {} promotions, {} parks, {} wake-ups, awake {:?}, deque {}, inbox {}, threads started {}, retired {}, alive {}",
            w.index,
            w.tasks_run,
            w.steals,
            w.failed_steals,
            w.promotions,
            w.parks,
            w.wakeups,
            w.awake_time,
            w.local_queue_depth,
            w.inbox_depth,
            w.starts,
            w.retirements,
            w.alive
        );
        print_histogram("task run time", &w.task_run_time);
        print_histogram("future poll time", &w.poll_time);
    }
    Ok(())
}
