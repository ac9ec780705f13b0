//! Whether a thread that a busy thread wakes gets a CPU of its own: a stock Linux scheduler starts
//! it on an idle CPU that shares the waker's cache, and the two then run side by side; a kernel
//! that packs threads onto fewer CPUs starts it behind its waker, and the two take turns on one
//! CPU while another stays idle.
//!
//! The development VM's kernel packs (it boots with `sched_vcpu_pack`): in a two-worker fib, the
//! worker that the busy thread woke waited 2.3 ms for the waker's CPU, then the two took turns on
//! it in 4 ms slices while the other CPU was idle for 10 ms (`perf sched timehist`), and the fork
//! took twice as long as in the rounds where the two ran side by side. Every runtime the lab
//! compares is woken the same way, so a parallel variant's time then depends on where the kernel
//! put its threads, and can differ between runs by up to its number of threads. The lab runs this
//! check once, before its experiments, and prints it with the CPU speeds.
//!
//! The check, ten rounds: a helper thread parks and both threads idle for 50 ms; the main thread
//! spins for a millisecond (so it is running when it wakes the helper), wakes it, and both spin until 8 ms after the wake. Each
//! notes the CPU time it got in that window (its thread's CPU clock); their sum over two windows
//! is the share of two CPUs the pair had: about 1 side by side, about 0.5 on one CPU.

use crate::measure::thread_cpu_time;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the check saw.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Placement {
    /// Rounds measured.
    pub rounds: usize,
    /// Of those, how many gave the pair less than three quarters of two CPUs (shared one).
    pub shared: usize,
    /// The median share of two CPUs the pair had after the wake (0–1).
    pub median_share: f64,
}

/// Rounds of the check.
const ROUNDS: usize = 10;
/// How long both threads idle before each round: a CPU idle for that long is one a packing
/// kernel passes over at a wake-up (after 2 ms of idleness the development VM still spread the
/// pair; after 50 ms, between a pool's rounds of work, it packed it).
const IDLE_BEFORE: Duration = Duration::from_millis(50);
/// How long the waker runs before each wake-up.
const BUSY_BEFORE: Duration = Duration::from_millis(1);
/// How long both threads spin after the wake-up.
const WINDOW: Duration = Duration::from_millis(8);
/// Below this share of two CPUs, a round counts as the pair sharing one CPU.
const SHARED_BELOW: f64 = 0.75;

