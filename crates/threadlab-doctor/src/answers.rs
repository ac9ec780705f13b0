//! The first seed's four questions — are we using the threads effectively, is the work evenly
//! distributed, which threads are waiting on locks, how does context switching affect
//! throughput — each answered in a sentence with the figure behind it, and marked fine unless
//! a finding bears on it.

use super::findings::Diagnosis;
use super::findings::{
    figure, Answer, Finding, Pitfall, IMBALANCE_MAX_THREADS_PER_CPU, IMBALANCE_MIN_RUNNING_NS,
    OS_MIN_WINDOW_NS,
};
use super::stats::fmt_ns;
use super::stats::ratio;

fn has(found: &[Finding], pitfalls: &[Pitfall]) -> bool {
    found.iter().any(|f| pitfalls.contains(&f.pitfall))
}

/// The four answers, given the findings.
pub(crate) fn answers(d: &Diagnosis, found: &[Finding]) -> Vec<Answer> {
    use Pitfall::*;
    let working: Vec<_> = d.threads.iter().filter(|t| t.tasks + t.zones > 0).collect();
    let running = working
        .iter()
        .fold(0u64, |a, t| a.saturating_add(t.running_ns));
    let life = working
        .iter()
        .fold(0u64, |a, t| a.saturating_add(t.lifetime_ns));
    let util = ratio(running as f64, life as f64);
    let q1 = Answer {
        question: "Are we using the threads effectively?",
        answer: format!(
            "the {} thread(s) that ran tasks or zones were running {:.0}% of their lifetimes; the \
             process used {:.2} of {} CPU(s) on average with {:.1} runnable thread(s)",
            working.len(),
            100.0 * util,
            d.os.cpus_used_avg,
            d.os.cpus,
            d.os.runnable_avg
        ),
        figure: figure("running share of lifetime", util, "ratio", None),
        ok: !has(
            found,
            &[
                Oversubscription,
                ThreadCreation,
                ParkWakeChurn,
                FruitlessSpinning,
            ],
        ),
    };
    let judged: Vec<_> = d
        .groups
        .iter()
        .filter(|g| {
            g.threads >= 2
                && g.threads <= IMBALANCE_MAX_THREADS_PER_CPU * (d.os.cpus as usize).max(1)
                && g.max_running_ns >= IMBALANCE_MIN_RUNNING_NS
        })
        .collect();
    let worst = judged
        .iter()
        .max_by(|a, b| a.imbalance.total_cmp(&b.imbalance));
    let q2 = Answer {
        question: "Is the work evenly distributed across threads?",
        answer: match worst {
            Some(g) => format!(
                "in `{}` ({} threads, the least even group) the busiest thread worked {} and \
                 the mean {}{}: {:.0}% of the group's capacity lost to imbalance",
                g.name,
                g.threads,
                fmt_ns(g.max_work_ns),
                fmt_ns(g.mean_work_ns as u64),
                super::groups::on_cpu_note(g),
                100.0 * g.imbalance
            ),
            None => "no group of threads ran work side by side for long enough to judge".into(),
        },
        figure: figure(
            "1 - mean/max work",
            worst.map_or(0.0, |g| g.imbalance),
            "ratio",
            None,
        ),
        ok: !has(found, &[Imbalance, LongTask]),
    };
    let q3 = match d.locks.first().filter(|l| l.wait.count > 0) {
        Some(l) => {
            let who: Vec<String> = l
                .top_waiters
                .iter()
                .take(3)
                .map(|(n, ns)| format!("{n} ({})", fmt_ns(*ns)))
                .collect();
            // Observed from outside (`threadlab run`), a lock's hold time is unknown.
            let held = if l.hold.count == 0 {
                "hold time not recorded".to_owned()
            } else {
                format!(
                    "{:.1}× its {} hold time",
                    l.wait_over_hold,
                    fmt_ns(l.hold.total_ns)
                )
            };
            Answer {
                question: "Which threads are waiting on locks?",
                answer: format!(
                    "threads waited {} for `{}` ({} waits, {held}); most: {}",
                    fmt_ns(l.wait.total_ns),
                    l.name,
                    l.wait.count,
                    who.join(", ")
                ),
                figure: figure("lock wait / hold", l.wait_over_hold, "ratio", None),
                ok: !has(found, &[LockContention]),
            }
        }
        None => Answer {
            question: "Which threads are waiting on locks?",
            answer: "no thread waited for a recorded lock (threadlab::sync::Mutex)".into(),
            figure: figure("lock wait / hold", 0.0, "ratio", None),
            ok: !has(found, &[LockContention]),
        },
    };
    let short = if d.os.active_ns < OS_MIN_WINDOW_NS {
        format!(
            " (over {}, too short to judge: the OS accounts CPU time per scheduler tick)",
            fmt_ns(d.os.active_ns)
        )
    } else {
        String::new()
    };
    let q4 = Answer {
        question: "How does context switching affect throughput?",
        answer: format!(
            "threads waited {:.0}% of their runnable time for a CPU ({}, {:.0} involuntary \
             switches/s) and blocked {:.0} times/s ({} parks, {:.2} per task){short}",
            100.0 * d.os.preempted_share,
            fmt_ns(d.os.preempted_ns),
            d.os.involuntary_per_sec,
            d.os.voluntary_per_sec,
            d.runtime.parks,
            d.runtime.parks_per_task
        ),
        figure: figure(
            "preempted share of runnable time",
            d.os.preempted_share,
            "ratio",
            None,
        ),
        ok: !has(
            found,
            &[Preemption, Oversubscription, ParkWakeChurn, BusyMachine],
        ),
    };
    vec![q1, q2, q3, q4]
}
