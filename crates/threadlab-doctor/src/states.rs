//! Where each thread's time went: one pass over a thread's events with a stack of open spans.
//!
//! At every instant a thread is in exactly one state, the one of its innermost open span:
//! a lock wait (`LockWait` → `LockAcquired`) is *waiting on a lock*, a park is *parked*, a spin
//! is *spinning*, a task or a zone is *running*; outside any span a pool worker is *searching*
//! (looking for work, stealing) and any other thread is *other* (not instrumented); in a trace
//! with no task or zone at all (a program observed from outside), the time the OS had a thread
//! on a CPU is *running* ([`observed_on_cpu_is_running`]). So a lock
//! wait inside a zone counts as waiting, not running. A spare thread's zone
//! ([`threadlab_trace::SPARE_ZONE`]) spans its whole life and is no span here: inside it the
//! thread is searching, as a worker outside any span is, and running only in its tasks. *Preempted* comes from the OS instead: the
//! growth of the thread's run-queue time (`/proc/<tid>/schedstat`, runnable but not on a CPU)
//! between its first and last samples; it overlaps the other states.
//!
//! The same pass measures each task and zone span (its duration and its *self* time: the
//! duration minus the task and zone spans nested in it), lock waits and holds, and counts
//! steals, parks, wake-ups and spins. It never trusts the events to be well formed (a loaded
//! file can hold anything): an end without its begin is ignored, a span open at the end is
//! closed there, timestamps that go backwards count as zero time.

use threadlab_trace::{Event, EventKind, NameId, TaskKind, ThreadTrack};

/// Where one thread's time went, and what it did.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ThreadStats {
    /// The thread's name.
    pub name: String,
    /// Its OS thread id.
    pub tid: u64,
    /// Its pool worker index, if it is a worker (a spare thread's is its spare seat's, past
    /// the pool's workers: see `spare`).
    pub worker: Option<u32>,
    /// Whether it is a spare thread ([`threadlab_trace::SPARE_ZONE`] on its track): a thread
    /// the pool started to stand in for workers blocked in the kernel, not one of the pool's
    /// workers. Its zone is its life, not work: outside tasks it counts as searching.
    pub spare: bool,
    /// Its group: the name with every run of digits replaced by `N` (`threadlab-worker-N`).
    pub group: String,
    /// First event, ns since the recording started.
    pub first_ns: u64,
    /// Last event.
    pub last_ns: u64,
    /// Whether the thread's events end before the recording did (the recorder samples every
    /// live thread at stop, so such a thread exited during the recording).
    pub exited: bool,
    /// Time in tasks or zones (innermost span).
    pub running_ns: u64,
    /// Time of a worker outside any span: looking for work.
    pub searching_ns: u64,
    /// Time spinning before parking.
    pub spinning_ns: u64,
    /// Time parked.
    pub parked_ns: u64,
    /// Time waiting for a lock.
    pub lock_wait_ns: u64,
    /// Lock waits (a `LockWait` each: a lock that could not be taken at once).
    pub lock_waits: u64,
    /// Time of a non-worker outside any span (not instrumented).
    pub other_ns: u64,
    /// Whether at least two OS samples bracket the thread's life (the OS figures are valid).
    pub os_sampled: bool,
    /// Where the OS figures start: the first event, or, for a thread born during the recording
    /// (its track starts with a birth sample of zeros), its birth, estimated as its first real
    /// sample's time less the time it had been on a CPU or waiting for one by then (a new
    /// thread is runnable from its birth to its first block).
    pub os_from_ns: u64,
    /// Time on a CPU between the first and last OS samples, at most the time between them.
    pub on_cpu_ns: u64,
    /// Time runnable but waiting for a CPU (preempted) between the first and last OS samples.
    pub preempted_ns: u64,
    /// Voluntary context switches (the thread blocked) between the samples.
    pub voluntary_switches: u64,
    /// Involuntary context switches (the thread was preempted) between the samples.
    pub involuntary_switches: u64,
    /// Task spans run.
    pub tasks: u64,
    /// Zone spans.
    pub zones: u64,
    /// Steal attempts (successful or not).
    pub steal_attempts: u64,
    /// Successful steals.
    pub steals: u64,
    /// Parks.
    pub parks: u64,
    /// Wake-ups this thread sent.
    pub wakes_sent: u64,
    /// Spins.
    pub spins: u64,
    /// Spins followed by a park without running a task (nothing found).
    pub fruitless_spins: u64,
    /// Work made runnable (spawns).
    pub spawns: u64,
    /// Last event minus first event.
    pub lifetime_ns: u64,
    /// Share of the lifetime spent running tasks or zones (0 when the lifetime is 0).
    pub utilization: f64,
}

