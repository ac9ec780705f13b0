//! The physical bounds of the lab's figures, checked for every row before the report prints it
//! (the doctor's figures are checked by `threadlab_doctor::bounds_violations`):
//! - no figure is NaN or infinite (a figure the run could not measure is left out, not 0);
//! - a share or fraction lies in 0–100% (unit `%`) or 0–1 (unit `ratio`);
//! - a speed-up over one thread is at most the threads the row ran on: the same work on *n*
//!   CPUs cannot finish more than *n* times sooner, so a larger figure means the baseline was
//!   not the same kernel, or noise.
//!
//! A row outside its bound is a bug at its cause; the lab prints it as a note of its experiment
//! so that it is seen, and the lab's bounds test fails on it.

use super::ctx::Row;

/// Slack for figures that are ratios of two measured times: 5% of noise either way.
const NOISE: f64 = 1.05;

/// Every row of `rows` outside its physical bound, one sentence each (a `speedup_vs_serial` of
/// 3.59 on 2 threads is one; the unit test below shows each bound).
pub fn row_violations(rows: &[Row]) -> Vec<String> {
    rows.iter().filter_map(violation).collect()
}

fn violation(r: &Row) -> Option<String> {
    let what = || {
        format!(
            "{} {} ({}, {} threads)",
            r.variant, r.metric, r.config, r.threads
        )
    };
    let v = r.value;
    if !v.is_finite() {
        return Some(format!("{} = {v} is not a measurement", what()));
    }
    let share = r.metric.contains("share") || r.metric.contains("fraction");
    // A share in percent lies in 0–100; a slowdown in percent (`spawn_recording_slowdown`)
    // has no upper bound.
    if share && r.unit == "%" && !(0.0..=100.0).contains(&v) {
        return Some(format!(
            "{} = {v}% is not a share between 0 and 100%",
            what()
        ));
    }
    if share && r.unit == "ratio" && !(0.0..=NOISE).contains(&v) {
        return Some(format!("{} = {v} is not a share between 0 and 1", what()));
    }
    if r.metric.contains("speedup") && r.threads > 0 && v > r.threads as f64 * NOISE {
        return Some(format!(
            "{} = {v:.2}× is more than its {} thread(s) can give",
            what(),
            r.threads
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(metric: &str, unit: &str, threads: usize, value: f64) -> Row {
        Row {
            experiment: "x".into(),
            variant: "v".into(),
            config: "c".into(),
            threads,
            metric: metric.into(),
            value,
            unit: unit.into(),
        }
    }

    #[test]
    fn each_bound_names_the_row_outside_it() {
        let bad = [
            row("speedup_vs_serial", "x", 2, 3.59),
            row("park_wake_share", "%", 2, 101.0),
            row("fraction_of_bandwidth_bound", "ratio", 2, 1.4),
            row("seconds", "s", 1, f64::NAN),
            row("seconds", "s", 1, f64::INFINITY),
        ];
        for r in &bad {
            assert!(violation(r).is_some(), "{r:?} passed");
        }
        let good = [
            row("speedup_vs_serial", "x", 2, 1.9),
            row("park_wake_share", "%", 2, 25.8),
            row("fraction_of_bandwidth_bound", "ratio", 2, 0.8),
            row("seconds", "s", 1, 0.002),
            row("spawn_recording_slowdown", "%", 1, 214.0),
        ];
        assert!(row_violations(&good).is_empty());
    }
}
