//! Reading one thread of another process from `/proc/PID/task/TID/`: `stat` (state letter,
//! name, last CPU, start time), `schedstat` (time on a CPU, time runnable but waiting for one,
//! timeslices), `status` (voluntary and involuntary context switches) and `syscall` (the system
//! call it is blocked in, with its arguments; readable only with ptrace access to the process,
//! which a parent has over its child). Formats: the kernel's `Documentation/filesystems/proc.rst`
//! and `Documentation/scheduler/sched-stats.rst`.
//!
//! The files stay open between samples and are re-read with `pread` at offset 0 (the kernel
//! regenerates a `/proc` file on each read from its start), which saves the path lookup that
//! dominates a fresh `open` — the sampler's cost is mostly these reads.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

/// The open files of one thread.
#[derive(Debug)]
pub struct TaskFiles {
    stat: File,
    schedstat: File,
    status: File,
    /// `None` when ptrace access to the process is refused.
    syscall: Option<File>,
}

/// What one read of a thread says.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reading {
    /// `R` running or runnable, `S` sleeping, `D` uninterruptible (usually I/O), …
    pub state: char,
    /// The thread's name (`comm`).
    pub comm: String,
    /// The CPU it last ran on.
    pub cpu: u32,
    /// Cumulative time on a CPU, ns.
    pub on_cpu_ns: u64,
    /// Cumulative time runnable but waiting for a CPU, ns.
    pub runqueue_ns: u64,
    /// Timeslices run so far (changes whenever the thread ran).
    pub slices: u64,
    /// Voluntary and involuntary context switches, when `status` was read.
    pub switches: Option<(u64, u64)>,
    /// The blocking system call: number and first two arguments; `None` when running, not in a
    /// system call, or not visible.
    pub syscall: Option<(i64, u64, u64)>,
}

impl TaskFiles {
    /// Opens thread `tid` of process `pid`; `Err` if it has exited. `syscall_denied` is set when
    /// the `syscall` file exists but may not be read.
    pub fn open(pid: u32, tid: u64, syscall_denied: &mut bool) -> io::Result<TaskFiles> {
        let dir = format!("/proc/{pid}/task/{tid}");
        let syscall = match File::open(format!("{dir}/syscall")) {
            Ok(f) => Some(f),
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                *syscall_denied = true;
                None
            }
            Err(_) => None,
        };
        Ok(TaskFiles {
            stat: File::open(format!("{dir}/stat"))?,
            schedstat: File::open(format!("{dir}/schedstat"))?,
            status: File::open(format!("{dir}/status"))?,
            syscall,
        })
    }

    /// Reads the thread; `with_status` also reads the context switches (the costliest file).
    /// `Err` once the thread has exited. `buf` is scratch space kept between calls.
    ///
    /// `prev` is the previous reading: a thread that was blocked then and has neither run nor
    /// queued for a CPU since (its `schedstat` unchanged) is still blocked in the same call, so
    /// only `schedstat` is read — an idle thread costs one small read per sample.
    pub fn read(
        &mut self,
        prev: Option<&Reading>,
        with_status: bool,
        buf: &mut Vec<u8>,
    ) -> io::Result<Reading> {
        let mut r = Reading::default();
        let sched = read_at(&self.schedstat, buf)?;
        let mut it = sched
            .split_ascii_whitespace()
            .map(|x| x.parse::<u64>().unwrap_or(0));
        r.on_cpu_ns = it.next().unwrap_or(0);
        r.runqueue_ns = it.next().unwrap_or(0);
        r.slices = it.next().unwrap_or(0);
        if let Some(p) = prev {
            let same =
                (p.on_cpu_ns, p.runqueue_ns, p.slices) == (r.on_cpu_ns, r.runqueue_ns, r.slices);
            if same && p.state != 'R' {
                return Ok(Reading {
                    switches: None,
                    ..p.clone()
                });
            }
        }
        parse_stat(read_at(&self.stat, buf)?, &mut r)?;
        if with_status {
            r.switches = Some(parse_switches(read_at(&self.status, buf)?));
        }
        if r.state != 'R' {
            if let Some(f) = &self.syscall {
                // A thread that exits between the two reads gives an error here: not fatal.
                r.syscall = read_at(f, buf).ok().and_then(parse_syscall);
            }
        }
        Ok(r)
    }
}

