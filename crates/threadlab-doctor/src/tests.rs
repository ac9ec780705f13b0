//! The doctor's rules on synthetic traces with known figures: each pitfall just above and just
//! below its threshold, the state accounting, and malformed event sequences.
//!
//! (Over 800 lines: every rule's pair of traces, just above and just below, beside the others.)

use super::*;
use threadlab_trace::{Event, EventKind as K, NameId, TaskKind, Trace, TraceBuilder};

const MS: u64 = 1_000_000;
const US: u64 = 1_000;

/// A trace made by hand: threads with their events, names, a length and CPUs.
struct B(TraceBuilder, u64);

impl B {
    fn new(duration: u64, cpus: u32) -> B {
        let mut b = TraceBuilder::new();
        b.duration_ns(duration);
        b.cpus(cpus);
        B(b, 100)
    }
    fn name(&mut self, n: &str) -> NameId {
        self.0.name(n)
    }
    fn thread(&mut self, name: &str, worker: Option<u32>, mut events: Vec<(u64, K)>) {
        events.sort_by_key(|e| e.0);
        let t = self.0.thread(self.1, name);
        self.1 += 1;
        if let Some(w) = worker {
            self.0.worker(t, w);
        }
        for (ts_ns, kind) in events {
            self.0.push(t, Event { ts_ns, kind });
        }
    }
    fn build(self) -> Trace {
        self.0.build()
    }
    /// A guest's `install` span opening at `at` in the seat named `seat` (its `guest.seat`
    /// argument right after the begin).
    fn guest_install_begin(&mut self, at: u64, seat: &str) -> [(u64, K); 2] {
        let key = self.name(threadlab_trace::ARG_GUEST_SEAT);
        let value = self.name(seat);
        [
            (
                at,
                K::TaskBegin {
                    kind: TaskKind::Install,
                    flow: None,
                },
            ),
            (at, K::Arg { key, value }),
        ]
    }
}

fn os(ts: u64, cpu: u64, rq: u64, vol: u64, invol: u64) -> [(u64, K); 2] {
    [
        (
            ts,
            K::OsSched {
                on_cpu_ns: cpu,
                runqueue_ns: rq,
            },
        ),
        (
            ts,
            K::OsSwitches {
                voluntary: vol,
                involuntary: invol,
            },
        ),
    ]
}

fn zone(name: NameId, from: u64, to: u64) -> [(u64, K); 2] {
    [(from, K::ZoneBegin { name }), (to, K::ZoneEnd)]
}

fn task(from: u64, to: u64) -> [(u64, K); 2] {
    [
        (
            from,
            K::TaskBegin {
                kind: TaskKind::LoopChunk,
                flow: None,
            },
        ),
        (to, K::TaskEnd),
    ]
}

fn pitfalls(d: &Diagnosis) -> Vec<Pitfall> {
    d.findings.iter().map(|f| f.pitfall).collect()
}

#[test]
fn states_follow_the_innermost_span() {
    let mut b = B::new(100, 2);
    let z = b.name("z");
    let l = b.name("l");
    let mut ev = vec![
        (0, K::ZoneBegin { name: z }),
        (10, K::LockWait { lock: 7, name: l }),
        (
            30,
            K::LockAcquired {
                lock: 7,
                name: l,
                handoff: None,
            },
        ),
        (35, K::ZoneBegin { name: z }),
        (45, K::ZoneEnd),
        (
            40,
            K::LockReleased {
                lock: 7,
                name: l,
                handoff: None,
            },
        ),
        (50, K::ZoneEnd),
        (50, K::SpinBegin),
        (60, K::SpinEnd),
        (60, K::ParkBegin),
        (90, K::ParkEnd),
        // The recorder samples every live thread at stop: without it the thread would count as
        // exited at 90 (and charged nothing after its last event).
        (
            100,
            K::OsSched {
                on_cpu_ns: 0,
                runqueue_ns: 0,
            },
        ),
    ];
    ev.sort_by_key(|e| e.0);
    b.thread("w", Some(0), ev);
    let d = b.build().diagnose();
    let t = &d.threads[0];
    assert_eq!(t.lock_wait_ns, 20);
    assert_eq!(t.running_ns, 30); // 0–10, 30–50
    assert_eq!((t.spinning_ns, t.parked_ns), (10, 30));
    assert_eq!(t.searching_ns, 10); // 90–100 (closed at the recording's end)
    assert_eq!((t.spins, t.fruitless_spins, t.parks), (1, 1, 1));
    let lock = d.lock("l").unwrap();
    assert_eq!((lock.wait.total_ns, lock.hold.total_ns), (20, 10));
    // Self time of the outer zone: 50 minus the nested 10.
    let zs = d.spans.iter().find(|s| s.name == "zone z").unwrap();
    assert_eq!(zs.self_time.count, 2);
    assert_eq!(zs.self_time.total_ns, 40 + 10);
    assert_eq!(zs.inclusive_ns, 60);
}

