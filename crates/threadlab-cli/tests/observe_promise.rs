//! `threadlab run`'s promise, checked on hostile programs written here: the command behaves
//! exactly as it does unobserved (descriptors, signals, streams, every pthread answer, its
//! exit), nothing the interposer saw is lost or invented (`_exit`, `abort`, `exec`, forked
//! children, process-shared locks, cancelled threads, nested runs, PID namespaces), what it
//! keeps is bounded, and its own failures are clear messages. Each run is under a watchdog, so
//! a hang fails the test instead of blocking CI. Linux only.
//!
//! `THREADLAB_TEST_BIN=/path/to/threadlab` runs them against another build.

#![cfg(target_os = "linux")]

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

mod observe_support;
use observe_support::{compile_c, scratch, threadlab};

/// How long one observed run may take before the test fails instead of hanging.
const WATCHDOG: Duration = Duration::from_secs(120);

fn within(cmd: Command) -> Output {
    observe_support::output_within(cmd, WATCHDOG)
}

/// `threadlab run --report DIR/report.txt FLAGS -- ARGV` with the records (`TMPDIR`) and the
/// library cache (`XDG_CACHE_HOME`) in `dir`, no controlling terminal (so the report's name is
/// never written to one), `setup` applied: its output and the report.
fn run_with(
    dir: &Path,
    flags: &[&str],
    argv: &[&str],
    setup: impl FnOnce(&mut Command),
) -> (Output, String) {
    let report = dir.join("report.txt");
    let _ = std::fs::remove_file(&report);
    let mut cmd = Command::new(threadlab());
    cmd.arg("run")
        .arg("--report")
        .arg(&report)
        .args(flags)
        .arg("--")
        .args(argv)
        .env("TMPDIR", dir)
        .env("XDG_CACHE_HOME", dir.join("cache"));
    no_terminal(&mut cmd);
    setup(&mut cmd);
    let out = within(cmd);
    let text = std::fs::read_to_string(&report).unwrap_or_default();
    (out, text)
}

/// `cmd` starts in a session of its own, without a controlling terminal (so `run` never writes
/// the report's name to one).
fn no_terminal(cmd: &mut Command) {
    // SAFETY: setsid is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
}

fn run(dir: &Path, argv: &[&str]) -> (Output, String) {
    run_with(dir, &[], argv, |_| {})
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The program's own count, from its line `contended acquisitions: N`.
fn own_count(out: &Output) -> u64 {
    stdout(out)
        .lines()
        .find_map(|l| l.strip_prefix("contended acquisitions: "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("the program prints its count: {}", stdout(out)))
}

/// The `N` of the report's `lock NAME: N contended waits` line for the lock named `name`.
fn waits_of(report: &str, name: &str) -> Option<u64> {
    report
        .lines()
        .filter_map(|l| l.trim().strip_prefix("lock "))
        .filter(|l| l.starts_with(name))
        .find_map(|l| l.split_once(": ").map(|x| x.1))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
}

/// The observation's window in seconds, from `threadlab observer: `…` (pid N) for 1.132 s at
/// 40 Hz` (or `for 926.88 ms`).
fn window_s(report: &str) -> f64 {
    report
        .lines()
        .find_map(|l| l.split(") for ").nth(1))
        .map(|l| l.split_whitespace().take(2).collect::<Vec<_>>())
        .and_then(|w| {
            let n: f64 = w.first()?.parse().ok()?;
            Some(if *w.get(1)? == "ms" { n / 1e3 } else { n })
        })
        .unwrap_or_else(|| panic!("no window in\n{report}"))
}

/// Checks the report's waits for the lock named `name` against the program's own count of its
/// failed try-locks: equal, but for a wait the program counted whose lock was free again by the
/// time its lock call ran (the interposer then sees no wait): at most 2% fewer, never more.
fn assert_waits(report: &str, name: &str, own: u64) {
    let seen = waits_of(report, name).unwrap_or_else(|| panic!("no lock {name} in\n{report}"));
    assert!(
        seen <= own && seen + own / 50 + 1 >= own,
        "{seen} waits reported, {own} counted by the program:\n{report}"
    );
}

/// The interposer's records directories left in `dir` (a run removes its own).
fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("threadlab-interpose-"))
        .collect()
}