fn read_at<'a>(f: &File, buf: &'a mut Vec<u8>) -> io::Result<&'a str> {
    buf.resize(4096, 0);
    let n = f.read_at(buf, 0)?;
    if n == 0 {
        return Err(io::ErrorKind::NotFound.into());
    }
    std::str::from_utf8(&buf[..n]).map_err(|_| io::ErrorKind::InvalidData.into())
}

/// `pid (comm) S ppid …`: the name may hold spaces and parentheses, so fields are counted from
/// the last `)`. Field 3 is the state, 39 the CPU last run on.
fn parse_stat(s: &str, r: &mut Reading) -> io::Result<()> {
    let (open, close) = match (s.find('('), s.rfind(')')) {
        (Some(o), Some(c)) if o < c => (o, c),
        _ => return Err(io::ErrorKind::InvalidData.into()),
    };
    r.comm = s[open + 1..close].to_owned();
    let fields: Vec<&str> = s[close + 1..].split_ascii_whitespace().collect();
    r.state = fields.first().and_then(|f| f.chars().next()).unwrap_or('?');
    r.cpu = fields.get(36).and_then(|f| f.parse().ok()).unwrap_or(0);
    Ok(())
}

fn parse_switches(s: &str) -> (u64, u64) {
    let field = |key: &str| {
        s.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    };
    (
        field("voluntary_ctxt_switches:"),
        field("nonvoluntary_ctxt_switches:"),
    )
}

/// `running`, `-1 sp pc` (blocked outside a system call) or `nr arg1 … arg6 sp pc` (hex args).
fn parse_syscall(s: &str) -> Option<(i64, u64, u64)> {
    let mut it = s.split_ascii_whitespace();
    let nr: i64 = it.next()?.parse().ok()?;
    if nr < 0 {
        return None;
    }
    let hex = |x: Option<&str>| {
        x.and_then(|x| u64::from_str_radix(x.trim_start_matches("0x"), 16).ok())
            .unwrap_or(0)
    };
    let a1 = hex(it.next());
    let a2 = hex(it.next());
    Some((nr, a1, a2))
}

/// The thread ids of process `pid` now; `Err` once it has exited.
pub fn tasks(pid: u32) -> io::Result<Vec<u64>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        if let Some(tid) = e?.file_name().to_str().and_then(|s| s.parse().ok()) {
            out.push(tid);
        }
    }
    out.sort_unstable();
    Ok(out)
}

/// The CPUs process `pid` may run on (its affinity mask); 0 if unknown.
pub fn cpus_of(pid: u32) -> u32 {
    // SAFETY: `set` is a plain bit mask the kernel fills; its size is passed along.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(pid as i32, std::mem::size_of_val(&set), &mut set) != 0 {
            return 0;
        }
        libc::CPU_COUNT(&set) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_a_name_holding_parentheses() {
        let mut r = Reading::default();
        let mut s = String::from("12 (a (b) c) S 1");
        for i in 5..=39 {
            s.push_str(&format!(" {i}"));
        }
        parse_stat(&s, &mut r).unwrap();
        assert_eq!((r.comm.as_str(), r.state, r.cpu), ("a (b) c", 'S', 39));
    }

    #[test]
    fn syscall_lines() {
        assert_eq!(parse_syscall("running\n"), None);
        assert_eq!(parse_syscall("-1 0x7ffd 0x7f\n"), None);
        assert_eq!(
            parse_syscall("202 0x55d0c0 0x89 0x2 0x0 0x0 0x0 0x7ff 0x7f\n"),
            Some((202, 0x55d0c0, 0x89))
        );
    }

    #[test]
    fn switches_from_status() {
        let s = "Name:\tx\nvoluntary_ctxt_switches:\t7\nnonvoluntary_ctxt_switches:\t3\n";
        assert_eq!(parse_switches(s), (7, 3));
    }
}
