//! The `numa` experiment's workload (*Multithreading and the Memory Subsystem*'s first touch): the machine's NUMA nodes
//! from /sys, placements of pinned workers over them, an array first touched by one thread, by
//! the workers in no order, or with the static schedule of the sum that follows, and that sum.

use crate::machine::parse_cpu_list;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;
use threadlab::Pool;

/// Sums per initialisation; the median is the run's figure (one pass is short and noisy).
pub const SUM_PASSES: usize = 7;

/// Elements of one 4 KiB page.
const PAGE_ELEMS: usize = 4096 / std::mem::size_of::<u64>();

/// The NUMA nodes and their CPUs, from /sys (empty if the kernel does not say).
pub fn numa_nodes() -> Vec<(usize, Vec<usize>)> {
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
/// spread over all of them (worker k on node k mod nodes) and all on the first, as in the article;
/// with one node (or none known), one unpinned placement.
pub fn placements(nodes: &[(usize, Vec<usize>)], threads: usize) -> Vec<(String, Vec<Vec<usize>>)> {
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
pub fn pin_current_thread(cpus: &[usize]) -> Result<(), String> {
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
pub fn init(pool: &Pool, variant: &str, len: usize, seed: u64) -> Result<(Vec<u64>, f64), String> {
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
            let mut next = super::xorshift(seed);
            for i in (1..pages.len()).rev() {
                pages.swap(i, (next() % (i as u64 + 1)) as usize);
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

/// The article's kernel: a static-schedule parallel sum; checked against the closed form.
pub fn sum(pool: &Pool, v: &[u64]) -> Result<f64, String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_initialises_the_same_array() {
        let pool = crate::lab::tl::pool(2).unwrap();
        let len = 3 * PAGE_ELEMS + 17;
        let mut first: Option<Vec<u64>> = None;
        for v in ["single", "unordered", "static"] {
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
        let pool = crate::lab::tl::pool(1).unwrap();
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
