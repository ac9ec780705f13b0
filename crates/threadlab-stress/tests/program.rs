//! The `threadlab-stress` program from the outside: a short run balances its books and prints its
//! seed, `--help` names every option, every bad argument is one line on stderr with exit code 2,
//! and the hidden `stress-fork` child (which the fork scenario starts from whichever program runs
//! the mix) works from this program. Each run is watched: one that does not end fails the test.

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Longer than any run here may take: the 1 s mix's own watchdog ends a stuck scenario after
/// two minutes, the fork child's after one.
const DEADLINE: Duration = Duration::from_secs(300);

/// `threadlab-stress ARGS`: its status, stdout and stderr; fails the test when it has not ended
/// within [`DEADLINE`] (after killing it).
#[track_caller]
fn stress(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_threadlab-stress"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start threadlab-stress");
    // Read both pipes on threads of their own, so a full pipe never stalls the child.
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            pipe.read_to_end(&mut bytes).expect("read the output");
            bytes
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for threadlab-stress") {
            break status;
        }
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "threadlab-stress {args:?} did not end within {} s",
                DEADLINE.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// `threadlab-stress ARGS`: its status, stdout and stderr as text.
#[track_caller]
fn stress_text(args: &[&str]) -> (std::process::ExitStatus, String, String) {
    let out = stress(args);
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status, text(&out.stdout), text(&out.stderr))
}

#[test]
fn a_short_run_balances_its_books_with_the_seed_and_pool_asked_for() {
    let (status, stdout, stderr) =
        stress_text(&["--seconds", "1", "--seed", "11", "--threads", "2"]);
    assert_eq!(status.code(), Some(0), "{stdout}\n{stderr}");
    for part in ["seed 11", "pool of 2", "every book balanced"] {
        assert!(stdout.contains(part), "`{part}` in: {stdout}");
    }
    // The `--name=value` spelling too.
    let (status, stdout, stderr) = stress_text(&["--seconds=1", "--seed=12", "--threads=1"]);
    assert_eq!(status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("seed 12, pool of 1:"), "{stdout}");
}

#[test]
fn help_names_every_option_and_version_the_package() {
    for flag in ["--help", "-h"] {
        let (status, stdout, stderr) = stress_text(&[flag]);
        assert_eq!(status.code(), Some(0), "{stderr}");
        for part in [
            "Usage: threadlab-stress",
            "--seconds",
            "--seed",
            "--threads",
        ] {
            assert!(stdout.contains(part), "{flag}: `{part}` in: {stdout}");
        }
        assert!(stderr.is_empty(), "{flag}: {stderr}");
    }
    let (status, stdout, _) = stress_text(&["--version"]);
    assert_eq!(status.code(), Some(0));
    assert_eq!(
        stdout.trim(),
        format!("threadlab-stress {}", env!("CARGO_PKG_VERSION"))
    );
}

/// Each bad argument: exit 2, nothing on stdout, one line on stderr beginning `error:` that
/// names what is wrong, no panic (a panic exits 101 over several lines).
#[test]
fn every_bad_argument_exits_2_with_one_line_saying_what_is_wrong() {
    let table: &[(&[&str], &str)] = &[
        (
            &["--seconds", "0"],
            "--seconds: `0` is not a whole number from 1 to 86400",
        ),
        (&["--seconds", "86401"], "`86401`"),
        (&["--seconds", "nan"], "`nan`"),
        (&["--seconds", "-1"], "`-1`"),
        (
            &["--threads", "0"],
            "--threads: `0` is not a whole number from 1 to 4096",
        ),
        (&["--threads", "5000"], "`5000`"),
        (&["--seed", "x"], "--seed: `x` is not a whole number"),
        (&["--seed", "18446744073709551616"], "--seed"),
        (&["--seconds"], "--seconds needs a value"),
        (
            &["--seed", "1", "--seed", "2"],
            "--seed is given more than once",
        ),
        (&["--frobnicate"], "unexpected argument `--frobnicate`"),
        (&["60"], "unexpected argument `60`"),
        (&["stress-fork"], "stress-fork needs --seed S"),
        (
            &["stress-fork", "--seed", "1", "--seconds", "1"],
            "unexpected argument `--seconds`",
        ),
    ];
    for (args, mention) in table {
        threadlab_testkit::assert_usage_error(&stress(args), &format!("{args:?}"), mention);
    }
}

/// The fork scenario starts `PROGRAM stress-fork --seed S` with the program it runs in: from
/// this program, the child forks and books its tasks (`threadlab stress-fork` is the CLI's).
#[cfg(unix)]
#[test]
fn the_fork_child_runs_from_this_program() {
    for seed in [1, 2, 3] {
        let (status, stdout, stderr) = stress_text(&["stress-fork", "--seed", &seed.to_string()]);
        assert_eq!(status.code(), Some(0), "seed {seed}: {stdout}\n{stderr}");
        let tasks: u64 = stdout
            .lines()
            .find_map(|l| l.strip_prefix("tasks "))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("seed {seed}: no `tasks N` line in: {stdout}"));
        assert!(tasks >= 1, "seed {seed}: {stdout}");
    }
}

/// A reader that went away ends the program quietly, as it ends `cat`: `--help` written into a
/// pipe whose read end is closed dies of SIGPIPE, with nothing on stderr (with Rust's default of
/// ignoring SIGPIPE, `print!` panics: exit 101 and a panic message).
#[cfg(unix)]
#[test]
fn a_closed_pipe_ends_the_program_quietly() {
    use std::os::fd::FromRawFd;
    use std::os::unix::process::ExitStatusExt;
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors `pipe` writes.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0, "pipe");
    // SAFETY: both descriptors were just made by `pipe` and are owned here alone; the read end is
    // closed at once, before the program starts.
    let (read_end, write_end) = unsafe {
        (
            std::fs::File::from_raw_fd(fds[0]),
            std::fs::File::from_raw_fd(fds[1]),
        )
    };
    drop(read_end);
    let mut child = Command::new(env!("CARGO_BIN_EXE_threadlab-stress"))
        .arg("--help")
        .stdout(Stdio::from(write_end))
        .stderr(Stdio::piped())
        .spawn()
        .expect("start threadlab-stress");
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .expect("read stderr");
    let status = child.wait().expect("wait for threadlab-stress");
    assert_eq!(
        status.signal(),
        Some(libc::SIGPIPE),
        "{status}; stderr: {stderr}"
    );
    assert!(stderr.is_empty(), "stderr: {stderr}");
}
