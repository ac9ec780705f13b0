//! The report's section on what the interposer saw from inside the processes: which processes
//! loaded it, the threads they created, every lock with its acquisitions, waits and sampled
//! holds, and what was counted but not kept one by one.

use std::fmt::Write;
use std::path::Path;

use threadlab::trace::Trace;
use threadlab_trace::LockSummary;

use super::seen::{is_go, End, Seen};

/// Locks listed at most.
const MAX_LOCKS: usize = 10;
/// Call sites listed per lock at most.
const MAX_SITES: usize = 5;

fn ms(ns: u64) -> String {
    format!("{:.3} ms", ns as f64 / 1e6)
}

/// A duration with a unit that suits it.
fn dur(ns: u64) -> String {
    match ns {
        0..=9_999 => format!("{ns} ns"),
        10_000..=9_999_999 => format!("{:.1} µs", ns as f64 / 1e3),
        _ => format!("{:.2} ms", ns as f64 / 1e6),
    }
}

/// The name of thread `tid` in `trace` (its role, when the program did not name it).
fn thread_name(trace: &Trace, tid: u64) -> String {
    match trace.threads().iter().find(|t| t.tid() == tid) {
        Some(t) => format!("{} [{}]", t.name(), tid & 0xffff_ffff),
        None => format!("thread {}", tid & 0xffff_ffff),
    }
}

/// One lock's line, from the trace's lock table: acquisitions, waits and their spread, the
/// sampled holds, the holder that made others wait longest.
fn lock_line(l: &LockSummary, trace: &Trace, seen: &Seen) -> String {
    let name = trace.name(l.name);
    let w = &l.waits;
    let mut s = format!("  lock {name}: {} contended waits", w.count);
    if let (Some(a), Some(share)) = (l.acquisitions, l.contended_share()) {
        let _ = write!(s, " of {a} acquisitions ({:.1}%)", 100.0 * share);
    }
    let _ = write!(s, ", {} waited", ms(w.total_ns));
    if w.count > 0 {
        let _ = write!(
            s,
            " (p50 {}, p99 {}, max {})",
            dur(w.quantile(0.5)),
            dur(w.quantile(0.99)),
            dur(w.max_ns)
        );
    }
    let h = &l.holds;
    if h.count > 0 {
        let _ = write!(
            s,
            "; held {} on average (p99 {}, max {}), about {} in all ({} holds timed, about one \
             in {})",
            dur(h.mean_ns() as u64),
            dur(h.quantile(0.99)),
            dur(h.max_ns),
            ms(l.hold_total_within(trace.duration_ns(), trace.threads().len())),
            h.count,
            seen.hold_every
        );
    }
    if let Some(h) = l.top_holder() {
        let _ = write!(
            s,
            "; held most while others waited: {} ({} waits, {})",
            thread_name(trace, h.tid),
            h.waits,
            ms(h.wait_ns)
        );
    }
    if let Some(row) = seen.locks.iter().find(|r| *r.table.name == *name) {
        let pids: Vec<String> = row.pids.iter().map(|p| p.to_string()).collect();
        let _ = write!(s, " (pid {})", pids.join(", "));
    }
    s
}

