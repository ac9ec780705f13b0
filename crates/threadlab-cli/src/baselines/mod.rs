//! The naive designs the lab's articles start from (a thread per task, fork-join, a locked
//! work-sharing queue, a dedicated thread), built the way the articles build them, so the lab can
//! show what they cost next to the runtimes. Shared: `demo rows` runs the thread per row, and the
//! doctor's tests (`tests/doctor.rs`) include three of these files to give it their traces.

pub mod dedicated_thread;
pub mod fork_join;
pub mod thread_per_task;
pub mod work_sharing;
