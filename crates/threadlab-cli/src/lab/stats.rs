//! The lab's statistics: the median every figure is (the lab's machines are small, shared and
//! noisy, so a figure is the median of its rounds, and variants are compared as ratios of medians
//! taken in the same run), percentiles of latencies, and the geometric mean of ratios.

/// The median of `xs` (mean of the middle two for even lengths); NaN for an empty slice.
pub fn median(xs: &mut [f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// The `p`-th percentile (0–100) of `xs` by the nearest-rank method; NaN for an empty slice.
pub fn percentile(xs: &mut [f64], p: f64) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * xs.len() as f64).ceil() as usize;
    xs[rank.clamp(1, xs.len()) - 1]
}

/// The geometric mean of the finite, positive values of `xs` (NaN when there are none): the
/// mean of ratios, where 2× and 0.5× cancel.
pub fn geomean(xs: impl IntoIterator<Item = f64>) -> f64 {
    let (sum, n) = xs
        .into_iter()
        .filter(|x| x.is_finite() && *x > 0.0)
        .fold((0.0, 0), |(s, n), x| (s + x.ln(), n + 1));
    if n == 0 {
        f64::NAN
    } else {
        (sum / n as f64).exp()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_percentiles() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
        let mut xs: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&mut xs, 50.0), 50.0);
        assert_eq!(percentile(&mut xs, 99.0), 99.0);
        assert_eq!(percentile(&mut xs, 100.0), 100.0);
    }

    #[test]
    fn a_geometric_mean_of_ratios_cancels_and_skips_what_is_not_a_ratio() {
        assert!((geomean([2.0, 0.5]) - 1.0).abs() < 1e-12);
        assert!((geomean([4.0, f64::NAN, 1.0, 0.0]) - 2.0).abs() < 1e-12);
        assert!(geomean([f64::NAN]).is_nan());
    }
}
