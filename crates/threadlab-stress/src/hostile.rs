//! The hostile scenarios: values from the user whose `Drop` panics (panic payloads,
//! detached futures, outputs nobody reads), and futures woken after their pool was dropped. Each
//! runs on a pool of its own (the pool's panic handler and its drop are part of what is checked)
//! and balances its books exactly: every bomb dropped once, every panic of a drop reported once,
//! every worker still alive afterwards, every task either finished or cancelled, never both,
//! never neither.

use super::ledger::{Ledger, Rng};
use super::scenarios::{Planned, Slots};
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use threadlab::Pool;

/// A value whose `Drop` counts itself, then panics with [`Planned`].
pub struct Bomb(Arc<AtomicU64>);

impl Drop for Bomb {
    fn drop(&mut self) {
        // Relaxed: read after the pool's shutdown, which joins the threads that dropped it.
        self.0.fetch_add(1, Ordering::Relaxed);
        std::panic::panic_any(Planned);
    }
}

/// A future that never finishes and keeps no waker; it may carry a bomb.
struct Forever(#[allow(dead_code)] Option<Bomb>);

impl Future for Forever {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        Poll::Pending
    }
}

/// What the scenario's panic handler saw.
#[derive(Default)]
struct Seen {
    /// Bomb payloads (a task panicked with a bomb).
    bombs: AtomicU64,
    /// Planned payloads (a bomb's drop panicked somewhere the pool caught it).
    planned: AtomicU64,
}

fn pool_with_handler(rng: &mut Rng, seen: &Arc<Seen>) -> Result<Pool, threadlab::BuildError> {
    let seen = Arc::clone(seen);
    Pool::builder()
        .threads(rng.range(1, 4) as usize)
        .panic_handler(move |p| {
            // Relaxed: read after the shutdown, which joins the workers.
            if p.is::<Bomb>() {
                seen.bombs.fetch_add(1, Ordering::Relaxed);
            } else if p.is::<Planned>() {
                seen.planned.fetch_add(1, Ordering::Relaxed);
            }
            // A bomb explodes here, inside the handler: the pool must catch that too.
            drop(p);
        })
        .build()
}

/// Tasks that panic with a bomb (its drop panics inside the panic handler), detached futures
/// holding a bomb freed without finishing, and finished futures whose bomb output nobody
/// reads; then every worker must still run work addressed to it, and every count add up.
pub fn panicking_drops(rng: &mut Rng, ledger: &Ledger) {
    let seen = Arc::new(Seen::default());
    let Some(pool) = ledger.built("panicking drops", pool_with_handler(rng, &seen)) else {
        return;
    };
    let exploded = Arc::new(AtomicU64::new(0));
    let (tasks, forever, outputs) = (rng.range(0, 40), rng.range(0, 40), rng.range(0, 40));
    for _ in 0..tasks {
        let e = Arc::clone(&exploded);
        pool.spawn(move || std::panic::panic_any(Bomb(e)));
    }
    for _ in 0..forever {
        drop(pool.spawn_future(Forever(Some(Bomb(Arc::clone(&exploded))))));
    }
    let mut handles = Vec::new();
    for _ in 0..outputs {
        let e = Arc::clone(&exploded);
        handles.push(pool.spawn_future(async move { Bomb(e) }));
    }
    // Dropped finished or not: the output is dropped by whoever lets go last.
    drop(handles);
    // Every worker is alive: a task addressed to each runs, and `install_on` returns.
    let n = pool.current_num_threads();
    let slots = Arc::new(Slots::new(n));
    for w in 0..n {
        let s = Arc::clone(&slots);
        if pool.spawn_on(w, move || s.hit(w)).is_err()
            || pool.install_on(w, threadlab::current_thread_index).ok() != Some(Some(w))
        {
            ledger.discrepancy(format!(
                "panicking drops: worker {w} of {n} does not answer"
            ));
        }
    }
    let report = pool.shutdown();
    super::scenarios::exactly_once(ledger, "panicking drops: workers alive", &slots);
    // Relaxed: the shutdown joined every thread that wrote them.
    let (bombs, planned) = (
        seen.bombs.load(Ordering::Relaxed),
        seen.planned.load(Ordering::Relaxed),
    );
    let all = tasks + forever + outputs;
    let dropped = exploded.load(Ordering::Relaxed);
    if dropped != all || bombs != tasks || planned != forever + outputs {
        ledger.discrepancy(format!(
            "panicking drops: {dropped} of {all} bombs dropped; the handler saw {bombs} of \
             {tasks} bomb payloads and {planned} of {} panicking drops",
            forever + outputs
        ));
    }
    if report.panicked_tasks != tasks + forever + outputs {
        ledger.discrepancy(format!(
            "panicking drops: shutdown counted {} panics, {} expected",
            report.panicked_tasks,
            tasks + forever + outputs
        ));
    }
    ledger.tasks(all);
    ledger.panics(all);
    ledger.drops(all);
}

