//! threadlab: a work-stealing task runtime that shows where its threads' time goes.
//!
//! The rooms, one mechanism each:
//! - [`deque`]: the Chase–Lev work-stealing deque each worker owns.
//! - [`injector`]: the queue for work submitted from outside the pool.
#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]
#![warn(missing_docs)]

pub(crate) mod loom;

pub mod deque;
pub mod injector;
