//! Level of detail: what is narrower than a pixel is drawn as one block.
//!
//! The page draws a row of intervals (one depth of a thread's spans, or its state strip) at the
//! level whose width `w` is the largest not above the nanoseconds one pixel covers. Level `k`
//! merges every run of neighbouring intervals that are each shorter than `w_k` and separated by
//! gaps shorter than `w_k` into one interval spanning the run, labelled with the label that
//! covers the most time in it and counting the intervals it stands for; an interval of at least
//! `w_k` stays as it is. So at any zoom the page draws at most about two intervals per pixel
//! column, whatever the trace holds, and no interval wider than a pixel is ever hidden. (The
//! idea is the one of Tracy's zone merging and of Perfetto's slice summarisation; this is our
//! own formulation.)

/// One interval of a row: `[start, end)` in ns, a label (a span name or state code) and how
/// many recorded intervals it stands for (1 unless merged).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Iv {
    pub start: u64,
    pub end: u64,
    pub label: u32,
    pub count: u32,
}

/// The widths of the levels above the raw one: 1 µs, then ×8 up to a level coarser than a
/// hundredth of `span_ns` (so a whole-trace view never draws more than a few hundred blocks
/// per row).
pub fn widths(span_ns: u64) -> Vec<u64> {
    let mut w = vec![];
    let mut x = 1_000u64;
    loop {
        w.push(x);
        if x.saturating_mul(100) >= span_ns || x > u64::MAX / 16 {
            return w;
        }
        x *= 8;
    }
}

/// Merges `row` (sorted by start, not overlapping) at width `w`.
pub fn merge(row: &[Iv], w: u64) -> Vec<Iv> {
    let mut out: Vec<Iv> = Vec::with_capacity(row.len() / 2 + 1);
    // Time per label within the current merged run (labels are few: a small vector).
    let mut time: Vec<(u32, u64)> = Vec::new();
    let mut open = false;
    for iv in row {
        let len = iv.end.saturating_sub(iv.start);
        let small = len < w;
        let joins = open
            && small
            && out
                .last()
                .is_some_and(|l| iv.start.saturating_sub(l.end) < w);
        if joins {
            let last = out.last_mut().expect("an open run");
            last.end = last.end.max(iv.end);
            last.count += iv.count;
            add(&mut time, iv.label, len);
            last.label = dominant(&time);
            continue;
        }
        out.push(*iv);
        open = small;
        time.clear();
        if small {
            add(&mut time, iv.label, len);
        }
    }
    out
}

fn add(time: &mut Vec<(u32, u64)>, label: u32, len: u64) {
    match time.iter_mut().find(|(l, _)| *l == label) {
        Some(t) => t.1 += len,
        None => time.push((label, len)),
    }
}

/// The label with the most time (the first one on a tie).
fn dominant(time: &[(u32, u64)]) -> u32 {
    let mut best = time[0];
    for &t in &time[1..] {
        if t.1 > best.1 {
            best = t;
        }
    }
    best.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(start: u64, end: u64, label: u32) -> Iv {
        Iv {
            start,
            end,
            label,
            count: 1,
        }
    }

    #[test]
    fn small_neighbours_merge_and_wide_ones_stay() {
        // Ten 100 ns spans 50 ns apart, then a 5 µs span, then two small ones far apart.
        let mut row: Vec<Iv> = (0..10)
            .map(|i| iv(i * 150, i * 150 + 100, i as u32 % 2))
            .collect();
        row.push(iv(2_000, 7_000, 7));
        row.push(iv(7_100, 7_200, 3));
        row.push(iv(20_000, 20_100, 3));
        let m = merge(&row, 1_000);
        assert_eq!(m.len(), 4, "{m:?}");
        assert_eq!((m[0].start, m[0].end, m[0].count), (0, 1_450, 10));
        assert_eq!(
            m[1],
            iv(2_000, 7_000, 7),
            "a span wider than the level stays whole"
        );
        // A small span right after a wide one starts a run of its own.
        assert_eq!((m[2].start, m[2].count), (7_100, 1));
        assert_eq!(
            (m[3].start, m[3].count),
            (20_000, 1),
            "gap of a level or more: no merge"
        );
        // Counts are conserved at every level.
        for w in widths(1_000_000_000) {
            let total: u32 = merge(&row, w).iter().map(|i| i.count).sum();
            assert_eq!(total, row.len() as u32, "level {w}");
        }
    }

    #[test]
    fn the_merged_label_is_the_one_with_most_time() {
        let row = [iv(0, 10, 1), iv(10, 100, 2), iv(100, 120, 1)];
        let m = merge(&row, 1_000);
        assert_eq!(m.len(), 1);
        assert_eq!((m[0].label, m[0].count, m[0].end), (2, 3, 120));
    }

    #[test]
    fn a_million_tiny_spans_collapse_to_a_few_blocks_per_level() {
        let row: Vec<Iv> = (0..1_000_000u64)
            .map(|i| iv(i * 20, i * 20 + 10, 0))
            .collect();
        assert_eq!(
            merge(&row, 1_000).len(),
            1,
            "gaps of 10 ns never split a 1 µs level"
        );
        // With a 2 µs gap every 1,000 spans, the 1 µs level splits there and only there.
        let gapped: Vec<Iv> = row
            .iter()
            .map(|s| {
                let shift = s.start / 20 / 1_000 * 2_000;
                iv(s.start + shift, s.end + shift, 0)
            })
            .collect();
        assert_eq!(merge(&gapped, 1_000).len(), 1_000);
        assert_eq!(merge(&gapped, 8_000).len(), 1);
    }

    #[test]
    fn levels_reach_a_hundredth_of_the_trace() {
        let w = widths(10_000_000_000);
        assert_eq!(w[0], 1_000);
        assert!(w.last().unwrap() * 100 >= 10_000_000_000);
        assert!(w.windows(2).all(|p| p[1] == p[0] * 8));
        assert_eq!(widths(0), vec![1_000]);
    }
}
