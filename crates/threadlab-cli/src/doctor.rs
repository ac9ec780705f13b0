//! `threadlab doctor FILE [--json]` and `threadlab compare A B [--json]`: load `.tltrace` or `.pftrace` files
//! and print the library's diagnosis or comparison, as text or as JSON (built here from the
//! library's public figures; the library itself stays free of serde).

use crate::cli::{CompareArgs, DoctorArgs};
use serde_json::{json, Value};
use std::path::Path;
use std::process::ExitCode;
use threadlab::analysis::{Answer, Comparison, Diagnosis, Figure, Finding, Summary};
use threadlab::trace::Trace;

/// Loads a trace, or prints the loader's one-line error and returns exit code 2.
fn load(path: &Path) -> Result<Trace, ExitCode> {
    Trace::load(path).map_err(|e| crate::usage_error(&e.to_string()))
}

fn print_json(v: &Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(v).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    );
}

/// The `doctor` command.
pub fn doctor(args: DoctorArgs) -> ExitCode {
    let trace = match load(&args.file) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let d = trace.diagnose();
    let target = args
        .frame_target
        .unwrap_or(crate::view::DEFAULT_FRAME_TARGET);
    let frames: Vec<_> = trace
        .frame_sets()
        .into_iter()
        .map(|set| trace.frame_report(trace.name(set), target))
        .collect();
    if args.json {
        let mut v = diagnosis_json(&d);
        if !frames.is_empty() {
            v["frames"] = frames_json(&frames);
        }
        print_json(&v);
    } else {
        println!("{}", args.file.display());
        print!("{d}");
        for f in &frames {
            print!("\n{f}");
        }
    }
    ExitCode::SUCCESS
}

/// The `compare` command.
pub fn compare(args: CompareArgs) -> ExitCode {
    let (a, b) = match (load(&args.a), load(&args.b)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(code), _) | (_, Err(code)) => return code,
    };
    let cmp = threadlab::analysis::compare(&a, &b);
    if args.json {
        print_json(&comparison_json(&cmp, &args.a, &args.b));
    } else {
        println!("A: {}\nB: {}\n", args.a.display(), args.b.display());
        print!("{cmp}");
    }
    ExitCode::SUCCESS
}

/// JSON numbers must be finite; the library's figures are, but never emit NaN by accident.
fn num(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        Value::Null
    }
}

fn summary_json(s: &Summary) -> Value {
    json!({
        "count": s.count, "total_ns": s.total_ns, "mean_ns": num(s.mean_ns),
        "median_ns": s.median_ns, "p90_ns": s.p90_ns, "p99_ns": s.p99_ns, "max_ns": s.max_ns,
    })
}

fn figure_json(f: &Figure) -> Value {
    json!({"name": f.name, "value": num(f.value), "unit": f.unit, "threshold": f.threshold.map(num)})
}

/// A finding as JSON (also used by the lab's results.json).
pub fn finding_json(f: &Finding) -> Value {
    json!({
        "pitfall": f.pitfall.as_str(), "subject": f.subject, "evidence": f.evidence,
        "figure": figure_json(&f.figure), "suggestion": f.suggestion,
    })
}

/// An answer as JSON.
pub fn answer_json(a: &Answer) -> Value {
    json!({"question": a.question, "answer": a.answer, "figure": figure_json(&a.figure), "ok": a.ok})
}

