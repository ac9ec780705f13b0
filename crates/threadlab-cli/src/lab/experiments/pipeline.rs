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
//! the Gantt charts show (which stage held which item when). The two programs are
//! `programs/pipeline.rs`; here they are timed, combined and pipelined taking turns in the same
//! rounds (`ctx.rounds`) after a warm-up run each.

use crate::fmt::fmt_secs;
use crate::lab::programs::pipeline::{laundry, source_image, tiles, Run, DRY, TILE, WASH, WORKERS};
use crate::lab::report::{svg::Chart, table::Table};
use crate::lab::stats::median;
use crate::lab::{Ctx, ExpResult, Experiment, Outcome, Row, Turn, Variant};
use std::cell::RefCell;

/// The experiment.
pub struct Pipeline;

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
        let [wc, wp] = rounds_of(ctx, "washer/dryer", 2, |pipelined| {
            laundry(&pool, loads, pipelined)
        })?;
        let img = source_image(w, h);
        let outs = [(); 2].map(|()| RefCell::new(vec![0u8; img.len()]));
        let [tc, tp] = rounds_of(ctx, "image tiles", 3, |pipelined| {
            let out = &mut outs[usize::from(pipelined)].borrow_mut();
            tiles(&pool, &img, out, w, h, pipelined)
        })?;
        if outs[0] != outs[1] {
            return Err("pipeline: the pipelined tiles differ from the combined ones".into());
        }
        let laundry = Laundry { loads, wc, wp };
        let tiles = Tiles { w, h, tc, tp };
        let mut rows = laundry.rows(ctx);
        rows.extend(tiles.rows(ctx));
        Ok(Outcome {
            finding: format!("{} {}", laundry.finding(), tiles.finding()),
            notes: vec![
                "Throughput is the steady state, (n − 1) / (last completion − first completion): the time to fill the pipeline (the first load's wash) is not counted. Latency runs from an item's first stage starting to its last stage ending. The washer and dryer sleep, so their figures hold on a busy machine; the tiles are CPU-bound and share the machine with whatever else runs.".into(),
                "The tiles' stage times are means from the combined runs; the transform stage is parallel, so on 2 workers the pipelined bound is n × max(read, transform ÷ 2, write), the column after n × max(stage).".into(),
            ],
            rows,
            tables: vec![laundry.table(ctx.repeat), tiles.table()],
            charts: vec![
                gantt(
                    "pipeline_laundry_pipelined",
                    "pipeline: washer/dryer pipelined — which stage held which load when",
                    &laundry.wp.last,
                    &["wash", "dry"],
                ),
                gantt(
                    "pipeline_laundry_combined",
                    "pipeline: washer/dryer combined — which stage held which load when",
                    &laundry.wc.last,
                    &["wash", "dry"],
                ),
                gantt(
                    "pipeline_tiles_pipelined",
                    "pipeline: image tiles pipelined — which stage held which tile when",
                    &tiles.tp.last,
                    &["read", "transform", "write"],
                ),
            ],
        })
    }
}

/// Combined and pipelined (`run(false)`, `run(true)`) in interleaved rounds after a warm-up
/// each (`ctx.rounds`): each one's figures over the rounds, a run's figure its total time.
fn rounds_of(
    ctx: &Ctx,
    what: &str,
    stages: usize,
    run: impl Fn(bool) -> Run,
) -> Result<[Figures; 2], String> {
    let runs = [RefCell::new(Vec::new()), RefCell::new(Vec::new())];
    let mut variants: Vec<Variant<'_>> = (0..2)
        .map(|v| {
            let (run, runs) = (&run, &runs[v]);
            Variant::by_turn(format!("{what}, {}", VARIANTS[v]), move |turn| {
                let r = run(v == 1);
                let total = r.total;
                if turn != Turn::WarmUp {
                    runs.borrow_mut().push(r);
                }
                Ok(total)
            })
        })
        .collect();
    ctx.rounds(what, &mut variants)?;
    drop(variants);
    Ok(runs.map(|r| figures(r.into_inner(), stages)))
}

/// The washer and the dryer, combined and pipelined.
struct Laundry {
    loads: usize,
    wc: Figures,
    wp: Figures,
}

impl Laundry {
    /// Each variant's bound on throughput: one load per sum of the stages combined, per the
    /// slowest stage pipelined.
    fn bounds() -> [f64; 2] {
        let (wash, dry) = (WASH.as_secs_f64(), DRY.as_secs_f64());
        [1.0 / (wash + dry), 1.0 / wash.max(dry)]
    }

    fn config(&self) -> String {
        format!("washer/dryer, {} loads, 75 + 45 ms", self.loads)
    }

