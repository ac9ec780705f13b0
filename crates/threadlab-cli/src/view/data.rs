//! The page's data: the rows of every thread (`rows.rs`, one pass per thread), the arrows
//! between threads (`arrows.rs`), the doctor's figures and findings with the threads and time
//! range each one concerns, and Tracy's marks (`marks.rs`); every row is merged per level of
//! detail (`lod.rs`) and written as compact JSON columns (start deltas, durations, labels,
//! counts).

use std::fmt::Write;
use threadlab_doctor::Diagnose;

use serde_json::{json, Value};
use threadlab::trace::{EventKind, Trace};
use threadlab_doctor::{Diagnosis, FrameTarget};

use super::arrows::arrows;
use super::lod::{merge, widths, Iv};
use super::marks::marks_data;
use super::rows::{lock_waits, observed_only, rows, Names, STATES};

/// The threads and time range a finding concerns, from its subject: `lock NAME` (the threads
/// that waited for it, from the first wait to the end of the last), `threads GROUP` (that group's
/// lifetimes), `pool workers`, a thread's name (its longest task, if the doctor named one),
/// or the whole trace.
pub fn finding_scope(trace: &Trace, d: &Diagnosis, subject: &str) -> (Vec<usize>, u64, u64) {
    let all = (0..trace.threads().len()).collect::<Vec<_>>();
    let life = |ids: &[usize]| {
        let t0 = ids
            .iter()
            .map(|&i| d.threads[i].first_ns)
            .min()
            .unwrap_or(0);
        let t1 = ids.iter().map(|&i| d.threads[i].last_ns).max().unwrap_or(0);
        (t0, t1)
    };
    let pick = |ids: Vec<usize>| {
        if ids.is_empty() {
            (all.clone(), 0, trace.duration_ns())
        } else {
            let (t0, t1) = life(&ids);
            (ids, t0, t1)
        }
    };
    if let Some(lock) = subject.strip_prefix("lock ") {
        let (mut ids, mut t0, mut t1) = (vec![], u64::MAX, 0);
        for (i, t) in trace.threads().iter().enumerate() {
            let mut waiting = false;
            for e in t.events().iter() {
                match e.kind {
                    EventKind::LockWait { name, .. } if trace.name(name) == lock => {
                        if ids.last() != Some(&i) {
                            ids.push(i);
                        }
                        waiting = true;
                        t0 = t0.min(e.ts_ns);
                        t1 = t1.max(e.ts_ns);
                    }
                    // The wait ends when the lock is taken.
                    EventKind::LockAcquired { name, .. } if waiting && trace.name(name) == lock => {
                        waiting = false;
                        t1 = t1.max(e.ts_ns);
                    }
                    _ => {}
                }
            }
        }
        return if ids.is_empty() {
            pick(ids)
        } else {
            (ids, t0, t1.max(t0 + 1))
        };
    }
    if let Some(group) = subject.strip_prefix("threads ") {
        return pick(
            all.iter()
                .copied()
                .filter(|&i| d.threads[i].group == group)
                .collect(),
        );
    }
    if subject == "pool workers" {
        return pick(
            all.iter()
                .copied()
                .filter(|&i| d.threads[i].worker.is_some())
                .collect(),
        );
    }
    pick(
        all.iter()
            .copied()
            .filter(|&i| d.threads[i].name == subject)
            .collect(),
    )
}

/// Writes `row` merged at every level as `[[starts…],[durs…],[labels…],[counts…]]` per level
/// (starts as deltas from the previous start).
fn write_levels(out: &mut String, row: &[Iv], levels: &[u64]) {
    out.push('[');
    write_row(out, row);
    let mut prev = row.to_vec();
    for &w in levels {
        if prev.len() <= 1 {
            // Nothing left to merge: the page uses the last level it has for every coarser one.
            break;
        }
        // Each level merges the one below (cheaper than the raw row again); a block counts as
        // small or wide by its own width, like a raw interval.
        prev = merge(&prev, w);
        out.push(',');
        write_row(out, &prev);
    }
    out.push(']');
}