/// Two threads contending `big_lock` (each holds it across a short sleep), counting their own
/// contended acquisitions (a failed trylock before the lock). `contend(n)` runs n rounds each;
/// the two start every round together (a barrier), so the rounds overlap even on a machine so
/// busy that one thread could otherwise finish before the other starts.
const CONTEND: &str = r#"
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static pthread_mutex_t big_lock = PTHREAD_MUTEX_INITIALIZER;
static long contended;
static long rounds;
static pthread_barrier_t round_start;
static void *work(void *p) {
    for (long i = 0; i < rounds; i++) {
        pthread_barrier_wait(&round_start);
        if (pthread_mutex_trylock(&big_lock) != 0) {
            __atomic_fetch_add(&contended, 1, __ATOMIC_RELAXED);
            pthread_mutex_lock(&big_lock);
        }
        usleep(300);
        pthread_mutex_unlock(&big_lock);
        usleep(50);
    }
    return p;
}
static void contend(long n) {
    pthread_t t[2];
    rounds = n;
    pthread_barrier_init(&round_start, 0, 2);
    for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, work, 0);
    for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
    printf("contended acquisitions: %ld\n", contended);
    fflush(stdout);
}
"#;

fn program(dir: &Path, name: &str, body: &str) -> Option<PathBuf> {
    compile_c(dir, name, &format!("{CONTEND}\n{body}"))
}

/// The interposer owns no descriptor the program can see or collide with: writing to fd 3
/// fails as unobserved, the program's count of its open descriptors is the same, a daemon-like
/// program that closes every descriptor from 3 up and opens its log there gets only its own
/// bytes in it, and with RLIMIT_NOFILE at 16 it opens as many files as unobserved.
#[test]
fn the_interposer_owns_no_descriptor_of_the_program() {
    let dir = scratch("fds");
    let Some(exe) = program(
        &dir,
        "fds",
        r#"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
static int open_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) if (e->d_name[0] != '.') n++;
    closedir(d);
    return n - 1; /* the directory's own */
}
int main(int argc, char **argv) {
    printf("open descriptors: %d\n", open_fds());
    printf("write to fd 3: %s\n", write(3, "x", 1) == 1 ? "ok" : strerror(errno));
    if (strcmp(argv[1], "daemon") == 0) {
        for (int fd = 3; fd < 1024; fd++) close(fd);
        int log = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0600);
        printf("log descriptor: %d\n", log);
        contend(40);
        dprintf(log, "log line\n");
        close(log);
    } else {
        struct rlimit r = {16, 16};
        setrlimit(RLIMIT_NOFILE, &r);
        int n = 0;
        while (open("/dev/null", O_RDONLY) >= 0) n++;
        printf("opened with 16 allowed: %d\n", n);
        contend(40);
    }
    return 0;
}
"#,
    ) else {
        return;
    };
    for mode in ["daemon", "rlimit"] {
        let log = dir.join(format!("{mode}.log"));
        let argv = [exe.to_str().unwrap(), mode, log.to_str().unwrap()];
        let plain = Command::new(argv[0]).args(&argv[1..]).output().unwrap();
        let (out, report) = run(&dir, &argv);
        let strip = |o: &Output| {
            stdout(o)
                .lines()
                .filter(|l| !l.starts_with("contended"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(
            strip(&out),
            strip(&plain),
            "{mode}: the program saw a difference"
        );
        assert!(out.status.success(), "{mode}: {report}");
        if mode == "daemon" {
            assert_eq!(
                std::fs::read(&log).unwrap(),
                b"log line\n",
                "the log holds only its own"
            );
        }
        // And nothing was lost for it: every contended acquisition is in the report.
        assert_waits(&report, "big_lock", own_count(&out));
    }
}

/// What the command inherits from `threadlab run`'s parent: ignored signals stay ignored
/// (`trap '' PIPE` makes `yes | head -1` exit 1 instead of dying), a blocked signal stays
/// blocked, a closed stdout stays closed.
#[test]
fn signal_dispositions_the_mask_and_closed_streams_are_inherited_as_unobserved() {
    let dir = scratch("inherit");
    // The launcher ignores four signals, blocks SIGUSR1, closes stdout, then execs the rest.
    let Some(launch) = compile_c(
        &dir,
        "launch",
        r#"
#include <signal.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int ign[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    for (int i = 0; i < 4; i++) signal(ign[i], SIG_IGN);
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    sigprocmask(SIG_BLOCK, &s, 0);
    close(1);
    execvp(argv[1], argv + 1);
    return 127;
}
"#,
    ) else {
        return;
    };
    let Some(probe) = compile_c(
        &dir,
        "probe",
        r#"
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int open_[3];
    for (int fd = 0; fd < 3; fd++) open_[fd] = fcntl(fd, F_GETFD) != -1;
    FILE *f = fopen(argv[1], "w");
    int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT};
    for (int i = 0; i < 5; i++) {
        struct sigaction sa;
        sigaction(sigs[i], 0, &sa);
        fprintf(f, "signal %d: %s\n", sigs[i], sa.sa_handler == SIG_IGN ? "ignored" : "default");
    }
    sigset_t s;
    sigprocmask(SIG_BLOCK, 0, &s);
    fprintf(f, "SIGUSR1 blocked: %d\n", sigismember(&s, SIGUSR1));
    for (int fd = 0; fd < 3; fd++) fprintf(f, "fd %d open: %d\n", fd, open_[fd]);
    return 0;
}
"#,
    ) else {
        return;
    };
    let (plain_out, seen_out) = (dir.join("plain.txt"), dir.join("seen.txt"));
    let plain = Command::new(&launch)
        .arg(&probe)
        .arg(&plain_out)
        .output()
        .unwrap();
    assert!(plain.status.success());
    let report = dir.join("report.txt");
    let mut cmd = Command::new(&launch);
    cmd.arg(threadlab())
        .args(["run", "--report"])
        .arg(&report)
        .arg("--")
        .arg(&probe)
        .arg(&seen_out)
        .env("TMPDIR", &dir)
        .env("XDG_CACHE_HOME", dir.join("cache"));
    let out = within(cmd);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let plain = std::fs::read_to_string(&plain_out).unwrap();
    assert!(
        plain.contains("signal 13: ignored") && plain.contains("fd 1 open: 0"),
        "{plain}"
    );
    assert_eq!(std::fs::read_to_string(&seen_out).unwrap(), plain);
}

