//! Where `run`'s report goes, and what `run` exits with.
//!
//! The observed command owns its stdout and stderr: `threadlab run -- xz -c F > out` must leave
//! `out` exactly as an unobserved run would, and a pipeline reading the command's stderr must
//! not find the observer's text in it. So the report always goes to a file: the one given with
//! `--report`, else a new file in the temporary directory. Its name is written to the
//! controlling terminal (`/dev/tty`), which is the user's and not the command's stream. Without
//! a terminal (a CI job, a detached run) the name is written to stderr, as one line after the
//! command has exited — unless `--report` named the file, in which case nothing is added to
//! stderr at all. That line (and any message of `run`'s own) begins on a line of its own: when
//! stderr is a regular file whose last byte is not a newline, or a pipe or device whose last
//! byte cannot be read back, a newline comes first, so it is never glued onto an unterminated
//! last line of the command's. A closed stderr is not an error (`run` ignores SIGPIPE).
//!
//! The exit code is the command's: its own status; when a signal killed it, `run` dies of the
//! same signal once the report is written (`inherit::die_of`), as GNU `timeout` does, so the
//! parent sees what it would have seen; 128 + the signal (the shells' convention, POSIX "Shell
//! Command Language", section 2.8.2) only if that signal does not end `run`.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// How the observed command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// It exited with this status.
    Exited(i32),
    /// This signal killed it.
    Killed(i32),
    /// Not known (the observer lost it).
    Unknown,
}

impl Ending {
    /// From a `waitpid` status pair as the tracer or `std::process` report it.
    pub fn from_parts(code: Option<i32>, signal: Option<i32>) -> Self {
        match (code, signal) {
            (Some(c), _) => Ending::Exited(c),
            (None, Some(s)) => Ending::Killed(s),
            (None, None) => Ending::Unknown,
        }
    }

    /// `run`'s exit code: the command's status, 128 + signal, or 1 when unknown.
    pub fn exit_code(self) -> ExitCode {
        match self {
            Ending::Exited(c) => ExitCode::from((c & 0xff) as u8),
            Ending::Killed(s) => ExitCode::from((128 + s).clamp(0, 255) as u8),
            Ending::Unknown => ExitCode::from(1),
        }
    }

    /// One line for the report.
    pub fn describe(self) -> String {
        match self {
            Ending::Exited(c) => format!("exited with status {c}"),
            Ending::Killed(s) => format!("killed by signal {s}"),
            Ending::Unknown => "ended (status unknown)".to_string(),
        }
    }
}

/// The report's file: `wanted`, or a new file `threadlab-run-PID-N.txt` in the temporary
/// directory.
pub fn report_file(wanted: Option<&Path>, pid: u32) -> std::io::Result<(File, PathBuf)> {
    if let Some(p) = wanted {
        return Ok((File::create(p)?, p.to_path_buf()));
    }
    let dir = super::interpose::temp_dir();
    for n in 0..1000 {
        let p = dir.join(format!("threadlab-run-{pid}-{n}.txt"));
        match File::options().write(true).create_new(true).open(&p) {
            Ok(f) => return Ok((f, p)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other(
        "no free report name in the temporary directory",
    ))
}

/// Says where the report is: on the terminal; without one, on stderr — unless the user named
/// the file (`named`) and so knows where it is.
pub fn announce(line: &str, named: bool) {
    if let Ok(mut tty) = File::options().write(true).open("/dev/tty") {
        if writeln!(tty, "{line}").is_ok() {
            return;
        }
    }
    if !named {
        say(line);
    }
}

/// One line of `run`'s own on stderr, on a line of its own (see the module doc); a write that
/// fails (a closed stderr) is ignored.
pub fn say(line: &str) {
    let sep = if stderr_at_line_start() { "" } else { "\n" };
    let _ = writeln!(std::io::stderr(), "{sep}{line}");
}

/// Whether stderr is a regular file that is empty or ends with a newline.
fn stderr_at_line_start() -> bool {
    // SAFETY: fstat fills `st`; pread reads one byte into `last`; both on descriptor 2, which
    // may be closed (then they fail and nothing is read).
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(2, &mut st) != 0 || st.st_mode & libc::S_IFMT != libc::S_IFREG {
            return false;
        }
        if st.st_size == 0 {
            return true;
        }
        let mut last = 0u8;
        libc::pread(2, (&mut last as *mut u8).cast(), 1, st.st_size - 1) == 1 && last == b'\n'
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_is_128_plus_its_number_and_a_status_is_itself() {
        // (128 + N is what `run` exits with only when dying of N did not end it.)
        assert_eq!(Ending::from_parts(Some(3), None), Ending::Exited(3));
        assert_eq!(Ending::from_parts(None, Some(9)), Ending::Killed(9));
        assert_eq!(
            format!("{:?}", Ending::Killed(9).exit_code()),
            format!("{:?}", ExitCode::from(137))
        );
        assert_eq!(
            format!("{:?}", Ending::Exited(3).exit_code()),
            format!("{:?}", ExitCode::from(3))
        );
    }
}
