//! `image` (*Multithreading Isn't Free*): `pixels[i] = 2*pixels[i] + 1` over a 4032×3024×4-byte buffer, per pass,
//! serial; a thread per row; fork-join over a sweep of thread counts; the work-sharing pool with
//! one locked queue; threadlab's parallel loop; Rayon's `par_chunks_mut`. The same sweep of
//! counts is also run as that many tasks (bands of rows) on the work-sharing pool and on a
//! threadlab pool (`scope` + `spawn` per band), both of the largest `--threads` size, so the
//! chart puts the pools' lines next to fork-join with that many threads (*Multithreading Isn't Free*'s chart). The same kernel over
//! the same bytes on pre-started threads (best pass, best thread count) measures the machine's
//! memory bandwidth in the same run, so the report can say how close each variant gets to it.

use crate::baselines::{fork_join, thread_per_task, work_sharing::WorkSharingPool};
use crate::fmt::{fmt_ratio, fmt_secs, plural};
use crate::lab::programs::image::{bandwidth_bound, check_one_pass, fill, kernel, throughput};
use crate::lab::report::{svg::Chart, table::Table};
use crate::lab::{Ctx, ExpResult, Experiment, Outcome, Size, Turn, Variant};
use rayon::prelude::*;
use std::cell::RefCell;

/// The experiment.
pub struct Image;

