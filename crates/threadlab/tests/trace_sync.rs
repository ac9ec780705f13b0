//! `sync::Mutex` and `Condvar`: no poisoning, and what they record.

mod trace_support;

use std::sync::Arc;

use threadlab::sync::{Condvar, Mutex};
use threadlab::trace::EventKind;
use trace_support::*;

#[test]
fn a_panic_while_holding_releases_the_lock() {
    let _s = serial();
    let m = Arc::new(Mutex::named("p", 1));
    let m2 = m.clone();
    let r = std::thread::spawn(move || {
        let _g = m2.lock();
        panic!("while holding");
    })
    .join();
    assert!(r.is_err());
    *m.lock() += 1;
    assert_eq!(*m.lock(), 2);
    assert!(m.try_lock().is_some());
}

#[test]
fn try_lock_fails_while_held() {
    let _s = serial();
    let m = Mutex::new(());
    let g = m.lock();
    std::thread::scope(|s| {
        s.spawn(|| assert!(m.try_lock().is_none()));
    });
    drop(g);
}

#[test]
fn condvar_wait_records_release_and_reacquire() {
    let _s = serial();
    let rec = threadlab::trace::start();
    threadlab::trace::set_thread_name("condvar-waiter");
    let pair = Arc::new((Mutex::named("ready", false), Condvar::new()));
    let p = pair.clone();
    let t = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(5));
        *p.0.lock() = true;
        p.1.notify_one();
    });
    {
        let mut ready = pair.0.lock();
        while !*ready {
            ready = pair.1.wait(ready);
        }
    }
    t.join().unwrap();
    let trace = rec.stop();
    let me = &trace.threads()[thread_named(&trace, "condvar-waiter")];
    let ready = trace.name_id("ready").unwrap();
    let lock_events: Vec<_> = me
        .events()
        .iter()
        .filter(|e| {
            matches!(
                e.kind,
                EventKind::LockAcquired { .. } | EventKind::LockReleased { .. }
            )
        })
        .collect();
    // acquire, (release, acquire) per wait, release: balanced and alternating.
    assert!(
        lock_events.len() >= 4 && lock_events.len() % 2 == 0,
        "{lock_events:?}"
    );
    for (i, e) in lock_events.iter().enumerate() {
        match e.kind {
            EventKind::LockAcquired { name, .. } => assert!(i % 2 == 0 && name == ready),
            EventKind::LockReleased { name, .. } => assert!(i % 2 == 1 && name == ready),
            _ => unreachable!(),
        }
    }
}
