//! The traits that give slices, `Vec`s and ranges their parallel methods: `use
//! threadlab::prelude::*;` where Rayon code had `use rayon::prelude::*;`.
//!
//! ```
//! use threadlab::prelude::*;
//! let mut v: Vec<u32> = (0u32..100).into_par_iter().map(|x| (x * 37) % 100).collect();
//! v.par_sort_unstable();
//! assert_eq!(v, (0..100).collect::<Vec<u32>>());
//! ```

pub use crate::iter::{
    FromParallelIterator, IndexedParallelIterator, IntoParallelIterator, IntoParallelRefIterator,
    IntoParallelRefMutIterator, ParallelBridge, ParallelDrainFull, ParallelDrainRange,
    ParallelExtend, ParallelIterator, ParallelSlice, ParallelSliceMut, ParallelString,
};
