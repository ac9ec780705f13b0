//! The observer's text: what was watched and what it cost, one row per thread (time on a CPU,
//! preempted, and the share of samples in each state), and the futex addresses with their
//! waiters. The doctor's diagnosis of the same samples follows it (`mod.rs`).

use std::fmt::Write;

use threadlab_doctor::fmt_ns;

use super::bursts::{bursts, Burst, GAP_NS, MIN_BIRTHS};
use super::convert::FutexRow;
use super::sampler::{Observed, ThreadLog};
use super::syscall::State;

/// Thread rows printed (busiest first); the rest are counted.
const MAX_ROWS: usize = 20;
/// Futex rows printed.
const MAX_FUTEXES: usize = 10;
/// Waiters named per futex row (longest waits first).
const MAX_WAITERS: usize = 5;

/// One thread's figures.
struct Row<'a> {
    t: &'a ThreadLog,
    life_ns: u64,
    on_cpu_ns: u64,
    preempted_ns: u64,
    /// Samples per state: runnable, futex, io, sleeping, other.
    states: [u64; 5],
    cpus: usize,
    switches: (u64, u64),
}

fn row(t: &ThreadLog, end_ns: u64) -> Row<'_> {
    let (first, last) = (t.samples.first().copied(), t.samples.last().copied());
    let base = if t.born_ns.is_some() { None } else { first };
    let begin = t.born_ns.or(first.map(|f| f.ts_ns)).unwrap_or(0);
    let mut states = [0u64; 5];
    let mut cpus: Vec<u32> = Vec::new();
    for s in &t.samples {
        let i = match s.state {
            State::Runnable => 0,
            State::Futex(_) => 1,
            State::Io => 2,
            State::Sleeping => 3,
            State::Other => 4,
        };
        states[i] += 1;
        if !cpus.contains(&s.cpu) {
            cpus.push(s.cpu);
        }
    }
    let sw = |s: &super::sampler::Sample| s.switches;
    let first_sw = base.map_or(Some((0, 0)), |b| sw(&b));
    let last_sw = t.samples.iter().rev().find_map(sw);
    // The final reading at death (exact runs) or the last sample.
    let (on_cpu, runqueue) = t
        .end
        .or(last.map(|l| (l.on_cpu_ns, l.runqueue_ns)))
        .unwrap_or((0, 0));
    Row {
        t,
        life_ns: t.exited_ns.unwrap_or(end_ns).saturating_sub(begin),
        on_cpu_ns: on_cpu - base.map_or(0, |b| b.on_cpu_ns.min(on_cpu)),
        preempted_ns: runqueue - base.map_or(0, |b| b.runqueue_ns.min(runqueue)),
        states,
        cpus: cpus.len(),
        switches: match (first_sw, last_sw) {
            (Some(a), Some(b)) => (b.0.saturating_sub(a.0), b.1.saturating_sub(a.1)),
            _ => (0, 0),
        },
    }
}

/// The observer's part of the report: what was watched and what it cost, the threads, the
/// creation bursts and the futex addresses.
pub fn render(what: &str, o: &Observed, hz: u32, futexes: &[FutexRow]) -> String {
    let mut s = String::new();
    render_header(&mut s, what, o, hz);
    render_threads(&mut s, o);
    render_bursts(&mut s, o);
    render_futexes(&mut s, futexes);
    s
}

