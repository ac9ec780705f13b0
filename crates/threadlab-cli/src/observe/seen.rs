//! What the interposer's files say, for the trace and the report: every process that loaded it
//! (its images across `exec` together, processes of other PID namespaces kept apart), the
//! exact events (births, deaths, waits) for the trace, one row per lock with its aggregates,
//! and what was counted but not kept one by one.
//!
//! Lock identity that survives address-space layout randomisation: a lock inside a module's
//! mapping is named by its symbol and offset (ELF symbols via `symbols.rs`, from the maps copy);
//! a lock in shared memory by its place in the mapping; a heap lock by the module-relative call
//! site (the lowest of its first acquisition's and its waits'). Well-known locks get their owner's name: CPython's GIL (a
//! condition variable and mutex inside `_PyRuntime`), glibc's loader lock (`_rtld_global`),
//! malloc's arena locks (`main_arena`). The trace's lock id is a hash of that name, so `compare`
//! of two runs sees one lock.
//!
//! A process that ran but wrote no file did not load the interposer: a static binary (Go), or
//! one whose `LD_PRELOAD` the loader ignores (setuid). The report says so and what to use
//! instead (`inside.rs`).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::births::Life;
use super::convert::{Exact, ExactKind};
use super::records::{self, ImageFile, LockStat, Rec};
use super::symbols::Symbols;

/// This process's PID namespace (the inode of `/proc/self/ns/pid`).
fn own_pidns() -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self/ns/pid").map_or(0, |m| m.ino())
}

/// How a process image ended, as it recorded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum End {
    /// No end recorded: killed by a signal (counts since its last flush, at most 50 ms of
    /// them per thread, are lost).
    #[default]
    Killed,
    Exited,
    /// `_exit` or `_Exit`.
    UnderscoreExit,
    Aborted,
    /// It called `exec`: another image follows under the same pid.
    Exec,
}

/// One process that loaded the interposer (its images, if it called `exec`, together).
#[derive(Clone, Debug, Default)]
pub struct Process {
    /// Its pid, as its own PID namespace numbers it.
    pub pid: u32,
    /// `Some(n)`: it ran in a PID namespace other than `run`'s (the n-th such, from 1), so its
    /// pid and thread ids are that namespace's.
    pub namespace: Option<u32>,
    /// Its program: the last image's executable's file name.
    pub program: String,
    /// Images it ran (1 + the `exec`s).
    pub images: u32,
    /// How its last image ended.
    pub end: End,
    /// Threads it created (births seen, exact).
    pub births: u64,
    /// Threads that ended (deaths seen).
    pub deaths: u64,
    /// Every thread the interposer saw start or end in it, in order of first record: what
    /// `run` knows of threads that lived between two samples (`Process::lives`).
    pub threads: Vec<Life>,
    /// Mutex and rwlock acquisitions, every one counted.
    pub acquisitions: u64,
    /// Contended lock waits.
    pub waits: u64,
    /// Their total length, ns.
    pub wait_ns: u64,
}

/// One lock, by its identity, over every process that used it.
#[derive(Clone, Debug, Default)]
pub struct LockRow {
    /// Its name (stable across runs).
    pub name: String,
    /// A lock (mutex, rwlock, or a condition variable known to be one: the GIL), as opposed
    /// to a condition variable or semaphore where threads park.
    pub is_lock: bool,
    /// Acquisitions, every one counted.
    pub acquisitions: u64,
    /// Contended acquisitions (waits).
    pub waits: u64,
    /// Their total and longest, ns.
    pub wait_ns: u64,
    pub wait_max: u64,
    /// Histogram of the waits (`records::HB` log-scale buckets).
    pub wait_hist: Vec<u64>,
    /// Holds timed (sampled), their total and longest, ns, and their histogram.
    pub hold_samples: u64,
    pub hold_ns: u64,
    pub hold_max: u64,
    pub hold_hist: Vec<u64>,
    /// Waits per call site: (site name, waits, ns), most waited first.
    pub sites: Vec<(String, u64, u64)>,
    /// Waits per holder: (pid, tid, waits, ns), most waited-for first.
    pub holders: Vec<(u32, u64, u64, u64)>,
    /// The processes (pids) that used it.
    pub pids: Vec<u32>,
}

