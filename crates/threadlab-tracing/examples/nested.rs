//! A program instrumented only with `tracing`: a `request` span whose work runs on a
//! two-worker pool through `join`, `scope` and futures, each half or task with spans of its
//! own. Run it to get a trace whose spans nest across the workers:
//!
//! ```sh
//! cargo run --release -p threadlab-tracing --example nested -- nested.pftrace
//! threadlab doctor nested.pftrace    # or open it at ui.perfetto.dev
//! ```
//!
//! Each pair of tasks waits (up to a few seconds) until its partner has started, so the two
//! run at once, on both workers; the test `tests/nested.rs` loads the trace and checks that.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tracing::{info, info_span};
use tracing_subscriber::prelude::*;

fn main() {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "nested.pftrace".into());
    run(Path::new(&path));
    println!("wrote {path}");
}

/// Runs the workload under a recording and saves the trace to `path`.
pub fn run(path: &Path) {
    let pool = threadlab::Pool::builder().threads(2).build().expect("pool");
    let subscriber = tracing_subscriber::registry().with(threadlab_tracing::layer());
    let rec = threadlab::trace::start();
    tracing::subscriber::with_default(subscriber, || {
        let request = info_span!("request", id = 7);
        let _request = request.enter();
        pool.install(work);
        info!("request done");
    });
    pool.shutdown();
    rec.stop().save(path).expect("save the trace");
}

fn work() {
    // join: `right` is taken by the other worker while `left` keeps forking (each fork of
    // a busy worker polls the heartbeat, which hands `right` to the idle worker).
    let started = AtomicUsize::new(0);
    threadlab::join(
        || {
            let _s = info_span!("left").entered();
            started.fetch_add(1, Ordering::SeqCst);
            wait_for(|| started.load(Ordering::SeqCst) == 2);
        },
        || {
            let _s = info_span!("right").entered();
            started.fetch_add(1, Ordering::SeqCst);
            spin(Duration::from_millis(2));
        },
    );
    // scope: two named tasks that wait for each other, so each worker runs one.
    let started = AtomicUsize::new(0);
    threadlab::scope(|s| {
        for part in 0..2 {
            let started = &started;
            s.spawn_named("sum-part", move |_| {
                let _s = info_span!("part", part).entered();
                started.fetch_add(1, Ordering::SeqCst);
                wait_for(|| started.load(Ordering::SeqCst) == 2);
                info!(part, "part done");
            });
        }
    });
    // futures: the same, as two named futures the worker's `block_on` waits for.
    let started = std::sync::Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..2)
        .map(|n| {
            let started = started.clone();
            threadlab::spawn_future_named("fetch-task", async move {
                let _s = info_span!("fetch", n).entered();
                started.fetch_add(1, Ordering::SeqCst);
                wait_for(|| started.load(Ordering::SeqCst) == 2);
            })
        })
        .collect();
    threadlab::block_on(async {
        for h in handles {
            h.await;
        }
    });
}

/// Spins (forking, so the heartbeat can hand out work) until `done`, for at most 5 s.
fn wait_for(done: impl Fn() -> bool + Sync) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !done() && Instant::now() < deadline {
        threadlab::join(|| spin(Duration::from_micros(50)), || ());
    }
}

fn spin(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}
