//! A recording does not change where work from outside the pool runs. The recorder is
//! process-wide, so this test has a file (a process) of its own: another test's pool would put
//! its own workers and guests into the recording.

use std::thread::ThreadId;

use threadlab::trace::{EventKind, TaskKind};

mod pool_support;
use pool_support::{fib, settle, watched_pool};

fn me() -> ThreadId {
    std::thread::current().id()
}

/// A recording does not change where work from outside the pool runs: the caller is a guest
/// with or without one. Its install span is on its own track, begun once and ended once, marked
/// with the seat it holds (`trace::ARG_GUEST_SEAT`: the index the work saw); the doctor reads
/// that span as the seat's worker's work (the worker ran tasks, the caller's track none).
#[test]
fn while_recording_a_guest_still_runs_on_the_caller_and_names_its_seat() {
    use threadlab_doctor::Diagnose;
    watched_pool(2, |pool| {
        settle(&pool);
        let rec = threadlab::trace::start();
        let caller = me();
        let (on_caller, seat) = pool.install(|| {
            let (a, b) = threadlab::join(|| fib(16), || fib(15));
            assert_eq!(a + b, 1597);
            (me() == caller, threadlab::current_thread_index())
        });
        let trace = rec.stop();
        assert!(on_caller, "recording moved the install off its caller");
        let seat = seat.unwrap();
        let key = trace.name_id(threadlab::trace::ARG_GUEST_SEAT).unwrap();
        let guest_tracks: Vec<_> = trace
            .threads()
            .iter()
            .filter(|t| {
                t.worker().is_none()
                    && t.events().into_iter().any(|e| {
                        matches!(
                            e.kind,
                            EventKind::TaskBegin {
                                kind: TaskKind::Install,
                                ..
                            }
                        )
                    })
            })
            .collect();
        assert_eq!(guest_tracks.len(), 1, "one non-worker track with the span");
        let t = guest_tracks[0];
        let events: Vec<_> = t.events().into_iter().collect();
        let begin = events
            .iter()
            .position(|e| matches!(e.kind, EventKind::TaskBegin { .. }))
            .unwrap();
        match events[begin + 1].kind {
            EventKind::Arg { key: k, value } => {
                assert_eq!(k, key);
                assert_eq!(trace.name(value), seat.to_string());
            }
            other => panic!("the install span's first argument is {other:?}"),
        }
        let count = |end: bool| {
            events
                .iter()
                .filter(|e| {
                    if end {
                        matches!(e.kind, EventKind::TaskEnd)
                    } else {
                        matches!(e.kind, EventKind::TaskBegin { .. })
                    }
                })
                .count()
        };
        assert_eq!(
            count(false),
            count(true),
            "every span on the guest's track closed"
        );
        // The seat's worker ran the install and its joins (it may have no track of its own: it
        // slept through the recording); the caller's track holds none of them.
        let d = trace.diagnose();
        let worker = d.threads.iter().find(|s| s.worker == Some(seat as u32));
        let guest = d
            .threads
            .iter()
            .find(|s| s.worker.is_none() && s.name == t.name())
            .unwrap();
        assert!(worker.unwrap().tasks >= 1, "{d}");
        assert_eq!(guest.tasks, 0, "{d}");
    });
}
