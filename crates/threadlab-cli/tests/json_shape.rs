//! `doctor --json` and `compare --json` keep their shape: every key (and every value) the hand-
//! written JSON of the CLI printed before the doctor became its own crate with derived `Serialize`
//! (the outputs saved in `tests/data/`, made by that binary on two small traces of the lab's
//! `contention` experiment) is still printed, with the same value; new keys are fine.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// Every leaf of `v` by its path (`.locks[0].hold.count`).
fn leaves(v: &Value, path: String, out: &mut BTreeMap<String, Value>) {
    match v {
        Value::Object(m) => m
            .iter()
            .for_each(|(k, x)| leaves(x, format!("{path}.{k}"), out)),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, x)| leaves(x, format!("{path}[{i}]"), out)),
        _ => {
            out.insert(path, v.clone());
        }
    }
}

fn same(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0),
        _ => a == b,
    }
}

fn check(args: &[&str], saved: &str) {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let out = Command::new(env!("CARGO_BIN_EXE_threadlab"))
        .args(args)
        .current_dir(&data)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{args:?}");
    let now: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let before: Value =
        serde_json::from_str(&std::fs::read_to_string(data.join(saved)).unwrap()).unwrap();
    let (mut was, mut is) = (BTreeMap::new(), BTreeMap::new());
    leaves(&before, String::new(), &mut was);
    leaves(&now, String::new(), &mut is);
    assert!(was.len() > 50, "the saved output has {} leaves", was.len());
    for (path, v) in &was {
        match is.get(path) {
            None => panic!("{args:?}: `{path}` is gone (was {v})"),
            Some(w) => assert!(same(v, w), "{args:?}: `{path}` was {v}, is {w}"),
        }
    }
}

#[test]
fn doctor_json_keeps_every_key_and_value() {
    check(
        &["doctor", "--json", "ws-8-tasks.tltrace"],
        "doctor-ws-8-tasks.json",
    );
}

#[test]
fn compare_json_keeps_every_key_and_value() {
    check(
        &[
            "compare",
            "--json",
            "ws-8-tasks.tltrace",
            "ws-64-tasks.tltrace",
        ],
        "compare-ws-8-64.json",
    );
}
