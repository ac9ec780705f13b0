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

/// Best (minimum) seconds per pass of [`kernel`] over `buf` split in `threads` parts: the
/// calling thread runs the first, threads started beforehand the others, each released per pass
/// by a generation counter they spin on and counted back by another (a hand-off of well under a
/// microsecond; a sleeping barrier's wake-ups, tens of microseconds, outweighed a small image's
/// pass). The same vectorised code as every variant, with no thread creation and no queue.
/// Meant for `threads` up to the CPUs: the helpers spin between passes (yielding when their
/// CPU is wanted).
pub fn bandwidth_bound(buf: &mut [u8], threads: usize, passes: usize) -> f64 {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let chunk = buf
        .len()
        .div_ceil(threads.max(1))
        .next_multiple_of(64)
        .max(64);
    let (go, done) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let wait_for = |counter: &AtomicUsize, target: usize| {
        let mut spins = 0u32;
        // Acquire: pairs with the Release increment that announced the pass (or its end), so
        // the bytes the other side wrote are visible here.
        while counter.load(Ordering::Acquire) < target {
            spins += 1;
            if spins % 1024 == 0 {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
    };
    let mut times = Vec::with_capacity(passes);
    std::thread::scope(|s| {
        let mut parts = buf.chunks_mut(chunk);
        let mine = parts.next().unwrap_or_default();
        let helpers = parts.len();
        for part in parts {
            let (go, done, wait_for) = (&go, &done, &wait_for);
            s.spawn(move || {
                for pass in 1..=passes {
                    wait_for(go, pass);
                    kernel(part);
                    // Release: pairs with the caller's Acquire wait for the pass's end.
                    done.fetch_add(1, Ordering::Release);
                }
            });
        }
        for pass in 1..=passes {
            let t = std::time::Instant::now();
            // Release: pairs with the helpers' Acquire wait for the pass to begin.
            go.store(pass, Ordering::Release);
            kernel(mine);
            wait_for(&done, pass * helpers);
            times.push(t.elapsed().as_secs_f64());
        }
    });
    times.into_iter().fold(f64::INFINITY, f64::min)
}

/// What `threads` threads get done together: each runs [`kernel`] over its own part of the rows
/// of `buf` (`pitch` bytes each) again and again, from a common start for `duration`, counting
/// the bytes it finished. Its part is one band of consecutive rows, or, with `interleave =
/// Some(c)`, every `threads`-th block of `c` rows (thread k takes blocks k, k + threads, …), so
/// that the threads move through memory side by side, as a pool's small tasks do. Returns the
/// seconds one pass over the whole of `buf` takes at their combined rate (the sum of the
/// threads' bytes per second), so it compares with a variant's time per pass. No thread waits
/// for another: a slower CPU only adds less, where a split pass waits for its slowest part.
pub fn throughput(
    buf: &mut [u8],
    pitch: usize,
    threads: usize,
    duration: std::time::Duration,
    interleave: Option<usize>,
) -> f64 {
    use std::time::Instant;
    let pitch = pitch.max(1);
    let threads = threads.max(1);
    let (rows, total) = (buf.len() / pitch, buf.len());
    let block = interleave.unwrap_or_else(|| rows.div_ceil(threads)).max(1) * pitch;
    let mut parts: Vec<Vec<&mut [u8]>> = (0..threads).map(|_| Vec::new()).collect();
    for (i, b) in buf.chunks_mut(block).enumerate() {
        parts[i % threads].push(b);
    }
    parts.retain(|p| !p.is_empty());
    let start = std::sync::Barrier::new(parts.len().max(1));
    let run = |mut part: Vec<&mut [u8]>| -> f64 {
        start.wait();
        let from = Instant::now();
        let (mut done, mut rows_done) = (0usize, 0usize);
        'outer: loop {
            for block in part.iter_mut() {
                for row in block.chunks_mut(pitch) {
                    kernel(row);
                    done += row.len();
                    rows_done += 1;
                    // The clock every 8 rows (32 KB at the article's width): under 1% of the time.
                    if rows_done % 8 == 0 && from.elapsed() >= duration {
                        break 'outer;
                    }
                }
            }
            if from.elapsed() >= duration {
                break;
            }
        }
        done as f64 / from.elapsed().as_secs_f64()
    };
    let rate: f64 = std::thread::scope(|s| {
        let mut parts = parts.into_iter();
        let mine = parts.next().unwrap_or_default();
        let others: Vec<_> = parts.map(|p| s.spawn(|| run(p))).collect();
        let mut rate = run(mine);
        for h in others {
            rate += h.join().expect("a throughput thread panicked");
        }
        rate
    });
    total as f64 / rate
}
