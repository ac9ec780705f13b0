//! The Chrome JSON export, parsed back with serde_json.

mod trace_support;

use std::collections::HashMap;

use serde_json::Value;
use trace_support::*;

#[test]
fn chrome_json_parses_and_balances() {
    let _s = serial();
    let (trace, path) = saved_scenario("scenario.json");
    let v: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).expect("valid JSON");
    let events = v["traceEvents"].as_array().expect("traceEvents");
    // Thread names as metadata.
    let mut names = HashMap::new();
    for e in events.iter().filter(|e| e["ph"] == "M") {
        names.insert(
            e["tid"].as_u64().unwrap(),
            e["args"]["name"].as_str().unwrap().to_owned(),
        );
    }
    for t in trace.threads() {
        assert_eq!(names.get(&t.tid()).map(String::as_str), Some(t.name()));
    }
    // B/E balance per thread, and "inner" nests in "outer".
    let mut stacks: HashMap<u64, Vec<String>> = HashMap::new();
    let mut inner_parent = None;
    let mut last_ts: HashMap<u64, f64> = HashMap::new();
    for e in events {
        let tid = e["tid"].as_u64().unwrap();
        if let Some(ts) = e["ts"].as_f64() {
            let last = last_ts.entry(tid).or_insert(0.0);
            assert!(ts >= *last, "time order on {tid}");
            *last = ts;
        }
        let stack = stacks.entry(tid).or_default();
        match e["ph"].as_str().unwrap() {
            "B" => {
                let name = e["name"].as_str().unwrap().to_owned();
                if name == "inner" {
                    inner_parent = stack.last().cloned();
                }
                stack.push(name);
            }
            "E" => {
                stack.pop().expect("E without B");
            }
            _ => {}
        }
    }
    assert!(stacks.values().all(Vec::is_empty), "{stacks:?}");
    assert_eq!(inner_parent.as_deref(), Some("outer"));
    // The spawn flow: an "s" and an "f" with the same id, on worker 0 and worker 1.
    let tid_of = |name: &str| trace.threads()[thread_named(&trace, name)].tid();
    let start = events.iter().find(|e| e["ph"] == "s").expect("flow start");
    let finish = events
        .iter()
        .find(|e| e["ph"] == "f" && e["id"] == start["id"])
        .expect("flow end");
    assert_eq!(start["tid"].as_u64(), Some(tid_of("threadlab-worker-0")));
    assert_eq!(finish["tid"].as_u64(), Some(tid_of("threadlab-worker-1")));
    assert!(events
        .iter()
        .any(|e| e["name"] == "wait: queue" && e["tid"].as_u64() == Some(tid_of("waiter"))));
}
