//! Workers blocked in the kernel under stress: a pool of 1–3 workers whose tasks block on
//! `std` primitives that only other queued tasks release, so the round finishes only if the
//! pool's spare threads stand in for the blocked workers.
//!
//! A round is a few groups, each released only from the queue: a `Barrier` with more parties
//! than the pool has workers; receivers on `mpsc` channels whose senders are queued after them;
//! a `Mutex` + `Condvar` handshake whose setter is queued after its waiter. Each blocking wait
//! is declared with `threadlab::blocking` or left for the pool's monitor to notice (a coin per
//! group; on systems without procfs only the declared form applies), and ordinary joins and
//! nested spawns run among them. `max_spare_threads` is at least the number of blocking tasks
//! (every one of them could hold a thread at once, and one more thread is a worker), so every
//! round can finish. Half the rounds run on an elastic pool (keep-alive 0–200 µs) driven by 1–3
//! plain threads that each `install` their own groups, so the blocked threads are guests on
//! borrowed seats as well as workers. Every task runs exactly once; a round still running after
//! [`ROUND_LIMIT`] is a discrepancy that names the dice and the tasks still queued or blocked.

use super::ledger::{Ledger, Rng};
use super::scenarios::{exactly_once, Slots};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{mpsc, Arc, Barrier, Condvar, Mutex};
use std::time::Duration;
use threadlab::Pool;

/// A round still running after this is stuck: the monitor looks every 50 ms, so a
/// round needs well under a second even on a loaded machine.
const ROUND_LIMIT: Duration = Duration::from_secs(30);

/// One group of tasks that block until another task of the group runs.
#[derive(Clone, Copy, Debug)]
enum Group {
    /// `parties` tasks waiting on one barrier.
    Barrier { parties: usize },
    /// `pairs` receivers, each followed in the queue by its sender.
    Recv { pairs: usize },
    /// One waiter on a condition variable, then its setter.
    Handshake,
}

impl Group {
    /// Tasks that block, and tasks in all.
    fn counts(self) -> (usize, usize) {
        match self {
            Group::Barrier { parties } => (parties, parties),
            Group::Recv { pairs } => (pairs, 2 * pairs),
            Group::Handshake => (1, 2),
        }
    }
}

/// What each blocking task is doing, for the stuck-round message.
const QUEUED: u8 = 0;
const BLOCKED: u8 = 1;
const RELEASED: u8 = 2;

struct Round {
    /// Per caller: its groups, and whether each declares its waits with `blocking`.
    plans: Vec<Vec<(Group, bool)>>,
    /// Ordinary tasks run beside the groups, per caller.
    extra: Vec<usize>,
    slots: Slots,
    /// Per blocking task: its group's description and its state.
    waits: Vec<(String, AtomicU8)>,
}

/// Runs `wait` as the plan says: declared (`threadlab::blocking`) or left for the monitor.
fn wait_as<R>(declared: bool, state: &AtomicU8, wait: impl FnOnce() -> R) -> R {
    // Relaxed, all the states: read only for the stuck-round message.
    state.store(BLOCKED, Ordering::Relaxed);
    let r = if declared {
        threadlab::blocking(wait)
    } else {
        wait()
    };
    state.store(RELEASED, Ordering::Relaxed);
    r
}

/// One caller's groups inside one scope; `slot` and `wait` are the first indices it owns.
fn run_groups(round: &Round, caller: usize, mut slot: usize, mut wait: usize) {
    let r = round;
    threadlab::scope(|s| {
        for &(group, declared) in &r.plans[caller] {
            match group {
                Group::Barrier { parties } => {
                    let b = Arc::new(Barrier::new(parties));
                    for i in 0..parties {
                        let (b, at, w) = (Arc::clone(&b), slot + i, wait + i);
                        s.spawn(move |_| {
                            wait_as(declared, &r.waits[w].1, || b.wait());
                            r.slots.hit(at);
                        });
                    }
                }
                Group::Recv { pairs } => {
                    let mut senders = Vec::with_capacity(pairs);
                    for i in 0..pairs {
                        let (tx, rx) = mpsc::channel::<usize>();
                        senders.push(tx);
                        let (at, w) = (slot + i, wait + i);
                        s.spawn(move |_| {
                            if let Ok(v) = wait_as(declared, &r.waits[w].1, || rx.recv()) {
                                r.slots.hit(v);
                            }
                            r.slots.hit(at);
                        });
                    }
                    // Every sender queued after every receiver.
                    for (i, tx) in senders.into_iter().enumerate() {
                        let at = slot + pairs + i;
                        s.spawn(move |_| {
                            // The receiver hits the sender's slot: the value arrived once.
                            let _ = tx.send(at);
                        });
                    }
                }
                Group::Handshake => {
                    let pair = Arc::new((Mutex::new(false), Condvar::new()));
                    let (p, at, w) = (Arc::clone(&pair), slot, wait);
                    s.spawn(move |_| {
                        wait_as(declared, &r.waits[w].1, || {
                            let (m, cv) = &*p;
                            let mut set = m.lock().unwrap_or_else(|e| e.into_inner());
                            while !*set {
                                set = cv.wait(set).unwrap_or_else(|e| e.into_inner());
                            }
                        });
                        r.slots.hit(at);
                    });
                    s.spawn(move |_| {
                        let (m, cv) = &*pair;
                        *m.lock().unwrap_or_else(|e| e.into_inner()) = true;
                        cv.notify_one();
                        r.slots.hit(at + 1);
                    });
                }
            }
            let (b, t) = group.counts();
            slot += t;
            wait += b;
        }
        // Ordinary work among the blocked tasks: joins, and spawns that spawn.
        let extra = r.extra[caller];
        for i in 0..extra {
            let at = slot + i;
            if i % 2 == 0 {
                s.spawn(move |_| {
                    threadlab::join(|| r.slots.hit(at), || ());
                });
            } else {
                s.spawn(move |s2| s2.spawn(move |_| r.slots.hit(at)));
            }
        }
    });
}

