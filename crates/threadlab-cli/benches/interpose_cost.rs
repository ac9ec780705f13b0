//! What the interposer that `threadlab run` loads with `LD_PRELOAD` costs a program that does not
//! wait: ns per uncontended `pthread_mutex_lock` + `unlock` pair, in a process with one thread
//! (where glibc's mutex skips its atomic instructions), in one with several, and with two
//! threads each taking its own mutex (40 million acquisitions in all, wall time per pair; each
//! mutex on a cache line of its own), and µs per thread created and joined. A C program written
//! here, compiled with the system `cc`, run with and without the interposer, alternately; each
//! figure is the median of the runs. Then the same pairs in one process, through the interposer
//! and through glibc's functions called directly (found with `dlopen` of libc), in alternated
//! blocks: the ratio that the VM's changes of CPU speed between runs do not move.
//!
//! `cargo bench -p threadlab-cli --bench interpose_cost`

use std::path::Path;
use std::process::Command;

const PROGRAM: &str = r#"
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}
static void *nothing(void *a) { return a; }
static long each;
/* Each thread's own mutex on a cache line of its own: no false sharing between the two. */
static struct { pthread_mutex_t m; double ratio; } __attribute__((aligned(64))) mine[2] = {
    {PTHREAD_MUTEX_INITIALIZER, 0}, {PTHREAD_MUTEX_INITIALIZER, 0}};
static void *own(void *p) {
    for (long i = 0; i < each; i++) {
        pthread_mutex_lock(p);
        __asm__ volatile("" ::: "memory");
        pthread_mutex_unlock(p);
    }
    return 0;
}
/* glibc's own functions, called directly (not through the interposer). */
static int (*direct_lock)(pthread_mutex_t *), (*direct_unlock)(pthread_mutex_t *);
static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
/* Blocks of pairs through the program's own calls and through glibc's directly, alternated in
 * one process on one CPU, so the machine's speed changes hit both alike: the median of the
 * blocks' ratios. */
#define BLOCKS 101
static double ratio_on(pthread_mutex_t *x, long block) {
    double r[BLOCKS];
    for (int b = 0; b < BLOCKS; b++) {
        double t0 = now();
        for (long i = 0; i < block; i++) {
            direct_lock(x);
            __asm__ volatile("" ::: "memory");
            direct_unlock(x);
        }
        double t1 = now();
        for (long i = 0; i < block; i++) {
            pthread_mutex_lock(x);
            __asm__ volatile("" ::: "memory");
            pthread_mutex_unlock(x);
        }
        r[b] = (now() - t1) / (t1 - t0);
    }
    qsort(r, BLOCKS, sizeof r[0], by_value);
    return r[BLOCKS / 2];
}
static void *own_ratio(void *p) {
    long i = (long)p;
    mine[i].ratio = ratio_on(&mine[i].m, each);
    return 0;
}
int main(int argc, char **argv) {
    const char *what = argv[1];
    long n = atol(argv[2]);
    void *libc = dlopen("libc.so.6", RTLD_NOLOAD | RTLD_NOW);
    direct_lock = libc ? dlsym(libc, "pthread_mutex_lock") : NULL;
    direct_unlock = libc ? dlsym(libc, "pthread_mutex_unlock") : NULL;
    if (strcmp(what, "pair-multi") == 0 || strcmp(what, "ratio-multi") == 0) {
        pthread_t t;
        pthread_create(&t, 0, nothing, 0);
        pthread_join(t, 0);
    }
    if (strncmp(what, "ratio", 5) == 0) {
        if (!direct_lock || !direct_unlock) return 1;
        if (strcmp(what, "ratio-two-own") == 0) {
            pthread_t t[2];
            each = n;
            for (long i = 0; i < 2; i++) pthread_create(&t[i], 0, own_ratio, (void *)i);
            for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
            printf("%.4f\n", (mine[0].ratio + mine[1].ratio) / 2);
        } else {
            printf("%.4f\n", ratio_on(&m, n));
        }
        return 0;
    }
    double t0 = now();
    if (strcmp(what, "two-own") == 0) {
        pthread_t t[2];
        each = n;
        for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, own, &mine[i].m);
        for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
    } else if (strcmp(what, "thread") == 0) {
        for (long i = 0; i < n; i++) {
            pthread_t t;
            pthread_create(&t, 0, nothing, 0);
            pthread_join(t, 0);
        }
    } else {
        for (long i = 0; i < n; i++) {
            pthread_mutex_lock(&m);
            __asm__ volatile("" ::: "memory");
            pthread_mutex_unlock(&m);
        }
    }
    printf("%.3f\n", (now() - t0) / n);
    return 0;
}
"#;

