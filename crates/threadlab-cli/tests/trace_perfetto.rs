//! The Perfetto export, decoded with the real Perfetto protos (`perfetto_protos`): thread tracks
//! and their names, nesting of slices, flows between the right threads, lock wait/hold durations.

// The scenario shared with the library's trace tests.
#[path = "../../threadlab/tests/trace_support/mod.rs"]
mod trace_support;

use std::collections::HashMap;

use perfetto_protos::trace::Trace as PbTrace;
use perfetto_protos::track_event::track_event::Type;
use protobuf::Message;
use threadlab::trace::Trace;
use trace_support::*;

/// (ts, track, type, name, flow_ids, terminating_flow_ids).
type PbEvent = (u64, u64, Type, String, Vec<u64>, Vec<u64>);

struct Decoded {
    /// Track uuid → (name, parent uuid); thread tracks use their thread name.
    tracks: HashMap<u64, (String, u64)>,
    /// (ts, track, type, name, flow_ids, terminating_flow_ids) in file order.
    events: Vec<PbEvent>,
}

fn decode(bytes: &[u8]) -> Decoded {
    let pb = PbTrace::parse_from_bytes(bytes).expect("valid Perfetto Trace protobuf");
    let mut tracks = HashMap::new();
    let mut events = Vec::new();
    for p in &pb.packet {
        if p.has_track_descriptor() {
            let d = p.track_descriptor();
            let name = if d.thread.is_some() {
                d.thread.thread_name().to_owned()
            } else {
                d.name().to_owned()
            };
            tracks.insert(d.uuid(), (name, d.parent_uuid()));
        }
        if p.has_track_event() {
            let e = p.track_event();
            events.push((
                p.timestamp(),
                e.track_uuid(),
                e.type_(),
                e.name().to_owned(),
                e.flow_ids.clone(),
                e.terminating_flow_ids.clone(),
            ));
        }
    }
    Decoded { tracks, events }
}

impl Decoded {
    fn thread_track(&self, name: &str) -> u64 {
        *self
            .tracks
            .iter()
            .find(|(_, (n, _))| n == name)
            .unwrap_or_else(|| panic!("no track {name:?}: {:?}", self.tracks))
            .0
    }
    /// The thread track a track belongs to (itself, or its parent for lock/counter tracks).
    fn owner(&self, track: u64) -> u64 {
        let (_, parent) = &self.tracks[&track];
        if self.tracks.get(parent).is_some_and(|(_, pp)| *pp != 0) {
            *parent
        } else {
            track
        }
    }
}

