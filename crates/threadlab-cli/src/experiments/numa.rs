//! `numa` (third seed, "NUMA Optimizations"): the same static-schedule parallel sum over an
//! array whose pages were first touched (a) by one thread, (b) by the workers in no particular
//! order, or (c) by the workers with the same static schedule as the sum. Linux places a page on
//! the NUMA node of the thread that first touches it, so on a machine with several nodes (c)
//! makes every read local, (a) puts all pages on one node, and (b) scatters them. On one node
//! every page is local and no difference is expected; the experiment says so.
//!
//! The layout is read from `/sys/devices/system/node/node*/cpulist`. With several nodes the
//! workers are pinned (`sched_setaffinity`, from each worker via `Pool::install_on`) in two
//! placements, as in the seed: spread over the nodes, and all on the first node.

use crate::fmt;
use crate::fmt::fmt_bytes;
use crate::fmt::fmt_secs;
use crate::lab::{Ctx, ExpResult, Experiment, Outcome};
use crate::machine::parse_cpu_list;
use crate::measure::median;
use crate::report::{svg::Chart, svg::Series, table::Table};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;
use threadlab::Pool;

/// The experiment.
pub struct Numa;

/// Variant names (results.json) in table order.
const VARIANTS: [&str; 3] = ["single", "unordered", "static"];

/// Sums per initialisation; the median is the run's figure (one pass is short and noisy).
const SUM_PASSES: usize = 7;

/// Elements of one 4 KiB page.
const PAGE_ELEMS: usize = 4096 / std::mem::size_of::<u64>();

/// The NUMA nodes and their CPUs, from /sys (empty if the kernel does not say).
fn numa_nodes() -> Vec<(usize, Vec<usize>)> {
    let Ok(dir) = std::fs::read_dir("/sys/devices/system/node") else {
        return Vec::new();
    };
    let mut nodes: Vec<(usize, Vec<usize>)> = dir
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let id = name.strip_prefix("node")?.parse::<usize>().ok()?;
            let list = std::fs::read_to_string(e.path().join("cpulist")).ok()?;
            let cpus = parse_cpu_list(list.trim());
            (!cpus.is_empty()).then_some((id, cpus))
        })
        .collect();
    nodes.sort();
    nodes
}

/// Where to put `threads` workers: `(name, the CPUs worker k may run on)`. With several nodes,
/// spread over all of them (worker k on node k mod nodes) and all on the first, as in the seed;
/// with one node (or none known), one unpinned placement.
fn placements(nodes: &[(usize, Vec<usize>)], threads: usize) -> Vec<(String, Vec<Vec<usize>>)> {
    if nodes.len() < 2 {
        return vec![("one node, unpinned".into(), Vec::new())];
    }
    let spread = (0..threads)
        .map(|k| nodes[k % nodes.len()].1.clone())
        .collect();
    let first = (0..threads).map(|_| nodes[0].1.clone()).collect();
    vec![
        (format!("spread over {} nodes", nodes.len()), spread),
        (format!("all on node {}", nodes[0].0), first),
    ]
}

/// Restricts the calling thread to `cpus`.
fn pin_current_thread(cpus: &[usize]) -> Result<(), String> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET writes bits within it (CPUs
    // beyond its capacity are skipped); sched_setaffinity reads it for the calling thread (0).
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
            libc::CPU_SET(c, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(format!(
            "sched_setaffinity to cpus {cpus:?} failed: {}",
            std::io::Error::last_os_error()
        ))
    }
}

/// The value stored at index `i` (its sum over `0..n` is known in closed form).
fn value(i: usize) -> u64 {
    i as u64
}

