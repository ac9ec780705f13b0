//! `threadlab doctor --frame-target`: a trace with frame marks gets its frame figures — how many
//! frames were late and what ran in them — in text and JSON.

use std::process::Command;

use threadlab::trace::{Event, EventKind, TraceBuilder};

#[test]
fn doctor_reports_late_frames_and_what_ran_in_them() {
    let mut b = TraceBuilder::new();
    let t = b.thread(7, "render");
    let (frame, draw, upload) = (b.name("frame"), b.name("draw"), b.name("upload"));
    let ms = 1_000_000;
    let mut now = 0;
    let push = |b: &mut TraceBuilder, ts, kind| b.push(t, Event { ts_ns: ts, kind });
    push(&mut b, 0, EventKind::FrameMark { name: frame });
    for i in 0..20 {
        push(&mut b, now, EventKind::ZoneBegin { name: draw });
        now += 4 * ms;
        push(&mut b, now, EventKind::ZoneEnd);
        if i % 7 == 3 {
            // Frames 4, 11 and 18 also upload for 20 ms: late against 16.7 ms.
            push(&mut b, now, EventKind::ZoneBegin { name: upload });
            now += 20 * ms;
            push(&mut b, now, EventKind::ZoneEnd);
        }
        push(&mut b, now, EventKind::FrameMark { name: frame });
    }
    b.duration_ns(now);
    let dir = std::env::temp_dir().join(format!("threadlab-doctor-frames-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("frames.tltrace");
    b.build().save(&path).unwrap();

    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_threadlab"))
            .arg("doctor")
            .arg(&path)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let text = run(&["--frame-target", "16.7ms"]);
    assert!(text.contains("Frames `frame`: 20 frame(s)"), "{text}");
    assert!(
        text.contains("3 late (target 16.70 ms)") || text.contains("3 late (target 16.7"),
        "{text}"
    );
    assert!(text.contains("frame 4 at"), "{text}");
    assert!(
        text.contains("more in late frames") && text.contains("upload"),
        "{text}"
    );

    let json: serde_json::Value =
        serde_json::from_str(&run(&["--json", "--frame-target", "16.7ms"])).unwrap();
    let f = &json["frames"][0];
    assert_eq!(f["frames"], 20);
    let late: Vec<u64> = f["late"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["number"].as_u64().unwrap())
        .collect();
    assert_eq!(late, [4, 11, 18]);
    assert_eq!(
        f["late"][0]["ran"][0],
        serde_json::json!(["upload", 20 * ms])
    );
    assert_eq!(f["more_in_late"][0][0], "upload");

    // A percentile target: 17 frames of 4 ms and 3 of 24 ms; the 85th percentile is 4 ms, and
    // the frames longer than it are the three upload frames.
    let json: serde_json::Value =
        serde_json::from_str(&run(&["--json", "--frame-target", "p85"])).unwrap();
    assert_eq!(json["frames"][0]["late"].as_array().unwrap().len(), 3);
    // A bad target is refused with a usage error.
    let out = Command::new(env!("CARGO_BIN_EXE_threadlab"))
        .args(["doctor", path.to_str().unwrap(), "--frame-target", "soon"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    std::fs::remove_dir_all(&dir).ok();
}