#[test]
fn perfetto_export_decodes_with_real_protos() {
    let _s = serial();
    let trace = record_scenario();
    let path = temp_path("scenario.pftrace");
    trace.save(&path).unwrap();
    let d = decode(&std::fs::read(&path).unwrap());

    // Thread tracks, named.
    for name in [
        "main",
        "threadlab-worker-0",
        "threadlab-worker-1",
        "holder",
        "waiter",
    ] {
        d.thread_track(name);
    }
    // Every event is on a declared track.
    for e in &d.events {
        assert!(
            d.tracks.contains_key(&e.1),
            "event {e:?} on an undeclared track"
        );
    }

    // Nesting: per track, begins and ends balance; record each slice's parent and duration.
    let mut stacks: HashMap<u64, Vec<(String, u64)>> = HashMap::new();
    let mut slices: Vec<(u64, String, Option<String>, u64)> = Vec::new(); // track, name, parent, dur
    for (ts, track, ty, name, _, _) in &d.events {
        let stack = stacks.entry(*track).or_default();
        match ty {
            Type::TYPE_SLICE_BEGIN => stack.push((name.clone(), *ts)),
            Type::TYPE_SLICE_END => {
                let (name, begin) = stack.pop().expect("a slice end without a begin");
                let parent = stack.last().map(|p| p.0.clone());
                slices.push((*track, name, parent, ts - begin));
            }
            _ => {}
        }
    }
    assert!(
        stacks.values().all(|s| s.is_empty()),
        "unclosed slices: {stacks:?}"
    );
    let slice = |name: &str| {
        slices
            .iter()
            .find(|s| s.1 == name)
            .unwrap_or_else(|| panic!("no slice {name:?}"))
    };
    assert_eq!(slice("inner").2.as_deref(), Some("outer"));
    assert_eq!(slice("outer").2, None);
    assert_eq!(slice("decode").2.as_deref(), Some("task: install"));
    assert_eq!(slice("task: spawn").0, d.thread_track("threadlab-worker-1"));
    assert_eq!(slice("parked").0, d.thread_track("threadlab-worker-0"));

    // Flows: origin track → terminating track, by flow id, in time order (as trace processor
    // sorts; a stable sort keeps the file order of events at the same time).
    let mut by_time: Vec<_> = d.events.iter().collect();
    by_time.sort_by_key(|e| e.0);
    let mut origin: HashMap<u64, (u64, String)> = HashMap::new();
    let mut links: Vec<(String, String, String)> = Vec::new(); // origin event, from, to thread
    let name_of = |t: u64| d.tracks[&d.owner(t)].0.clone();
    for (_, track, _, name, flows, terminating) in by_time {
        for f in flows {
            origin.insert(*f, (*track, name.clone()));
        }
        for f in terminating {
            let (from, what) = origin
                .get(f)
                .unwrap_or_else(|| panic!("flow {f} ends before it starts"));
            links.push((what.clone(), name_of(*from), name_of(*track)));
        }
    }
    for (what, from, to, flow) in [
        ("spawn", "threadlab-worker-0", "threadlab-worker-1", "spawn"),
        (
            "stolen from",
            "threadlab-worker-0",
            "threadlab-worker-1",
            "steal",
        ),
        ("wake", "threadlab-worker-1", "threadlab-worker-0", "wake"),
        ("hand-off", "holder", "waiter", "lock hand-off"),
    ] {
        assert!(
            links
                .iter()
                .any(|l| l.0 == what && l.1 == from && l.2 == to),
            "{flow} flow: {links:?}"
        );
    }

    // Lock figures: the holder held "queue" ≥ 20 ms; the waiter waited ≥ 15 ms.
    let hold = slices
        .iter()
        .find(|s| s.1 == "hold: queue" && d.owner(s.0) == d.thread_track("holder"))
        .expect("holder's hold slice");
    assert!(hold.3 >= HOLD.as_nanos() as u64, "hold {} ns", hold.3);
    let wait = slices
        .iter()
        .find(|s| s.1 == "wait: queue" && s.0 == d.thread_track("waiter"))
        .expect("waiter's wait slice");
    assert!(wait.3 >= 15_000_000, "wait {} ns", wait.3);

    // Counter tracks: the queue depth counter with its two values, OS counters per thread.
    let depth = d.thread_track("deque 0");
    let values: Vec<_> = d
        .events
        .iter()
        .filter(|e| e.1 == depth && e.2 == Type::TYPE_COUNTER)
        .collect();
    assert_eq!(values.len(), 2);
    assert!(d
        .tracks
        .values()
        .any(|(n, _)| n == "threadlab-worker-0: run-queue wait ns"));
}

