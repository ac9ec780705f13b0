//! threadlab's stress run (the `threadlab-stress` program, and `threadlab stress` in the CLI): a
//! randomised mix of everything the pool does, with every task accounted for (run exactly once,
//! or its panic delivered exactly once), until the time is up.
//!
//! Two driver threads pick scenarios (`scenarios.rs`) with a seeded generator and run them on a
//! shared pool, so scenarios overlap; a third thread keeps building and dropping pools with
//! queued work (which must all run), and a fourth switches the recorder on and off. A watchdog
//! fails the run if any scenario takes longer than two minutes (a deadlock or a lost
//! wake-up), including one still running when the time is up. The hostile scenarios
//! (`hostile.rs`) add values whose `Drop` panics and futures woken after their pool was dropped;
//! The same seed gives the same sequence of scenarios per driver; the interleavings, of
//! course, differ.
//!
//! The program `threadlab-stress` (this package's binary, what CI runs: it builds without the
//! CLI's crates) and `threadlab stress` take the same arguments and call [`run`]:
//!
//! ```no_run
//! // What `threadlab-stress --seconds 60 --seed 7` runs: prints the counts, then whether every
//! // book balanced.
//! let opts = threadlab_stress::Options { seed: 7, ..threadlab_stress::Options::new(60) };
//! assert!(threadlab_stress::run(&opts), "a discrepancy: see the lines above");
//! ```

mod blocked;
mod channel;
mod dice;
mod elastic;
#[cfg(unix)]
mod fork;
#[cfg(unix)]
mod hostile;
mod ledger;
mod scenarios;

// Shared with the CLI, which uses them from here (depending on exactly this version): not part
// of this crate's API.
#[doc(hidden)]
pub mod fmt;
#[doc(hidden)]
pub mod panics;

use ledger::{Ledger, Rng};
use threadlab_doctor::Diagnose;

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use threadlab::Pool;

/// A scenario running longer than this is reported as stuck (deadlock or lost wake-up). The
/// largest scenario takes well under a second on a quiet 2-core machine.
const STUCK_AFTER: Duration = Duration::from_secs(120);

type Scenario = fn(&mut Rng, &Pool, &Ledger);

/// The mix: (name, scenario). Under ThreadSanitizer, without the fork scenario (see
/// `build.rs`).
fn mix() -> Vec<(&'static str, Scenario)> {
    let mut mix = everything();
    if cfg!(threadlab_tsan) {
        mix.retain(|(name, _)| !name.starts_with("fork"));
    }
    mix
}

fn everything() -> Vec<(&'static str, Scenario)> {
    vec![
        ("join tree", scenarios::join_tree),
        ("scope", scenarios::scope_spawns),
        ("fire-and-forget", |rng, _, l| {
            scenarios::fire_and_forget(rng, l)
        }),
        ("loops", scenarios::loops),
        ("serial queues", scenarios::serial_queues),
        ("nested pools", scenarios::nested_pools),
        ("futures", scenarios::futures),
        ("panicking drops", |rng, _, l| {
            hostile::panicking_drops(rng, l)
        }),
        ("wakes after drop", |rng, _, l| {
            hostile::wakes_after_drop(rng, l)
        }),
        ("channels", channel::channels),
        ("elastic pool", |rng, _, l| elastic::elastic_pool(rng, l)),
        ("elastic guests", |rng, _, l| {
            elastic::elastic_guests(rng, l)
        }),
        ("blocked workers", |rng, _, l| {
            blocked::blocked_workers(rng, l)
        }),
        ("fork in a child process", |rng, _, l| {
            fork::fork_in_a_child_process(rng, l)
        }),
    ]
}

/// The process the fork scenario starts: `main` of a program that runs the mix calls it when its
/// arguments are `stress-fork --seed S` (the scenario starts the program it runs in, by
/// `std::env::current_exe`, with those). It builds a pool, forks children that use pools, and
/// prints `tasks N` (what the children checked); the exit code says whether all went well.
///
/// ```no_run
/// # fn seed_from_arguments() -> u64 { 5 }
/// // Somewhere in `main`, on `PROGRAM stress-fork --seed 5`:
/// let code: std::process::ExitCode = threadlab_stress::fork_child(seed_from_arguments());
/// ```
#[cfg(unix)]
pub fn fork_child(seed: u64) -> std::process::ExitCode {
    fork::child_main(seed)
}

/// Options of a run.
///
/// ```
/// let opts = threadlab_stress::Options { seed: 7, ..threadlab_stress::Options::new(20) };
/// assert_eq!((opts.seconds, opts.seed), (20, 7));
/// assert!(opts.threads >= 1);
/// ```
#[derive(Clone, Debug)]
pub struct Options {
    /// How long to run, in seconds: 1 to [`Options::MAX_SECONDS`] on the command lines.
    pub seconds: u64,
    /// Seed of the scenario generator: the same seed gives each driver the same scenarios.
    pub seed: u64,
    /// Workers of the shared pool: 1 to [`Options::MAX_THREADS`] on the command lines.
    pub threads: usize,
}