/// First-touches a fresh zeroed array of `len` elements the way `variant` says and returns it
/// with the initialisation time. `vec![0; n]` of this size is a fresh anonymous mapping whose
/// pages do not exist until written.
fn init(pool: &Pool, variant: &str, len: usize, seed: u64) -> Result<(Vec<u64>, f64), String> {
    let mut v = vec![0u64; len];
    let t = Instant::now();
    match variant {
        "single" => pool
            .install_on(0, || {
                v.iter_mut().enumerate().for_each(|(i, x)| *x = value(i));
            })
            .map_err(|e| e.to_string())?,
        "unordered" => {
            // Pages in a shuffled order, split adaptively between the workers: a page lands on
            // whichever worker's node happens to touch it.
            let mut pages: Vec<(usize, &mut [u64])> = v
                .chunks_mut(PAGE_ELEMS)
                .enumerate()
                .map(|(p, s)| (p * PAGE_ELEMS, s))
                .collect();
            let mut x = seed | 1;
            for i in (1..pages.len()).rev() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                pages.swap(i, (x % (i as u64 + 1)) as usize);
            }
            pool.install(|| {
                threadlab::for_each_mut(&mut pages, |(start, page)| {
                    for (k, x) in page.iter_mut().enumerate() {
                        *x = value(*start + k);
                    }
                })
            });
        }
        _ => pool.install(|| threadlab::for_each_static_mut(&mut v, |i, x| *x = value(i))),
    }
    Ok((v, t.elapsed().as_secs_f64()))
}

/// The seed's kernel: a static-schedule parallel sum; checked against the closed form.
fn sum(pool: &Pool, v: &[u64]) -> Result<f64, String> {
    let total = AtomicU64::new(0);
    let t = Instant::now();
    pool.install(|| {
        threadlab::for_each_static_block(0..v.len(), |block| {
            let part = v[block].iter().fold(0u64, |a, &x| a.wrapping_add(x));
            // Relaxed: one add per block; read after the loop returned.
            total.fetch_add(part, Ordering::Relaxed);
        })
    });
    let secs = t.elapsed().as_secs_f64();
    let n = v.len() as u64;
    let expected = (n.wrapping_mul(n.wrapping_sub(1))) / 2;
    if total.into_inner() != expected {
        return Err("the parallel sum came out wrong: the loop lost or repeated a block".into());
    }
    Ok(secs)
}

