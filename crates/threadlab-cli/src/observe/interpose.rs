//! The interposer: a small C library (`preload/interpose.c`, built by the crate's build script
//! and embedded in the binary) that `run` writes to a private temporary directory and loads into
//! the command with `LD_PRELOAD`, appended to any `LD_PRELOAD` already set, so every dynamically
//! linked process of the command's tree (shells, `make`, pipelines) loads it too.
//!
//! Inside each process it records thread births and deaths and every contended pthread lock
//! acquisition (the wait, its holder, its call site) and the part of a hold that made someone
//! wait — see the C file's header for the hot path. Each process writes `PID.events` (records of
//! 48 bytes) and, as it exits, `PID.maps` (its `/proc/self/maps`). After the command has exited,
//! [`Session::read`] turns them into exact events for the trace ([`convert::Exact`]) and a
//! summary for the report.
//!
//! Lock identity that survives address-space layout randomisation: a lock inside a module's
//! mapping is named by its symbol and offset (ELF symbols via `symbols.rs`, from the maps copy);
//! a heap lock by the module-relative call site of its first contended acquisition. Well-known
//! locks get their owner's name: CPython's GIL (a condition variable and mutex inside
//! `_PyRuntime`), glibc's loader lock (`_rtld_global`), malloc's arena locks (`main_arena`).
//! The trace's lock id is a hash of that name, so `compare` of two runs sees one lock.
//!
//! A process that ran but wrote no events file did not load the interposer: a static binary
//! (Go), or one whose `LD_PRELOAD` the loader ignores (setuid). The report says so and what to
//! use instead.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use super::convert::{Exact, ExactKind};
use super::symbols::Symbols;

/// The library, built by build.rs (empty when no C compiler was found).
static LIBRARY: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libthreadlab_interpose.so"));

const K_PROCESS: u32 = 1;
const K_BIRTH: u32 = 2;
const K_DEATH: u32 = 3;
const K_WAIT: u32 = 4;
const K_HOLD: u32 = 5;
/// The death of the thread that ends the process (it lives as long as the process).
const K_EXIT: u32 = 6;
const W_COND: u64 = 2;
const W_SEM: u64 = 3;
const REC: usize = 48;

/// One record as the C library writes it.
#[derive(Clone, Copy, Debug)]
struct Rec {
    kind: u32,
    tid: u32,
    t0: u64,
    t1: u64,
    obj: u64,
    holder: u64,
    site: u64,
}

fn parse(b: &[u8]) -> Vec<Rec> {
    let u64_at = |c: &[u8], o: usize| u64::from_ne_bytes(c[o..o + 8].try_into().unwrap());
    b.chunks_exact(REC)
        .map(|c| Rec {
            kind: u32::from_ne_bytes(c[0..4].try_into().unwrap()),
            tid: u32::from_ne_bytes(c[4..8].try_into().unwrap()),
            t0: u64_at(c, 8),
            t1: u64_at(c, 16),
            obj: u64_at(c, 24),
            holder: u64_at(c, 32),
            site: u64_at(c, 40),
        })
        .collect()
}

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