/// The report's section: processes, threads, locks; what could not be seen or was not kept.
/// `unseen`: the command's own process wrote no file (its program's path). The locks' figures
/// are read from `trace`'s lock table, which `convert.rs` filled from `seen`.
pub fn render(
    seen: &Seen,
    trace: &Trace,
    child: u32,
    program: &str,
    unseen: Option<&Path>,
) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "Seen from inside (interposer, exact):");
    if let Some(path) = unseen {
        let _ = writeln!(
            s,
            "  `{program}` (pid {child}) did not load the interposer: it is statically linked or \
             its loader ignores LD_PRELOAD (setuid). Its lock waits and thread births cannot be \
             seen from here; only /proc sampling below applies."
        );
        if is_go(path) {
            let _ = writeln!(
                s,
                "  It is a Go program: goroutines wait for a sync.Mutex inside the Go runtime \
                 (parked goroutines, not blocked threads), invisible to the OS. Look at the \
                 runtime's mutex and block profiles instead: runtime.SetMutexProfileFraction and \
                 runtime.SetBlockProfileRate, then `go tool pprof` of /debug/pprof/mutex and \
                 /debug/pprof/block (or `go test -mutexprofile m.out -blockprofile b.out`)."
            );
        }
    }
    let births: u64 = seen.processes.iter().map(|p| p.births).sum();
    if seen.processes.is_empty() {
        let _ = writeln!(s, "  no process of the command loaded the interposer");
        return s;
    }
    let _ = writeln!(
        s,
        "  processes: {} ran with the interposer; threads created: {births} exactly",
        seen.processes.len()
    );
    let quiet = seen
        .processes
        .iter()
        .filter(|p| p.births == 0 && p.waits == 0)
        .count();
    if quiet > 0 {
        let _ = writeln!(
            s,
            "    ({quiet} of them created no thread and never waited for a lock: not listed)"
        );
    }
    for p in seen
        .processes
        .iter()
        .filter(|p| p.births > 0 || p.waits > 0)
    {
        let mut extra = String::new();
        if let Some(n) = p.namespace {
            let _ = write!(extra, ", in PID namespace {n} (its own pids)");
        }
        if p.images > 1 {
            let _ = write!(extra, ", {} images (exec)", p.images);
        }
        match p.end {
            End::Killed => {
                extra.push_str(", killed (its last 50 ms of acquisition counts may be missing)")
            }
            End::Aborted => extra.push_str(", aborted"),
            End::UnderscoreExit => extra.push_str(", ended by _exit"),
            End::Exited | End::Exec => {}
        }
        let _ = writeln!(
            s,
            "    pid {:>7} {:<20} threads created {:>6}, acquisitions {:>10}, contended waits {:>8} ({}){extra}",
            p.pid,
            p.program,
            p.births,
            p.acquisitions,
            p.waits,
            ms(p.wait_ns)
        );
    }
    if let Some(p) = seen.processes.iter().find(|p| p.program == "java") {
        let _ = writeln!(s, "{}", jvm_note(p.pid));
    }
    let table = trace.lock_table();
    let waited: Vec<&LockSummary> = table.iter().filter(|l| l.waits.count > 0).collect();
    if waited.is_empty() {
        let _ = writeln!(s, "  no pthread lock was ever contended");
    }
    for l in waited.iter().take(MAX_LOCKS) {
        let _ = writeln!(s, "{}", lock_line(l, trace, seen));
        // Where the waits come from, most waited first.
        for site in l.sites.iter().take(MAX_SITES) {
            let _ = writeln!(
                s,
                "    waits at {}: {} ({})",
                trace.name(site.site),
                site.waits,
                ms(site.wait_ns)
            );
        }
    }
    if waited.len() > MAX_LOCKS {
        let _ = writeln!(
            s,
            "  ({} more contended locks not listed)",
            waited.len() - MAX_LOCKS
        );
    }
    let untouched: Vec<(&LockSummary, u64)> = table
        .iter()
        .filter(|l| l.waits.count == 0)
        .filter_map(|l| Some((l, l.acquisitions.filter(|&a| a > 0)?)))
        .collect();
    if !untouched.is_empty() {
        let total: u64 = untouched.iter().map(|l| l.1).sum();
        let busiest = untouched
            .iter()
            .max_by_key(|l| l.1)
            .map(|(l, a)| format!(", the busiest {} ({a} acquisitions)", trace.name(l.name)))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "  {} lock(s) never contended: {total} acquisitions{busiest}",
            untouched.len()
        );
    }
    render_dropped(&mut s, seen);
    s
}

/// What the interposer sees of a JVM (process `pid`) and what it cannot: HotSpot's monitors
/// (`synchronized`) spin, then park the thread on a pthread condition variable of its own, so
/// a wait for a Java lock is seen as a park on a condition variable, not as a lock wait, and
/// never says which monitor it was for; the JVM's own internal pthread mutexes are seen as
/// locks.
fn jvm_note(pid: u32) -> String {
    format!(
        "  pid {pid} is a JVM: a thread that waits for a Java monitor (`synchronized`) first \
         spins, then parks on a pthread condition variable of the JVM's own, so its waits are \
         seen here as parks (the threads' `parked` time), not as lock waits, and no monitor is \
         named; the JVM's internal pthread mutexes are counted as locks. For Java monitors use \
         JDK Flight Recorder: `java -XX:StartFlightRecording=filename=rec.jfr …`, then `jfr \
         print --events jdk.JavaMonitorEnter rec.jfr`."
    )
}

/// What was counted but not kept one by one, and why.
fn render_dropped(s: &mut String, seen: &Seen) {
    let d = &seen.dropped;
    if d.events > 0 {
        let why = if d.full {
            "the records' file system ran short of room"
        } else {
            "the run's budget of individual events was spent"
        };
        let _ = writeln!(
            s,
            "  aggregated: {} waits were counted into the figures above but not kept one by one \
             ({why}): the timeline and the doctor's wait figures below lack them",
            d.events
        );
    }
    if d.unread > 0 {
        let _ = writeln!(
            s,
            "  aggregated: {} waits were left out of the timeline (run's memory bound)",
            d.unread
        );
    }
    if d.lock_acquisitions > 0 {
        let _ = writeln!(
            s,
            "  aggregated: {} acquisitions of locks past a process's table of 1,024 locks are \
             counted together as `other locks`",
            d.lock_acquisitions
        );
    }
    if d.direct_threads > 0 {
        let _ = writeln!(
            s,
            "  {} thread(s) beyond the 4,096 a process counts privately were counted straight \
             into the shared table (exact, slower)",
            d.direct_threads
        );
    }
    if d.unreadable > 0 {
        let _ = writeln!(
            s,
            "  {} process file(s) could not be read (another interposer version, or damaged)",
            d.unreadable
        );
    }
}
