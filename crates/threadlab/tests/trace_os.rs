//! OS samples: a thread that lives and dies inside a recording is sampled when it first records
//! and again at its exit, so its on-CPU, run-queue and context-switch figures cover its life.

use threadlab::trace::EventKind;

#[test]
fn a_short_lived_thread_is_sampled_at_start_and_exit() {
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