#[test]
fn malformed_sequences_do_not_panic() {
    let mut b = B::new(5, 0);
    let z = b.name("z");
    b.thread(
        "x",
        None,
        vec![
            (9, K::TaskEnd),
            (9, K::ParkEnd),
            (
                9,
                K::LockReleased {
                    lock: 1,
                    name: z,
                    handoff: None,
                },
            ),
            (10, K::ZoneBegin { name: z }),
            (10, K::Wake { woken: 99 }),
            (u64::MAX, K::LockWait { lock: 1, name: z }),
        ],
    );
    b.thread("empty", Some(u32::MAX), vec![]);
    let d = b.build().diagnose();
    assert_eq!(d.threads.len(), 2);
    let _ = d.to_string();
    let _ = d.compare(&Diagnosis::default()).to_string();
}

/// Lock contention: wait over hold above 1, over enough waits.
#[test]
fn lock_contention_when_waits_exceed_holds() {
    let build = |wait: u64| {
        let mut b = B::new(100 * MS, 2);
        let q = b.name("queue");
        let mut ev = Vec::new();
        for i in 0..20u64 {
            let t = i * 4 * MS;
            ev.push((t, K::LockWait { lock: 1, name: q }));
            ev.push((
                t + wait,
                K::LockAcquired {
                    lock: 1,
                    name: q,
                    handoff: None,
                },
            ));
            ev.push((
                t + wait + MS,
                K::LockReleased {
                    lock: 1,
                    name: q,
                    handoff: None,
                },
            ));
        }
        b.thread("a", None, ev);
        b.build().diagnose()
    };
    let contended = build(2 * MS);
    assert!(contended.has(Pitfall::LockContention), "{contended}");
    assert!(!contended.answers[2].ok);
    let f = &contended.findings[0];
    assert!((f.figure.value - 2.0).abs() < 1e-9, "{f:?}");
    assert!(!build(MS / 2).has(Pitfall::LockContention));
}

/// Imbalance: 1 - mean/max over the running times of a group with a CPU for each thread (the
/// four bands run side by side).
#[test]
fn imbalance_of_one_long_band() {
    let build = |long: u64, short: u64| {
        let mut b = B::new(20 * MS, 4);
        let z = b.name("band");
        b.thread("thread 1", None, zone(z, 0, long).to_vec());
        for i in 2..5 {
            b.thread(&format!("thread {i}"), None, zone(z, 0, short).to_vec());
        }
        b.build().diagnose()
    };
    let d = build(10 * MS, MS);
    let g = d.group("thread N").unwrap();
    assert_eq!(g.threads, 4);
    assert!((g.imbalance - (1.0 - 3.25 / 10.0)).abs() < 1e-9);
    assert!(d.has(Pitfall::Imbalance), "{d}");
    assert!(!d.answers[1].ok);
    // One band 1/6 longer than the others: 11% lost, below the threshold.
    let d = build(3_500 * US, 3 * MS);
    assert!(d.group("thread N").unwrap().imbalance > 0.1);
    assert!(!d.has(Pitfall::Imbalance), "{d}");
}

/// A worker that sat preempted inside its task did not work that long: over a window long
/// enough for the OS figures, work is running time at the on-CPU share.
#[test]
fn imbalance_counts_work_at_the_on_cpu_share() {
    let mut b = B::new(80 * MS, 2);
    // Worker 0 "ran" 80 ms but was preempted 70 of them; worker 1 ran 40 ms, 12 on a CPU.
    let mut w0 = os(0, 0, 0, 0, 0).to_vec();
    w0.extend(task(0, 80 * MS));
    w0.extend(os(80 * MS, 10 * MS, 70 * MS, 0, 0));
    b.thread("threadlab-worker-0", Some(0), w0);
    let mut w1 = os(0, 0, 0, 0, 0).to_vec();
    w1.extend(task(0, 40 * MS));
    w1.extend(os(80 * MS, 12 * MS, 28 * MS, 0, 0));
    b.thread("threadlab-worker-1", Some(1), w1);
    let d = b.build().diagnose();
    let g = d.group("threadlab-worker-N").unwrap();
    assert!(g.work_on_cpu);
    assert_eq!((g.max_work_ns, g.mean_work_ns as u64), (12 * MS, 11 * MS));
    assert!(
        !d.has(Pitfall::Imbalance),
        "wall time alone would say 25%: {d}"
    );
    assert!(d.has(Pitfall::BusyMachine), "{d}");
}

