//! `image` (*Multithreading Isn't Free*): `pixels[i] = 2*pixels[i] + 1` over a 4032×3024×4-byte buffer, per pass,
//! serial; a thread per row; fork-join over a sweep of thread counts; the work-sharing pool with
//! one locked queue; threadlab's parallel loop; Rayon's `par_chunks_mut`. The same sweep of
//! counts is also run as that many tasks (bands of rows) on the work-sharing pool and on a
//! threadlab pool (`scope` + `spawn` per band), both of the largest `--threads` size, so the
//! chart puts the pools' lines next to fork-join with that many threads (*Multithreading Isn't Free*'s chart). The same kernel over
//! the same bytes on pre-started threads (best pass, best thread count) measures the machine's
//! memory bandwidth in the same run, so the report can say how close each variant gets to it.

mod report;

use crate::baselines::{fork_join, thread_per_task, work_sharing::WorkSharingPool};
use crate::fmt::plural;
use crate::lab::programs::image::{bandwidth_bound, check_one_pass, fill, kernel, throughput};
use crate::lab::{Ctx, ExpResult, Experiment, Size, Turn, Variant};
use rayon::prelude::*;
use report::{summarize, Flat, Measured};
use std::cell::RefCell;

/// The experiment.
pub struct Image;

type Pass<'a> = Box<dyn Fn(&mut [u8]) -> Result<(), String> + 'a>;

/// Infallible passes as [`Pass`]es.
fn ok<'a>(f: impl Fn(&mut [u8]) + 'a) -> Pass<'a> {
    Box::new(move |b| {
        f(b);
        Ok(())
    })
}

impl Experiment for Image {
    fn name(&self) -> &'static str {
        "image"
    }

    fn description(&self) -> &'static str {
        "The 4032×3024×4-byte transform of “Multithreading Isn’t Free: Performance Pitfalls Visualized”: a thread per row, fork-join sweeps, a locked \
         work-sharing queue, threadlab and Rayon, against the memory-bandwidth bound."
    }

    fn run(&self, ctx: &Ctx) -> ExpResult {
        let (width, height) = ctx.size.pick((403, 302), (4032, 3024), (4032, 3024));
        let shape = Shape {
            height,
            pitch: width * 4,
            passes: ctx.size.pick(1, 10, 100),
        };
        // Pools are started up front and live through the whole measurement.
        let pools = Pools::new(&ctx.threads)?;
        let (results, passes) = passes(ctx, &shape, &pools).into_iter().unzip();
        let mut buf = vec![0u8; shape.bytes()];
        let (results, flat) = time(ctx, &shape, results, passes, &mut buf)?;
        let bound = memory_bound(ctx, &shape, &mut buf);
        record(ctx, &shape, &pools, &mut buf)?;
        Ok(summarize(
            results,
            (bound.0, bound.1, &flat),
            shape.bytes(),
            shape.passes,
            ctx,
        ))
    }
}

/// The image: rows of `pitch` bytes, and the passes a variant's sample times.
struct Shape {
    height: usize,
    pitch: usize,
    passes: usize,
}

impl Shape {
    fn bytes(&self) -> usize {
        self.pitch * self.height
    }
}

/// The pools, one of each kind per `--threads` size.
struct Pools {
    sharing: Vec<WorkSharingPool>,
    tl: Vec<crate::lab::tl::Joined>,
    rayon: Vec<std::sync::Arc<rayon::ThreadPool>>,
}

impl Pools {
    fn new(threads: &[usize]) -> Result<Pools, String> {
        Ok(Pools {
            sharing: threads
                .iter()
                .map(|&t| WorkSharingPool::new(t).map_err(|e| format!("work-sharing pool: {e}")))
                .collect::<Result<_, _>>()?,
            tl: threads
                .iter()
                .map(|&t| crate::lab::tl::pool(t))
                .collect::<Result<_, _>>()?,
            rayon: threads
                .iter()
                .map(|&t| crate::lab::peers::rayon_pool(t))
                .collect::<Result<_, _>>()?,
        })
    }
}

/// The thread counts of the fork-join sweep (and of the task-count sweep on the pools).
fn sweep(ctx: &Ctx, height: usize) -> Vec<usize> {
    let mut sweep: Vec<usize> = match ctx.size {
        Size::Tiny => vec![1, 2, 8, height],
        Size::Quick => vec![1, 2, 3, 4, 8, 16, 32, 64, 128, 512, 1024, height],
        Size::Full => (1..=32).chain([64, 128, 256, 512, 1024, height]).collect(),
    };
    sweep.extend(ctx.threads.iter().copied().filter(|&t| t <= height));
    sweep.sort_unstable();
    sweep.dedup();
    sweep
}