/// Parks its waker in a slot and waits to be woken once; may carry a bomb.
struct Parked {
    slot: Arc<Mutex<Option<Waker>>>,
    woken: bool,
    _bomb: Option<Bomb>,
}

impl Future for Parked {
    type Output = u64;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u64> {
        if self.woken {
            return Poll::Ready(7);
        }
        self.woken = true;
        *self.slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// Futures that wait for a wake; some are woken before their pool is dropped (they finish: the
/// drop runs queued work), the others after it (they are cancelled: dropped on the waking
/// thread, their handles say so); some carry a bomb, whose drop must be reported once.
pub fn wakes_after_drop(rng: &mut Rng, ledger: &Ledger) {
    let seen = Arc::new(Seen::default());
    let Some(pool) = ledger.built("wakes after drop", pool_with_handler(rng, &seen)) else {
        return;
    };
    let n = rng.range(1, 64) as usize;
    let exploded = Arc::new(AtomicU64::new(0));
    let mut bombs = 0;
    let mut tasks = Vec::new();
    for _ in 0..n {
        let slot = Arc::new(Mutex::new(None::<Waker>));
        let bomb = (rng.below(3) == 0).then(|| Bomb(Arc::clone(&exploded)));
        let bomb_flag = bomb.is_some();
        bombs += bomb_flag as u64;
        let h = pool.spawn_future(Parked {
            slot: Arc::clone(&slot),
            woken: false,
            _bomb: bomb,
        });
        tasks.push((slot, h, rng.below(2) == 0, bomb_flag));
    }
    // Wait until every future parked its waker (each was polled once).
    for (slot, ..) in &tasks {
        while slot.lock().unwrap_or_else(|e| e.into_inner()).is_none() {
            std::thread::yield_now();
        }
    }
    let wake = |slot: &Mutex<Option<Waker>>| {
        if let Some(w) = slot.lock().unwrap_or_else(|e| e.into_inner()).take() {
            w.wake();
        }
    };
    for (slot, _, before, _) in &tasks {
        if *before {
            wake(slot);
        }
    }
    pool.shutdown();
    // From another thread, as a timer or an I/O driver would.
    std::thread::scope(|s| {
        s.spawn(|| {
            for (slot, _, before, _) in &tasks {
                if !*before {
                    wake(slot);
                }
            }
        });
    });
    // Woken before the shutdown: finished, with 7, or with the panic of its bomb (a panic in a
    // finished future's drop is the task's panic). Woken after: cancelled, its bomb's panic
    // reported to the handler.
    let (mut finished, mut cancelled, mut in_handles) = (0u64, 0u64, 0u64);
    for (k, (_, h, before, bomb)) in tasks.into_iter().enumerate() {
        let when = if before { "before" } else { "after" };
        match catch_unwind(AssertUnwindSafe(|| h.join())) {
            Ok(7) if before && !bomb => finished += 1,
            Err(p) if before && bomb && p.is::<Planned>() => {
                finished += 1;
                in_handles += 1;
            }
            Err(p) if !before && crate::panics::panic_message(&*p).contains("cancelled") => {
                cancelled += 1
            }
            Ok(v) => ledger.discrepancy(format!(
                "wakes after drop: task {k} (woken {when}, bomb: {bomb}) returned {v}"
            )),
            Err(p) => ledger.discrepancy(format!(
                "wakes after drop: task {k} (woken {when}, bomb: {bomb}) panicked: {}",
                crate::panics::panic_message(&*p)
            )),
        }
    }
    // Relaxed: every thread that dropped a bomb was joined (the workers by the pool's
    // shutdown, the waker's by the scope), or it was this one.
    let dropped = exploded.load(Ordering::Relaxed);
    let planned = seen.planned.load(Ordering::Relaxed);
    if dropped != bombs || planned + in_handles != bombs {
        ledger.discrepancy(format!(
            "wakes after drop: {dropped} of {bombs} bombs dropped; their panics: {planned} \
             reported to the handler, {in_handles} out of handles"
        ));
    }
    ledger.panics(bombs);
    ledger.tasks(finished);
    ledger.cancelled(cancelled);
    ledger.drops(bombs);
}
