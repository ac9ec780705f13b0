//! *Multithreading Isn't Free*'s image kernel, `pixels[i] = 2*pixels[i] + 1` over bands of rows, with a
//! check that a pass touched every byte once, and the memory-bandwidth bound it is measured
//! against. Used by `image` and `contention`.

/// The article's kernel over one band of rows (wrapping u8 arithmetic).
pub fn kernel(band: &mut [u8]) {
    for p in band {
        *p = p.wrapping_mul(2).wrapping_add(1);
    }
}

/// Fills `buf` with a known pattern (see [`check_one_pass`]).
pub fn fill(buf: &mut [u8]) {
    for (i, b) in buf.iter_mut().enumerate() {
        *b = (i % 251) as u8;
    }
}

/// After `fill` and one pass every byte must be `2x+1`: a variant that skipped or doubled a row
/// is caught here.
pub fn check_one_pass(buf: &[u8], variant: &str) -> Result<(), String> {
    match buf
        .iter()
        .enumerate()
        .find(|(i, &b)| b != ((i % 251) as u8).wrapping_mul(2).wrapping_add(1))
    {
        Some((i, _)) => Err(format!(
            "variant {variant} computed a wrong byte at offset {i}"
        )),
        None => Ok(()),
    }
}

/// Best (minimum) seconds per pass of an in-place `w = 2w + 1` over `buf` viewed as u64 words, split
/// across `threads` long-lived threads that a barrier starts and stops for each of `passes`.
pub fn bandwidth_bound(buf: &mut [u8], threads: usize, passes: usize) -> f64 {
    use std::sync::Barrier;
    let barrier = Barrier::new(threads + 1);
    let chunk = buf.len().div_ceil(threads).next_multiple_of(8);
    let mut times = Vec::with_capacity(passes);
    std::thread::scope(|s| {
        for part in buf.chunks_mut(chunk) {
            let barrier = &barrier;
            s.spawn(move || {
                for _ in 0..passes {
                    barrier.wait();
                    for w in part.chunks_exact_mut(8) {
                        let x = u64::from_ne_bytes(w.try_into().unwrap_or([0; 8]));
                        w.copy_from_slice(&x.wrapping_mul(2).wrapping_add(1).to_ne_bytes());
                    }
                    barrier.wait();
                }
            });
        }
        for _ in 0..passes {
            // The clock starts before the release: on a small machine this thread may be
            // preempted right after it, and the workers could finish before it reads the clock.
            let t = std::time::Instant::now();
            barrier.wait();
            barrier.wait();
            times.push(t.elapsed().as_secs_f64());
        }
    });
    times.into_iter().fold(f64::INFINITY, f64::min)
}
