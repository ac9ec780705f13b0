//! Fork-join with N threads: *Multithreading Isn't Free*'s `parallel_for` — split the range into N equal
//! chunks, start one OS thread per chunk, join them all. Threads are created for every call.
//! Each band runs in a `fork-join band` zone (one relaxed load when no recording is on).

/// Runs `body` on each of `data`'s chunks of `rows_per_chunk × row_len` bytes, splitting the rows
/// into `threads` equal bands, one fresh OS thread per band (at most one band per row).
pub fn for_each_band(
    data: &mut [u8],
    row_len: usize,
    threads: usize,
    body: &(dyn Fn(&mut [u8]) + Sync),
) {
    let rows = data.len() / row_len.max(1);
    let threads = threads.clamp(1, rows.max(1));
    let rows_per_band = rows.div_ceil(threads);
    std::thread::scope(|s| {
        for band in data.chunks_mut(rows_per_band * row_len) {
            s.spawn(move || {
                let _z = threadlab::zone!("fork-join band");
                body(band)
            });
        }
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_byte_once() {
        let mut v = vec![0u8; 10 * 7];
        super::for_each_band(&mut v, 7, 3, &|band| band.iter_mut().for_each(|b| *b += 1));
        assert!(v.iter().all(|&b| b == 1));
    }
}
