//! The four questions that "Multithreading Isn't Free: Performance Pitfalls Visualized" asks of
//! a profile — are we using the threads effectively, is the work evenly distributed, which
//! threads are waiting on locks, how does context switching affect throughput — each answered in
//! a sentence with the figure behind it (none when the trace holds too little to judge), and
//! marked fine unless a finding bears on it.

use super::findings::Diagnosis;
use super::findings::{
    figure, imbalance_judged, Answer, Finding, Pitfall, IMBALANCE_SHARE, LOCK_WAIT_OVER_HOLD,
    OS_MIN_WINDOW_NS, PREEMPTED_SHARE,
};
use super::stats::fmt_ns;
use super::stats::ratio;
use super::stats::saturating_sum;

/// CPUs left idle, on average, beyond which a process whose threads queue for a contended lock
/// is said to be serialised by it (question 1): at least half a CPU.
const SERIALISED_IDLE_CPUS: f64 = 0.5;

fn has(found: &[Finding], pitfalls: &[Pitfall]) -> bool {
    found.iter().any(|f| pitfalls.contains(&f.pitfall))
}

/// The four answers, given the findings.
pub(crate) fn answers(d: &Diagnosis, found: &[Finding]) -> Vec<Answer> {
    use Pitfall::*;
    let working: Vec<_> = d.threads.iter().filter(|t| t.tasks + t.zones > 0).collect();
    let running = saturating_sum(working.iter().map(|t| t.running_ns));
    let life = saturating_sum(working.iter().map(|t| t.lifetime_ns));
    let util = ratio(running as f64, life as f64);
    // The OS accounts CPU time per scheduler tick: over a shorter window the process's CPU
    // figures are not a measurement (a 648 µs trace read "7.01 of 2 CPUs").
    let os_judged = d.os.active_ns >= OS_MIN_WINDOW_NS;
    let process = if os_judged {
        format!(
            "the process used {:.2} of {} CPU(s) on average with {:.1} runnable thread(s)",
            d.os.cpus_used_avg, d.os.cpus, d.os.runnable_avg
        )
    } else {
        format!(
            "the process's CPU use over {} is too short to judge (the OS accounts CPU time per \
             scheduler tick)",
            fmt_ns(d.os.active_ns)
        )
    };
    // Threads that queued for a lock while CPUs stood idle: the lock serialised them, so the
    // process used fewer CPUs than it had (four Python threads on the GIL use one of two).
    let serialised = d.locks.first().filter(|l| {
        os_judged
            && d.os.cpus >= 2
            && d.os.cpus_used_avg < f64::from(d.os.cpus) - SERIALISED_IDLE_CPUS
            && has(found, &[LockContention])
            && l.wait.count > 0
    });
    let serial_note = serialised.map_or_else(String::new, |l| {
        format!(
            "; its threads queued for `{}` while {:.1} of {} CPU(s) stood idle: the lock ran \
             them one at a time",
            l.name,
            f64::from(d.os.cpus) - d.os.cpus_used_avg,
            d.os.cpus
        )
    });
    let q1 = Answer {
        question: "Are we using the threads effectively?",
        answer: if working.is_empty() {
            // Observed from outside, or a program without tasks or zones: the OS's figures.
            format!("no thread ran tasks or zones; {process}{serial_note}")
        } else {
            format!(
                "the {} thread(s) that ran tasks or zones were running {:.0}% of their \
                 lifetimes; {process}{serial_note}",
                working.len(),
                100.0 * util,
            )
        },
        // Without tasks or zones the OS's figure says how much of the machine the process used.
        figure: if life > 0 {
            Some(figure("running share of lifetime", util, "ratio", None))
        } else {
            (os_judged && d.os.cpus > 0).then(|| {
                figure(
                    "CPUs used / CPUs",
                    ratio(d.os.cpus_used_avg, f64::from(d.os.cpus)),
                    "ratio",
                    None,
                )
            })
        },
        ok: serialised.is_none()
            && !has(
                found,
                &[
                    Oversubscription,
                    ThreadCreation,
                    ParkWakeChurn,
                    FruitlessSpinning,
                    BlockedWorkers,
                ],
            ),
    };
    let judged: Vec<_> = d
        .groups
        .iter()
        .filter(|g| imbalance_judged(g, d.os.cpus))
        .collect();
    let worst = judged
        .iter()
        .max_by(|a, b| a.imbalance.total_cmp(&b.imbalance));
    let q2 = Answer {
        question: "Is the work evenly distributed across threads?",
        answer: match worst {
            Some(g) => format!(
                "in the least even group, {}: {:.0}% of the group's capacity lost to imbalance",
                super::groups::imbalance_basis(g),
                100.0 * g.imbalance
            ),
            None => "no group of threads ran work side by side for long enough to judge".into(),
        },
        figure: worst.map(|g| {
            figure(
                "1 - work / (capacity × max work)",
                g.imbalance,
                "ratio",
                Some(IMBALANCE_SHARE),
            )
        }),
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
            // Futex waits sampled from outside come without holds.
            let held = if l.hold.count == 0 {
                "hold time not recorded".to_owned()
            } else {
                format!(
                    "{:.1}× its {} hold time{}",
                    l.wait_over_hold,
                    fmt_ns(l.hold.total_ns),
                    l.sampled_note()
                )
            };
            Answer {
                question: "Which threads are waiting on locks?",
                answer: format!(
                    "threads waited {} for `{}` ({} waits{}; {held}); most: {}{}",
                    fmt_ns(l.wait.total_ns),
                    l.name,
                    l.wait.count,
                    l.contended_note(),
                    who.join(", "),
                    l.where_note()
                ),
                // The figure the contention finding judges.
                figure: Some(super::findings::lock_judged(l, d.duration_ns).1),
                ok: !has(found, &[LockContention]),
            }
        }
        // Observed from outside, no wait is no proof: only pthread waits in the processes the
        // interposer entered are seen.
        None if !d.instrumented() => Answer {
            question: "Which threads are waiting on locks?",
            answer: "no lock wait was seen; from outside, `threadlab run` sees the pthread lock \
                     waits of the processes it entered, not the locks of a runtime that parks \
                     its own threads (Go's sync.Mutex, a JVM monitor while it spins) nor those \
                     of a program it could not enter (a static binary)"
                .into(),
            figure: None,
            ok: !has(found, &[LockContention]),
        },
        None => Answer {
            question: "Which threads are waiting on locks?",
            answer: "no thread waited for a recorded lock (threadlab::sync::Mutex)".into(),
            figure: Some(figure(
                "wait / hold",
                0.0,
                "ratio",
                Some(LOCK_WAIT_OVER_HOLD),
            )),
            ok: !has(found, &[LockContention]),
        },
    };
    let short = if !os_judged {
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
             switches/s) and blocked {:.0} times/s ({} parks{}){short}",
            100.0 * d.os.preempted_share,
            fmt_ns(d.os.preempted_ns),
            d.os.involuntary_per_sec,
            d.os.voluntary_per_sec,
            d.runtime.parks,
            if d.runtime.tasks > 0 {
                format!(", {:.2} per task", d.runtime.parks_per_task)
            } else {
                String::new()
            }
        ),
        figure: os_judged.then(|| {
            figure(
                "preempted share of runnable time",
                d.os.preempted_share,
                "ratio",
                Some(PREEMPTED_SHARE),
            )
        }),
        ok: !has(
            found,
            &[Preemption, Oversubscription, ParkWakeChurn, BusyMachine],
        ),
    };
    vec![q1, q2, q3, q4]
}
