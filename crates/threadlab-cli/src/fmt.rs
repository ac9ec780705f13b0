//! How numbers are written: durations, ratios, byte sizes and counts, each in one place with one
//! precision, for the lab's tables and findings and `topology`. Counts are the stress run's
//! `group_thousands` (it prints its tallies with it), used from there. (The words for a ratio
//! within the noise are the lab's, `lab/noise.rs`.)
//!
//! Figures in `results.json` are raw numbers; these are only for tables, findings and notes.

/// Seconds with a unit that keeps three significant digits readable (`1.234 s`, `12.35 ms`,
/// `4.20 µs`, `35.1 ns`); `-` for a figure that is not a number.
pub fn fmt_secs(s: f64) -> String {
    if !s.is_finite() {
        "-".into()
    } else if s >= 1.0 {
        format!("{s:.3} s")
    } else if s >= 1e-3 {
        format!("{:.2} ms", s * 1e3)
    } else if s >= 1e-6 {
        format!("{:.2} µs", s * 1e6)
    } else {
        format!("{:.1} ns", s * 1e9)
    }
}

/// Nanoseconds without a unit, compactly (`12.3`, `1,234`, `45,678`).
pub fn fmt_ns(ns: f64) -> String {
    if !ns.is_finite() {
        "-".into()
    } else if ns < 100.0 {
        format!("{ns:.1}")
    } else {
        group_thousands(ns.round() as u64)
    }
}

/// A count with thousands separated (`1,234,567`), from the stress crate: one home for both.
pub use threadlab_stress::fmt::group_thousands;

/// A ratio: two decimals below 10 (`1.07×`, `0.42×`), none above (`23×`).
pub fn fmt_ratio(r: f64) -> String {
    if !r.is_finite() {
        "-".into()
    } else if r >= 10.0 {
        format!("{r:.0}×")
    } else {
        format!("{r:.2}×")
    }
}

/// A byte size in binary units (`512 B`, `48 KiB`, `1.50 MiB`, `2.0 GiB`).
pub fn fmt_bytes(b: u64) -> String {
    let b = b as f64;
    if b >= (1u64 << 30) as f64 {
        format!("{:.1} GiB", b / (1u64 << 30) as f64)
    } else if b >= (1 << 20) as f64 {
        format!("{:.2} MiB", b / (1 << 20) as f64)
    } else if b >= 1024.0 {
        format!("{:.0} KiB", b / 1024.0)
    } else {
        format!("{b:.0} B")
    }
}

/// A small per-item count (allocations or wake-ups per message): `0`, `0.0012`, `1.50`.
pub fn fmt_small(x: f64) -> String {
    if !x.is_finite() {
        "-".into()
    } else if x == 0.0 {
        "0".into()
    } else if x < 0.01 {
        format!("{x:.4}")
    } else {
        format!("{x:.2}")
    }
}

/// `"1 thread"`, `"3 threads"`.
pub fn plural(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_precision_per_kind() {
        assert_eq!(fmt_secs(1.5e-3), "1.50 ms");
        assert_eq!(fmt_secs(f64::NAN), "-");
        assert_eq!(fmt_ns(12.34), "12.3");
        assert_eq!(fmt_ns(45_678.2), "45,678");
        assert_eq!(fmt_ratio(23.4), "23×");
        assert_eq!(fmt_ratio(3.456), "3.46×");
        assert_eq!(fmt_ratio(0.421), "0.42×");
        assert_eq!(fmt_bytes(48 << 10), "48 KiB");
        assert_eq!(fmt_small(0.0012), "0.0012");
        assert_eq!(plural(1, "thread"), "1 thread");
        assert_eq!(plural(3, "thread"), "3 threads");
    }
}
