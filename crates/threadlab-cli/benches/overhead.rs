//! Scheduling overhead of threadlab against Rayon and Tokio (same thread count, same run):
//! empty tasks in a scope, the second seed's self-requeueing job chains, fib with `join` at
//! every level, and a trickle of tasks (CPU per task, wake-up latency).
//!
//! `cargo bench -p threadlab-cli --bench overhead [-- THREADS]`. Prints medians of RUNS runs and the
//! ratios threadlab / peer. Timings on a shared 2-core VM are noisy: compare ratios of one run.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

const RUNS: usize = 7;
const SCOPE_TASKS: usize = 1_000_000;
const QUEUES: usize = 8;
const JOBS_PER_QUEUE: usize = 12_500;
const FIB_N: u64 = 32;
const TRICKLE_TASKS: usize = 2_000;
const TRICKLE_GAP: Duration = Duration::from_micros(200);

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn time<F: FnMut()>(mut f: F) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64()
}

fn cpu_time(who: i32) -> f64 {
    // SAFETY: getrusage fills the zeroed struct.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(who, &mut ru);
        ru
    };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

// ---- fib ----
fn fib_tl(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = threadlab::join(|| fib_tl(n - 1), || fib_tl(n - 2));
    a + b
}
fn fib_rayon(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = rayon::join(|| fib_rayon(n - 1), || fib_rayon(n - 2));
    a + b
}
fn fib_chili(s: &mut chili::Scope<'_>, n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = s.join(|s| fib_chili(s, n - 1), |s| fib_chili(s, n - 2));
    a + b
}

// ---- chains (seed 2): each job re-submits the next job of its queue ----
fn chain_tl(
    pool: &'static threadlab::Pool,
    left: usize,
    done: Arc<AtomicUsize>,
    tx: mpsc::Sender<()>,
) {
    if left == 0 {
        if done.fetch_sub(1, Ordering::AcqRel) == 1 {
            tx.send(()).unwrap();
        }
        return;
    }
    pool.spawn(move || chain_tl(pool, left - 1, done, tx));
}
fn chain_rayon(
    pool: &'static rayon::ThreadPool,
    left: usize,
    done: Arc<AtomicUsize>,
    tx: mpsc::Sender<()>,
) {
    if left == 0 {
        if done.fetch_sub(1, Ordering::AcqRel) == 1 {
            tx.send(()).unwrap();
        }
        return;
    }
    pool.spawn(move || chain_rayon(pool, left - 1, done, tx));
}
fn chain_tokio(
    h: tokio::runtime::Handle,
    left: usize,
    done: Arc<AtomicUsize>,
    tx: mpsc::Sender<()>,
) {
    if left == 0 {
        if done.fetch_sub(1, Ordering::AcqRel) == 1 {
            tx.send(()).unwrap();
        }
        return;
    }
    let h2 = h.clone();
    h.spawn(async move { chain_tokio(h2, left - 1, done, tx) });
}

