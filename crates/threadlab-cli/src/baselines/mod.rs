//! The naive designs the lab's articles start from (a thread per task, fork-join, a locked
//! work-sharing queue, a dedicated thread), built the way the articles build them, so the lab can
//! show what they cost next to the runtimes.

pub mod dedicated_thread;
pub mod fork_join;
pub mod thread_per_task;
pub mod work_sharing;