/// A command killed by a signal: `run` writes its report, removes its records directory, then
/// dies of the same signal, as its parent would have seen without it.
#[test]
fn death_by_a_signal_is_passed_on_after_the_report() {
    let dir = scratch("death");
    let (out, report) = run(&dir, &["sh", "-c", "kill -TERM $$"]);
    assert_eq!(out.status.signal(), Some(libc::SIGTERM), "{report}");
    assert!(report.contains("killed by signal 15"), "{report}");
    assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));
}

/// SIGHUP sent to `run` (a closed terminal, `kill -HUP`) reaches the command; `run` still
/// writes its report and removes its directory. A closed stderr (its reader gone) does not kill
/// `run` when it names the report there.
#[test]
fn sighup_and_a_closed_stderr_still_leave_a_report_and_no_directory() {
    let dir = scratch("hup");
    let report = dir.join("report.txt");
    let mut cmd = Command::new(threadlab());
    cmd.args(["run", "--report"])
        .arg(&report)
        .args(["--", "sleep", "60"])
        .env("TMPDIR", &dir)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().unwrap();
    let pid = child.id();
    // The command is running once `run` has a child named sleep.
    let started = (0..200).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
            .unwrap_or_default()
            .split_whitespace()
            .any(|c| {
                std::fs::read_to_string(format!("/proc/{c}/comm"))
                    .is_ok_and(|n| n.trim() == "sleep")
            })
    });
    assert!(started, "the command started");
    // SAFETY: kill has no memory preconditions; `pid` is our child.
    unsafe { libc::kill(pid as i32, libc::SIGHUP) };
    let out = observe_support::wait_within(child, WATCHDOG, "threadlab run -- sleep 60");
    let text = std::fs::read_to_string(&report).unwrap_or_default();
    assert!(text.contains("killed by signal 1"), "{text}");
    assert_eq!(out.status.signal(), Some(libc::SIGHUP));
    assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));

    // No --report, no terminal: the report's name goes to stderr, whose reader is gone.
    let mut cmd = Command::new(threadlab());
    cmd.args(["run", "--", "true"])
        .env("TMPDIR", &dir)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    no_terminal(&mut cmd);
    let mut child = cmd.spawn().unwrap();
    drop(child.stderr.take());
    let out = observe_support::wait_within(child, WATCHDOG, "threadlab run -- true");
    assert_eq!(out.status.code(), Some(0), "{:?}", out.status);
    let reports = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("threadlab-run-")
        })
        .count();
    assert_eq!(reports, 1, "the report was written");
    assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));
}

