//! The doctor's entry point: one walk per thread, then the groups, locks, spans, long tasks, the
//! runtime's and the OS's figures, the findings and the four answers.

use super::allocs;
use super::answers;
use super::findings::{self, Diagnosis, OS_MIN_WINDOW_NS};
use super::frames::{self, FrameReport, FrameTarget};
use super::{blocked, groups, guests, locks, runtime, states};
use threadlab_trace::Trace;

/// The doctor as methods of [`Trace`]: `trace.diagnose()`, `trace.frame_report(set, target)`.
pub trait Diagnose {
    /// Diagnoses the trace: see [`diagnose`].
    fn diagnose(&self) -> Diagnosis;
    /// The frames of frame set `set` against `target`: see [`frames::frame_report`].
    fn frame_report(&self, set: &str, target: FrameTarget) -> FrameReport;
}

impl Diagnose for Trace {
    fn diagnose(&self) -> Diagnosis {
        diagnose(self)
    }
    fn frame_report(&self, set: &str, target: FrameTarget) -> FrameReport {
        frames::frame_report(self, set, target)
    }
}

/// Diagnoses `trace`: where each thread's time went, the locks, the scheduler's and the OS's
/// figures, the four answers and the pitfalls found (see the crate's doc). Never panics, whatever
/// the events (a loaded file may hold anything).
///
/// ```
/// use threadlab_doctor::{Diagnose, Pitfall};
/// let queue = threadlab::sync::Mutex::named("queue", 0);
/// let rec = threadlab::trace::start();
/// *queue.lock() += 1;
/// let d = rec.stop().diagnose();
/// assert_eq!(d.lock("queue").unwrap().hold.count, 1);
/// assert!(!d.has(Pitfall::LockContention), "one uncontended acquisition");
/// ```
pub fn diagnose(trace: &Trace) -> Diagnosis {
    let end = trace.duration_ns();
    let keys = states::TaskArgKeys::of(trace);
    let view = guests::seat_view(trace);
    let blocked = blocked::blocked(trace, &view);
    let mut walks: Vec<states::Walk> = trace
        .threads()
        .iter()
        .zip(view.events)
        .zip(view.asleep_until)
        .map(|((t, events), asleep_until)| {
            let who = states::Who {
                asleep_until,
                ..states::Who::of(t)
            };
            match events {
                None => states::walk(who, || t.events().iter(), end, keys),
                Some(events) => states::walk(who, || events.iter().copied(), end, keys),
            }
        })
        .collect();
    // Seats seen only through their guests: after the tracks, so a track's index is its walk's.
    for (index, tid, events) in view.silent_seats {
        let name = guests::seat_name(trace, index);
        let who = states::Who {
            name: &name,
            tid,
            worker: Some(index),
            asleep_until: events.first().map(|e| e.ts_ns),
            silent: true,
        };
        walks.push(states::walk(who, || events.iter().copied(), end, keys));
    }
    states::observed_on_cpu_is_running(&mut walks);
    let os = runtime::os(trace, &walks);
    let on_cpu = os.active_ns >= OS_MIN_WINDOW_NS;
    let mut d = Diagnosis {
        duration_ns: trace.duration_ns(),
        events: trace.event_count(),
        dropped: trace.dropped_events(),
        groups: groups::groups(trace, &walks, on_cpu, trace.cpus()),
        locks: locks::locks(trace, &walks),
        spans: groups::spans(trace, &walks),
        long_tasks: groups::long_tasks(trace, &walks),
        runtime: runtime::runtime(trace, &walks),
        os,
        threads: Vec::new(),
        answers: Vec::new(),
        findings: Vec::new(),
        allocs: allocs::allocs(trace),
        blocked,
    };
    d.threads = walks.into_iter().map(|w| w.stats).collect();
    d.findings = findings::findings(&d);
    d.findings.extend(findings::allocation_heavy(&d.allocs));
    d.answers = answers::answers(&d, &d.findings);
    d
}
