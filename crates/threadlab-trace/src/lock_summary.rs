//! One lock's figures as the trace model keeps them ([`LockSummary`]): how often it was taken,
//! its waits and holds as distributions ([`Durations`]), its waits per call site and per holder.
//! How a trace fills them, from its events or its lock table, is `locks.rs`.
//!
//! Durations are kept as count, total and maximum (exact) and a log-scale histogram, four
//! buckets per power of two of nanoseconds (the first four one nanosecond wide): the layout
//! of HDR-style log-linear histograms (Gil Tene, "HdrHistogram: A High Dynamic Range
//! Histogram"), with two bits of sub-bucket precision, so a percentile read from it is its
//! bucket's upper bound, at most 19% above the true value (2^¼ − 1), and never above the
//! maximum. It is the interposer's own layout, so its counts are carried as they are.

#[cfg(doc)]
use super::event::EventKind;
use super::event::NameId;

/// Buckets of a [`Durations`] histogram: four per power of two of nanoseconds, the last one
/// open-ended (from about 18 minutes on).
pub const DURATION_BUCKETS: usize = 160;

/// The [`EventKind::Arg`] key of a lock wait's call site (`function (file:line)`, or
/// `symbol+offset (module)` without debug information); it follows the wait's `LockWait`.
pub const ARG_LOCK_SITE: &str = "lock.site";
/// The [`EventKind::Arg`] key of the thread (its OS thread id, in decimal) that held the lock
/// when a wait began; it follows the wait's `LockWait`.
pub const ARG_LOCK_HOLDER: &str = "lock.holder";

/// A set of durations: how many, their total and the longest (exact), and their spread as a
/// log-scale histogram (see the module doc) from which percentiles are read.
///
/// ```
/// use threadlab_trace::Durations;
/// let mut d = Durations::default();
/// for ns in [1_000, 1_100, 1_200, 50_000] {
///     d.record(ns);
/// }
/// assert_eq!((d.count, d.total_ns, d.max_ns), (4, 53_300, 50_000));
/// let p50 = d.quantile(0.5);
/// assert!((1_100..=1_100 * 6 / 5).contains(&p50), "{p50}");
/// assert_eq!(d.quantile(1.0), 50_000);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Durations {
    /// How many.
    pub count: u64,
    /// Their sum, ns (saturating).
    pub total_ns: u64,
    /// The longest, ns.
    pub max_ns: u64,
    /// Counts per bucket ([`Durations::bucket`]); buckets past the last used one may be left
    /// out, so an empty set has none.
    pub hist: Vec<u64>,
}

impl Durations {
    /// The durations of `values`.
    ///
    /// ```
    /// let d = threadlab_trace::Durations::of([3, 1, 2]);
    /// assert_eq!((d.count, d.total_ns, d.max_ns), (3, 6, 3));
    /// ```
    pub fn of(values: impl IntoIterator<Item = u64>) -> Durations {
        let mut d = Durations::default();
        for v in values {
            d.record(v);
        }
        d
    }

    /// Adds one duration.
    pub fn record(&mut self, ns: u64) {
        self.count = self.count.saturating_add(1);
        self.total_ns = self.total_ns.saturating_add(ns);
        self.max_ns = self.max_ns.max(ns);
        let b = Durations::bucket(ns);
        if self.hist.len() <= b {
            self.hist.resize(b + 1, 0);
        }
        self.hist[b] = self.hist[b].saturating_add(1);
    }

    /// Adds every duration of `other`.
    pub fn merge(&mut self, other: &Durations) {
        self.count = self.count.saturating_add(other.count);
        self.total_ns = self.total_ns.saturating_add(other.total_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
        if self.hist.len() < other.hist.len() {
            self.hist.resize(other.hist.len(), 0);
        }
        for (a, &b) in self.hist.iter_mut().zip(&other.hist) {
            *a = a.saturating_add(b);
        }
    }

    /// The mean, ns (0 when empty).
    pub fn mean_ns(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.total_ns as f64 / self.count as f64
        }
    }

