//! `jobs` (*The overhead of spawning threads*): 1/4/8/16 queues, each holding one job that requeues itself, 100,000
//! jobs in all (10 M with `--full`). One thread; a dedicated thread per queue; a thread per job
//! (plain and verified, on fewer jobs); serial queues on the threadlab pool; the pool's global
//! queue; Rayon; Tokio. Besides the time, the allocations and bytes per job of every variant
//! (the binary's counting allocator, `alloc_count.rs`, over the whole process during the timed
//! runs).

use crate::baselines::dedicated_thread::DedicatedThread;
use crate::fmt::{fmt_ns, fmt_ratio, group_thousands, plural};
use crate::lab::alloc_count::{self, Counts};
use crate::lab::peers::{self, Rayon, Tokio};
use crate::lab::programs::chain::{self, ThreadPerJob};
use crate::lab::report::{svg::Chart, table::Table};
use crate::lab::{Ctx, ExpResult, Experiment, Outcome, Row, Turn, Variant};
use std::cell::RefCell;
use std::sync::Arc;
use std::time::Duration;

/// The experiment.
pub struct Jobs;

/// The variants in table order (stable names for results.json).
const VARIANTS: [&str; 8] = [
    "serial",
    "dedicated-thread",
    "thread-per-task",
    "thread-per-task-verified",
    "serial-queue",
    "global-queue",
    "rayon",
    "tokio",
];

/// The tables' columns: the configuration, then the variants.
const HEADERS: [&str; 9] = [
    "config",
    "single",
    "dedicated",
    "thread/job",
    "thread/job+ver",
    "serial-queue",
    "global-queue",
    "rayon",
    "tokio",
];

/// How long a chain may take before the lab gives up on it.
const TIMEOUT: Duration = Duration::from_secs(300);

impl Experiment for Jobs {
    fn name(&self) -> &'static str {
        "jobs"
    }

    fn description(&self) -> &'static str {
        "The self-requeueing empty jobs on 1/4/8/16 queues of Matt Gallagher’s “The overhead of spawning threads” (Cocoa with Love): what queueing a job \
         costs on one thread, a dedicated thread per queue, a thread per job, serial queues, the \
         pool's global queue, Rayon and Tokio."
    }

    fn run(&self, ctx: &Ctx) -> ExpResult {
        let total: u64 = ctx.size.pick(2_000, 100_000, 10_000_000);
        // A thread per job costs tens of microseconds each: run 1/10 (1/100 in full) of the jobs.
        let thread_scale: u64 = ctx.size.pick(10, 10, 100);
        let sizes = Sizes {
            total,
            thread_scale,
        };
        let mut out = Outcome::default();
        let mut findings = Vec::new();
        for &threads in &ctx.threads {
            let queues = Queues::new(threads)?;
            let mut grid = Vec::new();
            for n in [1usize, 4, 8, 16] {
                grid.push(time(ctx, threads, n, &queues, &sizes, &mut out.rows)?);
            }
            if threads == ctx.threads[0] {
                record_traces(ctx, &queues.pool, threads)?;
            }
            out.tables.extend(tables(threads, &sizes, &grid));
            out.charts.extend(charts(threads, &grid));
            findings.push(finding(threads, thread_scale, &grid));
        }
        out.finding = findings.join(" ");
        out.notes = vec![
                format!(
                    "The thread-per-task variants ran 1/{thread_scale} of the jobs (a thread costs tens of microseconds); their ns per job is comparable, their seconds are for the smaller count. \"verified\" waits until each new thread signals it started (the 10 s check of “The overhead of spawning threads”)."
                ),
                "Allocations and bytes per job count every allocation of the process during a variant's timed runs (the binary's counting allocator; a reallocation counts as one allocation of its new size), divided by the jobs run; the dedicated threads are started before the count. Each job is one boxed closure (the job object of “The overhead of spawning threads”), so one allocation per job is the floor.".into(),
        ];
        Ok(out)
    }
}

