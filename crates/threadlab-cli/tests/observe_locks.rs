//! Locks as a performance engineer reads them, from `threadlab run` on C programs written here:
//! every acquisition counted (the programs count their own), the waits of one heap lock split by
//! the two call sites that take it, each with its function, `file:line` and wait total, threads
//! named by role (`main`, and the others by their start routine), no imbalance or churn finding
//! on a program whose main thread only joins its two workers, and sampled hold times within
//! what happened (every hold at least what the program spins inside it, none longer than its
//! holder lived, their estimated total under the run's wall time × threads). The interposer's
//! section and the doctor's Locks table read the same lock table, also from the saved trace.
//! Linux only.

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

/// `threadlab run --report DIR/report.txt ARGS…` (its arguments, then `--` and the command).
fn run(argv: &[&str], dir: &std::path::Path) -> (Output, String) {
    let report = dir.join("report.txt");
    let mut cmd = Command::new(threadlab());
    cmd.arg("run")
        .arg("--report")
        .arg(&report)
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
    let (out, report) = run(&["--", exe.to_str().unwrap()], &dir);
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
    // Each site's own wait total, in the interposer's section and the doctor's Locks table
    // alike (one lock table), adding up to the lock's.
    let waited = |prefix: &str, f: &str| -> f64 {
        report
            .lines()
            .find_map(|l| {
                l.trim()
                    .strip_prefix(&format!("{prefix}waits at {f} (queue.c:"))
            })
            .and_then(|l| l.split_once(" (").map(|x| x.1))
            .and_then(|l| ns_of(l.trim_end_matches(')')))
            .unwrap_or_else(|| panic!("no wait total of {f} in\n{report}"))
    };
    let lock_waited = ns_of(
        line.split(" waited")
            .next()
            .and_then(|l| l.rsplit(", ").next())
            .unwrap(),
    )
    .unwrap();
    let (ins_ns, rem_ns) = (waited("", "insert_item"), waited("", "remove_item"));
    assert!(ins_ns > 0.0 && rem_ns > 0.0, "{report}");
    assert!(
        (ins_ns + rem_ns - lock_waited).abs() <= 2_000.0,
        "{ins_ns} + {rem_ns} != {lock_waited}:\n{report}"
    );
    let lock = line
        .trim_start()
        .strip_prefix("lock ")
        .and_then(|l| l.split(": ").next())
        .unwrap();
    for (f, want) in [("insert_item", ins_ns), ("remove_item", rem_ns)] {
        let doctor = waited(&format!("{lock}: "), f);
        assert!(
            (doctor - want).abs() <= 0.006 * want + 10.0,
            "{f}: the doctor's {doctor} against {want}:\n{report}"
        );
    }
    let row = locks_row(&report, lock);
    assert_eq!(row.first().map(String::as_str), Some("2000"), "{row:?}");
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

/// A duration as `fmt_ns` or the report writes it (`327.7 µs`, `280.538 ms`, `1.2 s`), ns.
fn ns_of(text: &str) -> Option<f64> {
    let mut w = text.split_whitespace();
    let (n, unit): (f64, &str) = (w.next()?.parse().ok()?, w.next()?);
    let scale = match unit.trim_end_matches([',', ')', ';']) {
        "ns" => 1.0,
        "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return None,
    };
    Some(n * scale)
}

/// The doctor's Locks table row of `lock`: its cells after the name (acquired, contended,
/// held, hold mean, hold p99, hold max, waits, waited, wait p50, wait p99, wait/hold), each
/// duration with its unit.
fn locks_row(report: &str, lock: &str) -> Vec<String> {
    let line = report
        .lines()
        .skip_while(|l| *l != "Locks")
        .find_map(|l| {
            l.trim_start()
                .strip_prefix(lock)
                .filter(|r| !r.starts_with(':'))
        })
        .unwrap_or_else(|| panic!("no row of {lock} in the Locks table:\n{report}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    let mut cells = Vec::new();
    let mut k = 0;
    while k < words.len() {
        if k + 1 < words.len() && ["ns", "µs", "ms", "s"].contains(&words[k + 1]) {
            cells.push(format!("{} {}", words[k], words[k + 1]));
            k += 2;
        } else {
            cells.push(words[k].to_owned());
            k += 1;
        }
    }
    cells
}

/// Two threads take one global mutex 100,000 times each, spinning 2 µs while they hold it and
/// 0.5 µs outside; `main` joins them. The program counts its own acquisitions.
const HOLDS: &str = r#"
#include <pthread.h>
#include <stdio.h>
#include <time.h>
static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static long taken[2];
static void spin_ns(long ns) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}
static void *holder_loop(void *p) {
    long id = (long)p;
    for (int i = 0; i < 100000; i++) {
        pthread_mutex_lock(&hold_lock);
        spin_ns(2000);
        pthread_mutex_unlock(&hold_lock);
        taken[id]++;
        spin_ns(500);
    }
    return 0;
}
int main(void) {
    pthread_t t[2];
    for (long i = 0; i < 2; i++) pthread_create(&t[i], 0, holder_loop, (void *)i);
    for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
    printf("acquisitions: %ld\n", taken[0] + taken[1]);
    return 0;
}
"#;

#[test]
fn sampled_hold_times_stay_within_what_happened_and_read_alike_everywhere() {
    let dir = scratch("holds");
    let Some(exe) = compile_c(&dir, "holds", HOLDS) else {
        return;
    };
    let trace = dir.join("run.tltrace");
    let (out, report) = run(
        &["-o", trace.to_str().unwrap(), "--", exe.to_str().unwrap()],
        &dir,
    );
    assert!(out.status.success(), "{report}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "acquisitions: 200000\n"
    );
    let lock = "hold_lock+0x0 (holds)";
    let line = report
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("lock {lock}: ")))
        .unwrap_or_else(|| panic!("no {lock} in\n{report}"));
    assert!(line.contains(" of 200000 acquisitions"), "{line}");
    // `held M on average (p99 P, max X), about T in all (N holds timed, …)`.
    let after = |key: &str| -> &str {
        line.split_once(key)
            .unwrap_or_else(|| panic!("no `{key}` in {line}"))
            .1
    };
    let held = after("; held ");
    let mean = ns_of(held).unwrap();
    let max = ns_of(held.split_once(", max ").unwrap().1).unwrap();
    let total = ns_of(after(", about ")).unwrap();
    let timed: u64 = after(" in all (")
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap();
    // About one hold in 1,024 timed: some, never more than the acquisitions.
    assert!(
        (20..=200_000).contains(&timed),
        "{timed} holds timed: {line}"
    );
    // Every hold spins 2 µs; none outlives its holder, whose life the threads table gives.
    assert!(mean >= 2_000.0 && max >= mean, "{line}");
    let life = |name: &str| -> f64 {
        report
            .lines()
            .find_map(|l| ns_of(l.split_once(&format!(" {name} "))?.1))
            .unwrap_or_else(|| panic!("no thread {name} in\n{report}"))
    };
    let longest = life("holder_loop #1").max(life("holder_loop #2"));
    assert!(
        max <= longest,
        "a hold of {max} ns by a thread that lived {longest} ns"
    );
    // The estimated total: at least the 200,000 spins, at most the wall time × threads.
    let wall = ns_of(
        report
            .lines()
            .find_map(|l| l.strip_prefix("threadlab observer: "))
            .and_then(|l| l.split_once(") for ").map(|x| x.1))
            .unwrap(),
    )
    .unwrap();
    assert!(
        total >= 200_000.0 * 2_000.0 * 0.99 && total <= wall * 3.0,
        "held {total} ns in all over {wall} ns of 3 threads: {line}"
    );
    // The doctor reads the same table, in the report and from the saved trace.
    let sampled = format!("{lock}: holds sampled, {timed} of 200000 timed");
    assert!(report.contains(&sampled), "{report}");
    let row = locks_row(&report, lock);
    assert_eq!(row.first().map(String::as_str), Some("200000"), "{row:?}");
    let doctor = Command::new(threadlab())
        .arg("doctor")
        .arg(&trace)
        .output()
        .expect("threadlab doctor");
    let doctor = String::from_utf8_lossy(&doctor.stdout).into_owned();
    assert!(doctor.contains(&sampled), "{doctor}");
    assert_eq!(locks_row(&doctor, lock), row, "{doctor}");
}
