//! Pipeline: every stage kind, ordering, the bound on items in flight (back-pressure), panics
//! (every item and closure dropped once), an empty source, and the stages' zones in a recording.
//! Everything here counts; nothing is timed. Waits that a bug could make endless have a deadline
//! and fail with a message instead.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use threadlab::{Pipeline, PipelineReport, Pool};

mod pool_support;
use pool_support::panic_message;

const N: usize = if cfg!(miri) { 20 } else { 2_000 };

fn pool(threads: usize) -> Pool {
    Pool::builder().threads(threads).build().expect("pool")
}

/// A source of 0..n.
fn numbers(n: usize) -> impl FnMut() -> Option<usize> + Send {
    let mut next = 0;
    move || {
        next += 1;
        (next <= n).then_some(next - 1)
    }
}

/// Spins until `done()` or 20 s passed; panics with `what` then (never hangs silently).
fn wait_for(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::yield_now();
    }
}

/// Counts how many calls are inside a stage at once and the most ever seen.
#[derive(Default)]
struct Occupancy {
    now: AtomicUsize,
    peak: AtomicUsize,
}

impl Occupancy {
    fn enter(&self) {
        let n = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(n, Ordering::SeqCst);
    }
    fn leave(&self) {
        self.now.fetch_sub(1, Ordering::SeqCst);
    }
    fn peak(&self) -> usize {
        self.peak.load(Ordering::SeqCst)
    }
    /// Runs `f` counted as inside.
    fn during<R>(&self, f: impl FnOnce() -> R) -> R {
        self.enter();
        let r = f();
        self.leave();
        r
    }
}

/// Some work whose length depends on the item, so items overtake each other in parallel stages.
/// A tenth as long under Miri, which switches threads every hundred-odd basic blocks anyway: the
/// lengths still vary as much relative to each other, so items still overtake.
fn churn(x: usize) -> usize {
    let mut h = x as u64;
    for _ in 0..(x * 7919 % 97) * if cfg!(miri) { 5 } else { 50 } {
        h = h
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
    }
    std::hint::black_box(h);
    x
}

/// The numbers `0..N` (8 in flight at most) through a parallel stage of [`churn`], so that they
/// come out of it in any order: what the serial stages are tested behind.
fn churned<'env>() -> Pipeline<'env, usize> {
    Pipeline::new("numbers", 8, numbers(N)).parallel("churn", churn)
}

#[test]
fn serial_in_order_stage_sees_source_order_after_a_parallel_stage() {
    let pool = pool(4);
    let serial = Occupancy::default();
    let mut out = Vec::new();
    let report = churned()
        .serial_in_order("write", |x| serial.during(|| out.push(x)))
        .run_on(&pool);
    assert_eq!(out, (0..N).collect::<Vec<_>>());
    assert_eq!(report.items, N as u64);
    assert_eq!(serial.peak(), 1, "a serial stage ran two items at once");
}

#[test]
fn serial_out_of_order_stage_sees_every_item_once_one_at_a_time() {
    let pool = pool(4);
    let serial = Occupancy::default();
    let mut out = Vec::new();
    let report = churned()
        .serial_out_of_order("gather", |x| {
            serial.during(|| out.push(x));
            x
        })
        .parallel("after", |x| x + 1)
        .run_on(&pool);
    out.sort_unstable();
    assert_eq!(out, (0..N).collect::<Vec<_>>());
    assert_eq!(report.items, N as u64);
    assert_eq!(serial.peak(), 1, "a serial stage ran two items at once");
}

#[test]
#[cfg_attr(
    miri,
    ignore = "waits up to 20 s of the clock for a second worker to join in, longer than Miri gets there"
)]
fn parallel_stage_runs_items_at_the_same_time() {
    // Item 0 stays in the parallel stage until item 1 is in it too: only possible if the stage
    // really admits two items at once (and the source kept going while item 0 was held).
    let pool = pool(2);
    let inside = Occupancy::default();
    let mut out = Vec::new();
    Pipeline::new("numbers", 4, numbers(10))
        .parallel("meet", |x| {
            inside.enter();
            if x == 0 {
                wait_for("a second item in the parallel stage", || inside.peak() == 2);
            }
            inside.leave();
            x
        })
        .serial_in_order("collect", |x| out.push(x))
        .run_on(&pool);
    assert_eq!(inside.peak(), 2);
    assert_eq!(out, (0..10).collect::<Vec<_>>());
}