/// Every pthread answer passes through unchanged: robust mutexes whose owner died answer
/// EOWNERDEAD (default, error-checking, recursive, timed, priority-inheritance), an abandoned
/// one left inconsistent becomes ENOTRECOVERABLE, an error-checking relock EDEADLK, a
/// recursive one counts, a timed lock on a held mutex times out. The program prints every
/// answer; observed and unobserved must print the same (a wrapper whose trylock took the lock
/// behind the program's back hung on the first case).
#[test]
fn every_mutex_answer_is_the_programs_as_unobserved() {
    let dir = scratch("robust");
    let Some(exe) = compile_c(
        &dir,
        "robust",
        r#"
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
static pthread_mutex_t m;
static void *die_holding(void *p) { pthread_mutex_lock(&m); return p; }
static void *hold_a_while(void *p) { pthread_mutex_lock(&m); usleep(300000); pthread_mutex_unlock(&m); return p; }
static void make(int type, int robust, int pi) {
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, type);
    if (robust) pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    if (pi) pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT);
    pthread_mutex_init(&m, &a);
}
static struct timespec in_ms(long ms) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_nsec += ms * 1000000;
    t.tv_sec += t.tv_nsec / 1000000000;
    t.tv_nsec %= 1000000000;
    return t;
}
static void abandoned(const char *what, int type, int pi, int how) {
    make(type, 1, pi);
    pthread_t t;
    pthread_create(&t, 0, die_holding, 0);
    pthread_join(t, 0);
    struct timespec ts = in_ms(2000);
    int r = how == 0 ? pthread_mutex_lock(&m) : how == 1 ? pthread_mutex_timedlock(&m, &ts) : pthread_mutex_trylock(&m);
    printf("%s: lock %d", what, r);
    if (r == EOWNERDEAD) printf(", consistent %d", pthread_mutex_consistent(&m));
    printf(", unlock %d\n", pthread_mutex_unlock(&m));
    pthread_mutex_destroy(&m);
}
int main(void) {
    abandoned("robust default", PTHREAD_MUTEX_DEFAULT, 0, 0);
    abandoned("robust error-checking", PTHREAD_MUTEX_ERRORCHECK, 0, 0);
    abandoned("robust recursive", PTHREAD_MUTEX_RECURSIVE, 0, 0);
    abandoned("robust timed", PTHREAD_MUTEX_DEFAULT, 0, 1);
    abandoned("robust trylock", PTHREAD_MUTEX_DEFAULT, 0, 2);
    abandoned("robust priority-inheritance", PTHREAD_MUTEX_DEFAULT, 1, 0);
    make(PTHREAD_MUTEX_DEFAULT, 1, 0);
    pthread_t t;
    pthread_create(&t, 0, die_holding, 0);
    pthread_join(t, 0);
    int r1 = pthread_mutex_lock(&m), r2 = pthread_mutex_unlock(&m), r3 = pthread_mutex_lock(&m);
    printf("left inconsistent: %d %d %d\n", r1, r2, r3);
    make(PTHREAD_MUTEX_ERRORCHECK, 0, 0);
    r1 = pthread_mutex_lock(&m); r2 = pthread_mutex_lock(&m); r3 = pthread_mutex_unlock(&m);
    printf("error-checking relock: %d %d %d %d\n", r1, r2, r3, pthread_mutex_unlock(&m));
    make(PTHREAD_MUTEX_RECURSIVE, 0, 0);
    r1 = pthread_mutex_lock(&m); r2 = pthread_mutex_lock(&m);
    r3 = pthread_mutex_unlock(&m);
    printf("recursive: %d %d %d %d %d\n", r1, r2, r3, pthread_mutex_unlock(&m), pthread_mutex_unlock(&m));
    make(PTHREAD_MUTEX_DEFAULT, 0, 0);
    pthread_create(&t, 0, hold_a_while, 0);
    usleep(50000);
    struct timespec ts = in_ms(20);
    printf("timed on a held mutex: %d\n", pthread_mutex_timedlock(&m, &ts));
    pthread_join(t, 0);
    return 0;
}
"#,
    ) else {
        return;
    };
    let plain = Command::new(&exe).output().unwrap();
    assert!(stdout(&plain).contains("robust default: lock 130, consistent 0, unlock 0"));
    let (out, report) = run(&dir, &[exe.to_str().unwrap()]);
    assert_eq!(stdout(&out), stdout(&plain), "{report}");
}

/// Records buffered when the program ends by `_exit`, `abort` or `exec` are in the report:
/// every contended acquisition the program counted.
#[test]
fn nothing_is_lost_at_exit_abort_or_exec() {
    let dir = scratch("ends");
    let Some(exe) = program(
        &dir,
        "ends",
        r#"
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
    contend(20);
    if (strcmp(argv[1], "_exit") == 0) _exit(0);
    if (strcmp(argv[1], "abort") == 0) abort();
    if (strcmp(argv[1], "exec") == 0) execl("/bin/true", "true", (char *)0);
    return 0;
}
"#,
    ) else {
        return;
    };
    for how in ["_exit", "abort", "exec"] {
        let (out, report) = run(&dir, &[exe.to_str().unwrap(), how]);
        if how == "abort" {
            assert_eq!(out.status.signal(), Some(libc::SIGABRT), "{report}");
        } else {
            assert!(out.status.success(), "{how}: {report}");
        }
        let own = own_count(&out);
        assert!(own > 0, "{how}: the program waited");
        assert_waits(&report, "big_lock", own);
    }
}