#[test]
fn oversubscription_and_preemption_from_schedstat() {
    // 8 threads runnable over `window` on 2 CPUs: each ran a quarter of it and waited the rest.
    let busy = |window: u64| {
        let mut b = B::new(window, 2);
        let z = b.name("spin");
        for i in 0..8 {
            let mut ev = os(0, 0, 0, 0, 0).to_vec();
            ev.extend(zone(z, 0, window));
            ev.extend(os(window, window / 4, window * 3 / 4, 0, 40));
            b.thread(&format!("busy {i}"), None, ev);
        }
        b.build().diagnose()
    };
    let d = busy(40 * MS);
    assert!((d.os.runnable_avg - 8.0).abs() < 1e-9);
    assert!((d.os.preempted_share - 0.75).abs() < 1e-9);
    let p = pitfalls(&d);
    assert!(p.contains(&Pitfall::Oversubscription) && p.contains(&Pitfall::Preemption));
    // Over 5 ms the kernel's tick-based accounting is too coarse to judge.
    let d = busy(5 * MS);
    assert!(pitfalls(&d).is_empty(), "{d}");
    assert!(d.answers[3].answer.contains("too short"));

    // Two threads on 2 CPUs preempted by someone else: a busy machine, not the program.
    let mut b = B::new(40 * MS, 2);
    for i in 0..2 {
        let mut ev = os(0, 0, 0, 0, 0).to_vec();
        ev.extend(os(40 * MS, 20 * MS, 20 * MS, 0, 40));
        b.thread(&format!("w{i}"), None, ev);
    }
    let p = pitfalls(&b.build().diagnose());
    assert_eq!(p, vec![Pitfall::BusyMachine]);
}

#[test]
fn thread_creation_when_threads_work_less_than_their_start_interval() {
    let build = |work: u64| {
        let mut b = B::new(10 * MS, 2);
        let z = b.name("row");
        for i in 0..20u64 {
            let t = i * 20 * US;
            b.thread(&format!("thread {i}"), None, zone(z, t, t + work).to_vec());
        }
        b.build().diagnose()
    };
    let d = build(2 * US);
    assert!(d.has(Pitfall::ThreadCreation), "{d}");
    assert!(
        !d.has(Pitfall::Imbalance),
        "20 threads on 2 CPUs are not judged for balance"
    );
    assert!(!build(200 * US).has(Pitfall::ThreadCreation));
}

#[test]
fn park_wake_churn_when_blocks_buy_little_cpu() {
    // 200 blocks in 10 ms: 10 µs of CPU per block is churn, 45 µs is not far from it, 60 µs
    // is not.
    let build = |cpu: u64| {
        let mut b = B::new(10 * MS, 2);
        let mut ev = os(0, 0, 0, 0, 0).to_vec();
        ev.extend(os(10 * MS, cpu, 0, 200, 0));
        b.thread("consumer", None, ev);
        b.build().diagnose()
    };
    assert!(build(2 * MS).has(Pitfall::ParkWakeChurn));
    assert!(build(9 * MS).has(Pitfall::ParkWakeChurn));
    assert!(!build(12 * MS).has(Pitfall::ParkWakeChurn));
}

/// A lock wait that blocked is a voluntary switch too: reported as a wait for its lock, it is
/// not counted again as a block of park/wake churn. Blocks that are no lock wait still are.
#[test]
fn lock_waits_are_not_counted_again_as_park_wake_churn() {
    // Two threads, 300 short contended acquisitions each in 20 ms, 3 ms of CPU: 10 µs a block.
    let build = |parks: bool| {
        let mut b = B::new(20 * MS, 2);
        let l = b.name("queue");
        for i in 0..2u64 {
            let mut ev = os(0, 0, 0, 0, 0).to_vec();
            for k in 0..300u64 {
                let at = k * 60 * US + i * 10 * US;
                if parks {
                    ev.extend([(at, K::ParkBegin), (at + 20 * US, K::ParkEnd)]);
                } else {
                    ev.push((at, K::LockWait { lock: 1, name: l }));
                    ev.push((
                        at + 20 * US,
                        K::LockAcquired {
                            lock: 1,
                            name: l,
                            handoff: None,
                        },
                    ));
                    ev.push((
                        at + 25 * US,
                        K::LockReleased {
                            lock: 1,
                            name: l,
                            handoff: None,
                        },
                    ));
                }
            }
            ev.extend(os(20 * MS, 3 * MS, 0, 300, 0));
            b.thread(&format!("worker {i}"), None, ev);
        }
        b.build().diagnose()
    };
    let locks = build(false);
    assert!(locks.has(Pitfall::LockContention), "{locks}");
    let g = locks.group("worker N").unwrap();
    assert_eq!((g.blocks, g.blocks_outside_lock_waits), (600, 0));
    assert!(!locks.has(Pitfall::ParkWakeChurn), "{locks}");
    let parks = build(true);
    assert!(parks.has(Pitfall::ParkWakeChurn), "{parks}");
}

