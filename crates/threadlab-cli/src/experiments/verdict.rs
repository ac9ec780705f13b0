//! How the memory experiments (`division`, `numa`, `alloc`, `falseshare`) put a measured ratio
//! into words: the ratio itself, and "no difference on this machine" when it is within the noise
//! of a small shared machine.

/// Ratios within this fraction of 1 are reported as no difference: the lab's machines are small,
/// shared and noisy, and variants compared in one run still differ by several percent by chance
/// (the report tells readers to take differences below about 10% as noise).
pub const NOISE: f64 = 0.10;

/// A ratio with two decimals below 10 (`1.07×`), none above (`23×`).
pub fn ratio(r: f64) -> String {
    if !r.is_finite() {
        "-".into()
    } else if r >= 10.0 {
        format!("{r:.0}×")
    } else {
        format!("{r:.2}×")
    }
}

/// True when `ratio` is within [`NOISE`] of 1 (or not a number).
pub fn same(ratio: f64) -> bool {
    !ratio.is_finite() || (ratio - 1.0).abs() <= NOISE
}

/// A phrase for a time that is `ratio` times the time of `than`: `"2.1× as long as than"`,
/// `"77% of the time of than"` when it is shorter, or `"about as long as than (within 10%)"`.
pub fn longer(ratio: f64, than: &str) -> String {
    if same(ratio) {
        format!("about as long as {than} (within {:.0}%)", NOISE * 100.0)
    } else if ratio > 1.0 {
        format!("{} as long as {than}", self::ratio(ratio))
    } else {
        format!("{:.0}% of the time of {than}", ratio * 100.0)
    }
}

/// `"no difference on this machine"` or `"a difference"`, for a finding's closing clause.
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
        assert_eq!(ratio(23.4), "23×");
        assert_eq!(longer(0.5, "b"), "50% of the time of b");
        assert_eq!(difference(1.09), "no difference on this machine");
        assert_eq!(difference(1.4), "a measurable difference");
        assert!(same(f64::NAN));
    }
}
