//! What a `tracing` span costs through the bridge, against `tracing`'s own baselines: ns per
//! span (create, enter, exit, close; one `u64` field) on one thread, for
//!
//! - `no-subscriber`: `tracing`'s no-op (`NoSubscriber`: spans are disabled at the callsite),
//! - `registry`: `tracing_subscriber::registry()` alone (spans exist, nothing records them),
//! - `bridge-off`: the registry with threadlab's layer, no recording on,
//! - `bridge-on`: the same while a recording is on (a zone and two arguments per span),
//!
//! interleaved over rounds, medians of the rounds. Also the cost of a spawn carrying a span
//! (`Pool::spawn` inside a span, hook installed) against one outside any span.
//!
//! ```sh
//! cargo run --release -p threadlab-tracing --example span_cost
//! ```

use std::time::{Duration, Instant};

use tracing::info_span;
use tracing_subscriber::prelude::*;

const SPANS: u64 = 200_000;
const ROUNDS: usize = 7;

fn spans() {
    for i in 0..SPANS {
        let span = info_span!("work", i);
        let _g = span.enter();
        std::hint::black_box(&span);
    }
}

fn time(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_nanos() as f64 / SPANS as f64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let none = tracing::subscriber::NoSubscriber::default();
    let registry = tracing_subscriber::registry();
    let bridge = tracing_subscriber::registry().with(threadlab_tracing::layer());
    let (none, registry, bridge) = (
        tracing::Dispatch::new(none),
        tracing::Dispatch::new(registry),
        tracing::Dispatch::new(bridge),
    );
    let mut rows: [(&str, Vec<f64>); 4] = [
        ("no-subscriber", vec![]),
        ("registry", vec![]),
        ("bridge-off", vec![]),
        ("bridge-on", vec![]),
    ];
    // A warm-up round, then interleaved rounds, each starting with another variant.
    let run = |v: usize| match v {
        0 => tracing::dispatcher::with_default(&none, || time(spans)),
        1 => tracing::dispatcher::with_default(&registry, || time(spans)),
        2 => tracing::dispatcher::with_default(&bridge, || time(spans)),
        _ => tracing::dispatcher::with_default(&bridge, || {
            let rec = threadlab::trace::start();
            let ns = time(spans);
            drop(rec.stop());
            ns
        }),
    };
    // `span_cost N`: only variant N (for a profiler).
    if let Some(v) = std::env::args()
        .nth(1)
        .and_then(|a| a.parse::<usize>().ok())
    {
        let ns: Vec<f64> = (0..ROUNDS).map(|_| run(v)).collect();
        println!("{}: {:.1} ns per span", rows[v.min(3)].0, median(ns));
        return;
    }
    for round in 0..=ROUNDS {
        for k in 0..rows.len() {
            let v = (round + k) % rows.len();
            let ns = run(v);
            if round > 0 {
                rows[v].1.push(ns);
            }
        }
    }
    println!("ns per span (create + enter + exit + close, one field), median of {ROUNDS} rounds:");
    let base = median(rows[1].1.clone());
    for (name, v) in &rows {
        let m = median(v.clone());
        println!("  {name:<14} {m:>8.1} ns   {:>5.2}x registry", m / base);
    }

    // A spawn inside a span (its context carried) against one outside any span.
    let pool = threadlab::Pool::builder().threads(1).build().expect("pool");
    let spawns = |n: u64| {
        let (tx, rx) = std::sync::mpsc::channel();
        let t = Instant::now();
        for _ in 0..n {
            let tx = tx.clone();
            pool.spawn(move || {
                let _ = tx.send(());
            });
        }
        for _ in 0..n {
            rx.recv_timeout(Duration::from_secs(60))
                .expect("a task ran");
        }
        t.elapsed().as_nanos() as f64 / n as f64
    };
    let (mut outside, mut inside) = (vec![], vec![]);
    tracing::dispatcher::with_default(&bridge, || {
        for round in 0..=ROUNDS {
            let o = spawns(20_000);
            let i = info_span!("request").in_scope(|| spawns(20_000));
            if round > 0 {
                outside.push(o);
                inside.push(i);
            }
        }
    });
    let (o, i) = (median(outside), median(inside));
    println!(
        "ns per Pool::spawn from outside the pool, 1 worker: outside any span {o:.0}, inside a \
         span (carried) {i:.0} ({:.2}x)",
        i / o
    );
}
