//! The `pipeline` experiment's programs (*Multithreading Isn't Free*: the washer and the dryer,
//! and a CPU-bound read / transform / write of an image's tiles), each combined in one serial
//! stage or pipelined with [`threadlab::Pipeline`] on a pool of [`WORKERS`], every stage's
//! calls recorded as spans relative to the run's start ([`Run`]).

use crate::lab::stats::median;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use threadlab::{Pipeline as Pipe, Pool};

/// Workers of the pool: the article's two machines.
pub const WORKERS: usize = 2;
/// The washer and the dryer, per load.
pub const WASH: Duration = Duration::from_millis(75);
pub const DRY: Duration = Duration::from_millis(45);
/// Square tiles of this many pixels a side.
pub const TILE: usize = 252;

/// One stage holding one item: seconds since the run started.
#[derive(Debug, Clone, Copy)]
pub struct Span {
    pub item: usize,
    pub stage: usize,
    pub start: f64,
    pub end: f64,
}

/// One run of one variant.
#[derive(Debug, Default)]
pub struct Run {
    pub total: f64,
    pub spans: Vec<Span>,
}

impl Run {
    /// Per item: (first stage's start, last stage's end).
    pub fn items(&self, stages: usize) -> Vec<(f64, f64)> {
        let n = self.spans.iter().map(|s| s.item + 1).max().unwrap_or(0);
        let mut v = vec![(f64::INFINITY, f64::NEG_INFINITY); n];
        for s in &self.spans {
            if s.stage == 0 {
                v[s.item].0 = v[s.item].0.min(s.start);
            }
            if s.stage == stages - 1 {
                v[s.item].1 = v[s.item].1.max(s.end);
            }
        }
        v
    }

    /// Items per second in the steady state.
    pub fn throughput(&self, stages: usize) -> f64 {
        let mut ends: Vec<f64> = self.items(stages).iter().map(|i| i.1).collect();
        ends.sort_by(f64::total_cmp);
        match (ends.first(), ends.last()) {
            (Some(a), Some(b)) if ends.len() > 1 && b > a => (ends.len() - 1) as f64 / (b - a),
            _ => f64::NAN,
        }
    }

    /// Median seconds from an item's first stage starting to its last stage ending.
    pub fn latency(&self, stages: usize) -> f64 {
        let mut l: Vec<f64> = self.items(stages).iter().map(|i| i.1 - i.0).collect();
        median(&mut l)
    }

    /// How many calls of stage `stage` ran at once on average: their summed time over the span
    /// from the first one's start to the last one's end.
    pub fn concurrency(&self, stage: usize) -> f64 {
        let spans = self.spans.iter().filter(|s| s.stage == stage);
        let (mut sum, mut lo, mut hi) = (0.0, f64::INFINITY, f64::NEG_INFINITY);
        for s in spans {
            sum += s.end - s.start;
            lo = lo.min(s.start);
            hi = hi.max(s.end);
        }
        if hi > lo {
            sum / (hi - lo)
        } else {
            f64::NAN
        }
    }

    /// Mean seconds of stage `stage`.
    pub fn stage_mean(&self, stage: usize) -> f64 {
        let d: Vec<f64> = self
            .spans
            .iter()
            .filter(|s| s.stage == stage)
            .map(|s| s.end - s.start)
            .collect();
        d.iter().sum::<f64>() / d.len().max(1) as f64
    }
}

/// Records spans relative to one start.
struct Clock {
    t0: Instant,
    spans: Mutex<Vec<Span>>,
}

impl Clock {
    fn new() -> Clock {
        Clock {
            t0: Instant::now(),
            spans: Mutex::new(Vec::new()),
        }
    }

    fn time<R>(&self, item: usize, stage: usize, f: impl FnOnce() -> R) -> R {
        let start = self.t0.elapsed().as_secs_f64();
        let r = f();
        let end = self.t0.elapsed().as_secs_f64();
        self.spans
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Span {
                item,
                stage,
                start,
                end,
            });
        r
    }

    fn finish(self) -> Run {
        Run {
            total: self.t0.elapsed().as_secs_f64(),
            spans: self.spans.into_inner().unwrap_or_else(|e| e.into_inner()),
        }
    }
}

/// A source of `0..n`.
fn items(n: usize) -> impl FnMut() -> Option<usize> + Send {
    let mut next = 0;
    move || {
        next += 1;
        (next <= n).then_some(next - 1)
    }
}

