//! Allocations per zone and task, from the counts an `alloc::Counting` allocator lets a
//! recording attach to each span ([`EventKind::Allocs`], inclusive of the span's children), and
//! the finding that names an allocation-heavy zone or task.
//!
//! Each thread's spans are replayed on a stack; a span's own ("self") allocations are its
//! inclusive count less its children's, so an outer zone is not blamed for what its inner zone
//! allocated. Spans are grouped by name: a zone by its name, a task by `task: KIND`.

use super::findings::{figure, Finding, Pitfall};
use crate::trace::{EventKind, Trace};

/// Allocation-heavy: one zone or task name made at least this share of the allocations counted
/// in the recording's spans. Half of everything counted in one place is where a change (reuse a
/// buffer, allocate once outside the loop, an arena) pays most; the fourth seed's workers spent
/// their time in the allocator's lock for exactly such a hot spot.
pub const ALLOC_HEAVY_SHARE: f64 = 0.5;

/// Allocation-heavy needs at least this many allocations in that name's spans: a few hundred
/// allocations cost well under a millisecond even on a locked allocator.
pub const ALLOC_HEAVY_MIN: u64 = 1000;

/// The allocations of one zone name or task kind's spans (self: children not included).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AllocStats {
    /// The zone's name, or `task: KIND`.
    pub name: String,
    /// Spans of that name that carried counts.
    pub spans: u64,
    /// Allocations made in them (not in their child spans).
    pub count: u64,
    /// Bytes asked for by those allocations.
    pub bytes: u64,
}

/// Per span name, most allocations first; empty when the recording counted none.
pub(crate) fn allocs(trace: &Trace) -> Vec<AllocStats> {
    let mut by_name: Vec<AllocStats> = Vec::new();
    for t in trace.threads() {
        // (name, children's allocations, children's bytes) of each open span.
        let mut stack: Vec<(String, u64, u64)> = Vec::new();
        let mut pending: Option<(u64, u64)> = None;
        for e in t.events().iter() {
            match e.kind {
                EventKind::ZoneBegin { name } => stack.push((trace.name(name).to_owned(), 0, 0)),
                EventKind::TaskBegin { kind, .. } => stack.push((format!("task: {kind}"), 0, 0)),
                EventKind::Allocs { count, bytes } => pending = Some((count, bytes)),
                EventKind::ZoneEnd | EventKind::TaskEnd => {
                    let Some((name, kids, kid_bytes)) = stack.pop() else {
                        continue;
                    };
                    let Some((count, bytes)) = pending.take() else {
                        continue;
                    };
                    if let Some(parent) = stack.last_mut() {
                        parent.1 = parent.1.saturating_add(count);
                        parent.2 = parent.2.saturating_add(bytes);
                    }
                    let i = match by_name.iter().position(|s| s.name == name) {
                        Some(i) => i,
                        None => {
                            by_name.push(AllocStats {
                                name,
                                ..AllocStats::default()
                            });
                            by_name.len() - 1
                        }
                    };
                    let s = &mut by_name[i];
                    s.spans += 1;
                    s.count = s.count.saturating_add(count.saturating_sub(kids));
                    s.bytes = s.bytes.saturating_add(bytes.saturating_sub(kid_bytes));
                }
                _ => {}
            }
        }
    }
    by_name.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.name.cmp(&b.name)));
    by_name
}

/// The allocation-heavy finding, if one name made most of the allocations.
pub(crate) fn finding(stats: &[AllocStats]) -> Option<Finding> {
    let total: u64 = stats.iter().map(|s| s.count).sum();
    let top = stats.first()?;
    let share = top.count as f64 / total.max(1) as f64;
    if top.count < ALLOC_HEAVY_MIN || share < ALLOC_HEAVY_SHARE {
        return None;
    }
    Some(Finding {
        pitfall: Pitfall::AllocationHeavy,
        subject: format!("span {}", top.name),
        evidence: format!(
            "`{}` made {} of the {} allocations counted in spans ({:.0}%), {:.1} per span over \
             {} span(s), {} in all",
            top.name,
            top.count,
            total,
            100.0 * share,
            top.count as f64 / top.spans.max(1) as f64,
            top.spans,
            fmt_bytes(top.bytes)
        ),
        figure: figure(
            "share of counted allocations",
            share,
            "ratio",
            Some(ALLOC_HEAVY_SHARE),
        ),
        suggestion: "allocate less in it: reuse buffers across calls, allocate once outside the \
                     loop, or give it an arena; with many workers, a thread-caching allocator"
            .into(),
    })
}

/// Bytes as B, KiB, MiB or GiB with three significant digits.
fn fmt_bytes(b: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.3} {}", units[u])
    }
}
