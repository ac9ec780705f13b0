//! `pin_to_cores`: workers are pinned to CPUs of the process's allowed set, also when that set
//! is not `0..n` (a child process of this test run under `taskset`). Linux only.
#![cfg(all(target_os = "linux", not(miri)))]

mod pool_support;

use pool_support::watchdog;
use threadlab::Pool;

/// The CPUs this process may use, from `/proc/self/status` (`Cpus_allowed_list: 0-1,4`).
fn allowed() -> Vec<usize> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim();
    let mut cpus = Vec::new();
    for part in list.split(',') {
        match part.split_once('-') {
            Some((a, b)) => cpus.extend(a.parse::<usize>().unwrap()..=b.parse().unwrap()),
            None => cpus.push(part.parse().unwrap()),
        }
    }
    cpus
}

/// Each worker is pinned, to the allowed CPUs in turn, and its thread runs there.
fn check_pinned(threads: usize) {
    let cpus = allowed();
    let pool = Pool::builder()
        .threads(threads)
        .pin_to_cores(true)
        .build()
        .unwrap();
    let m = pool.metrics();
    for w in &m.workers {
        assert_eq!(
            w.pinned_cpu,
            Some(cpus[w.index % cpus.len()]),
            "worker {}",
            w.index
        );
        // SAFETY: sched_getcpu has no preconditions.
        let at = pool
            .install_on(w.index, || unsafe { libc::sched_getcpu() })
            .unwrap();
        assert_eq!(
            at as usize,
            cpus[w.index % cpus.len()],
            "worker {} ran elsewhere",
            w.index
        );
    }
}

#[test]
fn workers_pinned_to_allowed_cpus() {
    watchdog(|| check_pinned(3));
}

/// Unpinned workers report no CPU.
#[test]
fn unpinned_report_none() {
    let pool = Pool::builder().threads(2).build().unwrap();
    assert!(pool
        .metrics()
        .workers
        .iter()
        .all(|w| w.pinned_cpu.is_none()));
}

/// Run by `restricted_to_the_last_cpu` in a child process under `taskset`.
#[test]
#[ignore = "run in a child process by restricted_to_the_last_cpu"]
fn child_pinned_under_taskset() {
    check_pinned(3);
}

/// Under `taskset -c <last CPU>` (a set that is not `0..n` on a machine of 2 or more CPUs),
/// every worker goes to that CPU. Skipped (passes) when `taskset` is not installed or the
/// machine has one CPU.
#[test]
fn restricted_to_the_last_cpu() {
    let cpus = allowed();
    let last = *cpus.last().unwrap();
    if last == 0 {
        eprintln!("skipped: one CPU");
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let out = match std::process::Command::new("taskset")
        .args(["-c", &last.to_string()])
        .arg(exe)
        .args([
            "--exact",
            "child_pinned_under_taskset",
            "--ignored",
            "--nocapture",
        ])
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            eprintln!("skipped: taskset not available ({e})");
            return;
        }
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "child under taskset failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