#[test]
fn type_changing_chain_of_every_kind() {
    let pool = pool(2);
    let mut lines = Vec::new();
    let report = Pipeline::new("numbers", 3, numbers(50))
        .serial_in_order("tag", |x| (x, x * x))
        .parallel("format", |(x, sq)| format!("{x}^2={sq}"))
        .serial_out_of_order("len", |s: String| (s.len(), s))
        .serial_in_order("write", |(_, s)| lines.push(s))
        .run_on(&pool);
    assert_eq!(report.items, 50);
    let want: Vec<String> = (0..50).map(|x| format!("{x}^2={}", x * x)).collect();
    assert_eq!(lines, want);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "waits up to 20 s of the clock for a second worker to join in, longer than Miri gets there"
)]
fn items_in_flight_never_exceed_the_limit_and_reach_it_when_a_stage_holds_back() {
    const LIMIT: usize = 3;
    let pool = pool(2);
    let made = AtomicUsize::new(0);
    let finished = AtomicUsize::new(0);
    let peak_seen_by_source = AtomicUsize::new(0);
    let mut next = 0;
    let report = Pipeline::new("numbers", LIMIT, || {
        // Items made before this call and not yet finished: all hold tokens, and so does this
        // call, so at most LIMIT - 1.
        let alive = made.load(Ordering::SeqCst) - finished.load(Ordering::SeqCst);
        peak_seen_by_source.fetch_max(alive + 1, Ordering::SeqCst);
        next += 1;
        if next > 200 {
            return None;
        }
        made.fetch_add(1, Ordering::SeqCst);
        Some(next - 1)
    })
    .serial_in_order("slow sink", |x: usize| {
        if x == 0 {
            // Hold the first item until the source has used every token: without back-pressure
            // the source would go on to all 200 items.
            wait_for("the source to fill the pipeline", || {
                made.load(Ordering::SeqCst) == LIMIT
            });
        }
        finished.fetch_add(1, Ordering::SeqCst);
    })
    .run_on(&pool);
    assert_eq!(report.items, 200);
    assert_eq!(report.peak_in_flight, LIMIT);
    assert_eq!(peak_seen_by_source.load(Ordering::SeqCst), LIMIT);
}

#[test]
fn limit_of_one_runs_items_strictly_one_after_another() {
    let pool = pool(4);
    let inside = Occupancy::default();
    let report = Pipeline::new("numbers", 1, numbers(100))
        .parallel("a", |x| inside.during(|| x))
        .parallel("b", |x| inside.during(|| x))
        .run_on(&pool);
    assert_eq!(
        report,
        PipelineReport {
            items: 100,
            peak_in_flight: 1
        }
    );
    assert_eq!(inside.peak(), 1);
}