/// The jobs in all, and the thread-per-task variants' share of them (1 in `thread_scale`).
struct Sizes {
    total: u64,
    thread_scale: u64,
}

/// The runtimes with queues to chain jobs through, for one pool size.
struct Queues {
    pool: Arc<crate::lab::tl::Joined>,
    rayon: Arc<rayon::ThreadPool>,
    rt: tokio::runtime::Runtime,
    /// Up to 16, one per queue (started before any count).
    dedicated: Vec<DedicatedThread>,
}

impl Queues {
    fn new(threads: usize) -> Result<Queues, String> {
        Ok(Queues {
            pool: crate::lab::tl::shared_pool(threads)?,
            rayon: peers::rayon_pool(threads)?,
            rt: peers::tokio_runtime(threads)?,
            dedicated: dedicated_threads(16)?,
        })
    }
}

/// One row of the grid: a queue count, and per variant the ns per job and the (allocations,
/// bytes) per job.
struct Cell {
    queues: usize,
    ns: Vec<f64>,
    allocs: Vec<(f64, f64)>,
}

/// Every variant with `queues` queues, in interleaved rounds, and their rows.
fn time(
    ctx: &Ctx,
    threads: usize,
    queues: usize,
    q: &Queues,
    sizes: &Sizes,
    rows: &mut Vec<Row>,
) -> Result<Cell, String> {
    let per_queue = sizes.total / queues as u64;
    let thread_per_queue = (sizes.total / sizes.thread_scale) / queues as u64;
    // What each variant's timed runs allocated (the warm-up left out).
    let counted: Vec<RefCell<(usize, Counts)>> =
        (0..VARIANTS.len()).map(|_| RefCell::default()).collect();
    let counting = |i: usize, run| {
        counting(
            format!("{queues} queues, {}", VARIANTS[i]),
            &counted[i],
            run,
        )
    };
    let verify = |verify| vec![ThreadPerJob { verify }; queues];
    let dedicated: Vec<_> = q.dedicated[..queues].iter().map(|t| t.handle()).collect();
    let mut variants = vec![
        counting(
            0,
            Box::new(move |turn: Turn| {
                Ok(chain::run_one_thread(
                    queues,
                    turn.tenth_in_warm_up(per_queue),
                ))
            }),
        ),
        counting(1, chains(&dedicated, per_queue)),
        counting(2, chains(&verify(false), thread_per_queue)),
        counting(3, chains(&verify(true), thread_per_queue)),
        counting(
            4,
            chains(&crate::lab::tl::serial_queues(&q.pool, queues), per_queue),
        ),
        counting(
            5,
            chains(
                &vec![crate::lab::tl::global_queue(&q.pool); queues],
                per_queue,
            ),
        ),
        counting(6, chains(&vec![Rayon(q.rayon.clone()); queues], per_queue)),
        counting(
            7,
            chains(&vec![Tokio(q.rt.handle().clone()); queues], per_queue),
        ),
    ];
    let samples = ctx.rounds(&format!("{threads} threads"), &mut variants)?;
    drop(variants);
    let mut cell = Cell {
        queues,
        ns: Vec::new(),
        allocs: Vec::new(),
    };
    for ((i, variant), (s, (runs, allocs))) in VARIANTS.iter().enumerate().zip(
        samples
            .iter()
            .zip(counted.into_iter().map(RefCell::into_inner)),
    ) {
        let per = if i == 2 || i == 3 {
            thread_per_queue
        } else {
            per_queue
        };
        let n = per * queues as u64;
        let (allocs_per_job, bytes_per_job) = allocs.per(n * runs as u64);
        cell.allocs.push((allocs_per_job, bytes_per_job));
        let per_job = s.median * 1e9 / n as f64;
        cell.ns.push(per_job);
        let config = format!("{queues} queues × {} jobs", group_thousands(per));
        let variant_threads = match i {
            0 => 1,
            1 => queues,
            2 | 3 => n as usize,
            _ => threads,
        };
        for (metric, value, unit) in [
            ("seconds", s.median, "s"),
            ("ns_per_job", per_job, "ns"),
            ("allocs_per_job", allocs_per_job, "allocations"),
            ("bytes_per_job", bytes_per_job, "bytes"),
        ] {
            if value.is_finite() {
                rows.push(ctx.row(variant, &config, variant_threads, metric, value, unit));
            }
        }
    }
    Ok(cell)
}

