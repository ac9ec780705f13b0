//! `rendezvous` (*Rendezvous Benchmark Analysis*, "Rendezvous Benchmark Analysis: When Threads (Don't) Meet"): a
//! producer task sends 1 M numbers (`--full` 10 M) through a zero-capacity channel to a consumer
//! task that sums them. The channel is the same on every runtime (`flume::bounded(0)`, which has
//! async and blocking ends and knows no executor), so what differs is how each runtime wakes
//! and parks its threads: threadlab under each [`WakePolicy`], Tokio, and two OS threads using
//! the channel's blocking ends. A last variant, `channel-only`, has no runtime at all: one
//! thread polls the two futures in turn with a waker that does nothing, which is the channel's
//! own cost per message, the floor under every runtime's figure. (What a runtime adds is not
//! simply the difference: on a shared VM the two vCPUs can differ in speed by more than that,
//! and the threads of the two variants need not run on the same one. The recorded runs' "where
//! the time went" table splits the workers' time instead.)
//!
//! Each variant in turn, with its runtime built for it, goes through `ctx.rounds` on its own: an
//! untimed warm-up of a tenth of the messages, then its timed runs back to back, at least five
//! (the comparison with Go is made on medians of five). Runs of the variants taking turns were
//! tried too: Tokio then ran 10-40% slower than back to back on the development VM, which would
//! flatter the ratios against it. The threadlab variants' recorded runs follow their timed ones.
//!
//! Figures: wall time per message, process CPU per message (getrusage, all threads), parks and
//! wake-ups per message (threadlab's `Pool::metrics`), allocations and bytes per message (the
//! binary's counting allocator, `alloc_count.rs`, over the whole process), and, from shorter
//! recorded runs (`threadlab::trace`), the share of the workers' awake time spent on the way to a park or back
//! from one (see [`Breakdown`], in `lab/worker_time.rs`).

use crate::fmt::{fmt_ns, fmt_ratio, fmt_small, group_thousands};
use crate::lab::peers::go::GoPeer;
use crate::lab::programs::rendezvous::{
    run_channel_only, run_os_threads, run_threadlab, run_tokio, Run, Via,
};
use crate::lab::report::{svg::Chart, table::Table};
use crate::lab::stats::median;
use crate::lab::worker_time::Breakdown;
use crate::lab::{Ctx, ExpResult, Experiment, Outcome, Row, Size, Turn, Variant};
use std::cell::RefCell;
use threadlab::{Pool, WakePolicy};

/// The experiment.
pub struct Rendezvous;

/// The variants in table order (stable names for results.json).
const VARIANTS: [&str; 10] = [
    "threadlab",
    "threadlab-eager",
    "threadlab-lazy",
    "tokio",
    "os-threads",
    "channel-only",
    "threadlab-channel",
    "threadlab-channel-eager",
    "threadlab-channel-lazy",
    "go",
];

/// Indexes into [`VARIANTS`].
const TOKIO: usize = 3;
const OS_THREADS: usize = 4;
const CHANNEL_ONLY: usize = 5;
const TL_CHANNEL: usize = 6;
const GO: usize = 9;

/// The threadlab variants' wake policy and channel.
fn policy_of(variant: &str) -> Option<(WakePolicy, Via)> {
    match variant {
        "threadlab" => Some((WakePolicy::Default, Via::Flume)),
        "threadlab-eager" => Some((WakePolicy::Eager, Via::Flume)),
        "threadlab-lazy" => Some((WakePolicy::Lazy, Via::Flume)),
        "threadlab-channel" => Some((WakePolicy::Default, Via::Threadlab)),
        "threadlab-channel-eager" => Some((WakePolicy::Eager, Via::Threadlab)),
        "threadlab-channel-lazy" => Some((WakePolicy::Lazy, Via::Threadlab)),
        _ => None,
    }
}

/// The fewest timed runs per variant, whatever `--repeat` says.
const MIN_ROUNDS: usize = 5;

/// Messages per run.
struct Sizes {
    /// A timed run's.
    n: u64,
    /// A recorded run's.
    recorded_n: u64,
    /// The two OS threads' (each message is a kernel wake-up).
    os_n: u64,
}

