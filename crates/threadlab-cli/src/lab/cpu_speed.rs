//! How fast each CPU runs right now: the same fixed chain of integer operations, timed on a
//! thread pinned to each CPU this process may use, in turn.
//!
//! On a shared host (a cloud VM) one vCPU can run much slower than another for minutes at a
//! time, when the host gives its physical core to a neighbour; on the development VM the same
//! loop took 1.7× as long on one vCPU as on the other, more than most differences the lab
//! measures. A variant whose busy thread lands on the slow CPU then looks slower for no reason
//! of its own. The lab runs this check before and after its experiments and prints it with the
//! machine, so a reader can tell such a machine from a quiet one.

use serde::Serialize;
use std::time::Instant;

/// One CPU's time for the fixed loop.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct CpuSpeed {
    /// The logical CPU.
    pub cpu: usize,
    /// The fastest of the repetitions, milliseconds.
    pub loop_ms: f64,
}

/// Iterations of the loop: a few milliseconds on a current core.
const ITERATIONS: u64 = 4_000_000;

/// A dependent chain (each step needs the previous result), so the time is the core's latency
/// for it and not something the compiler or the out-of-order engine can shorten.
fn fixed_loop() -> u64 {
    let mut x: u64 = std::hint::black_box(0x9E37_79B9_7F4A_7C15);
    for _ in 0..ITERATIONS {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    std::hint::black_box(x)
}

/// The CPUs this process may run on (its affinity mask), in order.
fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set, which sched_getaffinity fills for the
    // calling thread (pid 0); CPU_ISSET only reads inside the set, for indexes below its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// Pins the calling thread to `cpu`; false if the kernel refused.
fn pin_to(cpu: usize) -> bool {
    // SAFETY: as in `allowed_cpus`; CPU_SET writes inside the set (cpu < CPU_SETSIZE, since it
    // came from `allowed_cpus`), and the syscall reads it for the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

/// Times the loop on each CPU this process may use (the best of three tries each, one try
/// past 16 CPUs), one CPU at a time on a pinned thread. Empty if the affinity cannot be read
/// or set (the check is then skipped, never an error).
pub fn probe() -> Vec<CpuSpeed> {
    let cpus = allowed_cpus();
    let tries = if cpus.len() > 16 { 1 } else { 3 };
    let mut out = Vec::new();
    for cpu in cpus {
        let timed = std::thread::spawn(move || {
            if !pin_to(cpu) {
                return None;
            }
            fixed_loop(); // warm-up: the thread is on its CPU, the code in cache
            (0..tries)
                .map(|_| {
                    let t = Instant::now();
                    fixed_loop();
                    t.elapsed().as_secs_f64() * 1e3
                })
                .min_by(f64::total_cmp)
        })
        .join()
        .ok()
        .flatten();
        match timed {
            Some(loop_ms) => out.push(CpuSpeed { cpu, loop_ms }),
            None => return Vec::new(),
        }
    }
    out
}

/// The slowest CPU's time over the fastest's (1.0 for one CPU or none).
pub fn spread(speeds: &[CpuSpeed]) -> f64 {
    let fastest = speeds
        .iter()
        .map(|s| s.loop_ms)
        .fold(f64::INFINITY, f64::min);
    let slowest = speeds.iter().map(|s| s.loop_ms).fold(0.0, f64::max);
    if speeds.len() < 2 || fastest <= 0.0 {
        1.0
    } else {
        slowest / fastest
    }
}

/// One line: `cpu speed (before): a fixed loop took 2.10 ms on cpu 0, 3.57 ms on cpu 1; the
/// slowest CPU 1.70× the fastest: …`.
pub fn describe(when: &str, speeds: &[CpuSpeed]) -> String {
    if speeds.is_empty() {
        return format!("cpu speed ({when}): not measured (the CPU affinity cannot be set)");
    }
    let shown: Vec<String> = speeds
        .iter()
        .take(8)
        .map(|s| format!("{:.2} ms on cpu {}", s.loop_ms, s.cpu))
        .collect();
    let more = if speeds.len() > 8 {
        format!(" and {} more", speeds.len() - 8)
    } else {
        String::new()
    };
    let spread = spread(speeds);
    let verdict = if spread > 1.2 {
        "the CPUs ran at different speeds (a shared host?): a variant's figures depend on which \
         CPU its threads ran on, so read differences of that size as noise"
    } else {
        "the CPUs ran at the same speed"
    };
    format!(
        "cpu speed ({when}): a fixed loop took {}{more}; the slowest CPU {spread:.2}× the fastest: {verdict}",
        shown.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spread_and_the_words() {
        let s = |cpu, loop_ms| CpuSpeed { cpu, loop_ms };
        assert_eq!(spread(&[]), 1.0);
        assert_eq!(spread(&[s(0, 2.0)]), 1.0);
        assert!((spread(&[s(0, 2.0), s(1, 3.4)]) - 1.7).abs() < 1e-9);
        let slow = describe("before", &[s(0, 2.0), s(1, 3.4)]);
        assert!(
            slow.contains("1.70×") && slow.contains("different speeds"),
            "{slow}"
        );
        let even = describe("after", &[s(0, 2.0), s(1, 2.1)]);
        assert!(even.contains("same speed"), "{even}");
        assert!(describe("before", &[]).contains("not measured"));
    }

    #[test]
    fn the_probe_times_every_allowed_cpu() {
        let speeds = probe();
        // Empty only where the affinity cannot be set; otherwise one positive time per CPU.
        for s in &speeds {
            assert!(s.loop_ms > 0.0 && s.loop_ms.is_finite(), "{s:?}");
        }
        let mut cpus: Vec<usize> = speeds.iter().map(|s| s.cpu).collect();
        cpus.dedup();
        assert_eq!(cpus.len(), speeds.len(), "one entry per CPU");
    }
}
