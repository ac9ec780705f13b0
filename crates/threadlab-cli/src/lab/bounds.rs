//! The physical bounds of the lab's figures, checked for every row before the report prints it
//! (the doctor's figures are checked by `threadlab_doctor::bounds_violations`):
//! - no figure is NaN or infinite (a figure the run could not measure is left out, not 0);
//! - a share or fraction lies in 0–100% (unit `%`) or 0–1 (unit `ratio`);
//! - a speed-up over one thread is at most the threads the row ran on: the same work on *n*
//!   CPUs cannot finish more than *n* times sooner, so a larger figure means the baseline was
//!   not the same kernel, or noise — unless the experiment measured, in the same run, that the
//!   machine itself gives *n* threads more than *n* times one thread's throughput (a
//!   [`MEMORY_SCALING`] row: the kernel run flat out on *n* threads, no runtime in it, over the
//!   one-thread time), which then is the bound.
//!
//! A row outside its bound is a bug at its cause; the lab prints it as a note of its experiment
//! so that it is seen, and the lab's bounds test fails on it.

use super::ctx::Row;

/// Slack for figures that are ratios of two measured times: 5% of noise either way.
const NOISE: f64 = 1.05;

/// The metric of a row that says how much more work the machine itself does with the row's
/// threads running the kernel flat out than with one (no runtime in it); speed-ups of the same
/// experiment on as many threads may reach it.
pub const MEMORY_SCALING: &str = "memory_scaling";

/// Every row of `rows` outside its physical bound, one sentence each (a `speedup_vs_serial` of
/// 3.59 on 2 threads is one; the unit test below shows each bound).
pub fn row_violations(rows: &[Row]) -> Vec<String> {
    rows.iter()
        .filter_map(|r| {
            let machine = rows
                .iter()
                .filter(|m| {
                    m.metric == MEMORY_SCALING
                        && m.experiment == r.experiment
                        && m.threads == r.threads
                })
                .map(|m| m.value)
                .fold(0.0, f64::max);
            violation(r, machine)
        })
        .collect()
}

/// `machine`: the measured memory scaling on the row's threads (0 when none was measured).
fn violation(r: &Row, machine: f64) -> Option<String> {
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
    let most = (r.threads as f64).max(machine) * NOISE;
    if r.metric.contains("speedup") && r.threads > 0 && v > most {
        return Some(format!(
            "{} = {v:.2}× is more than its {} thread(s) can give{}",
            what(),
            r.threads,
            if machine > r.threads as f64 {
                format!(" (the machine's memory scales {machine:.2}× on as many)")
            } else {
                String::new()
            }
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
            assert!(violation(r, 0.0).is_some(), "{r:?} passed");
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

    /// A speed-up past its threads passes only beside a measured memory scaling of the same
    /// experiment on as many threads that covers it.
    #[test]
    fn a_measured_memory_scaling_raises_the_speed_up_bound_and_nothing_else() {
        let fast = row("speedup_vs_serial", "x", 2, 2.3);
        assert_eq!(row_violations(std::slice::from_ref(&fast)).len(), 1);
        let scaling = row(MEMORY_SCALING, "x", 2, 2.2);
        assert!(row_violations(&[fast.clone(), scaling.clone()]).is_empty());
        // Not enough scaling, another thread count, another experiment: still out of bounds.
        let small = row(MEMORY_SCALING, "x", 2, 2.0);
        assert_eq!(row_violations(&[fast.clone(), small]).len(), 1);
        let other_threads = row(MEMORY_SCALING, "x", 4, 3.0);
        assert_eq!(row_violations(&[fast.clone(), other_threads]).len(), 1);
        let mut elsewhere = scaling.clone();
        elsewhere.experiment = "y".into();
        assert_eq!(row_violations(&[fast.clone(), elsewhere]).len(), 1);
        let way_past = row("speedup_vs_serial", "x", 2, 3.59);
        let v = row_violations(&[way_past, scaling]);
        assert!(
            v.len() == 1 && v[0].contains("memory scales 2.20×"),
            "{v:?}"
        );
    }
}