/// Spins until `until`.
fn spin_until(until: Instant) {
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

/// Runs the check; `None` with fewer than two CPUs to run on (nothing to share) or where the
/// helper thread cannot be started.
pub fn probe() -> Option<Placement> {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        return None;
    }
    // The round the helper is to run (0: none yet), the end of its window, and what it reports:
    // the round it measured and the CPU time it got (a report that comes late is never taken for
    // the next round's).
    let go = Arc::new(AtomicU64::new(0));
    let window_end = Arc::new(Mutex::new(Instant::now()));
    let report = Arc::new(Mutex::new((0u64, Duration::ZERO)));
    let quit = Arc::new(AtomicBool::new(false));
    let helper = {
        let (go, window_end, report, quit) = (
            Arc::clone(&go),
            Arc::clone(&window_end),
            Arc::clone(&report),
            Arc::clone(&quit),
        );
        std::thread::Builder::new()
            .name("threadlab-placement".into())
            .spawn(move || {
                let mut done = 0;
                loop {
                    // SeqCst: a handshake between two threads, off any hot path; the strongest
                    // ordering keeps it simple to read (the window and the report are behind
                    // locks).
                    let round = go.load(Ordering::SeqCst);
                    if round == done {
                        if quit.load(Ordering::SeqCst) {
                            return;
                        }
                        std::thread::park();
                        continue;
                    }
                    done = round;
                    let until = *window_end.lock().unwrap_or_else(|e| e.into_inner());
                    let cpu0 = thread_cpu_time();
                    spin_until(until);
                    *report.lock().unwrap_or_else(|e| e.into_inner()) =
                        (round, thread_cpu_time() - cpu0);
                }
            })
            .ok()?
    };
    let mut shares = Vec::with_capacity(ROUNDS);
    for round in 1..=ROUNDS as u64 {
        // Let the helper park (it reported the previous round) and the CPUs idle, then be busy.
        std::thread::sleep(IDLE_BEFORE);
        spin_until(Instant::now() + BUSY_BEFORE);
        let woke = Instant::now();
        let until = woke + WINDOW;
        *window_end.lock().unwrap_or_else(|e| e.into_inner()) = until;
        let cpu0 = thread_cpu_time();
        go.store(round, Ordering::SeqCst);
        helper.thread().unpark();
        spin_until(until);
        let mine = thread_cpu_time() - cpu0;
        // The helper ends its window at the same instant; give it a moment to report.
        let give_up = Instant::now() + WINDOW;
        let theirs = loop {
            let (r, t) = *report.lock().unwrap_or_else(|e| e.into_inner());
            if r == round {
                break Some(t);
            }
            if Instant::now() > give_up {
                break None;
            }
            std::thread::yield_now();
        };
        // A helper that did not run in its window at all got no CPU: its share is 0.
        let theirs = theirs.unwrap_or(Duration::ZERO);
        let window = (until - woke).as_secs_f64();
        shares.push(((mine + theirs).as_secs_f64() / (2.0 * window)).min(1.0));
    }
    quit.store(true, Ordering::SeqCst);
    helper.thread().unpark();
    let _ = helper.join();
    let shared = shares.iter().filter(|&&s| s < SHARED_BELOW).count();
    shares.sort_by(f64::total_cmp);
    Some(Placement {
        rounds: shares.len(),
        shared,
        median_share: shares[shares.len() / 2],
    })
}

/// One line: `cpu placement: after 7 of 10 wake-ups the two threads shared one CPU …`.
pub fn describe(placement: Option<&Placement>) -> String {
    let Some(p) = placement else {
        return "cpu placement: not checked (fewer than two CPUs)".into();
    };
    let verdict = if 2 * p.shared > p.rounds {
        "the kernel starts a woken thread behind its busy waker rather than on another CPU (it \
         packs threads onto fewer CPUs, as some VMs' kernels do): after a wake-up, a pool's \
         threads can share one CPU for milliseconds, so a parallel variant's time can differ \
         between runs by up to its number of threads"
    } else if p.shared > 0 {
        "a woken thread mostly gets a CPU of its own, but not always: parallel variants' times \
         may vary between runs for that reason"
    } else {
        "a woken thread gets a CPU of its own, as a stock Linux scheduler places it"
    };
    format!(
        "cpu placement: after {} of {} wake-ups a busy thread and the thread it woke shared one \
         CPU (median {:.0}% of two CPUs in the 8 ms after the wake): {verdict}",
        p.shared,
        p.rounds,
        100.0 * p.median_share
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The check counts within what it did: every shared round is one of its rounds, and a share
    /// of two CPUs lies in 0–1.
    #[test]
    fn the_check_counts_within_its_rounds() {
        if let Some(p) = probe() {
            assert_eq!(p.rounds, ROUNDS, "{p:?}");
            assert!(p.shared <= p.rounds, "{p:?}");
            assert!((0.0..=1.0).contains(&p.median_share), "{p:?}");
            assert!(describe(Some(&p)).starts_with("cpu placement: "));
        }
    }

    #[test]
    fn the_verdict_follows_the_rounds() {
        let p = |shared| Placement {
            rounds: 10,
            shared,
            median_share: 0.5,
        };
        assert!(describe(Some(&p(9))).contains("packs threads"));
        assert!(describe(Some(&p(2))).contains("not always"));
        assert!(describe(Some(&p(0))).contains("a CPU of its own, as a stock"));
        assert!(describe(None).contains("not checked"));
    }
}