/// `main` starts two workers and joins them, all three named after the program: the joining
/// thread is no member of their work, so its wait is no capacity lost. A `main` that takes its
/// own share of the work is a member, and a worker that gets little work is an imbalance.
#[test]
fn a_thread_that_starts_the_others_and_waits_for_them_is_no_idle_member() {
    // `main_works`: main works alongside the others instead of parking; `lazy`: worker 2
    // works 10 ms of the 99 and then waits.
    let build = |main_works: bool, lazy: bool| {
        let mut b = B::new(100 * MS, 4);
        let z = b.name("work");
        let mut main = zone(z, 0, MS / 2).to_vec();
        if main_works {
            main.extend(zone(z, MS, 100 * MS));
        } else {
            main.extend([(MS, K::ParkBegin), (100 * MS, K::ParkEnd)]);
        }
        b.thread("prog", None, main);
        b.thread("prog", None, zone(z, MS, 100 * MS).to_vec());
        let mut w2 = zone(z, MS, if lazy { 11 * MS } else { 100 * MS }).to_vec();
        if lazy {
            w2.extend([(11 * MS, K::ParkBegin), (100 * MS, K::ParkEnd)]);
        }
        b.thread("prog", None, w2);
        b.build().diagnose()
    };
    let joined = build(false, false);
    let g = joined.group("prog").unwrap();
    assert_eq!((g.threads, g.members), (3, 2), "{joined}");
    assert!(g.joiner.is_some());
    assert!(g.imbalance < 1e-9, "{joined}");
    assert!(!joined.has(Pitfall::Imbalance), "{joined}");
    assert!(joined.answers[1].answer.contains("waited for them"));

    let shared = build(true, false);
    let g = shared.group("prog").unwrap();
    assert_eq!((g.members, g.joiner.as_deref()), (3, None), "{shared}");
    assert!(!shared.has(Pitfall::Imbalance), "{shared}");

    let lazy = build(false, true);
    let g = lazy.group("prog").unwrap();
    assert_eq!(g.members, 2, "{lazy}");
    // 99 + 10 of 2 × 99 ms.
    assert!((g.imbalance - (1.0 - 109.0 / 198.0)).abs() < 1e-9, "{lazy}");
    assert!(lazy.has(Pitfall::Imbalance), "{lazy}");
}

/// With more threads than CPUs, a thread that waits leaves no CPU idle: four threads on two
/// CPUs that kept both busy lost nothing (the Go runtime's threads under one contended
/// `sync.Mutex` read 43% lost as `1 - mean/max`), while one that did nearly all the work on
/// its own left one CPU idle.
#[test]
fn capacity_is_bounded_by_the_cpus() {
    let build = |works: [u64; 4]| {
        let mut b = B::new(100 * MS, 2);
        let z = b.name("run");
        for (i, w) in works.into_iter().enumerate() {
            b.thread(&format!("m{i}"), None, zone(z, 0, w).to_vec());
        }
        b.build().diagnose()
    };
    let busy = build([90 * MS, 80 * MS, 25 * MS, 5 * MS]);
    let g = busy.group("mN").unwrap();
    assert_eq!(g.capacity_cpus, 2);
    assert!(g.imbalance < 1e-9, "{busy}");
    assert!(!busy.has(Pitfall::Imbalance), "{busy}");
    let alone = build([90 * MS, 5 * MS, 5 * MS, 5 * MS]);
    let g = alone.group("mN").unwrap();
    assert!(
        (g.imbalance - (1.0 - 105.0 / 180.0)).abs() < 1e-9,
        "{alone}"
    );
    assert!(alone.has(Pitfall::Imbalance), "{alone}");
}

#[test]
fn long_task_and_wake_latency() {
    // Ten 50 µs tasks, then one of 10 ms while worker 1 is parked (`busy`: running).
    let build = |busy: bool| {
        let mut b = B::new(20 * MS, 2);
        let mut ev = Vec::new();
        for i in 0..10u64 {
            ev.extend(task(i * 100 * US, i * 100 * US + 50 * US));
        }
        ev.extend(task(2 * MS, 12 * MS));
        ev.push((12 * MS, K::Wake { woken: 1 }));
        b.thread("threadlab-worker-0", Some(0), ev);
        let other = if busy {
            task(MS, 12 * MS + 30 * US).to_vec()
        } else {
            vec![(MS, K::ParkBegin), (12 * MS + 30 * US, K::ParkEnd)]
        };
        b.thread("threadlab-worker-1", Some(1), other);
        b.build().diagnose()
    };
    assert!(
        !build(true).has(Pitfall::LongTask),
        "the other worker was busy"
    );
    let d = build(false);
    assert!(d.has(Pitfall::LongTask), "{d}");
    assert_eq!(d.long_tasks[0].others_idle, 1.0);
    assert_eq!(d.runtime.wake_latency.count, 1);
    assert_eq!(d.runtime.wake_latency.max_ns, 30 * US);
    assert_eq!(d.runtime.workers, 2);
}

#[test]
fn compare_sorts_by_absolute_difference_and_flags_noise() {
    let build = |alloc: u64, compute: u64| {
        let mut b = B::new(100 * MS, 2);
        let a = b.name("alloc");
        let c = b.name("compute");
        let mut ev = Vec::new();
        for i in 0..10u64 {
            let t = i * 5 * MS;
            ev.extend(zone(c, t, t + compute));
            ev.extend(zone(a, t + compute, t + compute + alloc));
        }
        b.thread("w", None, ev);
        b.build().diagnose()
    };
    let cmp = build(100 * US, MS).compare(&build(2 * MS, MS + 10 * US));
    assert_eq!(cmp.rows[0].name, "zone alloc");
    assert!(!cmp.rows[0].noise);
    assert_eq!(cmp.rows[0].diff_total_ns, 19 * MS as i64);
    assert_eq!(cmp.rows[1].name, "zone compute");
    assert!(cmp.rows[1].noise, "1% more is noise");
    assert!(cmp.to_string().contains("zone alloc"));
}

