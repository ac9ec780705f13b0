//! The `threadlab` binary from the outside: argument errors, the results.json schema of a tiny
//! run, and well-formed HTML and SVG with one section per experiment.

use std::path::PathBuf;
use std::process::{Command, Output};

fn threadlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_threadlab"))
        .args(args)
        .output()
        .expect("run threadlab")
}

fn temp_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("threadlab-cli-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[track_caller]
fn assert_usage_error(args: &[&str], mention: &str) {
    let out = threadlab(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?}: exit code; stderr: {stderr}"
    );
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "{args:?}: one line, got: {stderr}"
    );
    assert!(stderr.starts_with("error:"), "{args:?}: {stderr}");
    assert!(
        stderr.contains(mention),
        "{args:?}: expected `{mention}` in: {stderr}"
    );
    assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
}

#[test]
fn bad_arguments_exit_2_with_one_line() {
    let out = temp_dir("bad-args");
    let out = out.to_str().unwrap();
    assert_usage_error(
        &["lab", "nosuch", "--out", out],
        "image, jobs, overhead, rendezvous, division, numa, alloc, falseshare",
    );
    assert_usage_error(
        &["lab", "--threads", "0", "--out", out],
        "at least 1 thread",
    );
    assert_usage_error(
        &["lab", "--threads", "1000000", "--out", out],
        "more than the lab allows",
    );
    assert_usage_error(
        &["lab", "--threads", "2,x", "--out", out],
        "`x` is not a thread count",
    );
    assert_usage_error(
        &["lab", "--threads", "", "--out", out],
        "not a thread count",
    );
    assert_usage_error(&["lab", "--repeat", "0", "--out", out], "--repeat");
    assert_usage_error(&["lab", "--frobnicate"], "--frobnicate");
    assert_usage_error(&["nosuchcommand"], "nosuchcommand");
    // An --out below a regular file cannot be created.
    let file = temp_dir("a-file");
    std::fs::write(&file, b"x").unwrap();
    let below = file.join("out");
    assert_usage_error(&["lab", "image", "--out", below.to_str().unwrap()], "--out");
    let _ = std::fs::remove_file(file);
}

