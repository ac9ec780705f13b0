//! One file per experiment; each is registered in [`crate::lab::registry`].

pub mod chain;
pub mod image;
pub mod jobs;
pub mod overhead;
pub mod park_wake;
pub mod recorder_cost;
pub mod rendezvous;
