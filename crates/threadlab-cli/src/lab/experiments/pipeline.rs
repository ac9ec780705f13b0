//! `pipeline` (*Multithreading Isn't Free*: the washer and the dryer): loads through a 75-minute washer and a
//! 45-minute dryer take `n × (75 + 45)` minutes in one combined machine, but about `n × 75` in
//! two machines that overlap — throughput is bound by the slowest stage, while the latency of
//! one load stays the same. Here with the times scaled to milliseconds (75 ms and 45 ms of sleep
//! per load, so the figures do not depend on the machine's load), on a 2-worker threadlab pool,
//! with [`threadlab::Pipeline`]: *combined* is one serial stage that washes then dries,
//! *pipelined* is a serial washer stage then a serial dryer stage.
//!
//! The CPU-bound version reads, transforms and writes the tiles of an image: read (copy the tile
//! out of the source image) and write (copy it into the output) are serial in order, like a file;
//! transform (a gamma curve with `powf` on every channel) is parallel. Combined runs the three
//! steps of a tile in one serial stage; pipelined overlaps them and transforms two tiles at once.
//!
//! Throughput is the steady state, `(n − 1) / (last completion − first completion)`, so the
//! pipeline's fill time (the first load's wash) does not count against it; latency is from an
//! item's first stage starting to its last stage ending. Every stage records its spans, which
//! the Gantt charts show (which stage held which item when).

use crate::fmt::fmt_secs;
use crate::lab::report::{svg::Chart, table::Table};
use crate::lab::stats::median;
use crate::lab::{Ctx, ExpResult, Experiment, Outcome};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use threadlab::{Pipeline as Pipe, Pool};

/// The experiment.
pub struct Pipeline;

/// Workers of the pool: the article's two machines.
const WORKERS: usize = 2;
/// The washer and the dryer, per load.
const WASH: Duration = Duration::from_millis(75);
const DRY: Duration = Duration::from_millis(45);
/// Square tiles of this many pixels a side.
const TILE: usize = 252;

/// One stage holding one item: seconds since the run started.
#[derive(Debug, Clone, Copy)]
struct Span {
    item: usize,
    stage: usize,
    start: f64,
    end: f64,
}

/// One run of one variant.
#[derive(Debug, Default)]
struct Run {
    total: f64,
    spans: Vec<Span>,
}

