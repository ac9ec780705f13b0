//! The workloads with a scope at every node and one spawned task per child, generic over
//! [`ParScope`]: skynet and the n-queens search. Each child writes its result into its own slot
//! of the parent's array; the scope's end makes the writes visible to the parent.

use super::{ParScope, ScopeKernel};
use std::sync::atomic::{AtomicU64, Ordering};

/// Children per skynet call.
const FAN_OUT: usize = 10;

/// skynet (github.com/atemerev/skynet): the call for numbers `num..num + size` spawns ten
/// children for a tenth each and sums their results; a call for one number returns it. With a
/// million leaves, 111,111 scopes and 1,111,110 spawned tasks of almost no work.
pub fn skynet<S: ParScope>(num: u64, size: u64) -> u64 {
    if size == 1 {
        return num;
    }
    let child = size / FAN_OUT as u64;
    let slots: [AtomicU64; FAN_OUT] = Default::default();
    S::spawn_each(FAN_OUT, |i| {
        let sum = skynet::<S>(num + i as u64 * child, child);
        // Relaxed: the scope's end orders this store before the parent's loads.
        slots[i].store(sum, Ordering::Relaxed);
    });
    // Relaxed: see the store.
    slots.iter().map(|s| s.load(Ordering::Relaxed)).sum()
}

/// The largest board [`nqueens`] takes.
pub const MAX_N: usize = 16;

/// The number of ways to place `n` queens on an `n × n` board, as the Barcelona OpenMP Tasks
/// Suite's `nqueens` computes it (Duran et al., "Barcelona OpenMP Tasks Suite", ICPP 2009): at
/// row `j`, one task per column, each with its own copy of the board, that places its queen and,
/// if no earlier queen attacks it, searches the next row; the parent waits for all (here: a
/// scope) and sums their counts.
pub fn nqueens<S: ParScope>(n: usize) -> u64 {
    assert!((1..=MAX_N).contains(&n), "nqueens: n = {n}");
    search::<S>(n, 0, &[0; MAX_N])
}

fn search<S: ParScope>(n: usize, row: usize, board: &[u8; MAX_N]) -> u64 {
    if row == n {
        return 1;
    }
    let slots: [AtomicU64; MAX_N] = Default::default();
    S::spawn_each(n, |col| {
        let mut mine = *board;
        mine[row] = col as u8;
        if safe(&mine, row) {
            // Relaxed: the scope's end orders this store before the parent's loads.
            slots[col].store(search::<S>(n, row + 1, &mine), Ordering::Relaxed);
        }
    });
    // Relaxed: see the store.
    slots[..n].iter().map(|s| s.load(Ordering::Relaxed)).sum()
}

/// No queen of rows `0..row` attacks the queen of row `row`.
fn safe(board: &[u8; MAX_N], row: usize) -> bool {
    let q = board[row] as isize;
    (0..row).all(|i| {
        let p = board[i] as isize;
        let d = (row - i) as isize;
        p != q && p - d != q && p + d != q
    })
}

/// [`skynet`] over this many leaves, as a [`ScopeKernel`].
pub struct Skynet(pub u64);

impl ScopeKernel for Skynet {
    fn run<S: ParScope>(&self) -> u64 {
        skynet::<S>(0, self.0)
    }
}

/// The [`nqueens`] search, as a [`ScopeKernel`].
pub struct Queens(pub usize);

impl ScopeKernel for Queens {
    fn run<S: ParScope>(&self) -> u64 {
        nqueens::<S>(self.0)
    }
}