/// What was watched, for how long and at what rate; the threads seen and created (exactly when
/// traced or interposed); what the observer cost; what it could not see.
fn render_header(s: &mut String, what: &str, o: &Observed, hz: u32) {
    let secs = o.duration_ns as f64 / 1e9;
    let created = o.threads.iter().filter(|t| t.born_ns.is_some()).count();
    let exited = o.threads.iter().filter(|t| t.exited_ns.is_some()).count();
    let _ = writeln!(
        s,
        "threadlab observer: {what} for {} at {hz} Hz ({} ticks, {:.0} per second achieved)",
        fmt_ns(o.duration_ns),
        o.ticks,
        o.ticks as f64 / secs.max(1e-9)
    );
    let _ = writeln!(
        s,
        "threads: {} seen, {created} created and {exited} exited while observed, at most {} at \
         once, {} CPU(s) allowed",
        o.threads.len(),
        o.max_threads,
        o.cpus
    );
    match &o.exact {
        Some(x) if x.by_interposer => {
            let _ = writeln!(
                s,
                "threads created: {} exactly, {} of which exited before the process (every \
                 thread start and end seen by the interposer inside the process, nothing \
                 stopped; the first thread not counted)",
                x.created, x.exited,
            );
        }
        Some(x) => {
            let _ = writeln!(
                s,
                "threads created: {} exactly, {} of which exited before the process (every clone \
                 traced through ptrace; {}); tracer cost: {:.2} ms CPU per second{}",
                x.created,
                x.exited,
                if x.attached {
                    "threads created since attaching"
                } else {
                    "the first thread not counted"
                },
                x.tracer_cpu_ns as f64 / 1e6 / secs.max(1e-9),
                if x.created > 0 {
                    format!(
                        " ({:.1} µs per thread created)",
                        x.tracer_cpu_ns as f64 / 1e3 / x.created as f64
                    )
                } else {
                    String::new()
                }
            );
            if let Some(e) = &x.error {
                let _ = writeln!(s, "tracing stopped early ({e}): the counts are incomplete");
            }
        }
        None if created > 0 => {
            let _ = writeln!(
                s,
                "threads created: at least {created} (seen), at most {} (threads and processes \
                 the whole machine created meanwhile); a thread living between two ticks is not \
                 seen (births sampled only: ptrace was not used or was refused)",
                o.forks.max(created as u64)
            );
        }
        None => {}
    }
    let _ = writeln!(
        s,
        "sampler cost: {:.2} ms CPU per second ({:.2}% of one CPU) for {} thread readings \
         ({:.1} µs each)",
        o.sampler_cpu_ns as f64 / 1e6 / secs.max(1e-9),
        o.sampler_cpu_ns as f64 / 1e7 / secs.max(1e-9),
        o.reads,
        o.sampler_cpu_ns as f64 / 1e3 / o.reads.max(1) as f64
    );
    if o.syscall_denied {
        let _ = writeln!(
            s,
            "syscall column: NOT VISIBLE — ptrace access to pid {} was refused (another user's \
             process, or Yama's ptrace_scope allows only descendants): blocked threads show as \
             `other`, so lock waits, I/O and sleep cannot be told apart and no futex address is \
             known. Start the program with `threadlab run -- CMD` to see them.",
            o.pid
        );
    }
    if o.unopened > 0 {
        let _ = writeln!(
            s,
            "{} thread(s) not observed: out of file descriptors",
            o.unopened
        );
    }
}

/// One row per thread, busiest first: its life, time on a CPU and preempted, the share of
/// samples in each state, the CPUs it ran on and its context switches.
fn render_threads(s: &mut String, o: &Observed) {
    let mut rows: Vec<Row> = o.threads.iter().map(|t| row(t, o.duration_ns)).collect();
    rows.sort_by(|a, b| b.on_cpu_ns.cmp(&a.on_cpu_ns).then(a.t.tid.cmp(&b.t.tid)));
    let _ = writeln!(
        s,
        "\nThreads (busiest first; states as shares of samples)\n {:>8} {:<16} {:>9} {:>9} \
         {:>9} {:>5} {:>5} {:>5} {:>5} {:>5} {:>4} {:>6} {:>6}",
        "tid",
        "name",
        "life",
        "on-cpu",
        "preempt",
        "run%",
        "futx%",
        "io%",
        "slp%",
        "oth%",
        "cpus",
        "vol",
        "invol"
    );
    for r in rows.iter().take(MAX_ROWS) {
        let n = r.t.samples.len() as f64;
        let pct = |i: usize| {
            if n > 0.0 {
                format!("{:.0}", 100.0 * r.states[i] as f64 / n)
            } else {
                "-".to_owned()
            }
        };
        let _ = writeln!(
            s,
            " {:>8} {:<16} {:>9} {:>9} {:>9} {:>5} {:>5} {:>5} {:>5} {:>5} {:>4} {:>6} \
             {:>6}{}",
            r.t.tid,
            r.t.name,
            fmt_ns(r.life_ns),
            fmt_ns(r.on_cpu_ns),
            fmt_ns(r.preempted_ns),
            pct(0),
            pct(1),
            pct(2),
            pct(3),
            pct(4),
            r.cpus,
            r.switches.0,
            r.switches.1,
            if r.t.exited_ns.is_some() {
                "  exited"
            } else {
                ""
            }
        );
    }
    if rows.len() > MAX_ROWS {
        let _ = writeln!(s, "   … {} more thread(s)", rows.len() - MAX_ROWS);
    }
}

