//! Guests: a thread from outside a pool that called `install` (or `scope`, `join`, a parallel
//! loop) while a worker slept runs that work itself, in the sleeping worker's seat (its index,
//! its deque), while the worker stays parked and records nothing. The recorder marks such a
//! guest's install span with the seat it holds ([`threadlab_trace::ARG_GUEST_SEAT`], the
//! seat's worker index), on the guest's own track.
//!
//! For the doctor the seat is what matters: the work a pool did is what its seats did. So before
//! the per-thread pass, each guest span (its `TaskBegin`, everything nested in it, its `TaskEnd`)
//! moves from the guest's track to the track of the seat's worker, merged in time order. The
//! worker then shows parked, running the guest's tasks (the innermost span wins), parked again;
//! the imbalance and long-task rules, and the four answers, see the pool's work on its workers'
//! tracks; the caller's track keeps what it did outside the pool. A seat whose worker recorded
//! nothing (asleep through the whole recording: no track) is read as a thread of its own, named
//! like the other workers (`seat_name`), asleep except in its guests' spans. A span whose value is not a
//! number stays where it is. The OS samples inside a guest span (the kernel's counters of the
//! guest's thread) stay on the guest's track: the seat's worker did not run on a CPU then.

use std::collections::BTreeMap;

use threadlab_trace::{Event, EventKind, NameId, TaskKind, Trace};

/// The doctor's reading of the threads: for each track (indexed like `trace.threads()`) its
/// events, and the seats seen only through guests.
pub(crate) struct SeatView {
    /// `None`: the track as recorded; else its events once guest spans left or joined it.
    pub(crate) events: Vec<Option<Vec<Event>>>,
    /// For a worker track that received guest spans: the time of the first, when it comes
    /// before any event of the worker's own scheduling (the worker was asleep until then: only
    /// a sleeping worker's seat is lent).
    pub(crate) asleep_until: Vec<Option<u64>>,
    /// Seats whose worker recorded nothing at all (asleep through the whole recording, so it
    /// has no track): worker index, the guest's thread id, and the guest spans' events.
    pub(crate) silent_seats: Vec<(u32, u64, Vec<Event>)>,
}

/// Where a guest span goes: a worker's track, or a seat with no track.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Seat {
    Track(usize),
    Silent(u32),
}

/// Reads every guest span as its seat's worker's work (see the module doc).
pub(crate) fn seat_view(trace: &Trace) -> SeatView {
    let threads = trace.threads();
    let mut view = SeatView {
        events: vec![None; threads.len()],
        asleep_until: vec![None; threads.len()],
        silent_seats: Vec::new(),
    };
    let Some(key) = trace.name_id(threadlab_trace::ARG_GUEST_SEAT) else {
        return view;
    };
    let mut moved: BTreeMap<Seat, (u64, Vec<Event>)> = BTreeMap::new();
    for (i, t) in threads.iter().enumerate() {
        if t.worker().is_some() {
            continue;
        }
        let events: Vec<Event> = t.events().iter().collect();
        let spans = guest_spans(trace, &events, key);
        if spans.is_empty() {
            continue;
        }
        let mut kept = Vec::with_capacity(events.len());
        let mut next = spans.iter().peekable();
        let mut at = 0;
        while at < events.len() {
            match next.peek() {
                Some(&&(begin, end, seat)) if begin == at => {
                    let to = moved.entry(seat).or_insert((t.tid(), Vec::new()));
                    // The OS samples inside the span are the guest thread's own counters: they
                    // stay on its track (moved, one thread's CPU time was counted twice).
                    for e in &events[begin..end] {
                        if is_os_sample(e) {
                            kept.push(*e);
                        } else {
                            to.1.push(*e);
                        }
                    }
                    at = end;
                    next.next();
                }
                _ => {
                    kept.push(events[at]);
                    at += 1;
                }
            }
        }
        view.events[i] = Some(kept);
    }
    for (seat, (tid, mut extra)) in moved {
        // Guests of one seat from several threads: in time order (they held it in turn).
        extra.sort_by_key(|e| e.ts_ns);
        let w = match seat {
            Seat::Silent(index) => {
                view.silent_seats.push((index, tid, extra));
                continue;
            }
            Seat::Track(w) => w,
        };
        let own = threads[w].events();
        let first_own = own.iter().find(|e| !is_os_sample(e)).map(|e| e.ts_ns);
        let first_guest = extra.first().map(|e| e.ts_ns);
        if first_own.map_or(true, |o| first_guest.is_some_and(|g| g < o)) {
            view.asleep_until[w] = first_guest;
        }
        let mut merged = Vec::with_capacity(own.len() + extra.len());
        let mut extra = extra.into_iter().peekable();
        for e in own.iter() {
            // At equal times the worker's own event first: its park began before a guest could
            // borrow its seat.
            while extra.peek().is_some_and(|g| g.ts_ns < e.ts_ns) {
                merged.extend(extra.next());
            }
            merged.push(e);
        }
        merged.extend(extra);
        view.events[w] = Some(merged);
    }
    view
}

/// A sample of the kernel's counters of the thread that recorded it.
fn is_os_sample(e: &Event) -> bool {
    matches!(
        e.kind,
        EventKind::OsSched { .. } | EventKind::OsSwitches { .. }
    )
}

/// The name of worker `index`'s thread when it has no track: another worker's name with its
/// index replaced (`threadlab-1` for `threadlab-0`), else the pool's default, `threadlab-<index>`
/// (a pool whose threads the builder named takes no guests).
pub(crate) fn seat_name(trace: &Trace, index: u32) -> String {
    trace
        .threads()
        .iter()
        .find_map(|t| {
            let prefix = t.name().strip_suffix(&t.worker()?.to_string())?;
            Some(format!("{prefix}{index}"))
        })
        .unwrap_or_else(|| format!("threadlab-{index}"))
}

/// The guest spans of one track: `(first, past_last, seat)` event ranges, in order. A guest span
/// is an install `TaskBegin` followed at once by an [`ARG_GUEST_SEAT`] argument holding a
/// worker index; it ends at the `TaskEnd` that closes it (or with the track).
///
/// [`ARG_GUEST_SEAT`]: threadlab_trace::ARG_GUEST_SEAT
fn guest_spans(trace: &Trace, events: &[Event], key: NameId) -> Vec<(usize, usize, Seat)> {
    let mut spans = Vec::new();
    let mut i = 0;
    while i + 1 < events.len() {
        let seat = match (events[i].kind, events[i + 1].kind) {
            (
                EventKind::TaskBegin {
                    kind: TaskKind::Install,
                    ..
                },
                EventKind::Arg { key: k, value },
            ) if k == key => trace
                .name(value)
                .parse::<u32>()
                .ok()
                .map(|w| trace.worker_thread(w).map_or(Seat::Silent(w), Seat::Track)),
            _ => None,
        };
        let Some(seat) = seat else {
            i += 1;
            continue;
        };
        let mut depth = 0usize;
        let mut end = events.len();
        for (j, e) in events.iter().enumerate().skip(i) {
            match e.kind {
                EventKind::TaskBegin { .. } => depth += 1,
                EventKind::TaskEnd => {
                    depth -= 1;
                    if depth == 0 {
                        end = j + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        spans.push((i, end, seat));
        i = end;
    }
    spans
}