/// Every variant: what it is, and one pass of it.
fn passes<'a>(ctx: &Ctx, shape: &Shape, pools: &'a Pools) -> Vec<(Measured, Pass<'a>)> {
    let (pitch, height) = (shape.pitch, shape.height);
    let sweep = sweep(ctx, height);
    let mut passes_of: Vec<(Measured, Pass<'_>)> = Vec::new();
    let mut add = |variant, config: String, threads, tasks, pass| {
        let m = Measured {
            variant,
            config,
            threads,
            tasks,
            secs: f64::NAN,
            spread: f64::NAN,
        };
        passes_of.push((m, pass));
    };
    // The serial loop runs the kernel row by row, as the row variants do: the same code
    // on one thread (one call over the whole buffer ran up to 8% slower here).
    let serial = move |b: &mut [u8]| b.chunks_mut(pitch).for_each(kernel);
    add("serial", "1 thread".into(), 1, None, ok(serial));
    let per_row = move |b: &mut [u8]| thread_per_task::for_each_row(b, pitch, &kernel);
    add(
        "thread-per-task",
        format!("{height} threads, one per row"),
        height,
        None,
        ok(per_row),
    );
    for &t in &sweep {
        let pass = ok(move |b| fork_join::for_each_band(b, pitch, t, &kernel));
        add("fork-join", plural(t, "thread"), t, None, pass);
    }
    for ((ws, tl), (ry, &t)) in pools
        .sharing
        .iter()
        .zip(&pools.tl)
        .zip(pools.rayon.iter().zip(&ctx.threads))
    {
        add(
            "work-sharing",
            format!("pool of {t}"),
            t,
            None,
            Box::new(move |b| ws.for_each_band(b, pitch, &kernel)),
        );
        let pass = ok(move |b| crate::lab::tl::for_each_row(tl, b, pitch, &kernel));
        add(
            "threadlab",
            format!("pool of {t}, for_each over rows"),
            t,
            None,
            pass,
        );
        let pass = ok(move |b| ry.install(|| b.par_chunks_mut(pitch).for_each(kernel)));
        add(
            "rayon",
            format!("pool of {t}, par_chunks_mut per row"),
            t,
            None,
            pass,
        );
    }
    // The sweep's counts as tasks on the largest pools: the article's green work-sharing line
    // next to fork-join with that many threads.
    let (big_sharing, big_tl) = (pools.sharing.last(), pools.tl.last());
    let (Some(big_sharing), Some(big_tl)) = (big_sharing, big_tl) else {
        return passes_of;
    };
    let big = ctx.threads[ctx.threads.len() - 1];
    for &asked in &sweep {
        // Bands of whole rows: 1,024 asked of 3,024 rows are 1,008 bands of 3 rows.
        let t = height.div_ceil(height.div_ceil(asked));
        let tasks = format!("{} on a pool of {big}", plural(t, "task"));
        let pass = Box::new(move |b: &mut [u8]| big_sharing.for_each_band_in(b, pitch, t, &kernel));
        add("work-sharing", tasks.clone(), big, Some(t), pass);
        let pass = ok(move |b| crate::lab::tl::for_each_band_in(big_tl, b, pitch, t, &kernel));
        add(
            "threadlab",
            format!("{tasks}, scope + spawn per band"),
            big,
            Some(t),
            pass,
        );
    }

    passes_of
}

/// Every variant's `passes` passes in interleaved rounds, each run's warm-up one checked pass
/// on a fresh buffer, and in the same rounds the kernel flat out on 1..=cores threads: the
/// variants with their medians and spreads, and the flat-out time per pass by thread count.
fn time(
    ctx: &Ctx,
    shape: &Shape,
    mut results: Vec<Measured>,
    runs: Vec<Pass<'_>>,
    buf_out: &mut Vec<u8>,
) -> Result<(Vec<Measured>, Flat), String> {
    let passes = shape.passes;
    let buf = RefCell::new(std::mem::take(buf_out));
    let mut variants: Vec<Variant<'_>> = results
        .iter()
        .zip(&runs)
        .map(|(m, pass)| {
            let buf = &buf;
            Variant::by_turn(format!("{} {}", m.variant, m.config), move |turn| {
                let buf = &mut *buf.borrow_mut();
                if turn == Turn::WarmUp {
                    fill(buf);
                    pass(buf)?;
                    check_one_pass(buf, m.variant)?;
                    return Ok(f64::NAN);
                }
                // One untimed pass first: what the variant before left behind (3,024
                // threads' exits, another pool's spinning, a cold cache) is not charged to
                // this one (here a serial pass after the thread-per-row variant took
                // 3.3–4.5 ms, after threadlab's 2.6–3.1 ms).
                pass(buf)?;
                let start = std::time::Instant::now();
                for _ in 0..passes {
                    pass(buf)?;
                }
                Ok(start.elapsed().as_secs_f64() / passes as f64)
            })
        })
        .collect();
    let (ways, flat_out) = flat_out(ctx, shape.pitch, &buf);
    variants.extend(flat_out);
    let mut samples = ctx.rounds("passes", &mut variants)?;
    drop(variants);
    // The best round of the faster way per thread count: interference (another variant's
    // threads still spinning, a CPU taken for a moment) only slows the kernel, and the
    // bound is what the machine could do.
    let mut flat: Flat = Vec::new();
    for (&(t, _), s) in ways.iter().zip(samples.split_off(results.len())) {
        match flat.last_mut() {
            Some(last) if last.0 == t => last.1 = last.1.min(s.min),
            _ => flat.push((t, s.min)),
        }
    }
    for (m, s) in results.iter_mut().zip(samples) {
        (m.secs, m.spread) = (s.median, s.spread);
    }
    *buf_out = buf.into_inner();
    Ok((results, flat))
}

/// The machine's own scaling, in the same rounds: the kernel run flat out on 1..=cores
/// threads for about a variant's sample (see `throughput`), as time per pass; each variant's
/// thread count and way of sharing the rows.
fn flat_out<'a>(
    ctx: &Ctx,
    pitch: usize,
    buf: &'a RefCell<Vec<u8>>,
) -> (Vec<(usize, Option<usize>)>, Vec<Variant<'a>>) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let flat_out = std::time::Duration::from_millis(ctx.size.pick(5, 40, 100));
    // Two ways to share the image: a band of consecutive rows per thread, and blocks of 16
    // rows dealt round-robin, so the threads move through memory side by side as a pool's
    // small tasks do (in one quick run here 126 tasks on a pool of 2 took 1.48 ms a pass,
    // two threads flat out on a band each 1.60 ms at best); one thread has one way.
    let ways: Vec<(usize, Option<usize>)> = (1..=cores.min(64))
        .flat_map(|t| {
            [(t, None), (t, Some(16))]
                .into_iter()
                .take(if t == 1 { 1 } else { 2 })
        })
        .collect();
    let mut variants = Vec::new();
    for &(t, interleave) in &ways {
        let how = if interleave.is_some() {
            ", blocks of 16 rows dealt round-robin"
        } else {
            ""
        };
        variants.push(Variant::measured(
            format!("the kernel flat out on {}{how}", plural(t, "thread")),
            move || {
                Ok(throughput(
                    &mut buf.borrow_mut(),
                    pitch,
                    t,
                    flat_out,
                    interleave,
                ))
            },
        ));
    }
    (ways, variants)
}

