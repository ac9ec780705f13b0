//! A peer in a process of its own, driven a line at a time: it says `ready` once it has built
//! what it needs, then answers each line it reads with one line; `quit`, or the end of its
//! input, ends it. The `iter` experiment's patched-Rayon bench (`rayon_on_threadlab.rs`) and the
//! `rendezvous` experiment's Go program (`go.rs`) are driven this way, one run per request, so
//! their runs take turns with the lab's own variants in the same rounds (`lab/rounds.rs`).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// A running peer (see the module doc); dropping it ends the process and waits for it.
pub struct LinePeer {
    /// What the errors call it.
    name: String,
    child: Child,
    to: ChildStdin,
    from: BufReader<ChildStdout>,
}

impl LinePeer {
    /// Starts `cmd` with piped input and output; returns once it said `ready`.
    pub fn start(cmd: &mut Command, name: &str) -> Result<LinePeer, String> {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {name}: {e}"))?;
        let (Some(to), Some(from)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(format!("{name}: no pipes to it"));
        };
        let mut peer = LinePeer {
            name: name.into(),
            child,
            to,
            from: BufReader::new(from),
        };
        match peer.line()?.as_str() {
            "ready" => Ok(peer),
            other => Err(format!("{name} said {other:?} instead of ready")),
        }
    }

    /// Sends `request` and returns the peer's answer, one line.
    pub fn ask(&mut self, request: &str) -> Result<String, String> {
        writeln!(self.to, "{request}")
            .and_then(|_| self.to.flush())
            .map_err(|e| format!("{}: cannot send {request:?}: {e}", self.name))?;
        self.line()
    }

    fn line(&mut self) -> Result<String, String> {
        let mut line = String::new();
        match self.from.read_line(&mut line) {
            Ok(0) => Err(format!(
                "{} ended early ({})",
                self.name,
                self.child
                    .wait()
                    .map_or_else(|e| e.to_string(), |s| s.to_string())
            )),
            Ok(_) => Ok(line.trim().to_string()),
            Err(e) => Err(format!("{}: cannot read its answer: {e}", self.name)),
        }
    }
}

impl Drop for LinePeer {
    /// `quit` ends the peer; it is waited for, so no process outlives the lab.
    fn drop(&mut self) {
        let _ = writeln!(self.to, "quit");
        let _ = self.to.flush();
        let _ = self.child.wait();
    }
}
