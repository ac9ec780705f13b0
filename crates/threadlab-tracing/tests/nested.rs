//! The example program (`examples/nested.rs`, instrumented only with `tracing`) produces a
//! trace whose spans nest across `join`, `scope` and futures on both workers: loaded back from
//! its `.pftrace` with `Trace::load`, every span's zone sits inside a zone of its parent span
//! on the same track, the tasks' spans sit on both workers, and the tasks carry their names.

#[allow(dead_code)]
#[path = "../examples/nested.rs"]
mod example;

use std::collections::HashMap;
use std::sync::mpsc;
use std::time::Duration;

use threadlab::trace::{
    EventKind, Trace, ARG_GUEST_SEAT, ARG_SPAN_ID, ARG_SPAN_PARENT, ARG_TASK_LOCATION,
    ARG_TASK_NAME,
};

/// One zone as the test sees it.
#[derive(Debug, Clone)]
struct Zone {
    ts_ns: u64,
    name: String,
    /// The worker whose seat it ran in: its track's worker, or, inside the install span of a
    /// guest (the caller running pool work in a sleeping worker's seat), that seat
    /// (`ARG_GUEST_SEAT`), as the doctor reads it.
    worker: Option<u32>,
    track: usize,
    args: HashMap<String, String>,
    /// The `span.id` of the innermost zone around it on its track.
    enclosing_span: Option<String>,
    /// The arguments of the innermost task span around it.
    task: Option<HashMap<String, String>>,
    /// Directly inside a task span: a span carried into the task from where it was spawned.
    carried: bool,
}

fn zones(trace: &Trace) -> Vec<Zone> {
    enum Open {
        Zone(usize),
        Task(HashMap<String, String>),
    }
    let mut out: Vec<Zone> = Vec::new();
    for (ti, t) in trace.threads().iter().enumerate() {
        let mut stack: Vec<Open> = Vec::new();
        for e in t.events().iter() {
            match e.kind {
                EventKind::ZoneBegin { name } => {
                    let enclosing_span = stack.iter().rev().find_map(|o| match o {
                        Open::Zone(i) => Some(out[*i].args.get(ARG_SPAN_ID).cloned()),
                        Open::Task(_) => None,
                    });
                    let task = stack.iter().rev().find_map(|o| match o {
                        Open::Task(a) => Some(a.clone()),
                        Open::Zone(_) => None,
                    });
                    let seat = stack.iter().find_map(|o| match o {
                        Open::Task(a) => a.get(ARG_GUEST_SEAT).and_then(|s| s.parse().ok()),
                        Open::Zone(_) => None,
                    });
                    out.push(Zone {
                        ts_ns: e.ts_ns,
                        name: trace.name(name).to_owned(),
                        worker: t.worker().or(seat),
                        track: ti,
                        args: HashMap::new(),
                        enclosing_span: enclosing_span.flatten(),
                        task,
                        carried: matches!(stack.last(), Some(Open::Task(_))),
                    });
                    stack.push(Open::Zone(out.len() - 1));
                }
                EventKind::TaskBegin { .. } => stack.push(Open::Task(HashMap::new())),
                EventKind::Arg { key, value } => {
                    let (k, v) = (trace.name(key).to_owned(), trace.name(value).to_owned());
                    match stack.last_mut() {
                        Some(Open::Zone(i)) => {
                            out[*i].args.insert(k, v);
                        }
                        Some(Open::Task(a)) => {
                            a.insert(k, v);
                        }
                        None => {}
                    }
                }
                EventKind::ZoneEnd | EventKind::TaskEnd => {
                    stack.pop();
                }
                _ => {}
            }
        }
    }
    out
}