impl ThreadStats {
    /// Times the thread blocked: its parks, or its voluntary switches if the OS counted more.
    pub fn blocks(&self) -> u64 {
        self.parks.max(self.voluntary_switches)
    }

    /// Times the thread blocked other than in a lock wait the trace holds: a lock wait that
    /// blocked is a voluntary switch too, and is already counted as a wait for its lock.
    pub fn blocks_outside_lock_waits(&self) -> u64 {
        self.parks
            .max(self.voluntary_switches.saturating_sub(self.lock_waits))
    }
}

/// What a task or zone span was.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum SpanKey {
    Zone(NameId),
    Task(TaskKind),
}

/// One closed task or zone span.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Span {
    pub(crate) key: SpanKey,
    pub(crate) begin_ns: u64,
    pub(crate) duration_ns: u64,
    /// Duration minus the task and zone spans nested in it (the outermost of them).
    pub(crate) self_ns: u64,
    /// A task's name ([`threadlab_trace::ARG_TASK_NAME`]), else its spawn location.
    pub(crate) label: Option<NameId>,
    /// Whether `label` is the task's name (not its location).
    pub(crate) named: bool,
    /// The zone with the most self time nested in this task (on this thread).
    pub(crate) top_zone: Option<NameId>,
    /// Duration minus the tasks nested in it (zones inside a task are its own work).
    pub(crate) work_ns: u64,
}

/// The name ids of the task arguments in a trace (`None`: no task carries one).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TaskArgKeys {
    pub(crate) name: Option<NameId>,
    pub(crate) location: Option<NameId>,
    /// [`threadlab_trace::SPARE_ZONE`]: a spare thread's life, read as no span (see
    /// [`ThreadStats::spare`]).
    pub(crate) spare_zone: Option<NameId>,
}

impl TaskArgKeys {
    pub(crate) fn of(trace: &threadlab_trace::Trace) -> TaskArgKeys {
        TaskArgKeys {
            name: trace.name_id(threadlab_trace::ARG_TASK_NAME),
            location: trace.name_id(threadlab_trace::ARG_TASK_LOCATION),
            spare_zone: trace.name_id(threadlab_trace::SPARE_ZONE),
        }
    }
}

/// Whose events a walk reads: a track's name, thread id and worker index, or a seat seen only
/// through its guests (`guests`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Who<'a> {
    pub(crate) name: &'a str,
    pub(crate) tid: u64,
    pub(crate) worker: Option<u32>,
    /// See `asleep_from_the_start`.
    pub(crate) asleep_until: Option<u64>,
    /// A seat with no track of its own (`guests`): its worker lived through the recording,
    /// asleep outside its guests' spans.
    pub(crate) silent: bool,
}

impl<'a> Who<'a> {
    pub(crate) fn of(track: &'a ThreadTrack) -> Who<'a> {
        Who {
            name: track.name(),
            tid: track.tid(),
            worker: track.worker(),
            asleep_until: None,
            silent: false,
        }
    }
}

/// One lock wait or hold.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LockSpan {
    pub(crate) lock: u64,
    pub(crate) name: NameId,
    pub(crate) hold: bool,
    pub(crate) duration_ns: u64,
}

/// Everything the pass over one thread found.
pub(crate) struct Walk {
    pub(crate) stats: ThreadStats,
    pub(crate) spans: Vec<Span>,
    pub(crate) locks: Vec<LockSpan>,
    /// Park spans (begin, end), in time order.
    pub(crate) parks: Vec<(u64, u64)>,
    /// When a worker was idle (searching, spinning or parked), merged, in time order.
    pub(crate) idle: Vec<(u64, u64)>,
}

