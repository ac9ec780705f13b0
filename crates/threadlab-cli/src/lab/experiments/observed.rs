//! `observed` (ThreadPerRow of “Multithreading Isn’t Free”, seen two ways): the same thread-per-task baseline
//! (`baselines::thread_per_task::for_each_row`, a fresh OS thread per image row) recorded from
//! inside with `threadlab::trace::start`, and observed from outside by `threadlab run`'s
//! sampler (`observe/`) in a child process (`threadlab demo rows`) that links no recorder at all.
//! The table puts the doctor's figures of both side by side: what the `/proc` sampler recovers
//! (thread creation, runnable threads per CPU, preemption; births and deaths exact, traced
//! through ptrace) and what it cannot (task spans, lock hold times).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use threadlab_doctor::Diagnose;

use crate::lab::report::svg::{Chart, Kind, Series};
use crate::lab::report::table::Table;
use crate::lab::{Ctx, ExpResult, Experiment, Outcome, Row};
use crate::observe::{convert, demo, sampler};
use threadlab_doctor::{fmt_ns, Diagnosis, GroupStats};

/// The experiment.
pub struct Observed;

/// The group that created the most short-lived threads.
fn busiest(d: &Diagnosis) -> GroupStats {
    d.groups
        .iter()
        .max_by_key(|g| g.exited)
        .cloned()
        .unwrap_or_default()
}

/// The pitfalls the doctor named, or `none`.
fn findings(d: &Diagnosis) -> String {
    let mut f: Vec<&str> = d.findings.iter().map(|f| f.pitfall.as_str()).collect();
    f.dedup();
    if f.is_empty() {
        "none".to_owned()
    } else {
        f.join(", ")
    }
}

/// Runnable threads per CPU, on average.
fn per_cpu(d: &Diagnosis) -> f64 {
    d.os.runnable_avg / f64::from(d.os.cpus.max(1))
}

/// Threads seen per second of the side's window.
fn rate(d: &Diagnosis) -> f64 {
    d.threads.len() as f64 / (d.duration_ns.max(1) as f64 / 1e9)
}

impl Experiment for Observed {
    fn name(&self) -> &'static str {
        "observed"
    }

    fn description(&self) -> &'static str {
        "A thread per row recorded from inside next to the same program observed from outside \
         through /proc (threadlab run): what the doctor finds in each."
    }

    fn run(&self, ctx: &Ctx) -> ExpResult {
        let seconds = ctx.size.pick(0.3, 2.0, 5.0);
        let [inside, outside] = diagnose(ctx, seconds)?;
        let groups = [busiest(&inside), busiest(&outside)];
        Ok(Outcome {
            finding: finding(&inside, &outside),
            notes: vec![format!(
                "Observed from outside, thread births and deaths are traced (ptrace), so every \
                 thread counts; states are sampled every {} ms.",
                1000 / sampler::DEFAULT_HZ
            )],
            rows: rows(ctx, [&inside, &outside], &groups),
            tables: vec![table(&inside, &outside, &groups)],
            charts: vec![chart(&groups)],
        })
    }
}

/// The doctor on the demo recorded here, and on the demo observed in a child through /proc.
fn diagnose(ctx: &Ctx, seconds: f64) -> Result<[Diagnosis; 2], String> {
    ctx.step("recorded from inside");
    let rec = threadlab::trace::start();
    demo::rows(Instant::now() + Duration::from_secs_f64(seconds));
    let inside = rec.stop().diagnose();

    ctx.step("observed from outside");
    let exe = std::env::current_exe().map_err(|e| format!("observed: {e}"))?;
    let mut cmd = Command::new(exe);
    cmd.args(["demo", "rows", "--seconds", &seconds.to_string()])
        .stdout(Stdio::null());
    let (_, seen, _) = crate::observe::observe_traced(cmd, sampler::DEFAULT_HZ)
        .map_err(|e| format!("observed: cannot start the demo: {e}"))?;
    let (trace, _) = convert::convert(&seen);
    Ok([inside, trace.diagnose()])
}

