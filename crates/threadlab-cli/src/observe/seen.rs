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

use threadlab_trace::Durations;

use super::births::Life;
use super::convert::{Exact, ExactKind, TableLock};
use super::records::{self, Header, ImageFile, LockStat, Rec};
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
    /// Its figures, for the trace's lock table (`convert.rs`), from which the report reads them.
    pub table: TableLock,
    /// A lock (mutex, rwlock, or a condition variable known to be one: the GIL), as opposed
    /// to a condition variable or semaphore where threads park.
    pub is_lock: bool,
    /// The processes (pids) that used it.
    pub pids: Vec<u32>,
}

/// The durations the C file keeps for one lock: count, total, longest, histogram (its layout
/// is [`Durations`]'s).
fn durations(count: u64, total_ns: u64, max_ns: u64, hist: &[u32]) -> Durations {
    let mut hist: Vec<u64> = hist.iter().map(|&c| u64::from(c)).collect();
    while hist.last() == Some(&0) {
        hist.pop();
    }
    Durations {
        count,
        total_ns,
        max_ns,
        hist,
    }
}

impl LockRow {
    /// Adds one process image's aggregates; `tid_of` maps its thread ids to the trace's.
    fn add(
        &mut self,
        s: &LockStat,
        sites: Vec<(String, u64, u64)>,
        pid: u32,
        tid_of: impl Fn(u32) -> u64,
    ) {
        let t = &mut self.table;
        t.acquisitions += s.acquisitions;
        t.waits
            .merge(&durations(s.contended, s.wait_ns, s.wait_max, &s.wait_hist));
        t.holds.merge(&durations(
            s.hold_samples,
            s.hold_ns,
            s.hold_max,
            &s.hold_hist,
        ));
        for (name, waits, ns) in sites {
            match t.sites.iter_mut().find(|s| s.0 == name) {
                Some(row) => {
                    row.1 += waits;
                    row.2 += ns;
                }
                None => t.sites.push((name, waits, ns)),
            }
        }
        for &(tid, waits, ns) in &s.holders {
            let tid = tid_of(tid as u32);
            match t.holders.iter_mut().find(|h| h.0 == tid) {
                Some(row) => {
                    row.1 += waits;
                    row.2 += ns;
                }
                None => t.holders.push((tid, waits, ns)),
            }
        }
        if !self.pids.contains(&pid) {
            self.pids.push(pid);
        }
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

/// The process an image with header `h` belongs to (an earlier image of its pid that ended by
/// `exec`, else a new one: a pid is reused too), its index in `seen.processes`, and its PID
/// namespace when it is not `ours` (`namespaces`: the ones met so far).
fn process_of(
    seen: &mut Seen,
    by_process: &mut HashMap<(u64, u32), usize>,
    namespaces: &mut Vec<u64>,
    ours: u64,
    h: &Header,
) -> (usize, Option<u32>) {
    // Another PID namespace: its pids and tids are its own, and may repeat ours. A
    // namespace's inode is reused once it is gone: a second pid 1 under the same inode is a
    // new namespace.
    let reused = h.pid == 1 && by_process.contains_key(&(h.pidns, 1));
    let namespace = (h.pidns != ours && h.pidns != 0).then(|| {
        match namespaces.iter().rposition(|&n| n == h.pidns) {
            Some(at) if !reused => at as u32 + 1,
            _ => {
                namespaces.push(h.pidns);
                namespaces.len() as u32
            }
        }
    });
    // The same process if an earlier image of this pid ended by `exec`; else a new one (a
    // pid is reused too).
    let key = (h.pidns, h.pid);
    let at = match by_process.get(&key) {
        Some(&at) if seen.processes[at].end == End::Exec => at,
        _ => {
            seen.processes.push(Process {
                pid: h.pid,
                namespace,
                ..Process::default()
            });
            by_process.insert(key, seen.processes.len() - 1);
            seen.processes.len() - 1
        }
    };
    (at, namespace)
}

/// The locks of every image read so far, by name, and their names shared with the events.
#[derive(Default)]
struct Tables {
    locks: BTreeMap<String, LockRow>,
    names: HashMap<String, Arc<str>>,
}

impl Tables {
    /// Adds the lock aggregates `stats` of an image of process `p` (pid, and its thread ids in
    /// the trace), named in its `maps`; the name of each lock address, and whether it is a lock
    /// (not a condition variable or semaphore where threads park).
    fn add_image(
        &mut self,
        syms: &mut Symbols,
        maps: &str,
        stats: &[LockStat],
        (pid, tid_of): (u32, impl Fn(u32) -> u64 + Copy),
        p: &mut Process,
    ) -> HashMap<u64, (Arc<str>, bool)> {
        let mut name_of = HashMap::new();
        for s in stats {
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
                lock_identity(syms, maps, s.addr, site)
            };
            // A condition variable or semaphore is a lock only when it is a known one (the
            // GIL); else threads wait there for an event: a park.
            let is_lock =
                !(s.kind == records::W_COND || s.kind == records::W_SEM) || name.contains("GIL");
            let sites = s
                .sites
                .iter()
                .map(|&(site, w, ns)| {
                    let at = syms
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
                .collect();
            let shared = self
                .names
                .entry(name.clone())
                .or_insert_with(|| name.as_str().into())
                .clone();
            let row = self.locks.entry(name.clone()).or_insert_with(|| LockRow {
                table: TableLock {
                    id: id_of(&name),
                    name: Arc::clone(&shared),
                    ..TableLock::default()
                },
                is_lock,
                ..LockRow::default()
            });
            row.add(s, sites, pid, tid_of);
            if is_lock {
                p.acquisitions += s.acquisitions;
                p.waits += s.contended;
                p.wait_ns += s.wait_ns;
            }
            name_of.insert(s.addr, (shared, is_lock));
        }
        name_of
    }
}

impl Tables {
    /// Puts the rows into `seen`, most waited-for first, and the locks among them into its
    /// exact events' lock table.
    fn finish(self, seen: &mut Seen) {
        // Sampled futex waits stay lock waits unless the interposer saw pthread lock waits itself
        // (a Rust `std::sync::Mutex` or a Go lock waits on a futex without calling pthreads).
        seen.exact.locks_exact = self
            .locks
            .values()
            .any(|l| l.is_lock && l.table.waits.count > 0);
        let mut rows: Vec<LockRow> = self.locks.into_values().collect();
        rows.sort_by(|a, b| {
            let (a, b) = (&a.table, &b.table);
            b.waits
                .total_ns
                .cmp(&a.waits.total_ns)
                .then(b.acquisitions.cmp(&a.acquisitions))
                .then(a.name.cmp(&b.name))
        });
        // Locks go to the trace's lock table; condition variables and semaphores are parks.
        seen.exact.locks = rows
            .iter()
            .filter(|r| r.is_lock)
            .map(|r| r.table.clone())
            .collect();
        seen.locks = rows;
    }
}

/// Threads by their start routine's symbol (`routines`: tid, routine address), numbered in
/// order of birth when several share one (`worker #2`).
fn roles(syms: &mut Symbols, maps: &str, routines: &[(u64, u64)]) -> Vec<(u64, String)> {
    let routine_names: Vec<(u64, String)> = routines
        .iter()
        .map(|&(tid, at)| {
            let sym = syms.name_in(maps, at).unwrap_or_else(|| format!("{at:#x}"));
            (tid, sym.split('+').next().unwrap_or(&sym).to_owned())
        })
        .collect();
    let mut seen_so_far: HashMap<&str, usize> = HashMap::new();
    let mut out = Vec::new();
    for (tid, name) in &routine_names {
        let shared = routine_names.iter().filter(|r| r.1 == *name).count() > 1;
        let n = seen_so_far.entry(name).or_default();
        *n += 1;
        let role = if shared {
            format!("{name} #{n}")
        } else {
            name.clone()
        };
        out.push((*tid, role));
    }
    out
}

/// Reads the records directory `dir`; times become ns since `origin_ns`; at most `read_cap`
/// waits become trace events.
pub fn read_dir(dir: &Path, origin_ns: u64, read_cap: u64) -> Seen {
    let mut seen = Seen::default();
    let mut syms = Symbols::default();
    let mut tables = Tables::default();
    let mut by_process: HashMap<(u64, u32), usize> = HashMap::new();
    let mut namespaces: Vec<u64> = Vec::new();
    let ours = own_pidns();
    let mut read_waits = 0u64;
    let rel = |t: u64| t.saturating_sub(origin_ns);
    for path in image_files(dir) {
        let Ok(mut file) = ImageFile::open(&path) else {
            seen.dropped.unreadable += 1;
            continue;
        };
        let h = file.header.clone();
        let maps = std::fs::read_to_string(path.with_extension("maps")).unwrap_or_default();
        seen.hold_every = h.hold_every;
        let (at, namespace) = process_of(&mut seen, &mut by_process, &mut namespaces, ours, &h);
        // Thread ids in the trace: another namespace's are moved above 2^32 to stay apart.
        let tid_of = |tid: u32| u64::from(tid) | u64::from(namespace.unwrap_or(0)) << 32;
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
        // The locks: aggregates, named; the name of each address for the events below.
        let mut stats = file.locks().unwrap_or_default();
        if h.other.is_used() {
            stats.push(LockStat {
                addr: 0,
                ..h.other.clone()
            });
        }
        let name_of = tables.add_image(&mut syms, &maps, &stats, (h.pid, tid_of), p);
        let mut tids: Vec<u64> = Vec::new();
        // Each call site's name, resolved once (a lock storm has 200,000 waits from a few).
        let mut site_names: HashMap<u64, Arc<str>> = HashMap::new();
        let mut routines: Vec<(u64, u64)> = Vec::new();
        let _ = file.events(|r: Rec| {
            let tid = tid_of(r.tid);
            if !tids.contains(&tid) {
                tids.push(tid);
            }
            match r.kind {
                records::K_BIRTH => {
                    routines.push((tid, r.holder));
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
                    if read_waits >= read_cap {
                        seen.dropped.unread += 1;
                        return;
                    }
                    read_waits += 1;
                    let evs = seen.exact.events.entry(tid).or_default();
                    if *is_lock {
                        let lock = id_of(name);
                        let site = (r.site != 0).then(|| {
                            Arc::clone(site_names.entry(r.site).or_insert_with(|| {
                                syms.site_in(&maps, r.site)
                                    .unwrap_or_else(|| format!("{:#x}", r.site))
                                    .into()
                            }))
                        });
                        let holder = (r.holder as u32 != 0).then(|| tid_of(r.holder as u32));
                        evs.push((
                            rel(r.t0),
                            ExactKind::Wait {
                                lock,
                                name: Arc::clone(name),
                                site,
                                holder,
                            },
                        ));
                        evs.push((
                            rel(r.t1),
                            ExactKind::Acquired {
                                lock,
                                name: Arc::clone(name),
                            },
                        ));
                    } else {
                        evs.push((rel(r.t0), ExactKind::Park(true)));
                        evs.push((rel(r.t1), ExactKind::Park(false)));
                    }
                }
                _ => {}
            }
        });
        // Roles: the main thread, the others by start routine (numbered when shared).
        seen.roles.insert(tid_of(h.pid), "main".to_owned());
        seen.roles.extend(roles(&mut syms, &maps, &routines));
        for tid in tids {
            let name = seen.roles.get(&tid).cloned().unwrap_or_else(|| {
                if tid == tid_of(h.pid) {
                    p.program.clone()
                } else {
                    format!("{} thread", p.program)
                }
            });
            if !seen.exact.extra_threads.iter().any(|t| t.0 == tid) {
                seen.exact.extra_threads.push((tid, name));
            }
        }
    }
    tables.finish(&mut seen);
    seen
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
