//! The stress scenarios. Each runs one randomised piece of work on the pools it is given and
//! checks its own books exactly: every task has a slot that it increments when it runs, and the
//! scenario compares every slot with what must have happened (run exactly once; or, where a panic
//! legitimately stops a piece of a loop, at most once) and counts the panics that came out against
//! the panics that were thrown. Anything else is a discrepancy, reported with the scenario's name.

use super::ledger::{Ledger, Rng};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};
use threadlab::{join, Pool, SerialQueue};

/// One flag per task: how many times it ran.
pub struct Slots(Vec<AtomicU8>);

impl Slots {
    pub fn new(n: usize) -> Slots {
        Slots((0..n).map(|_| AtomicU8::new(0)).collect())
    }
    pub fn hit(&self, i: usize) {
        // Relaxed: read after the work is joined (scope/join/install return, or a Release
        // counter below).
        self.0[i].fetch_add(1, Ordering::Relaxed);
    }
    /// (never ran, ran more than once).
    pub fn tally(&self) -> (usize, usize) {
        let counts = self.0.iter().map(|s| s.load(Ordering::Relaxed));
        counts.fold((0, 0), |(z, m), c| {
            (z + (c == 0) as usize, m + (c > 1) as usize)
        })
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    /// How many times slot `i` was hit.
    pub fn count(&self, i: usize) -> u8 {
        self.0[i].load(Ordering::Relaxed)
    }
}

/// A marker panic payload, so a scenario can tell its own panics from real bugs.
pub struct Planned;

fn planned_panic() -> ! {
    std::panic::panic_any(Planned)
}

/// Checks that every slot ran exactly once; books the tasks.
pub fn exactly_once(ledger: &Ledger, what: &str, slots: &Slots) {
    let (missed, twice) = slots.tally();
    if missed + twice > 0 {
        ledger.discrepancy(format!(
            "{what}: {missed} of {} tasks never ran, {twice} ran more than once",
            slots.len()
        ));
    }
    ledger.tasks(slots.len() as u64);
}

/// Books one panic that must come out of `r` (or none), and that it is ours.
fn one_panic<T>(ledger: &Ledger, what: &str, r: std::thread::Result<T>, expected: bool) {
    match r {
        Ok(_) if expected => ledger.discrepancy(format!("{what}: a planned panic was lost")),
        Ok(_) => {}
        Err(p) if !p.is::<Planned>() => ledger.discrepancy(format!(
            "{what}: an unplanned panic came out: {}",
            crate::panics::panic_message(&*p)
        )),
        Err(_) if expected => ledger.panics(1),
        Err(_) => ledger.discrepancy(format!("{what}: a panic came out of nowhere")),
    }
}

/// A random binary tree of joins; leaves count themselves, some panic. Both closures of every
/// join always run, so every leaf runs once even when some panic.
pub fn join_tree(rng: &mut Rng, pool: &Pool, ledger: &Ledger) {
    let depth = rng.range(4, 14) as u32;
    let leaves = 1usize << depth;
    let bad: Vec<usize> = (0..rng.range(0, 3))
        .map(|_| rng.below(leaves as u64) as usize)
        .collect();
    let slots = Slots::new(leaves);
    fn walk(depth: u32, first: usize, slots: &Slots, bad: &[usize]) -> u64 {
        if depth == 0 {
            slots.hit(first);
            if bad.contains(&first) {
                planned_panic();
            }
            return first as u64;
        }
        let half = 1 << (depth - 1);
        let (a, b) = join(
            || walk(depth - 1, first, slots, bad),
            || walk(depth - 1, first + half, slots, bad),
        );
        a + b
    }
    let r = catch_unwind(AssertUnwindSafe(|| {
        pool.install(|| walk(depth, 0, &slots, &bad))
    }));
    if let Ok(sum) = &r {
        let want = (leaves as u64 - 1) * leaves as u64 / 2;
        if *sum != want {
            ledger.discrepancy(format!("join tree: sum {sum}, expected {want}"));
        }
    }
    one_panic(ledger, "join tree", r, !bad.is_empty());
    exactly_once(ledger, "join tree", &slots);
}

/// A scope with spawns, nested spawns from tasks, and some panicking tasks.
pub fn scope_spawns(rng: &mut Rng, pool: &Pool, ledger: &Ledger) {
    let n = rng.range(10, 5_000) as usize;
    let nested = rng.range(0, 4) as usize;
    let bad = if rng.below(4) == 0 {
        Some(rng.below(n as u64) as usize)
    } else {
        None
    };
    let slots = Slots::new(n * (1 + nested));
    let r = catch_unwind(AssertUnwindSafe(|| {
        pool.scope(|s| {
            for i in 0..n {
                let slots = &slots;
                s.spawn(move |s| {
                    slots.hit(i);
                    for k in 0..nested {
                        s.spawn(move |_| slots.hit(n * (1 + k) + i));
                    }
                    if Some(i) == bad {
                        planned_panic();
                    }
                });
            }
        })
    }));
    one_panic(ledger, "scope", r, bad.is_some());
    exactly_once(ledger, "scope", &slots);
}

/// Fire-and-forget tasks on a pool of its own (so its panic handler counts only them), spawned
/// from outside and from a worker; waits until every task ran and every panic was handled.
pub fn fire_and_forget(rng: &mut Rng, ledger: &Ledger) {
    let n = rng.range(10, 20_000) as usize;
    let panics_planned = rng.range(0, 4);
    let handled = Arc::new(AtomicU64::new(0));
    let h = Arc::clone(&handled);
    let pool = Pool::builder()
        .threads(rng.range(1, 4) as usize)
        .panic_handler(move |p| {
            if p.is::<Planned>() {
                // Release: pairs with the Acquire wait below.
                h.fetch_add(1, Ordering::Release);
            }
        })
        .build();
    let Some(pool) = ledger.built("fire-and-forget", pool) else {
        return;
    };
    let slots = Arc::new(Slots::new(n));
    let done = Arc::new(AtomicUsize::new(0));
    let task = |i: usize| {
        let (slots, done) = (Arc::clone(&slots), Arc::clone(&done));
        move || {
            slots.hit(i);
            // Release: pairs with the Acquire wait below.
            done.fetch_add(1, Ordering::Release);
            if (i as u64) < panics_planned {
                planned_panic();
            }
        }
    };
    for i in 0..n / 2 {
        pool.spawn(task(i));
    }
    pool.install(|| (n / 2..n).for_each(|i| threadlab::spawn(task(i))));
    let deadline = Instant::now() + Duration::from_secs(60);
    while done.load(Ordering::Acquire) < n || handled.load(Ordering::Acquire) < panics_planned {
        if Instant::now() > deadline {
            ledger.discrepancy(format!(
                "fire-and-forget: after 60 s, {} of {n} tasks ran and {} of {panics_planned} panics were handled",
                done.load(Ordering::Acquire),
                handled.load(Ordering::Acquire)
            ));
            return;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    let report = pool.shutdown();
    if report.panicked_tasks != panics_planned {
        ledger.discrepancy(format!(
            "fire-and-forget: shutdown counted {} panics, {panics_planned} planned",
            report.panicked_tasks
        ));
    }
    ledger.panics(panics_planned);
    exactly_once(ledger, "fire-and-forget", &slots);
}

/// The parallel loops; sometimes one item panics, which stops the rest of its piece (so those
/// items may not run), and the panic must come out once.
pub fn loops(rng: &mut Rng, pool: &Pool, ledger: &Ledger) {
    let n = rng.range(1, 200_000) as usize;
    let bad = (rng.below(5) == 0).then(|| rng.below(n as u64) as usize);
    let slots = Slots::new(n);
    let kind = rng.below(3);
    let r = catch_unwind(AssertUnwindSafe(|| {
        pool.install(|| {
            let body = |i: usize| {
                slots.hit(i);
                if Some(i) == bad {
                    planned_panic();
                }
            };
            match kind {
                0 => threadlab::for_each(0..n, body),
                1 => threadlab::for_each_grain(0..n, rng_grain(n), body),
                _ => {
                    let mut idx: Vec<usize> = (0..n).collect();
                    threadlab::for_each_chunk_mut(&mut idx, 1 + n / 97, |_, chunk| {
                        chunk.iter().for_each(|&i| body(i))
                    });
                }
            }
        })
    }));
    one_panic(ledger, "loop", r, bad.is_some());
    let (missed, twice) = slots.tally();
    if twice > 0 || (bad.is_none() && missed > 0) {
        ledger.discrepancy(format!(
            "loop: {missed} of {n} items never ran, {twice} ran more than once"
        ));
    }
    ledger.tasks((n - missed) as u64);
}

fn rng_grain(n: usize) -> usize {
    (n / 64).max(1)
}

/// Serial queues fed by several producer threads: per queue one task at a time, each
/// producer's tasks in the order it pushed them, every task once.
pub fn serial_queues(rng: &mut Rng, pool: &Pool, ledger: &Ledger) {
    let queues = rng.range(1, 8) as usize;
    let producers = rng.range(1, 4) as usize;
    let per = rng.range(1, 2_000) as usize;
    let slots = Arc::new(Slots::new(queues * producers * per));
    let state: Arc<Vec<(AtomicBool, Vec<AtomicUsize>)>> = Arc::new(
        (0..queues)
            .map(|_| {
                let next = (0..producers).map(|_| AtomicUsize::new(0)).collect();
                (AtomicBool::new(false), next)
            })
            .collect(),
    );
    let faults = Arc::new(AtomicUsize::new(0));
    let qs: Vec<SerialQueue> = (0..queues).map(|_| SerialQueue::new(pool)).collect();
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|s| {
        for p in 0..producers {
            let (qs, slots, state, faults, tx) = (&qs, &slots, &state, &faults, tx.clone());
            s.spawn(move || {
                for k in 0..per {
                    for (q, queue) in qs.iter().enumerate() {
                        let (slots, state, faults, tx) =
                            (slots.clone(), state.clone(), faults.clone(), tx.clone());
                        queue.push(move || {
                            let (running, next) = &state[q];
                            // SeqCst: one-at-a-time check; a second runner would see `true`.
                            if running.swap(true, Ordering::SeqCst) {
                                faults.fetch_add(1, Ordering::SeqCst);
                            }
                            if next[p].swap(k + 1, Ordering::SeqCst) != k {
                                faults.fetch_add(1, Ordering::SeqCst);
                            }
                            slots.hit((q * producers + p) * per + k);
                            running.store(false, Ordering::SeqCst);
                            let _ = tx.send(());
                        });
                    }
                }
            });
        }
    });
    drop(tx);
    let total = queues * producers * per;
    for got in 0..total {
        if rx.recv_timeout(Duration::from_secs(60)).is_err() {
            ledger.discrepancy(format!(
                "serial queues: {got} of {total} tasks ran within 60 s"
            ));
            return;
        }
    }
    let f = faults.load(Ordering::SeqCst);
    if f > 0 {
        ledger.discrepancy(format!("serial queues: {f} order or overlap violations"));
    }
    exactly_once(ledger, "serial queues", &slots);
}

fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = join(|| fib(n - 1), || fib(n - 2));
    a + b
}

/// A pool built inside a task, used, dropped; and installs across two pools both ways.
pub fn nested_pools(rng: &mut Rng, pool: &Pool, ledger: &Ledger) {
    let inner_threads = rng.range(1, 3) as usize;
    let k = rng.range(8, 18);
    let r = pool.install(|| {
        let inner = Pool::builder().threads(inner_threads).build()?;
        let (x, y) = join(|| inner.install(|| fib(k)), || inner.install(|| fib(k)));
        let z = inner.install(|| pool.install(|| fib(k)));
        Ok::<_, threadlab::BuildError>(x + y + z)
    });
    match r {
        Ok(v) if v == 3 * fib_serial(k) => ledger.tasks(3),
        Ok(v) => ledger.discrepancy(format!("nested pools: {v}, expected {}", 3 * fib_serial(k))),
        Err(e) => ledger.discrepancy(format!("nested pools: {e}")),
    }
    ledger.pool_built();
}

fn fib_serial(n: u64) -> u64 {
    (0..n).fold((0, 1), |(a, b), _| (b, a + b)).0
}

/// A future that wakes itself and returns `Pending` `times` times before it is ready: by
/// reference, or by value through a clone (so the waker's reference counting is exercised in
/// the task's own poll).
struct YieldTimes {
    times: u32,
    by_value: bool,
}

impl std::future::Future for YieldTimes {
    type Output = ();
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        if self.times == 0 {
            return std::task::Poll::Ready(());
        }
        self.times -= 1;
        if self.by_value {
            // Deliberate: a clone taken and consumed inside the task's own poll.
            #[allow(clippy::waker_clone_wake)]
            cx.waker().clone().wake();
        } else {
            cx.waker().wake_by_ref();
        }
        std::task::Poll::Pending
    }
}

