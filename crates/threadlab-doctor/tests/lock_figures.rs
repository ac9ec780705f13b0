//! The doctor's lock figures are the same whether a trace holds every acquisition as an event (a
//! recording of `threadlab::sync::Mutex`) or a lock table of aggregates with only some waits as
//! events (a program observed from outside): acquisitions, contended share, the waits' and
//! holds' counts, totals, means and maxima, the holders and the call sites agree exactly, the
//! percentiles within the histogram's bucket. Holds timed for a sample of the acquisitions are
//! said to be sampled (N of M) and stand for every acquisition; `compare` lines the figures up
//! and leaves out what neither side knows.

use threadlab_doctor::{compare, Diagnose, LockStats, Pitfall};
use threadlab_trace::{
    Durations, Event, EventKind as K, LockSummary, Trace, TraceBuilder, ARG_LOCK_SITE,
};

const LOCK: u64 = 7;
const PRODUCER: u64 = 100;
const CONSUMER: u64 = 101;

/// One acquisition: who, when it asked (`None`: it got the lock at once), when it got it,
/// when it let go, and where it asked from.
struct Take {
    tid: u64,
    asked: Option<u64>,
    got: u64,
    released: u64,
    site: &'static str,
}

/// A producer and a consumer taking one lock in turn, each waiting while the other holds it,
/// with holds of varied length, and now and then an acquisition nobody waits for.
fn takes() -> Vec<Take> {
    let mut out = Vec::new();
    let mut t = 1_000;
    for i in 0..400u64 {
        let (tid, other, site) = if i % 2 == 0 {
            (PRODUCER, CONSUMER, "insert (q.c:10)")
        } else {
            (CONSUMER, PRODUCER, "remove (q.c:20)")
        };
        let hold = 2_000 + 37 * (i % 50) * (i % 7);
        out.push(Take {
            tid,
            asked: None,
            got: t,
            released: t + hold,
            site,
        });
        // The other thread asks shortly after and gets it when it is let go.
        if i % 5 != 4 {
            out.push(Take {
                tid: other,
                asked: Some(t + 100 + 13 * (i % 11)),
                got: t + hold,
                released: t + hold + 1_500,
                site: if other == PRODUCER {
                    "insert (q.c:10)"
                } else {
                    "remove (q.c:20)"
                },
            });
            t += hold + 1_500;
        } else {
            t += hold;
        }
        t += 300;
    }
    out
}

/// The recording: every acquisition as events on its thread (a wait's call site as its
/// `lock.site` argument), 2 CPUs.
fn recording() -> Trace {
    let mut b = TraceBuilder::new();
    let name = b.name("queue");
    let key = b.name(ARG_LOCK_SITE);
    let threads = [
        b.thread(PRODUCER, "producer"),
        b.thread(CONSUMER, "consumer"),
    ];
    let mut per: [Vec<Event>; 2] = [Vec::new(), Vec::new()];
    for k in takes() {
        let evs = &mut per[(k.tid - PRODUCER) as usize];
        if let Some(asked) = k.asked {
            evs.push(Event {
                ts_ns: asked,
                kind: K::LockWait { lock: LOCK, name },
            });
            let value = b.name(k.site);
            evs.push(Event {
                ts_ns: asked,
                kind: K::Arg { key, value },
            });
        }
        evs.push(Event {
            ts_ns: k.got,
            kind: K::LockAcquired {
                lock: LOCK,
                name,
                handoff: None,
            },
        });
        evs.push(Event {
            ts_ns: k.released,
            kind: K::LockReleased {
                lock: LOCK,
                name,
                handoff: None,
            },
        });
    }
    for (t, evs) in threads.into_iter().zip(per) {
        let mut evs = evs;
        evs.sort_by_key(|e| e.ts_ns);
        for e in evs {
            b.push(t, e);
        }
    }
    b.cpus(2);
    b.build()
}