impl Options {
    /// The longest run the command lines accept: a day.
    pub const MAX_SECONDS: u64 = 86_400;
    /// The most workers the command lines accept for the shared pool.
    pub const MAX_THREADS: usize = 4096;

    /// A run of `seconds` with a seed from the clock (the report prints it, to replay the run)
    /// and a worker per CPU this process may use (`std::thread::available_parallelism`).
    ///
    /// ```
    /// let opts = threadlab_stress::Options::new(60);
    /// assert_eq!(opts.seconds, 60);
    /// ```
    pub fn new(seconds: u64) -> Options {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64);
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        Options {
            seconds,
            seed,
            threads,
        }
    }
}

/// Runs the stress mix; prints the counts; true when every book balanced. A scenario stuck for
/// two minutes (a deadlock or a lost wake-up) ends the process with exit code 1 and a line
/// saying which. It sets the process's panic hook (the planned panics are kept quiet) and, on a
/// terminal, draws a progress bar on stderr.
///
/// ```no_run
/// let ok = threadlab_stress::run(&threadlab_stress::Options::new(10));
/// std::process::exit(if ok { 0 } else { 1 });
/// ```
pub fn run(opts: &Options) -> bool {
    // The planned panics are thousands and expected: keep them quiet, print any other.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        // The cancellations of `hostile::wakes_after_drop` are expected too.
        let cancelled = crate::panics::panic_message(info.payload())
            .starts_with("threadlab: the task was cancelled");
        let planned =
            info.payload().is::<scenarios::Planned>() || info.payload().is::<hostile::Bomb>();
        if !planned && !cancelled {
            default_hook(info);
        }
    }));
    let ledger = Arc::new(Ledger::default());
    let pool = match Pool::builder()
        .threads(opts.threads)
        .panic_handler(|_| {})
        .build()
    {
        Ok(p) => Arc::new(p),
        Err(e) => {
            eprintln!("error: {e}");
            return false;
        }
    };
    let deadline = Instant::now() + Duration::from_secs(opts.seconds);
    let stop = Arc::new(AtomicBool::new(false));
    // Per driver: when its current scenario started (ms since `t0`, 0 = idle) and its name.
    let t0 = Instant::now();
    let current: Arc<Vec<(AtomicU64, Mutex<&'static str>)>> = Arc::new(
        (0..2)
            .map(|_| (AtomicU64::new(0), Mutex::new("")))
            .collect(),
    );
    let progress = progress_bar(opts.seconds);

    // Drivers still running: the watchdog keeps watching until they all returned, so a
    // scenario stuck when the time is up is reported too, not waited for forever.
    let drivers = AtomicUsize::new(2);
    std::thread::scope(|s| {
        for d in 0..2 {
            let (pool, ledger, stop, current, drivers) =
                (&pool, &ledger, &stop, &current, &drivers);
            let seed = opts.seed.wrapping_add(d as u64);
            s.spawn(move || {
                let mut rng = Rng::spread(seed);
                let mix = mix();
                // Relaxed: a stop request; a scenario more or less is harmless, and the scope's
                // join orders everything for the report.
                while !stop.load(Ordering::Relaxed) {
                    let (name, scenario) = mix[rng.below(mix.len() as u64) as usize];
                    *current[d].1.lock().unwrap_or_else(|e| e.into_inner()) = name;
                    // Relaxed: the watchdog only needs roughly when the scenario started.
                    current[d]
                        .0
                        .store(t0.elapsed().as_millis() as u64 + 1, Ordering::Relaxed);
                    scenario(&mut rng, pool, ledger);
                    current[d].0.store(0, Ordering::Relaxed);
                    ledger.scenarios.fetch_add(1, Ordering::Relaxed);
                    ledger.ran(name);
                }
                // Relaxed: the watchdog only stops watching on it; the scope's join orders
                // the books.
                drivers.fetch_sub(1, Ordering::Relaxed);
            });
        }
        s.spawn(|| pool_churn(&ledger, &stop, opts.seed));
        s.spawn(|| recorder_toggle(&ledger, &stop));
        // The watchdog and the clock: watches until every driver has returned.
        while drivers.load(Ordering::Relaxed) > 0 {
            if Instant::now() >= deadline || ledger.failed() {
                // Relaxed: see the drivers' loop.
                stop.store(true, Ordering::Relaxed);
            }
            std::thread::sleep(Duration::from_millis(100));
            progress.set_position(t0.elapsed().as_secs().min(opts.seconds));
            let now = t0.elapsed().as_millis() as u64;
            for (d, (started, name)) in current.iter().enumerate() {
                // Relaxed: pairs with nothing; a start time read a moment late only delays the
                // watchdog by as much.
                let at = started.load(Ordering::Relaxed);
                if at != 0 && now.saturating_sub(at) > STUCK_AFTER.as_millis() as u64 {
                    let name = *name.lock().unwrap_or_else(|e| e.into_inner());
                    eprintln!(
                        "stress: scenario `{name}` (driver {d} of the run with seed {}) has been running for {} s: deadlock or lost wake-up; pool: {:?}",
                        opts.seed,
                        STUCK_AFTER.as_secs(),
                        pool.metrics()
                    );
                    std::process::exit(1);
                }
            }
        }
        // Relaxed: see the drivers' loop; the scope's join follows.
        stop.store(true, Ordering::Relaxed);
    });
    progress.finish_and_clear();
    report(opts, &ledger, t0.elapsed())
}

