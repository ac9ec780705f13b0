//! The elastic pool under stress: a pool of its own with a keep-alive of 0–1 ms, so its
//! workers retire between and during the scenarios and every kind of submission (joins,
//! scopes, loops, serial queues, futures and channels, work for one given worker) has to
//! start them again. The scenarios book their own tasks as on the shared pool; this adds the
//! seat's books: each worker's threads started and retired agree, and the pool shuts down with
//! every task run.

use super::ledger::{Ledger, Rng};
use super::scenarios::{self, exactly_once, Slots};
use std::sync::Arc;
use std::time::Duration;
use threadlab::Pool;

/// A pool of `threads` workers that retire after `keep_alive` without work; a panic in a task
/// is left to the scenario that caused it.
fn elastic(threads: usize, keep_alive: Duration) -> Result<Pool, threadlab::BuildError> {
    Pool::builder()
        .threads(threads)
        .keep_alive(keep_alive)
        .panic_handler(|_| {})
        .build()
}

/// One elastic pool: a few rounds of a random scenario with a random pause between (longer
/// than the keep-alive half the time), then its shutdown.
pub fn elastic_pool(rng: &mut Rng, ledger: &Ledger) {
    let threads = rng.range(1, 4) as usize;
    let keep_alive = Duration::from_micros(rng.range(0, 1_000));
    let Some(pool) = ledger.built("elastic pool", elastic(threads, keep_alive)) else {
        return;
    };
    for _ in 0..rng.range(1, 6) {
        match rng.below(6) {
            0 => scenarios::join_tree(rng, &pool, ledger),
            1 => scenarios::scope_spawns(rng, &pool, ledger),
            2 => scenarios::loops(rng, &pool, ledger),
            3 => scenarios::serial_queues(rng, &pool, ledger),
            4 => scenarios::futures(rng, &pool, ledger),
            _ => mailed(rng, &pool, ledger, threads),
        }
        std::thread::sleep(Duration::from_micros(rng.range(0, 3_000)));
    }
    for w in pool.metrics().workers {
        // A worker's threads: started once, then once per retirement (the last one may be
        // starting or running now).
        if w.starts < w.retirements || w.starts > w.retirements + 1 {
            ledger.discrepancy(format!(
                "elastic pool: worker {} started {} threads and retired {}",
                w.index, w.starts, w.retirements
            ));
        }
    }
    pool.shutdown();
}

/// `spawn_on` and `install_on` each worker, from outside, with pauses that let it retire.
fn mailed(rng: &mut Rng, pool: &Pool, ledger: &Ledger, threads: usize) {
    let n = rng.range(1, 64) as usize;
    let slots = Arc::new(Slots::new(2 * n));
    let (tx, rx) = std::sync::mpsc::channel();
    for i in 0..n {
        let w = i % threads;
        let (s, tx) = (Arc::clone(&slots), tx.clone());
        if pool
            .spawn_on(w, move || {
                s.hit(i);
                let _ = tx.send(());
            })
            .is_err()
        {
            ledger.discrepancy(format!("elastic pool: spawn_on({w}) refused"));
        }
        let s = Arc::clone(&slots);
        match pool.install_on(w, move || {
            s.hit(n + i);
            threadlab::current_thread_index()
        }) {
            Ok(Some(at)) if at == w => {}
            other => ledger.discrepancy(format!("elastic pool: install_on({w}) ran at {other:?}")),
        }
        if rng.below(8) == 0 {
            std::thread::sleep(Duration::from_micros(rng.range(0, 2_000)));
        }
    }
    drop(tx);
    for _ in 0..n {
        if rx.recv().is_err() {
            break;
        }
    }
    exactly_once(ledger, "elastic pool: spawn_on/install_on", &slots);
}

/// Guests on an elastic pool: a pool of 1–2 workers with a keep-alive of 0–200 µs and 2–4
/// plain threads, each calling `install` over and over (most installs also spawn 1–3 tasks into a
/// scope). Each install borrows a sleeping worker's seat or queues its closure, so seats are
/// lent and given back while their workers wake, run queued installs, retire and restart.
/// Every install and every scoped task runs exactly once.
pub fn elastic_guests(rng: &mut Rng, ledger: &Ledger) {
    let threads = rng.range(1, 3) as usize;
    let keep_alive = Duration::from_micros(rng.range(0, 200));
    let pool = elastic(threads, keep_alive).map(Arc::new);
    let Some(pool) = ledger.built("elastic guests", pool) else {
        return;
    };
    let callers = rng.range(2, 5) as usize;
    let per_caller = rng.range(1, 200) as usize;
    // Install `n`'s slot is `offsets[n]`, its 0–3 scoped tasks' the ones after it.
    let mut offsets = Vec::with_capacity(callers * per_caller + 1);
    let mut spawns = Vec::with_capacity(callers * per_caller);
    offsets.push(0);
    for _ in 0..callers * per_caller {
        let k = rng.below(4) as usize;
        spawns.push(k);
        offsets.push(offsets.last().unwrap() + 1 + k);
    }
    let slots = Arc::new(Slots::new(*offsets.last().unwrap()));
    let plan = Arc::new((offsets, spawns));
    let handles: Vec<_> = (0..callers)
        .map(|c| {
            let (pool, slots, plan) = (Arc::clone(&pool), Arc::clone(&slots), Arc::clone(&plan));
            std::thread::spawn(move || {
                for n in c * per_caller..(c + 1) * per_caller {
                    let (at, k) = (plan.0[n], plan.1[n]);
                    let s = &slots;
                    pool.install(|| {
                        s.hit(at);
                        threadlab::scope(|sc| {
                            for j in 1..=k {
                                sc.spawn(move |_| s.hit(at + j));
                            }
                        });
                    });
                }
            })
        })
        .collect();
    for h in handles {
        if h.join().is_err() {
            ledger.discrepancy("elastic guests: a caller panicked".to_string());
        }
    }
    exactly_once(ledger, "elastic guests: installs", &slots);
    match Arc::try_unwrap(pool) {
        Ok(pool) => {
            pool.shutdown();
        }
        Err(_) => ledger.discrepancy("elastic guests: the pool is still shared".to_string()),
    }
}