/// `loads` through the washer and the dryer, combined in one machine or pipelined.
pub fn laundry(pool: &Pool, loads: usize, pipelined: bool) -> Run {
    let clock = Clock::new();
    let c = &clock;
    // Three loads in flight: one in each machine, one in the basket.
    let source = Pipe::new("laundry basket", 3, items(loads));
    let report = if pipelined {
        source
            .serial_in_order("washer", |i| {
                c.time(i, 0, || std::thread::sleep(WASH));
                i
            })
            .serial_in_order("dryer", |i| c.time(i, 1, || std::thread::sleep(DRY)))
            .run_on(pool)
    } else {
        source
            .serial_in_order("washer-dryer", |i| {
                c.time(i, 0, || std::thread::sleep(WASH));
                c.time(i, 1, || std::thread::sleep(DRY));
            })
            .run_on(pool)
    };
    debug_assert_eq!(report.items, loads as u64);
    clock.finish()
}

/// The source image for the tiles experiment: `w × h` RGBA, a deterministic pattern.
pub fn source_image(w: usize, h: usize) -> Vec<u8> {
    (0..w * h * 4)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect()
}

/// The transform: a gamma curve on R, G and B of every pixel.
fn transform(tile: &mut [u8]) {
    for px in tile.chunks_exact_mut(4) {
        for c in &mut px[..3] {
            *c = ((*c as f32 / 255.0).powf(1.0 / 2.2) * 255.0 + 0.5) as u8;
        }
    }
}

/// Copies tile `t` (row-major over a `cols`-wide grid) out of `img` (`w` pixels wide).
fn read_tile(img: &[u8], w: usize, cols: usize, t: usize) -> Vec<u8> {
    let (x0, y0) = ((t % cols) * TILE, (t / cols) * TILE);
    let mut tile = Vec::with_capacity(TILE * TILE * 4);
    for y in y0..y0 + TILE {
        tile.extend_from_slice(&img[(y * w + x0) * 4..(y * w + x0 + TILE) * 4]);
    }
    tile
}

/// Copies tile `t` back into `out`.
fn write_tile(out: &mut [u8], w: usize, cols: usize, t: usize, tile: &[u8]) {
    let (x0, y0) = ((t % cols) * TILE, (t / cols) * TILE);
    for (r, y) in (y0..y0 + TILE).enumerate() {
        out[(y * w + x0) * 4..(y * w + x0 + TILE) * 4]
            .copy_from_slice(&tile[r * TILE * 4..(r + 1) * TILE * 4]);
    }
}

/// The image's tiles read, transformed and written, combined in one serial stage or pipelined.
pub fn tiles(pool: &Pool, img: &[u8], out: &mut [u8], w: usize, h: usize, pipelined: bool) -> Run {
    let cols = w / TILE;
    let n = cols * (h / TILE);
    let clock = Clock::new();
    let c = &clock;
    let source = Pipe::new("tiles", 2 * WORKERS, items(n));
    if pipelined {
        source
            .serial_in_order("read", |t| (t, c.time(t, 0, || read_tile(img, w, cols, t))))
            .parallel("transform", |(t, mut tile)| {
                c.time(t, 1, || transform(&mut tile));
                (t, tile)
            })
            .serial_in_order("write", |(t, tile)| {
                c.time(t, 2, || write_tile(out, w, cols, t, &tile))
            })
            .run_on(pool);
    } else {
        source
            .serial_in_order("read-transform-write", |t| {
                let mut tile = c.time(t, 0, || read_tile(img, w, cols, t));
                c.time(t, 1, || transform(&mut tile));
                c.time(t, 2, || write_tile(out, w, cols, t, &tile));
            })
            .run_on(pool);
    }
    clock.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_pipelined_write_the_same_image_as_combined() {
        let pool = crate::lab::tl::pool(WORKERS).unwrap();
        let (w, h) = (2 * TILE, 2 * TILE);
        let img = source_image(w, h);
        let mut a = vec![0u8; img.len()];
        let mut b = vec![0u8; img.len()];
        let ra = tiles(&pool, &img, &mut a, w, h, false);
        let rb = tiles(&pool, &img, &mut b, w, h, true);
        assert_eq!(a, b);
        let mut want = img.clone();
        transform(&mut want);
        assert_eq!(a, want);
        // Four tiles, three stages each, one span per stage and tile.
        assert_eq!(ra.spans.len(), 12);
        assert_eq!(rb.spans.len(), 12);
        assert_eq!(rb.items(3).len(), 4);
        assert!(rb.concurrency(1) > 0.0);
    }
}