const RUNS: usize = 7;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn run(exe: &Path, what: &str, n: u64, preload: Option<(&Path, &Path)>) -> f64 {
    let mut cmd = Command::new(exe);
    cmd.args([what, &n.to_string()]);
    if let Some((lib, dir)) = preload {
        cmd.env("LD_PRELOAD", lib)
            .env("THREADLAB_INTERPOSE_DIR", dir);
    }
    let out = cmd.output().expect("run the benchmark program");
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("ns per operation")
}

fn main() {
    let lib = Path::new(concat!(env!("OUT_DIR"), "/libthreadlab_interpose.so"));
    if std::fs::metadata(lib).map_or(true, |m| m.len() == 0) {
        println!("no interposer was built (no C compiler): nothing to measure");
        return;
    }
    let dir = std::env::temp_dir().join(format!("threadlab-interpose-cost-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    let src = dir.join("cost.c");
    let exe = dir.join("cost");
    std::fs::write(&src, PROGRAM).expect("write the program");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let built = Command::new(&cc)
        .args(["-O2", "-o"])
        .arg(&exe)
        .arg(&src)
        .args(["-lpthread", "-ldl"])
        .status()
        .is_ok_and(|s| s.success());
    if !built {
        println!("`{cc}` did not compile the benchmark program: nothing to measure");
        return;
    }
    let records = dir.join("records");
    std::fs::create_dir_all(&records).expect("records directory");
    println!("medians of {RUNS} runs, with and without the interposer alternately");
    for (what, n, unit, scale) in [
        (
            "pair-single",
            20_000_000,
            "ns per lock + unlock pair, one thread",
            1.0,
        ),
        (
            "pair-multi",
            20_000_000,
            "ns per lock + unlock pair, after a second thread ran",
            1.0,
        ),
        (
            "two-own",
            20_000_000,
            "ns per pair, two threads each on its own mutex (wall)",
            1.0,
        ),
        ("thread", 5_000, "µs per thread created and joined", 1e-3),
    ] {
        let (mut bare, mut with) = (Vec::new(), Vec::new());
        for _ in 0..RUNS {
            bare.push(run(&exe, what, n, None) * scale);
            with.push(run(&exe, what, n, Some((lib, &records))) * scale);
        }
        let (b, w) = (median(bare), median(with));
        println!("{unit:<55} {b:>8.2} without, {w:>8.2} with: {:.2}x", w / b);
    }
    // The same pairs through the interposer and through glibc's functions called directly, in
    // blocks alternated inside one process: on a VM whose CPU speed changes from one run to the
    // next, the steadier figure of the cost.
    println!("in one process, through the interposer / glibc's functions called directly (median of 101 alternated blocks; medians of {RUNS} runs):");
    for (what, block, unit) in [
        (
            "ratio-multi",
            200_000,
            "lock + unlock pair, after a second thread ran",
        ),
        (
            "ratio-two-own",
            200_000,
            "two threads each on its own mutex",
        ),
    ] {
        let ratios: Vec<f64> = (0..RUNS)
            .map(|_| run(&exe, what, block, Some((lib, &records))))
            .collect();
        println!("{unit:<55} {:>8.2}x", median(ratios));
    }
    let _ = std::fs::remove_dir_all(&dir);
}
