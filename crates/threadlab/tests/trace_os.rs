//! OS samples: a thread that lives and dies inside a recording is sampled when it first records
//! and again at its exit, and starts from a birth sample of zeros, so its on-CPU, run-queue and
//! context-switch figures cover its whole life.

use threadlab::trace::EventKind;

/// One recording at a time: the tests of this file take turns.
static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn a_short_lived_thread_is_sampled_at_start_and_exit() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let rec = threadlab::trace::start();
    std::thread::Builder::new()
        .name("short-lived".into())
        .spawn(|| {
            let _z = threadlab::zone!("work");
            std::thread::sleep(std::time::Duration::from_millis(2));
        })
        .unwrap()
        .join()
        .unwrap();
    let trace = rec.stop();
    let t = trace
        .threads()
        .iter()
        .find(|t| t.name() == "short-lived")
        .expect("the thread recorded its zone");
    let samples: Vec<u64> = t
        .events()
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::OsSwitches { voluntary, .. } => Some(voluntary),
            _ => None,
        })
        .collect();
    assert!(
        samples.len() >= 2,
        "start and exit samples: {:?}",
        t.events()
    );
    let last = t.events().last().unwrap();
    assert!(
        matches!(
            last.kind,
            EventKind::OsSched { .. } | EventKind::OsSwitches { .. }
        ),
        "the exit sample comes last: {last:?}"
    );
    // The sleep between the two samples is a voluntary switch.
    assert!(samples[samples.len() - 1] > samples[0], "{samples:?}");
}

/// A thread born during the recording starts its track with a birth sample (every counter
/// zero), so what it spent before its first event (here 20 ms on a CPU) counts; a thread that
/// was alive when the recording started has none (its counters hold its life before the start).
#[cfg(target_os = "linux")]
#[test]
fn a_thread_born_during_the_recording_counts_from_its_birth() {
    use std::time::{Duration, Instant};
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let (go, wait) = std::sync::mpsc::channel::<()>();
    let older = std::thread::Builder::new()
        .name("older".into())
        .spawn(move || {
            wait.recv().unwrap();
            let _z = threadlab::zone!("late work");
        })
        .unwrap();
    let rec = threadlab::trace::start();
    std::thread::Builder::new()
        .name("newborn".into())
        .spawn(|| {
            let t = Instant::now();
            while t.elapsed() < Duration::from_millis(20) {
                std::hint::spin_loop();
            }
            let _z = threadlab::zone!("work");
        })
        .unwrap()
        .join()
        .unwrap();
    go.send(()).unwrap();
    older.join().unwrap();
    let trace = rec.stop();
    let sched = |name: &str| -> Vec<(u64, u64)> {
        let t = trace
            .threads()
            .iter()
            .find(|t| t.name() == name)
            .unwrap_or_else(|| panic!("{name} recorded its zone"));
        t.events()
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::OsSched {
                    on_cpu_ns,
                    runqueue_ns,
                } => Some((on_cpu_ns, runqueue_ns)),
                _ => None,
            })
            .collect()
    };
    let newborn = sched("newborn");
    assert_eq!(newborn[0], (0, 0), "a birth sample first: {newborn:?}");
    // The 20 ms of spinning are on a CPU or, on a busy machine, runnable and waiting for one.
    assert!(
        newborn[1].0 + newborn[1].1 >= 10_000_000,
        "its first real sample holds the 20 ms it spun before recording anything: {newborn:?}"
    );
    let older = sched("older");
    assert!(
        !older.is_empty() && older[0] != (0, 0),
        "a thread alive at the start has no birth sample: {older:?}"
    );
}
