//! The doctor's findings on programs observed from outside (`threadlab run`), which have no
//! pool: a `main` that starts two workers and joins them is no idle member of their group, lock
//! waits are not reported again as park/wake churn, and no pool figures are printed or compared.
//! The programs are C, written here. Linux only.

#![cfg(target_os = "linux")]

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

mod observe_support;

/// How long one observed run may take before the test fails instead of hanging.
const WATCHDOG: Duration = Duration::from_secs(180);

/// Two workers take one global mutex 400,000 times each (a short critical section, some work
/// outside it); `main` only starts and joins them. All three threads carry the program's name.
const JOINING_MAIN: &str = r#"
#include <pthread.h>
#include <stdio.h>
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long shared;
static void *worker(void *arg) {
    unsigned long local = (unsigned long)arg;
    for (int i = 0; i < 400000; i++) {
        pthread_mutex_lock(&queue_lock);
        for (int k = 0; k < 20; k++) shared += k;
        pthread_mutex_unlock(&queue_lock);
        for (int k = 0; k < 20; k++) local = local * 6364136223846793005ul + 1;
    }
    return (void *)local;
}
int main(void) {
    pthread_t t[2];
    for (long i = 0; i < 2; i++) pthread_create(&t[i], 0, worker, (void *)i);
    for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
    printf("%lu\n", shared);
    return 0;
}
"#;

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("threadlab-findings-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// `threadlab ARGS`, which must succeed: its stdout.
fn threadlab(args: &[&std::ffi::OsStr]) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_threadlab"));
    cmd.args(args);
    let out = observe_support::output_within(cmd, WATCHDOG);
    assert!(
        out.status.success(),
        "threadlab {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_joining_main_and_its_lock_waits_raise_no_imbalance_or_churn_and_no_pool_figures() {
    let dir = scratch("joining-main");
    let Some(exe) = observe_support::compile_c(&dir, "joinmain", JOINING_MAIN) else {
        return;
    };
    let (report, trace) = (dir.join("report.txt"), dir.join("run.tltrace"));
    threadlab(&[
        "run".as_ref(),
        "--report".as_ref(),
        report.as_os_str(),
        "-o".as_ref(),
        trace.as_os_str(),
        "--".as_ref(),
        exe.as_os_str(),
    ]);
    let report = std::fs::read_to_string(&report).expect("the report");
    let doctor = threadlab(&["doctor".as_ref(), trace.as_os_str()]);
    for text in [&report, &doctor] {
        for pitfall in ["imbalance", "park-wake-churn"] {
            assert!(
                !text.contains(&format!(" ! {pitfall} (")),
                "{pitfall} raised for a main that joins its workers:\n{text}"
            );
        }
        assert!(
            !text.lines().any(|l| l == "Runtime"),
            "pool figures for a program without a pool:\n{text}"
        );
    }
    // The workers' group is judged without `main` whenever it is judged at all: `main` is a
    // thread of its own (named by its role), or left out as the one that waited for them.
    let q2 = doctor
        .lines()
        .skip_while(|l| !l.contains("Is the work evenly distributed"))
        .nth(1)
        .unwrap_or_default();
    assert!(
        q2.contains("long enough to judge") || q2.contains("of the 2 threads of"),
        "{q2}"
    );
    let compared = threadlab(&["compare".as_ref(), trace.as_os_str(), trace.as_os_str()]);
    for pool_row in ["pool workers", "steals/s", "utilization"] {
        assert!(!compared.contains(pool_row), "{pool_row} in\n{compared}");
    }
    assert!(
        !compared.lines().any(|l| l.contains(" new")),
        "a row empty on both sides read as new:\n{compared}"
    );
}