/// The two sides' figures next to each other.
fn table(inside: &Diagnosis, outside: &Diagnosis, [gi, go]: &[GroupStats; 2]) -> Table {
    let mut table = Table::new(
        "A thread per row: recorded inside vs observed from outside",
        &["figure", "recorded", "observed"],
    )
    .text_columns(1);
    let mut put = |name: &str, a: String, b: String| table.row(vec![name.into(), a, b]);
    // The two sides are two runs of the demo over two windows: the recording in this
    // process, and the child's whole life (start-up and exit included) seen through /proc.
    put(
        "measured over",
        format!(
            "{} of recording, in this process",
            fmt_ns(inside.duration_ns)
        ),
        format!(
            "{} of the child's life, /proc at {} Hz",
            fmt_ns(outside.duration_ns),
            sampler::DEFAULT_HZ
        ),
    );
    put(
        "threads per second of that window",
        format!("{:.0}", rate(inside)),
        format!("{:.0}", rate(outside)),
    );
    put(
        "threads (exited)",
        format!("{} ({})", inside.threads.len(), gi.exited),
        format!("{} ({})", outside.threads.len(), go.exited),
    );
    put(
        "interval between thread starts (median)",
        fmt_ns(gi.median_start_interval_ns),
        fmt_ns(go.median_start_interval_ns),
    );
    put(
        "work per thread (median)",
        fmt_ns(gi.median_work_ns),
        fmt_ns(go.median_work_ns),
    );
    put(
        "runnable threads per CPU",
        format!("{:.2}", per_cpu(inside)),
        format!("{:.2}", per_cpu(outside)),
    );
    put(
        "preempted share of runnable time",
        format!("{:.0}%", 100.0 * inside.os.preempted_share),
        format!("{:.0}%", 100.0 * outside.os.preempted_share),
    );
    put("findings", findings(inside), findings(outside));
    table
}

/// Each side's rows; `threads` is the threads the side saw (the schema wants at least 1).
fn rows(ctx: &Ctx, sides: [&Diagnosis; 2], groups: &[GroupStats; 2]) -> Vec<Row> {
    let mut rows = Vec::new();
    for ((v, d), g) in ["recorded", "observed"].into_iter().zip(sides).zip(groups) {
        let threads = d.threads.len().max(1);
        for (metric, value, unit) in [
            ("threads", d.threads.len() as f64, "threads"),
            ("start_interval", g.median_start_interval_ns as f64, "ns"),
            ("work_per_thread", g.median_work_ns as f64, "ns"),
            ("runnable_per_cpu", per_cpu(d), "threads/CPU"),
        ] {
            rows.push(ctx.row(v, "thread per row", threads, metric, value, unit));
        }
    }
    rows
}

fn finding(inside: &Diagnosis, outside: &Diagnosis) -> String {
    let both = |p| inside.has(p) && outside.has(p);
    format!(
        "Recorded from inside, the doctor found {}; observed from outside through /proc at \
         {} Hz, {} — thread creation {} both ways ({} threads recorded over {} of recording \
         in this process, {} seen over the {} the separate child ran: {:.0} against {:.0} \
         threads a second).",
        findings(inside),
        sampler::DEFAULT_HZ,
        findings(outside),
        if both(threadlab_doctor::Pitfall::ThreadCreation) {
            "found"
        } else {
            "not found"
        },
        inside.threads.len(),
        fmt_ns(inside.duration_ns),
        outside.threads.len(),
        fmt_ns(outside.duration_ns),
        rate(inside),
        rate(outside)
    )
}

/// The thread-creation figures of both sides, as bars (µs).
fn chart([gi, go]: &[GroupStats; 2]) -> Chart {
    let us = |ns: u64| ns as f64 / 1e3;
    let bars = |name: &str, g: &GroupStats| Series {
        name: name.into(),
        points: vec![
            (0.0, us(g.median_start_interval_ns)),
            (1.0, us(g.median_work_ns)),
        ],
    };
    Chart {
        file: "observed".into(),
        title: "A thread per row: recorded inside vs observed from outside".into(),
        x_label: String::new(),
        y_label: "µs (median)".into(),
        log_x: false,
        log_y: true,
        kind: Kind::Bars,
        categories: vec![
            "interval between thread starts".into(),
            "work per thread".into(),
        ],
        series: vec![bars("recorded", gi), bars("observed", go)],
        hlines: Vec::new(),
    }
}
