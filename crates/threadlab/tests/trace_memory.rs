//! A recording's memory: the cap of a full recording, the drops it counts,
//! and the peak of `stop` — counted in bytes by a counting allocator, never timed.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Mutex, MutexGuard};
use threadlab_doctor::Diagnose;

use threadlab::trace::{EventKind, Mode};

mod live_bytes;
use live_bytes::{LIVE, PEAK};

#[global_allocator]
static ALLOC: live_bytes::Counting = live_bytes::Counting;

/// The recorder is process-global: one test at a time.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Records `n` zones on each of `threads` new threads (which exit before `stop`).
fn zones(threads: usize, n: usize) {
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            std::thread::spawn(move || {
                for _ in 0..n {
                    let _z = threadlab::zone!("z");
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

#[test]
fn a_capped_recording_stays_under_its_cap_and_counts_what_it_dropped() {
    let _s = serial();
    const CAP: usize = 1 << 20;
    // 2 threads × 100,000 zones of at least 6 bytes (two records of at least 3): 1.2 MB or more
    // wanted.
    const N: usize = 100_000;
    let rec = threadlab::trace::try_start(Mode::Capped { total_bytes: CAP }).unwrap();
    assert_eq!(rec.memory_cap(), Some(CAP));
    zones(2, N);
    let memory = rec.memory_bytes();
    let trace = rec.stop();
    assert!(
        memory <= CAP,
        "{memory} bytes of buffers for a cap of {CAP}"
    );
    assert!(memory >= CAP / 2, "the cap, not less, is used: {memory}");
    let kept_begins = trace
        .threads()
        .iter()
        .flat_map(|t| t.events().iter())
        .filter(|e| matches!(e.kind, EventKind::ZoneBegin { .. }))
        .count() as u64;
    let dropped = trace.dropped_events();
    assert!(dropped > 0, "drops are counted");
    // Every zone is either kept or counted: 2N begins and 2N ends were attempted.
    assert!(
        kept_begins * 2 + dropped >= (4 * N) as u64,
        "kept {kept_begins} begins, dropped {dropped}"
    );
    assert!(dropped <= (4 * N) as u64);
    let doctor = trace.diagnose().to_string();
    assert!(
        doctor.lines().next().unwrap().contains("dropped"),
        "the doctor's first line says events were dropped: {doctor}"
    );
}

#[test]
fn a_default_recording_counts_its_buffers_under_the_default_cap() {
    let _s = serial();
    const N: usize = 50_000;
    let rec = threadlab::trace::start();
    // `start` (Mode::Full) has the documented cap, which the capped test shows is enforced.
    assert_eq!(rec.memory_cap(), Some(threadlab::trace::DEFAULT_CAP_BYTES));
    zones(1, N);
    let memory = rec.memory_bytes();
    let trace = rec.stop();
    // Counted: at least every record's 3 bytes (a header, a time delta, a length); capped by the
    // documented default.
    assert!(memory >= 2 * N * 3, "{memory}");
    assert!(memory <= threadlab::trace::DEFAULT_CAP_BYTES);
    assert_eq!(trace.dropped_events(), 0);
    // Unbounded only when asked: no cap, nothing dropped.
    let rec = threadlab::trace::try_start(Mode::Unbounded).unwrap();
    assert_eq!(rec.memory_cap(), None);
    zones(1, N);
    assert_eq!(rec.stop().dropped_events(), 0);
}

#[test]
fn stop_peaks_under_twice_the_raw_buffers() {
    let _s = serial();
    const N: usize = 200_000;
    let rec = threadlab::trace::try_start(Mode::Unbounded).unwrap();
    zones(2, N);
    let raw = rec.memory_bytes();
    let before = LIVE.load(Relaxed);
    PEAK.store(before, Relaxed);
    let trace = rec.stop();
    let peak = PEAK.load(Relaxed);
    // Memory of the recording before `stop` (its buffers) and at `stop`'s peak, beyond what
    // the process held without it.
    let base = before - raw;
    let ratio = (peak - base) as f64 / raw as f64;
    assert!(
        ratio <= 2.0,
        "stop peaked at {:.2}x the raw buffers ({} of {raw} bytes)",
        ratio,
        peak - base
    );
    eprintln!(
        "stop peak: {ratio:.2}x the raw buffers ({raw} bytes); after: {:.2}x",
        (LIVE.load(Relaxed) - base) as f64 / raw as f64
    );
    assert!(trace.event_count() >= 4 * N);
}

/// Loads the trace at `path`, printing what the load cost, and checks the cost: at most twice
/// the file's size held by the loaded trace, and twice plus 256 KiB at the peak.
fn load_within_bounds(path: &std::path::Path) -> threadlab::trace::Trace {
    let size = std::fs::metadata(path).unwrap().len() as usize;
    let before = LIVE.load(Relaxed);
    PEAK.store(before, Relaxed);
    let loaded = threadlab::trace::Trace::load(path).unwrap();
    let (held, peak) = (LIVE.load(Relaxed) - before, PEAK.load(Relaxed) - before);
    eprintln!(
        "load {path:?}: {size} bytes on disk, {} events; {held} bytes held, {peak} at the peak",
        loaded.event_count()
    );
    assert!(held <= 2 * size, "{held} bytes held for a {size}-byte file");
    assert!(
        peak <= 2 * size + (256 << 10),
        "{peak} at the peak for {size}"
    );
    loaded
}

#[test]
fn a_loaded_trace_takes_about_its_file_size_and_a_foreign_file_is_not_read_whole() {
    let _s = serial();
    let dir = std::env::temp_dir().join(format!("threadlab-trace-memory-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rec = threadlab::trace::start();
    zones(2, 100_000);
    // Some of every common kind: a pool's tasks, steals and parks.
    let pool = threadlab::Pool::builder().threads(2).build().unwrap();
    pool.install(|| {
        threadlab::for_each(0..10_000, |i| {
            std::hint::black_box(i);
        })
    });
    drop(pool);
    let trace = rec.stop();
    let path = dir.join("t.tltrace");
    trace.save(&path).unwrap();
    let loaded = load_within_bounds(&path);
    assert_eq!(loaded, trace, "loaded back without loss");

    // Any other trace, e.g. the lab's largest: THREADLAB_LOAD_FILE=path, same bound.
    if let Some(other) = std::env::var_os("THREADLAB_LOAD_FILE") {
        load_within_bounds(other.as_ref());
    }

    // 64 MiB that are not a trace: refused at byte 0 without reading the file into memory.
    let foreign = dir.join("zeros.tltrace");
    std::fs::write(&foreign, vec![0u8; 64 << 20]).unwrap();
    let before = LIVE.load(Relaxed);
    PEAK.store(before, Relaxed);
    let err = threadlab::trace::Trace::load(&foreign)
        .unwrap_err()
        .to_string();
    let peak = PEAK.load(Relaxed) - before;
    assert!(err.contains("byte offset 0"), "{err}");
    assert!(
        peak < 1 << 20,
        "{peak} bytes allocated to refuse a foreign file"
    );
    let _ = std::fs::remove_dir_all(dir);
}
