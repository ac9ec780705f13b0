//! The `rendezvous` experiment's Go peer: the same producer and consumer as goroutines passing
//! numbers through an unbuffered `chan uint64`, with `GOMAXPROCS=2`. Go's channel is the model
//! for `threadlab::channel` (runtime/chan.go: a sender that finds a receiver parked copies the
//! value into the receiver's slot and readies it into the P's `runnext`), so this row is the
//! figure to meet.
//!
//! The lab writes the program (standard library only) to a fresh temporary directory, builds
//! it with the `go` found on the PATH (`GOTOOLCHAIN=local`, `GOPROXY=off`, `GOFLAGS` empty,
//! `GOPATH` inside that directory, `GOCACHE` in `threadlab-go-cache` under the temporary
//! directory so later runs build in a second: no network) and runs it
//! once: a warm-up of a tenth of the messages, then `rounds` timed runs, each printing its wall
//! nanoseconds and the process's CPU nanoseconds (getrusage, user + system, all threads).

use crate::lab::alloc_count::Counts;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The Go program. Arguments: messages per run, timed runs. Output: one line per timed run,
/// `wall_ns cpu_ns`.
const PROGRAM: &str = r#"package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
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
	n, err1 := strconv.ParseUint(os.Args[1], 10, 64)
	rounds, err2 := strconv.Atoi(os.Args[2])
	if err1 != nil || err2 != nil {
		fmt.Fprintln(os.Stderr, "usage: peer MESSAGES ROUNDS")
		os.Exit(2)
	}
	run(n/10 + 1)
	for r := 0; r < rounds; r++ {
		wall, cpu, mallocs, bytes := run(n)
		fmt.Printf("%d %d %d %d\n", wall, cpu, mallocs, bytes)
	}
}
"#;

/// One timed run of the Go peer: wall and CPU seconds.
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

/// Builds and runs the Go peer: `Ok(None)` when `go` is not on the PATH, else `rounds` timed
/// runs of `n` messages.
pub fn run(n: u64, rounds: usize) -> Result<Option<Vec<GoRun>>, String> {
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
    std::fs::create_dir_all(&dir.0).map_err(|e| format!("go peer: cannot create a dir: {e}"))?;
    std::fs::write(dir.0.join("go.mod"), "module rendezvous\n\ngo 1.21\n")
        .and_then(|()| std::fs::write(dir.0.join("main.go"), PROGRAM))
        .map_err(|e| format!("go peer: cannot write the program: {e}"))?;
    run_to_end(
        go_command(&dir.0).args(["build", "-o", "peer", "."]),
        "go build",
    )?;
    let out = run_to_end(
        Command::new(dir.0.join("peer"))
            .env("GOMAXPROCS", "2")
            .args([n.to_string(), rounds.to_string()]),
        "the built peer",
    )?;
    parse(&String::from_utf8_lossy(&out.stdout), rounds).map(Some)
}

/// Runs `cmd` (`what` names it in the errors) to its end; its output if it succeeded, else what
/// it wrote on stderr.
fn run_to_end(cmd: &mut Command, what: &str) -> Result<Output, String> {
    let out = cmd
        .output()
        .map_err(|e| format!("go peer: cannot run {what}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "go peer: {what} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(out)
}

/// Parses the peer's `wall_ns cpu_ns mallocs bytes` lines into seconds and Go's own allocation
/// counts (`runtime.MemStats`: `Mallocs`, `TotalAlloc`).
fn parse(text: &str, rounds: usize) -> Result<Vec<GoRun>, String> {
    let runs: Vec<GoRun> = text
        .lines()
        .map(|line| {
            let mut it = line.split_whitespace().map(str::parse::<u64>);
            match (it.next(), it.next(), it.next(), it.next()) {
                (Some(Ok(wall)), Some(Ok(cpu)), Some(Ok(allocs)), Some(Ok(bytes))) => Ok((
                    wall as f64 / 1e9,
                    cpu as f64 / 1e9,
                    Counts { allocs, bytes },
                )),
                _ => Err(format!("go peer: unexpected output line {line:?}")),
            }
        })
        .collect::<Result<_, _>>()?;
    if runs.len() != rounds {
        return Err(format!(
            "go peer: {} runs reported, {rounds} expected",
            runs.len()
        ));
    }
    Ok(runs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_output_is_parsed_and_checked() {
        assert_eq!(
            parse("1000 2000 3 48\n3000 4000 0 0\n", 2).unwrap(),
            vec![
                (
                    1e-6,
                    2e-6,
                    Counts {
                        allocs: 3,
                        bytes: 48
                    }
                ),
                (3e-6, 4e-6, Counts::default())
            ]
        );
        assert!(parse("1000 2000 1 1\n", 2).is_err());
        assert!(parse("1000 2000\n", 1).is_err());
        assert!(parse("x y\n", 1).is_err());
    }

    #[test]
    fn the_peer_runs_when_go_is_there() {
        // Without go the answer is None; with it, the program builds and reports each run.
        match run(1_000, 2).unwrap() {
            None => assert!(!go_available()),
            Some(runs) => {
                assert_eq!(runs.len(), 2);
                assert!(runs.iter().all(|&(w, c, _)| w > 0.0 && c >= 0.0));
            }
        }
    }
}
