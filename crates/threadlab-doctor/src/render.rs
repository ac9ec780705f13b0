//! The text form of a [`Diagnosis`] and a [`Comparison`]: the answers and findings first (what a
//! reader wants), then the tables behind them (threads, locks, spans, runtime, OS).

use std::fmt::{self, Display, Formatter};

use super::compare::{Comparison, NOISE_RELATIVE};
use super::findings::{Diagnosis, NEEDS_INSTRUMENTATION};
use super::runtime::RuntimeStats;
use super::stats::fmt_ns;
use super::stats::saturating_sum;

fn pct(x: f64) -> String {
    format!("{:.0}%", 100.0 * x)
}

/// Aligned columns: the first left-aligned, the others right-aligned.
struct Columns {
    rows: Vec<Vec<String>>,
}

impl Columns {
    fn new(headers: &[&str]) -> Columns {
        Columns {
            rows: vec![headers.iter().map(|h| h.to_string()).collect()],
        }
    }
    fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }
    fn write(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let n = self.rows[0].len();
        let width = |i: usize| {
            self.rows
                .iter()
                .map(|r| r.get(i).map_or(0, |c| c.chars().count()))
                .max()
                .unwrap_or(0)
        };
        let widths: Vec<usize> = (0..n).map(width).collect();
        for r in &self.rows {
            let mut line = String::from("   ");
            for (i, c) in r.iter().enumerate() {
                let pad = " ".repeat(widths[i].saturating_sub(c.chars().count()));
                if i == 0 {
                    line += c;
                    line += &pad;
                } else {
                    line += "  ";
                    line += &pad;
                    line += c;
                }
            }
            writeln!(f, "{}", line.trim_end())?;
        }
        Ok(())
    }
}

/// Most thread rows printed; beyond it, groups stand for their threads.
const MAX_THREAD_ROWS: usize = 24;