/// The whole diagnosis as JSON.
pub fn diagnosis_json(d: &Diagnosis) -> Value {
    let threads: Vec<Value> = d
        .threads
        .iter()
        .map(|t| {
            json!({
                "name": t.name, "tid": t.tid, "worker": t.worker, "group": t.group,
                "first_ns": t.first_ns, "last_ns": t.last_ns, "exited": t.exited,
                "lifetime_ns": t.lifetime_ns(), "utilization": num(t.utilization()),
                "running_ns": t.running_ns, "searching_ns": t.searching_ns,
                "spinning_ns": t.spinning_ns, "parked_ns": t.parked_ns,
                "lock_wait_ns": t.lock_wait_ns, "other_ns": t.other_ns,
                "os_sampled": t.os_sampled, "on_cpu_ns": t.on_cpu_ns,
                "preempted_ns": t.preempted_ns, "voluntary_switches": t.voluntary_switches,
                "involuntary_switches": t.involuntary_switches, "tasks": t.tasks,
                "zones": t.zones, "steal_attempts": t.steal_attempts, "steals": t.steals,
                "parks": t.parks, "wakes_sent": t.wakes_sent, "spins": t.spins,
                "fruitless_spins": t.fruitless_spins, "spawns": t.spawns,
            })
        })
        .collect();
    let groups: Vec<Value> = d
        .groups
        .iter()
        .map(|g| {
            json!({
                "name": g.name, "threads": g.threads, "exited": g.exited,
                "window_ns": g.window_ns, "running_ns": g.running_ns,
                "lifetime_ns": g.lifetime_ns, "utilization": num(g.utilization()),
                "max_running_ns": g.max_running_ns, "max_work_ns": g.max_work_ns,
                "mean_work_ns": num(g.mean_work_ns), "work_on_cpu": g.work_on_cpu,
                "imbalance": num(g.imbalance),
                "median_start_interval_ns": g.median_start_interval_ns,
                "median_work_ns": g.median_work_ns, "blocks": g.blocks, "on_cpu_ns": g.on_cpu_ns,
            })
        })
        .collect();
    let locks: Vec<Value> = d
        .locks
        .iter()
        .map(|l| {
            json!({
                "name": l.name, "instances": l.instances, "hold": summary_json(&l.hold),
                "wait": summary_json(&l.wait), "wait_over_hold": num(l.wait_over_hold()),
                "top_waiters": l.top_waiters.iter()
                    .map(|(n, ns)| json!({"thread": n, "wait_ns": ns})).collect::<Vec<_>>(),
            })
        })
        .collect();
    let spans: Vec<Value> = d
        .spans
        .iter()
        .map(|s| json!({"name": s.name, "self_time": summary_json(&s.self_time), "inclusive_ns": s.inclusive_ns}))
        .collect();
    let r = &d.runtime;
    let o = &d.os;
    json!({
        "duration_ns": d.duration_ns, "events": d.events, "dropped": d.dropped, "cpus": o.cpus,
        "answers": d.answers.iter().map(answer_json).collect::<Vec<_>>(),
        "findings": d.findings.iter().map(finding_json).collect::<Vec<_>>(),
        "threads": threads, "groups": groups, "locks": locks, "spans": spans,
        "runtime": {
            "workers": r.workers, "tasks": r.tasks, "steals": r.steals,
            "failed_steals": r.failed_steals, "steals_per_sec": num(r.steals_per_sec),
            "failed_steals_per_sec": num(r.failed_steals_per_sec), "parks": r.parks,
            "parks_per_sec": num(r.parks_per_sec), "wakes": r.wakes,
            "parks_per_task": num(r.parks_per_task), "wakes_per_task": num(r.wakes_per_task),
            "cpu_outside_tasks": num(r.cpu_outside_tasks),
            "wake_latency": summary_json(&r.wake_latency),
            "spawn_to_run": summary_json(&r.spawn_to_run),
        },
        "os": {
            "sampled_threads": o.sampled_threads, "active_ns": o.active_ns,
            "runnable_avg": num(o.runnable_avg), "cpus_used_avg": num(o.cpus_used_avg),
            "preempted_share": num(o.preempted_share), "preempted_ns": o.preempted_ns,
            "involuntary_per_sec": num(o.involuntary_per_sec),
            "voluntary_per_sec": num(o.voluntary_per_sec),
        },
    })
}

fn comparison_json(c: &Comparison, a: &Path, b: &Path) -> Value {
    json!({
        "a": a.display().to_string(), "b": b.display().to_string(),
        "rows": c.rows.iter().map(|r| json!({
            "name": r.name, "a": summary_json(&r.a), "b": summary_json(&r.b),
            "diff_total_ns": r.diff_total_ns, "relative": r.relative.map(num), "noise": r.noise,
        })).collect::<Vec<_>>(),
        "runtime": c.runtime.iter().map(|r| json!({
            "name": r.name, "a": num(r.a), "b": num(r.b), "unit": r.unit,
        })).collect::<Vec<_>>(),
    })
}

/// The frame reports as JSON: per frame set its figures and late frames with what ran in them.
fn frames_json(reports: &[threadlab::analysis::FrameReport]) -> serde_json::Value {
    reports
        .iter()
        .map(|r| {
            serde_json::json!({
                "set": r.set, "frames": r.frames, "target_ns": r.target_ns,
                "median_ns": r.median_ns, "p95_ns": r.p95_ns, "max_ns": r.max_ns,
                "late": r.late.iter().map(|l| serde_json::json!({
                    "number": l.number, "begin_ns": l.begin_ns, "duration_ns": l.duration_ns,
                    "ran": l.ran.iter().map(|(n, t)| serde_json::json!([n, t])).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
                "more_in_late": r.more_in_late.iter()
                    .map(|(n, l, o)| serde_json::json!([n, l, o])).collect::<Vec<_>>(),
            })
        })
        .collect()
}