fn write_row(out: &mut String, row: &[Iv]) {
    let mut last = 0;
    out.push_str("[[");
    for (k, s) in row.iter().enumerate() {
        let sep = if k == 0 { "" } else { "," };
        let _ = write!(out, "{sep}{}", s.start - last);
        last = s.start;
    }
    out.push_str("],[");
    for (k, s) in row.iter().enumerate() {
        let sep = if k == 0 { "" } else { "," };
        let _ = write!(out, "{sep}{}", s.end - s.start);
    }
    out.push_str("],[");
    for (k, s) in row.iter().enumerate() {
        let sep = if k == 0 { "" } else { "," };
        let _ = write!(out, "{sep}{}", s.label);
    }
    out.push_str("],[");
    for (k, s) in row.iter().enumerate() {
        let sep = if k == 0 { "" } else { "," };
        let _ = write!(out, "{sep}{}", s.count);
    }
    out.push_str("]]");
}

/// The page's whole data object, as JSON text.
pub fn page_data(trace: &Trace, title: &str, target: FrameTarget) -> String {
    let d = trace.diagnose();
    let mut names = Names::default();
    let end = trace
        .threads()
        .iter()
        .filter_map(|t| t.events().iter().last().map(|e| e.ts_ns))
        .max()
        .unwrap_or(0)
        .max(trace.duration_ns());
    let levels = widths(end);
    let waits = lock_waits(trace, &mut names);
    let observed = observed_only(trace);
    let mut threads = String::from("[");
    for ((i, t), waits) in trace.threads().iter().enumerate().zip(waits) {
        let r = rows(trace, i, &mut names, waits, observed);
        let s = &d.threads[i];
        let summary = json!({
            "running": s.running_ns, "searching": s.searching_ns, "spinning": s.spinning_ns,
            "parked": s.parked_ns, "lock wait": s.lock_wait_ns, "other": s.other_ns,
            "preempted": s.preempted_ns, "lifetime": s.lifetime_ns,
            "tasks": s.tasks, "zones": s.zones, "steals": s.steals, "parks": s.parks,
        });
        if i > 0 {
            threads.push(',');
        }
        let _ = write!(
            threads,
            "{{\"name\":{},\"tid\":{},\"worker\":{},\"summary\":{summary},\"spans\":[",
            Value::from(t.name()),
            t.tid(),
            t.worker().map_or(Value::Null, Value::from),
        );
        for (k, row) in r.spans.iter().enumerate() {
            if k > 0 {
                threads.push(',');
            }
            write_levels(&mut threads, row, &levels);
        }
        threads.push_str("],\"states\":");
        write_levels(&mut threads, &r.states, &levels);
        threads.push_str(",\"holds\":");
        write_levels(&mut threads, &r.holds, &levels);
        threads.push_str(",\"preempted\":");
        write_row(&mut threads, &r.preempted);
        threads.push_str(",\"waits\":");
        write_row(&mut threads, &r.waits);
        threads.push('}');
    }
    threads.push(']');
    let arrows: Vec<Value> = arrows(trace)
        .into_iter()
        .map(|(k, a, ta, b, tb)| json!([k, a, ta, b, tb]))
        .collect();
    let findings: Vec<Value> = d
        .findings
        .iter()
        .map(|f| {
            let (ids, t0, t1) = finding_scope(trace, &d, &f.subject);
            json!({
                "pitfall": f.pitfall.as_str(), "subject": f.subject, "evidence": f.evidence,
                "suggestion": f.suggestion, "threads": ids, "t0": t0, "t1": t1,
            })
        })
        .collect();
    let answers: Vec<Value> = d
        .answers
        .iter()
        .map(|a| {
            json!({
                "question": a.question, "answer": a.answer, "ok": a.ok,
                // No figure: the trace holds too little to judge (drawn as such, never as 0).
                "figure": a.figure.as_ref().map(|f| f.name.as_str()),
                "value": a.figure.as_ref().map(|f| f.value),
                "unit": a.figure.as_ref().map(|f| f.unit),
                "threshold": a.figure.as_ref().and_then(|f| f.threshold),
            })
        })
        .collect();
    let mut head = json!({
        "title": title, "duration": end, "events": trace.event_count(), "cpus": trace.cpus(),
        "levels": levels, "names": names.list, "states": STATES, "arrows": arrows,
        "findings": findings, "answers": answers,
    });
    marks_data(trace, target, &mut head);
    let head = head.to_string();
    // Splice the threads in before the closing brace.
    format!("{},\"threads\":{threads}}}", &head[..head.len() - 1])
}