/// The same run as an observer sees it: the lock's aggregates in the table (its holds every one
/// or, with `sample_every`, one in that many), and only the first `kept` waits as events (the
/// event budget), no hold events.
fn observed(sample_every: Option<usize>, kept: usize) -> Trace {
    let rec = recording();
    let mut row = rec.locks().remove(0);
    let mut b = TraceBuilder::new();
    let name = b.name("queue");
    // Re-intern the site names in this builder.
    for s in &mut row.sites {
        s.site = b.name(rec.name(s.site));
    }
    row.name = name;
    if let Some(every) = sample_every {
        let holds: Vec<u64> = takes().iter().map(|k| k.released - k.got).collect();
        row.holds = Durations::of(holds.into_iter().step_by(every));
        row.holds_sampled = true;
    }
    b.lock(row);
    let threads = [
        b.thread(PRODUCER, "producer"),
        b.thread(CONSUMER, "consumer"),
    ];
    let mut waits: Vec<&Take> = Vec::new();
    let all = takes();
    waits.extend(all.iter().filter(|k| k.asked.is_some()).take(kept));
    waits.sort_by_key(|k| k.asked);
    for k in waits {
        let t = threads[(k.tid - PRODUCER) as usize];
        let asked = k.asked.unwrap_or(0);
        b.push(
            t,
            Event {
                ts_ns: asked,
                kind: K::LockWait { lock: LOCK, name },
            },
        );
        b.push(
            t,
            Event {
                ts_ns: k.got,
                kind: K::LockAcquired {
                    lock: LOCK,
                    name,
                    handoff: None,
                },
            },
        );
    }
    b.duration_ns(rec.duration_ns());
    b.cpus(2);
    b.build()
}

/// The figures that must agree exactly, as text.
fn exact(l: &LockStats) -> String {
    format!(
        "acq {:?} share {:?} waits {} {} {} {:.3} holds {} {} {} {:.3} holders {:?} sites {:?}",
        l.acquisitions,
        l.contended_share,
        l.wait.count,
        l.wait.total_ns,
        l.wait.max_ns,
        l.wait.mean_ns,
        l.hold.count,
        l.hold.total_ns,
        l.hold.max_ns,
        l.hold.mean_ns,
        l.holders,
        l.sites
    )
}

/// `got` is a histogram's reading of `want`: no less, and within its bucket (19%).
fn within_a_bucket(got: u64, want: u64, what: &str) {
    assert!(
        got >= want && got as f64 <= want as f64 * 1.19 + 1.0,
        "{what}: {got} read from the histogram, {want} from the events"
    );
}

#[test]
fn a_recording_and_an_observers_aggregates_give_the_same_figures() {
    let (rec, obs) = (recording(), observed(None, 25));
    let (a, b) = (rec.diagnose(), obs.diagnose());
    let (la, lb) = (a.lock("queue").unwrap(), b.lock("queue").unwrap());
    assert_eq!(exact(la), exact(lb));
    // The recording's own figures, counted from `takes` here.
    let all = takes();
    let waits = all.iter().filter(|k| k.asked.is_some()).count() as u64;
    assert_eq!(la.acquisitions, Some(all.len() as u64));
    assert_eq!(la.wait.count, waits);
    assert_eq!(la.hold_samples, None);
    // Each thread waits only while the other holds the lock: it is the holder of every wait.
    let holder = |name: &str| la.holders.iter().find(|h| h.thread == name).unwrap().waits;
    let asked_by = |tid| {
        all.iter()
            .filter(|k| k.asked.is_some() && k.tid == tid)
            .count() as u64
    };
    assert_eq!(holder("producer"), asked_by(CONSUMER));
    assert_eq!(holder("consumer"), asked_by(PRODUCER));
    let sites: Vec<&str> = la.sites.iter().map(|s| s.site.as_str()).collect();
    assert_eq!(sites.len(), 2, "{sites:?}");
    for (got, want, what) in [
        (lb.wait.median_ns, la.wait.median_ns, "wait p50"),
        (lb.wait.p99_ns, la.wait.p99_ns, "wait p99"),
        (lb.hold.median_ns, la.hold.median_ns, "hold p50"),
        (lb.hold.p99_ns, la.hold.p99_ns, "hold p99"),
    ] {
        within_a_bucket(got, want, what);
    }
    // The waiters come from the waits kept as events: 25 of them.
    let waited: u64 = lb.top_waiters.iter().map(|w| w.1).sum();
    assert!(waited > 0 && waited < lb.wait.total_ns);
}