impl Sizes {
    fn of(size: Size) -> Sizes {
        let n: u64 = size.pick(5_000, 1_000_000, 10_000_000);
        Sizes {
            n,
            recorded_n: size.pick(2_000, 100_000, 100_000),
            // Two OS threads meet through the kernel for every message (about 10 µs each on the
            // development VM): they send a tenth of the messages, and are compared per message.
            os_n: size.pick(n, n / 10, n / 10),
        }
    }
}

/// What one pool size measured, by variant.
struct Measured {
    /// The timed runs.
    runs: Vec<Vec<Run>>,
    /// The recorded run with the median park/wake share (threadlab's variants only).
    breakdowns: Vec<Option<Breakdown>>,
    /// No `go` on the PATH: the go variant did not run.
    go_missing: bool,
}

impl Experiment for Rendezvous {
    fn name(&self) -> &'static str {
        "rendezvous"
    }

    fn description(&self) -> &'static str {
        "The producer and consumer tasks passing numbers through a zero-capacity \
         channel of fwbrasil’s “Rendezvous Benchmark Analysis: When Threads (Don’t) Meet”: time and CPU per message, parks and wake-ups, and the share of CPU spent \
         parking and waking, for threadlab's wake policies (with flume and with threadlab's own channel), Tokio, two OS threads and Go's unbuffered channel."
    }

    fn run(&self, ctx: &Ctx) -> ExpResult {
        let sizes = Sizes::of(ctx.size);
        let mut out = Outcome::default();
        let mut findings = Vec::new();
        for &threads in &ctx.threads {
            let measured = measure(ctx, threads, &sizes)?;
            // Per variant: median ns/message, CPU ns/message, parks, wake-ups, allocations and
            // bytes per message.
            let figures = per_message(&measured.runs, &sizes);
            let breakdowns = &measured.breakdowns;
            out.tables.push(figures_table(
                ctx,
                threads,
                &sizes,
                &figures,
                breakdowns,
                &mut out.rows,
            ));
            out.tables
                .push(where_time_table(threads, sizes.recorded_n, breakdowns));
            out.charts.extend(charts(threads, &figures));
            if measured.go_missing {
                out.notes.push("No `go` on the PATH: the go row is empty (install Go to compare with its unbuffered channel).".into());
            }
            findings.extend(sentences(threads, &figures, breakdowns));
        }
        out.notes.extend(notes(ctx.size, &sizes));
        out.finding = findings.join(" ");
        Ok(out)
    }
}

/// Every variant in turn, its runtime built for it: its timed runs and (threadlab's) its
/// recorded ones.
fn measure(ctx: &Ctx, threads: usize, sizes: &Sizes) -> Result<Measured, String> {
    let n = sizes.n;
    let mut m = Measured {
        runs: vec![Vec::new(); VARIANTS.len()],
        breakdowns: vec![None; VARIANTS.len()],
        go_missing: false,
    };
    for (i, variant) in VARIANTS.iter().enumerate() {
        let what = format!("{variant}, {threads} threads");
        ctx.step(format!("rendezvous: {what}"));
        m.runs[i] = match (policy_of(variant), i) {
            (Some((policy, via)), _) => {
                let pool = Pool::builder()
                    .threads(threads)
                    .wake_policy(policy)
                    .build()
                    .map(crate::lab::tl::Joined::new)
                    .map_err(|e| format!("threadlab pool: {e}"))?;
                let runs = back_to_back(ctx, &what, n, |n| run_threadlab(&pool, n, via))?;
                ctx.step(format!("rendezvous: {what}, recorded"));
                let recorded = runs.len();
                m.breakdowns[i] = Some(median_breakdown(&pool, sizes.recorded_n, via, recorded)?);
                runs
            }
            (None, TOKIO) => {
                let rt = crate::lab::peers::tokio_runtime(threads)?;
                back_to_back(ctx, &what, n, |n| run_tokio(&rt, n))?
            }
            (None, OS_THREADS) => back_to_back(ctx, &what, sizes.os_n, run_os_threads)?,
            (None, GO) => match GoPeer::start()? {
                Some(mut go) => back_to_back(ctx, &what, n, |n| go.run(n).map(Run::uncounted))?,
                None => {
                    m.go_missing = true;
                    Vec::new()
                }
            },
            (None, _) => back_to_back(ctx, &what, n, run_channel_only)?,
        };
    }
    Ok(m)
}

