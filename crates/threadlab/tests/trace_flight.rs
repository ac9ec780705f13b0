//! Flight-recorder mode keeps only each thread's newest events within its byte budget.

mod trace_support;

use threadlab::trace::{EventKind, TaskKind};
use trace_support::*;

#[test]
fn flight_recorder_keeps_the_newest_events_within_budget() {
    let _s = serial();
    // A record takes at least 3 bytes in the buffers (a header, a time delta, a length), and
    // these counters at most 8 while their time deltas stay under 2^14 ticks.
    const BUDGET: usize = 64 * 1024;
    const N: u64 = 100_000;
    let rec = threadlab::trace::flight_recorder(BUDGET);
    // Each pair is a counter carrying its index, so which events survived is visible.
    for i in 0..N {
        threadlab::trace::hooks::queue_depth("i", i as i64);
    }
    threadlab::trace::hooks::task_begin(TaskKind::Serial);
    threadlab::trace::hooks::task_end();
    let trace = rec.stop();
    let t = &trace.threads()[0];
    let values: Vec<i64> = t
        .events()
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Counter { value, .. } => Some(value),
            _ => None,
        })
        .collect();
    let kept = t.events().len();
    assert!(kept * 3 <= BUDGET, "kept {kept} events, over the budget");
    assert!(kept * 8 >= BUDGET / 2, "kept only {kept} events");
    assert!(trace.dropped_events() > 0);
    // The newest counter values, contiguous up to the last one.
    assert_eq!(*values.last().unwrap(), N as i64 - 1);
    assert!(
        values.windows(2).all(|w| w[1] == w[0] + 1),
        "a contiguous newest run"
    );
    assert!(values[0] > (N as i64) / 2, "old events dropped");
    // The task span at the very end survived, whole.
    assert!(t.events().iter().any(|e| e.kind == EventKind::TaskEnd));
}

#[test]
fn full_mode_keeps_everything() {
    let _s = serial();
    let rec = threadlab::trace::start();
    for i in 0..50_000 {
        threadlab::trace::hooks::queue_depth("i", i);
    }
    let trace = rec.stop();
    let n = trace.threads()[0]
        .events()
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Counter { .. }))
        .count();
    assert_eq!(n, 50_000);
    assert_eq!(trace.dropped_events(), 0);
}