/// Seconds for all the jobs, ns per job, and allocations and bytes per job, by queue count.
fn tables(threads: usize, sizes: &Sizes, grid: &[Cell]) -> [Table; 3] {
    let (total, thread_scale) = (sizes.total, sizes.thread_scale);
    let secs_of = |ns: f64, n: u64| ns * n as f64 / 1e9;
    let mut t_secs = Table::new(
        format!(
            "seconds for {} jobs in all (thread-per-task: {} jobs, scaled ×{thread_scale}); pools of {threads}",
            group_thousands(total),
            group_thousands(total / thread_scale)
        ),
        &HEADERS,
    );
    let mut t_ns = Table::new(format!("ns per job; pools of {threads}"), &HEADERS);
    let mut t_alloc = Table::new(
        format!(
            "allocations / bytes per job (the whole process during the timed runs); pools of {threads}"
        ),
        &HEADERS,
    );
    for cell in grid {
        let label = plural(cell.queues, "queue");
        let mut srow = vec![label.clone()];
        let mut nrow = vec![label.clone()];
        for (i, v) in cell.ns.iter().enumerate() {
            // Thread-per-job times are shown for their scaled job count.
            let n = if VARIANTS[i].starts_with("thread-per-task") {
                total / thread_scale
            } else {
                total
            };
            srow.push(format!("{:.4}", secs_of(*v, n)));
            nrow.push(fmt_ns(*v));
        }
        t_secs.row(srow);
        t_ns.row(nrow);
        let mut row = vec![label];
        row.extend(cell.allocs.iter().map(|(a, b)| fmt_alloc(*a, *b)));
        t_alloc.row(row);
    }
    [t_secs, t_ns, t_alloc]
}

/// ns per job and bytes per job, by queue count.
fn charts(threads: usize, grid: &[Cell]) -> [Chart; 2] {
    let labels = || grid.iter().map(|c| plural(c.queues, "queue")).collect();
    let mut ns = Chart::bars(
        &format!("jobs-ns-per-job-{threads}t"),
        &format!("jobs: ns per job (pools of {threads} threads)"),
        labels(),
        "ns per job",
    );
    let mut bytes = Chart::bars(
        &format!("jobs-bytes-per-job-{threads}t"),
        &format!("jobs: bytes allocated per job (pools of {threads} threads; lower is better)"),
        labels(),
        "bytes per job",
    );
    for (i, v) in VARIANTS.iter().enumerate() {
        ns.add_by_index(*v, grid.iter().map(|c| c.ns[i]));
        bytes.add_by_index(*v, grid.iter().map(|c| c.allocs[i].1));
    }
    ns.log_y = true;
    bytes.log_y = true;
    [ns, bytes]
}

/// The finding, at 8 queues (the article's sweet spot on its 8 hardware threads).
fn finding(threads: usize, thread_scale: u64, grid: &[Cell]) -> String {
    let at8 = &grid[2].ns;
    let idx = |name: &str| VARIANTS.iter().position(|v| *v == name).unwrap_or(0);
    let threaded = [1usize, 4, 5, 6, 7];
    let best = threaded
        .iter()
        .copied()
        .min_by(|&a, &b| at8[a].total_cmp(&at8[b]))
        .unwrap_or(1);
    format!(
        "With 8 queues on {threads} thread(s), the cheapest threaded way to queue a job was {} at {} ns per job; a thread per job cost {} as much ({} ns, measured on 1/{thread_scale} of the jobs) and a dedicated thread per queue {} as much ({} ns); one thread with no threads at all needed {} ns.",
        VARIANTS[best],
        fmt_ns(at8[best]),
        fmt_ratio(at8[idx("thread-per-task")] / at8[best]),
        fmt_ns(at8[idx("thread-per-task")]),
        fmt_ratio(at8[idx("dedicated-thread")] / at8[best]),
        fmt_ns(at8[idx("dedicated-thread")]),
        fmt_ns(at8[idx("serial")]),
    )
}