/// A variant's timed runs of `n` messages, back to back after a warm-up of a tenth of them
/// (`ctx.rounds` with this variant alone; see the module doc).
fn back_to_back(
    ctx: &Ctx,
    what: &str,
    n: u64,
    mut run: impl FnMut(u64) -> Result<Run, String>,
) -> Result<Vec<Run>, String> {
    let runs = RefCell::new(Vec::new());
    let mut variant = [Variant::by_turn(what, |turn| {
        let r = run(turn.tenth_in_warm_up(n))?;
        if turn != Turn::WarmUp {
            runs.borrow_mut().push(r);
        }
        Ok(r.secs)
    })];
    ctx.rounds_at_least(MIN_ROUNDS, what, &mut variant)?;
    drop(variant);
    Ok(runs.into_inner())
}

/// `runs` recorded runs of `n` messages on `pool`: the breakdown of the one with the median
/// park/wake share.
fn median_breakdown(pool: &Pool, n: u64, via: Via, runs: usize) -> Result<Breakdown, String> {
    let mut recorded = Vec::new();
    for _ in 0..runs.max(1) {
        let rec = threadlab::trace::try_start(threadlab::trace::Mode::Full)
            .map_err(|e| format!("cannot record: {e}"))?;
        let run = run_threadlab(pool, n, via);
        let trace = rec.stop();
        run?;
        recorded.push(Breakdown::of(&trace));
    }
    recorded.sort_by(|a, b| a.park_wake_share().total_cmp(&b.park_wake_share()));
    Ok(recorded[recorded.len() / 2])
}

/// Per variant, medians over its runs: ns, CPU ns, parks, wake-ups, allocations and bytes per
/// message (NaN where not measured).
fn per_message(runs: &[Vec<Run>], sizes: &Sizes) -> Vec<[f64; 6]> {
    VARIANTS
        .iter()
        .zip(runs)
        .map(|(variant, runs)| {
            let sent = if *variant == "os-threads" {
                sizes.os_n
            } else {
                sizes.n
            };
            let per_msg = |f: fn(&Run) -> f64, scale: f64| {
                let mut xs: Vec<f64> = runs.iter().map(|r| f(r) * scale / sent as f64).collect();
                median(&mut xs)
            };
            [
                per_msg(|r| r.secs, 1e9),
                per_msg(|r| r.cpu_secs, 1e9),
                per_msg(|r| r.parks, 1.0),
                per_msg(|r| r.wakeups, 1.0),
                per_msg(|r| r.allocs.per(1).0, 1.0),
                per_msg(|r| r.allocs.per(1).1, 1.0),
            ]
        })
        .collect()
}

/// The per-message table against Tokio, and the rows.
fn figures_table(
    ctx: &Ctx,
    threads: usize,
    sizes: &Sizes,
    figures: &[[f64; 6]],
    breakdowns: &[Option<Breakdown>],
    rows: &mut Vec<Row>,
) -> Table {
    let config = format!("{} messages", group_thousands(sizes.n));
    let rounds = ctx.repeat.max(MIN_ROUNDS);
    let tokio = figures[TOKIO];
    let mut table = Table::new(
        format!(
            "{config} through flume::bounded(0) (threadlab-channel*: threadlab::channel::bounded(0); go: an unbuffered chan, GOMAXPROCS=2); pools of {threads} threads (OS threads: 2; channel-only: this thread); medians of {rounds} runs after a warm-up; park/wake share: median of {rounds} recorded runs of {} messages",
            group_thousands(sizes.recorded_n)
        ),
        &[
            "variant",
            "ns/msg",
            "CPU ns/msg",
            "parks/msg",
            "wake-ups/msg",
            "allocs/msg",
            "bytes/msg",
            "park/wake % of worker CPU",
            "time vs tokio",
            "CPU vs tokio",
        ],
    );
    for (i, variant) in VARIANTS.iter().enumerate() {
        let [ns, cpu, parks, wakeups, allocs, bytes] = figures[i];
        let share = breakdowns[i].map(|b| b.park_wake_share() * 100.0);
        table.row(vec![
            (*variant).into(),
            fmt_ns(ns),
            fmt_ns(cpu),
            fmt_small(parks),
            fmt_small(wakeups),
            fmt_small(allocs),
            fmt_small(bytes),
            share.map_or("-".into(), |s| format!("{s:.1}")),
            fmt_ratio(ns / tokio[0]),
            fmt_ratio(cpu / tokio[1]),
        ]);
        let (variant_threads, variant_config) = match i {
            OS_THREADS => (2, format!("{} messages", group_thousands(sizes.os_n))),
            GO => (2, config.clone()),
            CHANNEL_ONLY => (1, config.clone()),
            _ => (threads, config.clone()),
        };
        let mut push = |metric: &str, value: f64, unit: &str| {
            if value.is_finite() {
                let c = variant_config.clone();
                rows.push(ctx.row(variant, c, variant_threads, metric, value, unit));
            }
        };
        push("ns_per_message", ns, "ns");
        push("cpu_ns_per_message", cpu, "ns");
        push("parks_per_message", parks, "parks");
        push("wakeups_per_message", wakeups, "wake-ups");
        push("allocs_per_message", allocs, "allocations");
        push("bytes_per_message", bytes, "bytes");
        if let Some(s) = share {
            push("park_wake_share", s, "%");
        }
    }
    table
}

