//! Allocations per zone and task, from the counts an `alloc::Counting` allocator lets a
//! recording attach to each span ([`EventKind::Allocs`], inclusive of the span's children), and
//! the figures the allocation-heavy finding (`findings.rs`) reads.
//!
//! Each thread's spans are replayed on a stack; a span's own ("self") allocations are its
//! inclusive count less its children's, so an outer zone is not blamed for what its inner zone
//! allocated. Spans are grouped by name: a zone by its name, a task by `task: KIND`.

use threadlab_trace::{EventKind, Trace};

/// The allocations of one zone name or task kind's spans (self: children not included).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
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