impl Display for Diagnosis {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "threadlab doctor: {} thread(s), {} recorded, {} CPU(s), {} events{}",
            self.threads.len(),
            fmt_ns(self.duration_ns),
            self.os.cpus,
            self.events,
            if self.dropped > 0 {
                format!(
                    " ({} dropped: the recording's memory cap or flight-recorder budget \
                     was reached, so this trace is incomplete)",
                    self.dropped
                )
            } else {
                String::new()
            }
        )?;
        writeln!(f, "\nThe four questions")?;
        for (i, a) in self.answers.iter().enumerate() {
            let verdict = match (a.ok, &a.figure) {
                (false, _) => "see findings",
                (true, None) => "not enough to judge",
                (true, Some(_)) => "fine",
            };
            writeln!(f, " {}. {} ({verdict})", i + 1, a.question)?;
            writeln!(f, "    {}.", a.answer)?;
        }
        writeln!(f, "\nFindings")?;
        if self.findings.is_empty() {
            writeln!(f, "   none of the known pitfalls")?;
        }
        for x in &self.findings {
            writeln!(f, " ! {} ({}): {}.", x.pitfall, x.subject, x.evidence)?;
            let threshold = x
                .figure
                .threshold
                .map_or(String::new(), |t| format!(" (threshold {t})"));
            writeln!(
                f,
                "   figure: {} = {:.3}{threshold}",
                x.figure.name, x.figure.value
            )?;
            writeln!(f, "   suggestion: {}.", x.suggestion)?;
        }
        if !self.instrumented() {
            writeln!(f, "   {}", NEEDS_INSTRUMENTATION)?;
        }
        writeln!(f, "\nTime per state")?;
        let mut t = Columns::new(&[
            "thread", "life", "running", "search", "spin", "parked", "lock", "other", "preempt",
            "util", "tasks", "steals", "parks", "blocks",
        ]);
        let state_row = |name: String, life: u64, s: [u64; 7], counts: [u64; 4]| -> Vec<String> {
            let mut r = vec![name, fmt_ns(life)];
            r.extend(s[..6].iter().map(|&v| fmt_ns(v)));
            r.push(fmt_ns(s[6]));
            r.push(pct(super::stats::ratio(s[0] as f64, life as f64)));
            r.extend(counts.iter().map(|c| c.to_string()));
            r
        };
        if self.threads.len() <= MAX_THREAD_ROWS {
            for th in &self.threads {
                t.row(state_row(
                    th.name.clone(),
                    th.lifetime_ns,
                    [
                        th.running_ns,
                        th.searching_ns,
                        th.spinning_ns,
                        th.parked_ns,
                        th.lock_wait_ns,
                        th.other_ns,
                        th.preempted_ns,
                    ],
                    [th.tasks, th.steals, th.parks, th.blocks()],
                ));
            }
        } else {
            for g in &self.groups {
                let ts: Vec<_> = self.threads.iter().filter(|t| t.group == g.name).collect();
                let sum = |f: fn(&super::states::ThreadStats) -> u64| {
                    saturating_sum(ts.iter().map(|t| f(t)))
                };
                t.row(state_row(
                    format!("{} (×{})", g.name, g.threads),
                    g.lifetime_ns,
                    [
                        sum(|t| t.running_ns),
                        sum(|t| t.searching_ns),
                        sum(|t| t.spinning_ns),
                        sum(|t| t.parked_ns),
                        sum(|t| t.lock_wait_ns),
                        sum(|t| t.other_ns),
                        sum(|t| t.preempted_ns),
                    ],
                    [
                        sum(|t| t.tasks),
                        sum(|t| t.steals),
                        sum(|t| t.parks),
                        g.blocks,
                    ],
                ));
            }
        }
        t.write(f)?;
        if !self.locks.is_empty() {
            write_locks(f, &self.locks)?;
        }
        if !self.spans.is_empty() {
            writeln!(f, "\nZones and tasks (self time)")?;
            let mut t = Columns::new(&["span", "count", "total", "mean", "p50", "p99", "max"]);
            for s in self.spans.iter().take(MAX_THREAD_ROWS) {
                let x = &s.self_time;
                t.row(vec![
                    s.name.clone(),
                    x.count.to_string(),
                    fmt_ns(x.total_ns),
                    fmt_ns(x.mean_ns as u64),
                    fmt_ns(x.median_ns),
                    fmt_ns(x.p99_ns),
                    fmt_ns(x.max_ns),
                ]);
            }
            t.write(f)?;
        }
        // A program without a pool (observed from outside, or one that only records zones)
        // has no pool figures to show.
        if self.runtime.has_pool() {
            write_runtime(f, &self.runtime)?;
        }
        let o = &self.os;
        writeln!(f, "\nOS (schedstat, context switches)")?;
        if o.active_ns < super::findings::OS_MIN_WINDOW_NS {
            writeln!(
                f,
                "   over {} ({} threads sampled): too short to judge, the OS accounts CPU time \
                 per scheduler tick",
                fmt_ns(o.active_ns),
                o.sampled_threads
            )?;
        } else {
            writeln!(
                f,
                "   {:.2} runnable threads and {:.2} CPUs used on average over {} ({} threads \
             sampled); preempted {} of runnable time ({}); {:.0} involuntary and {:.0} voluntary \
             switches/s",
                o.runnable_avg,
                o.cpus_used_avg,
                fmt_ns(o.active_ns),
                o.sampled_threads,
                pct(o.preempted_share),
                fmt_ns(o.preempted_ns),
                o.involuntary_per_sec,
                o.voluntary_per_sec
            )?;
        }
        for v in super::bounds::bounds_violations(self) {
            writeln!(f, "   figure out of bounds (a bug in the doctor): {v}")?;
        }
        Ok(())
    }
}

/// Lock rows printed (most waited-for first); the rest are counted.
const MAX_LOCK_ROWS: usize = 12;
/// Call sites printed per lock.
const MAX_SITE_LINES: usize = 5;

