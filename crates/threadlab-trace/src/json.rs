//! Chrome trace JSON export (the "Trace Event Format", Google, 2016: `ph` B/E spans, i instants,
//! C counters, s/f flow arrows, M metadata for thread names), written by hand since the library
//! has no serde. Opens in ui.perfetto.dev and chrome://tracing; meant for small traces. A lock
//! wait's arguments (call site, holder) are its begin's `args`; each row of the lock table
//! (`locks.rs`) is a process-wide instant at 0 in category `threadlab lock`, its figures in
//! `args` (the lock id as hex text, which a JavaScript number could not hold exactly; the
//! acquisitions `null` when unknown; each histogram as its bucket counts).

use std::fmt::Write;

use super::event::EventKind;
use super::lock_summary::{Durations, LockSummary};
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
        let mut evs = t.events.iter().peekable();
        while let Some(e) = evs.next() {
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
                    // The wait's arguments (call site, holder) ride on its begin.
                    let mut args = Vec::new();
                    while let Some(EventKind::Arg { key, value }) = evs.peek().map(|e| e.kind) {
                        let (k, v) = (escape(trace.name(key)), escape(trace.name(value)));
                        args.push(format!(r#""{k}":"{v}""#));
                        evs.next();
                    }
                    let b = span('B', &format!("wait: {}", trace.name(name)), "lock");
                    if args.is_empty() {
                        b
                    } else {
                        format!("{},\"args\":{{{}}}}}", &b[..b.len() - 1], args.join(","))
                    }
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
    events.extend(trace.locks.iter().map(|l| lock_row(trace, l, pid)));
    let mut out = String::from("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    out.push_str(&events.join(",\n"));
    out.push_str("\n]}\n");
    out
}

/// A duration set as a JSON object.
fn durations(d: &Durations) -> String {
    let used = d.hist.iter().rposition(|&n| n > 0).map_or(0, |i| i + 1);
    let hist: Vec<String> = d.hist[..used].iter().map(u64::to_string).collect();
    format!(
        r#"{{"count":{},"total_ns":{},"max_ns":{},"hist":[{}]}}"#,
        d.count,
        d.total_ns,
        d.max_ns,
        hist.join(",")
    )
}

/// A lock table row as a process-wide instant (see the module doc).
fn lock_row(trace: &Trace, l: &LockSummary, pid: u32) -> String {
    let sites: Vec<String> = l
        .sites
        .iter()
        .map(|s| {
            format!(
                r#"{{"site":"{}","waits":{},"wait_ns":{}}}"#,
                escape(trace.name(s.site)),
                s.waits,
                s.wait_ns
            )
        })
        .collect();
    let holders: Vec<String> = l
        .holders
        .iter()
        .map(|h| {
            format!(
                r#"{{"tid":{},"waits":{},"wait_ns":{}}}"#,
                h.tid, h.waits, h.wait_ns
            )
        })
        .collect();
    let name = escape(trace.name(l.name));
    format!(
        r#"{{"ph":"i","s":"p","name":"lock: {name}","cat":"threadlab lock","pid":{pid},"tid":0,"ts":0,"args":{{"lock":"{:#x}","name":"{name}","acquisitions":{},"holds_sampled":{},"waits":{},"holds":{},"sites":[{}],"holders":[{}]}}}}"#,
        l.lock,
        l.acquisitions.map_or("null".to_owned(), |a| a.to_string()),
        l.holds_sampled,
        durations(&l.waits),
        durations(&l.holds),
        sites.join(","),
        holders.join(",")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock_summary::{WaitHolder, WaitSite};
    use serde_json::Value;

    /// A duration set read back from its JSON object.
    fn durations(v: &Value) -> Durations {
        let n = |k: &str| v[k].as_u64().unwrap();
        Durations {
            count: n("count"),
            total_ns: n("total_ns"),
            max_ns: n("max_ns"),
            hist: v["hist"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap())
                .collect(),
        }
    }

    /// The lock table read back from the JSON, names as text.
    fn table(json: &str) -> Vec<(String, LockSummary, Vec<String>)> {
        let v: Value = serde_json::from_str(json).expect("valid JSON");
        v["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["cat"] == "threadlab lock")
            .map(|e| {
                let a = &e["args"];
                let id = a["lock"].as_str().unwrap().trim_start_matches("0x");
                let sites: Vec<&Value> = a["sites"].as_array().unwrap().iter().collect();
                let l = LockSummary {
                    acquisitions: a["acquisitions"].as_u64(),
                    waits: durations(&a["waits"]),
                    holds: durations(&a["holds"]),
                    holds_sampled: a["holds_sampled"].as_bool().unwrap(),
                    sites: sites
                        .iter()
                        .enumerate()
                        .map(|(i, s)| WaitSite {
                            site: crate::event::NameId(i as u32),
                            waits: s["waits"].as_u64().unwrap(),
                            wait_ns: s["wait_ns"].as_u64().unwrap(),
                        })
                        .collect(),
                    holders: a["holders"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|h| WaitHolder {
                            tid: h["tid"].as_u64().unwrap(),
                            waits: h["waits"].as_u64().unwrap(),
                            wait_ns: h["wait_ns"].as_u64().unwrap(),
                        })
                        .collect(),
                    ..LockSummary::new(
                        u64::from_str_radix(id, 16).unwrap(),
                        crate::event::NameId(0),
                    )
                };
                let names = sites.iter().map(|s| s["site"].as_str().unwrap().to_owned());
                (a["name"].as_str().unwrap().to_owned(), l, names.collect())
            })
            .collect()
    }

    /// Every figure of the lock table is in the JSON and reads back as it was (the site and
    /// lock names as text), and a wait's arguments ride on its begin.
    #[test]
    fn the_lock_table_and_a_waits_arguments_are_written() {
        let mut t = crate::sample::every_kind();
        t.locks.push(LockSummary {
            waits: Durations::of([7, u64::MAX / 2]),
            ..LockSummary::new(u64::MAX, crate::event::NameId(1))
        });
        let key = crate::event::NameId(t.names.len() as u32);
        t.names.push(crate::lock_summary::ARG_LOCK_SITE.into());
        let mut events: Vec<crate::event::Event> = t.threads[1].events.iter().collect();
        let w = events
            .iter()
            .position(|e| matches!(e.kind, EventKind::LockWait { .. }))
            .unwrap();
        let arg = EventKind::Arg {
            key,
            value: crate::event::NameId(5),
        };
        events.insert(
            w + 1,
            crate::event::Event {
                ts_ns: events[w].ts_ns,
                kind: arg,
            },
        );
        t.threads[1] = crate::trace::ThreadTrack::from_events(2, "w1".into(), Some(1), events);
        let json = encode(&t);
        let back = table(&json);
        assert_eq!(back.len(), 2);
        for ((name, l, sites), want) in back.iter().zip(&t.locks) {
            assert_eq!(name, t.name(want.name));
            let names: Vec<&str> = want.sites.iter().map(|s| t.name(s.site)).collect();
            assert_eq!(sites, &names);
            let renumbered = LockSummary {
                name: crate::event::NameId(0),
                sites: want
                    .sites
                    .iter()
                    .enumerate()
                    .map(|(i, s)| WaitSite {
                        site: crate::event::NameId(i as u32),
                        ..s.clone()
                    })
                    .collect(),
                ..want.clone()
            };
            assert_eq!(l, &renumbered);
        }
        assert!(
            json.contains(r#""name":"wait: zone","cat":"lock","#)
                && json.contains(r#""args":{"lock.site":"take (lock.c:12)"}"#),
            "{json}"
        );
        assert!(!json.contains("arg: lock.site"), "not a separate instant");
    }
}