/// A child made by `fork`, `_Fork` (no fork handlers run), a raw `clone`, or `vfork` then
/// `exec`: the parent's buffered records are neither written again by the child nor lost, so
/// the report has exactly the waits the parent counted (a `_Fork` child used to write them a
/// second time).
#[test]
fn a_child_process_forgets_its_parents_records() {
    let dir = scratch("fork");
    let Some(exe) = program(
        &dir,
        "forks",
        r#"
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
int main(int argc, char **argv) {
    contend(20);
    pid_t c;
    if (strcmp(argv[1], "fork") == 0) c = fork();
    else if (strcmp(argv[1], "_Fork") == 0) c = _Fork();
    else if (strcmp(argv[1], "clone") == 0) c = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
    else {
        c = vfork();
        if (c == 0) { execl("/bin/true", "true", (char *)0); _exit(127); }
    }
    if (c == 0) {
        /* The child takes the lock once and ends: its own records only. */
        pthread_mutex_lock(&big_lock);
        pthread_mutex_unlock(&big_lock);
        if (strcmp(argv[1], "clone") == 0) _exit(0);
        exit(0);
    }
    waitpid(c, 0, 0);
    return 0;
}
"#,
    ) else {
        return;
    };
    for how in ["fork", "_Fork", "clone", "vfork"] {
        let (out, report) = run(&dir, &[exe.to_str().unwrap(), how]);
        assert!(out.status.success(), "{how}: {report}");
        assert_waits(&report, "big_lock", own_count(&out));
        assert!(
            report.contains("processes: 2 ran with the interposer"),
            "{how}: {report}"
        );
    }
}

/// A process-shared mutex between two single-threaded processes (each with one thread, where
/// the wrapper may skip the try-lock for a private lock): their contention is seen, every wait
/// counted, and the lock (in a `MAP_SHARED` anonymous mapping, `/dev/zero` in the maps) is one
/// lock named after that mapping, without reading the device.
#[test]
fn a_process_shared_lock_between_single_threaded_processes_is_seen() {
    let dir = scratch("pshared");
    let Some(exe) = compile_c(
        &dir,
        "pshared",
        r#"
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
struct shared { pthread_mutex_t m; long contended; };
static void loop(struct shared *s) {
    for (int i = 0; i < 30; i++) {
        if (pthread_mutex_trylock(&s->m) != 0) {
            __atomic_fetch_add(&s->contended, 1, __ATOMIC_RELAXED);
            pthread_mutex_lock(&s->m);
        }
        usleep(2000);
        pthread_mutex_unlock(&s->m);
        usleep(200);
    }
}
int main(void) {
    struct shared *s = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_mutex_init(&s->m, &a);
    pid_t c = fork();
    loop(s);
    if (c == 0) return 0;
    waitpid(c, 0, 0);
    printf("contended acquisitions: %ld\n", s->contended);
    return 0;
}
"#,
    ) else {
        return;
    };
    let (out, report) = run_with(&dir, &[], &[exe.to_str().unwrap()], limit_memory);
    assert!(out.status.success(), "{report}");
    let own = own_count(&out);
    assert!(own > 0, "the two processes contended");
    assert_waits(&report, "shared memory", own);
}

/// `threadlab run` and its command under a 4 GiB address-space limit: a reader that loops on
/// a device or reads a huge file whole fails here instead of taking the machine's memory.
fn limit_memory(cmd: &mut Command) {
    // SAFETY: setrlimit is async-signal-safe; the limit is initialised.
    unsafe {
        cmd.pre_exec(|| {
            let l = libc::rlimit {
                rlim_cur: 4 << 30,
                rlim_max: 4 << 30,
            };
            libc::setrlimit(libc::RLIMIT_AS, &l);
            Ok(())
        });
    }
}

