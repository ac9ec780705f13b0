//! Two captures side by side, after Unity's Profile Analyzer "Compare" view that the
//! allocator-contention follow-up to "The Whipping Boy Approach to Job Scheduling" uses to find what got slower from 2 to 5 job workers: one row per zone name, task kind and
//! lock (its waits and its holds), with count, total, mean, median, p90, p99 and max on each
//! side, the absolute and relative difference of the total, rows sorted by the absolute
//! difference, and differences within run-to-run noise flagged. Zones and tasks are compared by
//! self time (a span's time minus the zones and tasks nested in it), so a parent does not rise to
//! the top because one of its children did. Then the runtime's figures side by side, and each
//! lock's (acquisitions, contended share, holds, waits).

use super::findings::Diagnosis;
use super::locks::LockStats;
use super::stats::{ratio, Summary};
use threadlab_trace::Trace;

/// A difference of totals below this share of the larger total is read as noise: repeated runs
/// of one workload on a small shared VM differ by about 10% (the lab's report says the same).
/// A difference no larger than the longest single span on either side is noise too: one span
/// (one preemption, one page fault storm) could account for all of it. Welch's t-test was tried
/// and rejected: span times are heavy-tailed (a few waits of milliseconds among microseconds),
/// and the tail's variance hides differences of 100% and more.
pub const NOISE_RELATIVE: f64 = 0.10;

/// One zone, task kind or lock on both sides.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct CompareRow {
    /// `zone <name>`, `task <kind>`, `lock <name> wait`, `lock <name> hold`.
    pub name: String,
    /// Side A.
    pub a: Summary,
    /// Side B.
    pub b: Summary,
    /// B's total minus A's, ns.
    pub diff_total_ns: i64,
    /// The difference over A's total (`None` when A's total is 0).
    pub relative: Option<f64>,
    /// Whether the difference is within run-to-run noise.
    pub noise: bool,
}

/// A runtime figure on both sides.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct RuntimeRow {
    /// What it is.
    pub name: &'static str,
    /// Side A.
    pub a: f64,
    /// Side B.
    pub b: f64,
    /// Its unit.
    pub unit: &'static str,
}

/// One figure of a lock on both sides (`None`: not known on that side, or no such lock).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct CompareLockRow {
    /// The lock's name.
    pub lock: String,
    /// What it is: `acquisitions`, `contended share`, `held`, `hold mean`, `hold p99`,
    /// `hold max`, `waits`, `waited`, `wait p50`, `wait p99`.
    pub figure: &'static str,
    /// Side A.
    pub a: Option<f64>,
    /// Side B.
    pub b: Option<f64>,
    /// Its unit: `""` (a count), `"ratio"` or `"ns"`.
    pub unit: &'static str,
}

/// Two captures compared.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Comparison {
    /// Per zone, task kind and lock, largest absolute difference of the total first.
    pub rows: Vec<CompareRow>,
    /// Runtime figures side by side.
    pub runtime: Vec<RuntimeRow>,
    /// Each lock's figures side by side, in the order of the locks (most waited-for on side A,
    /// then B's others); a figure known on neither side, or zero on both, is left out.
    pub locks: Vec<CompareLockRow>,
}

/// The figures of [`CompareLockRow`], in order: name, unit, and how to read it off a lock's stats.
type LockFigure = (&'static str, &'static str, fn(&LockStats) -> Option<f64>);
const LOCK_FIGURES: [LockFigure; 10] = [
    ("acquisitions", "", |l| l.acquisitions.map(|a| a as f64)),
    ("contended share", "ratio", |l| l.contended_share),
    ("held", "ns", |l| held(l, l.hold.total_ns)),
    ("hold mean", "ns", |l| held(l, l.hold.mean_ns as u64)),
    ("hold p99", "ns", |l| held(l, l.hold.p99_ns)),
    ("hold max", "ns", |l| held(l, l.hold.max_ns)),
    ("waits", "", |l| Some(l.wait.count as f64)),
    ("waited", "ns", |l| Some(l.wait.total_ns as f64)),
    ("wait p50", "ns", |l| Some(l.wait.median_ns as f64)),
    ("wait p99", "ns", |l| Some(l.wait.p99_ns as f64)),
];

/// A hold figure, known only when holds were recorded.
fn held(l: &LockStats, v: u64) -> Option<f64> {
    (l.hold.count > 0).then_some(v as f64)
}

/// Each lock's [`LOCK_FIGURES`] on both sides (see [`Comparison::locks`]).
fn lock_rows(a: &Diagnosis, b: &Diagnosis) -> Vec<CompareLockRow> {
    let mut names: Vec<&str> = a.locks.iter().map(|l| l.name.as_str()).collect();
    for l in &b.locks {
        if !names.contains(&l.name.as_str()) {
            names.push(&l.name);
        }
    }
    let mut out = Vec::new();
    for name in names {
        let (la, lb) = (a.lock(name), b.lock(name));
        for (figure, unit, f) in LOCK_FIGURES {
            let (va, vb) = (la.and_then(f), lb.and_then(f));
            let nothing = |v: Option<f64>| v.map_or(true, |x| x == 0.0);
            if nothing(va) && nothing(vb) {
                continue;
            }
            out.push(CompareLockRow {
                lock: name.to_owned(),
                figure,
                a: va,
                b: vb,
                unit,
            });
        }
    }
    out
}