/// One round: a pool of its own, the groups from one or more callers, then its books.
pub fn blocked_workers(rng: &mut Rng, ledger: &Ledger) {
    let dice = format!("{rng:?}");
    let workers = rng.range(1, 4) as usize;
    let elastic = rng.below(2) == 0;
    let callers = if elastic { rng.range(1, 4) as usize } else { 1 };
    let mut plans = Vec::with_capacity(callers);
    let mut extra = Vec::with_capacity(callers);
    let (mut blocking, mut tasks) = (0, 0);
    let mut waits = Vec::new();
    for _ in 0..callers {
        let mut plan = Vec::new();
        for _ in 0..rng.range(1, 4) {
            let group = match rng.below(3) {
                0 => Group::Barrier {
                    parties: workers + rng.range(1, 3) as usize,
                },
                1 => Group::Recv {
                    pairs: rng.range(1, workers as u64 + 2) as usize,
                },
                _ => Group::Handshake,
            };
            // Without procfs only a declared wait is noticed.
            let declared = rng.below(2) == 0 || !cfg!(target_os = "linux");
            let (b, t) = group.counts();
            for _ in 0..b {
                waits.push((format!("{group:?}"), AtomicU8::new(QUEUED)));
            }
            blocking += b;
            tasks += t;
            plan.push((group, declared));
        }
        let e = rng.below(16) as usize;
        tasks += e;
        extra.push(e);
        plans.push(plan);
    }
    let max_spare = blocking + rng.below(3) as usize;
    let builder = Pool::builder()
        .threads(workers)
        .max_spare_threads(max_spare)
        .panic_handler(|_| {});
    let builder = if elastic {
        builder.keep_alive(Duration::from_micros(rng.range(0, 200)))
    } else {
        builder
    };
    let Some(pool) = ledger.built("blocked workers", builder.build().map(Arc::new)) else {
        return;
    };
    let round = Arc::new(Round {
        plans,
        extra,
        slots: Slots::new(tasks),
        waits,
    });
    // The round runs on threads of its own, so a stuck round can be reported (and left behind)
    // instead of hanging the driver.
    let (done_tx, done_rx) = mpsc::channel();
    let (mut slot, mut wait) = (0, 0);
    for c in 0..callers {
        let (pool, round, done) = (Arc::clone(&pool), Arc::clone(&round), done_tx.clone());
        let (s0, w0) = (slot, wait);
        for &(g, _) in &round.plans[c] {
            let (b, t) = g.counts();
            slot += t;
            wait += b;
        }
        slot += round.extra[c];
        std::thread::spawn(move || {
            let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                pool.install(|| run_groups(&round, c, s0, w0))
            }))
            .is_ok();
            // Both let go before the driver is told, so it holds the last `Arc` of the pool.
            drop((pool, round));
            let _ = done.send(ok);
        });
    }
    drop(done_tx);
    for _ in 0..callers {
        match done_rx.recv_timeout(ROUND_LIMIT) {
            Ok(true) => {}
            Ok(false) => ledger.discrepancy("blocked workers: a caller panicked".to_string()),
            Err(_) => {
                let stuck: Vec<String> = round
                    .waits
                    .iter()
                    .enumerate()
                    .filter_map(|(i, (what, st))| match st.load(Ordering::Relaxed) {
                        QUEUED => Some(format!("#{i} {what} still queued")),
                        BLOCKED => Some(format!("#{i} {what} blocked")),
                        _ => None,
                    })
                    .collect();
                // The round's threads and pool are left behind: the run stops on this.
                return ledger.discrepancy(format!(
                    "blocked workers: the round from dice {dice} ({workers} workers, max {max_spare} spare threads, {callers} callers, plan {:?}) still runs after {} s; {}; pool: {:?}",
                    round.plans,
                    ROUND_LIMIT.as_secs(),
                    stuck.join(", "),
                    pool.metrics()
                ));
            }
        }
    }
    exactly_once(ledger, "blocked workers", &round.slots);
    let m = pool.metrics();
    ledger.spares(m.spare_threads_started, m.spare_tasks_run);
    drop(round);
    match Arc::try_unwrap(pool) {
        Ok(pool) => {
            pool.shutdown();
        }
        Err(_) => ledger.discrepancy("blocked workers: the pool is still shared".to_string()),
    }
}