/// The Locks table (acquisitions, contended share, holds, waits), then per lock what the table
/// has no room for: whether its holds were sampled, the thread that held it most while others
/// waited and those that waited most, and its waits per call site, longest first.
fn write_locks(f: &mut Formatter<'_>, locks: &[super::locks::LockStats]) -> fmt::Result {
    writeln!(f, "\nLocks")?;
    let mut t = Columns::new(&[
        "lock",
        "acquired",
        "contended",
        "held",
        "hold mean",
        "hold p99",
        "hold max",
        "waits",
        "waited",
        "wait p50",
        "wait p99",
        "wait/hold",
    ]);
    let dash = || "-".to_owned();
    for l in locks.iter().take(MAX_LOCK_ROWS) {
        let held = l.hold.count > 0;
        let hold = |v: u64| if held { fmt_ns(v) } else { dash() };
        let waited = |v: u64| if l.wait.count > 0 { fmt_ns(v) } else { dash() };
        t.row(vec![
            l.name.clone(),
            l.acquisitions.map_or_else(dash, |a| a.to_string()),
            l.contended_share
                .map_or_else(dash, |c| format!("{:.1}%", 100.0 * c)),
            hold(l.hold.total_ns),
            hold(l.hold.mean_ns as u64),
            hold(l.hold.p99_ns),
            hold(l.hold.max_ns),
            l.wait.count.to_string(),
            waited(l.wait.total_ns),
            waited(l.wait.median_ns),
            waited(l.wait.p99_ns),
            if held {
                format!("{:.2}", l.wait_over_hold)
            } else {
                dash()
            },
        ]);
    }
    t.write(f)?;
    if locks.len() > MAX_LOCK_ROWS {
        let rest = &locks[MAX_LOCK_ROWS..];
        writeln!(
            f,
            "   … {} more lock(s): {} waits, {} acquisitions",
            rest.len(),
            saturating_sum(rest.iter().map(|l| l.wait.count)),
            saturating_sum(rest.iter().filter_map(|l| l.acquisitions))
        )?;
    }
    for l in locks.iter().take(MAX_LOCK_ROWS) {
        if let Some(n) = l.hold_samples {
            writeln!(
                f,
                "   {}: holds sampled, {n} of {} timed (held: their mean × the acquisitions; \
                 the other hold figures are the sample's)",
                l.name, l.hold.count
            )?;
        } else if l.wait.count > 0 && l.hold.count == 0 {
            writeln!(f, "   {}: hold time not recorded", l.name)?;
        }
        let who = |list: Vec<String>| list.join(", ");
        if let Some(h) = l.holders.first() {
            writeln!(
                f,
                "   {}: held most while others waited by {} ({}, {}){}",
                l.name,
                h.thread,
                super::locks::waits(h.waits),
                fmt_ns(h.wait_ns),
                if l.holders.len() > 1 {
                    format!(
                        "; then {}",
                        who(l.holders[1..]
                            .iter()
                            .map(|h| format!("{} ({})", h.thread, fmt_ns(h.wait_ns)))
                            .collect())
                    )
                } else {
                    String::new()
                }
            )?;
        }
        if !l.top_waiters.is_empty() {
            writeln!(
                f,
                "   {}: waited most: {}",
                l.name,
                who(l
                    .top_waiters
                    .iter()
                    .map(|(n, ns)| format!("{n} ({})", fmt_ns(*ns)))
                    .collect())
            )?;
        }
        for s in l.sites.iter().take(MAX_SITE_LINES) {
            writeln!(
                f,
                "   {}: waits at {}: {} ({})",
                l.name,
                s.site,
                s.waits,
                fmt_ns(s.wait_ns)
            )?;
        }
    }
    Ok(())
}

