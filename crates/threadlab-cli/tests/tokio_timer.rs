//! What the README says happens to a Tokio timer future run on threadlab: threadlab has no
//! timers or I/O reactor, and Tokio's `sleep` needs its runtime's. Awaited on a threadlab worker
//! with no Tokio runtime entered, the sleep panics at its first poll ("there is no reactor
//! running"); the panic is the task's, re-raised where its `JoinHandle` is awaited, and the
//! worker lives on. With a Tokio runtime entered around the poll, Tokio's own threads drive the
//! timer and wake the threadlab task.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

#[test]
fn a_tokio_sleep_panics_on_a_threadlab_worker_and_the_handle_reraises_it() {
    let pool = threadlab::Pool::builder().threads(1).build().unwrap();
    let handle = pool.spawn_future(async {
        tokio::time::sleep(Duration::from_millis(1)).await;
    });
    let payload = catch_unwind(AssertUnwindSafe(|| pool.block_on(handle))).unwrap_err();
    let message = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or_default();
    assert!(message.contains("no reactor running"), "{message}");
    // The worker survived the panic: the pool still runs futures.
    assert_eq!(pool.block_on(pool.spawn_future(async { 7 })), 7);
}

#[test]
fn a_tokio_sleep_completes_when_a_tokio_runtime_drives_its_timer() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_time()
        .build()
        .unwrap();
    let tokio = rt.handle().clone();
    let pool = threadlab::Pool::builder().threads(1).build().unwrap();
    let handle = pool.spawn_future(async move {
        // The sleep registers with the entered runtime's timer when it is created.
        let sleep = {
            let _entered = tokio.enter();
            tokio::time::sleep(Duration::from_millis(1))
        };
        sleep.await;
        42
    });
    assert_eq!(pool.block_on(handle), 42);
}
