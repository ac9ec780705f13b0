//! The machine's topology, read from Linux's `/sys` and `/proc` (no root, no hwloc): logical
//! CPUs, physical cores and their SMT siblings, caches per level, NUMA nodes, kernel, CPU model.
//! Used by `threadlab topology` (a text view in the spirit of hwloc's `lstopo`) and by the
//! `machine` block of `results.json` (where the lab adds its checks of the CPUs' state).

use crate::fmt::fmt_bytes;
use serde::Serialize;
use std::collections::BTreeSet;
use std::fs;

/// One cache as the kernel describes it in `/sys/devices/system/cpu/cpuN/cache/indexM`.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cache {
    /// 1, 2, 3…
    pub level: u32,
    /// `Data`, `Instruction` or `Unified`.
    pub kind: String,
    /// Size in bytes.
    pub size_bytes: u64,
    /// How many instances of this cache the machine has.
    pub instances: usize,
    /// The logical CPUs sharing one instance, e.g. `0-1`.
    pub shared_by: String,
}

/// What the lab knows about the machine it runs on.
#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    /// CPU model name from /proc/cpuinfo.
    pub cpu_model: String,
    /// Kernel release.
    pub kernel: String,
    /// Logical CPUs online.
    pub logical_cpus: usize,
    /// Physical cores (distinct package/core id pairs).
    pub physical_cores: usize,
    /// Groups of SMT siblings, e.g. `["0-1", "2-3"]`; one entry per core.
    pub smt_siblings: Vec<String>,
    /// Caches, one entry per level and kind.
    pub caches: Vec<Cache>,
    /// NUMA nodes with their CPU lists.
    pub numa_nodes: Vec<String>,
    /// `std::thread::available_parallelism()` (honours cgroup quotas and affinity).
    pub available_parallelism: usize,
    /// Total memory in bytes (from /proc/meminfo), 0 when unknown.
    pub memory_bytes: u64,
}

fn read(path: &str) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

/// Parses a kernel CPU list such as `0-3,8,10-11`.
pub fn parse_cpu_list(s: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<usize>(), b.parse::<usize>()) {
                    out.extend(a..=b);
                }
            }
            None => out.extend(part.parse::<usize>().ok()),
        }
    }
    out
}

