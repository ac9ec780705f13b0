//! Summaries of durations: count, total, mean, median, p90, p99, max (nearest-rank
//! percentiles, as in Hyndman & Fan's definition 1, over the values, or over a histogram's
//! buckets when only the histogram is known), and the standard deviation.

use threadlab_trace::{Durations, DURATION_BUCKETS};

/// Count, total and distribution of a set of durations, in nanoseconds.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Summary {
    /// How many.
    pub count: u64,
    /// Their sum (saturating).
    pub total_ns: u64,
    /// Their mean.
    pub mean_ns: f64,
    /// Their median (nearest rank).
    pub median_ns: u64,
    /// 90th percentile (nearest rank).
    pub p90_ns: u64,
    /// 99th percentile (nearest rank).
    pub p99_ns: u64,
    /// The largest.
    pub max_ns: u64,
    /// Standard deviation (population).
    pub stddev_ns: f64,
}

impl Summary {
    /// Summarizes `values` (any order).
    ///
    /// ```
    /// let s = threadlab_doctor::Summary::of(vec![3, 1, 2, 10]);
    /// assert_eq!((s.count, s.total_ns, s.median_ns, s.max_ns), (4, 16, 2, 10));
    /// ```
    pub fn of(mut values: Vec<u64>) -> Summary {
        if values.is_empty() {
            return Summary::default();
        }
        values.sort_unstable();
        let count = values.len() as u64;
        let total_ns = saturating_sum(values.iter().copied());
        let mean_ns = values.iter().map(|&v| v as f64).sum::<f64>() / count as f64;
        let var = values
            .iter()
            .map(|&v| (v as f64 - mean_ns).powi(2))
            .sum::<f64>()
            / count as f64;
        Summary {
            count,
            total_ns,
            mean_ns,
            median_ns: percentile(&values, 50.0),
            p90_ns: percentile(&values, 90.0),
            p99_ns: percentile(&values, 99.0),
            max_ns: values[values.len() - 1],
            stddev_ns: var.sqrt(),
        }
    }
}

impl Summary {
    /// Summarizes a set of durations kept as a histogram ([`Durations`]): the count, total,
    /// mean and maximum as they are; the percentiles read from the histogram (within a
    /// bucket, 19%); the standard deviation over the buckets' middles.
    ///
    /// ```
    /// let d = threadlab_trace::Durations::of([1_000, 1_000, 1_000, 9_000]);
    /// let s = threadlab_doctor::Summary::of_durations(&d);
    /// assert_eq!((s.count, s.total_ns, s.max_ns), (4, 12_000, 9_000));
    /// assert!((1_000..1_190).contains(&s.median_ns));
    /// ```
    pub fn of_durations(d: &Durations) -> Summary {
        if d.count == 0 {
            return Summary::default();
        }
        let mean_ns = d.mean_ns();
        let (mut n, mut sq) = (0.0f64, 0.0f64);
        for (b, &c) in d.hist.iter().enumerate().take(DURATION_BUCKETS) {
            if c == 0 {
                continue;
            }
            let low = Durations::bucket_low(b);
            let high = if b + 1 < DURATION_BUCKETS {
                Durations::bucket_low(b + 1) - 1
            } else {
                d.max_ns
            };
            let mid = (low as f64 + high.min(d.max_ns).max(low) as f64) / 2.0;
            n += c as f64;
            sq += c as f64 * (mid - mean_ns).powi(2);
        }
        Summary {
            count: d.count,
            total_ns: d.total_ns,
            mean_ns,
            median_ns: d.quantile(0.5),
            p90_ns: d.quantile(0.9),
            p99_ns: d.quantile(0.99),
            max_ns: d.max_ns,
            stddev_ns: if n > 0.0 { (sq / n).sqrt() } else { 0.0 },
        }
    }
}

/// The sum of `values`, saturating at `u64::MAX` (a corrupt or hostile trace may hold any
/// figure; a sum must not wrap or panic).
pub(crate) fn saturating_sum(values: impl IntoIterator<Item = u64>) -> u64 {
    values.into_iter().fold(0u64, u64::saturating_add)
}

/// The `p`-th percentile (0–100) of sorted `values` by nearest rank; 0 when empty.
pub(crate) fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// `a / b`, or 0 when `b` is 0 (figures of empty traces read as zero, never NaN).
pub(crate) fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 && a.is_finite() {
        a / b
    } else {
        0.0
    }
}

/// Median of `values` (nearest rank), 0 when empty.
pub(crate) fn median(mut values: Vec<u64>) -> u64 {
    values.sort_unstable();
    percentile(&values, 50.0)
}

/// Formats nanoseconds with a unit that keeps three significant digits (`812 ns`, `12.3 µs`,
/// `94.86 ms`, `1.234 s`).
///
/// ```
/// assert_eq!(threadlab_doctor::fmt_ns(94_860_000), "94.86 ms");
/// ```
pub fn fmt_ns(ns: u64) -> String {
    let f = ns as f64;
    if ns >= 1_000_000_000 {
        format!("{:.3} s", f / 1e9)
    } else if ns >= 1_000_000 {
        format!("{:.2} ms", f / 1e6)
    } else if ns >= 1_000 {
        format!("{:.1} µs", f / 1e3)
    } else {
        format!("{ns} ns")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_by_nearest_rank() {
        let v: Vec<u64> = (1..=100).collect();
        let s = Summary::of(v);
        assert_eq!(
            (s.median_ns, s.p90_ns, s.p99_ns, s.max_ns),
            (50, 90, 99, 100)
        );
        assert_eq!(s.total_ns, 5050);
        assert_eq!(Summary::of(vec![]), Summary::default());
        assert_eq!(Summary::of(vec![u64::MAX, 5]).total_ns, u64::MAX);
        assert_eq!(ratio(1.0, 0.0), 0.0);
        assert_eq!(median(vec![5, 1, 3]), 3);
    }
}
