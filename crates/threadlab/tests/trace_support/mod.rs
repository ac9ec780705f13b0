//! A runtime-like scenario shared by the `trace_*` tests: two "workers" driving the recorder's
//! hooks the way the pool does (spawn → steal → run, park ← wake), nested zones on the main
//! thread, and a named lock held for a known 20 ms while another thread waits for it.
#![allow(dead_code)]

use std::sync::{mpsc, Arc, Barrier, Mutex as StdMutex, MutexGuard};
use std::thread;
use std::time::Duration;

use threadlab::trace::{hooks, TaskKind, Trace};

/// Serialises the tests of one binary: the recorder is process-global.
pub fn serial() -> MutexGuard<'static, ()> {
    static LOCK: StdMutex<()> = StdMutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

pub const HOLD: Duration = Duration::from_millis(20);
pub const FLOW: u64 = 0xA5A5;

/// Runs the scenario inside a recording and returns its trace.
pub fn record_scenario() -> Trace {
    let rec = threadlab::trace::start();
    threadlab::trace::set_thread_name("main");
    {
        let _outer = threadlab::zone!("outer");
        let _inner = threadlab::zone!("inner");
    }

    // Workers: 0 spawns a task and parks; 1 steals it from 0, runs it, wakes 0.
    let (spawned_tx, spawned_rx) = mpsc::channel::<()>();
    let (wake_tx, wake_rx) = mpsc::channel::<()>();
    let w0 = thread::spawn(move || {
        hooks::worker_start(0);
        hooks::task_begin(TaskKind::Install);
        {
            let _z = threadlab::zone!("decode");
            hooks::spawn(FLOW);
            hooks::queue_depth("deque 0", 1);
        }
        hooks::task_end();
        spawned_tx.send(()).unwrap();
        hooks::spin_begin();
        hooks::spin_end();
        hooks::park_begin();
        wake_rx.recv().unwrap();
        hooks::park_end();
    });
    let w1 = thread::spawn(move || {
        hooks::worker_start(1);
        spawned_rx.recv().unwrap();
        hooks::steal_attempt(0);
        hooks::steal(0);
        hooks::queue_depth("deque 0", 0);
        hooks::task_begin_from(TaskKind::Spawn, FLOW);
        hooks::task_end();
        hooks::wake(0);
        wake_tx.send(()).unwrap();
    });
    w0.join().unwrap();
    w1.join().unwrap();

    // The lock: "holder" takes it and holds it 20 ms; "waiter" asks for it meanwhile.
    let m = Arc::new(threadlab::sync::Mutex::named("queue", 0u32));
    let barrier = Arc::new(Barrier::new(2));
    let (m2, b2) = (m.clone(), barrier.clone());
    let holder = thread::Builder::new()
        .name("holder".into())
        .spawn(move || {
            let mut g = m2.lock();
            b2.wait();
            thread::sleep(HOLD);
            *g += 1;
        })
        .unwrap();
    let waiter = thread::Builder::new()
        .name("waiter".into())
        .spawn(move || {
            barrier.wait();
            *m.lock() += 1;
        })
        .unwrap();
    holder.join().unwrap();
    waiter.join().unwrap();
    rec.stop()
}

/// The index of the thread named `name`.
pub fn thread_named(trace: &Trace, name: &str) -> usize {
    trace
        .threads()
        .iter()
        .position(|t| t.name() == name)
        .unwrap_or_else(|| panic!("no thread named {name:?} in {:?}", names(trace)))
}

pub fn names(trace: &Trace) -> Vec<&str> {
    trace.threads().iter().map(|t| t.name()).collect()
}

/// Runs the scenario ([`record_scenario`]), saves its trace to the temporary file `file` (the
/// extension picks the format) and returns the trace and the file's path.
pub fn saved_scenario(file: &str) -> (Trace, std::path::PathBuf) {
    let trace = record_scenario();
    let path = temp_path(file);
    trace.save(&path).unwrap();
    (trace, path)
}

pub fn temp_path(file: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("threadlab-trace-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(file)
}
