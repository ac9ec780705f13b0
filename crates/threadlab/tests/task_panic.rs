//! A future's panic reaches whoever awaits or joins its handle; a detached one goes to the
//! pool's panic handler; the pool keeps working either way.

mod task_support;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use task_support::{
    counting_panics, panic_message as message, watchdog, watched_pool, yield_times,
};
use threadlab::Pool;

#[test]
fn joining_a_panicked_future_re_raises_its_panic() {
    watched_pool(2, |pool| {
        let h = pool.spawn_future(async {
            yield_times(2).await;
            panic!("the future failed");
        });
        let err = catch_unwind(AssertUnwindSafe(|| h.join())).unwrap_err();
        assert_eq!(message(&*err), "the future failed");
        // Awaited inside block_on: the panic comes out of block_on.
        let h = pool.spawn_future(async { panic!("awaited failure") });
        let err = catch_unwind(AssertUnwindSafe(|| pool.block_on(h))).unwrap_err();
        assert_eq!(message(&*err), "awaited failure");
        // The pool still works, and handle panics are not counted as unhandled.
        assert_eq!(pool.spawn_future(async { 1 }).join(), 1);
        assert_eq!(pool.metrics().panicked_tasks, 0);
    });
}

#[test]
fn a_detached_panicking_future_goes_to_the_panic_handler() {
    watchdog(|| {
        let (seen, pool) = counting_panics(Pool::builder().threads(2));
        drop(pool.spawn_future(async {
            yield_times(1).await;
            panic!("nobody joins me");
        }));
        let deadline = Instant::now() + Duration::from_secs(30);
        while seen.load(Ordering::SeqCst) == 0 {
            assert!(Instant::now() < deadline, "the handler never saw the panic");
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(pool.shutdown().panicked_tasks, 1);
    });
}

#[test]
fn a_panic_in_the_futures_destructor_is_the_tasks_panic() {
    struct PanicsOnDrop;
    impl Drop for PanicsOnDrop {
        fn drop(&mut self) {
            panic!("drop failed");
        }
    }
    watched_pool(1, |pool| {
        let h = pool.spawn_future(async {
            let _guard = PanicsOnDrop;
            yield_times(1).await;
            5
        });
        let err = catch_unwind(AssertUnwindSafe(|| h.join())).unwrap_err();
        assert_eq!(message(&*err), "drop failed");
    });
}
