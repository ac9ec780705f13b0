//! The `iter` experiment's fourth variant: Rayon's own iterators on threadlab's workers.
//!
//! That needs Rayon built on the `rayon-core` package of `compat/` (`[patch.crates-io]`), and
//! one build holds one rayon-core, so it cannot be linked into the lab beside Rayon itself. The
//! lab builds `compat/iter-bench` once per run (`cargo build`, with the lab's own profile —
//! release for figures, debug for the CLI's tests — in the lab's own target directory, so the
//! library's build is shared) and drives it as a subprocess (`subprocess.rs`): the bench builds
//! the same inputs as the lab (`programs/iter_kernels.rs`, the same seed), says `ready`, then
//! for each line `K` it reads runs kernel `K` once inside its pool and answers `CHECK SECONDS`.
//! So its runs take turns with the lab's own variants, as the others do, and every result is
//! checked against the sequential one.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use super::subprocess::LinePeer;
use crate::lab::programs::iter_kernels::Check;
use crate::lab::Ctx;

/// The bench's package and binary name (`compat/iter-bench/Cargo.toml`).
const BENCH: &str = "threadlab-rayon-iter";

/// The bench's executable, built on first call (later calls give the same answer).
pub fn bench_binary(ctx: &Ctx) -> Result<PathBuf, String> {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            ctx.step("iter: building compat/iter-bench (Rayon on threadlab's workers), once");
            build()
        })
        .clone()
}

/// `cargo build --release` of the bench; the error says why it could not be built.
fn build() -> Result<PathBuf, String> {
    // The checkout this lab was built from: compat/ sits beside crates/.
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let manifest = repo.join("compat/Cargo.toml");
    if !manifest.exists() {
        return Err(format!(
            "{} is not there (the lab was not built from a checkout of threadlab)",
            manifest.display()
        ));
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(&cargo);
    cmd.args(["build", "--quiet", "--message-format=json", "-p", BENCH])
        .arg("--manifest-path")
        .arg(&manifest);
    if !cfg!(debug_assertions) {
        cmd.arg("--release");
    }
    if std::env::var_os("CARGO_TARGET_DIR").is_none() {
        // The lab's own target directory: threadlab is built there already.
        cmd.env("CARGO_TARGET_DIR", repo.join("target"));
    }
    let out = cmd
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", Path::new(&cargo).display()))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().rev().take(6).collect();
        return Err(format!(
            "`cargo build -p {BENCH}` in compat/ failed: {}",
            tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
        ));
    }
    // cargo's JSON messages name the executable it built.
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["target"]["name"] == BENCH)
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .ok_or_else(|| format!("cargo built {BENCH} but named no executable"))
}

/// A running bench with its pool of `threads`.
pub struct Bench(LinePeer);

impl Bench {
    /// Starts `bin` with a pool of `threads` and the inputs of `sizes` (squares, elements,
    /// sorted elements, bodies); returns once it has built them.
    pub fn start(bin: &Path, threads: usize, sizes: [u64; 4]) -> Result<Bench, String> {
        let mut cmd = Command::new(bin);
        cmd.arg(threads.to_string())
            .args(sizes.iter().map(u64::to_string));
        LinePeer::start(&mut cmd, BENCH).map(Bench)
    }

    /// Runs kernel `k` once in the bench: its result and its time in seconds.
    pub fn run(&mut self, k: usize) -> Result<(Check, f64), String> {
        let answer = self.0.ask(&k.to_string())?;
        let mut parts = answer.split_whitespace();
        match (
            parts.next().and_then(|c| c.parse().ok()),
            parts.next().and_then(|s| s.parse().ok()),
        ) {
            (Some(check), Some(secs)) => Ok((check, secs)),
            _ => Err(format!("{BENCH}: kernel {k} answered {answer:?}")),
        }
    }
}