    fn rows(&self, ctx: &Ctx) -> Vec<Row> {
        let (bounds, config) = (Self::bounds(), self.config());
        let mut rows = Vec::new();
        for (v, f) in [&self.wc, &self.wp].into_iter().enumerate() {
            for (metric, value, unit) in [
                ("seconds", f.total, "s"),
                ("items_per_second", f.throughput, "1/s"),
                ("latency_ms", f.latency * 1e3, "ms"),
                ("throughput_vs_bound", f.throughput / bounds[v], "ratio"),
            ] {
                rows.push(ctx.row(VARIANTS[v], &config, WORKERS, metric, value, unit));
            }
        }
        rows
    }

    fn table(&self, repeat: usize) -> Table {
        let (wash, dry) = (WASH.as_secs_f64(), DRY.as_secs_f64());
        let (loads, rounds, bounds) = (self.loads, repeat.max(1), Self::bounds());
        let n = loads as f64;
        let mut table = Table::new(
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
        for (v, f) in [&self.wc, &self.wp].into_iter().enumerate() {
            table.row(vec![
                VARIANTS[v].into(),
                fmt_secs(f.total),
                fmt_secs(n * (wash + dry)),
                fmt_secs(n * wash.max(dry)),
                format!("{:.2}", f.throughput),
                format!("{:.2} (1 / {})", bounds[v], ["sum", "max"][v]),
                format!("{:.0}%", 100.0 * f.throughput / bounds[v]),
                fmt_secs(f.latency),
            ]);
        }
        table
    }

    fn finding(&self) -> String {
        let (wc, wp, bounds) = (&self.wc, &self.wp, Self::bounds());
        let within = |r: f64| {
            if (r - 1.0).abs() <= 0.10 {
                ", within 10%"
            } else {
                ", NOT within 10%"
            }
        };
        let (rp, rc) = (wp.throughput / bounds[1], wc.throughput / bounds[0]);
        format!(
            "Pipelined, the washer and dryer finished a load every {} ({:.0}% of 1 / max(stage) = 1 / 75 ms{}) against every {} combined ({:.0}% of 1 / sum(stages) = 1 / 120 ms{}), while a load's latency stayed {} against {};",
            fmt_secs(1.0 / wp.throughput),
            rp * 100.0,
            within(rp),
            fmt_secs(1.0 / wc.throughput),
            rc * 100.0,
            within(rc),
            fmt_secs(wp.latency),
            fmt_secs(wc.latency),
        )
    }
}

/// The image's tiles read, transformed and written, combined and pipelined.
struct Tiles {
    w: usize,
    h: usize,
    tc: Figures,
    tp: Figures,
}

impl Tiles {
    fn config(&self) -> String {
        format!("image tiles, {}×{}, {TILE}-px tiles", self.w, self.h)
    }

    fn rows(&self, ctx: &Ctx) -> Vec<Row> {
        let config = self.config();
        let mut rows = Vec::new();
        for (v, f) in [&self.tc, &self.tp].into_iter().enumerate() {
            for (metric, value, unit) in [
                ("seconds", f.total, "s"),
                ("items_per_second", f.throughput, "1/s"),
                ("latency_ms", f.latency * 1e3, "ms"),
            ] {
                rows.push(ctx.row(VARIANTS[v], &config, WORKERS, metric, value, unit));
            }
        }
        // What the pipelined tiles gained over one serial stage: at most the workers (the lab's
        // bounds check it like every speed-up).
        let speedup = self.tc.total / self.tp.total;
        rows.push(ctx.row(
            VARIANTS[1],
            &config,
            WORKERS,
            "speedup_vs_combined",
            speedup,
            "x",
        ));
        rows
    }

    fn table(&self) -> Table {
        let (w, h) = (self.w, self.h);
        let tiles_n = ((w / TILE) * (h / TILE)) as f64;
        // Stage means from the combined runs (each stage alone on a worker).
        let st: Vec<f64> = (0..3).map(|k| self.tc.last.stage_mean(k)).collect();
        let (t_sum, t_max) = (
            st.iter().sum::<f64>(),
            st.iter().cloned().fold(0.0, f64::max),
        );
        let t_max_par = st[0].max(st[1] / WORKERS as f64).max(st[2]);
        let mut table = Table::new(
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
        for (v, f) in [&self.tc, &self.tp].into_iter().enumerate() {
            table.row(vec![
                VARIANTS[v].into(),
                fmt_secs(f.total),
                fmt_secs(tiles_n * t_sum),
                fmt_secs(tiles_n * t_max),
                fmt_secs(tiles_n * t_max_par),
                format!("{:.1}", f.throughput),
                fmt_secs(f.latency),
            ]);
        }
        table
    }

    fn finding(&self) -> String {
        let (tc, tp) = (&self.tc, &self.tp);
        format!(
            "the CPU-bound tiles took {} pipelined against {} combined on {WORKERS} workers (combined ÷ pipelined = {:.2}×{}), with on average {:.2} transforms running at once (their summed time over the span from the first one's start to the last one's end; below {WORKERS} when the machine's other work took a CPU).",
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
        )
    }
}

/// Variant names (results.json), in table order.
const VARIANTS: [&str; 2] = ["combined", "pipelined"];