/// The bandwidth bound: the same kernel over the same bytes (read and written once) on threads
/// started once and released per pass by a spinning hand-off, so neither thread creation nor
/// queueing is in it; the best pass of the best of 1..=cores threads, and that count.
fn memory_bound(ctx: &Ctx, shape: &Shape, buf: &mut [u8]) -> (f64, usize) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (mut bound, mut bound_threads) = (f64::INFINITY, 1);
    // Up to the CPUs only: the probe's threads spin between passes.
    for t in 1..=cores.min(64) {
        ctx.step(format!(
            "image: memory bound, the kernel on {t} pre-started threads"
        ));
        // At least 64 passes: the best of one (the tiny size's) is no bound, nor of a few on a
        // loaded machine (its helper must find a CPU free).
        let secs = bandwidth_bound(buf, t, (shape.passes * ctx.repeat).max(64));
        if secs < bound {
            (bound, bound_threads) = (secs, t);
        }
    }
    (bound, bound_threads)
}

/// Traces of the telling runs, one pass each, recorded only here (never while timing).
fn record(ctx: &Ctx, shape: &Shape, pools: &Pools, buf: &mut [u8]) -> Result<(), String> {
    let (pitch, height) = (shape.pitch, shape.height);
    let last = ctx.threads.len() - 1;
    let t = ctx.threads[last];
    ctx.record(
        "image-thread-per-task",
        &format!("image, a thread per row ({height} threads), one pass"),
        || thread_per_task::for_each_row(buf, pitch, &kernel),
    )?;
    ctx.record(
        &format!("image-work-sharing-{t}t"),
        &format!("image, the work-sharing pool of {t}, one pass"),
        || pools.sharing[last].for_each_band(buf, pitch, &kernel),
    )?
    .0?;
    ctx.record(
        &format!("image-threadlab-{t}t"),
        &format!("image, threadlab's for_each over rows on a pool of {t}, one pass"),
        || crate::lab::tl::for_each_row(&pools.tl[last], buf, pitch, &kernel),
    )?;
    Ok(())
}
