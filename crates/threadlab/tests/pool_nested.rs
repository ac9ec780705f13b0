use std::sync::mpsc;
use threadlab::{join, Pool};

mod pool_support;
use pool_support::{fib, watchdog};

#[test]
fn install_across_pools_does_not_deadlock() {
    watchdog(|| {
        let a = Pool::builder().threads(2).build().unwrap();
        let b = Pool::builder().threads(2).build().unwrap();
        // Under Miri fib(10) and fib(11) in b (231 joins instead of 2,582): still joins in b
        // while a's two workers wait in their installs there.
        let (p, q, sum) = if cfg!(miri) {
            (10, 11, 55 + 89 + 55)
        } else {
            (15, 16, 610 + 987 + 55)
        };
        let r = a.install(|| {
            let (x, y) = join(|| b.install(|| fib(p)), || b.install(|| fib(q)));
            x + y + fib(10)
        });
        assert_eq!(r, sum);
        // And back again: b's workers install into a while a's workers install into b.
        let r = a.install(|| {
            join(
                || b.install(|| a.install(|| fib(12))),
                || b.install(|| fib(12)),
            )
        });
        assert_eq!(r, (144, 144));
    });
}

#[test]
fn nested_pools_built_inside_tasks_do_not_deadlock() {
    // Under Miri fib(10) in each inner pool (88 joins instead of 609).
    let (n, want) = if cfg!(miri) { (10, 55) } else { (14, 377) };
    watchdog(move || {
        let outer = Pool::builder().threads(2).build().unwrap();
        let sums: Vec<u64> = outer.install(|| {
            let (a, b) = join(
                || {
                    let inner = Pool::builder().threads(1).build().unwrap();
                    inner.install(|| fib(n))
                },
                || {
                    let inner = Pool::builder().threads(2).build().unwrap();
                    inner.install(|| fib(n))
                },
            );
            vec![a, b]
        });
        assert_eq!(sums, vec![want, want]);
    });
}

#[test]
fn waiting_worker_keeps_its_own_pool_moving() {
    watchdog(|| {
        // Pool a has ONE worker; it blocks in b.install while a task spawned on a must still run
        // for b's job to finish.
        let a = Pool::builder().threads(1).build().unwrap();
        let b = Pool::builder().threads(1).build().unwrap();
        let (tx, rx) = mpsc::channel::<u32>();
        let out = a.install(|| {
            threadlab::spawn(move || tx.send(9).unwrap());
            b.install(move || rx.recv().unwrap())
        });
        assert_eq!(out, 9);
    });
}
