//! The loom model runner shared by the `loom_*` tests.

/// Runs a loom model with no preemption bound (`LOOM_MAX_PREEMPTIONS` can still bound it, as
/// `Builder::new` reads it) and prints how many interleavings it explored (run with
/// `--nocapture` to see the counts; `docs/reliability.md` quotes them).
pub fn model(f: impl Fn() + Sync + Send + 'static) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let runs = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&runs);
    loom::model::Builder::new().check(move || {
        // Relaxed: a statistic, read after `check` returns.
        counter.fetch_add(1, Ordering::Relaxed);
        f()
    });
    println!(
        "loom: {} interleavings explored",
        runs.load(Ordering::Relaxed)
    );
}