#[test]
fn help_is_helpful() {
    let out = threadlab(&["lab", "--help"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--full",
        "--threads",
        "--repeat",
        "--out",
        "--json",
        "image, jobs, overhead, rendezvous, division, numa, alloc, falseshare",
    ] {
        assert!(text.contains(flag), "lab --help mentions {flag}: {text}");
    }
    assert!(!text.contains("--tiny"), "the test-only size stays hidden");
    let out = threadlab(&["topology"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("logical"));
}

const EXPERIMENTS: [&str; 8] = [
    "image",
    "jobs",
    "overhead",
    "rendezvous",
    "division",
    "numa",
    "alloc",
    "falseshare",
];
const VARIANTS: [&str; 27] = [
    "serial",
    "threadlab",
    "rayon",
    "tokio",
    "chili",
    "thread-per-task",
    "thread-per-task-verified",
    "fork-join",
    "work-sharing",
    "dedicated-thread",
    "serial-queue",
    "global-queue",
    "memory-bound",
    "threadlab-eager",
    "threadlab-lazy",
    "os-threads",
    "no-division",
    "division",
    "single",
    "unordered",
    "static",
    "locked",
    "thread-cache",
    "system",
    "packed",
    "padded",
    "shared",
];

#[test]
fn tiny_run_writes_schema_html_and_svgs() {
    let dir = temp_dir("tiny");
    let json = dir.join("elsewhere").join("r.json");
    let out = threadlab(&[
        "lab",
        "--tiny",
        "--threads",
        "2",
        "--repeat",
        "1",
        "--out",
        dir.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for e in EXPERIMENTS {
        assert!(
            stdout.contains(&format!("== {e} ")),
            "terminal output has a section for {e}"
        );
    }

    // results.json
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("--json path written"))
            .unwrap();
    let machine = &doc["machine"];
    for key in [
        "cpu_model",
        "kernel",
        "logical_cpus",
        "physical_cores",
        "caches",
        "numa_nodes",
    ] {
        assert!(!machine[key].is_null(), "machine.{key}");
    }
    assert!(machine["logical_cpus"].as_u64().unwrap() >= 1);
    let rows = doc["rows"].as_array().expect("rows");
    for e in EXPERIMENTS {
        assert!(rows.iter().any(|r| r["experiment"] == e), "rows for {e}");
        let summary = doc["experiments"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == e)
            .unwrap_or_else(|| panic!("experiment summary for {e}"));
        assert_eq!(summary["ok"], true);
        assert!(summary["finding"].as_str().is_some_and(|f| f.len() > 20));
    }
    for r in rows {
        let obj = r.as_object().unwrap();
        assert_eq!(obj.len(), 7, "exactly the schema's fields: {r}");
        for key in ["experiment", "variant", "config", "metric", "unit"] {
            assert!(
                obj[key].as_str().is_some_and(|s| !s.is_empty()),
                "{key} in {r}"
            );
        }
        assert!(
            obj["threads"].as_u64().is_some_and(|t| t >= 1),
            "threads in {r}"
        );
        assert!(
            obj["value"]
                .as_f64()
                .is_some_and(|v| v.is_finite() && v >= 0.0),
            "value in {r}"
        );
        let v = obj["variant"].as_str().unwrap();
        assert!(VARIANTS.contains(&v), "stable variant name: {v}");
    }

    // index.html: well-formed, one section per experiment, every chart embedded and beside it.
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    let tree = roxmltree::Document::parse_with_options(
        &html,
        roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        },
    )
    .expect("index.html is well-formed");
    let sections: Vec<_> = tree
        .descendants()
        .filter(|n| n.has_tag_name("section"))
        .collect();
    let ids: Vec<&str> = sections.iter().filter_map(|s| s.attribute("id")).collect();
    assert_eq!(ids, EXPERIMENTS, "one section per experiment, in order");
    for s in &sections {
        assert!(
            s.descendants().any(|n| n.has_tag_name("table")),
            "a table in {:?}",
            s.attribute("id")
        );
        assert!(
            s.descendants().any(|n| n.tag_name().name() == "svg"),
            "a chart in {:?}",
            s.attribute("id")
        );
    }
    let mut svgs = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "svg") {
            let text = std::fs::read_to_string(&path).unwrap();
            let doc = roxmltree::Document::parse(&text)
                .unwrap_or_else(|e| panic!("{} is well-formed: {e}", path.display()));
            assert_eq!(doc.root_element().tag_name().name(), "svg");
            let name = path.file_name().unwrap().to_str().unwrap();
            assert!(
                html.contains(&format!("href=\"{name}\"")),
                "index.html links {name}"
            );
            svgs += 1;
        }
    }
    assert!(
        svgs >= EXPERIMENTS.len(),
        "at least one SVG per experiment, found {svgs}"
    );

    // The alloc experiment's two captures: loadable, with the allocation zone and its lock, and
    // named in the experiment's notes.
    for workers in [2, 5] {
        let path = dir.join(format!("alloc-locked-{workers}w.tltrace"));
        let trace = threadlab::trace::Trace::load(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let zone = trace.name_id("alloc").expect("an \"alloc\" zone");
        let lock = trace.name_id("allocator").expect("the \"allocator\" lock");
        let mut zones = 0;
        let mut locks = 0;
        for t in trace.threads() {
            for e in t.events() {
                match e.kind {
                    threadlab::trace::EventKind::ZoneBegin { name } if name == zone => zones += 1,
                    threadlab::trace::EventKind::LockAcquired { name, .. } if name == lock => {
                        locks += 1
                    }
                    _ => {}
                }
            }
        }
        assert!(
            zones > 0 && locks >= zones,
            "{workers} workers: {zones} zones, {locks} locks"
        );
        assert!(
            html.contains(&format!("alloc-locked-{workers}w.tltrace")),
            "the report names the {workers}-worker capture"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn stress_runs_balances_its_books_and_rejects_bad_arguments() {
    let out = threadlab(&["stress", "--seconds", "1", "--seed", "11", "--threads", "2"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("seed 11"), "{stdout}");
    assert!(stdout.contains("every book balanced"), "{stdout}");
    assert_usage_error(&["stress", "--seconds", "0"], "--seconds");
    assert_usage_error(&["stress", "--threads", "0"], "--threads");
    assert_usage_error(&["stress", "--seed", "x"], "--seed");
}
