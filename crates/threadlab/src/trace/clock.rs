//! Timestamps for the recorder.
//!
//! On x86-64 the hot path reads the CPU's time-stamp counter (`rdtsc`, invariant on any CPU that
//! reports `constant_tsc`/`nonstop_tsc`, which is what Tracy relies on too); elsewhere it reads
//! `CLOCK_MONOTONIC`. Raw ticks are converted to nanoseconds only at export, from a pair of
//! (ticks, `CLOCK_MONOTONIC`) samples taken at the start and the end of a recording, or from a
//! one-off 10 ms calibration when the recording was too short to calibrate itself.

use std::sync::OnceLock;

/// Reads the raw clock: CPU ticks on x86-64, nanoseconds of `CLOCK_MONOTONIC` elsewhere.
#[inline(always)]
pub(crate) fn now() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: `rdtsc` has no preconditions; every x86-64 CPU implements it.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        monotonic_ns()
    }
}

/// Nanoseconds of `CLOCK_MONOTONIC`.
#[cfg(unix)]
pub(crate) fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec and CLOCK_MONOTONIC is always supported.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Elsewhere: nanoseconds of `std::time::Instant` since the first call (monotonic, as the
/// recorder needs; not comparable with other processes' clocks).
#[cfg(not(unix))]
pub(crate) fn monotonic_ns() -> u64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_nanos() as u64
        + 1
}

/// A pair of readings of the raw clock and of `CLOCK_MONOTONIC`, taken back to back.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Anchor {
    pub(crate) raw: u64,
    pub(crate) ns: u64,
}

impl Anchor {
    pub(crate) fn take() -> Anchor {
        let raw = now();
        let ns = monotonic_ns();
        Anchor { raw, ns }
    }
}

/// Converts raw clock readings to nanoseconds since the start anchor.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Converter {
    start: Anchor,
    /// Nanoseconds per raw tick.
    ns_per_tick: f64,
}

/// Pairs shorter than this (in ns) calibrate badly; the one-off calibration is used instead.
const MIN_CALIBRATION_NS: u64 = 50_000_000;

fn calibrated_ns_per_tick() -> f64 {
    static ONCE: OnceLock<f64> = OnceLock::new();
    *ONCE.get_or_init(|| {
        if cfg!(not(target_arch = "x86_64")) {
            return 1.0;
        }
        let a = Anchor::take();
        std::thread::sleep(std::time::Duration::from_millis(10));
        let b = Anchor::take();
        ratio(a, b)
    })
}

fn ratio(a: Anchor, b: Anchor) -> f64 {
    let ticks = b.raw.saturating_sub(a.raw).max(1);
    b.ns.saturating_sub(a.ns) as f64 / ticks as f64
}

impl Converter {
    /// Makes sure the one-off calibration has run (call it at `start`, off the hot path).
    pub(crate) fn warm_up() {
        calibrated_ns_per_tick();
    }

    pub(crate) fn new(start: Anchor, end: Anchor) -> Converter {
        let ns_per_tick = if end.ns.saturating_sub(start.ns) >= MIN_CALIBRATION_NS {
            ratio(start, end)
        } else {
            calibrated_ns_per_tick()
        };
        Converter { start, ns_per_tick }
    }

    /// Nanoseconds from the start anchor to `raw` (0 for readings taken before it).
    pub(crate) fn ns_since_start(&self, raw: u64) -> u64 {
        (raw.saturating_sub(self.start.raw) as f64 * self.ns_per_tick) as u64
    }
}
