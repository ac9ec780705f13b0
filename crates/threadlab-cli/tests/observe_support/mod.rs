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

/// Compiles the C program `src` with `cc -O2 -lpthread` into `dir/name`; `None` (and a message
/// saying the test was skipped) without a working C compiler.
#[allow(dead_code)] // a test binary that runs no C program includes this module too
pub fn compile_c(dir: &std::path::Path, name: &str, src: &str) -> Option<std::path::PathBuf> {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, src).unwrap();
    let exe = dir.join(name);
    match Command::new("cc")
        .arg("-O2")
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
