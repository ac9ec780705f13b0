//! The `rendezvous` experiment's Go peer: the same producer and consumer as goroutines passing
//! numbers through an unbuffered `chan uint64`, with `GOMAXPROCS=2`. Go's channel is the model
//! for `threadlab::channel` (runtime/chan.go: a sender that finds a receiver parked copies the
//! value into the receiver's slot and readies it into the P's `runnext`), so this row is the
//! figure to meet.
//!
//! The lab writes the program (standard library only) to a fresh temporary directory, builds
//! it with the `go` found on the PATH (`GOTOOLCHAIN=local`, `GOPROXY=off`, `GOFLAGS` empty,
//! `GOPATH` inside that directory, `GOCACHE` in `threadlab-go-cache` under the temporary
//! directory so later runs build in a second: no network) and drives it a line at a time
//! (`subprocess.rs`): each line `N` it reads is one run of `N` messages, answered with its wall
//! nanoseconds, the process's CPU nanoseconds (getrusage, user + system, all threads) and Go's
//! own allocation counts, so its runs go through the lab's rounds like every other variant's.

use super::subprocess::LinePeer;
use crate::lab::alloc_count::Counts;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The Go program: `ready`, then for each line `N` on its input one run of `N` messages,
/// answered `wall_ns cpu_ns mallocs bytes`; `quit` or the end of its input ends it.
const PROGRAM: &str = r#"package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func cpuNs() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// run passes n numbers from a producer goroutine to a consumer goroutine through an
// unbuffered channel and checks the consumer's sum.
func run(n uint64) (int64, int64, uint64, uint64) {
	// Go's own allocation counters, read outside the timed part (ReadMemStats stops the world).
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	ch := make(chan uint64)
	done := make(chan uint64)
	cpu0 := cpuNs()
	t0 := time.Now()
	go func() {
		for i := uint64(0); i < n; i++ {
			ch <- i
		}
	}()
	go func() {
		var sum uint64
		for i := uint64(0); i < n; i++ {
			sum += <-ch
		}
		done <- sum
	}()
	sum := <-done
	wall := time.Since(t0).Nanoseconds()
	cpu := cpuNs() - cpu0
	runtime.ReadMemStats(&m1)
	if want := (n - 1) * n / 2; n > 0 && sum != want {
		fmt.Fprintf(os.Stderr, "the consumer summed %d, expected %d\n", sum, want)
		os.Exit(1)
	}
	return wall, cpu, m1.Mallocs - m0.Mallocs, m1.TotalAlloc - m0.TotalAlloc
}

func main() {
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		line := strings.TrimSpace(in.Text())
		if line == "quit" {
			return
		}
		n, err := strconv.ParseUint(line, 10, 64)
		if err != nil {
			fmt.Fprintf(os.Stderr, "not a number of messages: %q\n", line)
			os.Exit(2)
		}
		wall, cpu, mallocs, bytes := run(n)
		fmt.Printf("%d %d %d %d\n", wall, cpu, mallocs, bytes)
	}
}
"#;

/// One run of the Go peer: wall and CPU seconds, and Go's own allocation counts.
pub type GoRun = (f64, f64, Counts);

/// A temporary directory removed on drop.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// True if a `go` command answers on the PATH.
fn go_available() -> bool {
    Command::new("go")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn go_command(dir: &Path) -> Command {
    let mut cmd = Command::new("go");
    cmd.current_dir(dir)
        .env("GOTOOLCHAIN", "local")
        .env("GOPROXY", "off")
        .env("GOFLAGS", "")
        .env("GO111MODULE", "on")
        .env("GOCACHE", std::env::temp_dir().join("threadlab-go-cache"))
        .env("GOPATH", dir.join("gopath"));
    cmd
}

/// The Go peer, built and running (see the module doc).
pub struct GoPeer {
    // Declared first, dropped first: the program ends before its directory goes.
    peer: LinePeer,
    _dir: TempDir,
}

impl GoPeer {
    /// Builds and starts the Go peer: `Ok(None)` when `go` is not on the PATH.
    pub fn start() -> Result<Option<GoPeer>, String> {
        if !go_available() {
            return Ok(None);
        }
        let dir = TempDir(std::env::temp_dir().join(format!(
            "threadlab-go-peer-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        )));
        std::fs::create_dir_all(&dir.0)
            .map_err(|e| format!("go peer: cannot create a dir: {e}"))?;
        std::fs::write(dir.0.join("go.mod"), "module rendezvous\n\ngo 1.21\n")
            .and_then(|()| std::fs::write(dir.0.join("main.go"), PROGRAM))
            .map_err(|e| format!("go peer: cannot write the program: {e}"))?;
        let built = go_command(&dir.0)
            .args(["build", "-o", "peer", "."])
            .output()
            .map_err(|e| format!("go peer: cannot run go build: {e}"))?;
        if !built.status.success() {
            return Err(format!(
                "go peer: go build failed: {}",
                String::from_utf8_lossy(&built.stderr).trim()
            ));
        }
        let mut cmd = Command::new(dir.0.join("peer"));
        cmd.env("GOMAXPROCS", "2");
        let peer = LinePeer::start(&mut cmd, "the Go peer")?;
        Ok(Some(GoPeer { peer, _dir: dir }))
    }

    /// One run of `n` messages.
    pub fn run(&mut self, n: u64) -> Result<GoRun, String> {
        parse(&self.peer.ask(&n.to_string())?)
    }
}

/// Parses the peer's `wall_ns cpu_ns mallocs bytes` answer into seconds and Go's own allocation
/// counts (`runtime.MemStats`: `Mallocs`, `TotalAlloc`).
fn parse(line: &str) -> Result<GoRun, String> {
    let mut it = line.split_whitespace().map(str::parse::<u64>);
    match (it.next(), it.next(), it.next(), it.next(), it.next()) {
        (Some(Ok(wall)), Some(Ok(cpu)), Some(Ok(allocs)), Some(Ok(bytes)), None) => Ok((
            wall as f64 / 1e9,
            cpu as f64 / 1e9,
            Counts { allocs, bytes },
        )),
        _ => Err(format!("go peer: unexpected answer {line:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_parsed_and_checked() {
        assert_eq!(
            parse("1000 2000 3 48").unwrap(),
            (
                1e-6,
                2e-6,
                Counts {
                    allocs: 3,
                    bytes: 48
                }
            )
        );
        assert!(parse("1000 2000").is_err());
        assert!(parse("1000 2000 1 1 5").is_err());
        assert!(parse("x y 1 1").is_err());
    }

    #[test]
    fn the_peer_runs_when_go_is_there() {
        // Without go the answer is None; with it, the program builds and answers each run.
        match GoPeer::start().unwrap() {
            None => assert!(!go_available()),
            Some(mut go) => {
                for n in [1_000, 10] {
                    let (wall, cpu, _) = go.run(n).unwrap();
                    assert!(wall > 0.0 && cpu >= 0.0);
                }
            }
        }
    }
}