/// The futex addresses waited on, each with its waits and its longest waiters.
fn render_futexes(s: &mut String, futexes: &[FutexRow]) {
    let _ = writeln!(s, "\nFutex addresses (locks and condition variables)");
    if futexes.is_empty() {
        let _ = writeln!(s, "   no thread was seen waiting in futex");
    }
    for f in futexes.iter().take(MAX_FUTEXES) {
        let mut waiters: Vec<String> = f
            .waiters
            .iter()
            .take(MAX_WAITERS)
            .map(|w| format!("{} [{}] {}", w.0, w.1, fmt_ns(w.2)))
            .collect();
        if f.waiters.len() > MAX_WAITERS {
            waiters.push(format!("… {} threads in all", f.waiters.len()));
        }
        let _ = writeln!(
            s,
            " {}: {} waits, {} waited; waiters: {}",
            f.name,
            f.waits,
            fmt_ns(f.wait_ns),
            waiters.join(", ")
        );
    }
    if futexes.len() > MAX_FUTEXES {
        let _ = writeln!(s, "   … {} more address(es)", futexes.len() - MAX_FUTEXES);
    }
}

/// Bursts printed (in time order; the largest when there are more).
const MAX_BURSTS: usize = 40;

/// The thread-creation bursts (`bursts.rs`).
fn render_bursts(s: &mut String, o: &Observed) {
    let mut all = bursts(o);
    if all.is_empty() {
        return;
    }
    let how = if o.exact.is_some() {
        "exact: every birth and death traced"
    } else {
        "from samples: births estimated, threads living between two samples missing, runnable \
         threads counted at the ticks"
    };
    let _ = writeln!(
        s,
        "\nThread creation in bursts (births under {} apart, {} or more; {how})\n {:>9} {:>9} \
         {:>8} {:>10} {:>10} {:>9} {:>7}",
        fmt_ns(GAP_NS),
        MIN_BIRTHS,
        "start",
        "length",
        "threads",
        "one every",
        "work each",
        "runnable",
        "alive"
    );
    let total = all.len();
    let over = oversubscribed(&all);
    if total > MAX_BURSTS {
        let mut keep: Vec<usize> = (0..total).collect();
        keep.sort_by_key(|&i| std::cmp::Reverse(all[i].threads));
        keep.truncate(MAX_BURSTS);
        keep.sort_unstable();
        all = keep.into_iter().map(|i| all[i].clone()).collect();
    }
    for b in &all {
        let _ = writeln!(
            s,
            " {:>9} {:>9} {:>8} {:>10} {:>10} {:>5.2}/CPU {:>7}",
            fmt_ns(b.begin_ns),
            fmt_ns(b.end_ns - b.begin_ns),
            b.threads,
            fmt_ns(b.median_interval_ns),
            fmt_ns(b.median_work_ns),
            b.runnable_per_cpu,
            b.most_alive
        );
    }
    if total > MAX_BURSTS {
        let _ = writeln!(s, "   … {} smaller burst(s)", total - MAX_BURSTS);
    }
    let _ = writeln!(
        s,
        "   (one every, work each: medians, work being a thread's whole time on a CPU, its start \
         and exit included; runnable: the process's threads on a CPU or waiting for one, on \
         average over the burst, per CPU; alive: the most at once, deaths counted when the \
         tracer saw them)"
    );
    if let Some(line) = over {
        let _ = writeln!(s, "{line}");
    }
    if o.exact.is_some() && all.iter().any(|b| b.median_interval_ns < TRACED_FAST_NS) {
        let _ = writeln!(s, "{TRACED_CAVEAT}");
    }
}

/// Bursts with births closer than this (median) get [`TRACED_CAVEAT`] when births were traced.
const TRACED_FAST_NS: u64 = 1_000_000;

/// What tracing births does to a fast burst's runnable figure.
const TRACED_CAVEAT: &str = "   note: tracing births stops each new thread until the tracer \
     has seen it, and lets it go with a wake-up, so new threads queue for a CPU less than they \
     would unobserved: a fast burst's runnable figure is lower than without the observer (the \
     lab's image pass of 3,024 threads, one every ~50 µs: 1.1–1.3 runnable per CPU traced, by \
     this observer and by the program's own recording alike, 2.5–2.9 untraced). For that \
     question run with --sample-only, which leaves the program alone.";