/// What the page calls a late frame unless `--frame-target` says otherwise: the slowest tenth.
pub const DEFAULT_FRAME_TARGET: FrameTarget = FrameTarget::Percentile(90.0);

#[cfg(test)]
mod tests {
    use super::super::rows::RUNNING;
    use super::*;

    /// Other unit tests of this binary may be recording (the recorder is process-wide).
    fn start() -> threadlab::trace::Recording {
        let t = std::time::Instant::now();
        loop {
            match threadlab::trace::try_start(threadlab::trace::Mode::Full) {
                Ok(r) => return r,
                Err(e) if t.elapsed().as_secs() < 60 => {
                    let _ = e;
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Err(e) => panic!("no recording within 60 s: {e}"),
            }
        }
    }

    /// A waiter blocked on a held lock: one hand-off arrow from the holder to the waiter, and
    /// the lock's finding scope is the waiter's thread, from its wait on.
    #[test]
    fn a_lock_hand_off_is_an_arrow_and_scopes_the_lock() {
        use std::sync::{mpsc, Arc};
        let rec = start();
        let m = Arc::new(threadlab::sync::Mutex::named("handed", 0));
        let (held_tx, held_rx) = mpsc::channel();
        let m2 = Arc::clone(&m);
        let holder = std::thread::spawn(move || {
            threadlab::trace::set_thread_name("holder");
            let mut g = m2.lock();
            held_tx.send(()).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(30));
            *g += 1;
        });
        held_rx.recv().unwrap();
        let m3 = Arc::clone(&m);
        let waiter = std::thread::spawn(move || {
            threadlab::trace::set_thread_name("waiter");
            *m3.lock() += 1;
        });
        holder.join().unwrap();
        waiter.join().unwrap();
        let trace = rec.stop();
        let idx = |n: &str| trace.threads().iter().position(|t| t.name() == n).unwrap();
        let (h, w) = (idx("holder"), idx("waiter"));
        let handoffs: Vec<_> = arrows(&trace).into_iter().filter(|a| a.0 == 2).collect();
        assert_eq!(handoffs.len(), 1, "{handoffs:?}");
        assert_eq!((handoffs[0].1, handoffs[0].3), (h, w));
        assert!(handoffs[0].2 <= handoffs[0].4, "release before acquisition");
        let d = trace.diagnose();
        let (ids, t0, t1) = finding_scope(&trace, &d, "lock handed");
        assert_eq!(ids, vec![w]);
        // From the wait to the acquisition the hand-off arrow ends at.
        assert!(t0 < t1, "{t0}..{t1}");
        assert_eq!(t1, handoffs[0].4);
        let (all, _, _) = finding_scope(&trace, &d, "process");
        assert_eq!(all.len(), trace.threads().len());
        // The hover card of the wait names the lock and the thread that held it.
        let mut names = Names::default();
        let waits = lock_waits(&trace, &mut names).swap_remove(w);
        let r = rows(&trace, w, &mut names, waits, false);
        assert_eq!(r.waits.len(), 1, "one wait");
        let holder = &trace.threads()[h];
        assert_eq!(
            names.list[r.waits[0].label as usize],
            format!(
                "waiting for lock handed, held by holder (tid {})",
                holder.tid()
            )
        );
        let json = page_data(&trace, "t", DEFAULT_FRAME_TARGET);
        let v: Value = serde_json::from_str(&json).expect("valid JSON");
        assert_eq!(v["threads"][w]["waits"][1].as_array().unwrap().len(), 1);
    }

