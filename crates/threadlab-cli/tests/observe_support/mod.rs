//! What the tests of `threadlab run` share: waiting for a `threadlab` process under a watchdog,
//! compiling the C programs they observe.

use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// Runs `cmd` to completion, its output captured, within `limit`: past it the process is killed
/// (and with it the observed child, which `run` traces with `PTRACE_O_EXITKILL`) and the test
/// fails instead of hanging.
pub fn output_within(mut cmd: Command, limit: Duration) -> Output {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start threadlab");
    wait_within(child, limit, &format!("{cmd:?}"))
}

/// Waits for `child` (started with its output piped) within `limit`, as [`output_within`].
pub fn wait_within(child: Child, limit: Duration, what: &str) -> Output {
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(out) => out.expect("wait for threadlab"),
        Err(_) => {
            // SAFETY: kill has no memory preconditions; `pid` is our unreaped child.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            panic!("watchdog: `{what}` ran longer than {limit:?}");
        }
    }
}

/// The `threadlab` binary under test: this build's, or the one named by `THREADLAB_TEST_BIN`
/// (to check that a test fails on an older build).
#[allow(dead_code)] // not every test binary that includes this module uses it
pub fn threadlab() -> std::path::PathBuf {
    std::env::var_os("THREADLAB_TEST_BIN")
        .map(Into::into)
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_threadlab").into())
}

/// A private scratch directory for one test, empty.
#[allow(dead_code)] // as above
pub fn scratch(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("threadlab-test-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// Compiles the C program `src` with `cc -O2 -g -lpthread` into `dir/name` (debug information
/// for the call sites' file and line); `None` (and a message saying the test was skipped)
/// without a working C compiler.
#[allow(dead_code)] // a test binary that runs no C program includes this module too
pub fn compile_c(dir: &std::path::Path, name: &str, src: &str) -> Option<std::path::PathBuf> {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, src).unwrap();
    let exe = dir.join(name);
    match Command::new("cc")
        .arg("-O2")
        .arg("-g")
        .arg("-o")
        .arg(&exe)
        .arg(&c)
        .arg("-lpthread")
        .status()
    {
        Ok(s) if s.success() => Some(exe),
        _ => {
            eprintln!("skipped: no working C compiler (`cc`)");
            None
        }
    }
}