impl LockRow {
    fn add(&mut self, s: &LockStat, sites: Vec<(String, u64, u64)>, pid: u32) {
        self.acquisitions += s.acquisitions;
        self.waits += s.contended;
        self.wait_ns += s.wait_ns;
        self.wait_max = self.wait_max.max(s.wait_max);
        self.hold_samples += s.hold_samples;
        self.hold_ns += s.hold_ns;
        self.hold_max = self.hold_max.max(s.hold_max);
        merge_hist(&mut self.wait_hist, &s.wait_hist);
        merge_hist(&mut self.hold_hist, &s.hold_hist);
        for (name, waits, ns) in sites {
            match self.sites.iter_mut().find(|s| s.0 == name) {
                Some(row) => {
                    row.1 += waits;
                    row.2 += ns;
                }
                None => self.sites.push((name, waits, ns)),
            }
        }
        for &(tid, waits, ns) in &s.holders {
            match self.holders.iter_mut().find(|h| h.0 == pid && h.1 == tid) {
                Some(row) => {
                    row.2 += waits;
                    row.3 += ns;
                }
                None => self.holders.push((pid, tid, waits, ns)),
            }
        }
        if !self.pids.contains(&pid) {
            self.pids.push(pid);
        }
    }
}

/// Adds the counts of `from` to the histogram `into`.
fn merge_hist(into: &mut Vec<u64>, from: &[u32]) {
    into.resize(records::HB, 0);
    for (a, &b) in into.iter_mut().zip(from) {
        *a += u64::from(b);
    }
}

/// What the interposer recorded but `run` does not show one by one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dropped {
    /// Waits counted but not kept as events (the run's budget was spent, or the records' file
    /// system ran short of room).
    pub events: u64,
    /// Whether a file system ran short of room.
    pub full: bool,
    /// Waits kept as events but past what `run` reads into the trace.
    pub unread: u64,
    /// Acquisitions of locks beyond a process's 1,024-lock table (counted together as "other
    /// locks").
    pub lock_acquisitions: u64,
    /// Threads beyond the 4,096 a process counts privately (counted straight into the table:
    /// exact, slower).
    pub direct_threads: u64,
    /// Images whose file could not be read (another interposer version, damage).
    pub unreadable: u64,
}

/// What the interposer saw.
#[derive(Clone, Debug, Default)]
pub struct Seen {
    /// The events for the trace.
    pub exact: Exact,
    /// Every process that loaded the interposer, in order of start.
    pub processes: Vec<Process>,
    /// Locks (and condition variables, semaphores) used, most waited first.
    pub locks: Vec<LockRow>,
    /// What was counted but not kept one by one.
    pub dropped: Dropped,
    /// The mean interval between sampled holds, acquisitions.
    pub hold_every: u32,
    /// Threads by role, for those the program did not name: `main` for a process's first
    /// thread, others by their start routine's symbol, numbered in order of birth when several
    /// share one (`worker #2`).
    pub roles: HashMap<u64, String>,
}