/// Cancelled threads: 5,000 threads, each cancelled while it waits, one at a time. The program
/// measures its own heap: nothing is left behind per thread (8 KiB each used to leak), and the
/// report counts every thread's end (at most three alive at once, not 5,001).
#[test]
fn cancelled_threads_leak_nothing_and_are_counted() {
    let dir = scratch("cancel");
    let Some(exe) = compile_c(
        &dir,
        "cancel",
        r#"
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static void *wait_forever(void *p) { for (;;) pause(); return p; }
int main(void) {
    pthread_t t;
    pthread_create(&t, 0, wait_forever, 0);
    pthread_cancel(t);
    pthread_join(t, 0);
    long before = (long)mallinfo2().uordblks;
    for (int i = 1; i < 5000; i++) {
        pthread_create(&t, 0, wait_forever, 0);
        pthread_cancel(t);
        pthread_join(t, 0);
    }
    printf("heap growth: %ld KiB\n", ((long)mallinfo2().uordblks - before) / 1024);
    return 0;
}
"#,
    ) else {
        return;
    };
    let (out, report) = run_with(&dir, &["--sample-only"], &[exe.to_str().unwrap()], |_| {});
    let (outx, reportx) = run(&dir, &[exe.to_str().unwrap()]);
    for (out, report) in [(out, report), (outx, reportx)] {
        assert!(out.status.success(), "{report}");
        let growth: i64 = stdout(&out)
            .trim()
            .strip_prefix("heap growth: ")
            .and_then(|s| s.strip_suffix(" KiB"))
            .and_then(|s| s.parse().ok())
            .unwrap();
        assert!(
            growth < 1024,
            "the heap grew {growth} KiB over 4,999 threads"
        );
        assert!(report.contains("threads created: 5000 exactly"), "{report}");
    }
    let (_, report) = run(&dir, &[exe.to_str().unwrap()]);
    let at_most: u64 = report
        .split("at most ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{report}"));
    assert!(at_most <= 3, "at most {at_most} at once:\n{report}");
}

const TWO: &str = "int main(void) { contend(150); return 0; }";

/// `threadlab run` inside `threadlab run`: the inner report counts the program's waits once;
/// the outer run sees the program too (a second interposer used to count everything twice into
/// the inner run and nothing into the outer one).
#[test]
fn a_nested_run_counts_once_and_the_outer_run_sees_the_program() {
    let dir = scratch("nested");
    let Some(exe) = program(&dir, "two", TWO) else {
        return;
    };
    let inner = dir.join("inner.txt");
    let tl = threadlab();
    let argv = [
        tl.to_str().unwrap(),
        "run",
        "--report",
        inner.to_str().unwrap(),
        "--",
        exe.to_str().unwrap(),
    ];
    let (out, outer) = run(&dir, &argv);
    assert!(out.status.success(), "{outer}");
    let inner = std::fs::read_to_string(&inner).unwrap();
    let own = own_count(&out);
    assert_waits(&inner, "big_lock", own);
    assert!(inner.contains("threads created: 2 exactly"), "{inner}");
    assert_waits(&outer, "big_lock", own);
}