    /// The `q` quantile (0–1) by nearest rank over the histogram: the upper bound of the
    /// bucket that holds it, never above the maximum (0 when empty).
    pub fn quantile(&self, q: f64) -> u64 {
        let total = self
            .hist
            .iter()
            .take(DURATION_BUCKETS)
            .fold(0u64, |a, &b| a.saturating_add(b));
        if total == 0 {
            return 0;
        }
        let q = if q.is_nan() { 0.0 } else { q.clamp(0.0, 1.0) };
        let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0u64;
        for (b, &n) in self.hist.iter().enumerate().take(DURATION_BUCKETS) {
            seen = seen.saturating_add(n);
            if seen >= rank {
                let high = if b + 1 < DURATION_BUCKETS {
                    Durations::bucket_low(b + 1)
                } else {
                    u64::MAX
                };
                return high.saturating_sub(1).min(self.max_ns);
            }
        }
        self.max_ns
    }

    /// The bucket of a duration of `ns`: 0–3 for 0–3 ns, then four per power of two.
    ///
    /// ```
    /// use threadlab_trace::Durations;
    /// assert_eq!(Durations::bucket(3), 3);
    /// assert_eq!(Durations::bucket(Durations::bucket_low(41)), 41);
    /// ```
    pub fn bucket(ns: u64) -> usize {
        if ns < 4 {
            return ns as usize;
        }
        let p = 63 - ns.leading_zeros() as usize;
        let b = 4 * (p - 1) + ((ns >> (p - 2)) & 3) as usize;
        b.min(DURATION_BUCKETS - 1)
    }

    /// The smallest duration, ns, of bucket `b` (`b` below [`DURATION_BUCKETS`]).
    pub fn bucket_low(b: usize) -> u64 {
        if b < 4 {
            return b as u64;
        }
        let p = b / 4 + 1;
        let sub = (b % 4) as u64;
        (4 + sub) << (p - 2)
    }
}

/// The waits of a lock that came from one call site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaitSite {
    /// Where the lock was asked for: `function (file:line)`, `symbol+offset (module)`, or
    /// `other call sites` for those an aggregate could not keep apart.
    pub site: NameId,
    /// Waits from there.
    pub waits: u64,
    /// Their total, ns.
    pub wait_ns: u64,
}

/// The waits of a lock that began while one thread held it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaitHolder {
    /// The holder's OS thread id (as the trace's tracks number threads).
    pub tid: u64,
    /// Waits that began while it held the lock.
    pub waits: u64,
    /// Their total, ns.
    pub wait_ns: u64,
}

/// One lock's figures: see the module doc (and `locks.rs`'s, for where they come from).
///
/// ```
/// use threadlab_trace::{Durations, LockSummary, TraceBuilder};
/// let mut b = TraceBuilder::new();
/// let name = b.name("queue");
/// b.lock(LockSummary {
///     acquisitions: Some(600_000),
///     waits: Durations::of([2_000, 9_000]),
///     holds: Durations::of([400, 500, 600]),
///     holds_sampled: true,
///     ..LockSummary::new(7, name)
/// });
/// let trace = b.build();
/// let q = &trace.locks()[0];
/// assert_eq!(q.contended_share(), Some(2.0 / 600_000.0));
/// assert_eq!(q.hold_total_ns(), 500 * 600_000, "the sample's mean times every acquisition");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockSummary {
    /// The lock's id, as its events carry it.
    pub lock: u64,
    /// Its name.
    pub name: NameId,
    /// Times it was taken, every one counted; `None` when only its waits were seen (futex
    /// waits sampled from outside).
    pub acquisitions: Option<u64>,
    /// The acquisitions that had to wait, and how long they waited.
    pub waits: Durations,
    /// How long it was held: every hold, or, when [`LockSummary::holds_sampled`], the holds of a
    /// sample of `holds.count` acquisitions.
    pub holds: Durations,
    /// Whether `holds` is a sample (its count) of the acquisitions rather than every one.
    pub holds_sampled: bool,
    /// Its waits per call site, the longest total first.
    pub sites: Vec<WaitSite>,
    /// Its waits per thread that held it when they began, the longest total first.
    pub holders: Vec<WaitHolder>,
}