type Run<'a> = Box<dyn FnMut(Turn) -> Result<f64, String> + 'a>;

/// A variant that also counts what its rounds allocate into `counted` (rounds, counts), the
/// warm-up left out.
fn counting<'a>(
    label: String,
    counted: &'a RefCell<(usize, Counts)>,
    mut run: Run<'a>,
) -> Variant<'a> {
    Variant::by_turn(label, move |turn| {
        let (secs, c) = alloc_count::measure(|| run(turn));
        if turn != Turn::WarmUp {
            let mut counted = counted.borrow_mut();
            counted.0 += 1;
            counted.1 = Counts {
                allocs: counted.1.allocs + c.allocs,
                bytes: counted.1.bytes + c.bytes,
            };
        }
        secs
    })
}

/// Timed runs of a chain of `per_queue` jobs on each of `queues` (the warm-up a tenth as long).
fn chains<'a, S: chain::Spawn>(queues: &[S], per_queue: u64) -> Run<'a> {
    let queues = queues.to_vec();
    Box::new(move |turn| chain::run(&queues, turn.tenth_in_warm_up(per_queue), TIMEOUT))
}

/// `n` dedicated threads, one per queue.
fn dedicated_threads(n: usize) -> Result<Vec<DedicatedThread>, String> {
    (0..n)
        .map(|i| DedicatedThread::new(&format!("queue #{i}")))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("dedicated thread: {e}"))
}

/// Short recorded runs of the telling variants (4 queues; a thread per job on 100 jobs, the
/// others on 2,000), on the first pool size, after the timed runs.
fn record_traces(
    ctx: &Ctx,
    pool: &Arc<crate::lab::tl::Joined>,
    threads: usize,
) -> Result<(), String> {
    let timeout = TIMEOUT;
    let per_queue = 500;
    let (r, _) = ctx.record(
        "jobs-thread-per-task",
        "jobs, a thread per job, 4 queues × 25 jobs",
        || chain::run(&[ThreadPerJob { verify: false }; 4], 25, timeout),
    )?;
    r?;
    let dedicated = dedicated_threads(4)?;
    let handles: Vec<_> = dedicated.iter().map(|t| t.handle()).collect();
    let (r, _) = ctx.record(
        "jobs-dedicated-thread",
        &format!("jobs, a dedicated thread per queue, 4 queues × {per_queue} jobs"),
        || chain::run(&handles, per_queue, timeout),
    )?;
    r?;
    let serial = crate::lab::tl::serial_queues(pool, 4);
    let (r, _) = ctx.record(
        &format!("jobs-serial-queue-{threads}t"),
        &format!("jobs, serial queues on a pool of {threads}, 4 queues × {per_queue} jobs"),
        || chain::run(&serial, per_queue, timeout),
    )?;
    r?;
    let global = vec![crate::lab::tl::global_queue(pool); 4];
    let (r, _) = ctx.record(
        &format!("jobs-global-queue-{threads}t"),
        &format!(
            "jobs, the pool's global queue on a pool of {threads}, 4 queues × {per_queue} jobs"
        ),
        || chain::run(&global, per_queue, timeout),
    )?;
    r?;
    Ok(())
}

/// `allocations / bytes` per job, or `-` when not counted.
fn fmt_alloc(allocs: f64, bytes: f64) -> String {
    if allocs.is_finite() {
        format!("{allocs:.2} / {bytes:.0}")
    } else {
        "-".into()
    }
}
