//! The viewer's time axis (`axisTicks` in `view/viewer.js`, run in Node) at three zooms around
//! 30 ms — a 10 µs, a 1 ms and a 1 s window: neighbouring ticks never read the same (a 10 µs
//! window used to read "30.00 ms" at every tick), and at the width of a 1280 px page the labels
//! do not reach the next tick (a label's width bounded from above at 6.5 px a character of the
//! 10 px font, plus the 2 px gap it is drawn at). Without Node (`node` on PATH) the test says
//! so and passes, unless `THREADLAB_REQUIRE_NODE=1`.

use std::process::Command;

const VIEWER: &str = include_str!("../src/view/viewer.js");

#[test]
fn axis_ticks_keep_enough_digits_and_room_at_three_zooms() {
    let start = VIEWER
        .find("function axisTicks")
        .expect("axisTicks in viewer.js");
    let end = start + VIEWER[start..].find("\n}\n").expect("end of axisTicks") + 3;
    let script = format!(
        "{}\nconst out = [[29995000, 30005000], [29500000, 30500000], [0, 1e9]]\
         .map(([a, b]) => ({{ span: b - a, ticks: axisTicks(a, b) }}));\
         console.log(JSON.stringify(out));",
        &VIEWER[start..end]
    );
    let out = match Command::new("node").arg("-e").arg(&script).output() {
        Ok(o) => o,
        Err(e) => {
            assert!(
                std::env::var_os("THREADLAB_REQUIRE_NODE").is_none(),
                "node: {e}"
            );
            println!("view_axis SKIPPED: no node ({e})");
            return;
        }
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let zooms: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let plot_px = 1280.0 - 170.0;
    for z in zooms.as_array().unwrap() {
        let span = z["span"].as_f64().unwrap();
        let ticks = z["ticks"].as_array().unwrap();
        assert!(ticks.len() >= 5, "{z}");
        for pair in ticks.windows(2) {
            let (a, b) = (&pair[0], &pair[1]);
            assert_ne!(a["label"], b["label"], "two ticks read the same: {z}");
            let gap_px = (b["t"].as_f64().unwrap() - a["t"].as_f64().unwrap()) / span * plot_px;
            let width_px = 2.0 + 6.5 * a["label"].as_str().unwrap().chars().count() as f64;
            assert!(width_px < gap_px, "label {a} runs into the next tick: {z}");
        }
    }
}
