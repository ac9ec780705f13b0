//! The engine's traits, for writing a source of one's own (Rayon's `iter::plumbing`).
//!
//! A source is a [`Producer`]: it knows how many *positions* it has, how to split them at a
//! position, and how to hand over its first `n` positions as a plain sequential iterator.
//! A parallel iterator names its producer (`ParallelIterator::Producer`) and makes it
//! (`into_producer`); the engine (heartbeat splitting, see `drive.rs`) does the rest.
//!
//! ```
//! use threadlab::iter::plumbing::Producer;
//! use threadlab::prelude::*;
//!
//! /// The even numbers below `end`, from `start` (which is even).
//! struct Evens { start: u64, end: u64 }
//!
//! impl Producer for Evens {
//!     type Item = u64;
//!     type Iter<'s> = std::iter::StepBy<std::ops::Range<u64>>;
//!     fn len(&self) -> usize { ((self.end.saturating_sub(self.start) + 1) / 2) as usize }
//!     fn split_at(self, mid: usize) -> (Self, Self) {
//!         let m = self.start + 2 * mid as u64;
//!         (Evens { start: self.start, end: m }, Evens { start: m, end: self.end })
//!     }
//!     fn take(&mut self, n: usize) -> Self::Iter<'_> {
//!         let m = self.start + 2 * n as u64;
//!         let block = (self.start..m).step_by(2);
//!         self.start = m;
//!         block
//!     }
//! }
//!
//! impl ParallelIterator for Evens {
//!     type Item = u64;
//!     type Producer = Self;
//!     fn into_producer(self) -> Self { self }
//! }
//!
//! assert_eq!(Evens { start: 0, end: 10 }.map(|x| x / 2).sum::<u64>(), 10);
//! ```

pub use super::drive::Producer;