/// A thread that exits early is charged for its own life only, not up to the recording's end.
#[test]
fn an_exited_thread_has_no_time_after_its_last_event() {
    let mut b = TraceBuilder::new();
    let long = b.thread(1, "main");
    let short = b.thread(2, "task 7");
    let zone = b.name("work");
    b.push(
        long,
        Event {
            ts_ns: 0,
            kind: K::ZoneBegin { name: zone },
        },
    );
    b.push(
        long,
        Event {
            ts_ns: 1_000_000,
            kind: K::ZoneEnd,
        },
    );
    b.push(
        short,
        Event {
            ts_ns: 100,
            kind: K::ZoneBegin { name: zone },
        },
    );
    b.push(
        short,
        Event {
            ts_ns: 300,
            kind: K::ZoneEnd,
        },
    );
    b.push(
        short,
        Event {
            ts_ns: 400,
            kind: K::ZoneBegin { name: zone },
        },
    );
    b.push(
        short,
        Event {
            ts_ns: 500,
            kind: K::ZoneEnd,
        },
    );
    b.duration_ns(1_000_000);
    let d = b.build().diagnose();
    let t = d.threads.iter().find(|t| t.tid == 2).expect("thread 2");
    assert!(t.exited);
    assert_eq!((t.running_ns, t.other_ns), (300, 100));
    let m = d.threads.iter().find(|t| t.tid == 1).expect("thread 1");
    assert_eq!((m.running_ns, m.other_ns), (1_000_000, 0));
}

#[test]
fn long_task_imbalance_and_compare_name_the_task_and_its_zone() {
    // As `long_task_and_wake_latency`, with every task named and located, and the long one
    // (named `flush`) spending its time in zone `encode`; worker 1 parks meanwhile.
    let build = |long: u64| {
        let mut b = B::new(20 * MS, 2);
        let (key_name, key_at) = (
            b.name(threadlab_trace::ARG_TASK_NAME),
            b.name(threadlab_trace::ARG_TASK_LOCATION),
        );
        let (small, flush, at, encode) = (
            b.name("small"),
            b.name("flush"),
            b.name("app.rs:7:9"),
            b.name("encode"),
        );
        let named = |from: u64, to: u64, name: NameId| {
            let mut ev = task(from, to).to_vec();
            ev.insert(
                1,
                (
                    from,
                    K::Arg {
                        key: key_name,
                        value: name,
                    },
                ),
            );
            ev.insert(
                2,
                (
                    from,
                    K::Arg {
                        key: key_at,
                        value: at,
                    },
                ),
            );
            ev
        };
        let mut ev = Vec::new();
        for i in 0..10u64 {
            ev.extend(named(i * 100 * US, i * 100 * US + 50 * US, small));
        }
        let mut flush_task = named(2 * MS, 2 * MS + long, flush);
        flush_task.splice(
            3..3,
            zone(encode, 2 * MS + 10 * US, 2 * MS + long - 10 * US),
        );
        ev.extend(flush_task);
        b.thread("threadlab-worker-0", Some(0), ev);
        b.thread(
            "threadlab-worker-1",
            Some(1),
            vec![(MS, K::ParkBegin), (2 * MS + long + 30 * US, K::ParkEnd)],
        );
        b.build().diagnose()
    };
    let d = build(10 * MS);
    let long = d
        .finding(Pitfall::LongTask)
        .unwrap_or_else(|| panic!("long task: {d}"));
    assert_eq!(long.subject, "task loop-chunk `flush`", "{d}");
    assert!(
        long.evidence.contains("(`flush`, mostly in zone `encode`)"),
        "{}",
        long.evidence
    );
    assert_eq!(d.long_tasks[0].task.as_deref(), Some("flush"));
    let busiest = d
        .group("threadlab-worker-N")
        .and_then(|g| g.busiest.clone())
        .expect("busiest");
    assert_eq!(busiest.thread, "threadlab-worker-0");
    assert_eq!(busiest.zone.as_ref().map(|z| z.0.as_str()), Some("encode"));
    assert_eq!(busiest.task.as_ref().map(|t| t.0.as_str()), Some("flush"));
    let imbalance = d
        .finding(Pitfall::Imbalance)
        .unwrap_or_else(|| panic!("imbalance: {d}"));
    assert!(
        imbalance.evidence.contains("ran most zone `encode`"),
        "{}",
        imbalance.evidence
    );
    // Named tasks get rows of their own, which `compare` lines up.
    assert!(d.spans.iter().any(|s| s.name == "task loop-chunk `flush`"));
    let cmp = build(5 * MS).compare(&d);
    let row = cmp
        .rows
        .iter()
        .find(|r| r.name == "task loop-chunk `flush`")
        .expect("a row for flush");
    assert_eq!(row.a.count, 1);
    assert_eq!(row.b.count, 1);
}