impl Experiment for Numa {
    fn name(&self) -> &'static str {
        "numa"
    }

    fn description(&self) -> &'static str {
        "The third seed's first-touch experiment: a static-schedule parallel sum after \
         single-thread, unordered parallel, and static parallel initialisation, on this \
         machine's NUMA layout (read from /sys)."
    }

    fn run(&self, ctx: &Ctx) -> ExpResult {
        let bytes: usize = ctx.size.pick(4 << 20, 256 << 20, 4 << 30);
        let len = bytes / std::mem::size_of::<u64>();
        let nodes = numa_nodes();
        let mut rows = Vec::new();
        let mut tables = Vec::new();
        let mut charts = Vec::new();
        let mut findings = Vec::new();
        let mut notes = Vec::new();
        for &threads in &ctx.threads {
            for (placement, cpus) in &placements(&nodes, threads) {
                let pool = crate::tl::pool(threads)?;
                for (k, set) in cpus.iter().enumerate() {
                    pool.install_on(k, || pin_current_thread(set))
                        .map_err(|e| e.to_string())??;
                }
                // Per variant: init and sum seconds over the repeats.
                let mut inits: [Vec<f64>; 3] = Default::default();
                let mut sums: [Vec<f64>; 3] = Default::default();
                for r in 0..ctx.repeat {
                    // Alternate the order, so a drift in the machine's load favours no variant.
                    let order: Vec<usize> = if r % 2 == 0 {
                        vec![0, 1, 2]
                    } else {
                        vec![2, 1, 0]
                    };
                    for v in order {
                        let name = VARIANTS[v];
                        ctx.step(format!(
                            "numa: {name} init, {placement}, {threads} threads, run {}",
                            r + 1
                        ));
                        let (data, init_secs) = init(&pool, name, len, r as u64 + 11)?;
                        // Several passes; the median is the figure of this run.
                        let mut passes = Vec::new();
                        for _ in 0..SUM_PASSES {
                            passes.push(sum(&pool, &data)?);
                        }
                        inits[v].push(init_secs);
                        sums[v].push(median(&mut passes));
                    }
                }
                let init_s: Vec<f64> = inits.iter_mut().map(|x| median(x)).collect();
                let sum_s: Vec<f64> = sums.iter_mut().map(|x| median(x)).collect();
                let config = format!("{}, {placement}", fmt_bytes(bytes as u64));
                let mut table = Table::new(
                    format!(
                        "{} array of u64: first touch, then a static-schedule sum; {threads} workers, {placement} (medians of {} runs, each the median of {SUM_PASSES} sums)",
                        fmt_bytes(bytes as u64),
                        ctx.repeat
                    ),
                    &["initialisation", "init time", "sum time", "sum ÷ static's sum", "sum bandwidth"],
                );
                for (v, name) in VARIANTS.iter().enumerate() {
                    table.row(vec![
                        (*name).into(),
                        fmt_secs(init_s[v]),
                        fmt_secs(sum_s[v]),
                        fmt::fmt_ratio(sum_s[v] / sum_s[2]),
                        format!("{:.1} GB/s", bytes as f64 / sum_s[v] / 1e9),
                    ]);
                    for (metric, value) in [("init_seconds", init_s[v]), ("sum_seconds", sum_s[v])]
                    {
                        rows.push(ctx.row(
                            name,
                            &config,
                            if *name == "single" && metric == "init_seconds" {
                                1
                            } else {
                                threads
                            },
                            metric,
                            value,
                            "s",
                        ));
                    }
                }
                tables.push(table);
                let slug: String = placement
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                    .collect();
                let mut chart = Chart::bars(
                    &format!("numa-{threads}t-{slug}"),
                    &format!("numa: {threads} workers, {placement}"),
                    vec!["init".into(), "sum".into()],
                    "milliseconds",
                );
                for (v, name) in VARIANTS.iter().enumerate() {
                    chart.series.push(Series {
                        name: format!("{name} first touch"),
                        points: vec![(0.0, init_s[v] * 1e3), (1.0, sum_s[v] * 1e3)],
                    });
                }
                charts.push(chart);
                findings.push(finding(nodes.len(), threads, placement, &sum_s, &init_s));
            }
        }
        if nodes.len() < 2 {
            notes.push(format!(
                "This machine has {} NUMA node{} ({}): every page is local to every core, so where a page was first touched cannot change the sum; any difference in the table is noise or a cache effect, not NUMA. Run it on a machine with two or more nodes to see the effect.",
                nodes.len().max(1),
                if nodes.len() > 1 { "s" } else { "" },
                if nodes.is_empty() {
                    "no NUMA information in /sys; one node assumed".to_string()
                } else {
                    format!("node{}: cpus {:?}", nodes[0].0, nodes[0].1)
                }
            ));
        }
        notes.push("The seed (8 GB, 16 threads, two nodes of a Xeon Gold 5218): with 8 threads on each node the sum took 0.371 s after single-thread, 0.206 s after random and 0.140 s after static initialisation; with all 16 on one node, 0.225, 0.223 and 0.221 s. Initialisation time includes the page faults, which parallel initialisation spreads over the workers.".into());
        Ok(Outcome {
            finding: findings.join(" "),
            notes,
            rows,
            tables,
            charts,
        })
    }
}