/// The pool's figures: workers, tasks, steals, parks, wake-up and spawn latencies.
fn write_runtime(f: &mut Formatter<'_>, r: &RuntimeStats) -> fmt::Result {
    writeln!(f, "\nRuntime")?;
    if r.spare_threads > 0 {
        writeln!(
            f,
            "   {} spare thread(s) stood in for workers blocked in the kernel (not counted \
             as workers below)",
            r.spare_threads
        )?;
    }
    writeln!(
        f,
        "   {} worker(s), {} tasks; steals {:.0}/s, failed steal attempts {:.0}/s; parks \
         {:.0}/s, {:.2} per task; wake-ups {:.2} per task",
        r.workers,
        r.tasks,
        r.steals_per_sec,
        r.failed_steals_per_sec,
        r.parks_per_sec,
        r.parks_per_task,
        r.wakes_per_task
    )?;
    writeln!(
        f,
        "   wake-up latency p50 {} p99 {} ({} wake-ups of a parked worker); spawn to run p50 \
         {} p99 {}; about {} of the workers' CPU outside tasks",
        fmt_ns(r.wake_latency.median_ns),
        fmt_ns(r.wake_latency.p99_ns),
        r.wake_latency.count,
        fmt_ns(r.spawn_to_run.median_ns),
        fmt_ns(r.spawn_to_run.p99_ns),
        pct(r.cpu_outside_tasks)
    )?;
    Ok(())
}

fn signed_ns(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "+" };
    format!("{sign}{}", fmt_ns(ns.unsigned_abs()))
}

impl Display for Comparison {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "Zones, tasks (self time) and locks, largest absolute difference of the total first \
             (~ marks a difference within noise: under {:.0}% of the larger total, or no more than \
             the longest single span)",
            100.0 * NOISE_RELATIVE
        )?;
        let mut t = Columns::new(&[
            "",
            "A count",
            "A total",
            "A mean",
            "A p50",
            "A p90",
            "A p99",
            "A max",
            "B count",
            "B total",
            "B mean",
            "B p50",
            "B p90",
            "B p99",
            "B max",
            "B-A total",
            "rel",
            "",
        ]);
        for r in &self.rows {
            let mut cells = vec![r.name.clone()];
            for s in [&r.a, &r.b] {
                cells.push(s.count.to_string());
                cells.extend(
                    [
                        s.total_ns,
                        s.mean_ns as u64,
                        s.median_ns,
                        s.p90_ns,
                        s.p99_ns,
                        s.max_ns,
                    ]
                    .map(fmt_ns),
                );
            }
            cells.push(signed_ns(r.diff_total_ns));
            cells.push(
                r.relative
                    .map_or("new".into(), |x| format!("{:+.0}%", 100.0 * x)),
            );
            cells.push(if r.noise { "~" } else { "" }.into());
            t.row(cells);
        }
        t.write(f)?;
        writeln!(f, "\nRuntime")?;
        let mut t = Columns::new(&["", "A", "B"]);
        for r in &self.runtime {
            let v = |x: f64| match r.unit {
                "ns" => fmt_ns(x as u64),
                "ratio" => pct(x),
                _ if x.fract() == 0.0 => format!("{x:.0}"),
                _ => format!("{x:.2}"),
            };
            t.row(vec![r.name.to_owned(), v(r.a), v(r.b)]);
        }
        t.write(f)?;
        if self.locks.is_empty() {
            return Ok(());
        }
        writeln!(f, "\nLocks")?;
        let mut t = Columns::new(&["lock", "", "A", "B", "B/A"]);
        for r in &self.locks {
            let v = |x: Option<f64>| match (x, r.unit) {
                (None, _) => "-".to_owned(),
                (Some(x), "ns") => fmt_ns(x as u64),
                (Some(x), "ratio") => format!("{:.1}%", 100.0 * x),
                (Some(x), _) => format!("{x:.0}"),
            };
            let rel = match (r.a, r.b) {
                (Some(a), Some(b)) if a > 0.0 => format!("{:.2}×", b / a),
                _ => "-".to_owned(),
            };
            t.row(vec![
                r.lock.clone(),
                r.figure.to_owned(),
                v(r.a),
                v(r.b),
                rel,
            ]);
        }
        t.write(f)
    }
}