#[test]
fn a_thread_born_during_the_recording_counts_from_its_birth() {
    // Four threads born at 0: each waited 9 ms for a CPU and ran 1 ms before its first event at
    // 10 ms (a birth sample of zeros, then its first real sample there), then worked 1 ms. The
    // OS window starts at their births, so 4 threads were runnable over the 11 ms (not 44 over
    // the 1 ms between their first and last events).
    let mut b = B::new(11 * MS, 2);
    let z = b.name("row");
    for i in 0..4 {
        let mut ev = os(10 * MS, 0, 0, 0, 0).to_vec();
        ev.extend(os(10 * MS, MS, 9 * MS, 0, 3));
        ev.extend(zone(z, 10 * MS, 11 * MS));
        ev.extend(os(11 * MS, 2 * MS, 9 * MS, 0, 3));
        b.thread(&format!("row {i}"), None, ev);
    }
    let d = b.build().diagnose();
    assert!(
        d.threads.iter().all(|t| t.os_from_ns == 0),
        "{:?}",
        d.threads
    );
    assert_eq!(d.os.active_ns, 11 * MS);
    assert!(
        (d.os.runnable_avg - 4.0).abs() < 1e-9,
        "{}",
        d.os.runnable_avg
    );
}

/// A guest: the caller ran an `install` in worker 0's seat while worker 0 slept (its track
/// marks the span with `guest.seat` = 0), and inside it a loop chunk of 10 ms; worker 1 ran ten
/// chunks of 50 µs, then parked. The doctor reads the guest span as worker 0's work: worker 0
/// ran (11 ms), the caller's own track holds no work, the long chunk is worker 0's and the
/// workers' group is imbalanced with worker 0 the busiest.
#[test]
fn a_guests_install_span_is_read_as_its_seats_worker() {
    let build = |seat: &str| {
        let mut b = B::new(20 * MS, 2);
        b.thread(
            "threadlab-worker-0",
            Some(0),
            vec![(100 * US, K::ParkBegin), (19 * MS, K::ParkEnd)],
        );
        let mut ev = Vec::new();
        for i in 0..10u64 {
            ev.extend(task(i * 60 * US, i * 60 * US + 50 * US));
        }
        ev.extend([(MS, K::ParkBegin), (19 * MS, K::ParkEnd)]);
        b.thread("threadlab-worker-1", Some(1), ev);
        let mut guest = b.guest_install_begin(2 * MS, seat).to_vec();
        guest.extend(task(2 * MS + 10 * US, 12 * MS + 10 * US));
        guest.push((13 * MS, K::TaskEnd));
        b.thread("main", None, guest);
        b.build().diagnose()
    };
    let d = build("0");
    let thread = |name: &str| d.threads.iter().find(|t| t.name == name).unwrap();
    assert_eq!(thread("threadlab-worker-0").running_ns, 11 * MS, "{d}");
    assert_eq!(thread("threadlab-worker-0").tasks, 2, "{d}");
    assert_eq!(thread("main").running_ns, 0, "{d}");
    assert_eq!(thread("main").tasks, 0, "{d}");
    // Parked before and after the guest's span, running during it.
    assert_eq!(
        thread("threadlab-worker-0").parked_ns,
        (19 * MS - 100 * US) - 11 * MS,
        "{d}"
    );
    let long = d
        .long_tasks
        .first()
        .unwrap_or_else(|| panic!("no long task:\n{d}"));
    assert_eq!(long.thread, "threadlab-worker-0", "{d}");
    let workers = d
        .groups
        .iter()
        .find(|g| g.name == "threadlab-worker-N")
        .unwrap();
    assert!(d.has(Pitfall::Imbalance), "{d}");
    assert_eq!(
        workers.busiest.as_ref().map(|b| b.thread.as_str()),
        Some("threadlab-worker-0"),
        "{d}"
    );
    // Worker 7 recorded nothing (it slept through the recording): its seat is read as a thread
    // of its own, idle outside the guest's span, and the caller's track holds no work.
    let d = build("7");
    let thread = |name: &str| d.threads.iter().find(|t| t.name == name).unwrap();
    assert_eq!(thread("main").running_ns, 0, "{d}");
    let seven = thread("threadlab-worker-7"); // named like the other workers
    assert_eq!((seven.worker, seven.running_ns), (Some(7), 11 * MS), "{d}");
    assert!(!seven.exited, "{d}");
    // A seat that is not a number: the span stays on the caller's track.
    let d = build("x");
    let main = d.threads.iter().find(|t| t.name == "main").unwrap();
    assert_eq!(main.running_ns, 11 * MS, "{d}");
}