#[test]
fn sampled_holds_stand_for_every_acquisition_and_say_so() {
    let d = observed(Some(8), 25).diagnose();
    let l = d.lock("queue").unwrap();
    let all = takes();
    let sample: Vec<u64> = all.iter().map(|k| k.released - k.got).step_by(8).collect();
    let n = sample.len() as u64;
    assert_eq!(l.hold_samples, Some(n));
    assert_eq!(l.hold.count, all.len() as u64, "every acquisition");
    let mean = sample.iter().sum::<u64>() as f64 / n as f64;
    assert_eq!(l.hold.total_ns, (mean * all.len() as f64).round() as u64);
    assert_eq!(l.hold.max_ns, *sample.iter().max().unwrap());
    assert!(!d.instrumented(), "sampled holds are an observer's");
    let text = d.to_string();
    assert!(
        text.contains(&format!("queue: holds sampled, {n} of {} timed", all.len())),
        "{text}"
    );
    assert!(!text.contains("not recorded"), "{text}");
    assert!(text.contains("queue: waits at "), "{text}");
    assert!(
        text.contains("queue: held most while others waited by "),
        "{text}"
    );
    // The lock question names the acquisitions, the sample and who held the lock.
    let q3 = &d.answers[2].answer;
    assert!(
        q3.contains(&format!("waits in {} acquisitions", all.len())) && q3.contains("sampled: "),
        "{q3}"
    );
    assert!(q3.contains("held most while others waited by"), "{q3}");
}

/// A lock whose waits exceed its sampled holds is contended, judged on the estimated hold
/// total, never as "hold time not recorded".
#[test]
fn contention_is_judged_on_sampled_holds() {
    let mut b = TraceBuilder::new();
    let name = b.name("big_lock");
    let t = b.thread(1, "main");
    b.push(
        t,
        Event {
            ts_ns: 0,
            kind: K::ParkBegin,
        },
    );
    b.push(
        t,
        Event {
            ts_ns: 100_000_000,
            kind: K::ParkEnd,
        },
    );
    b.lock(LockSummary {
        acquisitions: Some(1_000),
        waits: Durations::of(vec![200_000; 500]),
        holds: Durations::of(vec![50_000; 10]),
        holds_sampled: true,
        ..LockSummary::new(1, name)
    });
    b.duration_ns(100_000_000);
    let d = b.build().diagnose();
    let f = d.finding(Pitfall::LockContention).expect("contended");
    assert!(
        f.evidence
            .contains("; 50.00 ms held over 1000 acquisitions (2.0× the hold time, sampled: 10 of 1000 timed)"),
        "{}",
        f.evidence
    );
    assert!(
        f.evidence
            .contains("over 500 waits in 1000 acquisitions, 50.0% contended;"),
        "{}",
        f.evidence
    );
    assert_eq!(f.figure.name, "wait / hold");
    assert!((f.figure.value - 2.0).abs() < 1e-9, "{}", f.figure.value);
}

