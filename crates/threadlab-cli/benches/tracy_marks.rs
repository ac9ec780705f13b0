//! What Tracy's vocabulary costs with no recording on (frame marks, plots, messages, dynamic
//! zone names, against `zone!` and an empty loop) and with a flight recorder on (`-on`), and
//! what `alloc::Counting` adds to an allocation. Timings are medians of interleaved runs in one process; for instruction counts
//! run one variant per process under `perf stat -e instructions:u`:
//!
//! `cargo bench -p threadlab-cli --bench tracy_marks` (all variants, ns per call), or
//! `perf stat -e instructions:u target/release/deps/tracy_marks-* VARIANT` (or, where the VM
//! has no counters, `valgrind --tool=callgrind`) with VARIANT one of
//! `empty zone frame plot message dynzone alloc-system alloc-counting` (N calls each,
//! `TRACY_MARKS_N` to change N).

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::time::Instant;

use threadlab::alloc::Counting;

const N: u64 = 10_000_000;
const ROUNDS: usize = 7;
const VARIANTS: [&str; 12] = [
    "empty",
    "zone",
    "frame",
    "plot",
    "message",
    "dynzone",
    "alloc-system",
    "alloc-counting",
    "zone-on",
    "frame-on",
    "plot-on",
    "message-on",
];

static COUNTING: Counting<System> = Counting::new(System);

fn run(variant: &str, n: u64) {
    let layout = Layout::from_size_align(32, 8).unwrap();
    match variant {
        "empty" => (0..n).for_each(|i| {
            black_box(i);
        }),
        "zone" => (0..n).for_each(|i| {
            let _z = threadlab::zone!("z");
            black_box(i);
        }),
        "frame" => (0..n).for_each(|i| {
            threadlab::trace::frame_mark();
            black_box(i);
        }),
        "plot" => (0..n).for_each(|i| {
            threadlab::trace::plot("p", black_box(i) as f64);
        }),
        "message" => (0..n).for_each(|i| {
            threadlab::trace::message(black_box("a message of some length"));
            black_box(i);
        }),
        "dynzone" => (0..n).for_each(|i| {
            let _z = threadlab::trace::Zone::begin_dynamic(black_box("a dynamic name"));
            black_box(i);
        }),
        "alloc-system" => (0..n).for_each(|_| {
            // SAFETY: a non-zero-size layout; the block is freed with the same layout.
            unsafe {
                let p = System.alloc(layout);
                System.dealloc(black_box(p), layout);
            }
        }),
        "alloc-counting" => (0..n).for_each(|_| {
            // SAFETY: as above; `Counting` forwards to `System`.
            unsafe {
                let p = COUNTING.alloc(layout);
                COUNTING.dealloc(black_box(p), layout);
            }
        }),
        // The same calls while a flight recorder (1 MiB per thread, chunks reused) records.
        on if on.ends_with("-on") => {
            let rec = threadlab::trace::flight_recorder(1 << 20);
            run(on.trim_end_matches("-on"), n);
            drop(rec);
        }
        other => panic!("unknown variant {other}; one of {VARIANTS:?}"),
    }
}

fn main() {
    // `cargo bench` passes `--bench`; a variant name runs that variant alone.
    if let Some(v) = std::env::args().skip(1).find(|a| !a.starts_with('-')) {
        let n = std::env::var("TRACY_MARKS_N").map_or(N, |n| n.parse().expect("a count"));
        run(&v, n);
        return;
    }
    assert!(!threadlab::trace::is_recording());
    let mut ns: Vec<Vec<f64>> = vec![Vec::new(); VARIANTS.len()];
    for _ in 0..ROUNDS {
        for (k, v) in VARIANTS.iter().enumerate() {
            let t = Instant::now();
            run(v, N);
            ns[k].push(t.elapsed().as_nanos() as f64 / N as f64);
        }
    }
    println!("ns per call (median of {ROUNDS} interleaved rounds of {N}; `-on`: recording):");
    for (k, v) in VARIANTS.iter().enumerate() {
        ns[k].sort_by(|a, b| a.partial_cmp(b).unwrap());
        println!("  {v:15} {:.2}", ns[k][ROUNDS / 2]);
    }
}
