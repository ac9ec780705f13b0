//! The interposer: a small C library (`preload/interpose.c`, built by the crate's build script
//! and embedded in the binary) that `run` loads into the command with `LD_PRELOAD`, appended to
//! any `LD_PRELOAD` already set, so every dynamically linked process of the command's tree
//! (shells, `make`, pipelines) loads it too. The library itself is kept where it outlives the
//! command (`library.rs`); the records go to a private directory of this run (mode 0700, under
//! the temporary directory), named to the processes by `THREADLAB_INTERPOSE_DIR`, and removed
//! when `run` ends.
//!
//! Inside each process it counts every pthread mutex and rwlock acquisition per lock, times
//! every contended one (the wait, its holder, its call site), samples hold times, and records
//! thread births and deaths — see the C file's header for the hot path and the file layout
//! (`records.rs` reads it). After the command has exited, [`Session::read`] turns the files into
//! what `seen.rs` says: exact events for the trace, per-lock rows and a summary for the report.
//! Individual waits are kept up to a budget for the whole run ([`EVENT_BUDGET`], shared by the
//! processes through the directory's `budget` file); past it they are counted only, and the
//! report says how many waits the timeline lacks. What `run` reads is bounded the same way.

use std::path::{Path, PathBuf};

use super::seen::{read_dir, Seen};

/// The library, built by build.rs (empty when no C compiler was found).
static LIBRARY: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libthreadlab_interpose.so"));

/// Waits kept as individual events for the whole run by default (48 bytes each in the files;
/// `run --max-events`); past it they are only counted. Sized so that a lock
/// storm stays well under 64 MB of files and of `run`'s memory (docs/observer.md gives the
/// measured figures).
pub const EVENT_BUDGET: u64 = 200_000;

/// The now of `CLOCK_MONOTONIC`, the interposer's clock, ns.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The library and a private directory for the processes' files; the directory is removed on
/// drop.
#[derive(Debug)]
pub struct Session {
    dir: PathBuf,
    lib: PathBuf,
    /// Waits read into the trace at most (the budget: the files hold no more unless they
    /// came from elsewhere).
    read_cap: u64,
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Why `run` has no interposer.
#[derive(Debug)]
pub enum NoSession {
    /// This threadlab was built without one (no C compiler, or not Linux).
    NotBuilt,
    /// The library could be written nowhere the loader accepts (the reasons).
    NoLibrary(String),
    /// The temporary directory cannot hold the records (the reason).
    NoRecords(String),
}

/// The temporary directory, absolute (a relative `TMPDIR` is taken from the current directory,
/// which the command may leave).
pub fn temp_dir() -> PathBuf {
    let t = std::env::temp_dir();
    if t.is_absolute() {
        t
    } else {
        std::env::current_dir().map_or(t.clone(), |c| c.join(t))
    }
}

/// Free bytes on the file system of `dir`.
pub fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: `s` is a writable statvfs and `c` a valid C string.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    (unsafe { libc::statvfs(c.as_ptr(), &mut s) } == 0).then(|| s.f_bavail * s.f_frsize)
}

/// What the records of a run need free at least: the interposer stops writing events when its
/// file system has less than 4 MiB free; below this, a run would record little.
const MIN_FREE: u64 = 8 << 20;

/// Whether `dir` can take the run's records: the reason when it cannot.
pub fn check_temp_dir(dir: &Path) -> Result<(), String> {
    let shown = std::env::var_os("TMPDIR").map_or_else(
        || dir.display().to_string(),
        |v| format!("TMPDIR={}", v.to_string_lossy()),
    );
    match std::fs::metadata(dir) {
        Err(e) => return Err(format!("{shown}: {e}")),
        Ok(m) if !m.is_dir() => return Err(format!("{shown}: not a directory")),
        Ok(_) => {}
    }
    if let Some(free) = free_bytes(dir) {
        if free < MIN_FREE {
            return Err(format!(
                "{shown}: only {} KiB free; the records of a run need at least {} MiB",
                free >> 10,
                MIN_FREE >> 20
            ));
        }
    }
    Ok(())
}

impl Session {
    /// Puts the library where it outlives the command and makes the run's records directory,
    /// whose processes may keep `budget` individual waits and holds between them.
    pub fn prepare(budget: u64) -> Result<Session, NoSession> {
        if LIBRARY.is_empty() {
            return Err(NoSession::NotBuilt);
        }
        let lib = super::library::install(LIBRARY).map_err(NoSession::NoLibrary)?;
        let base = temp_dir();
        check_temp_dir(&base).map_err(NoSession::NoRecords)?;
        for n in 0..1000u32 {
            let dir = base.join(format!("threadlab-interpose-{}-{n}", std::process::id()));
            use std::os::unix::fs::DirBuilderExt;
            match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
                Ok(()) => {
                    let session = Session {
                        dir,
                        lib,
                        read_cap: budget,
                    };
                    let budget = (budget.min(i64::MAX as u64) as i64).to_ne_bytes();
                    let mut page = vec![0u8; 4096];
                    page[..8].copy_from_slice(&budget);
                    std::fs::write(session.dir.join("budget"), page).map_err(|e| {
                        NoSession::NoRecords(format!("{}: {e}", session.dir.display()))
                    })?;
                    return Ok(session);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(NoSession::NoRecords(format!("{}: {e}", base.display()))),
            }
        }
        Err(NoSession::NoRecords(format!(
            "{}: no free directory name",
            base.display()
        )))
    }

    /// Sets the command's environment: the library appended to `LD_PRELOAD`, the directory.
    pub fn apply(&self, cmd: &mut std::process::Command) {
        let lib = self.lib.to_string_lossy().into_owned();
        let preload = match std::env::var("LD_PRELOAD") {
            Ok(p) if !p.trim().is_empty() => format!("{p}:{lib}"),
            _ => lib,
        };
        cmd.env("LD_PRELOAD", preload);
        cmd.env("THREADLAB_INTERPOSE_DIR", &self.dir);
    }

    /// Whether a process with pid `pid` (in this PID namespace) wrote a file (loaded the
    /// interposer).
    pub fn saw(&self, pid: u32) -> bool {
        let prefix = format!("{pid}-");
        std::fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| {
                let n = e.file_name();
                let n = n.to_string_lossy();
                n.starts_with(&prefix) && n.ends_with(".tl")
            })
    }

    /// Reads every process's files; timestamps become ns since `origin_ns` (monotonic).
    pub fn read(&self, origin_ns: u64) -> Seen {
        read_dir(&self.dir, origin_ns, self.read_cap)
    }

    /// When this `run` is itself observed by an outer `threadlab run` (its environment names
    /// another records directory), the outer run sees the command's processes too: their files
    /// are linked (or copied) into its directory. Called once the command has ended.
    pub fn hand_on(&self) {
        let Some(outer) = std::env::var_os("THREADLAB_INTERPOSE_DIR").map(PathBuf::from) else {
            return;
        };
        if outer == self.dir || !outer.is_dir() {
            return;
        }
        for e in std::fs::read_dir(&self.dir).into_iter().flatten().flatten() {
            let name = e.file_name();
            let s = name.to_string_lossy();
            if s.ends_with(".tl") || s.ends_with(".maps") {
                let to = outer.join(&name);
                if std::fs::hard_link(e.path(), &to).is_err() {
                    let _ = std::fs::copy(e.path(), &to);
                }
            }
        }
    }
}