impl Walk {
    /// How long this thread was parked within `[from, to)`.
    pub(crate) fn parked_within(&self, from: u64, to: u64) -> u64 {
        overlap(&self.parks, from, to)
    }

    /// How long this thread was idle within `[from, to)`.
    pub(crate) fn idle_within(&self, from: u64, to: u64) -> u64 {
        overlap(&self.idle, from, to)
    }
}

/// How much of `[from, to)` the spans `spans` (in time order, not overlapping) cover.
fn overlap(spans: &[(u64, u64)], from: u64, to: u64) -> u64 {
    let i = spans.partition_point(|&(_, end)| end <= from);
    spans[i..]
        .iter()
        .take_while(|&&(begin, _)| begin < to)
        .map(|&(begin, end)| end.min(to).saturating_sub(begin.max(from)))
        .sum()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Open {
    Task(TaskKind),
    Zone(NameId),
    Spin,
    Park,
    LockWait(u64),
    /// A spare thread's life (`ThreadStats::spare`): the state of no span.
    Spare,
}

struct Frame {
    open: Open,
    begin_ns: u64,
    /// Time of the outermost task/zone spans nested in this one.
    children_ns: u64,
    /// A task's name or location, and whether it is the name (see [`Span`]).
    label: Option<(NameId, bool)>,
    /// The zone with the most self time nested in this task so far.
    top_zone: Option<(NameId, u64)>,
    /// Time of the tasks nested in this one, outermost only.
    child_tasks_ns: u64,
}

/// `name` with each run of ASCII digits replaced by `N`.
pub(crate) fn group_of(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut in_digits = false;
    for c in name.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('N');
            }
            in_digits = true;
        } else {
            out.push(c);
            in_digits = false;
        }
    }
    out
}