/// Where the workers' CPU time went in the recorded runs of threadlab's variants.
fn where_time_table(threads: usize, recorded_n: u64, breakdowns: &[Option<Breakdown>]) -> Table {
    let mut where_time = Table::new(
        format!(
            "where the workers' CPU time went (recorded run of {} messages with the median park/wake share, {threads} threads; preemption taken out)",
            group_thousands(recorded_n)
        ),
        &[
            "variant",
            "worker CPU ns/msg",
            "preempted ns/msg",
            "in polls %",
            "scheduling %",
            "park/wake %",
            "polls/msg",
            "ns/poll",
            "parks/msg",
            "wake-ups sent/msg",
        ],
    );
    for (variant, b) in VARIANTS.iter().zip(breakdowns) {
        let Some(b) = b else { continue };
        let m = recorded_n as f64;
        let pct = |x: f64| {
            if b.awake_ns > 0.0 {
                format!("{:.1}", 100.0 * x / b.awake_ns)
            } else {
                "-".into()
            }
        };
        where_time.row(vec![
            (*variant).into(),
            fmt_ns(b.awake_ns / m),
            fmt_ns(b.preempted_ns / m),
            pct(b.task_ns),
            pct(b.sched_ns),
            pct(b.park_wake_ns),
            fmt_small(b.polls as f64 / m),
            fmt_ns(if b.polls > 0 {
                b.task_ns / b.polls as f64
            } else {
                f64::NAN
            }),
            fmt_small(b.parks as f64 / m),
            fmt_small(b.wakes as f64 / m),
        ]);
    }
    where_time
}

/// Time and CPU per message; allocations and bytes per message, a chart each.
fn charts(threads: usize, figures: &[[f64; 6]]) -> Vec<Chart> {
    let names = || VARIANTS.iter().map(|v| v.to_string()).collect();
    let mut chart = Chart::bars(
        &format!("rendezvous-per-message-{threads}t"),
        &format!("rendezvous: per message, pools of {threads} threads"),
        names(),
        "ns per message",
    );
    chart.log_y = true;
    for (k, name) in ["wall time", "CPU time"].iter().enumerate() {
        chart.add_by_index(*name, figures.iter().map(|f| f[k]));
    }
    let mut charts = vec![chart];
    // One unit per axis: allocations (about 1 a message) and bytes (tens) on one axis
    // made the allocation bars vanish, so each has its chart.
    for (k, file, unit) in [(4, "alloc", "allocations"), (5, "bytes", "bytes")] {
        let mut chart = Chart::bars(
            &format!("rendezvous-{file}-per-message-{threads}t"),
            &format!(
                "rendezvous: {unit} per message, pools of {threads} threads (lower is better)"
            ),
            names(),
            &format!("{unit} per message"),
        );
        chart.add_by_index(unit, figures.iter().map(|f| f[k]));
        charts.push(chart);
    }
    charts
}