/// How many of each kind of task [`futures`] starts, drawn in this order from the scenario's
/// generator; each task has a slot, the kinds one after another.
struct FuturesPlan {
    ring: usize,
    laps: u64,
    /// 0: a rendezvous channel per hop, 1: one token in flight per hop.
    capacity: usize,
    outside: usize,
    yielders: usize,
    detached: usize,
    bad: usize,
}

impl FuturesPlan {
    fn draw(rng: &mut Rng) -> FuturesPlan {
        FuturesPlan {
            ring: rng.range(2, 48) as usize,
            laps: rng.range(1, 300),
            capacity: rng.below(2) as usize,
            outside: rng.range(0, 8) as usize,
            yielders: rng.range(0, 16) as usize,
            detached: rng.range(0, 32) as usize,
            bad: rng.range(0, 3) as usize,
        }
    }

    fn first_outside(&self) -> usize {
        self.ring
    }
    fn first_yielder(&self) -> usize {
        self.first_outside() + self.outside
    }
    fn first_detached(&self) -> usize {
        self.first_yielder() + self.yielders
    }
    fn first_bad(&self) -> usize {
        self.first_detached() + self.detached
    }
}

/// Futures on the pool: a ring of tasks passing a token through channels (every hand-off a
/// wake-up of a task by another, on whichever workers they are), tasks woken from a plain
/// thread, tasks that wake themselves, detached tasks, panicking tasks whose panics must come
/// out of their handles once, and the handles awaited from a plain thread, from `block_on` on
/// the pool, or from `block_on` inside a worker. Every task counts itself once.
pub fn futures(rng: &mut Rng, pool: &Pool, ledger: &Ledger) {
    let plan = FuturesPlan::draw(rng);
    let slots = Arc::new(Slots::new(plan.first_bad() + plan.bad));
    let (mut handles, starter) = token_ring(pool, &plan, &slots);
    let outsider = woken_from_outside(rng, pool, &plan, &slots, &mut handles);
    waking_themselves(rng, pool, &plan, &slots, &mut handles);
    let done = detached(rng, pool, &plan, &slots);
    // Panicking: each panic must come out of its own handle.
    let bad_handles: Vec<_> = (0..plan.bad)
        .map(|k| {
            let (slots, slot) = (Arc::clone(&slots), plan.first_bad() + k);
            pool.spawn_future(async move {
                YieldTimes {
                    times: 1,
                    by_value: false,
                }
                .await;
                slots.hit(slot);
                planned_panic()
            })
        })
        .collect();
    let outputs = await_all(rng.below(3), pool, handles);
    if !starter.join() {
        ledger.discrepancy("futures: the ring's first send failed".to_string());
    }
    let _ = outsider.join();
    let token = plan.laps * plan.ring as u64;
    if outputs[plan.ring - 1] != token {
        ledger.discrepancy(format!(
            "futures: the ring's token came back as {}, expected {token}",
            outputs[plan.ring - 1],
        ));
    }
    let from_outside = &outputs[plan.first_outside()..plan.first_yielder()];
    for (k, &v) in from_outside.iter().enumerate() {
        if v != k as u64 {
            ledger.discrepancy(format!("futures: outside task {k} got {v}"));
        }
    }
    for (k, h) in bad_handles.into_iter().enumerate() {
        let r = catch_unwind(AssertUnwindSafe(|| h.join()));
        one_panic(ledger, &format!("futures: panicking task {k}"), r, true);
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while done.load(Ordering::Acquire) < plan.detached {
        if Instant::now() > deadline {
            ledger.discrepancy(format!(
                "futures: after 60 s, {} of {} detached tasks ran",
                done.load(Ordering::Acquire),
                plan.detached
            ));
            return;
        }
        std::thread::sleep(Duration::from_micros(100));
    }
    exactly_once(ledger, "futures", &slots);
}

/// The ring: task i receives from channel i and sends the token, plus one, to channel i+1;
/// the last task's last hop returns the token instead. A starter puts 0 into channel 0. The
/// ring's handles, and the starter's (true when its send went through).
fn token_ring(
    pool: &Pool,
    plan: &FuturesPlan,
    slots: &Arc<Slots>,
) -> (Vec<threadlab::JoinHandle<u64>>, threadlab::JoinHandle<bool>) {
    let (ring, laps) = (plan.ring, plan.laps);
    let (txs, rxs): (Vec<_>, Vec<_>) = (0..ring)
        .map(|_| flume::bounded::<u64>(plan.capacity))
        .unzip();
    let mut handles = Vec::new();
    for (i, rx) in rxs.into_iter().enumerate() {
        let tx = txs[(i + 1) % ring].clone();
        let slots = Arc::clone(slots);
        handles.push(pool.spawn_future(async move {
            for lap in 0..laps {
                let Ok(v) = rx.recv_async().await else {
                    return u64::MAX; // a channel closed early: reported by the caller
                };
                if i == ring - 1 && lap == laps - 1 {
                    slots.hit(i);
                    return v + 1;
                }
                if tx.send_async(v + 1).await.is_err() {
                    return u64::MAX;
                }
            }
            slots.hit(i);
            0
        }));
    }
    let start = txs[0].clone();
    drop(txs);
    let starter = pool.spawn_future(async move { start.send_async(0).await.is_ok() });
    (handles, starter)
}

/// Tasks woken from a plain thread: each waits for the value `k` that the returned thread
/// sends (blocking).
fn woken_from_outside(
    rng: &mut Rng,
    pool: &Pool,
    plan: &FuturesPlan,
    slots: &Arc<Slots>,
    handles: &mut Vec<threadlab::JoinHandle<u64>>,
) -> std::thread::JoinHandle<()> {
    let mut senders = Vec::new();
    for k in 0..plan.outside {
        let (tx, rx) = flume::bounded::<u64>(rng.below(2) as usize);
        let (slots, slot) = (Arc::clone(slots), plan.first_outside() + k);
        handles.push(pool.spawn_future(async move {
            let v = rx.recv_async().await.unwrap_or(u64::MAX);
            slots.hit(slot);
            v
        }));
        senders.push(tx);
    }
    std::thread::spawn(move || {
        for (k, tx) in senders.into_iter().enumerate() {
            let _ = tx.send(k as u64);
        }
    })
}

/// Tasks that wake themselves a few times before they finish.
fn waking_themselves(
    rng: &mut Rng,
    pool: &Pool,
    plan: &FuturesPlan,
    slots: &Arc<Slots>,
    handles: &mut Vec<threadlab::JoinHandle<u64>>,
) {
    for k in 0..plan.yielders {
        let times = rng.range(1, 50) as u32;
        let by_value = rng.below(2) == 0;
        let (slots, slot) = (Arc::clone(slots), plan.first_yielder() + k);
        handles.push(pool.spawn_future(async move {
            YieldTimes { times, by_value }.await;
            slots.hit(slot);
            k as u64
        }));
    }
}

/// Detached tasks: the handle is dropped at once; each counts itself and the returned counter.
fn detached(
    rng: &mut Rng,
    pool: &Pool,
    plan: &FuturesPlan,
    slots: &Arc<Slots>,
) -> Arc<AtomicUsize> {
    let done = Arc::new(AtomicUsize::new(0));
    for k in 0..plan.detached {
        let (slots, done) = (Arc::clone(slots), Arc::clone(&done));
        let slot = plan.first_detached() + k;
        let times = rng.range(0, 4) as u32;
        drop(pool.spawn_future(async move {
            YieldTimes {
                times,
                by_value: k % 2 == 0,
            }
            .await;
            slots.hit(slot);
            // Release: pairs with the Acquire wait in `futures`.
            done.fetch_add(1, Ordering::Release);
        }));
    }
    done
}

/// The handles' outputs, awaited one of three ways (`how`): joined from this thread, with
/// `block_on` on the pool, or with `block_on` inside a worker.
fn await_all(how: u64, pool: &Pool, handles: Vec<threadlab::JoinHandle<u64>>) -> Vec<u64> {
    async fn each(handles: Vec<threadlab::JoinHandle<u64>>) -> Vec<u64> {
        let mut out = Vec::new();
        for h in handles {
            out.push(h.await);
        }
        out
    }
    match how {
        0 => handles.into_iter().map(|h| h.join()).collect(),
        1 => pool.block_on(each(handles)),
        _ => pool.install(|| threadlab::block_on(each(handles))),
    }
}