/// Parses a size such as `32K`, `1024K`, `8M`.
fn parse_size(s: &str) -> u64 {
    let s = s.trim();
    let (num, mult) = match s.chars().last() {
        Some('K') => (&s[..s.len() - 1], 1 << 10),
        Some('M') => (&s[..s.len() - 1], 1 << 20),
        Some('G') => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<u64>().unwrap_or(0) * mult
}

impl Machine {
    /// Reads the topology; fields it cannot read are left empty or zero, never an error.
    pub fn detect() -> Machine {
        let online = read("/sys/devices/system/cpu/online")
            .map(|s| parse_cpu_list(&s))
            .unwrap_or_default();
        let available_parallelism = std::thread::available_parallelism().map_or(1, |n| n.get());
        let cpus = if online.is_empty() {
            (0..available_parallelism).collect()
        } else {
            online
        };
        let mut cores = BTreeSet::new();
        let mut siblings = BTreeSet::new();
        let mut caches = BTreeSet::new();
        for &cpu in &cpus {
            let base = format!("/sys/devices/system/cpu/cpu{cpu}");
            let pkg = read(&format!("{base}/topology/physical_package_id")).unwrap_or_default();
            let core = read(&format!("{base}/topology/core_id")).unwrap_or_else(|| cpu.to_string());
            cores.insert((pkg, core));
            if let Some(s) = read(&format!("{base}/topology/thread_siblings_list")) {
                siblings.insert(s);
            }
            for idx in 0..8 {
                let c = format!("{base}/cache/index{idx}");
                let Some(level) = read(&format!("{c}/level")).and_then(|l| l.parse::<u32>().ok())
                else {
                    break;
                };
                let kind = read(&format!("{c}/type")).unwrap_or_default();
                let size = read(&format!("{c}/size")).map_or(0, |s| parse_size(&s));
                let shared = read(&format!("{c}/shared_cpu_list")).unwrap_or_default();
                caches.insert((level, kind, size, shared));
            }
        }
        // Count instances: distinct shared_cpu_list values per (level, kind, size).
        let mut merged: Vec<Cache> = Vec::new();
        for (level, kind, size, shared) in caches {
            match merged
                .iter_mut()
                .find(|c| c.level == level && c.kind == kind && c.size_bytes == size)
            {
                Some(c) => c.instances += 1,
                None => merged.push(Cache {
                    level,
                    kind,
                    size_bytes: size,
                    instances: 1,
                    shared_by: shared,
                }),
            }
        }
        let mut numa_nodes = Vec::new();
        if let Ok(dir) = fs::read_dir("/sys/devices/system/node") {
            let mut nodes: Vec<(usize, String)> = dir
                .filter_map(|e| e.ok())
                .filter_map(|e| {
                    let name = e.file_name().into_string().ok()?;
                    let id = name.strip_prefix("node")?.parse::<usize>().ok()?;
                    let list = read(&format!("/sys/devices/system/node/{name}/cpulist"))?;
                    Some((id, format!("node{id}: cpus {list}")))
                })
                .collect();
            nodes.sort();
            numa_nodes = nodes.into_iter().map(|(_, s)| s).collect();
        }
        let cpu_model = fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| "unknown".into());
        let memory_bytes = fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|s| {
                s.lines().find(|l| l.starts_with("MemTotal")).and_then(|l| {
                    l.split_whitespace()
                        .nth(1)
                        .and_then(|kb| kb.parse::<u64>().ok())
                })
            })
            .map_or(0, |kb| kb * 1024);
        Machine {
            cpu_model,
            kernel: read("/proc/sys/kernel/osrelease").unwrap_or_else(|| "unknown".into()),
            logical_cpus: cpus.len(),
            physical_cores: cores.len().max(1),
            smt_siblings: siblings.into_iter().collect(),
            caches: merged,
            numa_nodes,
            available_parallelism,
            memory_bytes,
        }
    }

    /// A multi-line text view of the topology.
    pub fn render(&self) -> String {
        let mut s = String::new();
        s += &format!("CPU model     {}\n", self.cpu_model);
        s += &format!("kernel        {}\n", self.kernel);
        s += &format!("memory        {}\n", fmt_bytes(self.memory_bytes));
        s += &format!(
            "cpus          {} logical, {} physical core(s), available_parallelism = {}\n",
            self.logical_cpus, self.physical_cores, self.available_parallelism
        );
        let smt = if self.smt_siblings.iter().any(|g| g.contains(['-', ','])) {
            "SMT on"
        } else {
            "no SMT siblings"
        };
        s += &format!("SMT siblings  {} ({smt})\n", self.smt_siblings.join("  "));
        for c in &self.caches {
            s += &format!(
                "L{} {:<11} {:>10} × {:<3} each shared by {} cpu(s) (e.g. cpus {})\n",
                c.level,
                c.kind,
                fmt_bytes(c.size_bytes),
                c.instances,
                parse_cpu_list(&c.shared_by).len().max(1),
                c.shared_by
            );
        }
        if self.numa_nodes.is_empty() {
            s += "NUMA          no NUMA information (one node assumed)\n";
        } else {
            s += &format!(
                "NUMA          {} node(s): {}\n",
                self.numa_nodes.len(),
                self.numa_nodes.join("; ")
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_and_sizes() {
        assert_eq!(parse_cpu_list("0-2,5,7-8"), vec![0, 1, 2, 5, 7, 8]);
        assert_eq!(parse_cpu_list(""), Vec::<usize>::new());
        assert_eq!(parse_size("32K"), 32 * 1024);
        assert_eq!(parse_size("8M"), 8 << 20);
    }

    #[test]
    fn detect_finds_at_least_one_cpu() {
        let m = Machine::detect();
        assert!(m.logical_cpus >= 1 && m.physical_cores >= 1);
        assert!(m.render().contains("cpus"));
    }
}