/// The doctor's oversubscription rule (more than
/// [`threadlab_doctor::OVERSUBSCRIBED_RUNNABLE_PER_CPU`] runnable threads per CPU over at least
/// [`threadlab_doctor::OS_MIN_WINDOW_NS`]) applied to each burst: a thread-per-task burst can
/// oversubscribe the CPUs while the whole run, averaged, does not.
fn oversubscribed(bursts: &[Burst]) -> Option<String> {
    let judged = |b: &&Burst| b.end_ns - b.begin_ns >= threadlab_doctor::OS_MIN_WINDOW_NS;
    let over: Vec<&Burst> = bursts
        .iter()
        .filter(judged)
        .filter(|b| b.runnable_per_cpu > threadlab_doctor::OVERSUBSCRIBED_RUNNABLE_PER_CPU)
        .collect();
    let worst = over
        .iter()
        .max_by(|a, b| a.runnable_per_cpu.total_cmp(&b.runnable_per_cpu))?;
    Some(format!(
        " ! oversubscription in {} of {} burst(s) of {} or longer: up to {:.2} runnable threads \
         per CPU (threshold {}), in the burst at {} ({} threads, at most {} alive at once)\n   \
         suggestion: run the work on a pool with one thread per CPU instead of a thread per task",
        over.len(),
        bursts.iter().filter(judged).count(),
        fmt_ns(threadlab_doctor::OS_MIN_WINDOW_NS),
        worst.runnable_per_cpu,
        threadlab_doctor::OVERSUBSCRIBED_RUNNABLE_PER_CPU,
        fmt_ns(worst.begin_ns),
        worst.threads,
        worst.most_alive
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn burst(begin_ms: u64, len_ms: u64, runnable_per_cpu: f64) -> Burst {
        Burst {
            begin_ns: begin_ms * 1_000_000,
            end_ns: (begin_ms + len_ms) * 1_000_000,
            threads: 3024,
            median_interval_ns: 80_000,
            median_work_ns: 60_000,
            runnable_per_cpu,
            most_alive: 38,
        }
    }

    #[test]
    fn a_burst_over_the_doctors_bound_is_called_oversubscription() {
        // Under the bound, or too short to judge: nothing.
        assert_eq!(
            oversubscribed(&[burst(0, 300, 1.2), burst(400, 5, 3.0)]),
            None
        );
        let line = oversubscribed(&[
            burst(0, 300, 1.2),
            burst(400, 250, 1.96),
            burst(900, 5, 3.0),
        ])
        .expect("the 250 ms burst at 1.96 per CPU");
        assert!(
            line.contains("oversubscription in 1 of 2 burst(s)"),
            "{line}"
        );
        assert!(
            line.contains("up to 1.96 runnable threads per CPU"),
            "{line}"
        );
        assert!(line.contains("at most 38 alive"), "{line}");
    }

    /// A fast burst whose births were traced says that tracing lowers its runnable figure and
    /// how to avoid that; the same burst from samples alone does not.
    #[test]
    fn traced_fast_bursts_carry_the_observer_caveat() {
        use crate::observe::sampler::{ExactCounts, ThreadLog};
        let threads = (0..20u64)
            .map(|i| ThreadLog {
                tid: 100 + i,
                name: "t".into(),
                born_ns: Some(1_000_000 + i * 50_000),
                exited_ns: Some(1_000_000 + i * 50_000 + 40_000),
                samples: Vec::new(),
                end: Some((20_000, 10_000)),
            })
            .collect();
        let mut o = Observed {
            threads,
            cpus: 2,
            exact: Some(ExactCounts::default()),
            ..Observed::default()
        };
        let mut traced = String::new();
        render_bursts(&mut traced, &o);
        assert!(
            traced.contains("note: tracing births stops each new thread"),
            "{traced}"
        );
        assert!(traced.contains("--sample-only"), "{traced}");
        o.exact = None;
        let mut sampled = String::new();
        render_bursts(&mut sampled, &o);
        assert!(sampled.contains("Thread creation in bursts"), "{sampled}");
        assert!(!sampled.contains("note: tracing births"), "{sampled}");
    }
}