impl Run {
    /// Per item: (first stage's start, last stage's end).
    fn items(&self, stages: usize) -> Vec<(f64, f64)> {
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
    fn throughput(&self, stages: usize) -> f64 {
        let mut ends: Vec<f64> = self.items(stages).iter().map(|i| i.1).collect();
        ends.sort_by(f64::total_cmp);
        match (ends.first(), ends.last()) {
            (Some(a), Some(b)) if ends.len() > 1 && b > a => (ends.len() - 1) as f64 / (b - a),
            _ => f64::NAN,
        }
    }

    /// Median seconds from an item's first stage starting to its last stage ending.
    fn latency(&self, stages: usize) -> f64 {
        let mut l: Vec<f64> = self.items(stages).iter().map(|i| i.1 - i.0).collect();
        median(&mut l)
    }

    /// How many calls of stage `stage` ran at once on average: their summed time over the span
    /// from the first one's start to the last one's end.
    fn concurrency(&self, stage: usize) -> f64 {
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
    fn stage_mean(&self, stage: usize) -> f64 {
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
fn laundry(pool: &Pool, loads: usize, pipelined: bool) -> Run {
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
fn source_image(w: usize, h: usize) -> Vec<u8> {
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
fn tiles(pool: &Pool, img: &[u8], out: &mut [u8], w: usize, h: usize, pipelined: bool) -> Run {
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

/// Medians over rounds of one variant.
#[derive(Debug, Default)]
struct Figures {
    total: f64,
    throughput: f64,
    latency: f64,
    /// The last round, for the chart.
    last: Run,
}

fn figures(runs: Vec<Run>, stages: usize) -> Figures {
    let mut total: Vec<f64> = runs.iter().map(|r| r.total).collect();
    let mut thr: Vec<f64> = runs.iter().map(|r| r.throughput(stages)).collect();
    let mut lat: Vec<f64> = runs.iter().map(|r| r.latency(stages)).collect();
    Figures {
        total: median(&mut total),
        throughput: median(&mut thr),
        latency: median(&mut lat),
        last: runs.into_iter().last().unwrap_or_default(),
    }
}

/// A Gantt-like chart of one run: a row per item, a bar per stage that held it.
fn gantt(file: &str, title: &str, run: &Run, stage_names: &[&str]) -> Chart {
    let mut chart = Chart::spans(file, title, "ms since the start", "item");
    for (k, name) in stage_names.iter().enumerate() {
        chart.add(
            *name,
            run.spans
                .iter()
                .filter(|s| s.stage == k)
                .flat_map(|s| {
                    let row = s.item as f64;
                    [(s.start * 1e3, row), (s.end * 1e3, row)]
                })
                .collect(),
        );
    }
    chart
}

impl Experiment for Pipeline {
    fn name(&self) -> &'static str {
        "pipeline"
    }

    fn description(&self) -> &'static str {
        "The washer and dryer of “Multithreading Isn’t Free: Performance Pitfalls Visualized”: loads through two stages combined in one machine vs \
         pipelined (threadlab::Pipeline), throughput and latency; and a CPU-bound read / \
         transform / write of image tiles."
    }

    fn run(&self, ctx: &Ctx) -> ExpResult {
        let loads = ctx.size.pick(3, 6, 20);
        let (w, h) = ctx.size.pick((504, 504), (2016, 1512), (4032, 3024));
        let pool = crate::lab::tl::pool(WORKERS)?;
        let rounds = ctx.repeat.max(1);

        let mut wash_runs: [Vec<Run>; 2] = Default::default();
        for round in 0..rounds {
            for (v, pipelined) in [false, true].into_iter().enumerate() {
                ctx.step(format!(
                    "pipeline: washer/dryer, {}, round {}",
                    VARIANTS[v],
                    round + 1
                ));
                wash_runs[v].push(laundry(&pool, loads, pipelined));
            }
        }
        let img = source_image(w, h);
        let mut outs = [vec![0u8; img.len()], vec![0u8; img.len()]];
        tiles(&pool, &img, &mut outs[0], w, h, false); // warm-up
        let mut tile_runs: [Vec<Run>; 2] = Default::default();
        for round in 0..rounds {
            for (v, pipelined) in [false, true].into_iter().enumerate() {
                ctx.step(format!(
                    "pipeline: image tiles, {}, round {}",
                    VARIANTS[v],
                    round + 1
                ));
                tile_runs[v].push(tiles(&pool, &img, &mut outs[v], w, h, pipelined));
            }
        }
        if outs[0] != outs[1] {
            return Err("pipeline: the pipelined tiles differ from the combined ones".into());
        }
        let [wc, wp] = wash_runs.map(|r| figures(r, 2));
        let [tc, tp] = tile_runs.map(|r| figures(r, 3));

        let (wash, dry) = (WASH.as_secs_f64(), DRY.as_secs_f64());
        let n = loads as f64;
        let wash_bounds = [1.0 / (wash + dry), 1.0 / wash.max(dry)];
        let tiles_n = ((w / TILE) * (h / TILE)) as f64;
        // Stage means from the combined runs (each stage alone on a worker).
        let st: Vec<f64> = (0..3).map(|k| tc.last.stage_mean(k)).collect();
        let (t_sum, t_max) = (
            st.iter().sum::<f64>(),
            st.iter().cloned().fold(0.0, f64::max),
        );
        let t_max_par = st[0].max(st[1] / WORKERS as f64).max(st[2]);

        let mut rows = Vec::new();
        let wash_config = format!("washer/dryer, {loads} loads, 75 + 45 ms");
        let tile_config = format!("image tiles, {w}×{h}, {TILE}-px tiles");
        for (v, f) in [&wc, &wp].into_iter().enumerate() {
            for (metric, value, unit) in [
                ("seconds", f.total, "s"),
                ("items_per_second", f.throughput, "1/s"),
                ("latency_ms", f.latency * 1e3, "ms"),
                (
                    "throughput_vs_bound",
                    f.throughput / wash_bounds[v],
                    "ratio",
                ),
            ] {
                rows.push(ctx.row(VARIANTS[v], &wash_config, WORKERS, metric, value, unit));
            }
        }
        for (v, f) in [&tc, &tp].into_iter().enumerate() {
            for (metric, value, unit) in [
                ("seconds", f.total, "s"),
                ("items_per_second", f.throughput, "1/s"),
                ("latency_ms", f.latency * 1e3, "ms"),
            ] {
                rows.push(ctx.row(VARIANTS[v], &tile_config, WORKERS, metric, value, unit));
            }
        }
        // What the pipelined tiles gained over one serial stage: at most the workers (the lab's
        // bounds check it like every speed-up).
        rows.push(ctx.row(
            VARIANTS[1],
            &tile_config,
            WORKERS,
            "speedup_vs_combined",
            tc.total / tp.total,
            "x",
        ));

        let mut wash_table = Table::new(
            format!(
                "washer (75 ms) and dryer (45 ms), {loads} loads, {WORKERS} workers (medians of {rounds} rounds, variants interleaved)"
            ),
            &[
                "variant",
                "total",
                "n × sum(stages)",
                "n × max(stage)",
                "loads per s",
                "bound",
                "÷ bound",
                "latency per load",
            ],
        )
        .text_columns(1);
        for (v, f) in [&wc, &wp].into_iter().enumerate() {
            wash_table.row(vec![
                VARIANTS[v].into(),
                fmt_secs(f.total),
                fmt_secs(n * (wash + dry)),
                fmt_secs(n * wash.max(dry)),
                format!("{:.2}", f.throughput),
                format!("{:.2} (1 / {})", wash_bounds[v], ["sum", "max"][v]),
                format!("{:.0}%", 100.0 * f.throughput / wash_bounds[v]),
                fmt_secs(f.latency),
            ]);
        }
        let mut tile_table = Table::new(
            format!(
                "image tiles {w}×{h} ({} tiles of {TILE}×{TILE}): read → transform → write, {WORKERS} workers; stages {} / {} / {} per tile",
                tiles_n,
                fmt_secs(st[0]),
                fmt_secs(st[1]),
                fmt_secs(st[2]),
            ),
            &[
                "variant",
                "total",
                "n × sum(stages)",
                "n × max(stage)",
                "n × max(stage), transform ÷ workers",
                "tiles per s",
                "latency per tile",
            ],
        )
        .text_columns(1);
        for (v, f) in [&tc, &tp].into_iter().enumerate() {
            tile_table.row(vec![
                VARIANTS[v].into(),
                fmt_secs(f.total),
                fmt_secs(tiles_n * t_sum),
                fmt_secs(tiles_n * t_max),
                fmt_secs(tiles_n * t_max_par),
                format!("{:.1}", f.throughput),
                fmt_secs(f.latency),
            ]);
        }

        let charts = vec![
            gantt(
                "pipeline_laundry_pipelined",
                "pipeline: washer/dryer pipelined — which stage held which load when",
                &wp.last,
                &["wash", "dry"],
            ),
            gantt(
                "pipeline_laundry_combined",
                "pipeline: washer/dryer combined — which stage held which load when",
                &wc.last,
                &["wash", "dry"],
            ),
            gantt(
                "pipeline_tiles_pipelined",
                "pipeline: image tiles pipelined — which stage held which tile when",
                &tp.last,
                &["read", "transform", "write"],
            ),
        ];
        let within = |r: f64| (r - 1.0).abs() <= 0.10;
        let (rp, rc) = (
            wp.throughput / wash_bounds[1],
            wc.throughput / wash_bounds[0],
        );
        let finding = format!(
            "Pipelined, the washer and dryer finished a load every {} ({:.0}% of 1 / max(stage) = 1 / 75 ms{}) against every {} combined ({:.0}% of 1 / sum(stages) = 1 / 120 ms{}), while a load's latency stayed {} against {}; the CPU-bound tiles took {} pipelined against {} combined on {WORKERS} workers (combined ÷ pipelined = {:.2}×{}), with on average {:.2} transforms running at once (their summed time over the span from the first one's start to the last one's end; below {WORKERS} when the machine's other work took a CPU).",
            fmt_secs(1.0 / wp.throughput),
            rp * 100.0,
            if within(rp) { ", within 10%" } else { ", NOT within 10%" },
            fmt_secs(1.0 / wc.throughput),
            rc * 100.0,
            if within(rc) { ", within 10%" } else { ", NOT within 10%" },
            fmt_secs(wp.latency),
            fmt_secs(wc.latency),
            fmt_secs(tp.total),
            fmt_secs(tc.total),
            tc.total / tp.total,
            if tc.total / tp.total > WORKERS as f64 {
                // Within the 5% the bounds allow (beyond it the row is reported out of bounds).
                ", above the number of workers by no more than the rounds' noise"
            } else {
                ""
            },
            tp.last.concurrency(1),
        );
        Ok(Outcome {
            finding,
            notes: vec![
                "Throughput is the steady state, (n − 1) / (last completion − first completion): the time to fill the pipeline (the first load's wash) is not counted. Latency runs from an item's first stage starting to its last stage ending. The washer and dryer sleep, so their figures hold on a busy machine; the tiles are CPU-bound and share the machine with whatever else runs.".into(),
                "The tiles' stage times are means from the combined runs; the transform stage is parallel, so on 2 workers the pipelined bound is n × max(read, transform ÷ 2, write), the column after n × max(stage).".into(),
            ],
            rows,
            tables: vec![wash_table, tile_table],
            charts,
        })
    }
}

/// Variant names (results.json), in table order.
const VARIANTS: [&str; 2] = ["combined", "pipelined"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_pipelined_write_the_same_image_as_combined() {
        let pool = crate::lab::tl::pool(2).unwrap();
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