/// Two processes in PID namespaces of their own, both pid 1 there: two processes in the
/// report, each with its own waits (they used to be merged under one "pid 1").
#[test]
fn processes_in_pid_namespaces_are_kept_apart() {
    let dir = scratch("pidns");
    let Some(exe) = program(&dir, "two", TWO) else {
        return;
    };
    let e = exe.to_str().unwrap();
    let probe = Command::new("unshare")
        .args(["--pid", "--fork", "true"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: `unshare --pid --fork` is not allowed here");
        return;
    }
    let script = format!("unshare --pid --fork {e}; unshare --pid --fork {e}");
    let (out, report) = run(&dir, &["sh", "-c", &script]);
    assert!(out.status.success(), "{report}");
    let counts: Vec<u64> = stdout(&out)
        .lines()
        .filter_map(|l| l.strip_prefix("contended acquisitions: "))
        .map(|n| n.trim().parse().unwrap())
        .collect();
    assert_eq!(counts.len(), 2);
    let in_ns = report
        .lines()
        .filter(|l| l.contains("in PID namespace"))
        .count();
    assert_eq!(in_ns, 2, "{report}");
    assert_waits(&report, "big_lock", counts[0] + counts[1]);
}

/// Out of descriptors to sample 200 threads with: each thread not observed is counted once,
/// not once per tick, and the sampler goes on for the program's whole life (it used to be left
/// unable to list the threads, and stopped as if the program had ended).
#[test]
fn threads_not_observed_are_counted_once_each() {
    let dir = scratch("unopened");
    let Some(exe) = compile_c(
        &dir,
        "many",
        r#"
#include <pthread.h>
#include <unistd.h>
static void *nap(void *p) { usleep(1500000); return p; }
int main(void) {
    pthread_t t[200];
    for (int i = 0; i < 200; i++) pthread_create(&t[i], 0, nap, 0);
    for (int i = 0; i < 200; i++) pthread_join(t[i], 0);
    return 0;
}
"#,
    ) else {
        return;
    };
    let (out, report) = run_with(&dir, &[], &[exe.to_str().unwrap()], |cmd| {
        // SAFETY: setrlimit is async-signal-safe; the limit is initialised.
        unsafe {
            cmd.pre_exec(|| {
                let l = libc::rlimit {
                    rlim_cur: 96,
                    rlim_max: 96,
                };
                libc::setrlimit(libc::RLIMIT_NOFILE, &l);
                Ok(())
            });
        }
    });
    assert!(out.status.success(), "{report}");
    let unobserved: u64 = report
        .lines()
        .find_map(|l| l.strip_suffix(" thread(s) not observed: out of file descriptors"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no count of unobserved threads:\n{report}"));
    assert!(
        (1..=200).contains(&unobserved),
        "{unobserved} of 200 threads"
    );
    assert!(window_s(&report) >= 1.4, "{report}");
}

/// The library outlives the command (a background job started by it runs after `run` has
/// ended), and neither a `TMPDIR` with a space or a colon, nor a relative one, nor a cache
/// directory with a space, keeps the loader from preloading it.
#[test]
fn the_library_loads_after_the_command_and_from_any_tmpdir() {
    let dir = scratch("library");
    let Some(exe) = program(&dir, "two", TWO) else {
        return;
    };
    let e = exe.to_str().unwrap();
    let refused = |o: &Output| String::from_utf8_lossy(&o.stderr).contains("cannot be preloaded");
    // A background job that starts the program after the shell (and `run`) have ended; its
    // stderr is the captured pipe, read to its end.
    let script = format!("(sleep 1; {e} > /dev/null) &");
    let (out, report) = run(&dir, &["sh", "-c", &script]);
    assert!(
        !refused(&out),
        "{}\n{report}",
        String::from_utf8_lossy(&out.stderr)
    );
    for tmp in ["a b:c", "rel"] {
        let t = dir.join(tmp);
        std::fs::create_dir_all(&t).unwrap();
        let (out, report) = run_with(&dir, &[], &[e], |cmd| {
            if tmp == "rel" {
                cmd.current_dir(&dir).env("TMPDIR", "rel");
            } else {
                cmd.env("TMPDIR", &t);
            }
        });
        assert!(
            !refused(&out),
            "TMPDIR {tmp}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_waits(&report, "big_lock", own_count(&out));
    }
    let (out, report) = run_with(&dir, &[], &[e], |cmd| {
        cmd.env("XDG_CACHE_HOME", dir.join("my cache"));
    });
    assert!(!refused(&out), "{}", String::from_utf8_lossy(&out.stderr));
    assert_waits(&report, "big_lock", own_count(&out));
}

/// The observer's own failures name their reason: a missing `TMPDIR`, one that is a file, one
/// too full for records (a 1 MiB tmpfs, where mounting one is allowed) — never "built without
/// a C compiler" or "statically linked"; and a command that is not found exits 127, one that
/// cannot be run 126, as `env`, `timeout` and `nohup` do.
#[test]
fn its_own_failures_are_clear() {
    let dir = scratch("failures");
    let file = dir.join("a-file");
    std::fs::write(&file, "x").unwrap();
    for (tmp, why) in [
        ("/nonexistent-threadlab-tmp", "No such file"),
        (file.to_str().unwrap(), "not a directory"),
    ] {
        let (out, _) = run_with(&dir, &[], &["true"], |cmd| {
            cmd.env("TMPDIR", tmp);
        });
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(125), "{err}");
        assert!(
            err.contains(&format!("TMPDIR={tmp}")) && err.contains(why),
            "{err}"
        );
    }
    let full = dir.join("full");
    std::fs::create_dir_all(&full).unwrap();
    let script = format!(
        "mount -t tmpfs -o size=1m none {f} && TMPDIR={f} XDG_CACHE_HOME={c} {tl} run -- true",
        f = full.display(),
        c = dir.join("cache").display(),
        tl = threadlab().display()
    );
    let mut cmd = Command::new("unshare");
    cmd.args(["--mount", "sh", "-c", &script]);
    let out = within(cmd);
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("mount") || err.contains("unshare") {
        eprintln!("skipped the full TMPDIR: cannot mount a tmpfs here ({err})");
    } else {
        assert_eq!(out.status.code(), Some(125), "{err}");
        assert!(err.contains("KiB free"), "{err}");
    }
    let (out, _) = run(&dir, &["threadlab-no-such-command"]);
    assert_eq!(out.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&out.stderr).contains("threadlab-no-such-command"));
    let (out, _) = run(&dir, &[file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(126));
}

/// Without a terminal, the report's name goes to stderr on a line of its own, never glued onto
/// the command's unterminated last line; with `--report FILE` nothing is added at all.
#[test]
fn the_report_line_is_on_its_own_line_and_absent_with_report() {
    let dir = scratch("line");
    let err = dir.join("err.txt");
    for named in [false, true] {
        let f = std::fs::File::create(&err).unwrap();
        let mut cmd = Command::new(threadlab());
        cmd.arg("run");
        if named {
            cmd.arg("--report").arg(dir.join("r.txt"));
        }
        cmd.args(["--", "sh", "-c", "printf err >&2"])
            .env("TMPDIR", &dir)
            .env("XDG_CACHE_HOME", dir.join("cache"))
            .stderr(f);
        no_terminal(&mut cmd);
        let status = cmd.status().unwrap();
        assert!(status.success());
        let text = std::fs::read_to_string(&err).unwrap();
        if named {
            assert_eq!(text, "err");
        } else {
            assert!(
                text.starts_with("err\nthreadlab run: report in "),
                "{text:?}"
            );
            assert!(
                text.ends_with(".txt\n") && text.lines().count() == 2,
                "{text:?}"
            );
        }
    }
}

/// A lock storm past the run's budget of individual waits (`--max-events 2000`): every wait is
/// still counted in the report's figures, and the report says how many the timeline lacks.
#[test]
fn a_lock_storm_past_the_budget_is_counted_and_said() {
    let dir = scratch("storm");
    let Some(exe) = compile_c(
        &dir,
        "storm",
        r#"
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
static pthread_mutex_t big_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t go;
static long contended, shared;
static void *storm(void *p) {
    pthread_barrier_wait(&go);
    for (int i = 0; i < 20000; i++) {
        if (pthread_mutex_trylock(&big_lock) != 0) {
            __atomic_fetch_add(&contended, 1, __ATOMIC_RELAXED);
            pthread_mutex_lock(&big_lock);
        }
        shared++;
        sched_yield(); /* holding it: the others find it taken */
        pthread_mutex_unlock(&big_lock);
    }
    return p;
}
int main(void) {
    pthread_t t[4];
    pthread_barrier_init(&go, 0, 4);
    for (int i = 0; i < 4; i++) pthread_create(&t[i], 0, storm, 0);
    for (int i = 0; i < 4; i++) pthread_join(t[i], 0);
    printf("contended acquisitions: %ld\n", contended);
    return 0;
}
"#,
    ) else {
        return;
    };
    let (out, report) = run_with(
        &dir,
        &["--max-events", "2000"],
        &[exe.to_str().unwrap()],
        |_| {},
    );
    assert!(out.status.success(), "{report}");
    let own = own_count(&out);
    assert!(own > 2000, "only {own} waits: no storm");
    // Every acquisition, exactly; the waits as the program saw them (within the race above).
    assert!(report.contains("of 80000 acquisitions"), "{report}");
    assert_waits(&report, "big_lock", own);
    assert!(report.contains("not kept one by one"), "{report}");
}

/// A JVM (four threads in a `synchronized` block for 0.7 s): the window covers the JVM's
/// threads, the process is named after its executable (not a mapped file), no lock is named
/// after an offset into the JDK's `modules` image, and the report says that its monitors' waits
/// are seen as parks and where to look for them instead.
#[test]
fn a_jvm_is_observed_for_its_whole_life_and_named_by_its_executable() {
    let dir = scratch("java");
    let src = dir.join("Sync.java");
    std::fs::write(
        &src,
        "public class Sync {\n static final Object lock = new Object();\n static long n;\n\
         public static void main(String[] a) throws Exception {\n Thread[] ts = new Thread[4];\n\
         for (int i = 0; i < 4; i++) { ts[i] = new Thread(() -> { long end = System.nanoTime() \
         + 700_000_000L; while (System.nanoTime() < end) { synchronized (lock) { n++; } } });\n\
         ts[i].start(); }\n for (Thread t : ts) t.join();\n System.out.println(\"done\");\n }\n}\n",
    )
    .unwrap();
    if !Command::new("javac")
        .arg("-d")
        .arg(&dir)
        .arg(&src)
        .status()
        .is_ok_and(|s| s.success())
    {
        eprintln!("skipped: no javac");
        return;
    }
    let (out, report) = run(&dir, &["java", "-cp", dir.to_str().unwrap(), "Sync"]);
    assert!(out.status.success(), "{report}");
    let window = window_s(&report);
    assert!(window >= 0.7, "the window is {window} s:\n{report}");
    assert!(
        report.contains("    pid ") && report.contains(" java "),
        "{report}"
    );
    assert!(
        !report.contains("classes.jsa") && !report.contains("modules+0x"),
        "{report}"
    );
    // What is seen of its monitors and what is not, and where to look instead.
    assert!(
        report.contains(" is a JVM: a thread that waits for a Java monitor")
            && report.contains("jdk.JavaMonitorEnter"),
        "{report}"
    );
}
