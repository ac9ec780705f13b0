//! Perfetto export: a small protobuf encoder of our own for the few messages of Perfetto's
//! TrackEvent format we need (field numbers from perfetto/protos/perfetto/trace/trace_packet.proto,
//! track_event/track_event.proto and track_event/track_descriptor.proto; format described at
//! perfetto.dev/docs/reference/synthetic-track-event).
//!
//! Layout: one process track; under it one track per thread (named, with its tid); under each
//! thread one track per lock it held ("hold: NAME", since holds may overlap the thread's other
//! spans) and counter tracks for its OS figures; one global counter track per counter name.
//! Spans (zones, tasks, spinning, parked, lock waits) are SLICE_BEGIN/SLICE_END pairs on the
//! thread track; spawns, steals, wake-ups and lock hand-offs are flows (arrows) between
//! events: the TrackEvent `flow_ids` on the origin and `terminating_flow_ids` on the target.
//! A span's arguments ([`EventKind::Arg`]: `tracing` fields, a task's name and location) are
//! text debug annotations on its slice begin; the zones that are entries of one span (the same
//! `span.id`, e.g. a span carried into a task on another worker) share a flow, so Perfetto
//! draws an arrow from each entry to the next.
//! A lock wait's arguments (its call site, the thread that held the lock) are annotations of
//! its slice too.
//! Each thread writes on its own packet sequence. What Perfetto has no field for rides in debug
//! annotations, so that `pftrace_read.rs` reads the trace back whole: the duration, dropped and
//! CPU counts on a `threadlab trace` instant of the process track, a worker's index on a
//! `threadlab worker` instant at 0 on its track, the lock id on every lock slice; the lock
//! table (`lock_summary.rs`) as instants at 0 on the process track (`encode_locks`, below); a
//! `threadlab end` instant is the last packet. The track, slice and flow numbering is defined
//! here only; `pftrace_read.rs` reads it back.

use std::collections::HashMap;

use super::event::EventKind;
use super::lock_summary::Durations;
use super::trace::Trace;

// TracePacket fields.
pub(super) const PACKET: u32 = 1;
pub(super) const P_TIMESTAMP: u32 = 8;
pub(super) const P_SEQUENCE_ID: u32 = 10;
pub(super) const P_TRACK_EVENT: u32 = 11;
pub(super) const P_SEQUENCE_FLAGS: u32 = 13;
pub(super) const P_TRACK_DESCRIPTOR: u32 = 60;
/// `SEQ_INCREMENTAL_STATE_CLEARED`.
const SEQ_CLEARED: u64 = 1;
// TrackDescriptor fields.
pub(super) const TD_UUID: u32 = 1;
pub(super) const TD_NAME: u32 = 2;
pub(super) const TD_PROCESS: u32 = 3;
pub(super) const TD_THREAD: u32 = 4;
pub(super) const TD_PARENT: u32 = 5;
pub(super) const TD_COUNTER: u32 = 8;
// ProcessDescriptor / ThreadDescriptor fields.
const PD_PID: u32 = 1;
const PD_NAME: u32 = 6;
pub(super) const THD_PID: u32 = 1;
pub(super) const THD_TID: u32 = 2;
pub(super) const THD_NAME: u32 = 5;
// TrackEvent fields.
pub(super) const TE_DEBUG: u32 = 4;
pub(super) const TE_TYPE: u32 = 9;
pub(super) const TE_TRACK: u32 = 11;
pub(super) const TE_CATEGORY: u32 = 22;
pub(super) const TE_NAME: u32 = 23;
pub(super) const TE_COUNTER: u32 = 30;
pub(super) const TE_DOUBLE_COUNTER: u32 = 44;
pub(super) const TE_FLOW: u32 = 47;
pub(super) const TE_TERMINATING_FLOW: u32 = 48;
// DebugAnnotation fields.
pub(super) const DA_UINT: u32 = 3;
pub(super) const DA_NAME: u32 = 10;
pub(super) const DA_STRING: u32 = 6;
// TrackEvent.Type values.
pub(super) const SLICE_BEGIN: u64 = 1;
pub(super) const SLICE_END: u64 = 2;
pub(super) const INSTANT: u64 = 3;
pub(super) const COUNTER: u64 = 4;