/// Compares capture `a` with capture `b` (see the module doc).
///
/// ```
/// let capture = || {
///     let rec = threadlab::trace::start();
///     {
///         let _z = threadlab::zone!("step");
///     }
///     rec.stop()
/// };
/// let (a, b) = (capture(), capture());
/// let cmp = threadlab_doctor::compare(&a, &b);
/// assert_eq!(cmp.rows[0].name, "zone step");
/// ```
pub fn compare(a: &Trace, b: &Trace) -> Comparison {
    super::diagnose::diagnose(a).compare(&super::diagnose::diagnose(b))
}

fn is_noise(a: &Summary, b: &Summary) -> bool {
    let diff = a.total_ns.abs_diff(b.total_ns);
    diff as f64 <= NOISE_RELATIVE * a.total_ns.max(b.total_ns) as f64
        || diff <= a.max_ns.max(b.max_ns)
}

impl Diagnosis {
    /// Compares this diagnosis (side A) with `other` (side B); see [`compare`].
    pub fn compare(&self, other: &Diagnosis) -> Comparison {
        let mut names: Vec<String> = Vec::new();
        let mut add = |n: String| {
            if !names.contains(&n) {
                names.push(n);
            }
        };
        for d in [self, other] {
            d.spans.iter().for_each(|s| add(s.name.clone()));
            for l in &d.locks {
                add(format!("lock {} wait", l.name));
                add(format!("lock {} hold", l.name));
            }
        }
        let summary = |d: &Diagnosis, name: &str| -> Summary {
            if let Some(s) = d.spans.iter().find(|s| s.name == name) {
                return s.self_time.clone();
            }
            for l in &d.locks {
                if name == format!("lock {} wait", l.name) {
                    return l.wait.clone();
                }
                if name == format!("lock {} hold", l.name) {
                    return l.hold.clone();
                }
            }
            Summary::default()
        };
        let mut rows: Vec<CompareRow> = names
            .into_iter()
            .map(|name| (summary(self, &name), summary(other, &name), name))
            // A row empty on both sides (a lock's holds, when neither trace recorded them) says
            // nothing, and would read as "new".
            .filter(|(a, b, _)| a.count + b.count > 0)
            .map(|(a, b, name)| {
                let diff = b.total_ns as i128 - a.total_ns as i128;
                CompareRow {
                    diff_total_ns: diff.clamp(i64::MIN as i128, i64::MAX as i128) as i64,
                    relative: (a.total_ns > 0).then(|| diff as f64 / a.total_ns as f64),
                    noise: is_noise(&a, &b),
                    name,
                    a,
                    b,
                }
            })
            .collect();
        rows.sort_by(|x, y| {
            y.diff_total_ns
                .unsigned_abs()
                .cmp(&x.diff_total_ns.unsigned_abs())
                .then_with(|| x.name.cmp(&y.name))
        });
        // The running share of the lifetimes of the threads that ran tasks or zones.
        let util = |d: &Diagnosis| {
            let working = || d.threads.iter().filter(|t| t.tasks + t.zones > 0);
            ratio(
                working().map(|t| t.running_ns as f64).sum(),
                working().map(|t| t.lifetime_ns as f64).sum(),
            )
        };
        let lock_p99 = |d: &Diagnosis| d.locks.iter().map(|l| l.wait.p99_ns).max().unwrap_or(0);
        let fig = |name, unit, f: &dyn Fn(&Diagnosis) -> f64| RuntimeRow {
            name,
            a: f(self),
            b: f(other),
            unit,
        };
        let mut runtime = vec![
            fig("threads", "", &|d| d.threads.len() as f64),
            fig("pool workers", "", &|d| d.runtime.workers as f64),
            fig("recording", "ns", &|d| d.duration_ns as f64),
            fig("utilization (running share)", "ratio", &util),
            fig("CPUs used (average)", "", &|d| d.os.cpus_used_avg),
            fig("runnable threads per CPU", "", &|d| {
                ratio(d.os.runnable_avg, d.os.cpus as f64)
            }),
            fig("preempted share", "ratio", &|d| d.os.preempted_share),
            fig("tasks", "", &|d| d.runtime.tasks as f64),
            fig("steals/s", "/s", &|d| d.runtime.steals_per_sec),
            fig("failed steals/s", "/s", &|d| {
                d.runtime.failed_steals_per_sec
            }),
            fig("parks/s", "/s", &|d| d.runtime.parks_per_sec),
            fig("wake-up p99", "ns", &|d| {
                d.runtime.wake_latency.p99_ns as f64
            }),
            fig("lock wait p99", "ns", &|d| lock_p99(d) as f64),
        ];
        // Two programs without a pool (observed from outside) have no pool figures to compare,
        // and no tasks or zones to be running in.
        if !self.runtime.has_pool() && !other.runtime.has_pool() {
            const POOL_ONLY: [&str; 6] = [
                "pool workers",
                "utilization (running share)",
                "tasks",
                "steals/s",
                "failed steals/s",
                "wake-up p99",
            ];
            runtime.retain(|r| !POOL_ONLY.contains(&r.name));
        }
        Comparison {
            rows,
            runtime,
            locks: lock_rows(self, other),
        }
    }
}