/// The OS samples a guest took inside its install span are its own thread's counters: they stay
/// on its track when the span moves to the seat, so one thread's CPU time is counted once (the
/// samples moved with the span made a 2-CPU process read "2.88 of 2 CPUs") and a worker's
/// figures never mix another thread's counters with its own.
#[test]
fn a_guests_os_samples_stay_on_its_own_thread() {
    let build = |seat: &str| {
        let mut b = B::new(20 * MS, 2);
        // Worker 0 asleep all along (its counters barely move); worker 1 busy all along.
        let mut w0 = os(0, MS, 0, 0, 0).to_vec();
        w0.extend([(100 * US, K::ParkBegin), (19 * MS, K::ParkEnd)]);
        w0.extend(os(20 * MS, MS, 0, 1, 0));
        b.thread("threadlab-worker-0", Some(0), w0);
        let mut w1 = os(0, 0, 0, 0, 0).to_vec();
        w1.extend(task(10 * US, 19 * MS));
        w1.extend(os(20 * MS, 20 * MS, 0, 0, 0));
        b.thread("threadlab-worker-1", Some(1), w1);
        // The caller, on a CPU all along: samples before, inside and after its guest span.
        let mut guest = os(0, 100 * MS, 0, 0, 0).to_vec();
        guest.extend(b.guest_install_begin(2 * MS, seat));
        guest.extend(os(5 * MS, 105 * MS, 0, 0, 0));
        guest.extend(task(5 * MS + 10 * US, 9 * MS));
        guest.extend(os(10 * MS, 110 * MS, 0, 0, 0));
        guest.push((13 * MS, K::TaskEnd));
        guest.extend(os(20 * MS, 120 * MS, 0, 0, 0));
        b.thread("main", None, guest);
        b.build().diagnose()
    };
    for seat in ["0", "7"] {
        let d = build(seat);
        assert!(
            d.os.cpus_used_avg <= 2.0 + 1e-9,
            "seat {seat}: {} of 2 CPUs\n{d}",
            d.os.cpus_used_avg
        );
        let thread = |name: &str| d.threads.iter().find(|t| t.name == name).unwrap();
        assert_eq!(thread("main").on_cpu_ns, 20 * MS, "seat {seat}\n{d}");
        assert_eq!(
            thread("threadlab-worker-1").on_cpu_ns,
            20 * MS,
            "seat {seat}\n{d}"
        );
        let seat_thread = if seat == "0" {
            "threadlab-worker-0"
        } else {
            "threadlab-worker-7"
        };
        // The seat ran the guest's work, but on a CPU it was the guest's thread.
        assert!(thread(seat_thread).running_ns > 0, "seat {seat}\n{d}");
        assert_eq!(thread(seat_thread).on_cpu_ns, 0, "seat {seat}\n{d}");
    }
}

#[test]
fn cpu_time_of_a_short_trace_is_clipped_to_the_sampled_window_and_not_judged() {
    // The kernel adds a running thread's CPU time at the scheduler tick, so the second sample of
    // a 648 µs window can carry 4.5 ms of CPU time (one 4 ms tick that had not been added when
    // the first sample was read): the figure read "6.94 of 2 CPUs" before the clip.
    let mut b = B::new(660 * US, 2);
    let z = b.name("jobs");
    let mut ev = os(10 * US, 5 * MS, 0, 0, 0).to_vec();
    ev.extend(zone(z, 10 * US, 658 * US));
    ev.extend(os(658 * US, 9 * MS + 500 * US, 0, 0, 0));
    b.thread("main", None, ev);
    let d = b.build().diagnose();
    assert!(
        d.os.cpus_used_avg <= 1.0 + 1e-9,
        "one thread used {} CPUs",
        d.os.cpus_used_avg
    );
    assert!(
        bounds_violations(&d).is_empty(),
        "{:?}",
        bounds_violations(&d)
    );
    let q1 = &d.answers[0].answer;
    assert!(
        q1.contains("too short to judge") && !q1.contains("CPU(s) on average"),
        "{q1}"
    );
    // The context-switching question has no figure rather than a 0.
    assert!(d.answers[3].figure.is_none(), "{:?}", d.answers[3]);
    assert!(!d.to_string().contains("out of bounds"), "{d}");
}

#[test]
fn bounds_name_a_figure_outside_them() {
    let mut d = Diagnosis::default();
    d.os.cpus = 2;
    d.os.active_ns = OS_MIN_WINDOW_NS;
    d.os.cpus_used_avg = 7.01;
    d.os.preempted_share = f64::NAN;
    let v = bounds_violations(&d);
    assert_eq!(v.len(), 2, "{v:?}");
    assert!(v.iter().any(|s| s.contains("7.01 of 2 CPU")), "{v:?}");
    assert!(d.to_string().contains("figure out of bounds"));
}

