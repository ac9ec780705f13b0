//! One file per experiment, and the [`registry`] that lists them. Adding one: its file here, a
//! `pub mod` line and a line in [`registry`] (see `CONTRIBUTING.md`). An experiment with parts
//! of its own is a folder: `image/` (with `report.rs`, its tables and chart) and `workloads/`
//! (with `kernels.rs`, its programs on their inputs). The programs the experiments run are
//! `crate::lab::programs`, the other runtimes `crate::lab::peers`; what the lab computes from a
//! recorded run beside the doctor (where the workers spent their CPU) is `crate::lab::worker_time`.

use crate::lab::Experiment;

pub mod alloc;
pub mod contention;
pub mod division;
pub mod elastic;
pub mod falseshare;
pub mod image;
pub mod iter;
pub mod jobs;
pub mod numa;
pub mod observed;
pub mod overhead;
pub mod pipeline;
pub mod rendezvous;
pub mod workloads;

/// Every experiment, in the order the lab runs them. Add new ones here.
pub fn registry() -> Vec<&'static dyn Experiment> {
    vec![
        &image::Image,
        &jobs::Jobs,
        &contention::Contention,
        &overhead::Overhead,
        &rendezvous::Rendezvous,
        &division::Division,
        &numa::Numa,
        &alloc::Alloc,
        &falseshare::FalseShare,
        &observed::Observed,
        &workloads::Workloads,
        &iter::Iter,
        &pipeline::Pipeline,
        &elastic::Elastic,
    ]
}

#[cfg(test)]
mod tests {
    #[test]
    fn registry_names_are_unique_lowercase_words() {
        let names: Vec<&str> = super::registry().iter().map(|e| e.name()).collect();
        for n in &names {
            assert!(n.chars().all(|c| c.is_ascii_lowercase()), "{n}");
            assert_eq!(names.iter().filter(|m| *m == n).count(), 1, "{n} unique");
        }
    }
}
