//! A spawn-context hook whose functions panic: each panic is caught where it happens and reported
//! like a panicking drop of a task's value (counted in `panicked_tasks` and handed to the pool's
//! panic handler on a worker, printed elsewhere), never unwound into the runtime. `exit` and
//! `release` run while a task unwinds too: a panic escaping there aborted the process ("panic in
//! a destructor during cleanup").
//!
//! The hook is per process, so it lives in this test binary alone. What a token's functions do is
//! written into the token by `capture`, from a thread-local set by the test on the spawning
//! thread; so tests running at once do not see each other's choices.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{mpsc, Arc, Mutex};

mod pool_support;

use threadlab::context::{set_spawn_hook, SpawnHook};
use threadlab::Pool;

/// Token bits: which of the hook's functions panic for this token.
const ENTER: u64 = 1;
const EXIT: u64 = 2;
const RELEASE: u64 = 4;
/// Set in every token, so a token is never 0 ("nothing to carry").
const LIVE: u64 = 1 << 8;

thread_local! {
    /// What `capture` on this thread does: `None`, carry nothing; `Some(bits)`, a token with
    /// `bits`; `capture` itself panics if `CAPTURE_PANICS` is set.
    static MODE: Cell<Option<u64>> = const { Cell::new(None) };
    static CAPTURE_PANICS: Cell<bool> = const { Cell::new(false) };
}

static ENTERED: AtomicUsize = AtomicUsize::new(0);
static EXITED: AtomicUsize = AtomicUsize::new(0);
static RELEASED: AtomicUsize = AtomicUsize::new(0);

static HOOK: SpawnHook = SpawnHook {
    capture: || {
        if CAPTURE_PANICS.with(Cell::get) {
            panic!("hook: capture");
        }
        MODE.with(Cell::get).map_or(0, |bits| bits | LIVE)
    },
    enter: |token| {
        ENTERED.fetch_add(1, SeqCst);
        if token & ENTER != 0 {
            panic!("hook: enter");
        }
        true
    },
    exit: |token| {
        EXITED.fetch_add(1, SeqCst);
        if token & EXIT != 0 {
            panic!("hook: exit");
        }
    },
    release: |token| {
        RELEASED.fetch_add(1, SeqCst);
        if token & RELEASE != 0 {
            panic!("hook: release");
        }
    },
};

/// Runs `f` on a thread whose spawns capture tokens with `bits`; fails after 60 s.
fn with_mode(bits: u64, f: impl FnOnce() + Send + 'static) {
    set_spawn_hook(&HOOK).unwrap();
    // Under Miri a panic prints its message and location only. A panic raised while another
    // unwinds (`exit` and `release` here) makes std's default hook print a full backtrace, and
    // Miri takes seconds of its clock to walk one (4.8 s for a lone nested panic): most of this
    // file's time there, spent in std's printing, not in threadlab. What the tests check (the
    // runtime catching and reporting those panics) is the same.
    #[cfg(miri)]
    {
        static QUIET: std::sync::Once = std::sync::Once::new();
        QUIET.call_once(|| std::panic::set_hook(Box::new(|info| eprintln!("{info}"))));
    }
    pool_support::watchdog(move || {
        MODE.with(|m| m.set(Some(bits)));
        f();
    });
}

/// A pool whose panic handler keeps the panics' messages.
fn pool_keeping_panics() -> (Pool, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = Arc::clone(&seen);
    let pool = Pool::builder()
        .threads(1)
        .panic_handler(move |p| {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            s.lock().unwrap().push(msg);
        })
        .build()
        .unwrap();
    (pool, seen)
}

/// A task that panics, whose context's `exit` and `release` panic too (while the task unwinds):
/// three panics reported to the pool, none aborting; the pool goes on running tasks.
#[test]
fn exit_and_release_panicking_while_a_task_unwinds_are_reported_not_aborting() {
    with_mode(EXIT | RELEASE, || {
        let (pool, seen) = pool_keeping_panics();
        pool.spawn(|| panic!("the task"));
        let (tx, rx) = mpsc::channel();
        pool.spawn(move || tx.send(7).unwrap());
        assert_eq!(rx.recv().unwrap(), 7);
        let report = pool.shutdown();
        let mut seen = seen.lock().unwrap().clone();
        seen.sort();
        assert_eq!(
            seen,
            [
                "hook: exit",
                "hook: exit",
                "hook: release",
                "hook: release",
                "the task"
            ],
            "{report:?}"
        );
        assert_eq!(report.panicked_tasks, 5, "{report:?}");
    });
}

/// `install` of a closure that panics, with `exit` and `release` panicking: the caller gets the
/// closure's own panic back (not an abort, not the hook's).
#[test]
fn install_re_raises_the_closures_panic_when_the_hook_panics_too() {
    with_mode(EXIT | RELEASE, || {
        let (pool, _seen) = pool_keeping_panics();
        for _ in 0..3 {
            let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                pool.install(|| -> () { panic!("the closure") })
            }))
            .unwrap_err();
            assert_eq!(err.downcast_ref::<&str>(), Some(&"the closure"));
        }
        // A scope with a panicking task, too.
        let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.install(|| threadlab::scope(|s| s.spawn(|_| panic!("the scope's task"))))
        }))
        .unwrap_err();
        assert_eq!(err.downcast_ref::<&str>(), Some(&"the scope's task"));
        assert_eq!(pool.install(|| 6 * 7), 42);
    });
}

/// `enter` panicking: the task runs without its context (no `exit` for it), its token is
/// released once; `capture` panicking: the task runs with nothing to carry. Both reported.
#[test]
fn enter_or_capture_panicking_still_runs_the_task() {
    with_mode(ENTER, || {
        let (pool, seen) = pool_keeping_panics();
        let (entered, released) = (ENTERED.load(SeqCst), RELEASED.load(SeqCst));
        let (tx, rx) = mpsc::channel();
        pool.spawn(move || tx.send(1).unwrap());
        assert_eq!(rx.recv().unwrap(), 1);
        let report = pool.shutdown();
        assert_eq!(*seen.lock().unwrap(), ["hook: enter"], "{report:?}");
        assert_eq!(report.panicked_tasks, 1);
        // Other tests' tasks may count too: at least ours.
        assert!(ENTERED.load(SeqCst) > entered);
        assert!(RELEASED.load(SeqCst) > released);

        let (pool, seen) = pool_keeping_panics();
        CAPTURE_PANICS.with(|c| c.set(true));
        let (tx, rx) = mpsc::channel();
        pool.spawn(move || tx.send(2).unwrap());
        assert_eq!(rx.recv().unwrap(), 2);
        CAPTURE_PANICS.with(|c| c.set(false));
        // `capture` ran on this plain thread: printed there, not the pool's panic.
        assert_eq!(pool.shutdown().panicked_tasks, 0);
        assert!(seen.lock().unwrap().is_empty());
    });
}