#[test]
fn empty_source_calls_no_stage() {
    let pool = pool(2);
    let calls = AtomicUsize::new(0);
    let source_calls = AtomicUsize::new(0);
    let report = Pipeline::new("empty", 4, || {
        source_calls.fetch_add(1, Ordering::SeqCst);
        None::<usize>
    })
    .parallel("p", |x| {
        calls.fetch_add(1, Ordering::SeqCst);
        x
    })
    .serial_in_order("s", |x| {
        calls.fetch_add(1, Ordering::SeqCst);
        x
    })
    .run_on(&pool);
    assert_eq!(
        report,
        PipelineReport {
            items: 0,
            peak_in_flight: 1
        }
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    assert_eq!(
        source_calls.load(Ordering::SeqCst),
        1,
        "the source is not called after None"
    );
}

/// A value that counts its creations and drops.
struct Counted {
    live: Arc<AtomicUsize>,
    value: usize,
}

impl Counted {
    fn new(live: &Arc<AtomicUsize>, value: usize) -> Self {
        live.fetch_add(1, Ordering::SeqCst);
        Counted {
            live: Arc::clone(live),
            value,
        }
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.live.fetch_sub(1, Ordering::SeqCst);
    }
}

#[test]
fn stage_panic_is_reraised_and_every_item_and_closure_dropped_once() {
    for kind in ["parallel", "serial_in_order", "serial_out_of_order"] {
        let pool = pool(2);
        let live = Arc::new(AtomicUsize::new(0));
        let made = Arc::new(AtomicUsize::new(0));
        let result = catch_unwind(AssertUnwindSafe(|| {
            let (l, m) = (Arc::clone(&live), Arc::clone(&made));
            let mut i = 0;
            let source_guard = Counted::new(&live, 0);
            let p = Pipeline::new("items", 6, move || {
                let _keep = &source_guard; // dropped with the closure
                i += 1;
                m.fetch_add(1, Ordering::SeqCst);
                (i <= 1_000).then(|| Counted::new(&l, i))
            });
            let stage_guard = Counted::new(&live, 0);
            let fail = move |c: Counted| {
                let _keep = &stage_guard;
                if c.value == 40 {
                    panic!("stage failed on 40");
                }
                c
            };
            let p = match kind {
                "parallel" => p.parallel("fail", fail),
                "serial_in_order" => p.serial_in_order("fail", fail),
                _ => p.serial_out_of_order("fail", fail),
            };
            p.serial_in_order("sink", |c: Counted| c.value)
                .run_on(&pool)
        }));
        let err = result.expect_err("the stage's panic reaches the caller");
        assert_eq!(panic_message(&*err), "stage failed on 40", "{kind}");
        assert_eq!(
            live.load(Ordering::SeqCst),
            0,
            "{kind}: a value was not dropped"
        );
        assert!(
            made.load(Ordering::SeqCst) < 1_000,
            "{kind}: the source went on after the panic"
        );
    }
}

#[test]
fn many_panics_reraise_one_and_drop_the_rest() {
    let pool = pool(4);
    let live = Arc::new(AtomicUsize::new(0));
    let l = Arc::clone(&live);
    let result = catch_unwind(AssertUnwindSafe(|| {
        let mut i = 0;
        Pipeline::new("items", 8, move || {
            i += 1;
            (i <= 500).then(|| Counted::new(&l, i))
        })
        .parallel("always fails", |c: Counted| -> Counted {
            let _dropped_by_unwinding = c;
            panic!("boom")
        })
        .run_on(&pool)
    }));
    assert_eq!(panic_message(&*result.expect_err("panics")), "boom");
    assert_eq!(live.load(Ordering::SeqCst), 0);
}

#[test]
fn source_panic_is_reraised_after_items_in_flight_are_dropped() {
    let pool = pool(2);
    let live = Arc::new(AtomicUsize::new(0));
    let l = Arc::clone(&live);
    let result = catch_unwind(AssertUnwindSafe(|| {
        let mut i = 0;
        Pipeline::new("items", 4, move || {
            i += 1;
            assert!(i != 30, "source failed");
            Some(Counted::new(&l, i))
        })
        .parallel("churn", |c: Counted| {
            churn(c.value);
            c
        })
        .serial_in_order("sink", drop)
        .run_on(&pool)
    }));
    assert_eq!(
        panic_message(&*result.expect_err("panics")),
        "source failed"
    );
    assert_eq!(live.load(Ordering::SeqCst), 0);
}

#[test]
fn pool_stays_usable_after_a_failed_pipeline() {
    let pool = pool(2);
    let r = catch_unwind(AssertUnwindSafe(|| {
        Pipeline::new("n", 2, numbers(10))
            .serial_in_order("fail", |x| assert!(x != 5, "five"))
            .run_on(&pool)
    }));
    assert!(r.is_err());
    let sum = Mutex::new(0);
    let report = Pipeline::new("n", 2, numbers(10))
        .serial_out_of_order("sum", |x| *sum.lock().unwrap() += x)
        .run_on(&pool);
    assert_eq!(report.items, 10);
    assert_eq!(*sum.lock().unwrap(), 45);
}

#[test]
fn nested_pipeline_inside_install_uses_the_current_pool() {
    let pool = pool(2);
    let report = pool.install(|| {
        assert!(threadlab::current_thread_index().is_some());
        Pipeline::new("n", 4, numbers(20))
            .parallel("check", |x| {
                assert!(
                    threadlab::current_thread_index().is_some(),
                    "stage ran off the pool"
                );
                x
            })
            .run()
    });
    assert_eq!(report.items, 20);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "the recorder reads the CPU counter (rdtsc), which Miri cannot run"
)]
fn stages_are_zones_in_a_recording() {
    let pool = pool(2);
    let rec = threadlab::trace::start();
    Pipeline::new("pipe source", 2, numbers(5))
        .parallel("pipe wash", |x| x)
        .serial_in_order("pipe dry", |x| x)
        .run_on(&pool);
    let trace = rec.stop();
    for (name, want) in [("pipe source", 6), ("pipe wash", 5), ("pipe dry", 5)] {
        let id = trace
            .name_id(name)
            .unwrap_or_else(|| panic!("{name} not recorded"));
        let begins: usize = trace
            .threads()
            .iter()
            .flat_map(|t| t.events())
            .filter(
                |e| matches!(e.kind, threadlab::trace::EventKind::ZoneBegin { name } if name == id),
            )
            .count();
        assert_eq!(begins, want, "{name}");
    }
}