/// The sentence for one placement. `sums` and `inits` are in [`VARIANTS`] order.
fn finding(nodes: usize, threads: usize, placement: &str, sums: &[f64], inits: &[f64]) -> String {
    let single = sums[0] / sums[2];
    let unordered = sums[0].max(sums[1]) / sums[0].min(sums[1]);
    let spread = sums.iter().cloned().fold(f64::MIN, f64::max)
        / sums.iter().cloned().fold(f64::MAX, f64::min);
    let sums_text = format!(
        "{} after single-thread, {} after unordered parallel and {} after static initialisation",
        fmt_secs(sums[0]),
        fmt_secs(sums[1]),
        fmt_secs(sums[2])
    );
    let init_text = format!(
        "initialising took {} on one thread and {} with the static loop",
        fmt_secs(inits[0]),
        fmt_secs(inits[2])
    );
    if nodes < 2 {
        let verdict = if fmt::same(spread) {
            format!(
                "slowest ÷ fastest {}: no difference on this machine, as expected",
                fmt::fmt_ratio(spread)
            )
        } else {
            format!(
                "slowest ÷ fastest {}, a difference that page placement cannot cause on one node: other programs sharing the memory bus, or cache effects",
                fmt::fmt_ratio(spread)
            )
        };
        return format!(
            "One NUMA node, so no difference is expected: with {threads} workers the sum took {sums_text} ({verdict}); {init_text}."
        );
    }
    format!(
        "With {threads} workers {placement}, the sum after single-thread initialisation took {}, and after unordered initialisation {} ({sums_text}; {}); {init_text}.",
        fmt::longer(single, "after static initialisation"),
        fmt::longer(sums[1] / sums[2], "after static initialisation"),
        if fmt::same(unordered) && fmt::same(single) {
            "no difference on this machine"
        } else {
            "the first-touch placement mattered"
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_initialises_the_same_array() {
        let pool = crate::tl::pool(2).unwrap();
        let len = 3 * PAGE_ELEMS + 17;
        let mut first: Option<Vec<u64>> = None;
        for v in VARIANTS {
            let (data, _) = init(&pool, v, len, 5).unwrap();
            assert!(sum(&pool, &data).is_ok(), "{v}");
            match &first {
                None => first = Some(data),
                Some(f) => assert_eq!(f, &data, "{v}"),
            }
        }
    }

    #[test]
    fn two_nodes_give_a_spread_and_a_packed_placement() {
        let nodes = vec![(0, vec![0, 1]), (1, vec![2, 3])];
        let p = placements(&nodes, 3);
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].0, "spread over 2 nodes");
        assert_eq!(p[0].1, vec![vec![0, 1], vec![2, 3], vec![0, 1]]);
        assert_eq!(p[1].0, "all on node 0");
        assert!(p[1].1.iter().all(|c| c == &[0, 1]));
        let one = placements(&nodes[..1], 3);
        assert_eq!(one.len(), 1);
        assert!(one[0].1.is_empty(), "one node: nobody is pinned");
    }

    #[test]
    fn one_node_says_no_difference_is_expected() {
        let f = finding(1, 2, "one node", &[0.1, 0.1, 0.1], &[0.2, 0.1, 0.1]);
        assert!(f.contains("no difference is expected"), "{f}");
        assert!(f.contains("no difference on this machine"), "{f}");
        let f = finding(
            2,
            4,
            "spread over 2 nodes",
            &[0.3, 0.2, 0.1],
            &[0.2, 0.1, 0.1],
        );
        assert!(f.contains("3.00× as long as after static"), "{f}");
    }

    #[test]
    fn this_machine_has_at_least_zero_nodes_and_pinning_works() {
        let nodes = numa_nodes();
        assert!(nodes.iter().all(|(_, cpus)| !cpus.is_empty()));
        // The CPUs this process may use now: pinning a worker to them must succeed.
        // SAFETY: a zeroed cpu_set_t is valid; sched_getaffinity writes within its size.
        let allowed: Vec<usize> = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            assert_eq!(
                libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set),
                0
            );
            (0..libc::CPU_SETSIZE as usize)
                .filter(|&c| libc::CPU_ISSET(c, &set))
                .collect()
        };
        let pool = crate::tl::pool(1).unwrap();
        assert_eq!(
            pool.install_on(0, || pin_current_thread(&allowed)),
            Ok(Ok(()))
        );
        assert!(
            pin_current_thread(&[]).is_err(),
            "an empty set is refused with a message"
        );
    }
}