#[test]
fn spans_nest_across_join_scope_and_futures_on_both_workers() {
    let path =
        std::env::temp_dir().join(format!("tl-tracing-nested-{}.pftrace", std::process::id()));
    let (tx, rx) = mpsc::channel();
    let p = path.clone();
    std::thread::spawn(move || {
        example::run(&p);
        tx.send(()).unwrap();
    });
    rx.recv_timeout(Duration::from_secs(120))
        .expect("watchdog: the example did not finish within 120 s");
    let trace = Trace::load(&path).expect("load the example's trace");
    std::fs::remove_file(&path).ok();
    let zones = zones(&trace);
    let by_name = |n: &str| -> Vec<&Zone> { zones.iter().filter(|z| z.name == n).collect() };

    // The request span: entered on the main thread, then carried onto the workers.
    let request = by_name("request");
    let main_entry = request
        .iter()
        .find(|z| z.worker.is_none())
        .expect("the request span's zone on the calling thread");
    let request_id = main_entry.args[ARG_SPAN_ID].clone();
    assert_eq!(main_entry.args["id"], "7");
    assert!(request.iter().all(|z| z.args[ARG_SPAN_ID] == request_id));

    // Every span created inside the request nests, on its own track, inside a zone of the
    // request span (carried there by the task that runs it, or entered on that thread before),
    // and names it as its parent. A span is entered again, at the top of a task, on the
    // worker that runs a task spawned inside it (the short forks of `wait_for`): those
    // entries are the carried ones.
    // A span's first entry (in time): where it was created.
    let own = |name: &str| -> Vec<&Zone> {
        let mut first: HashMap<&String, &Zone> = HashMap::new();
        for z in by_name(name) {
            let f = first.entry(&z.args[ARG_SPAN_ID]).or_insert(z);
            if z.ts_ns < f.ts_ns {
                *f = z;
            }
        }
        first.into_values().collect()
    };
    for (name, count) in [("left", 1), ("right", 1), ("part", 2), ("fetch", 2)] {
        let zs = by_name(name);
        let mut ids: Vec<&String> = zs.iter().map(|z| &z.args[ARG_SPAN_ID]).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), count, "{name}: {zs:?}");
        for z in &zs {
            assert_eq!(
                z.args.get(ARG_SPAN_PARENT),
                Some(&request_id),
                "{name}'s parent: {z:?}"
            );
            assert!(z.worker.is_some(), "{name} runs on a worker: {z:?}");
            let nested = z.enclosing_span.as_ref() == Some(&request_id);
            assert!(
                nested || z.carried,
                "{name} nests in the request or is carried: {z:?}"
            );
        }
        assert_eq!(
            own(name).len(),
            count,
            "{name}: one entry nests in the request: {zs:?}"
        );
    }
    // On both workers: join's halves, the scope's two tasks and the two futures each ran on
    // the two workers (each of a pair waits for the other to start).
    let workers = |names: &[&str]| -> Vec<Option<u32>> {
        let mut w: Vec<_> = names
            .iter()
            .flat_map(|n| own(n))
            .map(|z| z.worker)
            .collect();
        w.sort();
        w.dedup();
        w
    };
    assert_eq!(workers(&["left", "right"]), [Some(0), Some(1)], "join");
    assert_eq!(workers(&["part"]), [Some(0), Some(1)], "scope");
    assert_eq!(workers(&["fetch"]), [Some(0), Some(1)], "futures");
    // The request's zone on the worker that ran `right` lies in a join task span.
    let right = by_name("right")[0];
    let carried = zones
        .iter()
        .find(|z| z.track == right.track && z.name == "request" && z.task.is_some())
        .expect("the request span entered inside a task on the worker that ran `right`");
    assert!(carried
        .task
        .as_ref()
        .unwrap()
        .contains_key(ARG_TASK_LOCATION));

    // Named tasks: the scope's and the futures' task spans carry their names and locations.
    for (span, task) in [("part", "sum-part"), ("fetch", "fetch-task")] {
        for z in own(span) {
            let t = z
                .task
                .as_ref()
                .unwrap_or_else(|| panic!("{span} runs in a task"));
            assert_eq!(
                t.get(ARG_TASK_NAME).map(String::as_str),
                Some(task),
                "{z:?}"
            );
            assert!(t[ARG_TASK_LOCATION].contains("nested.rs:"), "{z:?}");
        }
    }
    // Events are instants carrying their fields.
    assert!(zones.iter().any(|z| z.name.starts_with("event ")
        && z.args.get("message").map(String::as_str) == Some("part done")));
}