/// The life of thread `tid` in `lives`, added (born at 0: the process's first thread, whose
/// birth the interposer does not see) if new.
fn life_of(lives: &mut Vec<Life>, tid: u64) -> &mut Life {
    let at = match lives.iter().position(|l| l.tid == tid) {
        Some(at) => at,
        None => {
            lives.push(Life {
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
        lives.sort_by_key(|l| (l.born_ns != 0, l.born_ns));
        if lives.first().is_none_or(|l| l.born_ns != 0) {
            lives.insert(
                0,
                Life {
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

/// The stable name of a lock at `addr` acquired from `site`, in a process whose maps are
/// `maps`.
fn lock_identity(syms: &mut Symbols, maps: &str, addr: u64, site: u64) -> String {
    // A process-shared lock: named by its place in the shared mapping, as every process that
    // maps it sees it.
    if let Some(name) = super::symbols::shared_mapping(maps, addr) {
        return name;
    }
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
        None => match syms.site_in(maps, site) {
            Some(at) => format!("heap lock taken at {at}"),
            None => "heap lock (call site unknown)".to_string(),
        },
    }
}

/// A 64-bit FNV-1a hash of a lock's name: its id in the trace, equal across runs.
fn id_of(name: &str) -> u64 {
    super::library::fnv1a(name.as_bytes())
}

/// The image files of `dir`: (stem, header order key) sorted by start.
fn image_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<(u64, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let p = e.path();
            let name = p.file_name()?.to_str()?.strip_suffix(".tl")?.to_owned();
            let start: u64 = name.split_once('-')?.1.parse().ok()?;
            Some((start, p))
        })
        .collect();
    files.sort();
    files.into_iter().map(|f| f.1).collect()
}

/// Reads the records directory `dir`; times become ns since `origin_ns`; at most `read_cap`
/// waits become trace events.
pub fn read_dir(dir: &Path, origin_ns: u64, read_cap: u64) -> Seen {
    let mut reader = Reader {
        seen: Seen::default(),
        syms: Symbols::default(),
        locks: BTreeMap::new(),
        by_process: HashMap::new(),
        namespaces: Vec::new(),
        ours: own_pidns(),
        names: HashMap::new(),
        read_waits: 0,
        origin_ns,
        read_cap,
    };
    for path in image_files(dir) {
        reader.image(&path);
    }
    reader.finish()
}

/// What `read_dir` keeps from one image file to the next.
struct Reader {
    seen: Seen,
    syms: Symbols,
    /// The locks by name, over every process.
    locks: BTreeMap<String, LockRow>,
    /// A process's place in `seen.processes` by (PID namespace, pid).
    by_process: HashMap<(u64, u32), usize>,
    /// The PID namespaces other than ours, in order of first image.
    namespaces: Vec<u64>,
    ours: u64,
    /// One shared copy of each lock's name for the events.
    names: HashMap<String, Arc<str>>,
    read_waits: u64,
    origin_ns: u64,
    read_cap: u64,
}

/// What one image knows of a lock's address: its name, and whether it is a lock (else a
/// place where threads park).
type NameOf = HashMap<u64, (Arc<str>, bool)>;

impl Reader {
    /// One image's file: its process, locks, events and threads' roles.
    fn image(&mut self, path: &Path) {
        let Ok(mut file) = ImageFile::open(path) else {
            self.seen.dropped.unreadable += 1;
            return;
        };
        let h = file.header.clone();
        let maps = std::fs::read_to_string(path.with_extension("maps")).unwrap_or_default();
        self.seen.hold_every = h.hold_every;
        let (at, namespace) = self.process_of(&h);
        // Thread ids in the trace: another namespace's are moved above 2^32 to stay apart.
        let tid_of = |tid: u32| u64::from(tid) | u64::from(namespace.unwrap_or(0)) << 32;
        let stats = file.locks().unwrap_or_default();
        let name_of = self.name_locks(at, &h, &maps, stats);
        let mut tids: Vec<u64> = Vec::new();
        let mut routines: Vec<(u64, u64)> = Vec::new();
        let _ = file.events(|r: Rec| {
            let tid = tid_of(r.tid);
            if !tids.contains(&tid) {
                tids.push(tid);
            }
            if r.kind == records::K_BIRTH {
                routines.push((tid, r.holder));
            }
            self.event(at, tid, &r, &name_of);
        });
        self.roles(at, tid_of(h.pid), &maps, &routines, tids);
    }

    /// The process an image belongs to, added when new, with its figures from the header;
    /// and its PID namespace when it is not ours.
    fn process_of(&mut self, h: &records::Header) -> (usize, Option<u32>) {
        let seen = &mut self.seen;
        // Another PID namespace: its pids and tids are its own, and may repeat ours. A
        // namespace's inode is reused once it is gone: a second pid 1 under the same inode is a
        // new namespace.
        let reused = h.pid == 1 && self.by_process.contains_key(&(h.pidns, 1));
        let namespace = (h.pidns != self.ours && h.pidns != 0).then(|| {
            match self.namespaces.iter().rposition(|&n| n == h.pidns) {
                Some(at) if !reused => at as u32 + 1,
                _ => {
                    self.namespaces.push(h.pidns);
                    self.namespaces.len() as u32
                }
            }
        });
        // The same process if an earlier image of this pid ended by `exec`; else a new one (a
        // pid is reused too).
        let key = (h.pidns, h.pid);
        let at = match self.by_process.get(&key) {
            Some(&at) if seen.processes[at].end == End::Exec => at,
            _ => {
                seen.processes.push(Process {
                    pid: h.pid,
                    namespace,
                    ..Process::default()
                });
                self.by_process.insert(key, seen.processes.len() - 1);
                seen.processes.len() - 1
            }
        };
        let p = &mut seen.processes[at];
        let exe = Path::new(&h.exe);
        p.program = exe
            .file_name()
            .map_or_else(|| "?".into(), |f| f.to_string_lossy().into_owned());
        p.images += 1;
        p.end = match h.flags {
            f if f & records::F_EXEC != 0 && h.end_ns != 0 => End::Exec,
            f if f & records::F_ABORT != 0 => End::Aborted,
            f if f & records::F_UNDERSCORE_EXIT != 0 => End::UnderscoreExit,
            f if f & records::F_EXITED != 0 => End::Exited,
            _ => End::Killed,
        };
        p.births += h.births;
        p.deaths += h.deaths;
        seen.dropped.events += h.ev_dropped;
        seen.dropped.full |= h.flags & records::F_FULL != 0;
        seen.dropped.lock_acquisitions += h.locks_dropped;
        seen.dropped.direct_threads += h.direct_threads;
        (at, namespace)
    }

    /// The locks of one image (its aggregates, `stats`, and the header's "other locks"), named
    /// and added to their rows; the name of each address for the image's events.
    fn name_locks(
        &mut self,
        at: usize,
        h: &records::Header,
        maps: &str,
        mut stats: Vec<LockStat>,
    ) -> NameOf {
        if h.other.is_used() {
            stats.push(LockStat {
                addr: 0,
                ..h.other.clone()
            });
        }
        let mut name_of = NameOf::new();
        for s in &stats {
            let name = if s.addr == 0 {
                "other locks (past the interposer's table)".to_owned()
            } else {
                // A heap lock is named by the lowest of its call sites (its first acquisition's
                // and its waits'): the same code names it in every run, whichever thread
                // happened to take it first.
                let site = s
                    .sites
                    .iter()
                    .map(|x| x.0)
                    .chain([s.first_site])
                    .filter(|&x| x != 0)
                    .min()
                    .unwrap_or(0);
                lock_identity(&mut self.syms, maps, s.addr, site)
            };
            // A condition variable or semaphore is a lock only when it is a known one (the
            // GIL); else threads wait there for an event: a park.
            let is_lock =
                !(s.kind == records::W_COND || s.kind == records::W_SEM) || name.contains("GIL");
            let sites = self.sites_of(s, maps);
            let row = self.locks.entry(name.clone()).or_insert_with(|| LockRow {
                name: name.clone(),
                is_lock,
                ..LockRow::default()
            });
            row.add(s, sites, h.pid);
            if is_lock {
                let p = &mut self.seen.processes[at];
                p.acquisitions += s.acquisitions;
                p.waits += s.contended;
                p.wait_ns += s.wait_ns;
            }
            let shared = self
                .names
                .entry(name.clone())
                .or_insert_with(|| name.into())
                .clone();
            name_of.insert(s.addr, (shared, is_lock));
        }
        name_of
    }

    /// A lock's waits per call site, each site named, and the waits past its slots.
    fn sites_of(&mut self, s: &LockStat, maps: &str) -> Vec<(String, u64, u64)> {
        s.sites
            .iter()
            .map(|&(site, w, ns)| {
                let at = self
                    .syms
                    .site_in(maps, site)
                    .unwrap_or_else(|| format!("{site:#x}"));
                (at, w, ns)
            })
            .chain((s.other_sites.0 > 0).then(|| {
                (
                    "other call sites".to_owned(),
                    s.other_sites.0,
                    s.other_sites.1,
                )
            }))
            .collect()
    }

    /// One record of process `at`'s thread `tid`: a birth, an end, a wait.
    fn event(&mut self, at: usize, tid: u64, r: &Rec, name_of: &NameOf) {
        let rel = |t: u64| t.saturating_sub(self.origin_ns);
        let seen = &mut self.seen;
        let p = &mut seen.processes[at];
        match r.kind {
            records::K_BIRTH => {
                seen.exact
                    .events
                    .entry(tid)
                    .or_default()
                    .push((rel(r.t0), ExactKind::Born));
                life_of(&mut p.threads, tid).born_ns = rel(r.t0);
            }
            records::K_DEATH | records::K_EXIT => {
                let life = life_of(&mut p.threads, tid);
                // The thread that ended the process lived as long as it did (as the
                // ptrace tracer reports its last thread).
                life.died_ns = (r.kind == records::K_DEATH).then(|| rel(r.t0));
                life.on_cpu_ns = r.t1;
                // Not read at a death (its procfs read would cost ~11 µs a thread): a
                // thread's run-queue time is known from the samples, or with `--ptrace`.
                life.runqueue_ns = 0;
                life.name = r.name();
            }
            records::K_WAIT => {
                let Some((name, is_lock)) = name_of.get(&r.obj) else {
                    return;
                };
                if self.read_waits >= self.read_cap {
                    seen.dropped.unread += 1;
                    return;
                }
                self.read_waits += 1;
                let evs = seen.exact.events.entry(tid).or_default();
                if *is_lock {
                    let (lock, name) = (id_of(name), Arc::clone(name));
                    let acquired = ExactKind::Acquired {
                        lock,
                        name: Arc::clone(&name),
                    };
                    evs.push((rel(r.t0), ExactKind::Wait { lock, name }));
                    evs.push((rel(r.t1), acquired));
                } else {
                    evs.push((rel(r.t0), ExactKind::Park(true)));
                    evs.push((rel(r.t1), ExactKind::Park(false)));
                }
            }
            _ => {}
        }
    }

    /// Roles for one image's threads: `main` (the thread whose tid is `main`), the others by
    /// their start routine (numbered when shared); then a name for each thread in `tids`.
    fn roles(&mut self, at: usize, main: u64, maps: &str, routines: &[(u64, u64)], tids: Vec<u64>) {
        let seen = &mut self.seen;
        seen.roles.insert(main, "main".to_owned());
        let routine_names: Vec<(u64, String)> = routines
            .iter()
            .map(|&(tid, at)| {
                let sym = self
                    .syms
                    .name_in(maps, at)
                    .unwrap_or_else(|| format!("{at:#x}"));
                (tid, sym.split('+').next().unwrap_or(&sym).to_owned())
            })
            .collect();
        let mut seen_so_far: HashMap<&str, usize> = HashMap::new();
        for (tid, name) in &routine_names {
            let shared = routine_names.iter().filter(|r| r.1 == *name).count() > 1;
            let n = seen_so_far.entry(name).or_default();
            *n += 1;
            let role = if shared {
                format!("{name} #{n}")
            } else {
                name.clone()
            };
            seen.roles.insert(*tid, role);
        }
        let program = &seen.processes[at].program;
        for tid in tids {
            let name = seen.roles.get(&tid).cloned().unwrap_or_else(|| {
                if tid == main {
                    program.clone()
                } else {
                    format!("{program} thread")
                }
            });
            if !seen.exact.extra_threads.iter().any(|t| t.0 == tid) {
                seen.exact.extra_threads.push((tid, name));
            }
        }
    }

    /// The locks in order, most waited first, each one's sites and holders likewise.
    fn finish(mut self) -> Seen {
        // Sampled futex waits stay lock waits unless the interposer saw pthread lock waits
        // itself (a Rust `std::sync::Mutex` or a Go lock waits on a futex without calling
        // pthreads).
        self.seen.exact.locks_exact = self.locks.values().any(|l| l.is_lock && l.waits > 0);
        let mut rows: Vec<LockRow> = self.locks.into_values().collect();
        for r in &mut rows {
            r.sites.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
            r.holders.sort_by(|a, b| b.3.cmp(&a.3).then(a.1.cmp(&b.1)));
        }
        rows.sort_by(|a, b| {
            b.wait_ns
                .cmp(&a.wait_ns)
                .then(b.acquisitions.cmp(&a.acquisitions))
                .then(a.name.cmp(&b.name))
        });
        self.seen.locks = rows;
        self.seen
    }
}

/// Whether the file at `path` is a Go program (its build-information marker).
pub fn is_go(path: &Path) -> bool {
    std::fs::read(path).is_ok_and(|b| b.windows(14).any(|w| w == b"\xff Go buildinf:"))
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
        assert!(name.starts_with("heap lock taken at "), "{name}");
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
}