impl LockSummary {
    /// A lock with nothing recorded yet.
    pub fn new(lock: u64, name: NameId) -> LockSummary {
        LockSummary {
            lock,
            name,
            acquisitions: None,
            waits: Durations::default(),
            holds: Durations::default(),
            holds_sampled: false,
            sites: Vec::new(),
            holders: Vec::new(),
        }
    }

    /// The waits' share of the acquisitions, when the acquisitions are known.
    pub fn contended_share(&self) -> Option<f64> {
        self.acquisitions
            .filter(|&a| a > 0)
            .map(|a| self.waits.count as f64 / a as f64)
    }

    /// The time it was held in all, ns: the holds' total, or, for sampled holds, their mean
    /// times the acquisitions (an estimate).
    pub fn hold_total_ns(&self) -> u64 {
        match (self.holds_sampled, self.acquisitions) {
            (true, Some(a)) => {
                let est = self.holds.mean_ns() * a as f64;
                if est >= u64::MAX as f64 {
                    u64::MAX
                } else {
                    est.round() as u64
                }
            }
            _ => self.holds.total_ns,
        }
    }

    /// [`LockSummary::hold_total_ns`] no longer than `threads` threads could hold it over
    /// `duration_ns`: an estimate from a few sampled holds (one preempted hold timed among 600
    /// acquisitions) can otherwise exceed what the run allowed.
    ///
    /// ```
    /// let mut l = threadlab_trace::LockSummary::new(1, threadlab_trace::NameId(0));
    /// l.acquisitions = Some(600);
    /// l.holds = threadlab_trace::Durations::of([1_500_000]);
    /// l.holds_sampled = true;
    /// assert_eq!(l.hold_total_ns(), 900_000_000);
    /// assert_eq!(l.hold_total_within(200_000_000, 3), 600_000_000);
    /// ```
    pub fn hold_total_within(&self, duration_ns: u64, threads: usize) -> u64 {
        self.hold_total_ns()
            .min(duration_ns.saturating_mul(threads.max(1) as u64))
    }

    /// The thread that held it while others waited longest: its waits' share, if any wait had
    /// a known holder.
    pub fn top_holder(&self) -> Option<&WaitHolder> {
        self.holders.first()
    }

    /// Sorts the sites and holders, the longest total wait first (ties by site name id, tid).
    pub fn sort(&mut self) {
        self.sites
            .sort_by(|a, b| b.wait_ns.cmp(&a.wait_ns).then(a.site.cmp(&b.site)));
        self.holders
            .sort_by(|a, b| b.wait_ns.cmp(&a.wait_ns).then(a.tid.cmp(&b.tid)));
    }

    /// Adds `waits` waits of `ns` from `site` to its sites.
    pub(crate) fn add_site(&mut self, site: NameId, waits: u64, ns: u64) {
        match self.sites.iter_mut().find(|s| s.site == site) {
            Some(s) => {
                s.waits = s.waits.saturating_add(waits);
                s.wait_ns = s.wait_ns.saturating_add(ns);
            }
            None => self.sites.push(WaitSite {
                site,
                waits,
                wait_ns: ns,
            }),
        }
    }

    /// Adds `waits` waits of `ns` while `tid` held it to its holders.
    pub(crate) fn add_holder(&mut self, tid: u64, waits: u64, ns: u64) {
        match self.holders.iter_mut().find(|h| h.tid == tid) {
            Some(h) => {
                h.waits = h.waits.saturating_add(waits);
                h.wait_ns = h.wait_ns.saturating_add(ns);
            }
            None => self.holders.push(WaitHolder {
                tid,
                waits,
                wait_ns: ns,
            }),
        }
    }
}
