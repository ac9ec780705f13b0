//! Frame marks (continuous and discontinuous sets, from several threads), plots, messages
//! (long, multibyte, coloured) and dynamic zone names as recorded, and through `.tltrace`.

mod trace_support;

use threadlab::trace::{self, EventKind, PlotValue, Trace};
use trace_support::*;

fn kinds(trace: &Trace) -> Vec<EventKind> {
    trace
        .threads()
        .iter()
        .flat_map(|t| t.events().iter().map(|e| e.kind))
        .collect()
}

#[test]
fn frames_plots_messages_and_dynamic_names_are_recorded() {
    let _s = serial();
    let rec = trace::start();
    // A continuous set marked from two threads in turn: 5 marks, 4 frames.
    trace::frame_mark_named("render");
    for _ in 0..2 {
        std::thread::spawn(|| trace::frame_mark_named("render"))
            .join()
            .unwrap();
        trace::frame_mark_named("render");
    }
    // A discontinuous set: 3 requests, with gaps between them and a stray end (ignored).
    trace::frame_end("request");
    for i in 0..3 {
        trace::frame_start("request");
        trace::plot("in flight", i as f64 + 0.5);
        trace::frame_end("request");
    }
    let long: String = "é".repeat(trace::MAX_TEXT_BYTES); // 2 bytes each: cut at a boundary
    trace::message(&long);
    trace::message_color("red alert", 0xff0000);
    trace::message_static("static text");
    {
        let z = trace::Zone::begin_dynamic(&format!("job {}", 42));
        z.color(0x0000ff);
    }
    let t = rec.stop();

    assert_eq!(t.frames("render").len(), 4);
    let req = t.frames("request");
    assert_eq!(req.len(), 3);
    assert!(req.windows(2).all(|w| w[0].1 <= w[1].0), "in order, apart");
    assert_eq!(t.frame_sets().len(), 2);
    let ks = kinds(&t);
    let plots: Vec<f64> = ks
        .iter()
        .filter_map(|k| match k {
            EventKind::Plot { value, .. } => Some(value.get()),
            _ => None,
        })
        .collect();
    assert_eq!(plots, [0.5, 1.5, 2.5]);
    let messages: Vec<(String, u32)> = ks
        .iter()
        .filter_map(|k| match k {
            EventKind::Message { text, rgb } => Some((t.name(*text).to_owned(), *rgb)),
            _ => None,
        })
        .collect();
    assert_eq!(messages.len(), 3);
    assert_eq!(messages[0].0, "é".repeat(trace::MAX_TEXT_BYTES / 2));
    assert_eq!(messages[1], ("red alert".to_owned(), 0xff0000));
    assert_eq!(messages[2], ("static text".to_owned(), 0));
    let job = t.name_id("job 42").expect("the dynamic name");
    let at = ks
        .iter()
        .position(|k| *k == EventKind::ZoneBegin { name: job })
        .unwrap();
    assert_eq!(ks[at + 1], EventKind::ZoneColor { rgb: 0x0000ff });
    assert_eq!(ks[at + 2], EventKind::ZoneEnd);

    // The native format keeps all of it.
    let path = temp_path("marks.tltrace");
    t.save(&path).unwrap();
    let back = Trace::load(&path).unwrap();
    assert_eq!(back.frames("render"), t.frames("render"));
    assert_eq!(back.frames("request"), t.frames("request"));
    assert_eq!(back.event_count(), t.event_count());
    assert!(kinds(&back).contains(&EventKind::Plot {
        name: back.name_id("in flight").unwrap(),
        value: PlotValue::new(2.5)
    }));
    std::fs::remove_file(&path).ok();
}

#[test]
fn a_small_flight_recorder_keeps_messages_whole_or_not_at_all() {
    let _s = serial();
    // 32-record chunks (a quarter of the budget): a message of 300 bytes is 14 records, which
    // go to a fresh chunk when the current one has no room for all of them.
    let rec = trace::flight_recorder(4096);
    let text = "x".repeat(300);
    for i in 0..200 {
        trace::plot("i", i as f64);
        trace::message(&text);
    }
    let t = rec.stop();
    let ks = kinds(&t);
    let kept = ks
        .iter()
        .filter(|k| matches!(k, EventKind::Message { .. }))
        .count();
    assert!(kept >= 1, "the newest messages survive");
    for k in &ks {
        if let EventKind::Message { text: id, .. } = k {
            assert_eq!(t.name(*id), text, "never a cut message");
        }
    }
    // Nothing but plots and messages (and OS samples): no text read as an event.
    assert!(ks.iter().all(|k| matches!(
        k,
        EventKind::Plot { .. }
            | EventKind::Message { .. }
            | EventKind::OsSched { .. }
            | EventKind::OsSwitches { .. }
    )));
}
