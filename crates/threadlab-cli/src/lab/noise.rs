//! The words for a ratio within the noise of a small shared machine, for the lab's findings: a
//! difference smaller than [`NOISE`] is reported as none.

use crate::fmt::fmt_ratio;

/// Ratios within this fraction of 1 are reported as no difference: the lab's machines are small,
/// shared and noisy, and variants compared in one run still differ by several percent by chance
/// (the report tells readers to take differences below about 10% as noise).
pub const NOISE: f64 = 0.10;

/// True when `ratio` is within [`NOISE`] of 1 (or not a number).
pub fn same(ratio: f64) -> bool {
    !ratio.is_finite() || (ratio - 1.0).abs() <= NOISE
}

/// A phrase for a time that is `ratio` times the time of `than`: `"2.10× as long as than"`,
/// `"77% of the time of than"` when it is shorter, or `"about as long as than (within 10%)"`.
pub fn longer(ratio: f64, than: &str) -> String {
    if same(ratio) {
        format!("about as long as {than} (within {:.0}%)", NOISE * 100.0)
    } else if ratio > 1.0 {
        format!("{} as long as {than}", fmt_ratio(ratio))
    } else {
        format!("{:.0}% of the time of {than}", ratio * 100.0)
    }
}

/// `"no difference on this machine"` or `"a measurable difference"`, for a finding's closing
/// clause.
pub fn difference(ratio: f64) -> &'static str {
    if same(ratio) {
        "no difference on this machine"
    } else {
        "a measurable difference"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_follow_the_ratio() {
        assert_eq!(longer(2.1, "b"), "2.10× as long as b");
        assert_eq!(longer(1.02, "b"), "about as long as b (within 10%)");
        assert_eq!(longer(0.5, "b"), "50% of the time of b");
        assert_eq!(difference(1.09), "no difference on this machine");
        assert_eq!(difference(1.4), "a measurable difference");
        assert!(same(f64::NAN));
    }
}
