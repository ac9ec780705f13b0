//! The cooperative budget: a task that always wakes itself, or a pair that keep waking each
//! other, does not stall the other work of its worker, even on a one-worker pool.

mod task_support;

use std::future::poll_fn;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::Poll;

use task_support::{on_every_policy, play, watched_pool, with_pool, Baton};
use threadlab::WakePolicy;

#[test]
fn a_task_that_always_wakes_itself_does_not_stall_others() {
    on_every_policy(1, |pool, policy| {
        let stop = Arc::new(AtomicBool::new(false));
        let spins = Arc::new(AtomicUsize::new(0));
        let (st, sp) = (Arc::clone(&stop), Arc::clone(&spins));
        let hog = pool.spawn_future(poll_fn(move |cx| {
            if st.load(Ordering::Relaxed) {
                return Poll::Ready(());
            }
            sp.fetch_add(1, Ordering::Relaxed);
            cx.waker().wake_by_ref();
            Poll::Pending
        }));
        // Wait until the hog runs, then give the worker other work of every kind.
        while spins.load(Ordering::Relaxed) == 0 {
            std::thread::yield_now();
        }
        let count = Arc::new(AtomicUsize::new(0));
        let baton = Arc::new(Baton::default());
        // Under Miri 10 rounds each: every round is the same pass past the hog.
        let rounds = if cfg!(miri) { 10 } else { 50 };
        let a = pool.spawn_future(play(Arc::clone(&baton), 0, rounds, Arc::clone(&count)));
        let b = pool.spawn_future(play(baton, 1, rounds, Arc::clone(&count)));
        let (tx, rx) = std::sync::mpsc::channel();
        pool.spawn(move || tx.send(()).unwrap());
        a.join();
        b.join();
        rx.recv().unwrap();
        assert_eq!(count.load(Ordering::Relaxed), 2 * rounds, "{policy:?}");
        assert_eq!(pool.install(|| 6 * 7), 42);
        stop.store(true, Ordering::Relaxed);
        hog.join();
    });
}

#[test]
fn a_pair_waking_each_other_for_ever_does_not_stall_others() {
    watched_pool(1, |pool| {
        let stop = Arc::new(AtomicBool::new(false));
        let rounds = Arc::new(AtomicUsize::new(0));
        let baton = Arc::new(Baton::default());
        // Two players that pass the baton until told to stop: each wake goes to the run-next
        // slot, so without the budget they would keep the only worker for ever.
        let players: Vec<_> = (0..2)
            .map(|me| {
                let (baton, stop, rounds) =
                    (Arc::clone(&baton), Arc::clone(&stop), Arc::clone(&rounds));
                pool.spawn_future(async move {
                    while !stop.load(Ordering::Relaxed) {
                        baton.wait(me).await;
                        rounds.fetch_add(1, Ordering::Relaxed);
                        baton.pass(1 - me);
                    }
                    // Let the other player out too.
                    baton.pass(1 - me);
                })
            })
            .collect();
        // Under Miri 100 rounds, three times the run-next budget (`RUN_NEXT_BUDGET`, 32): the
        // pair is past its start and has run into the budget before the others come.
        let warm = if cfg!(miri) { 100 } else { 1000 };
        while rounds.load(Ordering::Relaxed) < warm {
            std::thread::yield_now();
        }
        // Other futures and a closure get the worker although the pair never stops.
        let others: Vec<_> = (0..10)
            .map(|i| pool.spawn_future(async move { i }))
            .collect();
        let sum: i32 = others.into_iter().map(|h| h.join()).sum();
        assert_eq!(sum, 45);
        let (tx, rx) = std::sync::mpsc::channel();
        pool.spawn(move || tx.send(()).unwrap());
        rx.recv().unwrap();
        stop.store(true, Ordering::Relaxed);
        for p in players {
            p.join();
        }
    });
}

#[test]
fn a_task_woken_behind_a_blocking_poll_is_taken_by_another_worker() {
    // Unlike Tokio's LIFO slot, the run-next slot can be stolen: a task woken by a poll that
    // then blocks its worker runs elsewhere once an awake worker sees it waiting there. Under
    // the lazy policy an idle worker looks every millisecond, so it always finds it; the other
    // policies wake nobody who is already searching, and a searcher that runs dry parks
    // without looking at other slots, so there it depends on timing (`pool::run_next`).
    let policy = WakePolicy::Lazy;
    with_pool(2, policy, move |pool| {
        let baton = Arc::new(Baton::default());
        let ran = Arc::new(AtomicBool::new(false));
        let (b2, r2) = (Arc::clone(&baton), Arc::clone(&ran));
        let woken = pool.spawn_future(async move {
            b2.wait(1).await;
            r2.store(true, Ordering::SeqCst);
        });
        // Wait until it is parked on the baton.
        while !baton.has_waiter(1) {
            std::thread::yield_now();
        }
        let r3 = Arc::clone(&ran);
        let blocker = pool.spawn_future(async move {
            baton.pass(1); // into this worker's run-next slot
                           // Block this worker until the woken task ran somewhere else.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
            while !r3.load(Ordering::SeqCst) {
                assert!(
                    std::time::Instant::now() < deadline,
                    "{policy:?}: the woken task was never taken from the slot"
                );
                std::hint::spin_loop();
            }
        });
        blocker.join();
        woken.join();
        assert!(pool.metrics().workers.iter().map(|w| w.steals).sum::<u64>() >= 1);
    });
}
