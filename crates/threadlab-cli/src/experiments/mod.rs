//! One file per experiment; each is registered in [`crate::lab::registry`].

pub mod alloc;
pub mod chain;
pub mod contention;
pub mod division;
pub mod elastic;
pub mod falseshare;
pub mod go_peer;
pub mod image;
pub mod iter;
pub mod jobs;
pub mod numa;
pub mod observed;
pub mod overhead;
pub mod park_wake;
pub mod pipeline;
pub mod recorder_cost;
pub mod rendezvous;
pub mod verdict;
pub mod workloads;