struct Measured {
    variant: &'static str,
    config: String,
    threads: usize,
    /// For the task-count sweep on a pool: how many tasks (bands) a pass was split into.
    tasks: Option<usize>,
    secs: f64,
    /// The rounds' spread: (slowest − fastest) / median.
    spread: f64,
}

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
        let passes = ctx.size.pick(1, 10, 100);
        let pitch = width * 4;
        let bytes = pitch * height;
        let mut sweep: Vec<usize> = match ctx.size {
            Size::Tiny => vec![1, 2, 8, height],
            Size::Quick => vec![1, 2, 3, 4, 8, 16, 32, 64, 128, 512, 1024, height],
            Size::Full => (1..=32).chain([64, 128, 256, 512, 1024, height]).collect(),
        };
        sweep.extend(ctx.threads.iter().copied().filter(|&t| t <= height));
        sweep.sort_unstable();
        sweep.dedup();

        // Pools are started up front and live through the whole measurement.
        let sharing: Vec<WorkSharingPool> = ctx
            .threads
            .iter()
            .map(|&t| WorkSharingPool::new(t).map_err(|e| format!("work-sharing pool: {e}")))
            .collect::<Result<_, _>>()?;
        let tl_pools: Vec<threadlab::Pool> = ctx
            .threads
            .iter()
            .map(|&t| crate::lab::tl::pool(t))
            .collect::<Result<_, _>>()?;
        let rayon_pools: Vec<_> = ctx
            .threads
            .iter()
            .map(|&t| crate::lab::peers::rayon_pool(t))
            .collect::<Result<_, _>>()?;

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
        for ((ws, tl), (ry, &t)) in sharing
            .iter()
            .zip(&tl_pools)
            .zip(rayon_pools.iter().zip(&ctx.threads))
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
        let (big_sharing, big_tl) = (&sharing[sharing.len() - 1], &tl_pools[tl_pools.len() - 1]);
        let big = ctx.threads[ctx.threads.len() - 1];
        for &asked in &sweep {
            // Bands of whole rows: 1,024 asked of 3,024 rows are 1,008 bands of 3 rows.
            let t = height.div_ceil(height.div_ceil(asked));
            let tasks = format!("{} on a pool of {big}", plural(t, "task"));
            let pass =
                Box::new(move |b: &mut [u8]| big_sharing.for_each_band_in(b, pitch, t, &kernel));
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

        // Each variant's warm-up is one checked pass on a fresh buffer; then `repeat` rounds
        // time `passes` passes of every variant in turn, each after one untimed pass.
        let buf = RefCell::new(vec![0u8; bytes]);
        let (mut results, runs): (Vec<Measured>, Vec<Pass<'_>>) = passes_of.into_iter().unzip();
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
        // The machine's own scaling, in the same rounds: the kernel run flat out on 1..=cores
        // threads for about a variant's sample (see `throughput`), as time per pass, best round.
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
        for &(t, interleave) in &ways {
            let buf = &buf;
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
        let mut samples = ctx.rounds("passes", &mut variants)?;
        drop(variants);
        // The best round of the faster way per thread count: interference (another variant's
        // threads still spinning, a CPU taken for a moment) only slows the kernel, and the
        // bound is what the machine could do.
        let mut flat: Vec<(usize, f64)> = Vec::new();
        for (&(t, _), s) in ways.iter().zip(samples.split_off(results.len())) {
            match flat.last_mut() {
                Some(last) if last.0 == t => last.1 = last.1.min(s.min),
                _ => flat.push((t, s.min)),
            }
        }
        for (m, s) in results.iter_mut().zip(samples) {
            (m.secs, m.spread) = (s.median, s.spread);
        }
        let mut buf = buf.into_inner();

        // The bandwidth bound: the same kernel over the same bytes (read and written once) on
        // threads started once and released per pass by a spinning hand-off, so neither thread
        // creation nor queueing is in it; the best pass of the best of 1..=cores threads.
        let (mut bound, mut bound_threads) = (f64::INFINITY, 1);
        // Up to the CPUs only: the probe's threads spin between passes.
        for t in 1..=cores.min(64) {
            ctx.step(format!(
                "image: memory bound, the kernel on {t} pre-started threads"
            ));
            // At least 64 passes: the best of one (the tiny size's) is no bound, nor of a few on a
            // loaded machine (its helper must find a CPU free).
            let secs = bandwidth_bound(&mut buf, t, (passes * ctx.repeat).max(64));
            if secs < bound {
                (bound, bound_threads) = (secs, t);
            }
        }
        // Traces of the telling runs, one pass each, recorded only here (never while timing).
        let last = ctx.threads.len() - 1;
        let t = ctx.threads[last];
        ctx.record(
            "image-thread-per-task",
            &format!("image, a thread per row ({height} threads), one pass"),
            || thread_per_task::for_each_row(&mut buf, pitch, &kernel),
        )?;
        ctx.record(
            &format!("image-work-sharing-{t}t"),
            &format!("image, the work-sharing pool of {t}, one pass"),
            || sharing[last].for_each_band(&mut buf, pitch, &kernel),
        )?
        .0?;
        ctx.record(
            &format!("image-threadlab-{t}t"),
            &format!("image, threadlab's for_each over rows on a pool of {t}, one pass"),
            || crate::lab::tl::for_each_row(&tl_pools[last], &mut buf, pitch, &kernel),
        )?;
        Ok(summarize(
            results,
            (bound, bound_threads, &flat),
            bytes,
            passes,
            ctx,
        ))
    }
}

/// The bandwidth bound: its best pass, at which thread count, and the median time per pass of
/// the kernel flat out per thread count (`throughput`).
type Bound<'a> = (f64, usize, &'a [(usize, f64)]);

