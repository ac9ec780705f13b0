//! The `division` experiment's workload (*Multithreading and the Memory Subsystem*): binary searches in packets of
//! [`PACKET`] lookups, dispatched from one thread with `Pool::spawn_on` either round-robin, each
//! worker searching the whole sorted array, or to the worker that owns the part of the array the
//! lookups fall into, each searching only its part.

use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};
use threadlab::Pool;

/// Lookups per packet, as in the article.
pub const PACKET: usize = 128;

/// The sorted array (`keys[i] = 2i`, so half of the lookups miss) and each worker's part.
pub struct Sorted {
    pub keys: Arc<Vec<u32>>,
    /// Worker `k` owns `keys[bounds[k]..bounds[k + 1]]`: the elements `i` with `i·n/len = k`.
    pub bounds: Arc<Vec<usize>>,
}

impl Sorted {
    pub fn new(bytes: usize, workers: usize) -> Sorted {
        let len = bytes / std::mem::size_of::<u32>();
        let keys: Vec<u32> = (0..len as u32).map(|i| 2 * i).collect();
        let bounds = (0..=workers).map(|k| (k * len).div_ceil(workers)).collect();
        Sorted {
            keys: Arc::new(keys),
            bounds: Arc::new(bounds),
        }
    }

    /// The worker whose part holds the lower bound of `v` (`v / 2` is its index, give or take
    /// one at a part's edge, where the owner's answer is its part's end: the same position).
    pub fn owner(&self, v: u32) -> usize {
        let n = self.bounds.len() - 1;
        let i = (v / 2) as usize;
        (i * n / self.keys.len()).min(n - 1)
    }
}

/// The index of the first key not below `v` within `part`, plus `offset`.
pub fn lookup(part: &[u32], offset: usize, v: u32) -> usize {
    offset + part.partition_point(|&k| k < v)
}

/// One run: `packets` packets dispatched from this thread; returns each packet's processing
/// time in nanoseconds, as measured by the worker that processed it.
pub fn run_once(
    pool: &Pool,
    data: &Sorted,
    divide: bool,
    packets: usize,
    seed: u64,
) -> Result<Vec<u64>, String> {
    let n = pool.current_num_threads();
    let max = 2 * data.keys.len() as u64;
    let (tx, rx) = mpsc::channel::<u64>();
    let send = |worker: usize, packet: Vec<u32>| -> Result<(), String> {
        let (keys, bounds, tx) = (data.keys.clone(), data.bounds.clone(), tx.clone());
        pool.spawn_on(worker, move || {
            let start = Instant::now();
            let (part, offset) = if divide {
                (&keys[bounds[worker]..bounds[worker + 1]], bounds[worker])
            } else {
                (&keys[..], 0)
            };
            let mut acc = 0usize;
            for &v in &packet {
                acc = acc.wrapping_add(lookup(part, offset, v));
            }
            let ns = start.elapsed().as_nanos() as u64;
            std::hint::black_box(acc);
            let _ = tx.send(ns);
        })
        .map_err(|e| e.to_string())
    };
    // Uniform lookups over the array's range.
    let mut random = super::xorshift(seed);
    let mut next = || (random() % max) as u32;
    let mut sent = 0;
    if divide {
        let mut pending: Vec<Vec<u32>> = (0..n).map(|_| Vec::with_capacity(PACKET)).collect();
        while sent < packets {
            let v = next();
            let k = data.owner(v);
            pending[k].push(v);
            if pending[k].len() == PACKET {
                send(
                    k,
                    std::mem::replace(&mut pending[k], Vec::with_capacity(PACKET)),
                )?;
                sent += 1;
            }
        }
    } else {
        while sent < packets {
            send(sent % n, (0..PACKET).map(|_| next()).collect())?;
            sent += 1;
        }
    }
    drop(tx);
    // Every job holds a sender until it finished: the channel ends after the last packet.
    let deadline = Instant::now() + Duration::from_secs(600);
    let mut times = Vec::with_capacity(packets);
    while times.len() < packets {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(ns) => times.push(ns),
            Err(_) => {
                return Err(format!(
                    "only {} of {packets} packets were processed within 10 minutes",
                    times.len()
                ))
            }
        }
    }
    Ok(times)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owner_answers_like_a_search_of_the_whole_array() {
        for workers in [1, 2, 3, 5] {
            let data = Sorted::new(4000, workers);
            let len = data.keys.len();
            for v in 0..(2 * len as u32 + 3) {
                let k = data.owner(v.min(2 * len as u32 - 1));
                let (lo, hi) = (data.bounds[k], data.bounds[k + 1]);
                let whole = lookup(&data.keys, 0, v);
                if v < 2 * len as u32 {
                    assert_eq!(lookup(&data.keys[lo..hi], lo, v), whole, "v {v}, k {k}");
                }
            }
            assert_eq!(data.bounds[0], 0);
            assert_eq!(data.bounds[workers], len);
        }
    }
}
