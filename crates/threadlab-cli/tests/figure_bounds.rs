//! Every figure the lab prints is inside its physical bound: the traced experiments (`jobs`,
//! `contention`, `observed`, `image`, `alloc`) and `pipeline` at their tiny sizes, medians of 5
//! rounds (a ratio of two single runs is noise), every row of `results.json` and every answer of the
//! doctor on their traces. Bounds: no NaN or infinity; shares in 0–100% or 0–1 (a slowdown in
//! percent has no upper bound); a speed-up at most the threads its row ran on, or the
//! machine's own memory scaling on as many threads where the experiment measured it (a
//! `memory_scaling` row), and then with the note that says so; the process's CPUs used at most its
//! CPUs; a question the trace is too short to answer has no figure (never 0) and says so; and
//! no experiment carries a "figure out of bounds" note.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn share_name(name: &str) -> bool {
    name.contains("share") || name.contains("fraction") || name.starts_with("1 - ")
}

/// Runs `threadlab lab --tiny --threads 2 --repeat REPEAT` of `experiments` into a fresh
/// directory named by `tag`, which must succeed; returns the directory and what it printed.
fn lab(tag: &str, repeat: &str, experiments: &[&str]) -> (PathBuf, String) {
    let dir = std::env::temp_dir().join(format!("threadlab-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = Command::new(env!("CARGO_BIN_EXE_threadlab"))
        .args([
            "lab",
            "--tiny",
            "--threads",
            "2",
            "--repeat",
            repeat,
            "--out",
        ])
        .arg(&dir)
        .args(experiments)
        .output()
        .expect("run threadlab lab");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (dir, stdout)
}

#[test]
fn every_row_and_answer_of_the_traced_experiments_is_inside_its_bounds() {
    let (dir, stdout) = lab(
        "bounds",
        "5",
        &[
            "jobs",
            "contention",
            "observed",
            "image",
            "pipeline",
            "alloc",
        ],
    );
    assert!(!stdout.contains("out of bounds"), "{stdout}");
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();

    let rows = doc["rows"].as_array().unwrap();
    assert!(!rows.is_empty());
    for r in rows {
        let v = r["value"]
            .as_f64()
            .unwrap_or_else(|| panic!("not a finite figure: {r}"));
        assert!(v.is_finite(), "{r}");
        let (metric, unit) = (r["metric"].as_str().unwrap(), r["unit"].as_str().unwrap());
        if unit == "%" && share_name(metric) {
            assert!((0.0..=100.0).contains(&v), "a share outside 0–100%: {r}");
        }
        if unit == "ratio" && share_name(metric) {
            assert!((0.0..=1.05).contains(&v), "a share outside 0–1: {r}");
        }
        if metric.contains("speedup") {
            let threads = r["threads"].as_f64().unwrap();
            let machine = rows
                .iter()
                .filter(|m| {
                    m["metric"] == "memory_scaling"
                        && m["experiment"] == r["experiment"]
                        && m["threads"] == r["threads"]
                })
                .filter_map(|m| m["value"].as_f64())
                .fold(0.0, f64::max);
            assert!(
                v <= threads.max(machine) * 1.05,
                "a speed-up above its threads and the machine's scaling: {r}"
            );
            if v > threads * 1.05 {
                let explained = doc["experiments"].as_array().unwrap().iter().any(|e| {
                    e["name"] == r["experiment"]
                        && e["notes"].as_array().unwrap().iter().any(|n| {
                            n.as_str()
                                .is_some_and(|n| n.contains("exceed their thread count"))
                        })
                });
                assert!(
                    explained,
                    "a speed-up past its threads with no note saying why: {r}"
                );
            }
        }
    }

    let mut answers = 0;
    for e in doc["experiments"].as_array().unwrap() {
        for n in e["notes"].as_array().unwrap() {
            assert!(!n.as_str().unwrap().contains("out of bounds"), "{n}");
        }
        for t in e["traces"].as_array().unwrap() {
            for a in t["answers"].as_array().unwrap() {
                answers += 1;
                let text = a["answer"].as_str().unwrap();
                match a["figure"].as_object() {
                    None => assert!(a["figure"].is_null(), "{a}"),
                    Some(f) => {
                        let v = f["value"].as_f64().unwrap_or(f64::NAN);
                        assert!(v.is_finite() && v >= 0.0, "{a}");
                        if share_name(f["name"].as_str().unwrap()) {
                            assert!(v <= 1.0 + 1e-9, "a share above 1: {a}");
                        }
                    }
                }
                // "the process used X of N CPU(s)": X ≤ N, or too short to judge.
                if let Some(i) = text.find("the process used ") {
                    let rest = &text[i + "the process used ".len()..];
                    let mut w = rest.split_whitespace();
                    let used: f64 = w.next().unwrap().parse().unwrap();
                    assert_eq!(w.next(), Some("of"), "{text}");
                    let cpus: f64 = w.next().unwrap().parse().unwrap();
                    assert!(used <= cpus, "{used} of {cpus} CPUs: {text}");
                } else if a["question"]
                    .as_str()
                    .unwrap()
                    .contains("using the threads")
                {
                    assert!(text.contains("too short to judge"), "{text}");
                }
            }
        }
    }
    assert!(answers >= 4, "the traced experiments' answers were checked");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A runtime that ran no workload (Tokio runs skynet only with `--full`) has no column in the
/// workloads table and no entry in its chart's legend.
#[test]
fn workloads_show_no_column_for_a_runtime_that_did_not_run() {
    let (dir, stdout) = lab("tokio", "1", &["workloads"]);
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    let tokio_rows = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["variant"] == "tokio")
        .count();
    if tokio_rows == 0 {
        let header = stdout
            .lines()
            .find(|l| l.contains("threadlab/rayon"))
            .expect("the workloads table's header");
        assert!(!header.contains("tokio"), "{header}");
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "svg") {
                let svg = std::fs::read_to_string(&p).unwrap();
                assert!(!svg.contains(">tokio<"), "{}", p.display());
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// One unit per axis: the rendezvous's allocations and bytes per message are two charts, each
/// naming only its own unit (on one axis, bytes of tens made allocations of about 1 vanish).
#[test]
fn rendezvous_allocations_and_bytes_are_on_separate_axes() {
    let (dir, _) = lab("rv-axes", "1", &["rendezvous"]);
    let read =
        |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
    let allocs = read("rendezvous-alloc-per-message-2t.svg");
    let bytes = read("rendezvous-bytes-per-message-2t.svg");
    assert!(allocs.contains("allocations per message") && !allocs.contains("bytes"));
    assert!(bytes.contains("bytes per message") && !bytes.contains("allocations"));
    let _ = std::fs::remove_dir_all(&dir);
}
