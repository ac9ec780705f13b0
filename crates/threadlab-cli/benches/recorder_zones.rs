//! ns per zone on 15 million zones, full recording (no cap, so every zone is kept) against the
//! flight recorder (1 MiB, memory reused), runs interleaved (full, flight, full, …) so the
//! machine's drift hits both alike; prints each run, the medians and their ratio, and the
//! buffer bytes of a full run. Issue 15 asks for full ≤ 1.5× flight.
//!
//! `cargo bench -p threadlab-cli --bench recorder_zones` (`ZONES=N` to change the count;
//! `CAP_CHECK=1` instead records 10^8 zones with the default settings, `trace::start()`, and
//! prints the buffers' bytes against the cap, the dropped count and the process's peak RSS).

use std::hint::black_box;
use std::time::Instant;

use threadlab::trace::{self, Mode};

const RUNS: usize = 3;

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
        if mode == Mode::Unbounded {
            assert_eq!(
                trace.dropped_events(),
                0,
                "a full recording keeps every zone"
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
    let (mut full, mut fl) = (Vec::new(), Vec::new());
    let mut bytes = 0;
    for r in 0..RUNS {
        let (a, b) = run(Mode::Unbounded, n);
        let (c, _) = run(flight, n);
        println!(
            "run {r}: full {a:6.2} ns/zone ({} MB of buffers), flight {c:6.2} ns/zone",
            b >> 20
        );
        full.push(a);
        fl.push(c);
        bytes = b;
    }
    let (full, fl) = (median(full), median(fl));
    println!(
        "{n} zones, median of {RUNS}: full {full:.2} ns/zone, flight recorder {fl:.2} ns/zone, \
         ratio {:.2}; full recording: {:.1} bytes of buffer per zone",
        full / fl,
        bytes as f64 / n as f64
    );
}