pub(super) const PROCESS_UUID: u64 = 1;
/// The process-track instant that carries the duration, dropped count and CPU count.
pub(crate) const META_NAME: &str = "threadlab trace";
/// The process-track instant that ends the file (at the trace's duration).
pub(crate) const END_NAME: &str = "threadlab end";
/// The thread-track instant (at 0) that carries a worker's index.
pub(crate) const WORKER_NAME: &str = "threadlab worker";
/// A thread-track instant carrying an argument that follows no span begin (its text
/// annotation is the argument).
pub(crate) const ARG_NAME: &str = "threadlab arg";

/// A protobuf message being written.
#[derive(Default)]
struct Msg(Vec<u8>);

impl Msg {
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }
    fn tag(&mut self, field: u32, wire: u32) {
        self.varint(((field as u64) << 3) | wire as u64);
    }
    fn uint(&mut self, field: u32, v: u64) -> &mut Self {
        self.tag(field, 0);
        self.varint(v);
        self
    }
    fn fixed64(&mut self, field: u32, v: u64) -> &mut Self {
        self.tag(field, 1);
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn bytes(&mut self, field: u32, b: &[u8]) -> &mut Self {
        self.tag(field, 2);
        self.varint(b.len() as u64);
        self.0.extend_from_slice(b);
        self
    }
    fn str(&mut self, field: u32, s: &str) -> &mut Self {
        self.bytes(field, s.as_bytes())
    }
    fn msg(&mut self, field: u32, m: &Msg) -> &mut Self {
        self.bytes(field, &m.0)
    }
}

fn thread_uuid(i: usize) -> u64 {
    (i as u64 + 1) << 20
}

/// One TrackEvent to write.
pub(super) struct Ev<'a> {
    ts: u64,
    track: u64,
    ty: u64,
    name: Option<&'a str>,
    category: Option<&'static str>,
    flows: Vec<u64>,
    terminating: Vec<u64>,
    counter: Option<i64>,
    /// A plot's value (`double_counter_value`).
    double: Option<f64>,
    /// Debug annotations (name, unsigned value).
    pub(super) args: Vec<(&'static str, u64)>,
    /// Debug annotations (name, text): the trace's [`EventKind::Arg`]s.
    pub(super) str_args: Vec<(&'a str, &'a str)>,
}

impl<'a> Ev<'a> {
    pub(super) fn new(ts: u64, track: u64, ty: u64, name: Option<&'a str>) -> Ev<'a> {
        Ev {
            ts,
            track,
            ty,
            name,
            category: None,
            flows: vec![],
            terminating: vec![],
            counter: None,
            double: None,
            args: vec![],
            str_args: vec![],
        }
    }
}

pub(super) struct Out {
    trace: Msg,
}

impl Out {
    fn packet(&mut self, seq: u32, first: bool, ts: Option<u64>, fill: impl FnOnce(&mut Msg)) {
        let mut p = Msg::default();
        if let Some(ts) = ts {
            p.uint(P_TIMESTAMP, ts);
        }
        p.uint(P_SEQUENCE_ID, seq as u64);
        if first {
            p.uint(P_SEQUENCE_FLAGS, SEQ_CLEARED);
        }
        fill(&mut p);
        self.trace.msg(PACKET, &p);
    }

    fn descriptor(&mut self, uuid: u64, parent: Option<u64>, name: &str, counter: bool) {
        self.packet(1, false, None, |p| {
            let mut d = Msg::default();
            d.uint(TD_UUID, uuid);
            if let Some(parent) = parent {
                d.uint(TD_PARENT, parent);
            }
            d.str(TD_NAME, name);
            if counter {
                d.msg(TD_COUNTER, &Msg::default());
            }
            p.msg(P_TRACK_DESCRIPTOR, &d);
        });
    }

