//! The physical bounds of the doctor's figures, checked before they are printed: a process
//! cannot use more CPUs than it has, a share lies between 0 and 1, no figure is NaN or infinite,
//! and a figure the trace holds too little to judge is absent, never 0. A figure outside its
//! bound is a bug at its cause (the CPU time of a short trace read from tick-granular counters
//! gave "7.01 of 2 CPUs"); the text form prints any violation so that it is seen, not hidden.
//!
//! Spare threads (started by a pool while its workers sat blocked in the kernel) are threads of
//! the process: their CPU time counts in the CPUs it used, which the OS measured and which stay
//! within its CPUs. They are not workers of the pool: a pool of 2 whose spare thread ran while
//! both workers were blocked still reports 2 workers (`RuntimeStats::workers`; the spare
//! threads are `spare_threads`), so nothing read as "per worker of the pool" (its size in
//! `compare`, a speed-up bound, the other workers' idle share behind a long task) grows with
//! them; and their life is not read as work (`ThreadStats::spare`), so their utilization stays
//! a share of their own lifetime.

use super::findings::{Diagnosis, Figure, OS_MIN_WINDOW_NS};

/// Slack for rounding in sums of nanoseconds turned into ratios.
const EPS: f64 = 1e-9;

/// Every figure of `d` that breaks its physical bound, one sentence each (empty when all hold).
///
/// ```
/// use threadlab_doctor::{bounds_violations, Diagnose};
/// let rec = threadlab::trace::start();
/// std::thread::spawn(|| {
///     let _z = threadlab::zone!("work");
/// })
/// .join()
/// .unwrap();
/// let d = rec.stop().diagnose();
/// assert!(bounds_violations(&d).is_empty(), "{:?}", bounds_violations(&d));
/// ```
pub fn bounds_violations(d: &Diagnosis) -> Vec<String> {
    let mut out = Vec::new();
    let share = |out: &mut Vec<String>, what: &str, v: f64| {
        if !(v.is_finite() && (-EPS..=1.0 + EPS).contains(&v)) {
            out.push(format!("{what} = {v} is not a share between 0 and 1"));
        }
    };
    share(&mut out, "OS preempted share", d.os.preempted_share);
    share(
        &mut out,
        "share of the workers' CPU outside tasks",
        d.runtime.cpu_outside_tasks,
    );
    for t in &d.threads {
        share(
            &mut out,
            &format!("utilization of thread `{}`", t.name),
            t.utilization,
        );
    }
    for l in &d.locks {
        if let Some(c) = l.contended_share {
            share(
                &mut out,
                &format!("contended share of lock `{}`", l.name),
                c,
            );
        }
    }
    for g in &d.groups {
        share(
            &mut out,
            &format!("imbalance of group `{}`", g.name),
            g.imbalance,
        );
    }
    let finite = |out: &mut Vec<String>, what: String, v: f64| {
        if !v.is_finite() || v < 0.0 {
            out.push(format!("{what} = {v} is not a finite, non-negative figure"));
        }
    };
    finite(&mut out, "OS runnable threads".into(), d.os.runnable_avg);
    finite(&mut out, "OS CPUs used".into(), d.os.cpus_used_avg);
    let figures = d
        .answers
        .iter()
        .filter_map(|a| a.figure.as_ref().map(|f| (a.question, f)))
        .chain(d.findings.iter().map(|f| (f.pitfall.as_str(), &f.figure)));
    for (about, f) in figures {
        finite(&mut out, format!("`{}` of `{about}`", f.name), f.value);
        if is_share(f) && !(-EPS..=1.0 + EPS).contains(&f.value) {
            out.push(format!(
                "`{}` of `{about}` = {} is not a share between 0 and 1",
                f.name, f.value
            ));
        }
    }
    // Each thread's CPU time is clipped to its own sampled window, so the process's average can
    // only pass its CPU count through the union of windows; over a window the OS's accounting
    // cannot resolve, the figure is not printed as a measurement and is not checked here.
    if d.os.cpus > 0
        && d.os.active_ns >= OS_MIN_WINDOW_NS
        && d.os.cpus_used_avg > f64::from(d.os.cpus) + EPS
    {
        out.push(format!(
            "the process used {:.2} of {} CPU(s) over {} ns",
            d.os.cpus_used_avg, d.os.cpus, d.os.active_ns
        ));
    }
    out
}

/// Whether a figure is a share (of time, of capacity): its name says so, or it is `1 - a/b`.
fn is_share(f: &Figure) -> bool {
    f.name.contains("share") || f.name.starts_with("1 - ")
}
