//! What a recorded zone and a recorded spawn cost against the clock reads they need, runs
//! interleaved so the machine's drift hits every variant alike:
//!
//! - ns per zone on 15 million zones with a default recording (`trace::start()`: every zone is
//!   kept, under the default cap), with the flight recorder (1 MiB, memory reused), and for two
//!   clock reads in a loop (`rdtsc`, what a zone's begin and end read); the goal is a default
//!   recording's zone ≤ 1.2× the two clock reads. Also the buffer bytes per zone.
//! - ns per empty task spawned in a scope on a one-worker pool, recording off and on; the goal is
//!   the traced spawn ≤ 1.1× the plain one plus three clock reads (its spawn, begin and end).
//!
//! `cargo bench -p threadlab-cli --bench recorder_zones` (`ZONES=N` to change the count;
//! `CAP_CHECK=1` instead records 10^8 zones with the default settings, `trace::start()`, and
//! prints the buffers' bytes against the cap, the dropped count and the process's peak RSS).

use std::hint::black_box;
use std::time::Instant;

use threadlab::trace::{self, Mode};

const RUNS: usize = 5;

/// ns per pair of clock reads, as a zone's begin and end take them.
fn clock_pair(n: u64) -> f64 {
    let t = Instant::now();
    for i in 0..n {
        black_box(clock());
        black_box(i);
        black_box(clock());
    }
    t.elapsed().as_nanos() as f64 / n as f64
}

/// The recorder's clock: the time-stamp counter on x86-64.
#[inline(always)]
fn clock() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: `rdtsc` has no preconditions; every x86-64 CPU implements it.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
        START.get_or_init(Instant::now).elapsed().as_nanos() as u64
    }
}

/// ns per empty task spawned into a scope on `pool` (recording on when `traced`).
fn spawns(pool: &threadlab::Pool, traced: bool) -> f64 {
    const M: u64 = 200_000;
    let rec = traced.then(trace::start);
    let t = Instant::now();
    pool.scope(|s| {
        for _ in 0..M {
            s.spawn(|_| {});
        }
    });
    let ns = t.elapsed().as_nanos() as f64 / M as f64;
    if let Some(rec) = rec {
        drop(rec.stop());
    }
    ns
}

fn run(mode: Mode, n: u64) -> (f64, usize) {
    // On a fresh thread, as a program's thread would record; the clock stops before `stop`.
    std::thread::spawn(move || {
        let rec = trace::try_start(mode).expect("no other recording");
        let t = Instant::now();
        for i in 0..n {
            let _z = threadlab::zone!("bench");
            black_box(i);
        }
        let ns = t.elapsed().as_nanos() as f64 / n as f64;
        let bytes = rec.memory_bytes();
        let trace = rec.stop();
        let kept = trace.event_count() as u64 + trace.dropped_events();
        assert!(kept >= 2 * n, "every event recorded or counted ({kept})");
        if mode == Mode::Full {
            assert_eq!(
                trace.dropped_events(),
                0,
                "a default recording keeps every zone under its cap"
            );
        }
        (ns, bytes)
    })
    .join()
    .unwrap()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// The process's peak resident set, from `/proc/self/status` (`VmHWM`), in MiB.
fn peak_rss_mib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(0, |kib| kib >> 10)
}

fn cap_check() {
    const N: u64 = 100_000_000;
    let (bytes, cap, dropped, kept) = std::thread::spawn(|| {
        let rec = trace::start();
        for i in 0..N {
            let _z = threadlab::zone!("bench");
            black_box(i);
        }
        let (bytes, cap) = (rec.memory_bytes(), rec.memory_cap());
        let t = rec.stop();
        (bytes, cap, t.dropped_events(), t.event_count())
    })
    .join()
    .unwrap();
    println!(
        "{N} zones, default settings: {} MiB of buffers (cap {} MiB), {kept} events kept, \
         {dropped} dropped; peak RSS {} MiB",
        bytes >> 20,
        cap.unwrap_or(0) >> 20,
        peak_rss_mib()
    );
    assert!(cap.is_some_and(|c| bytes <= c), "under the cap");
}

fn main() {
    if std::env::var_os("CAP_CHECK").is_some() {
        return cap_check();
    }
    let n: u64 = std::env::var("ZONES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15_000_000);
    let flight = Mode::FlightRecorder {
        bytes_per_thread: 1 << 20,
    };
    let pool = threadlab::Pool::builder().threads(1).build().unwrap();
    let (mut full, mut fl, mut clocks, mut plain, mut traced) =
        (vec![], vec![], vec![], vec![], vec![]);
    let mut bytes = 0;
    for r in 0..RUNS {
        let c = clock_pair(n);
        let (a, b) = run(Mode::Full, n);
        let (f, _) = run(flight, n);
        // Three alternations a run: one scope of spawns takes 7-20 ms, short enough for the
        // VM's drift to move a single sample by a third.
        let (mut ps, mut ts) = (vec![], vec![]);
        for _ in 0..3 {
            ps.push(spawns(&pool, false));
            ts.push(spawns(&pool, true));
        }
        let (p, t) = (median(ps.clone()), median(ts.clone()));
        println!(
            "run {r}: two clock reads {c:6.2} ns, zone {a:6.2} ns ({:.1} bytes of buffer a zone), \
             flight {f:6.2} ns; spawn {p:6.1} ns, traced {t:6.1} ns",
            b as f64 / n as f64
        );
        clocks.push(c);
        full.push(a);
        fl.push(f);
        plain.extend(ps);
        traced.extend(ts);
        bytes = b;
    }
    let (c, full, fl) = (median(clocks), median(full), median(fl));
    // Medians of every scope's figure (three a run).
    let (p, t) = (median(plain), median(traced));
    println!(
        "{n} zones, medians of {RUNS}: default recording {full:.2} ns/zone = {:.2}x two clock \
         reads ({c:.2} ns; goal <= 1.2); flight recorder {fl:.2} ns/zone; {:.1} bytes of buffer \
         a zone",
        full / c,
        bytes as f64 / n as f64
    );
    println!(
        "empty spawn, medians of {} scopes: {p:.1} ns plain, {t:.1} ns traced = {:.2}x plain + \
         three clock reads (goal <= 1.1)",
        3 * RUNS,
        t / (p + 1.5 * c)
    );
}