/// A private directory holding the library and the processes' files; removed on drop.
#[derive(Debug)]
pub struct Session {
    dir: PathBuf,
    lib: PathBuf,
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// One process that loaded the interposer.
#[derive(Clone, Debug, Default)]
pub struct Process {
    /// Its pid and parent's.
    pub pid: u32,
    /// Its parent's pid.
    pub ppid: u32,
    /// Its program (the first file of its maps).
    pub program: String,
    /// Threads it created (births seen, exact).
    pub births: u64,
    /// Threads that ended (deaths seen).
    pub deaths: u64,
    /// Every thread the interposer saw start or end in it, in order of first record: what
    /// `run` knows of threads that lived between two samples (`Process::lives`).
    pub threads: Vec<super::births::Life>,
    /// Contended lock waits and their total, ns.
    pub waits: u64,
    /// Their total length, ns.
    pub wait_ns: u64,
}

/// One lock, by its identity.
#[derive(Clone, Debug, Default)]
pub struct LockRow {
    /// Its name (stable across runs).
    pub name: String,
    /// Contended acquisitions.
    pub waits: u64,
    /// Their total, ns.
    pub wait_ns: u64,
    /// Hold time that made someone wait, ns.
    pub hold_ns: u64,
    /// The processes (pids) that waited for it.
    pub pids: Vec<u32>,
}

/// What the interposer saw.
#[derive(Clone, Debug, Default)]
pub struct Seen {
    /// The events for the trace.
    pub exact: Exact,
    /// Every process that loaded the interposer, in pid order.
    pub processes: Vec<Process>,
    /// Locks waited for, most waited first.
    pub locks: Vec<LockRow>,
}

impl Session {
    /// Writes the library out; `None` when this build has none (no C compiler) or the temporary
    /// directory cannot be written.
    pub fn prepare() -> Option<Session> {
        if LIBRARY.is_empty() {
            return None;
        }
        let base = std::env::temp_dir();
        for n in 0..1000u32 {
            let dir = base.join(format!("threadlab-interpose-{}-{n}", std::process::id()));
            use std::os::unix::fs::DirBuilderExt;
            match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
                Ok(()) => {
                    let lib = dir.join("libthreadlab_interpose.so");
                    std::fs::write(&lib, LIBRARY).ok()?;
                    return Some(Session { dir, lib });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(_) => return None,
            }
        }
        None
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

    /// Whether process `pid` wrote an events file (loaded the interposer).
    pub fn saw(&self, pid: u32) -> bool {
        self.dir.join(format!("{pid}.events")).exists()
    }

    /// Reads every process's files; timestamps become ns since `origin_ns` (monotonic).
    pub fn read(&self, origin_ns: u64) -> Seen {
        read_dir(&self.dir, origin_ns)
    }
}

/// The life of thread `tid` in `lives`, added (born at 0: the process's first thread, whose
/// birth the interposer does not see) if new.
fn life_of(lives: &mut Vec<super::births::Life>, tid: u64) -> &mut super::births::Life {
    let at = match lives.iter().position(|l| l.tid == tid) {
        Some(at) => at,
        None => {
            lives.push(super::births::Life {
                tid,
                ..Default::default()
            });
            lives.len() - 1
        }
    };
    &mut lives[at]
}

impl Process {
    /// What the interposer saw of this process's threads, as the ptrace tracer reports it
    /// (`births::merge`): every thread created, with its birth, death, name and times on a
    /// CPU, exact, with no stop. The first thread comes first (born at 0); the last one to
    /// exit (the one that ran the process's exit) keeps its death.
    pub fn lives(&self, end_ns: u64) -> super::births::Lives {
        let mut lives = self.threads.clone();
        // The first thread: the one that never had a birth record (and is not a thread born
        // before the interposer was loaded: there is none, it loads before `main`).
        lives.sort_by_key(|l| (l.born_ns != 0, l.born_ns));
        if lives.first().is_none_or(|l| l.born_ns != 0) {
            lives.insert(
                0,
                super::births::Life {
                    tid: u64::from(self.pid),
                    ..Default::default()
                },
            );
        }
        super::births::Lives {
            lives,
            end_ns,
            ..Default::default()
        }
    }
}

/// A lock's well-known owner, from its symbol.
fn well_known(symbol: &str) -> Option<&'static str> {
    if symbol.starts_with("_PyRuntime+") {
        Some("the Python GIL (CPython)")
    } else if symbol.starts_with("_rtld_global+") {
        Some("the dynamic loader's lock (glibc ld.so, _rtld_global)")
    } else if symbol.starts_with("main_arena+") {
        Some("malloc's main arena lock (glibc)")
    } else {
        None
    }
}

/// The stable name of a lock at `addr` first waited for from `site`, in a process whose maps
/// are `maps`.
fn lock_identity(syms: &mut Symbols, maps: &str, addr: u64, site: u64) -> String {
    match syms.name_in(maps, addr) {
        // CPython's GIL is a mutex and condition variables (`_PyRuntime.ceval.gil`): waits on
        // any of them are waits for the one GIL, so they are one lock, named by module.
        Some(sym) if sym.starts_with("_PyRuntime+") => {
            let module = sym
                .split_once(" (")
                .map_or("", |x| x.1)
                .trim_end_matches(')');
            format!("the Python GIL (CPython, {module})")
        }
        Some(sym) => match well_known(&sym) {
            Some(owner) => format!("{owner}: {sym}"),
            None => sym,
        },
        None => match syms.name_in(maps, site) {
            Some(at) => format!("heap lock first waited for at {at}"),
            None => "heap lock (call site unknown)".to_string(),
        },
    }
}

/// A 64-bit FNV-1a hash of a lock's name: its id in the trace, equal across runs.
fn id_of(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

fn read_dir(dir: &Path, origin_ns: u64) -> Seen {
    let mut seen = Seen::default();
    let mut syms = Symbols::default();
    let mut locks: BTreeMap<String, LockRow> = BTreeMap::new();
    let mut files: Vec<(u32, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let p = e.path();
            let pid = p
                .file_name()?
                .to_str()?
                .strip_suffix(".events")?
                .parse()
                .ok()?;
            Some((pid, p))
        })
        .collect();
    files.sort();
    let rel = |t: u64| t.saturating_sub(origin_ns);
    for (pid, path) in files {
        let recs = parse(&std::fs::read(&path).unwrap_or_default());
        let maps = std::fs::read_to_string(dir.join(format!("{pid}.maps"))).unwrap_or_default();
        let program = maps
            .lines()
            .filter_map(|l| l.split_ascii_whitespace().nth(5))
            .find(|p| p.starts_with('/'))
            .map(|p| p.rsplit('/').next().unwrap_or(p).to_string())
            .unwrap_or_else(|| "?".into());
        let mut p = Process {
            pid,
            program: program.clone(),
            ..Process::default()
        };
        // The first wait's call site names a heap lock (module-relative, so stable).
        let mut first_site: HashMap<u64, u64> = HashMap::new();
        for r in &recs {
            if r.kind == K_WAIT {
                first_site.entry(r.obj).or_insert(r.site);
            }
        }
        let mut names: HashMap<u64, String> = HashMap::new();
        let mut name_of = |addr: u64, syms: &mut Symbols| -> String {
            names
                .entry(addr)
                .or_insert_with(|| {
                    let site = first_site.get(&addr).copied().unwrap_or(0);
                    lock_identity(syms, &maps, addr, site)
                })
                .clone()
        };
        let mut tids: Vec<u64> = Vec::new();
        for r in &recs {
            let tid = u64::from(r.tid);
            if !tids.contains(&tid) {
                tids.push(tid);
            }
            let evs = seen.exact.events.entry(tid).or_default();
            match r.kind {
                K_PROCESS => p.ppid = r.obj as u32,
                K_BIRTH => {
                    p.births += 1;
                    evs.push((rel(r.t0), ExactKind::Born));
                    life_of(&mut p.threads, tid).born_ns = rel(r.t0);
                }
                K_DEATH | K_EXIT => {
                    p.deaths += 1;
                    let life = life_of(&mut p.threads, tid);
                    // The thread that ended the process lived as long as it did (as the
                    // ptrace tracer reports its last thread).
                    life.died_ns = (r.kind == K_DEATH).then(|| rel(r.t0));
                    life.on_cpu_ns = r.t1;
                    // Not read at a death (its procfs read would cost ~11 µs a thread): a
                    // thread's run-queue time is known from the samples, or with `--ptrace`.
                    life.runqueue_ns = 0;
                    let mut name = [0u8; 16];
                    name[..8].copy_from_slice(&r.obj.to_ne_bytes());
                    name[8..].copy_from_slice(&r.holder.to_ne_bytes());
                    let len = name.iter().position(|&c| c == 0).unwrap_or(16);
                    life.name = String::from_utf8_lossy(&name[..len]).into_owned();
                }
                K_WAIT => {
                    let kind = r.holder >> 32;
                    let name = name_of(r.obj, &mut syms);
                    // A condition variable or semaphore is a lock only when it is a known one
                    // (the GIL); else the thread waits for an event: a park.
                    let is_lock = !(kind == W_COND || kind == W_SEM) || name.contains("GIL");
                    if is_lock {
                        let lock = id_of(&name);
                        evs.push((
                            rel(r.t0),
                            ExactKind::Wait {
                                lock,
                                name: name.clone(),
                            },
                        ));
                        evs.push((
                            rel(r.t1),
                            ExactKind::Acquired {
                                lock,
                                name: name.clone(),
                            },
                        ));
                        p.waits += 1;
                        p.wait_ns += r.t1.saturating_sub(r.t0);
                        let row = locks.entry(name.clone()).or_insert_with(|| LockRow {
                            name,
                            ..LockRow::default()
                        });
                        row.waits += 1;
                        row.wait_ns += r.t1.saturating_sub(r.t0);
                        if !row.pids.contains(&pid) {
                            row.pids.push(pid);
                        }
                    } else {
                        evs.push((rel(r.t0), ExactKind::Park(true)));
                        evs.push((rel(r.t1), ExactKind::Park(false)));
                    }
                }
                K_HOLD => {
                    // Shown in the report's section, not in the trace: a hold is timed only
                    // from its first waiter's arrival, so beside the waits it would read as
                    // "held as long as waited" and hide the contention from the doctor's
                    // wait-over-hold rule (a trace from outside has waits only, as before).
                    let name = name_of(r.obj, &mut syms);
                    if let Some(row) = locks.get_mut(&name) {
                        row.hold_ns += r.t1.saturating_sub(r.t0);
                    }
                }
                _ => {}
            }
        }
        for tid in tids {
            let name = if tid == u64::from(pid) {
                program.clone()
            } else {
                format!("{program} thread")
            };
            seen.exact.extra_threads.push((tid, name));
        }
        seen.processes.push(p);
    }
    // Sampled futex waits stay lock waits unless the interposer saw pthread lock waits itself
    // (a Rust `std::sync::Mutex` or a Go lock waits on a futex without calling pthreads).
    seen.exact.locks_exact = !locks.is_empty();
    let mut rows: Vec<LockRow> = locks.into_values().collect();
    rows.sort_by(|a, b| b.wait_ns.cmp(&a.wait_ns).then(a.name.cmp(&b.name)));
    seen.locks = rows;
    seen
}

/// Whether the file at `path` is a Go program (its build-information marker).
pub fn is_go(path: &Path) -> bool {
    std::fs::read(path).is_ok_and(|b| b.windows(14).any(|w| w == b"\xff Go buildinf:"))
}

/// The report's section: processes, threads, locks; what could not be seen.
pub fn render(seen: &Seen, child: u32, program: &str, unseen: Option<&Path>) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(s, "Seen from inside (interposer, exact):");
    if let Some(path) = unseen {
        let _ = writeln!(
            s,
            "  `{program}` (pid {child}) did not load the interposer: it is statically linked or \
             its loader ignores LD_PRELOAD (setuid). Its lock waits and thread births cannot be \
             seen from here; only /proc sampling below applies."
        );
        if is_go(path) {
            let _ = writeln!(
                s,
                "  It is a Go program: goroutines wait for a sync.Mutex inside the Go runtime \
                 (parked goroutines, not blocked threads), invisible to the OS. Look at the \
                 runtime's mutex and block profiles instead: runtime.SetMutexProfileFraction and \
                 runtime.SetBlockProfileRate, then `go tool pprof` of /debug/pprof/mutex and \
                 /debug/pprof/block (or `go test -mutexprofile m.out -blockprofile b.out`)."
            );
        }
    }
    let births: u64 = seen.processes.iter().map(|p| p.births).sum();
    if seen.processes.is_empty() {
        let _ = writeln!(s, "  no process of the command loaded the interposer");
        return s;
    }
    let _ = writeln!(
        s,
        "  processes: {} ran with the interposer; threads created: {births} exactly",
        seen.processes.len()
    );
    let quiet = seen
        .processes
        .iter()
        .filter(|p| p.births == 0 && p.waits == 0)
        .count();
    if quiet > 0 {
        let _ = writeln!(
            s,
            "    ({quiet} of them created no thread and never waited for a lock: not listed)"
        );
    }
    for p in seen
        .processes
        .iter()
        .filter(|p| p.births > 0 || p.waits > 0)
    {
        let _ = writeln!(
            s,
            "    pid {:>7} {:<20} threads created {:>6}, contended waits {:>8} ({:.3} ms)",
            p.pid,
            p.program,
            p.births,
            p.waits,
            p.wait_ns as f64 / 1e6
        );
    }
    if seen.locks.is_empty() {
        let _ = writeln!(s, "  no pthread lock was ever contended");
    }
    for l in seen.locks.iter().take(10) {
        let pids: Vec<String> = l.pids.iter().map(|p| p.to_string()).collect();
        let _ = writeln!(
            s,
            "  lock {}: {} contended waits, {:.3} ms waited, {:.3} ms held while waited for \
             (held the contention: pid {})",
            l.name,
            l.waits,
            l.wait_ns as f64 / 1e6,
            l.hold_ns as f64 / 1e6,
            pids.join(", ")
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This test binary's own maps, for naming addresses in it.
    fn own_maps() -> String {
        std::fs::read_to_string("/proc/self/maps").unwrap()
    }

    #[test]
    fn a_global_lock_is_named_by_symbol_and_a_heap_lock_by_its_call_site() {
        static GLOBAL_PROBE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        // Relaxed: pairs with nothing, only the static's address matters.
        GLOBAL_PROBE.store(1, std::sync::atomic::Ordering::Relaxed);
        let maps = own_maps();
        let mut syms = Symbols::default();
        let global = &GLOBAL_PROBE as *const _ as u64;
        let name = lock_identity(&mut syms, &maps, global, 0);
        assert!(name.contains("GLOBAL_PROBE+0x0"), "{name}");
        let heap = Box::new(0u64);
        let site = own_maps as fn() -> String as usize as u64;
        let name = lock_identity(&mut syms, &maps, &*heap as *const u64 as u64, site);
        assert!(name.starts_with("heap lock first waited for at "), "{name}");
        assert!(name.contains("own_maps"), "{name}");
        // The id is the name's: equal across runs whatever the addresses.
        assert_eq!(id_of(&name), id_of(&name.clone()));
        assert_ne!(id_of(&name), id_of("big_lock+0x0 (two)"));
    }

    #[test]
    fn well_known_locks_are_named_for_their_owner() {
        assert_eq!(
            well_known("_PyRuntime+0x188 (libpython3.11.so.1.0)"),
            Some("the Python GIL (CPython)")
        );
        assert!(well_known("_rtld_global+0x908 (ld-linux-x86-64.so.2)")
            .unwrap()
            .contains("loader"));
        assert!(well_known("main_arena+0x0 (libc.so.6)")
            .unwrap()
            .contains("malloc"));
        assert_eq!(well_known("big_lock+0x0 (two)"), None);
    }

    #[test]
    fn records_are_read_whole_and_a_torn_tail_is_ignored() {
        let mut b = Vec::new();
        for (kind, tid) in [(K_BIRTH, 7u32), (K_WAIT, 8)] {
            b.extend_from_slice(&kind.to_ne_bytes());
            b.extend_from_slice(&tid.to_ne_bytes());
            for v in [1u64, 2, 3, 4, 5] {
                b.extend_from_slice(&v.to_ne_bytes());
            }
        }
        b.extend_from_slice(&[0; 10]);
        let r = parse(&b);
        assert_eq!(r.len(), 2);
        assert_eq!((r[1].kind, r[1].tid, r[1].t0, r[1].site), (K_WAIT, 8, 1, 5));
    }
}