/// Walks one thread, over `events` (its track's, or the doctor's view of them: see
/// `guests`); `end_ns` is where spans still open are closed (the recording's end, or the
/// thread's last event if later).
pub(crate) fn walk<I: Iterator<Item = Event>>(
    who: Who<'_>,
    events: impl Fn() -> I,
    end_ns: u64,
    keys: TaskArgKeys,
) -> Walk {
    let mut s = ThreadStats {
        name: who.name.to_owned(),
        tid: who.tid,
        worker: who.worker,
        group: group_of(who.name),
        first_ns: if who.silent {
            0
        } else {
            events().next().map_or(0, |e| e.ts_ns)
        },
        last_ns: events().map(|e| e.ts_ns).max().unwrap_or(0),
        ..ThreadStats::default()
    };
    s.exited = !who.silent && s.last_ns < end_ns;
    let mut w = Walk {
        stats: s,
        spans: Vec::new(),
        locks: Vec::new(),
        parks: Vec::new(),
        idle: Vec::new(),
    };
    let mut stack: Vec<Frame> = Vec::new();
    let mut holds: Vec<(u64, NameId, u64)> = Vec::new();
    let mut os_first: Option<(u64, u64)> = None;
    let mut os_last: Option<(u64, u64)> = None;
    let mut sw_first: Option<(u64, u64)> = None;
    let mut sw_last: Option<(u64, u64)> = None;
    let mut os_samples = 0u32;
    // The times of the first and last OS samples: the window their differences cover.
    let mut os_window: Option<(u64, u64)> = None;
    // A birth sample (zeros) came first: the next sample dates the birth.
    let mut birth_pending = false;
    let mut born_ns: Option<u64> = None;
    // Whether the last spin ended without running a task (a park right after it is fruitless).
    let mut after_spin = false;
    let mut spin_found = false;
    let mut now = w.stats.first_ns;
    for e in events() {
        let ts = e.ts_ns.max(now);
        account(&mut w, stack.last().map(|f| f.open), now, ts);
        now = ts;
        match e.kind {
            EventKind::ZoneBegin { name } if Some(name) == keys.spare_zone => {
                w.stats.spare = true;
                push(&mut stack, Open::Spare, ts);
            }
            EventKind::ZoneBegin { name } => {
                w.stats.zones += 1;
                push(&mut stack, Open::Zone(name), ts);
            }
            EventKind::TaskBegin { kind, .. } => {
                w.stats.tasks += 1;
                after_spin = false;
                spin_found |= stack.iter().any(|f| f.open == Open::Spin);
                push(&mut stack, Open::Task(kind), ts);
            }
            EventKind::SpinBegin => {
                w.stats.spins += 1;
                spin_found = false;
                push(&mut stack, Open::Spin, ts);
            }
            EventKind::ParkBegin => {
                w.stats.parks += 1;
                if after_spin {
                    w.stats.fruitless_spins += 1;
                }
                after_spin = false;
                push(&mut stack, Open::Park, ts);
            }
            EventKind::LockWait { lock, .. } => {
                w.stats.lock_waits += 1;
                push(&mut stack, Open::LockWait(lock), ts);
            }
            EventKind::ZoneEnd => pop(
                &mut w,
                &mut stack,
                |o| matches!(o, Open::Zone(_) | Open::Spare),
                ts,
            ),
            EventKind::TaskEnd => {
                // A spin that ended because the awaited latch was set lets its task go on.
                after_spin = false;
                pop(&mut w, &mut stack, |o| matches!(o, Open::Task(_)), ts);
            }
            EventKind::SpinEnd => {
                pop(&mut w, &mut stack, |o| o == Open::Spin, ts);
                after_spin = !spin_found;
            }
            EventKind::ParkEnd => pop(&mut w, &mut stack, |o| o == Open::Park, ts),
            EventKind::LockAcquired { lock, name, .. } => {
                if let Some(i) = stack.iter().rposition(|f| f.open == Open::LockWait(lock)) {
                    let begin = stack[i].begin_ns;
                    stack.remove(i);
                    w.locks.push(LockSpan {
                        lock,
                        name,
                        hold: false,
                        duration_ns: ts - begin.min(ts),
                    });
                }
                holds.push((lock, name, ts));
            }
            EventKind::LockReleased { lock, .. } => {
                if let Some(i) = holds.iter().rposition(|h| h.0 == lock) {
                    let (lock, name, begin) = holds.remove(i);
                    w.locks.push(LockSpan {
                        lock,
                        name,
                        hold: true,
                        duration_ns: ts - begin.min(ts),
                    });
                }
            }
            EventKind::StealAttempt { .. } => w.stats.steal_attempts += 1,
            EventKind::Steal { .. } => w.stats.steals += 1,
            EventKind::Wake { .. } => w.stats.wakes_sent += 1,
            EventKind::Spawn { .. } => w.stats.spawns += 1,
            EventKind::OsSched {
                on_cpu_ns,
                runqueue_ns,
            } => {
                os_samples = os_samples.saturating_add(1);
                if os_samples == 1 && (on_cpu_ns, runqueue_ns) == (0, 0) {
                    birth_pending = true;
                } else if birth_pending {
                    birth_pending = false;
                    born_ns = Some(
                        e.ts_ns
                            .saturating_sub(on_cpu_ns.saturating_add(runqueue_ns)),
                    );
                }
                os_first.get_or_insert((on_cpu_ns, runqueue_ns));
                os_last = Some((on_cpu_ns, runqueue_ns));
                let from = os_window.map_or(e.ts_ns, |w| w.0);
                os_window = Some((from, e.ts_ns));
            }
            EventKind::OsSwitches {
                voluntary,
                involuntary,
            } => {
                sw_first.get_or_insert((voluntary, involuntary));
                sw_last = Some((voluntary, involuntary));
            }
            EventKind::Arg { key, value } => {
                // A task's name wins over its location, whichever comes first.
                if let Some(f) = stack.last_mut().filter(|f| matches!(f.open, Open::Task(_))) {
                    if Some(key) == keys.name {
                        f.label = Some((value, true));
                    } else if Some(key) == keys.location && f.label.is_none() {
                        f.label = Some((value, false));
                    }
                }
            }
            EventKind::InjectorPush
            | EventKind::Counter { .. }
            | EventKind::FrameMark { .. }
            | EventKind::FrameStart { .. }
            | EventKind::Plot { .. }
            | EventKind::Message { .. }
            | EventKind::ZoneColor { .. }
            | EventKind::Allocs { .. } => {}
        }
    }
    // A thread that exited during the recording has no time after its last event: closing it
    // at the recording's end gave a thread-per-task trace "other" time summed over thousands of
    // dead threads (millions of seconds for a 40 s run).
    let end = if w.stats.exited { now } else { end_ns.max(now) };
    account(&mut w, stack.last().map(|f| f.open), now, end);
    while !stack.is_empty() {
        pop(&mut w, &mut stack, |_| true, end);
    }
    // A spare thread did not exist before its first event: it was never idle before it.
    if w.stats.worker.is_some() && !w.stats.spare {
        let first = events().find(|e| {
            !matches!(
                e.kind,
                EventKind::OsSched { .. } | EventKind::OsSwitches { .. }
            )
        });
        asleep_from_the_start(&mut w, first, who.asleep_until, end);
    }
    w.stats.os_from_ns = born_ns.map_or(w.stats.first_ns, |b| b.min(w.stats.first_ns));
    if let (Some(a), Some(b), Some((from, to))) = (os_first, os_last, os_window) {
        // The kernel adds a running thread's CPU time to `schedstat` at the scheduler tick
        // (`update_curr`, every 1–10 ms), so a sample read there can lag by up to a tick, and
        // the difference of two samples can hold more CPU time than the wall time between
        // them: a 648 µs trace read "7.01 of 2 CPUs". threadlab's recorder reads the thread's
        // CPU-time clock, which is up to date; a program observed from outside (`threadlab
        // run`) is read from procfs, and traces written before keep the lag. A thread cannot run
        // or wait for a CPU longer than it lived between the samples, so both are clipped to
        // that window (from its birth, for a thread born during the recording).
        let window = to.saturating_sub(from.min(w.stats.os_from_ns));
        w.stats.on_cpu_ns = b.0.saturating_sub(a.0).min(window);
        w.stats.preempted_ns = b.1.saturating_sub(a.1).min(window - w.stats.on_cpu_ns);
        w.stats.os_sampled = os_samples >= 2;
    }
    if let (Some(a), Some(b)) = (sw_first, sw_last) {
        w.stats.voluntary_switches = b.0.saturating_sub(a.0);
        w.stats.involuntary_switches = b.1.saturating_sub(a.1);
    }
    let s = &mut w.stats;
    s.lifetime_ns = s.last_ns.saturating_sub(s.first_ns);
    s.utilization = super::stats::ratio(s.running_ns as f64, s.lifetime_ns as f64);
    w
}

