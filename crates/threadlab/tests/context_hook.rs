//! The spawn-context hook (`threadlab::context`): a context current at a spawn is current again
//! where the task runs — `spawn`, `spawn_named`, `spawn_on`, `scope`'s `spawn`, `spawn_future`
//! (every poll), `install` from outside the pool, `join`'s second half when another worker takes
//! it — and every captured context is released exactly once, every entry exited.
//!
//! The test's "context" is a number in a thread-local; a token is a `Box<u64>`, so Miri sees a
//! token released twice (a double free) or never (a leak).

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use threadlab::context::{set_spawn_hook, SpawnHook};

thread_local! {
    static CURRENT: Cell<u64> = const { Cell::new(0) };
    static SAVED: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

static CAPTURED: AtomicUsize = AtomicUsize::new(0);
static RELEASED: AtomicUsize = AtomicUsize::new(0);
static ENTERED: AtomicUsize = AtomicUsize::new(0);
static EXITED: AtomicUsize = AtomicUsize::new(0);

static HOOK: SpawnHook = SpawnHook {
    capture: || {
        let c = CURRENT.with(Cell::get);
        if c == 0 {
            return 0;
        }
        CAPTURED.fetch_add(1, SeqCst);
        Box::into_raw(Box::new(c)) as usize as u64
    },
    enter: |token| {
        // SAFETY: a live token from `capture` (the hook's contract).
        let c = unsafe { *(token as usize as *const u64) };
        if CURRENT.with(Cell::get) == c {
            return false;
        }
        ENTERED.fetch_add(1, SeqCst);
        SAVED.with(|s| s.borrow_mut().push(CURRENT.with(|x| x.replace(c))));
        true
    },
    exit: |_| {
        EXITED.fetch_add(1, SeqCst);
        let old = SAVED
            .with(|s| s.borrow_mut().pop())
            .expect("exit after enter");
        CURRENT.with(|x| x.set(old));
    },
    release: |token| {
        RELEASED.fetch_add(1, SeqCst);
        // SAFETY: released once (the hook's contract): the box from `capture`.
        drop(unsafe { Box::from_raw(token as usize as *mut u64) });
    },
};

fn in_context<R>(c: u64, f: impl FnOnce() -> R) -> R {
    let old = CURRENT.with(|x| x.replace(c));
    let r = f();
    CURRENT.with(|x| x.set(old));
    r
}

fn current() -> u64 {
    CURRENT.with(Cell::get)
}

/// Runs `f` under a watchdog.
fn watchdog(f: impl FnOnce() + Send + 'static) {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        f();
        tx.send(()).unwrap();
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("watchdog: the test did not finish within 60 s");
}

#[test]
fn context_follows_every_kind_of_task_and_is_released_once() {
    set_spawn_hook(&HOOK).unwrap();
    assert!(
        set_spawn_hook(&HOOK).is_ok(),
        "the same hook again is a no-op"
    );
    watchdog(|| {
        let n = if cfg!(miri) { 4 } else { 200 };
        let pool = threadlab::Pool::builder().threads(2).build().unwrap();
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (tx, rx) = mpsc::channel();
        in_context(7, || {
            for i in 0..n {
                let (seen, tx) = (seen.clone(), tx.clone());
                let task = move || {
                    seen.lock().unwrap().push(current());
                    tx.send(()).unwrap();
                };
                match i % 3 {
                    0 => pool.spawn(task),
                    1 => pool.spawn_named("named", task),
                    _ => pool.spawn_on(i % 2, task).unwrap(),
                }
            }
        });
        for _ in 0..n {
            rx.recv().unwrap();
        }
        // Outside any context: nothing captured.
        pool.spawn(move || tx.send(()).unwrap());
        rx.recv().unwrap();
        assert!(seen.lock().unwrap().iter().all(|&c| c == 7));
        // install from outside, scope, futures (each poll), join.
        let inner = in_context(8, || {
            pool.install(|| {
                let mut seen = vec![current()];
                let scoped = std::sync::Mutex::new(Vec::new());
                threadlab::scope(|s| {
                    for _ in 0..4 {
                        s.spawn(|_| scoped.lock().unwrap().push(current()));
                    }
                    s.spawn_named("named", |_| scoped.lock().unwrap().push(current()));
                });
                seen.extend(scoped.into_inner().unwrap());
                let h = threadlab::spawn_future_named("fut", async {
                    let a = current();
                    threadlab::spawn_future(async {}).await; // a second poll
                    (a, current())
                });
                let (a, b) = threadlab::block_on(h);
                seen.extend([a, b]);
                let (x, y) = threadlab::join(current, current);
                seen.extend([x, y]);
                // A parallel loop's pieces (split off to the other worker at beats).
                use threadlab::prelude::*;
                let items: u64 = if cfg!(miri) { 64 } else { 100_000 };
                let loop_seen: Vec<u64> = (0..items).into_par_iter().map(|_| current()).collect();
                seen.extend(loop_seen);
                seen
            })
        });
        assert!(inner.iter().all(|&c| c == 8), "{inner:?}");
        pool.shutdown(); // the workers released every token before they exited
    });
    assert!(CAPTURED.load(SeqCst) > 0);
    assert_eq!(
        CAPTURED.load(SeqCst),
        RELEASED.load(SeqCst),
        "every token released once"
    );
    assert_eq!(
        ENTERED.load(SeqCst),
        EXITED.load(SeqCst),
        "every entry exited"
    );
}
