//! The doctor names a `tracing` program's spans and tasks: a long named task that keeps one
//! worker busy while the other idles is reported by its name and by the span it ran in.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use threadlab_doctor::{Diagnose, Pitfall};
use tracing::info_span;
use tracing_subscriber::prelude::*;

fn program() -> threadlab::trace::Trace {
    let pool = threadlab::Pool::builder().threads(2).build().expect("pool");
    // Both workers asleep: the `install` runs on this thread as a guest in a worker's seat, and
    // the doctor must read the guest's span as that worker's.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !pool.metrics().all_parked() {
        assert!(Instant::now() < deadline, "workers never parked");
        std::thread::sleep(Duration::from_millis(1));
    }
    let subscriber = tracing_subscriber::registry().with(threadlab_tracing::layer());
    let rec = threadlab::trace::start();
    tracing::subscriber::with_default(subscriber, || {
        let _batch = info_span!("batch").entered();
        pool.install(|| {
            threadlab::scope(|s| {
                for i in 0..10 {
                    s.spawn_named("small", move |_| {
                        let _item = info_span!("item", i).entered();
                    });
                }
                s.spawn_named("flush", |_| {
                    let _encode = info_span!("encode", bytes = 4096).entered();
                    let t = Instant::now();
                    while t.elapsed() < Duration::from_millis(30) {
                        std::hint::spin_loop();
                    }
                });
            });
        });
    });
    pool.shutdown();
    rec.stop()
}

#[test]
fn long_task_finding_names_the_task_and_its_span() {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || tx.send(program()).unwrap());
    let trace = rx
        .recv_timeout(Duration::from_secs(120))
        .expect("watchdog: the program did not finish within 120 s");
    let d = trace.diagnose();
    let long = d
        .finding(Pitfall::LongTask)
        .unwrap_or_else(|| panic!("no long-task finding:\n{d}"));
    assert_eq!(long.subject, "task spawn `flush`", "{d}");
    assert!(
        long.evidence.contains("mostly in zone `encode`"),
        "{}",
        long.evidence
    );
    // Named tasks have rows of their own in the span table (and so in `compare`).
    let flush = d.spans.iter().find(|s| s.name == "task spawn `flush`");
    assert_eq!(flush.map(|s| s.self_time.count), Some(1), "{d}");
    let small = d.spans.iter().find(|s| s.name == "task spawn `small`");
    assert_eq!(small.map(|s| s.self_time.count), Some(10), "{d}");
    // If the doctor finds the workers imbalanced, it says what the busiest one ran.
    if let Some(f) = d.finding(Pitfall::Imbalance) {
        assert!(f.evidence.contains("zone `encode`"), "{}", f.evidence);
    }
}
