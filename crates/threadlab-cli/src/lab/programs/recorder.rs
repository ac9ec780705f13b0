//! What the `overhead` experiment times of the recorder: a call per iteration of a loop, with a
//! recording on or off around it (an empty call, a hook with recording off, an event in the
//! flight recorder or a full recording), and reads of the timestamp counter, the floor of any
//! timestamped event.

use std::hint::black_box;
use std::time::Instant;
use threadlab::trace::{self, Mode};

/// ns per call of `f` over `n` calls, in one run; `mode` records around it.
pub fn per_call(n: u64, mode: Option<Mode>, f: impl Fn(u64)) -> Result<f64, String> {
    let rec = match mode {
        Some(m) => Some(trace::try_start(m).map_err(|e| e.to_string())?),
        None => None,
    };
    let t = Instant::now();
    for i in 0..n {
        f(black_box(i));
    }
    let ns = t.elapsed().as_nanos() as f64 / n as f64;
    if let Some(rec) = rec {
        let kept = rec.stop();
        if mode == Some(Mode::Full) && (kept.event_count() as u64) < n {
            return Err(format!(
                "recorder: {} of {n} events kept in a full recording",
                kept.event_count()
            ));
        }
    }
    Ok(ns)
}

/// ns per read of the timestamp counter over `n` reads (x86-64), the floor of a timestamped
/// event.
#[cfg(target_arch = "x86_64")]
pub fn rdtsc_ns(n: u64) -> f64 {
    let t = Instant::now();
    let mut acc = 0u64;
    for _ in 0..n {
        // SAFETY: `rdtsc` has no preconditions on x86-64.
        acc = acc.wrapping_add(unsafe { core::arch::x86_64::_rdtsc() });
    }
    black_box(acc);
    t.elapsed().as_nanos() as f64 / n as f64
}