/// In a trace with no task or zone on any thread (a program observed from outside, `threadlab
/// run`), a thread was running whenever the OS had it on a CPU: that share of its *other* time
/// is *running*. (In a recorded program, a thread outside any span stays *other*: its code is
/// not the program's work as the program marked it.)
pub(crate) fn observed_on_cpu_is_running(walks: &mut [Walk]) {
    if walks.iter().any(|w| w.stats.tasks + w.stats.zones > 0) {
        return;
    }
    for w in walks {
        let s = &mut w.stats;
        let on_cpu = s.on_cpu_ns.min(s.other_ns);
        s.other_ns -= on_cpu;
        s.running_ns = s.running_ns.saturating_add(on_cpu);
        s.utilization = super::stats::ratio(s.running_ns as f64, s.lifetime_ns as f64);
    }
}

/// A worker that was asleep when the recording started has no `ParkBegin`, and records nothing
/// until it wakes: its first scheduling event is then a search for work (its `ParkEnd`, a spin,
/// a steal attempt), or there is none at all (it slept, or its seat was lent to a guest caller,
/// through the whole recording; a worker awake records its searches within microseconds). For
/// the rules that ask whether the other workers were idle (a long task's), such a worker was
/// idle from the recording's start until that first search, or until `end`. A worker that was
/// running a task when the recording started begins with that task's events instead.
///
/// `asleep_until`: the time of the first guest span the doctor read into this worker's track
/// (`guests`), when nothing of the worker's own came before it: a seat is lent only while its
/// worker sleeps, so the worker slept until then.
fn asleep_from_the_start(w: &mut Walk, first: Option<Event>, asleep_until: Option<u64>, end: u64) {
    let until = match first {
        Some(e) if asleep_until == Some(e.ts_ns) => e.ts_ns,
        Some(e)
            if matches!(
                e.kind,
                EventKind::ParkEnd
                    | EventKind::StealAttempt { .. }
                    | EventKind::Steal { .. }
                    | EventKind::SpinBegin
            ) =>
        {
            e.ts_ns
        }
        Some(_) => return,
        None => end,
    };
    let mut through = until;
    w.idle.retain(|&(begin, stop)| {
        if begin < until {
            through = through.max(stop);
            false
        } else {
            true
        }
    });
    w.idle.insert(0, (0, through));
}

