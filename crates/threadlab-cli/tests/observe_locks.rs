//! Locks as a performance engineer reads them, from `threadlab run` on a C program written here:
//! every acquisition counted (the program counts its own), the waits of one heap lock split by
//! the two call sites that take it, each with its function and `file:line`, threads named by
//! role (`main`, and the others by their start routine), and no imbalance or churn finding on a
//! program whose main thread only joins its two workers. Linux only.

#![cfg(target_os = "linux")]

use std::process::{Command, Output};
use std::time::Duration;

mod observe_support;
use observe_support::{compile_c, scratch, threadlab};

/// A queue behind one heap mutex: `producer_loop` inserts, `consumer_loop` removes (each
/// holding it while it spins 100 or 300 µs, then spinning 20 µs outside), 1,000 times each;
/// `main` creates them and joins. The program counts its own acquisitions.
const QUEUE: &str = r#"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static void spin(long us) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000000 + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}
struct queue { pthread_mutex_t lock; long items; };
static long acquisitions[2];
static void insert_item(struct queue *q, long id) {
    pthread_mutex_lock(&q->lock);
    q->items++;
    spin(100);
    pthread_mutex_unlock(&q->lock);
    acquisitions[id]++;
    spin(20);
}
static void remove_item(struct queue *q, long id) {
    pthread_mutex_lock(&q->lock);
    if (q->items > 0) q->items--;
    spin(300);
    pthread_mutex_unlock(&q->lock);
    acquisitions[id]++;
    spin(20);
}
static struct queue *q;
static void *producer_loop(void *p) { for (int i = 0; i < 1000; i++) insert_item(q, 0); return p; }
static void *consumer_loop(void *p) { for (int i = 0; i < 1000; i++) remove_item(q, 1); return p; }
int main(void) {
    q = calloc(1, sizeof *q);
    pthread_mutex_init(&q->lock, 0);
    pthread_t a, b;
    pthread_create(&a, 0, producer_loop, 0);
    pthread_create(&b, 0, consumer_loop, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    printf("acquisitions: %ld\n", acquisitions[0] + acquisitions[1]);
    return 0;
}
"#;

fn run(argv: &[&str], dir: &std::path::Path) -> (Output, String) {
    let report = dir.join("report.txt");
    let mut cmd = Command::new(threadlab());
    cmd.arg("run")
        .arg("--report")
        .arg(&report)
        .arg("--")
        .args(argv)
        .env("XDG_CACHE_HOME", dir.join("cache"));
    let out = observe_support::output_within(cmd, Duration::from_secs(120));
    (out, std::fs::read_to_string(&report).unwrap_or_default())
}

#[test]
fn a_heap_lock_is_counted_split_by_call_site_and_its_threads_named_by_role() {
    let dir = scratch("locks");
    let Some(exe) = compile_c(&dir, "queue", QUEUE) else {
        return;
    };
    let (out, report) = run(&[exe.to_str().unwrap()], &dir);
    assert!(out.status.success(), "{report}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "acquisitions: 2000\n");
    // Every acquisition, as the program counted them.
    let line = report
        .lines()
        .find(|l| l.trim_start().starts_with("lock heap lock taken at "))
        .unwrap_or_else(|| panic!("no heap lock in\n{report}"));
    assert!(line.contains(" of 2000 acquisitions"), "{line}");
    let waits: u64 = line
        .split(": ")
        .nth(1)
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    // Its waits by call site, each with function and file:line, adding up to the lock's.
    let site = |f: &str| -> u64 {
        report
            .lines()
            .find_map(|l| l.trim().strip_prefix(&format!("waits at {f} (queue.c:")))
            .and_then(|l| l.split_once("): ").map(|x| x.1))
            .and_then(|l| l.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no call site {f} with file:line in\n{report}"))
    };
    let (ins, rem) = (site("insert_item"), site("remove_item"));
    assert_eq!(ins + rem, waits, "{report}");
    // Threads by role in the threads table.
    for role in ["main", "producer_loop", "consumer_loop"] {
        assert!(
            report.lines().any(|l| {
                let mut w = l.split_whitespace();
                w.next().is_some_and(|t| t.parse::<u64>().is_ok()) && w.next() == Some(role)
            }),
            "no thread named {role}:\n{report}"
        );
    }
    // A main thread that only joins is no idle worker, and the lock waits are not churn.
    assert!(
        !report
            .lines()
            .any(|l| l.starts_with(" ! imbalance") || l.starts_with(" ! park-wake-churn")),
        "{report}"
    );
}
