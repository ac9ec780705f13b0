//! Small programs with known behaviour for `threadlab run` to observe (the hidden `threadlab
//! demo KIND` subcommand; `tests/observe.rs` and the README's cost figures use them):
//! - `mutex`: two threads (`contender-a`, `-b`) take one `static std::sync::Mutex`, each holding
//!   it while it works, so each waits in `futex` on the same address while the other holds it;
//! - `spin`: four CPU-bound threads (`spinner-N`) confined to two CPUs;
//! - `threads`: a thread per task (`task N`), four at a time, created and joined by the thousand;
//! - `join`: exactly `--threads N` threads (`task N`), each created, run ~20 µs and joined
//!   before the next (ignores `--seconds`);
//! - `sleep`: one thread (`sleeper`) in `nanosleep` loops;
//! - `idle`: `--threads N` threads asleep, to measure the sampler's cost per thread;
//! - `rows`: *Multithreading Isn't Free*'s thread per row (`baselines::thread_per_task`) over a 403×302
//!   image, pass after pass (the lab's `observed` experiment).

use std::hint::black_box;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The lock `mutex` contends on; a `static` so the observer names it from the ELF symbols.
static DEMO_LOCK: Mutex<u64> = Mutex::new(0);

/// Busy work for about `d`.
fn spin_for(d: Duration) {
    let t = Instant::now();
    let mut x = 0u64;
    while t.elapsed() < d {
        x = black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
    }
}

fn named(name: String, f: impl FnOnce() + Send + 'static) -> std::thread::JoinHandle<()> {
    std::thread::Builder::new()
        .name(name)
        .spawn(f)
        .expect("demo: cannot start a thread")
}

/// Runs demo `kind` for `seconds` with `threads` threads (for `idle`); `Err` for an unknown kind.
pub fn run(kind: &str, seconds: Duration, threads: usize) -> Result<(), String> {
    let now = Instant::now();
    // `--seconds` is at most a year (cli.rs); saturate regardless.
    let until = now.checked_add(seconds).unwrap_or(now);
    match kind {
        "mutex" => {
            let hs: Vec<_> = ["contender-a", "contender-b"]
                .into_iter()
                .map(|n| {
                    named(n.into(), move || {
                        while Instant::now() < until {
                            let mut g = DEMO_LOCK.lock().unwrap_or_else(|e| e.into_inner());
                            spin_for(Duration::from_micros(2000));
                            *g += 1;
                            drop(g);
                            spin_for(Duration::from_micros(1000));
                        }
                    })
                })
                .collect();
            hs.into_iter().for_each(|h| h.join().expect("demo mutex"));
        }
        "spin" => {
            pin_to_two_cpus();
            let hs: Vec<_> = (0..4)
                .map(|i| {
                    named(format!("spinner-{i}"), move || {
                        spin_for(until - Instant::now())
                    })
                })
                .collect();
            hs.into_iter().for_each(|h| h.join().expect("demo spin"));
        }
        "threads" => {
            let mut created = 0u64;
            while Instant::now() < until {
                let hs: Vec<_> = (0..4)
                    .map(|i| named(format!("task {i}"), || spin_for(Duration::from_micros(20))))
                    .collect();
                created += hs.len() as u64;
                hs.into_iter().for_each(|h| h.join().expect("demo threads"));
            }
            println!("demo threads: created {created} threads");
        }
        "join" => {
            for i in 0..threads {
                named(format!("task {}", i % 4), || {
                    spin_for(Duration::from_micros(20))
                })
                .join()
                .expect("demo join");
            }
            println!("demo join: created {threads} threads");
        }
        "sleep" => named("sleeper".into(), move || {
            while Instant::now() < until {
                std::thread::sleep(Duration::from_millis(50));
            }
        })
        .join()
        .expect("demo sleep"),
        "idle" => {
            let hs: Vec<_> = (0..threads)
                .map(|i| {
                    named(format!("idle-{i}"), move || {
                        while Instant::now() < until {
                            std::thread::sleep(Duration::from_millis(200));
                        }
                    })
                })
                .collect();
            hs.into_iter().for_each(|h| h.join().expect("demo idle"));
        }
        "rows" => {
            rows(until);
        }
        _ => {
            return Err(format!(
                "unknown demo `{kind}`; valid: mutex, spin, threads, join, sleep, idle, rows"
            ))
        }
    }
    Ok(())
}

/// Passes of `pixels = 2 * pixels + 1` over a 403×302×4-byte image, a fresh thread per row,
/// until `until`; returns the passes made.
pub fn rows(until: Instant) -> u64 {
    let (width, height) = (403 * 4, 302);
    let mut image = vec![1u8; width * height];
    let mut passes = 0;
    while Instant::now() < until {
        crate::baselines::thread_per_task::for_each_row(&mut image, width, &|row| {
            for p in row.iter_mut() {
                *p = p.wrapping_mul(2).wrapping_add(1);
            }
        });
        passes += 1;
    }
    passes
}

/// Confines this process to its first two allowed CPUs (fewer if it has fewer).
fn pin_to_two_cpus() {
    // SAFETY: `set` is a plain bit mask, read and written by the kernel with its size given.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) != 0 {
            return;
        }
        let mut keep: libc::cpu_set_t = std::mem::zeroed();
        let mut n = 0;
        for cpu in 0..libc::CPU_SETSIZE as usize {
            if n < 2 && libc::CPU_ISSET(cpu, &set) {
                libc::CPU_SET(cpu, &mut keep);
                n += 1;
            }
        }
        libc::sched_setaffinity(0, std::mem::size_of_val(&keep), &keep);
    }
}