    /// A thread observed from outside: OS samples at 0, 100, 200 and 300 ns saying it was on a
    /// CPU 60 ns of the first interval, none of the second and (more than) all of the third,
    /// in which it also waited 40 ns for a lock.
    fn observed_thread(with_zone: bool) -> Trace {
        use threadlab::trace::{Event, TraceBuilder};
        let mut b = TraceBuilder::new();
        let lock = b.name("big_lock");
        let t = b.thread(7, "app");
        let mut push = |ts_ns, kind| b.push(t, Event { ts_ns, kind });
        let os = |on_cpu_ns| EventKind::OsSched {
            on_cpu_ns,
            runqueue_ns: 0,
        };
        push(0, os(0));
        push(100, os(60));
        push(200, os(60));
        push(
            210,
            EventKind::LockWait {
                lock: 1,
                name: lock,
            },
        );
        let handoff = None;
        push(
            250,
            EventKind::LockAcquired {
                lock: 1,
                name: lock,
                handoff,
            },
        );
        push(
            260,
            EventKind::LockReleased {
                lock: 1,
                name: lock,
                handoff,
            },
        );
        if with_zone {
            push(270, EventKind::ZoneBegin { name: lock });
            push(280, EventKind::ZoneEnd);
        }
        push(300, os(400));
        b.duration_ns(300);
        b.build()
    }

    #[test]
    fn an_observed_threads_time_on_a_cpu_is_drawn_as_running() {
        let trace = observed_thread(false);
        assert!(observed_only(&trace));
        let mut names = Names::default();
        let waits = lock_waits(&trace, &mut names).swap_remove(0);
        let r = rows(&trace, 0, &mut names, waits, true);
        let strip: Vec<(u64, u64, &str)> = r
            .states
            .iter()
            .map(|s| (s.start, s.end, STATES[s.label as usize]))
            .collect();
        assert_eq!(
            strip,
            [
                (0, 60, "running"),
                (60, 200, "other"),
                (200, 210, "running"),
                (210, 250, "lock wait"),
                (250, 300, "running"),
            ]
        );
        // A recorded program's thread outside its spans stays *other*, on-CPU or not.
        let recorded = observed_thread(true);
        assert!(!observed_only(&recorded));
        let json = page_data(&recorded, "t", DEFAULT_FRAME_TARGET);
        let v: Value = serde_json::from_str(&json).expect("valid JSON");
        let waits = lock_waits(&recorded, &mut names).swap_remove(0);
        let r = rows(&recorded, 0, &mut names, waits, false);
        assert!(r
            .states
            .iter()
            .all(|s| s.label != RUNNING || (270..=280).contains(&s.start)));
        assert_eq!(v["threads"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn rows_nest_spans_and_derive_states() {
        let rec = start();
        std::thread::spawn(|| {
            let _outer = threadlab::zone!("outer");
            let _inner = threadlab::zone!("inner");
            let m = threadlab::sync::Mutex::named("m", 0);
            *m.lock() += 1;
        })
        .join()
        .unwrap();
        let trace = rec.stop();
        let i = trace
            .threads()
            .iter()
            .position(|t| {
                t.events()
                    .iter()
                    .any(|e| matches!(e.kind, EventKind::ZoneBegin { .. }))
            })
            .expect("the zone thread");
        let mut names = Names::default();
        let waits = lock_waits(&trace, &mut names).swap_remove(i);
        let r = rows(&trace, i, &mut names, waits, false);
        assert_eq!(r.spans.len(), 2, "two depths");
        assert_eq!(names.list[r.spans[0][0].label as usize], "outer");
        assert_eq!(names.list[r.spans[1][0].label as usize], "inner");
        assert!(r.spans[0][0].start <= r.spans[1][0].start);
        assert!(r.spans[0][0].end >= r.spans[1][0].end);
        assert_eq!(r.holds.len(), 1, "one lock hold");
        assert!(r.states.iter().any(|s| s.label == RUNNING));
        let json = page_data(&trace, "t", DEFAULT_FRAME_TARGET);
        let v: Value = serde_json::from_str(&json).expect("valid JSON");
        assert_eq!(
            v["threads"].as_array().unwrap().len(),
            trace.threads().len()
        );
    }
}
