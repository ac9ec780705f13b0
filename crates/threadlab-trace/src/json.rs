//! Chrome trace JSON export (the "Trace Event Format", Google, 2016: `ph` B/E spans, i instants,
//! C counters, s/f flow arrows, M metadata for thread names), written by hand since the library
//! has no serde. Opens in ui.perfetto.dev and chrome://tracing; meant for small traces.

use std::fmt::Write;

use super::event::EventKind;
use super::trace::Trace;

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// Encodes the trace as Chrome JSON (`{"traceEvents": [...]}`; times in µs).
pub(crate) fn encode(trace: &Trace) -> String {
    let pid = std::process::id();
    let mut events: Vec<String> = Vec::new();
    let us = |ns: u64| format!("{}.{:03}", ns / 1000, ns % 1000);
    for t in &trace.threads {
        let tid = t.tid;
        let mut waiting = false;
        events.push(format!(
            r#"{{"ph":"M","name":"thread_name","pid":{pid},"tid":{tid},"args":{{"name":"{}"}}}}"#,
            escape(&t.name)
        ));
        for e in &t.events {
            let ts = us(e.ts_ns);
            let common = format!(r#""pid":{pid},"tid":{tid},"ts":{ts}"#);
            let span = |ph: char, name: &str, cat: &str| {
                format!(
                    r#"{{"ph":"{ph}","name":"{}","cat":"{cat}",{common}}}"#,
                    escape(name)
                )
            };
            let line = match e.kind {
                EventKind::ZoneBegin { name } => span('B', trace.name(name), "zone"),
                EventKind::TaskBegin { kind, .. } => span('B', &format!("task: {kind}"), "task"),
                EventKind::SpinBegin => span('B', "spinning", "idle"),
                EventKind::ParkBegin => span('B', "parked", "idle"),
                EventKind::LockWait { name, .. } => {
                    waiting = true;
                    span('B', &format!("wait: {}", trace.name(name)), "lock")
                }
                EventKind::ZoneEnd
                | EventKind::TaskEnd
                | EventKind::SpinEnd
                | EventKind::ParkEnd => {
                    format!(r#"{{"ph":"E",{common}}}"#)
                }
                EventKind::LockAcquired { name, .. } => {
                    // Closes the wait, if there was one, and marks the acquisition.
                    let end = if std::mem::take(&mut waiting) {
                        format!(r#"{{"ph":"E",{common}}},"#)
                    } else {
                        String::new()
                    };
                    end + &format!(
                        r#"{{"ph":"i","s":"t","name":"acquire: {}","cat":"lock",{common}}}"#,
                        escape(trace.name(name))
                    )
                }
                EventKind::LockReleased { name, .. } => format!(
                    r#"{{"ph":"i","s":"t","name":"release: {}","cat":"lock",{common}}}"#,
                    escape(trace.name(name))
                ),
                EventKind::Spawn { flow } => format!(
                    r#"{{"ph":"i","s":"t","name":"spawn","cat":"task",{common}}},{{"ph":"s","id":{},"name":"spawn","cat":"flow",{common}}}"#,
                    flow.0
                ),
                EventKind::StealAttempt { victim } => format!(
                    r#"{{"ph":"i","s":"t","name":"steal attempt","cat":"steal",{common},"args":{{"victim":{victim}}}}}"#
                ),
                EventKind::Steal { victim } => format!(
                    r#"{{"ph":"i","s":"t","name":"steal","cat":"steal",{common},"args":{{"victim":{victim}}}}}"#
                ),
                EventKind::Wake { woken } => format!(
                    r#"{{"ph":"i","s":"t","name":"wake","cat":"idle",{common},"args":{{"woken":{woken}}}}}"#
                ),
                EventKind::InjectorPush => {
                    format!(r#"{{"ph":"i","s":"t","name":"injector push","cat":"task",{common}}}"#)
                }
                EventKind::Counter { name, value } => format!(
                    r#"{{"ph":"C","name":"{}",{common},"args":{{"value":{value}}}}}"#,
                    escape(trace.name(name))
                ),
                EventKind::OsSched {
                    on_cpu_ns,
                    runqueue_ns,
                } => format!(
                    r#"{{"ph":"C","name":"os sched","pid":{pid},"tid":{tid},"ts":{ts},"args":{{"on_cpu_ns":{on_cpu_ns},"runqueue_ns":{runqueue_ns}}}}}"#
                ),
                EventKind::OsSwitches {
                    voluntary,
                    involuntary,
                } => format!(
                    r#"{{"ph":"C","name":"os switches","pid":{pid},"tid":{tid},"ts":{ts},"args":{{"voluntary":{voluntary},"involuntary":{involuntary}}}}}"#
                ),
                EventKind::FrameMark { name } | EventKind::FrameStart { name } => {
                    let what = if matches!(e.kind, EventKind::FrameMark { .. }) {
                        "frame mark"
                    } else {
                        "frame start"
                    };
                    format!(
                        r#"{{"ph":"i","s":"g","name":"{what}: {}","cat":"frame",{common}}}"#,
                        escape(trace.name(name))
                    )
                }
                EventKind::Plot { name, value } => {
                    let v = value.get();
                    let v = if v.is_finite() { v } else { 0.0 };
                    format!(
                        r#"{{"ph":"C","name":"{}",{common},"args":{{"value":{v}}}}}"#,
                        escape(trace.name(name))
                    )
                }
                EventKind::Message { text, .. } => format!(
                    r#"{{"ph":"i","s":"t","name":"{}","cat":"message",{common}}}"#,
                    escape(trace.name(text))
                ),
                EventKind::Allocs { count, bytes } => format!(
                    r#"{{"ph":"i","s":"t","name":"allocs","cat":"alloc",{common},"args":{{"count":{count},"bytes":{bytes}}}}}"#
                ),
                EventKind::ZoneColor { .. } => continue,
                EventKind::Arg { key, value } => format!(
                    r#"{{"ph":"i","s":"t","name":"arg: {}","cat":"arg",{common},"args":{{"{}":"{}"}}}}"#,
                    escape(trace.name(key)),
                    escape(trace.name(key)),
                    escape(trace.name(value))
                ),
            };
            events.push(line);
            // The flow's end binds to the enclosing slice of the task that starts here.
            if let EventKind::TaskBegin { flow: Some(f), .. } = e.kind {
                events.push(format!(
                    r#"{{"ph":"f","bp":"e","id":{},"name":"spawn","cat":"flow",{common}}}"#,
                    f.0
                ));
            }
        }
    }
    let mut out = String::from("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    out.push_str(&events.join(",\n"));
    out.push_str("\n]}\n");
    out
}