#[test]
fn compare_lines_up_each_locks_figures_and_leaves_out_what_neither_side_knows() {
    let (rec, obs) = (recording(), observed(Some(8), 25));
    let c = compare(&rec, &obs);
    let row = |figure: &str| {
        c.locks
            .iter()
            .find(|r| r.lock == "queue" && r.figure == figure)
            .unwrap_or_else(|| panic!("no {figure} row: {:?}", c.locks))
    };
    let acq = takes().len() as f64;
    assert_eq!(
        (row("acquisitions").a, row("acquisitions").b),
        (Some(acq), Some(acq))
    );
    assert!(row("held").a.is_some() && row("held").b.is_some());
    assert_eq!(row("waits").a, row("waits").b);
    assert!(c.to_string().contains("\nLocks\n"), "{c}");
    // Sampled futex waits only: no acquisitions and no holds on either side, so no such rows.
    let mut b = TraceBuilder::new();
    let name = b.name("futex 0x40");
    let t = b.thread(1, "a");
    b.push(
        t,
        Event {
            ts_ns: 0,
            kind: K::LockWait { lock: 0x40, name },
        },
    );
    b.push(
        t,
        Event {
            ts_ns: 9,
            kind: K::LockAcquired {
                lock: 0x40,
                name,
                handoff: None,
            },
        },
    );
    let futex = b.build();
    let c = compare(&futex, &futex);
    let figures: Vec<&str> = c.locks.iter().map(|r| r.figure).collect();
    assert_eq!(figures, ["waits", "waited", "wait p50", "wait p99"]);
}

/// An observer's lock row: `acquisitions`, `waits` of 200 µs each while thread 2 held it, and
/// `timed` holds of 300 µs, over a 100 ms run.
fn taking_turns(acquisitions: u64, waits: usize, timed: usize) -> Trace {
    let mut b = TraceBuilder::new();
    let name = b.name("big_lock");
    let t = b.thread(1, "main");
    b.thread(2, "work");
    b.push(
        t,
        Event {
            ts_ns: 0,
            kind: K::ParkBegin,
        },
    );
    b.push(
        t,
        Event {
            ts_ns: 100_000_000,
            kind: K::ParkEnd,
        },
    );
    b.lock(LockSummary {
        acquisitions: Some(acquisitions),
        waits: Durations::of(vec![200_000; waits]),
        holds: Durations::of(vec![300_000; timed]),
        holds_sampled: true,
        holders: vec![threadlab_trace::WaitHolder {
            tid: 2,
            waits: waits as u64,
            wait_ns: 200_000 * waits as u64,
        }],
        ..LockSummary::new(1, name)
    });
    b.duration_ns(100_000_000);
    b.build()
}

/// Two threads taking turns at a lock wait no longer than they hold it: most acquisitions
/// waiting for the other thread is contention all the same, judged on the contended share,
/// and the lock question's figure is the finding's.
#[test]
fn most_acquisitions_waiting_for_another_thread_is_contention() {
    let d = taking_turns(300, 290, 3).diagnose();
    let l = d.lock("big_lock").unwrap();
    assert!(l.wait_over_hold < 1.0, "{}", l.wait_over_hold);
    let f = d.finding(Pitfall::LockContention).expect("contended");
    assert_eq!(f.figure.name, "contended share");
    assert!((f.figure.value - 290.0 / 300.0).abs() < 1e-9);
    assert!(!d.answers[2].ok);
    assert_eq!(d.answers[2].figure.as_ref(), Some(&f.figure));
    // A few waits among many acquisitions, shorter than the holds: no contention.
    let d = taking_turns(3_000, 290, 3).diagnose();
    assert!(!d.has(Pitfall::LockContention), "{d}");
}

/// Holds sampled but none timed (fewer acquisitions than the sampling interval): the hold
/// figures are unknown, not zero.
#[test]
fn no_hold_timed_is_no_hold_known() {
    let d = taking_turns(300, 290, 0).diagnose();
    let l = d.lock("big_lock").unwrap();
    assert_eq!((l.hold.count, l.hold_samples), (0, None));
    assert!(
        d.to_string().contains("big_lock: hold time not recorded"),
        "{d}"
    );
    let f = d
        .finding(Pitfall::LockContention)
        .expect("judged on its waits");
    assert_eq!(f.figure.name, "wait / recording");
}