fn progress_bar(seconds: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(seconds);
    pb.set_style(
        ProgressStyle::with_template("stress [{elapsed_precise}] {bar:30} {pos}/{len} s")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    pb
}

/// Builds pools, queues work on them from outside and inside, and ends them with work still
/// queued, by a drop (which returns at once; the workers run what was queued, then exit) or by
/// `shutdown` (which returns once they did): either way every task must run, once.
fn pool_churn(ledger: &Ledger, stop: &AtomicBool, seed: u64) {
    let mut rng = Rng::spread(seed ^ 0xC0FFEE);
    // Relaxed: a stop request, as in the drivers.
    while !stop.load(Ordering::Relaxed) {
        let n = rng.range(1, 5_000) as usize;
        let slots = Arc::new(scenarios::Slots::new(n));
        let done = Arc::new(AtomicUsize::new(0));
        // Every other pool elastic, with a keep-alive of 0–2 ms: its workers retire and come
        // back between and during the spawns, and the end must still run every task.
        let builder = Pool::builder().threads(rng.range(1, 4) as usize);
        let builder = if rng.below(2) == 0 {
            builder.keep_alive(Duration::from_micros(rng.range(0, 2_000)))
        } else {
            builder
        };
        match builder.build() {
            Ok(pool) => {
                for i in 0..n {
                    let (slots, done) = (Arc::clone(&slots), Arc::clone(&done));
                    pool.spawn(move || {
                        slots.hit(i);
                        // Release: the hit is read after the Acquire load below saw this count.
                        done.fetch_add(1, Ordering::Release);
                    });
                }
                let how = if rng.below(2) == 0 {
                    drop(pool);
                    // The workers run the queued tasks after the drop returned; a task lost
                    // would never count.
                    let deadline = Instant::now() + Duration::from_secs(60);
                    // Acquire: pairs with the tasks' Release increments.
                    while done.load(Ordering::Acquire) < n && Instant::now() < deadline {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    "drop"
                } else {
                    pool.shutdown();
                    "shutdown"
                };
                ledger.pool_built();
                let (missed, twice) = slots.tally();
                if missed + twice > 0 {
                    ledger.discrepancy(format!(
                        "pool {how}: {missed} of {n} queued tasks never ran, {twice} ran twice"
                    ));
                }
                ledger.tasks(n as u64);
            }
            Err(e) => ledger.discrepancy(format!("pool churn: {e}")),
        }
    }
}

/// Switches a flight recording on and off while everything else runs, and runs the doctor on
/// each trace (flight-recorder traces cut spans anywhere: the doctor must digest them).
fn recorder_toggle(ledger: &Ledger, stop: &AtomicBool) {
    // Relaxed: a stop request, as in the drivers.
    while !stop.load(Ordering::Relaxed) {
        if let Ok(rec) = threadlab::trace::try_start(threadlab::trace::Mode::FlightRecorder {
            bytes_per_thread: 256 << 10,
        }) {
            std::thread::sleep(Duration::from_millis(30));
            let trace = rec.stop();
            std::hint::black_box(trace.event_count());
            std::hint::black_box(trace.diagnose().findings.len());
            ledger.recordings.fetch_add(1, Ordering::Relaxed);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn report(opts: &Options, ledger: &Ledger, elapsed: Duration) -> bool {
    let g = |a: &AtomicU64| crate::fmt::group_thousands(a.load(Ordering::Relaxed));
    println!(
        "stress: {:.1} s, seed {}, pool of {}: {} scenarios; {} tasks each ran exactly once; {} planned panics each delivered exactly once; {} panicking drops each dropped and reported once; {} tasks woken after their pool's drop each cancelled once; {} pools built and dropped; {} recordings",
        elapsed.as_secs_f64(),
        opts.seed,
        opts.threads,
        g(&ledger.scenarios),
        g(&ledger.tasks),
        g(&ledger.panics),
        g(&ledger.drops),
        g(&ledger.cancelled),
        g(&ledger.pools),
        g(&ledger.recordings),
    );
    let runs = ledger.runs.lock().unwrap_or_else(|e| e.into_inner());
    let runs: Vec<String> = runs.iter().map(|(n, c)| format!("{n} {c}")).collect();
    println!("stress: scenarios run: {}", runs.join(", "));
    println!(
        "stress: {} spare threads started for blocked workers, which ran {} tasks",
        g(&ledger.spare_threads),
        g(&ledger.spare_tasks),
    );
    let d = ledger
        .discrepancies
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    for line in d.iter().take(20) {
        println!("DISCREPANCY: {line}");
    }
    if d.is_empty() {
        println!("stress: every book balanced");
        true
    } else {
        println!("stress: {} discrepancies", d.len());
        false
    }
}
