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

/// `threadlab ARGS`, which must exit 0; what it printed on stdout.
#[track_caller]
fn threadlab_ok(args: &[&str]) -> String {
    let out = threadlab(args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}; stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `text`, what `what` printed, holds each of `parts`.
#[track_caller]
fn assert_mentions(text: &str, what: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "{what} mentions {part}: {text}");
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("threadlab-cli-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[track_caller]
fn assert_usage_error(args: &[&str], mention: &str) {
    threadlab_testkit::assert_usage_error(&threadlab(args), &format!("{args:?}"), mention);
}

#[test]
fn bad_arguments_exit_2_with_one_line() {
    let out = temp_dir("bad-args");
    let out = out.to_str().unwrap();
    let table: &[(&[&str], &str)] = &[
        (
            &["lab", "nosuch", "--out", out],
            "image, jobs, contention, overhead, rendezvous, division, numa, alloc, falseshare, observed, workloads, iter, pipeline, elastic",
        ),
        (&["lab", "--threads", "0", "--out", out], "at least 1 thread"),
        (
            &["lab", "--threads", "1000000", "--out", out],
            "more than the lab allows",
        ),
        (
            &["lab", "--threads", "2,x", "--out", out],
            "`x` is not a thread count",
        ),
        (&["lab", "--threads", "", "--out", out], "not a thread count"),
        (&["lab", "--repeat", "0", "--out", out], "--repeat"),
        (&["lab", "--frobnicate"], "--frobnicate"),
        (&["nosuchcommand"], "nosuchcommand"),
    ];
    for (args, mention) in table {
        assert_usage_error(args, mention);
    }
    // An --out below a regular file cannot be created.
    let file = temp_dir("a-file");
    std::fs::write(&file, b"x").unwrap();
    let below = file.join("out");
    assert_usage_error(&["lab", "image", "--out", below.to_str().unwrap()], "--out");
    let _ = std::fs::remove_file(file);
}

#[test]
fn help_is_helpful() {
    let text = threadlab_ok(&["lab", "--help"]);
    assert_mentions(
        &text,
        "lab --help",
        &[
            "--full",
            "--threads",
            "--repeat",
            "--out",
            "--json",
            "image, jobs, contention, overhead, rendezvous, division, numa, alloc, falseshare, observed, workloads, iter, pipeline, elastic",
        ],
    );
    assert!(!text.contains("--tiny"), "the test-only size stays hidden");
    assert!(threadlab_ok(&["topology"]).contains("logical"));
}

const EXPERIMENTS: [&str; 14] = [
    "image",
    "jobs",
    "contention",
    "overhead",
    "rendezvous",
    "division",
    "numa",
    "alloc",
    "falseshare",
    "observed",
    "workloads",
    "iter",
    "pipeline",
    "elastic",
];
/// The experiments that save traces of their telling runs.
const TRACED: [&str; 4] = ["image", "jobs", "contention", "alloc"];
const VARIANTS: [&str; 39] = [
    "serial",
    "threadlab",
    "rayon",
    "rayon-on-threadlab",
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
    "channel-only",
    "threadlab-channel",
    "threadlab-channel-eager",
    "threadlab-channel-lazy",
    "go",
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
    "recorded",
    "observed",
    "combined",
    "pipelined",
    "fixed",
    "elastic",
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
        // A slowdown is a difference of two timings: at the tiny size noise can make it
        // negative (recording on measured faster than off), and that is still a measurement.
        // Every other metric is a quantity and never negative.
        let signed = obj["metric"]
            .as_str()
            .is_some_and(|m| m.ends_with("_slowdown"));
        assert!(
            obj["value"]
                .as_f64()
                .is_some_and(|v| v.is_finite() && (signed || v >= 0.0)),
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
    // Traces: every traced experiment links its .pftrace, .tltrace and timeline files, which exist, and
    // prints and shows the doctor's findings on them; the doctor reads them back.
    for s in &sections {
        let id = s.attribute("id").unwrap();
        let links: Vec<&str> = s
            .descendants()
            .filter_map(|n| n.attribute("href"))
            .filter(|h| h.starts_with("traces/"))
            .collect();
        if !TRACED.contains(&id) {
            assert!(links.is_empty(), "{id} records no trace");
            continue;
        }
        for ext in [".pftrace", ".tltrace", ".html"] {
            assert!(
                links.iter().any(|l| l.ends_with(ext)),
                "{id} links a {ext}: {links:?}"
            );
        }
        for l in &links {
            assert!(dir.join(l).is_file(), "{l} exists");
        }
        assert!(
            s.descendants().any(|n| n
                .text()
                .is_some_and(|t| t.contains("Are we using the threads"))),
            "{id} shows the doctor's answers"
        );
    }
    assert!(
        stdout.contains("doctor, image, a thread per row"),
        "{stdout}"
    );
    assert!(
        stdout.contains("thread-creation"),
        "the doctor names it: {stdout}"
    );
    let summary = doc["experiments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "contention")
        .unwrap();
    let traces = summary["traces"]
        .as_array()
        .expect("traces in results.json");
    assert!(
        traces
            .iter()
            .all(|t| t["findings"].is_array()
                && t["answers"].as_array().is_some_and(|a| a.len() == 4))
    );
    let tl = dir.join(traces[0]["tltrace"].as_str().unwrap());
    let out = threadlab(&["doctor", tl.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("The four questions"));
    let _ = std::fs::remove_dir_all(dir);
}

/// A small trace of our own, saved as `.tltrace`: the doctor and compare read it. One at a time:
/// the recorder is process-wide and several tests of this binary make traces.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn small_trace(dir: &std::path::Path, name: &str, zone_ms: u64) -> PathBuf {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let rec = threadlab::trace::start();
    std::thread::spawn(move || {
        let _z = threadlab::zone!("step");
        std::thread::sleep(std::time::Duration::from_millis(zone_ms));
    })
    .join()
    .unwrap();
    let path = dir.join(name);
    rec.stop().save(&path).unwrap();
    path
}

#[test]
fn doctor_and_compare_read_traces_as_text_and_json() {
    let dir = temp_dir("doctor");
    std::fs::create_dir_all(&dir).unwrap();
    let a = small_trace(&dir, "a.tltrace", 1);
    let b = small_trace(&dir, "b.tltrace", 20);
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());

    assert_mentions(
        &threadlab_ok(&["doctor", a]),
        "doctor",
        &[
            "Are we using the threads effectively?",
            "Which threads are waiting on locks?",
            "Findings",
            "zone step",
        ],
    );
    let doc: serde_json::Value =
        serde_json::from_str(&threadlab_ok(&["doctor", "--json", a])).expect("doctor --json");
    assert_eq!(doc["answers"].as_array().unwrap().len(), 4);
    // An answer has a figure, or none when the trace holds too little to judge, and then says
    // why (never a 0 in its place).
    for a in doc["answers"].as_array().unwrap() {
        let why = a["answer"].as_str().unwrap();
        assert!(
            a["figure"]["value"].is_number()
                || (a["figure"].is_null()
                    && (why.contains("judge") || why.contains("not recorded"))),
            "{a}"
        );
    }
    assert!(doc["findings"].is_array() && doc["threads"].is_array() && doc["locks"].is_array());

    assert!(threadlab_ok(&["compare", a, b]).contains("zone step"));
    let out = threadlab(&["compare", "--json", a, b]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("compare --json");
    let row = &doc["rows"][0];
    assert_eq!(row["name"], "zone step");
    assert!(row["diff_total_ns"].as_i64().unwrap() > 10_000_000, "{row}");
    // The process's figures side by side; neither recording has a pool, so no pool figure.
    let runtime: Vec<&str> = doc["runtime"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert!(
        runtime.contains(&"CPUs used (average)") && runtime.contains(&"lock wait p99"),
        "{runtime:?}"
    );
    assert!(!runtime.contains(&"wake-up p99"), "{runtime:?}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Issue 18: one recording saved as `.pftrace` and `.tltrace` gives the doctor and compare the
/// same answers (a pool's tasks, steals, parks and a contended lock).
#[test]
fn doctor_and_compare_answer_the_same_on_pftrace_and_tltrace() {
    let dir = temp_dir("same-answers");
    std::fs::create_dir_all(&dir).unwrap();
    let (pf, tl) = (dir.join("run.pftrace"), dir.join("run.tltrace"));
    {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let rec = threadlab::trace::start();
        let pool = threadlab::Pool::builder().threads(2).build().unwrap();
        let m = threadlab::sync::Mutex::named("shared", 0u64);
        pool.install(|| {
            threadlab::for_each(0..64, |_| {
                let _z = threadlab::zone!("item");
                *m.lock() += 1;
            })
        });
        pool.shutdown();
        let trace = rec.stop();
        trace.save(&pf).unwrap();
        trace.save(&tl).unwrap();
    }
    let (pf, tl) = (pf.to_str().unwrap(), tl.to_str().unwrap());
    for args in [
        vec!["doctor", "--json"],
        vec!["doctor"],
        vec!["compare", "--json", tl],
    ] {
        let run = |f: &str| {
            let mut a = args.clone();
            a.push(f);
            threadlab_ok(&a)
        };
        let (from_pf, from_tl) = (run(pf), run(tl));
        assert!(from_tl.contains("item"), "{from_tl}");
        assert_eq!(
            from_pf.replace("run.pftrace", "run.tltrace"),
            from_tl.replace("run.pftrace", "run.tltrace"),
            "{args:?}"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn missing_truncated_and_foreign_traces_exit_2_with_one_line() {
    let dir = temp_dir("bad-traces");
    std::fs::create_dir_all(&dir).unwrap();
    let good = small_trace(&dir, "good.tltrace", 1);
    let bytes = std::fs::read(&good).unwrap();
    let truncated = dir.join("truncated.tltrace");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let foreign = dir.join("foreign.tltrace");
    std::fs::write(&foreign, b"PK\x03\x04 not a trace at all").unwrap();
    let pftrace = dir.join("run.pftrace");
    std::fs::write(&pftrace, b"\x0a\x00").unwrap();
    let missing = dir.join("missing.tltrace");
    let p = |x: &PathBuf| x.to_str().unwrap().to_owned();
    let good = p(&good);
    for (file, mention) in [
        (p(&missing), "missing.tltrace"),
        (p(&truncated), "byte offset"),
        (p(&foreign), "byte offset 0"),
        (p(&pftrace), "not a trace threadlab wrote"),
    ] {
        assert_usage_error(&["doctor", &file], mention);
        assert_usage_error(&["doctor", "--json", &file], mention);
        assert_usage_error(&["compare", &good, &file], mention);
        assert_usage_error(&["compare", &file, &good], mention);
    }
    assert_usage_error(&["doctor"], "FILE");
    assert_usage_error(&["compare", &good], "<B>");
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

/// Every bad argument to every subcommand is refused the same way: exit 2, one line on stderr
/// that names what was wrong, nothing on stdout, no panic (a panic exits 101 with a backtrace
/// hint over several lines). Durations from the user (`--seconds`) are refused when they are
/// not finite, not positive or beyond a year, instead of overflowing `Duration` or `Instant`.
/// An observation's `-o` is checked before the command starts: the command never runs.
#[test]
fn every_bad_argument_exits_2_with_one_line_and_no_panic() {
    let dir = temp_dir("every-bad-arg");
    std::fs::create_dir_all(&dir).unwrap();
    let marker = dir.join("the-command-ran");
    let touch = format!("touch {}", marker.display());
    let weird = dir.join("trace.weird");
    let no_dir = dir.join("no-such-dir").join("t.tltrace");
    let (weird, no_dir) = (weird.to_str().unwrap(), no_dir.to_str().unwrap());
    // The test's own pid: a process that exists, for `watch`.
    let me = std::process::id().to_string();
    let me = me.as_str();
    let table: &[(&[&str], &str)] = &[
        (&["watch", me, "--seconds", "nan"], "nan"),
        (&["watch", me, "--seconds", "inf"], "inf"),
        (&["watch", me, "--seconds=-inf"], "from 0"),
        (&["watch", me, "--seconds", "1e20"], "1e20"),
        (&["watch", me, "--seconds", "1e19"], "1e19"),
        (&["watch", me, "--seconds", "31536001"], "a year"),
        (&["watch", me, "--seconds=-1"], "from 0"),
        (&["watch", me, "--seconds", "x"], "not a number of seconds"),
        (&["watch", me, "--seconds", ""], "--seconds"),
        (&["watch", me, "--hz", "0"], "--hz"),
        (&["watch", me, "--hz", "1001"], "--hz"),
        (&["watch", "notapid"], "notapid"),
        (&["watch", "4294967296"], "4294967296"),
        (&["watch", "999999999"], "no process 999999999"),
        (&["watch"], "PID"),
        (
            &["watch", me, "--seconds", "1", "-o", weird],
            ".tltrace, .pftrace or .json",
        ),
        (
            &["watch", me, "--seconds", "1", "-o", no_dir],
            "does not exist",
        ),
        (&["demo", "idle", "--seconds", "nan"], "nan"),
        (&["demo", "idle", "--seconds", "1e20"], "1e20"),
        (&["demo", "nosuchdemo", "--seconds", "0.1"], "nosuchdemo"),
        (&["run"], "CMD"),
        (&["run", "--hz", "0", "--", "true"], "--hz"),
        (&["run", "--hz", "x", "--", "true"], "--hz"),
        // (A command that is not found is not a usage error: `run` exits 127 as `env` does,
        // checked in observe_promise.rs.)
        (
            &["run", "-o", weird, "--", "sh", "-c", &touch],
            ".tltrace, .pftrace or .json",
        ),
        (
            &["run", "-o", no_dir, "--", "sh", "-c", &touch],
            "does not exist",
        ),
        (
            &[
                "run",
                "--sample-only",
                "-o",
                weird,
                "--",
                "sh",
                "-c",
                &touch,
            ],
            "extension",
        ),
        (
            &[
                "run",
                "--sample-only",
                "-o",
                no_dir,
                "--",
                "sh",
                "-c",
                &touch,
            ],
            "no-such-dir",
        ),
        (
            &["run", "-o", "/proc/t.tltrace", "--", "sh", "-c", &touch],
            "cannot write",
        ),
        (&["doctor", "--frame-target", "nan", "x.tltrace"], "nan"),
        (&["doctor", "--frame-target", "p101", "x.tltrace"], "p101"),
        (&["doctor", "--frame-target=-1ms", "x.tltrace"], "-1ms"),
        (
            &["doctor", "--frame-target", "1e400ms", "x.tltrace"],
            "1e400ms",
        ),
        (&["view", "--frame-target", "infs", "x.tltrace"], "infs"),
        (&["view"], "FILE"),
        (&["compare"], "<A>"),
        (&["stress", "--seconds", "86401"], "--seconds"),
        (&["stress", "--seconds", "nan"], "--seconds"),
        (&["stress", "--threads", "5000"], "--threads"),
        (&["lab", "--repeat", "1001"], "--repeat"),
        (&["lab", "--threads=-1"], "not a thread count"),
        (&["topology", "extra"], "extra"),
        (&["--frobnicate"], "--frobnicate"),
    ];
    for (args, mention) in table {
        assert_usage_error(args, mention);
    }
    assert!(
        !marker.exists(),
        "a command ran although its -o was refused"
    );
    let _ = std::fs::remove_dir_all(dir);
}
