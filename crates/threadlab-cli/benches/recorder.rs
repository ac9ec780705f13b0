//! The recorder's cost: ns per recorded event (goal ≤ 5 ns; Tracy publishes 2.25 ns per zone),
//! ns per zone (two events) while recording, and the cost of a zone and a hook when no recording
//! is on, against an empty loop as the baseline. Each figure is the median of several runs in
//! the same process (the machine is shared and noisy).
//!
//! `cargo bench -p threadlab-cli --bench recorder`

use std::hint::black_box;
use std::time::Instant;

use threadlab::trace::{self, hooks, TaskKind};

const N: u64 = 2_000_000;
const RUNS: usize = 9;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// How a run records.
#[derive(Clone, Copy, PartialEq)]
enum Rec {
    Off,
    /// Every event kept: the buffer grows, so fresh memory is touched (page faults included).
    Full,
    /// Flight recorder with a 1 MiB budget: chunks are recycled, the steady-state cost.
    Flight,
}

/// ns per iteration of `f` over N iterations, median of RUNS.
fn measure(mode: Rec, f: impl Fn(u64)) -> f64 {
    let mut runs = Vec::new();
    for _ in 0..RUNS {
        let rec = match mode {
            Rec::Off => None,
            Rec::Full => Some(trace::start()),
            Rec::Flight => Some(trace::flight_recorder(1 << 20)),
        };
        let t = Instant::now();
        for i in 0..N {
            f(black_box(i));
        }
        let ns = t.elapsed().as_nanos() as f64 / N as f64;
        if let Some(rec) = rec {
            let trace = rec.stop();
            let kept = trace.event_count() as u64 + trace.dropped_events();
            assert!(kept >= N, "every event recorded ({kept} < {N})");
        }
        runs.push(ns);
    }
    median(runs)
}

fn main() {
    let baseline = measure(Rec::Off, |i| {
        black_box(i);
    });
    let zone_off = measure(Rec::Off, |_| {
        let _z = threadlab::zone!("bench");
    });
    let hook_off = measure(Rec::Off, |_| hooks::task_end());
    let event_on = measure(Rec::Full, |_| hooks::task_begin(TaskKind::Join));
    let zone_on = measure(Rec::Full, |_| {
        let _z = threadlab::zone!("bench");
    });
    let event_flight = measure(Rec::Flight, |_| hooks::task_begin(TaskKind::Join));
    let zone_flight = measure(Rec::Flight, |_| {
        let _z = threadlab::zone!("bench");
    });
    println!("recorder bench ({N} iterations, median of {RUNS} runs; shared, noisy machine)");
    let rows = [
        ("empty loop (baseline)", baseline, "iter"),
        ("zone, recording off", zone_off, "iter"),
        ("hook, recording off", hook_off, "iter"),
        ("one event, full recording", event_on, "event"),
        ("zone (2 events), full recording", zone_on, "zone"),
        ("one event, flight recorder", event_flight, "event"),
        ("zone (2 events), flight recorder", zone_flight, "zone"),
    ];
    for (what, ns, per) in rows {
        println!(
            "  {what:<34} {ns:6.2} ns/{per:<5} (+{:.2} over baseline)",
            ns - baseline
        );
    }
}