    pub(super) fn event(&mut self, seq: u32, e: &Ev<'_>) {
        self.packet(seq, false, Some(e.ts), |p| {
            let mut t = Msg::default();
            t.uint(TE_TYPE, e.ty).uint(TE_TRACK, e.track);
            if let Some(c) = e.category {
                t.str(TE_CATEGORY, c);
            }
            if let Some(n) = e.name {
                t.str(TE_NAME, n);
            }
            if let Some(v) = e.counter {
                t.uint(TE_COUNTER, v as u64);
            }
            if let Some(v) = e.double {
                t.fixed64(TE_DOUBLE_COUNTER, v.to_bits());
            }
            for f in &e.flows {
                t.fixed64(TE_FLOW, *f);
            }
            for f in &e.terminating {
                t.fixed64(TE_TERMINATING_FLOW, *f);
            }
            for &(name, v) in &e.args {
                let mut a = Msg::default();
                a.str(DA_NAME, name).uint(DA_UINT, v);
                t.msg(TE_DEBUG, &a);
            }
            for &(name, v) in &e.str_args {
                let mut a = Msg::default();
                a.str(DA_NAME, name).str(DA_STRING, v);
                t.msg(TE_DEBUG, &a);
            }
            p.msg(P_TRACK_EVENT, &t);
        });
    }
}

/// Encodes the trace as a Perfetto protobuf (`Trace` message).
pub(crate) fn encode(trace: &Trace) -> Vec<u8> {
    let mut out = Out {
        trace: Msg::default(),
    };
    let pid = std::process::id() as u64;
    out.packet(1, true, None, |p| {
        let mut pd = Msg::default();
        pd.uint(PD_PID, pid).str(PD_NAME, "threadlab");
        let mut d = Msg::default();
        d.uint(TD_UUID, PROCESS_UUID).msg(TD_PROCESS, &pd);
        p.msg(P_TRACK_DESCRIPTOR, &d);
    });
    // What the Perfetto format has no field for, so that `Trace::load` gets the trace back
    // whole (pftrace_read.rs): an instant on the process track.
    let mut meta = Ev::new(0, PROCESS_UUID, INSTANT, Some(META_NAME));
    meta.args = vec![
        ("duration_ns", trace.duration_ns),
        ("dropped", trace.dropped),
        ("cpus", trace.cpus as u64),
    ];
    out.event(1, &meta);
    encode_locks(&mut out, trace);
    // Thread, lock and counter tracks.
    let mut lock_tracks: HashMap<(usize, u64), u64> = HashMap::new();
    let mut counter_tracks: HashMap<u32, u64> = HashMap::new();
    let mut plot_tracks: HashMap<u32, u64> = HashMap::new();
    for (i, t) in trace.threads.iter().enumerate() {
        out.packet(1, false, None, |p| {
            let mut th = Msg::default();
            th.uint(THD_PID, pid)
                .uint(THD_TID, t.tid)
                .str(THD_NAME, &t.name);
            let mut d = Msg::default();
            d.uint(TD_UUID, thread_uuid(i))
                .uint(TD_PARENT, PROCESS_UUID)
                .msg(TD_THREAD, &th);
            p.msg(P_TRACK_DESCRIPTOR, &d);
        });
        for (k, label) in OS_COUNTERS.iter().enumerate() {
            out.descriptor(
                thread_uuid(i) + 1 + k as u64,
                Some(thread_uuid(i)),
                &format!("{}: {label}", t.name),
                true,
            );
        }
        for e in &t.events {
            match e.kind {
                EventKind::LockAcquired { lock, name, .. }
                    if !lock_tracks.contains_key(&(i, lock)) =>
                {
                    let uuid = thread_uuid(i) + 0x100 + lock_tracks.len() as u64;
                    lock_tracks.insert((i, lock), uuid);
                    out.descriptor(
                        uuid,
                        Some(thread_uuid(i)),
                        &format!("hold: {}", trace.name(name)),
                        false,
                    );
                }
                EventKind::Counter { name, .. } if !counter_tracks.contains_key(&name.0) => {
                    let uuid = 0x7000_0000_0000 + name.0 as u64;
                    counter_tracks.insert(name.0, uuid);
                    out.descriptor(uuid, Some(PROCESS_UUID), trace.name(name), true);
                }
                EventKind::Plot { name, .. } if !plot_tracks.contains_key(&name.0) => {
                    let uuid = PLOT_TRACKS + name.0 as u64;
                    plot_tracks.insert(name.0, uuid);
                    let label = format!("{PLOT_PREFIX}{}", trace.name(name));
                    out.descriptor(uuid, Some(PROCESS_UUID), &label, true);
                }
                _ => {}
            }
        }
    }
    // Flow ids for steals and wake-ups, above the trace's own.
    let mut next_flow = 1 + trace
        .threads
        .iter()
        .flat_map(|t| t.events.iter())
        .filter_map(|e| match e.kind {
            EventKind::Spawn { flow } => Some(flow.0),
            EventKind::LockReleased { handoff, .. } => handoff.map(|f| f.0),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    // Each worker's park ends, for matching wake-ups: (ts, used).
    let mut park_ends: HashMap<u32, Vec<(u64, bool)>> = HashMap::new();
    for t in &trace.threads {
        if let Some(w) = t.worker {
            let ends = t
                .events
                .iter()
                .filter(|e| e.kind == EventKind::ParkEnd)
                .map(|e| (e.ts_ns, false));
            park_ends.entry(w).or_default().extend(ends);
        }
    }
    let worker_track = |w: u32| trace.worker_thread(w).map(thread_uuid);
    let task_names: Vec<String> = super::event::TaskKind::ALL
        .iter()
        .map(|k| format!("task: {k}"))
        .collect();
    let lock_names: Vec<(String, String)> = trace
        .names
        .iter()
        .map(|n| (format!("wait: {n}"), format!("hold: {n}")))
        .collect();
    let mut span_flows: HashMap<u32, u64> = HashMap::new();
    for (i, t) in trace.threads.iter().enumerate() {
        let seq = i as u32 + 2;
        let track = thread_uuid(i);
        let mut first = true;
        let mut waiting = None;
        let mut allocs = None;
        let mut emit = |out: &mut Out, e: Ev<'_>| {
            if first {
                out.packet(seq, true, None, |_| {});
                first = false;
            }
            out.event(seq, &e);
        };
        if let Some(w) = t.worker {
            let mut ev = Ev::new(0, track, INSTANT, Some(WORKER_NAME));
            ev.args.push(("worker", w as u64));
            emit(&mut out, ev);
        }
        let mut events = t.events.iter().peekable();
        // A span's arguments ride on its begin as text annotations.
        while let Some(e) = events.next() {
            let ts = e.ts_ns;
            match e.kind {
                EventKind::ZoneBegin { name } => {
                    let mut ev = Ev::new(ts, track, SLICE_BEGIN, Some(trace.name(name)));
                    ev.category = Some("zone");
                    take_args(&mut ev, &mut events, trace, &mut span_flows);
                    emit(&mut out, ev);
                }
                EventKind::Arg { key, value } => {
                    let mut ev = Ev::new(ts, track, INSTANT, Some(ARG_NAME));
                    ev.str_args.push((trace.name(key), trace.name(value)));
                    emit(&mut out, ev);
                }
                EventKind::ZoneEnd
                | EventKind::TaskEnd
                | EventKind::SpinEnd
                | EventKind::ParkEnd => {
                    let mut ev = Ev::new(ts, track, SLICE_END, None);
                    // Perfetto shows an end's annotations among its slice's arguments.
                    if let Some((count, bytes)) = allocs.take() {
                        ev.args.push((ALLOCS_ARG, count));
                        ev.args.push((ALLOC_BYTES_ARG, bytes));
                    }
                    emit(&mut out, ev);
                }
                EventKind::TaskBegin { kind, flow } => {
                    let mut ev = Ev::new(
                        ts,
                        track,
                        SLICE_BEGIN,
                        Some(&task_names[kind.code() as usize]),
                    );
                    ev.category = Some("task");
                    ev.terminating.extend(flow.map(|f| f.0));
                    take_args(&mut ev, &mut events, trace, &mut span_flows);
                    emit(&mut out, ev);
                }
                EventKind::Spawn { flow } => {
                    let mut ev = Ev::new(ts, track, INSTANT, Some("spawn"));
                    ev.flows.push(flow.0);
                    emit(&mut out, ev);
                }
                EventKind::StealAttempt { victim } => {
                    let mut ev = Ev::new(ts, track, INSTANT, Some("steal attempt"));
                    ev.args.push(("victim", victim as u64));
                    emit(&mut out, ev);
                }
                EventKind::Steal { victim } => {
                    let mut ev = Ev::new(ts, track, INSTANT, Some("steal"));
                    ev.args.push(("victim", victim as u64));
                    if let Some(vt) = worker_track(victim) {
                        let f = next_flow;
                        next_flow += 1;
                        let mut from = Ev::new(ts, vt, INSTANT, Some("stolen from"));
                        from.flows.push(f);
                        emit(&mut out, from);
                        ev.terminating.push(f);
                    }
                    emit(&mut out, ev);
                }
                EventKind::SpinBegin => {
                    emit(&mut out, Ev::new(ts, track, SLICE_BEGIN, Some("spinning")))
                }
                EventKind::ParkBegin => {
                    emit(&mut out, Ev::new(ts, track, SLICE_BEGIN, Some("parked")))
                }
                EventKind::Wake { woken } => {
                    let mut ev = Ev::new(ts, track, INSTANT, Some("wake"));
                    ev.args.push(("woken", woken as u64));
                    let target = park_ends
                        .get_mut(&woken)
                        .and_then(|ends| ends.iter_mut().find(|(t, used)| *t >= ts && !*used));
                    if let (Some(end), Some(wt)) = (target, worker_track(woken)) {
                        end.1 = true;
                        let f = next_flow;
                        next_flow += 1;
                        ev.flows.push(f);
                        emit(&mut out, ev);
                        let mut to = Ev::new(end.0, wt, INSTANT, Some("woken"));
                        to.terminating.push(f);
                        emit(&mut out, to);
                    } else {
                        emit(&mut out, ev);
                    }
                }
                EventKind::InjectorPush => {
                    emit(&mut out, Ev::new(ts, track, INSTANT, Some("injector push")))
                }
                EventKind::Counter { name, value } => {
                    let mut ev = Ev::new(ts, counter_tracks[&name.0], COUNTER, None);
                    ev.counter = Some(value);
                    emit(&mut out, ev);
                }
                EventKind::LockWait { lock, name } => {
                    waiting = Some(lock);
                    let mut ev =
                        Ev::new(ts, track, SLICE_BEGIN, Some(&lock_names[name.0 as usize].0));
                    ev.category = Some("lock");
                    ev.args.push(("lock", lock));
                    take_args(&mut ev, &mut events, trace, &mut span_flows);
                    emit(&mut out, ev);
                }
                EventKind::LockAcquired {
                    lock,
                    name,
                    handoff,
                } => {
                    if waiting == Some(lock) {
                        waiting = None;
                        emit(&mut out, Ev::new(ts, track, SLICE_END, None));
                    }
                    let mut ev = Ev::new(
                        ts,
                        lock_tracks[&(i, lock)],
                        SLICE_BEGIN,
                        Some(&lock_names[name.0 as usize].1),
                    );
                    ev.category = Some("lock");
                    ev.args.push(("lock", lock));
                    ev.terminating.extend(handoff.map(|f| f.0));
                    emit(&mut out, ev);
                }
                EventKind::LockReleased { lock, handoff, .. } => {
                    let Some(&lt) = lock_tracks.get(&(i, lock)) else {
                        continue;
                    };
                    if let Some(f) = handoff {
                        let mut ev = Ev::new(ts, lt, INSTANT, Some("hand-off"));
                        ev.flows.push(f.0);
                        emit(&mut out, ev);
                    }
                    let mut end = Ev::new(ts, lt, SLICE_END, None);
                    end.args.push(("lock", lock));
                    emit(&mut out, end);
                }
                EventKind::OsSched {
                    on_cpu_ns,
                    runqueue_ns,
                } => {
                    for (k, v) in [(0, on_cpu_ns), (1, runqueue_ns)] {
                        let mut ev = Ev::new(ts, track + 1 + k, COUNTER, None);
                        ev.counter = Some(v as i64);
                        emit(&mut out, ev);
                    }
                }
                EventKind::OsSwitches {
                    voluntary,
                    involuntary,
                } => {
                    for (k, v) in [(2, voluntary), (3, involuntary)] {
                        let mut ev = Ev::new(ts, track + 1 + k, COUNTER, None);
                        ev.counter = Some(v as i64);
                        emit(&mut out, ev);
                    }
                }
                EventKind::FrameMark { name } | EventKind::FrameStart { name } => {
                    let mut ev = Ev::new(ts, track, INSTANT, Some(trace.name(name)));
                    ev.category = Some(if matches!(e.kind, EventKind::FrameMark { .. }) {
                        FRAME_MARK_CATEGORY
                    } else {
                        FRAME_START_CATEGORY
                    });
                    emit(&mut out, ev);
                }
                EventKind::Plot { name, value } => {
                    let mut ev = Ev::new(ts, plot_tracks[&name.0], COUNTER, None);
                    ev.double = Some(value.get());
                    emit(&mut out, ev);
                }
                EventKind::Message { text, rgb } => {
                    let mut ev = Ev::new(ts, track, INSTANT, Some(trace.name(text)));
                    ev.category = Some(MESSAGE_CATEGORY);
                    if rgb != 0 {
                        ev.args.push((COLOR_ARG, rgb as u64));
                    }
                    emit(&mut out, ev);
                }
                EventKind::ZoneColor { rgb } => {
                    let mut ev = Ev::new(ts, track, INSTANT, Some(ZONE_COLOR_NAME));
                    ev.args.push((COLOR_ARG, rgb as u64));
                    emit(&mut out, ev);
                }
                EventKind::Allocs { count, bytes } => allocs = Some((count, bytes)),
            }
        }
    }
    // Each frame set as a track of its frames (derived from the marks: the reader skips it).
    for (k, set) in trace.frame_sets().into_iter().enumerate() {
        let uuid = FRAME_TRACKS + k as u64;
        let label = format!("{FRAMES_PREFIX}{}", trace.name(set));
        out.descriptor(uuid, Some(PROCESS_UUID), &label, false);
        for (n, (begin, end)) in trace.frames(trace.name(set)).into_iter().enumerate() {
            let name = format!("frame {}", n + 1);
            out.event(1, &Ev::new(begin, uuid, SLICE_BEGIN, Some(&name)));
            out.event(1, &Ev::new(end, uuid, SLICE_END, None));
        }
    }
    // The last packet, so that a reader can tell a whole file from a truncated one.
    out.event(
        1,
        &Ev::new(trace.duration_ns, PROCESS_UUID, INSTANT, Some(END_NAME)),
    );
    out.trace.0
}

/// Moves the [`EventKind::Arg`]s that follow a span's begin onto it, as text annotations.
/// A zone that is one entry of a span (its `span.id` argument) also gets a flow of that span:
/// Perfetto draws an arrow from each entry to the next one, e.g. from the span on the thread
/// that spawned a task to the same span entered on the worker that ran it.
fn take_args<'a>(
    ev: &mut Ev<'a>,
    events: &mut std::iter::Peekable<impl Iterator<Item = super::event::Event>>,
    trace: &'a Trace,
    span_flows: &mut HashMap<u32, u64>,
) {
    while let Some(EventKind::Arg { key, value }) = events.peek().map(|e| e.kind) {
        let key_text = trace.name(key);
        ev.str_args.push((key_text, trace.name(value)));
        if key_text == super::event::ARG_SPAN_ID && ev.category == Some("zone") {
            let next = SPAN_FLOWS + span_flows.len() as u64;
            ev.flows.push(*span_flows.entry(value.0).or_insert(next));
        }
        events.next();
    }
}

/// The first flow id of the spans' flows, far above the trace's own (one per spawn or
/// hand-off) and the steal and wake-up arrows numbered after them.
const SPAN_FLOWS: u64 = 1 << 48;

/// The per-thread OS counter tracks, in order (uuid = thread track + 1 + index).
pub(super) const OS_COUNTERS: [&str; 4] = [
    "on-CPU ns",
    "run-queue wait ns",
    "voluntary switches",
    "involuntary switches",
];

/// Plot tracks: `uuid = PLOT_TRACKS + name id`, named `plot: NAME`.
pub(super) const PLOT_TRACKS: u64 = 0x7100_0000_0000;
/// Frame tracks (one per frame set): `uuid = FRAME_TRACKS + k`, named `frames: NAME`.
pub(super) const FRAME_TRACKS: u64 = 0x7200_0000_0000;
pub(super) const PLOT_PREFIX: &str = "plot: ";
pub(super) const FRAMES_PREFIX: &str = "frames: ";
/// Categories of the instants of frame marks, frame starts and messages on a thread's track.
pub(super) const FRAME_MARK_CATEGORY: &str = "frame";
pub(super) const FRAME_START_CATEGORY: &str = "frame start";
pub(super) const MESSAGE_CATEGORY: &str = "message";
/// The instant that carries a zone's colour (`color` annotation).
pub(super) const ZONE_COLOR_NAME: &str = "zone color";
pub(super) const COLOR_ARG: &str = "color";
/// Annotations of a zone's or task's slice end: what it allocated.
pub(super) const ALLOCS_ARG: &str = "allocs";
pub(super) const ALLOC_BYTES_ARG: &str = "alloc_bytes";

// The lock table in a `.pftrace` (the trace model's `LockSummary` rows; read back by
// `pftrace_read.rs`).
// Perfetto has no message for a lock's aggregates, so each row is a few instants at 0 on the
// process track, whose debug annotations Perfetto's UI lists when one is selected: a
// `threadlab lock` instant per lock (its id, flags, acquisitions, the waits' and holds' count,
// total and maximum as integers; its name and the two histograms as text, each a
// comma-separated list of bucket counts up to the last used bucket), then a `threadlab lock
// site` instant per call site (the lock, the site's text, its waits and their total) and a
// `threadlab lock holder` instant per holder (the lock, the tid, its waits and their total).
// A site or holder of a lock with no `threadlab lock` instant before it is refused.

/// The instants' names.
pub(super) const LOCK_NAME: &str = "threadlab lock";
pub(super) const LOCK_SITE_NAME: &str = "threadlab lock site";
pub(super) const LOCK_HOLDER_NAME: &str = "threadlab lock holder";
/// A lock's flags: 1, its acquisitions are known; 2, its holds are sampled.
pub(super) const ACQUISITIONS_KNOWN: u64 = 1;
pub(super) const HOLDS_SAMPLED: u64 = 2;

/// A histogram as text: its counts up to the last used bucket, comma-separated.
fn hist_text(d: &Durations) -> String {
    let used = d.hist.iter().rposition(|&n| n > 0).map_or(0, |i| i + 1);
    let counts: Vec<String> = d.hist[..used].iter().map(u64::to_string).collect();
    counts.join(",")
}

/// Writes the lock table of `trace` (on the process's packet sequence, 1).
fn encode_locks(out: &mut Out, trace: &Trace) {
    for l in trace.lock_table() {
        let (waits, holds) = (hist_text(&l.waits), hist_text(&l.holds));
        let mut ev = Ev::new(0, PROCESS_UUID, INSTANT, Some(LOCK_NAME));
        let flags = if l.acquisitions.is_some() {
            ACQUISITIONS_KNOWN
        } else {
            0
        } | if l.holds_sampled { HOLDS_SAMPLED } else { 0 };
        ev.args = vec![
            ("lock", l.lock),
            ("flags", flags),
            ("acquisitions", l.acquisitions.unwrap_or(0)),
            ("wait_count", l.waits.count),
            ("wait_total_ns", l.waits.total_ns),
            ("wait_max_ns", l.waits.max_ns),
            ("hold_count", l.holds.count),
            ("hold_total_ns", l.holds.total_ns),
            ("hold_max_ns", l.holds.max_ns),
        ];
        ev.str_args = vec![
            ("name", trace.name(l.name)),
            ("wait_hist", &waits),
            ("hold_hist", &holds),
        ];
        out.event(1, &ev);
        for site in &l.sites {
            let mut ev = Ev::new(0, PROCESS_UUID, INSTANT, Some(LOCK_SITE_NAME));
            ev.args = vec![
                ("lock", l.lock),
                ("waits", site.waits),
                ("wait_ns", site.wait_ns),
            ];
            ev.str_args = vec![("site", trace.name(site.site))];
            out.event(1, &ev);
        }
        for h in &l.holders {
            let mut ev = Ev::new(0, PROCESS_UUID, INSTANT, Some(LOCK_HOLDER_NAME));
            ev.args = vec![
                ("lock", l.lock),
                ("tid", h.tid),
                ("waits", h.waits),
                ("wait_ns", h.wait_ns),
            ];
            out.event(1, &ev);
        }
    }
}