/// Adds `[from, to)` to the time of `state`.
fn account(w: &mut Walk, state: Option<Open>, from: u64, to: u64) {
    let s = &mut w.stats;
    let dt = to - from;
    let idle =
        s.worker.is_some() && matches!(state, None | Some(Open::Spin | Open::Park | Open::Spare));
    if idle && dt > 0 {
        match w.idle.last_mut() {
            Some(last) if last.1 == from => last.1 = to,
            _ => w.idle.push((from, to)),
        }
    }
    let slot = match state {
        Some(Open::Task(_) | Open::Zone(_)) => &mut s.running_ns,
        Some(Open::Spin) => &mut s.spinning_ns,
        Some(Open::Park) => &mut s.parked_ns,
        Some(Open::LockWait(_)) => &mut s.lock_wait_ns,
        None | Some(Open::Spare) if s.worker.is_some() => &mut s.searching_ns,
        None | Some(Open::Spare) => &mut s.other_ns,
    };
    *slot = slot.saturating_add(dt);
}

fn push(stack: &mut Vec<Frame>, open: Open, ts: u64) {
    stack.push(Frame {
        open,
        begin_ns: ts,
        children_ns: 0,
        label: None,
        top_zone: None,
        child_tasks_ns: 0,
    });
}

/// Closes the innermost open span that `is` accepts (and any left open inside it); nothing if
/// none is open.
fn pop(w: &mut Walk, stack: &mut Vec<Frame>, is: impl Fn(Open) -> bool, ts: u64) {
    let Some(i) = stack.iter().rposition(|f| is(f.open)) else {
        return;
    };
    while stack.len() > i {
        let f = stack.pop().expect("pop: stack longer than i");
        let duration_ns = ts - f.begin_ns.min(ts);
        let key = match f.open {
            Open::Task(k) => Some(SpanKey::Task(k)),
            Open::Zone(n) => Some(SpanKey::Zone(n)),
            Open::Park => {
                w.parks.push((f.begin_ns, ts));
                None
            }
            Open::Spin | Open::LockWait(_) | Open::Spare => None,
        };
        if let Some(key) = key {
            let self_ns = duration_ns.saturating_sub(f.children_ns);
            w.spans.push(Span {
                key,
                begin_ns: f.begin_ns,
                duration_ns,
                self_ns,
                label: f.label.map(|l| l.0),
                named: f.label.is_some_and(|l| l.1),
                top_zone: f.top_zone.map(|z| z.0),
                work_ns: duration_ns.saturating_sub(f.child_tasks_ns),
            });
            if let SpanKey::Task(_) = key {
                let outer = stack
                    .iter_mut()
                    .rev()
                    .find(|p| matches!(p.open, Open::Task(_)));
                if let Some(t) = outer {
                    t.child_tasks_ns = t.child_tasks_ns.saturating_add(duration_ns);
                }
            }
            // The zone with the most self time in the innermost task around it.
            if let SpanKey::Zone(name) = key {
                let task = stack
                    .iter_mut()
                    .rev()
                    .find(|p| matches!(p.open, Open::Task(_)));
                if let Some(t) = task.filter(|t| t.top_zone.map_or(true, |z| self_ns > z.1)) {
                    t.top_zone = Some((name, self_ns));
                }
            }
            let parent = stack
                .iter_mut()
                .rev()
                .find(|p| matches!(p.open, Open::Task(_) | Open::Zone(_)));
            if let Some(parent) = parent {
                parent.children_ns = parent.children_ns.saturating_add(duration_ns);
            }
        }
    }
}
