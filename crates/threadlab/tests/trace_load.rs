//! Save/load round trip of the native format, and bad files: every truncation of a small trace,
//! corrupted bytes, and unsupported extensions give an error naming the file and the offset.

mod trace_support;

use threadlab::trace::Trace;
use threadlab_doctor::Diagnose;
use trace_support::*;

#[test]
fn round_trip_keeps_every_event() {
    let _s = serial();
    let (trace, path) = saved_scenario("roundtrip.tltrace");
    let back = Trace::load(&path).unwrap();
    assert_eq!(back, trace);
    assert!(back.event_count() > 20);
}

/// The Perfetto file reads back to the same events (names resolved, since the name table is
/// rebuilt in first-use order) and the same diagnosis.
#[test]
fn pftrace_round_trip_gives_the_same_events_and_diagnosis() {
    let _s = serial();
    let (trace, path) = saved_scenario("roundtrip.pftrace");
    let back = Trace::load(&path).unwrap();
    let show = |t: &Trace| {
        let mut lines = vec![format!(
            "{} {} {}",
            t.duration_ns(),
            t.cpus(),
            t.dropped_events()
        )];
        for th in t.threads() {
            lines.push(format!("{} {} {:?}", th.tid(), th.name(), th.worker()));
            for e in th.events().iter() {
                let kind = format!("{:?}", e.kind);
                let named = match e.kind {
                    threadlab::trace::EventKind::ZoneBegin { name }
                    | threadlab::trace::EventKind::Counter { name, .. }
                    | threadlab::trace::EventKind::LockWait { name, .. }
                    | threadlab::trace::EventKind::LockAcquired { name, .. }
                    | threadlab::trace::EventKind::LockReleased { name, .. } => {
                        kind.replace(&format!("{name:?}"), t.name(name))
                    }
                    _ => kind,
                };
                lines.push(format!("{} {named}", e.ts_ns));
            }
        }
        lines
    };
    assert_eq!(show(&back), show(&trace));
    assert!(back.event_count() > 20);
    assert_eq!(back.diagnose().to_string(), trace.diagnose().to_string());
}

#[test]
fn every_truncation_and_corruption_is_an_error_with_file_and_offset() {
    let _s = serial();
    let rec = threadlab::trace::start();
    {
        let _z = threadlab::zone!("small");
        *threadlab::sync::Mutex::named("l", 0).lock() += 1;
    }
    let trace = rec.stop();
    let path = temp_path("small.tltrace");
    trace.save(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let bad = temp_path("bad.tltrace");
    for len in 0..bytes.len() {
        std::fs::write(&bad, &bytes[..len]).unwrap();
        let err = Trace::load(&bad).expect_err("a truncated file must not load");
        let msg = err.to_string();
        assert!(msg.contains("bad.tltrace"), "{msg}");
        let offset = err.offset().expect("an offset");
        assert!(
            offset <= len as u64,
            "offset {offset} past the end {len}: {msg}"
        );
        assert!(msg.contains(&format!("offset {offset}")), "{msg}");
    }
    // Flipping any byte must not panic (it may still load when the byte was a value).
    for i in 0..bytes.len() {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut b = bytes.clone();
            b[i] ^= flip;
            std::fs::write(&bad, &b).unwrap();
            if let Err(e) = Trace::load(&bad) {
                assert!(e.to_string().contains("bad.tltrace"));
            }
        }
    }
    // A trailing byte is an error too.
    let mut longer = bytes.clone();
    longer.push(0);
    std::fs::write(&bad, &longer).unwrap();
    assert_eq!(
        Trace::load(&bad).unwrap_err().offset(),
        Some(bytes.len() as u64)
    );
}

#[test]
fn unsupported_extensions_and_missing_files() {
    let _s = serial();
    let trace = threadlab::trace::start().stop();
    let err = trace.save(temp_path("x.txt")).unwrap_err().to_string();
    assert!(
        err.contains(".pftrace") && err.contains(".json") && err.contains(".tltrace"),
        "{err}"
    );
    let err = Trace::load(temp_path("x.json")).unwrap_err().to_string();
    assert!(err.contains(".tltrace"), "{err}");
    let err = Trace::load(temp_path("missing.tltrace"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("missing.tltrace"), "{err}");
}