/// One pool size's two sentences: threadlab's channel against Tokio and Go; the wake policies.
fn sentences(
    threads: usize,
    figures: &[[f64; 6]],
    breakdowns: &[Option<Breakdown>],
) -> [String; 2] {
    let (tokio, channel) = (figures[TOKIO], figures[CHANNEL_ONLY]);
    let (tc, go) = (figures[TL_CHANNEL], figures[GO]);
    let tl = figures[0];
    let share = breakdowns[0].map_or(f64::NAN, |b| b.park_wake_share() * 100.0);
    let eager_share = breakdowns[1].map_or(f64::NAN, |b| b.park_wake_share() * 100.0);
    [
        format!(
            "threadlab's own channel (default policy) passed a message in {} ns and {} CPU ns, {} Tokio + flume's time; Go's unbuffered channel took {} ns and {} CPU ns (threadlab's channel: {} its time, {} its CPU).",
            fmt_ns(tc[0]),
            fmt_ns(tc[1]),
            fmt_ratio(tc[0] / tokio[0]),
            fmt_ns(go[0]),
            fmt_ns(go[1]),
            fmt_ratio(tc[0] / go[0]),
            fmt_ratio(tc[1] / go[1]),
        ),
        format!(
            "On {threads} thread(s), threadlab's default policy passed a message in {} ns, {} Tokio's time ({} ns) and {} its CPU, with {} wake-ups per message and {share:.1}% of its workers' CPU time on the way into or out of a park; waking a worker for every task (eager) cost {} ns and {} CPU ns per message with {eager_share:.1}% in park/wake, and two OS threads {} ns. The channel alone (one thread polling both futures, no runtime) took {} ns, {} Tokio's time.",
            fmt_ns(tl[0]),
            fmt_ratio(tl[0] / tokio[0]),
            fmt_ns(tokio[0]),
            fmt_ratio(tl[1] / tokio[1]),
            fmt_small(tl[3]),
            fmt_ns(figures[1][0]),
            fmt_ns(figures[1][1]),
            fmt_ns(figures[OS_THREADS][0]),
            fmt_ns(channel[0]),
            fmt_ratio(channel[0] / tokio[0]),
        ),
    ]
}

/// What every figure counts, and the sizes.
fn notes(size: Size, sizes: &Sizes) -> Vec<String> {
    let mut notes = vec![
        "CPU per message is the whole process's (getrusage: every worker, the runtime's other threads and the waiting main thread). Parks and wake-ups per message come from Pool::metrics (a lazy-policy park that ends by its 1 ms timeout counts as a park, not a wake-up); Tokio and OS threads expose no such counters. Allocations and bytes per message: every allocation of the whole process during the timed runs (the binary's counting global allocator, `alloc_count.rs`; a reallocation counts as one allocation of its new size), divided by the messages."
            .into(),
        "Park/wake share: separate, recorded runs (threadlab::trace) cut each worker's timeline at its events; time spinning, from the end of a task to a park or spin that follows it, and from a park's end to the next task counts as park/wake, and is divided by the workers' CPU time (awake, not parked). The time the OS kept a worker runnable but off the CPU (the recorder's schedstat samples) is taken out between samples, from the longest silences first, so a preemption on a busy machine is not counted as work. The waker's own futex call happens inside the waking task's span and is counted as task time; the wake-ups/msg column shows how often it happens; the recorder's own cost (about 10 ns per event, three events per poll) lands in the polls and the scheduling."
            .into(),
    ];
    if sizes.os_n != sizes.n {
        notes.push(format!(
            "The two OS threads sent {} messages (a tenth): each message is a kernel wake-up; their figures are per message like the others'.",
            group_thousands(sizes.os_n)
        ));
    }
    if size != Size::Full {
        notes.push(format!(
            "Quick size: {} messages; --full sends 10,000,000 as in “Rendezvous Benchmark Analysis”.",
            group_thousands(sizes.n)
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_pool_run_breaks_down() {
        let pool = Pool::builder().threads(2).build().unwrap();
        let rec = threadlab::trace::try_start(threadlab::trace::Mode::Full);
        let Ok(rec) = rec else { return }; // another test is recording
        let run = run_threadlab(&pool, 500, Via::Flume).unwrap();
        let b = Breakdown::of(&rec.stop());
        assert!(run.secs > 0.0);
        assert!(b.polls >= 2, "{b:?}");
        assert!(b.awake_ns >= b.task_ns && b.task_ns > 0.0, "{b:?}");
        let parts = b.task_ns + b.sched_ns + b.park_wake_ns;
        assert!(
            (parts - b.awake_ns).abs() <= 1e-6 * b.awake_ns.max(1.0),
            "{b:?}"
        );
        assert!((0.0..=1.0).contains(&b.park_wake_share()));
    }
}
