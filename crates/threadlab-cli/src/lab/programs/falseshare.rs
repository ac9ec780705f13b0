//! The `falseshare` experiment's workload: every worker of a pool bumps its own counter, with
//! the counters packed in one cache line, padded to a line each, or (the reference) all one
//! counter; and how much of the run the workers really spent counting at the same time.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;
use threadlab::{CachePadded, Pool};

/// Eight counters in one 64-byte cache line.
#[repr(align(64))]
#[derive(Default)]
pub struct Line([AtomicU64; 8]);

/// The counters of one run, laid out as the variant says.
pub enum Counters {
    Packed(Vec<Line>),
    Padded(Vec<CachePadded<AtomicU64>>),
    Shared(CachePadded<AtomicU64>),
}

impl Counters {
    pub fn new(variant: &str, n: usize) -> Counters {
        match variant {
            "packed" => Counters::Packed((0..n.div_ceil(8)).map(|_| Line::default()).collect()),
            "padded" => Counters::Padded((0..n).map(|_| CachePadded::default()).collect()),
            _ => Counters::Shared(CachePadded::default()),
        }
    }

    pub fn get(&self, k: usize) -> &AtomicU64 {
        match self {
            Counters::Packed(lines) => &lines[k / 8].0[k % 8],
            Counters::Padded(v) => &v[k],
            Counters::Shared(c) => c,
        }
    }
}

/// How a worker bumps its counter.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Bump {
    /// A relaxed load and a store: what `counts[k]++` on a shared array compiles to.
    LoadStore,
    /// A relaxed `fetch_add` (a locked read-modify-write on x86): a statistics counter.
    FetchAdd,
}

pub const BUMPS: [(Bump, &str); 2] = [
    (Bump::LoadStore, "load+store"),
    (Bump::FetchAdd, "fetch_add"),
];

/// Every worker adds `iters` to its own counter, one at a time; checks the totals. Returns the
/// fraction of the run during which all workers were counting at once (1.0 = fully parallel).
pub fn run_once(pool: &Pool, counters: &Counters, bump: Bump, iters: u64) -> Result<f64, String> {
    let n = pool.current_num_threads();
    for k in 0..n {
        // Relaxed: reset before the loop, which publishes it to the workers.
        counters.get(k).store(0, Ordering::Relaxed);
    }
    let spans = std::sync::Mutex::new(Vec::with_capacity(n));
    pool.install(|| {
        threadlab::for_each_static(0..n, |k| {
            let c = counters.get(k);
            let start = Instant::now();
            for _ in 0..iters {
                // Relaxed (both): only this worker writes this counter; the loop's end
                // publishes it.
                match bump {
                    Bump::LoadStore => c.store(c.load(Ordering::Relaxed) + 1, Ordering::Relaxed),
                    Bump::FetchAdd => {
                        c.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            let end = Instant::now();
            spans
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((start, end));
        })
    });
    let expected = match counters {
        Counters::Shared(_) => iters * n as u64,
        _ => iters,
    };
    for k in 0..n {
        let got = counters.get(k).load(Ordering::Relaxed);
        if got != expected {
            return Err(format!("counter {k} reached {got}, expected {expected}"));
        }
    }
    let spans = spans.into_inner().unwrap_or_else(|e| e.into_inner());
    Ok(overlap(&spans))
}

/// The share of the whole span (first start to last end) during which every span was running.
fn overlap(spans: &[(Instant, Instant)]) -> f64 {
    let (Some(first), Some(last_start), Some(first_end), Some(last)) = (
        spans.iter().map(|s| s.0).min(),
        spans.iter().map(|s| s.0).max(),
        spans.iter().map(|s| s.1).min(),
        spans.iter().map(|s| s.1).max(),
    ) else {
        return 0.0;
    };
    let whole = last.duration_since(first).as_secs_f64();
    if whole <= 0.0 {
        return 1.0;
    }
    first_end
        .saturating_duration_since(last_start)
        .as_secs_f64()
        / whole
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_are_what_they_claim() {
        let Counters::Packed(lines) = Counters::new("packed", 3) else {
            panic!("packed")
        };
        let a = &lines[0].0[0] as *const AtomicU64 as usize;
        let b = &lines[0].0[2] as *const AtomicU64 as usize;
        assert_eq!(a % 64, 0);
        assert_eq!(b - a, 16, "neighbours in one line");
        let padded = Counters::new("padded", 3);
        let a = padded.get(0) as *const AtomicU64 as usize;
        let b = padded.get(1) as *const AtomicU64 as usize;
        assert!(b - a >= 128, "a line (pair) each");
    }

    #[test]
    fn every_worker_counts_its_own() {
        let pool = crate::lab::tl::pool(3).unwrap();
        for v in ["packed", "padded", "shared"] {
            for (bump, _) in BUMPS
                .iter()
                .filter(|b| v != "shared" || b.0 == Bump::FetchAdd)
            {
                let bump = *bump;
                let o = run_once(&pool, &Counters::new(v, 3), bump, 1000).unwrap();
                assert!((0.0..=1.0).contains(&o), "{v}: overlap {o}");
            }
        }
    }

    #[test]
    fn overlap_is_the_share_of_the_whole_span() {
        let t = Instant::now();
        let d = std::time::Duration::from_millis(10);
        assert_eq!(overlap(&[(t, t + d), (t, t + d)]), 1.0);
        assert_eq!(overlap(&[(t, t + d), (t + d, t + 2 * d)]), 0.0);
    }
}