/// Tracy's vocabulary in the export, decoded with the real protos: a frame set's track of frame
/// slices, a plot's counter track of doubles, messages (with their colour) and frame marks as
/// instants on the thread's track, a zone's colour; and the file reads back to the same frames.
#[test]
fn frames_plots_and_messages_decode_with_real_protos() {
    let _s = serial();
    let rec = threadlab::trace::start();
    threadlab::trace::set_thread_name("main");
    threadlab::trace::frame_mark();
    for (i, fps) in [60.0, 59.5, 30.25].into_iter().enumerate() {
        let z = threadlab::trace::Zone::begin_dynamic(&format!("level {i}"));
        z.color(0x00ff00);
        threadlab::trace::plot("fps", fps);
        threadlab::trace::message(&format!("hello {i}"));
        drop(z);
        threadlab::trace::frame_mark();
    }
    threadlab::trace::message_color("late!", 0xff0000);
    let trace = rec.stop();
    let path = temp_path("marks.pftrace");
    trace.save(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let pb = PbTrace::parse_from_bytes(&bytes).expect("valid protobuf");
    let decoded = decode(&bytes);
    let track = |name: &str| decoded.thread_track(name);
    let (frames, plot, main) = (track("frames: frame"), track("plot: fps"), track("main"));
    let events: Vec<_> = pb
        .packet
        .iter()
        .filter(|p| p.has_track_event())
        .map(|p| (p.timestamp(), p.track_event()))
        .collect();
    // The frame set's track: three frame slices, each from one mark to the next.
    // The names of the slices that begin on `track`, in order.
    let slices_on = |track: u64| -> Vec<String> {
        events
            .iter()
            .filter(|(_, e)| e.track_uuid() == track && e.type_() == Type::TYPE_SLICE_BEGIN)
            .map(|(_, e)| e.name().to_owned())
            .collect()
    };
    assert_eq!(slices_on(frames), ["frame 1", "frame 2", "frame 3"]);
    let ends = events
        .iter()
        .filter(|(_, e)| e.track_uuid() == frames && e.type_() == Type::TYPE_SLICE_END)
        .count();
    assert_eq!(ends, 3);
    let marks_ts: Vec<u64> = events
        .iter()
        .filter(|(_, e)| e.track_uuid() == main && e.categories.iter().any(|c| c == "frame"))
        .map(|(ts, _)| *ts)
        .collect();
    assert_eq!(marks_ts.len(), 4, "four frame marks on the thread's track");
    let frame_begins: Vec<u64> = events
        .iter()
        .filter(|(_, e)| e.track_uuid() == frames && e.type_() == Type::TYPE_SLICE_BEGIN)
        .map(|(ts, _)| *ts)
        .collect();
    assert_eq!(frame_begins, marks_ts[..3]);
    // The plot: a counter track of doubles.
    let values: Vec<f64> = events
        .iter()
        .filter(|(_, e)| e.track_uuid() == plot && e.type_() == Type::TYPE_COUNTER)
        .map(|(_, e)| e.double_counter_value())
        .collect();
    assert_eq!(values, [60.0, 59.5, 30.25]);
    // Messages: instants in the `message` category; the coloured one carries `color`.
    let messages: Vec<(String, Option<u64>)> = events
        .iter()
        .filter(|(_, e)| e.track_uuid() == main && e.categories.iter().any(|c| c == "message"))
        .map(|(_, e)| {
            let color = e
                .debug_annotations
                .iter()
                .find(|a| a.name() == "color")
                .map(|a| a.uint_value());
            (e.name().to_owned(), color)
        })
        .collect();
    assert_eq!(
        messages,
        [
            ("hello 0".to_owned(), None),
            ("hello 1".to_owned(), None),
            ("hello 2".to_owned(), None),
            ("late!".to_owned(), Some(0xff0000)),
        ]
    );
    // Dynamic zone names are slice names; each zone's colour is an instant beside it.
    assert_eq!(slices_on(main), ["level 0", "level 1", "level 2"]);
    let colours = events
        .iter()
        .filter(|(_, e)| e.name() == "zone color")
        .filter(|(_, e)| {
            e.debug_annotations
                .iter()
                .any(|a| a.name() == "color" && a.uint_value() == 0x00ff00)
        })
        .count();
    assert_eq!(colours, 3);
    // Read back: the same frames, plot values and messages.
    let back = Trace::load(&path).unwrap();
    assert_eq!(back.frames("frame"), trace.frames("frame"));
    assert_eq!(back.event_count(), trace.event_count());
    std::fs::remove_file(&path).ok();
}

/// A span's arguments are text debug annotations on its slice begin, and the zones that are
/// entries of one span (`span.id`, here on two threads) share a flow.
#[test]
fn span_arguments_and_span_flows_decode_with_real_protos() {
    use threadlab::trace::{hooks, ARG_SPAN_ID};
    let _s = serial();
    let rec = threadlab::trace::start();
    let enter = || {
        hooks::zone_enter("request");
        hooks::arg(ARG_SPAN_ID, "41");
        hooks::arg(
            "path",
            "/a/rather/long/path/that/takes/several/records.html",
        );
        hooks::zone_exit();
    };
    enter();
    std::thread::spawn(enter).join().unwrap();
    let trace = rec.stop();
    let path = temp_path("span-args.pftrace");
    trace.save(&path).unwrap();
    let pb = PbTrace::parse_from_bytes(&std::fs::read(&path).unwrap()).expect("valid protobuf");
    let begins: Vec<_> = pb
        .packet
        .iter()
        .filter(|p| p.has_track_event())
        .map(|p| p.track_event())
        .filter(|e| e.type_() == Type::TYPE_SLICE_BEGIN && e.name() == "request")
        .collect();
    assert_eq!(begins.len(), 2);
    for e in &begins {
        let args: Vec<(&str, &str)> = e
            .debug_annotations
            .iter()
            .map(|a| (a.name(), a.string_value()))
            .collect();
        assert_eq!(
            args,
            [
                (ARG_SPAN_ID, "41"),
                (
                    "path",
                    "/a/rather/long/path/that/takes/several/records.html"
                )
            ]
        );
    }
    assert_eq!(begins[0].flow_ids.len(), 1);
    assert_eq!(
        begins[0].flow_ids, begins[1].flow_ids,
        "one flow for the span"
    );
    // And back: `Trace::load` gives the same events.
    assert_eq!(
        threadlab::trace::Trace::load(&path).unwrap().event_count(),
        trace.event_count()
    );
}
