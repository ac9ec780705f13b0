//! One file per experiment; each is registered in [`crate::lab::registry`].

pub mod chain;
pub mod contention;
pub mod image;
pub mod jobs;
pub mod overhead;
pub mod recorder_cost;