fn summarize(
    results: Vec<Measured>,
    (bound, bound_threads, probe): Bound<'_>,
    bytes: usize,
    passes: usize,
    ctx: &Ctx,
) -> Outcome {
    // What one thread can do: the fastest of the passes that ran the kernel on one thread (the
    // serial loop on the calling thread, one fork-join band, one task on a pool) and of the
    // kernel flat out on one thread. Here they differed by up to 30% in one run (the calling
    // thread slowest, a pool worker fastest), and a speed-up measured against a slower one read
    // more than its threads can give.
    let one_thread = results
        .iter()
        .filter(|m| m.threads == 1 || m.tasks == Some(1))
        .min_by(|a, b| a.secs.total_cmp(&b.secs));
    let flat_one = probe.first().map_or(f64::INFINITY, |p| p.1);
    let serial = one_thread.map_or(flat_one, |m| m.secs.min(flat_one));
    let gbs = |secs: f64| 2.0 * bytes as f64 / secs / 1e9;
    let mut table = Table::new(
        format!(
            "seconds per pass over {:.1} MB (median of {} rounds of {passes} passes, variants interleaved)",
            bytes as f64 / 1e6,
            ctx.repeat
        ),
        &[
            "variant",
            "config",
            "per pass",
            "spread",
            "speedup",
            "GB/s moved",
            "of bound",
        ],
    )
    .text_columns(2);
    let mut rows = Vec::new();
    for m in &results {
        table.row(vec![
            m.variant.into(),
            m.config.clone(),
            fmt_secs(m.secs),
            format!("{:.0}%", 100.0 * m.spread),
            fmt_ratio(serial / m.secs),
            format!("{:.1}", gbs(m.secs)),
            format!("{:.0}%", 100.0 * bound / m.secs),
        ]);
        for (metric, value, unit) in [
            ("seconds_per_pass", m.secs, "s"),
            ("speedup_vs_serial", serial / m.secs, "x"),
            ("fraction_of_bandwidth_bound", bound / m.secs, "ratio"),
        ] {
            // The tiny image (487 KB) lives in the caches: no memory-bandwidth figure for it.
            if metric == "fraction_of_bandwidth_bound" && ctx.size == Size::Tiny {
                continue;
            }
            rows.push(ctx.row(m.variant, &m.config, m.threads, metric, value, unit));
        }
    }
    for &(t, secs) in probe {
        table.row(vec![
            "flat out".into(),
            format!(
                "the kernel on {}, each on its own rows",
                plural(t, "thread")
            ),
            fmt_secs(secs),
            "-".into(),
            fmt_ratio(serial / secs),
            format!("{:.1}", gbs(secs)),
            format!("{:.0}%", 100.0 * bound / secs),
        ]);
    }
    table.row(vec![
        "bound".into(),
        format!(
            "kernel on {} started before",
            plural(bound_threads, "thread")
        ),
        fmt_secs(bound),
        "-".into(),
        fmt_ratio(serial / bound),
        format!("{:.1}", gbs(bound)),
        "100%".into(),
    ]);
    let config = format!("the kernel on {bound_threads} pre-started threads");
    rows.push(ctx.row(
        "memory-bound",
        config,
        bound_threads,
        "seconds_per_pass",
        bound,
        "s",
    ));
    // The machine's own scaling: the one-thread time over the kernel flat out on t threads. No
    // variant on t threads can pass the kernel flat out on t threads, so this is the bound of
    // their speed-ups. It can pass t: here 2 threads flat out did 2.1–2.5× one thread's work
    // (one thread over the whole 48.8 MB image moved 23 GB/s, over 24 MB 38 GB/s: a cache
    // effect), and the lab's bounds allow a speed-up up to it.
    let mut scaling = Vec::new();
    for &(t, secs) in probe {
        rows.push(ctx.row(
            "memory-bound",
            format!("the kernel flat out on {}", plural(t, "thread")),
            t,
            crate::lab::bounds::MEMORY_SCALING,
            serial / secs,
            "x",
        ));
        scaling.push((t, serial / secs));
    }

    let mut chart = Chart::lines(
        "image-speedup",
        "image: speedup over one thread vs threads (fork-join) or tasks (pools)",
        "threads of fork-join, or tasks on a pool (log scale)",
        "speedup over one thread",
    );
    chart.log_x = true;
    chart.add(
        "fork-join",
        results
            .iter()
            .filter(|m| m.variant == "fork-join")
            .map(|m| (m.threads as f64, serial / m.secs))
            .collect(),
    );
    for v in ["thread-per-task", "work-sharing", "threadlab", "rayon"] {
        let pts: Vec<(f64, f64)> = results
            .iter()
            .filter(|m| m.variant == v && m.tasks.is_none())
            .map(|m| (m.threads as f64, serial / m.secs))
            .collect();
        if !pts.is_empty() {
            chart.add(v, pts);
        }
    }
    for v in ["work-sharing", "threadlab"] {
        let swept: Vec<&Measured> = results
            .iter()
            .filter(|m| m.variant == v && m.tasks.is_some())
            .collect();
        if let Some(first) = swept.first() {
            chart.add(
                format!("{v}, tasks on a pool of {}", first.threads),
                swept
                    .iter()
                    .map(|m| (m.tasks.unwrap_or(1) as f64, serial / m.secs))
                    .collect(),
            );
        }
    }
    chart.hlines.push(("one thread = 1×".into(), 1.0));
    chart.hlines.push(("memory bound".into(), serial / bound));

    let best = |v: &str| {
        results
            .iter()
            .filter(|m| m.variant == v)
            .min_by(|a, b| a.secs.total_cmp(&b.secs))
    };
    let fastest = results
        .iter()
        .min_by(|a, b| a.secs.total_cmp(&b.secs))
        .expect("image: at least the serial variant was measured");
    let per_row = best("thread-per-task");
    let fj_best = best("fork-join");
    let mut finding = format!(
        "The fastest variant was {} ({}) at {} per pass, {} the fastest one-thread pass and {:.0}% of the \
         memory-bandwidth bound (the same kernel over the same bytes on pre-started threads: {} per pass)",
        fastest.variant,
        fastest.config,
        fmt_secs(fastest.secs),
        fmt_ratio(serial / fastest.secs),
        100.0 * bound / fastest.secs,
        fmt_secs(bound)
    );
    if let Some(p) = per_row {
        finding += &format!(
            "; a thread per row ran {} slower than it ({})",
            fmt_ratio(p.secs / fastest.secs),
            fmt_secs(p.secs)
        );
    }
    if let Some(f) = fj_best {
        finding += &format!(
            "; fork-join peaked at {} threads with {} over one thread",
            f.threads,
            fmt_ratio(serial / f.secs)
        );
    }
    finding += ".";
    let mut notes = vec![format!(
        "Speedup is the one-thread time over the variant's time, where the one-thread time is the \
         fastest of the variants that ran the kernel on one thread and of the kernel flat out on \
         one thread: {} at {} per pass; \"flat out\" runs the kernel on t threads, each over its \
         own rows again and again for a fixed time, its rows one band or blocks of 16 rows \
         dealt round-robin, whichever is faster, and gives the time of one pass at their \
         combined rate, in its best round; spread is the rounds' range over their median \
         (slowest − fastest); \"of bound\" is the bound's time over the \
         variant's time. The bound runs the same kernel over the same bytes once per pass, on \
         the calling thread and threads started beforehand, released by a spinning hand-off: its best pass at the best thread count. \
         Noise can put a variant slightly above 100%.",
        match one_thread.filter(|m| m.secs <= flat_one) {
            Some(m) => format!("{} ({})", m.variant, m.config),
            None => "the kernel flat out on one thread".into(),
        },
        fmt_secs(serial),
    )];
    if let Some(&(t, x)) = scaling.iter().find(|&&(t, x)| {
        t > 1
            && x > t as f64
            && results
                .iter()
                .any(|m| m.threads == t && serial / m.secs > t as f64)
    }) {
        notes.push(format!(
            "Some speed-ups exceed their thread count: on this machine the kernel run flat out \
             on {t} threads (each on its own rows, no runtime, no waiting, in the same rounds) \
             does {} the work of one thread, so a memory-bound kernel scales past its threads \
             here; the lab's bounds allow a speed-up up to that figure.",
            fmt_ratio(x)
        ));
    }
    if ctx.size == Size::Tiny {
        notes.push(
            "Tiny size (403×302): figures are meaningless, only the plumbing is tested.".into(),
        );
    }
    Outcome {
        finding,
        notes,
        rows,
        tables: vec![table],
        charts: vec![chart],
    }
}