/// Runs the trickle: one task every TRICKLE_GAP; returns (pool CPU seconds per task, median
/// submit-to-start latency in µs). `submit` gets a closure to run on the pool.
fn trickle(submit: &dyn Fn(Box<dyn FnOnce() + Send>)) -> (f64, f64) {
    let lat: Arc<Vec<AtomicU64>> =
        Arc::new((0..TRICKLE_TASKS).map(|_| AtomicU64::new(0)).collect());
    let left = Arc::new(AtomicUsize::new(TRICKLE_TASKS));
    let (tx, rx) = mpsc::channel();
    std::thread::sleep(Duration::from_millis(50)); // let the workers settle
    let cpu0 = cpu_time(libc::RUSAGE_SELF);
    let me0 = cpu_time(libc::RUSAGE_THREAD);
    let mut next = Instant::now();
    for i in 0..TRICKLE_TASKS {
        next += TRICKLE_GAP;
        while Instant::now() < next {
            std::thread::sleep(next.saturating_duration_since(Instant::now()));
        }
        let (lat, left, tx) = (lat.clone(), left.clone(), tx.clone());
        let t = Instant::now();
        submit(Box::new(move || {
            lat[i].store(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
            if left.fetch_sub(1, Ordering::AcqRel) == 1 {
                tx.send(()).unwrap();
            }
        }));
    }
    rx.recv().unwrap();
    let me = cpu_time(libc::RUSAGE_THREAD) - me0;
    let cpu = cpu_time(libc::RUSAGE_SELF) - cpu0 - me;
    let lats: Vec<f64> = lat
        .iter()
        .map(|l| l.load(Ordering::Relaxed) as f64 / 1e3)
        .collect();
    (cpu / TRICKLE_TASKS as f64, median(lats))
}

fn row(name: &str, unit: &str, tl: f64, peers: &[(&str, f64)]) {
    let mut s = format!("{name:<28} threadlab {tl:>9.3} {unit}");
    for (p, v) in peers {
        s += &format!(" | {p} {v:>9.3} (ratio {:.2})", tl / v);
    }
    println!("{s}");
}

fn main() {
    let threads = std::env::args()
        .skip(1)
        .find_map(|a| a.parse::<usize>().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
    println!("overhead: {threads} threads, medians of {RUNS} runs");
    let tl: &'static threadlab::Pool = Box::leak(Box::new(
        threadlab::Pool::builder().threads(threads).build().unwrap(),
    ));
    let ry: &'static rayon::ThreadPool = Box::leak(Box::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap(),
    ));
    let tk = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .build()
        .unwrap();

    // OVERHEAD_ONLY=scope|chains|fib|trickle runs one section (for profiling).
    let only = std::env::var("OVERHEAD_ONLY").ok();
    let run = |name: &str| only.as_deref().map_or(true, |o| o == name);

    // 1. empty tasks in a scope
    if run("scope") {
        let per = |secs: f64| secs * 1e9 / SCOPE_TASKS as f64;
        let (mut a, mut b, mut c) = (vec![], vec![], vec![]);
        for _ in 0..RUNS {
            a.push(per(time(|| {
                tl.scope(|s| (0..SCOPE_TASKS).for_each(|_| s.spawn(|_| {})))
            })));
            b.push(per(time(|| {
                ry.scope(|s| (0..SCOPE_TASKS).for_each(|_| s.spawn(|_| {})))
            })));
            c.push(per(time(|| {
                tk.block_on(async {
                    let hs: Vec<_> = (0..SCOPE_TASKS).map(|_| tokio::spawn(async {})).collect();
                    for h in hs {
                        h.await.unwrap();
                    }
                })
            })));
        }
        if std::env::var_os("OVERHEAD_METRICS").is_some() {
            eprintln!("{:?}", tl.metrics());
        }
        row(
            "scope, 1M empty tasks",
            "ns/task",
            median(a),
            &[("rayon", median(b)), ("tokio", median(c))],
        );
    }

    // 2. chains
    if run("chains") {
        let total = (QUEUES * JOBS_PER_QUEUE) as f64;
        let per = |secs: f64| secs * 1e9 / total;
        let (mut a, mut b, mut c) = (vec![], vec![], vec![]);
        for _ in 0..RUNS {
            a.push(per(time(|| {
                let (tx, rx) = mpsc::channel();
                let done = Arc::new(AtomicUsize::new(QUEUES));
                for _ in 0..QUEUES {
                    chain_tl(tl, JOBS_PER_QUEUE, done.clone(), tx.clone());
                }
                rx.recv().unwrap();
            })));
            b.push(per(time(|| {
                let (tx, rx) = mpsc::channel();
                let done = Arc::new(AtomicUsize::new(QUEUES));
                for _ in 0..QUEUES {
                    chain_rayon(ry, JOBS_PER_QUEUE, done.clone(), tx.clone());
                }
                rx.recv().unwrap();
            })));
            c.push(per(time(|| {
                let (tx, rx) = mpsc::channel();
                let done = Arc::new(AtomicUsize::new(QUEUES));
                for _ in 0..QUEUES {
                    chain_tokio(
                        tk.handle().clone(),
                        JOBS_PER_QUEUE,
                        done.clone(),
                        tx.clone(),
                    );
                }
                rx.recv().unwrap();
            })));
        }
        row(
            "chains 8 x 12,500",
            "ns/job",
            median(a),
            &[("rayon", median(b)), ("tokio", median(c))],
        );
    }

    // 3. fib with join at every level
    if run("fib") {
        // The number of join calls in fib(n) is fib(n + 1) - 1.
        let joins = {
            let (mut x, mut y) = (0u64, 1u64);
            for _ in 0..=FIB_N {
                (x, y) = (y, x + y);
            }
            (x - 1) as f64
        };
        let per = |secs: f64| secs * 1e9 / joins;
        let (mut a, mut b, mut c) = (vec![], vec![], vec![]);
        let chili_threads = std::num::NonZeroUsize::new(threads).unwrap();
        let chili_scope = chili::ThreadPool::with_config(chili::Config {
            thread_count: Some(chili_threads),
            ..Default::default()
        });
        for _ in 0..RUNS {
            a.push(per(time(|| {
                assert_eq!(tl.install(|| fib_tl(FIB_N)), 2_178_309)
            })));
            b.push(per(time(|| {
                assert_eq!(ry.install(|| fib_rayon(FIB_N)), 2_178_309)
            })));
            c.push(per(time(|| {
                let mut s = chili_scope.scope();
                assert_eq!(fib_chili(&mut s, FIB_N), 2_178_309)
            })));
        }
        row(
            "fib(32), join per call",
            "ns/join",
            median(a),
            &[("rayon", median(b)), ("chili", median(c))],
        );
        drop(chili_scope);
    }

    // 4. trickle
    if run("trickle") {
        let mut r = [vec![], vec![], vec![], vec![], vec![], vec![]];
        for _ in 0..RUNS.min(5) {
            let (cpu, lat) = trickle(&|f| tl.spawn(f));
            r[0].push(cpu * 1e6);
            r[1].push(lat);
            let (cpu, lat) = trickle(&|f| ry.spawn(f));
            r[2].push(cpu * 1e6);
            r[3].push(lat);
            let h = tk.handle().clone();
            let (cpu, lat) = trickle(&move |f| {
                h.spawn(async move { f() });
            });
            r[4].push(cpu * 1e6);
            r[5].push(lat);
        }
        let [a, b, c, d, e, f] = r.map(median);
        row(
            "trickle: CPU per task",
            "us",
            a,
            &[("rayon", c), ("tokio", e)],
        );
        row(
            "trickle: wake-up latency",
            "us",
            b,
            &[("rayon", d), ("tokio", f)],
        );
    }
}