/// Spare threads read back as the tasks that blocked the pool's workers: the task open on each
/// seat the spare thread names (a worker's own track, or a guest's install span in that seat)
/// when it started; repeated spare threads for the same tasks are one finding; a seat inside
/// `threadlab::blocking` asked for its spare thread and raises none; and the spare threads do
/// not count as workers of the pool.
#[test]
fn spare_threads_name_the_tasks_that_blocked_the_workers() {
    use threadlab_trace::{
        ARG_SPARE_FOR, ARG_TASK_LOCATION, ARG_TASK_NAME, BLOCKING_ZONE, SPARE_ZONE,
    };
    let mut b = B::new(20 * MS, 2);
    let (name_key, loc_key) = (b.name(ARG_TASK_NAME), b.name(ARG_TASK_LOCATION));
    let spare_key = b.name(ARG_SPARE_FOR);
    let (spare_zone, blocking_zone) = (b.name(SPARE_ZONE), b.name(BLOCKING_ZONE));
    let named = |b: &mut B, name: &str, at: &str, from: u64, to: u64| {
        let (name, at) = (b.name(name), b.name(at));
        [
            (
                from,
                K::TaskBegin {
                    kind: TaskKind::Spawn,
                    flow: None,
                },
            ),
            (
                from,
                K::Arg {
                    key: name_key,
                    value: name,
                },
            ),
            (
                from,
                K::Arg {
                    key: loc_key,
                    value: at,
                },
            ),
            (to, K::TaskEnd),
        ]
    };
    // Worker 0 runs `meets`, then `waits`, which calls `threadlab::blocking` at 16 ms.
    let mut w0 = Vec::new();
    w0.extend(named(&mut b, "meets", "a.rs:1:1", MS, 10 * MS));
    w0.extend(named(&mut b, "waits", "b.rs:2:2", 11 * MS, 19 * MS));
    w0.extend(zone(blocking_zone, 16 * MS, 18 * MS));
    b.thread("threadlab-0", Some(0), w0);
    // Worker 1 slept through the recording: a guest held its seat and ran `meets` twice.
    let mut guest = b.guest_install_begin(MS / 2, "1").to_vec();
    guest.extend(named(&mut b, "meets", "a.rs:1:1", MS, 10 * MS));
    guest.extend(named(&mut b, "meets", "a.rs:1:1", 11 * MS, 19 * MS));
    guest.push((19 * MS + MS / 2, K::TaskEnd));
    b.thread("main", None, guest);
    // Spare threads: (start, end, seats, tasks run).
    let spares = [
        (5 * MS, 6 * MS, "0,1", 1),
        (7 * MS, 8 * MS, "0,1", 2),
        (13 * MS, 14 * MS, "0,1", 0),
        (17 * MS, 17 * MS + MS / 2, "0", 0),
        (18 * MS + MS / 2, 19 * MS, "0", 0),
    ];
    for (k, &(from, to, seats, tasks)) in spares.iter().enumerate() {
        let seats = b.name(seats);
        let mut ev = vec![
            (from, K::ZoneBegin { name: spare_zone }),
            (
                from,
                K::Arg {
                    key: spare_key,
                    value: seats,
                },
            ),
            (to, K::ZoneEnd),
        ];
        for i in 0..tasks {
            ev.extend(task(from + (i + 1) * 100 * US, from + (i + 2) * 100 * US));
        }
        b.thread(
            &format!("threadlab-spare-{}", k % 2),
            Some(2 + k as u32 % 2),
            ev,
        );
    }
    let d = b.build().diagnose();
    let found: Vec<&Finding> = d
        .findings
        .iter()
        .filter(|f| f.pitfall == Pitfall::BlockedWorkers)
        .collect();
    assert_eq!(found.len(), 2, "{d}");
    // The two spare threads for `meets` on both seats are one finding, the longest first.
    assert_eq!(found[0].subject, "task `meets`");
    for part in [
        "workers 0 and 1 sat blocked in the kernel inside `meets` (spawned at a.rs:1:1) while \
         work waited in the pool, up to 6.00 ms into the task before a spare thread arrived: 2 \
         spare thread(s)",
        "2 spare thread(s)",
        "for 2.00 ms in all",
        "ran 3 task(s)",
    ] {
        assert!(found[0].evidence.contains(part), "{part}: {d}");
    }
    assert_eq!(found[0].figure.value, 2.0);
    assert_eq!(d.blocked[0].held_ns, 6 * MS);
    // At 13 ms the seats held different tasks: a finding of its own, naming both.
    assert_eq!(found[1].subject, "tasks `meets`, `waits`", "{d}");
    assert!(found[1].evidence.contains("(spawned at b.rs:2:2)"), "{d}");
    // At 17 ms worker 0 was inside `threadlab::blocking`, and at 18.5 ms its task had gone on
    // past that call (the spare thread it asked for came late): asked for, no finding.
    assert_eq!(d.blocked.len(), 3, "{:?}", d.blocked);
    let asked: Vec<_> = d.blocked.iter().filter(|b| b.declared).collect();
    assert_eq!(asked.len(), 1, "{:?}", d.blocked);
    assert_eq!(
        (asked[0].seats.as_slice(), asked[0].spare_threads),
        (&[0][..], 2)
    );
    // Two workers, whatever the spare threads' worker indices; a spare thread's life is not
    // work: only its tasks are.
    assert_eq!((d.runtime.workers, d.runtime.spare_threads), (2, 5), "{d}");
    let spare = d.threads.iter().find(|t| t.spare && t.tasks == 2).unwrap();
    assert_eq!((spare.zones, spare.running_ns), (0, 200 * US), "{d}");
    assert_eq!(spare.searching_ns, 800 * US, "{d}");
    assert!(!d.answers[0].ok, "{d}");
    assert!(
        bounds_violations(&d).is_empty(),
        "{:?}",
        bounds_violations(&d)
    );
}
