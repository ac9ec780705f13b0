mod pool_support;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;
use threadlab::{join, Pool};

use pool_support::panic_message as message;

#[test]
fn panic_in_either_half_of_join_reaches_the_caller_after_both_finished() {
    let pool = Pool::builder().threads(2).build().unwrap();
    let b_done = AtomicUsize::new(0);
    let r = catch_unwind(AssertUnwindSafe(|| {
        pool.install(|| {
            join(
                || panic!("left"),
                || {
                    std::thread::sleep(Duration::from_millis(20));
                    b_done.fetch_add(1, Ordering::SeqCst);
                },
            )
        })
    }));
    assert_eq!(message(&*r.unwrap_err()), "left");
    assert_eq!(
        b_done.load(Ordering::SeqCst),
        1,
        "b finished before the panic came out"
    );

    let r = catch_unwind(AssertUnwindSafe(|| {
        pool.install(|| join(|| 1, || panic!("right")))
    }));
    assert_eq!(message(&*r.unwrap_err()), "right");
    assert_eq!(
        pool.install(|| join(|| 1, || 2)),
        (1, 2),
        "pool still works"
    );
}

#[test]
fn panic_in_scope_reaches_the_caller_after_all_tasks() {
    let pool = Pool::builder().threads(2).build().unwrap();
    let done = AtomicUsize::new(0);
    let r = catch_unwind(AssertUnwindSafe(|| {
        pool.scope(|s| {
            s.spawn(|_| panic!("task"));
            for _ in 0..100 {
                s.spawn(|_| {
                    done.fetch_add(1, Ordering::SeqCst);
                });
            }
        })
    }));
    assert_eq!(message(&*r.unwrap_err()), "task");
    assert_eq!(done.load(Ordering::SeqCst), 100);

    let r = catch_unwind(AssertUnwindSafe(|| pool.scope(|_| panic!("body"))));
    assert_eq!(message(&*r.unwrap_err()), "body");
    let mut x = 0;
    pool.scope(|s| s.spawn(|_| x = 1));
    assert_eq!(x, 1, "pool still works");
}

#[test]
fn panic_in_install_reaches_the_caller() {
    let pool = Pool::builder().threads(2).build().unwrap();
    let r = catch_unwind(AssertUnwindSafe(|| pool.install(|| panic!("inst"))));
    assert_eq!(message(&*r.unwrap_err()), "inst");
    assert_eq!(pool.install(|| 5), 5);
}

#[test]
fn panic_in_spawn_goes_to_the_handler_and_is_counted() {
    let (tx, rx) = mpsc::channel();
    let tx = std::sync::Mutex::new(tx);
    let pool = Pool::builder()
        .threads(2)
        .panic_handler(move |p| tx.lock().unwrap().send(message(&*p)).unwrap())
        .build()
        .unwrap();
    pool.spawn(|| panic!("fire-and-forget"));
    assert_eq!(
        rx.recv_timeout(Duration::from_secs(60)).unwrap(),
        "fire-and-forget"
    );
    let ran = Arc::new(AtomicUsize::new(0));
    let r2 = ran.clone();
    pool.spawn(move || {
        r2.fetch_add(1, Ordering::SeqCst);
    });
    let report = pool.shutdown();
    assert_eq!(report.panicked_tasks, 1);
    assert_eq!(ran.load(Ordering::SeqCst), 1, "pool kept working");
}

#[test]
fn default_handler_prints_and_counts() {
    let pool = Pool::builder().threads(1).build().unwrap();
    pool.spawn(|| panic!("printed to stderr by design"));
    let report = pool.shutdown();
    assert_eq!(report.panicked_tasks, 1);
}
