//! `blake3` and `rdst` with the rayon-core patch: the serial results, Rayon's iterators on
//! threadlab's workers, and a recording that shows the two crates' tasks there.
//!
//! Each test fails without the patch: the results would still match, but Rayon's own pool would
//! run the work, where `threadlab::current_thread_index()` is `None` and `THREADLAB_TRACE` records
//! nothing (`rayon_iterators_run_on_threadlab_workers`, `recorded_tasks_on_threadlab_workers`).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use rayon::prelude::*;
use threadlab::trace::{EventKind, Trace, ARG_TASK_LOCATION};
use threadlab_rayon_deps::{bytes, hash_parallel, hash_serial, numbers, sort_parallel};

#[test]
fn blake3_update_rayon_gives_the_serial_hash() {
    // Around BLAKE3's 1 KiB chunks and the sizes at which update_rayon splits.
    for len in [0, 1, 1023, 1024, 1025, 65_536, (1 << 20) + 17, 8 << 20] {
        let data = bytes(len, len as u64 + 1);
        assert_eq!(hash_parallel(&data), hash_serial(&data), "{len} bytes");
    }
    // Inside a pool of this package too.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let data = bytes(3 << 20, 5);
    assert_eq!(pool.install(|| hash_parallel(&data)), hash_serial(&data));
}

/// rdst's sort of `v` against std's.
fn check_sort<T: rdst::RadixKey + Copy + Ord + Send + Sync + std::fmt::Debug>(v: Vec<T>) {
    let mut want = v.clone();
    want.sort_unstable();
    let len = v.len();
    assert!(
        sort_parallel(v) == want,
        "{len} {}",
        std::any::type_name::<T>()
    );
}

#[test]
fn rdst_multi_threaded_sort_gives_the_serial_order() {
    for len in [0, 1, 1_000, 300_000, 2_000_000] {
        let v = numbers(len, len as u64 + 3);
        check_sort(v.clone());
        check_sort(v.iter().map(|&x| x as u32).collect());
        check_sort(v.iter().map(|&x| x as i32).collect());
    }
}

#[test]
fn rayon_iterators_run_on_threadlab_workers() {
    // One global pool for Rayon's code and threadlab's.
    assert_eq!(
        rayon::current_num_threads(),
        threadlab::current_num_threads()
    );
    let seen: Vec<Option<usize>> = (0..10_000u64)
        .into_par_iter()
        .map(|_| threadlab::current_thread_index())
        .collect();
    assert!(
        seen.iter().all(|i| i.is_some()),
        "every item ran on a threadlab worker (guests off: not on the calling thread either)"
    );
    let sum: u64 = (0..10_000u64).into_par_iter().map(|x| x * x).sum();
    assert_eq!(sum, (0..10_000u64).map(|x| x * x).sum());
}

/// Runs this package's program on `what` with `THREADLAB_TRACE`, and loads the trace.
fn record(what: &str, size: usize) -> Trace {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join(format!("deps-{what}-{}.tltrace", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_threadlab-rayon-deps"))
        .args([what, &size.to_string()])
        .env("THREADLAB_TRACE", &path)
        .env("RAYON_NUM_THREADS", "2")
        .env_remove("THREADLAB_RAYON_GUESTS")
        .output()
        .expect("run threadlab-rayon-deps");
    assert!(
        out.status.success(),
        "{what}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let trace = Trace::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let _ = std::fs::remove_file(&path);
    trace
}

/// Tasks run on the workers' tracks, by spawn location (`file:line:col`, or `-` when none was
/// recorded).
fn worker_tasks_by_location(trace: &Trace) -> BTreeMap<String, usize> {
    let key = trace.name_id(ARG_TASK_LOCATION);
    let mut by = BTreeMap::new();
    for t in trace.threads().iter().filter(|t| t.worker().is_some()) {
        let mut open: Option<String> = None;
        let mut flush = |open: &mut Option<String>| {
            if let Some(l) = open.take() {
                *by.entry(l).or_insert(0) += 1;
            }
        };
        for e in t.events() {
            match e.kind {
                EventKind::TaskBegin { .. } => {
                    flush(&mut open);
                    open = Some("-".into());
                }
                EventKind::Arg { key: k, value } if Some(k) == key && open.is_some() => {
                    open = Some(trace.name(value).to_string());
                }
                _ => flush(&mut open),
            }
        }
        flush(&mut open);
    }
    by
}

/// Each crate's work in a process of its own, recorded: everything parallel in it is that
/// crate's. The entry from `main` is one task; the crate's splits are the rest.
#[test]
fn recorded_tasks_on_threadlab_workers() {
    for (what, size) in [("blake3", 16 << 20), ("rdst", 4_000_000)] {
        let trace = record(what, size);
        let diagnosis = threadlab_doctor::diagnose(&trace);
        let tasks: u64 = diagnosis
            .threads
            .iter()
            .filter(|t| t.worker.is_some())
            .map(|t| t.tasks)
            .sum();
        let by = worker_tasks_by_location(&trace);
        let recorded: usize = by.values().sum();
        assert_eq!(tasks, recorded as u64, "{what}: the doctor's count: {by:?}");
        assert!(
            tasks > 4,
            "{what}: the crate's splits ran as tasks on threadlab's workers: {by:?}"
        );
        println!("{what}: {tasks} tasks on threadlab's workers, by spawn location {by:?}");
    }
}
