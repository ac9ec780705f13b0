//! The naive designs the seeds start from, built the way the seeds build them, so the lab can
//! show what they cost next to the runtimes.

pub mod dedicated_thread;
pub mod fork_join;
pub mod thread_per_task;
pub mod work_sharing;
