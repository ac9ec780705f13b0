// Shared helpers are inlined per test file (each tests/*.rs is its own crate); this file holds
// tests of the builder and errors.
use threadlab::Pool;

/// `threads(0)` means the default count, as Rayon's `num_threads(0)` does.
#[test]
fn zero_threads_means_the_default_count() {
    let zero = Pool::builder().threads(0).build().unwrap();
    let default = Pool::builder().build().unwrap();
    assert!(zero.current_num_threads() >= 1);
    assert_eq!(zero.current_num_threads(), default.current_num_threads());
}

#[test]
fn spawn_failure_is_an_error_that_says_what_to_do() {
    // A stack no OS can map makes the first spawn fail.
    let err = Pool::builder()
        .threads(4)
        .stack_size(usize::MAX / 2)
        .build()
        .unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("refused to start"), "{msg}");
    assert!(msg.contains("fewer threads"), "{msg}");
}

#[test]
fn builder_options_apply() {
    let pool = Pool::builder()
        .threads(3)
        .thread_name(|i| format!("tl-test-{i}"))
        .pin_to_cores(true)
        .stack_size(1 << 20)
        .build()
        .unwrap();
    assert_eq!(pool.current_num_threads(), 3);
    let name = pool.install(|| std::thread::current().name().map(str::to_owned));
    assert!(name.unwrap().starts_with("tl-test-"));
    assert_eq!(pool.install(threadlab::current_num_threads), 3);
    assert!(pool.install(threadlab::current_thread_index).unwrap() < 3);
}
