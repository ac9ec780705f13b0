//! The interposer's files, read back: one `PID-START.tl` per process image (a header, a table of
//! per-lock aggregates, then events) and its `PID-START.maps` (`/proc/self/maps`, copied at the
//! image's start and again at its end). The layout is the C file's (`preload/interpose.c`,
//! "The file's layout"), native endianness; the header states the sizes it was written with,
//! and a file whose sizes differ from these is skipped as another version's.
//!
//! Reading is bounded: the header and the lock table are read whole (4 KiB and 1.7 MB), the
//! events in slices of [`SLICE`] records, up to the number the image claimed — never the sparse
//! rest of the file.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// `"TLTINPS2"`, the header's first word.
pub const MAGIC: u64 = 0x3253_504e_4954_4c54;
pub const HEADER_SIZE: usize = 4096;
pub const LOCK_SIZE: usize = 1680;
pub const LOCKS: usize = 1024;
pub const REC_SIZE: usize = 48;
/// Histogram buckets: four per power of two of nanoseconds (`threadlab_trace::Durations`'s).
pub const HB: usize = 160;
const SITES: usize = 8;
const HOLDERS: usize = 4;
/// Events read at a time.
const SLICE: usize = 65_536;

pub const K_BIRTH: u32 = 2;
pub const K_DEATH: u32 = 3;
pub const K_WAIT: u32 = 4;
pub const K_EXIT: u32 = 6;
pub const W_COND: u64 = 2;
pub const W_SEM: u64 = 3;

pub const F_EXITED: u64 = 1;
pub const F_EXEC: u64 = 2;
pub const F_UNDERSCORE_EXIT: u64 = 4;
pub const F_ABORT: u64 = 8;
pub const F_FULL: u64 = 16;

fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_ne_bytes(b[o..o + 4].try_into().expect("4 bytes"))
}
fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_ne_bytes(b[o..o + 8].try_into().expect("8 bytes"))
}

/// One event as the C library writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rec {
    pub kind: u32,
    pub tid: u32,
    pub t0: u64,
    pub t1: u64,
    /// The lock; a birth's parent tid; a death's name, bytes 0-7.
    pub obj: u64,
    /// A wait's holder tid and, above bit 32, its kind; a birth's start routine; a death's
    /// name, bytes 8-15.
    pub holder: u64,
    /// A wait's call site.
    pub site: u64,
}

impl Rec {
    fn parse(c: &[u8]) -> Rec {
        Rec {
            kind: u32_at(c, 0),
            tid: u32_at(c, 4),
            t0: u64_at(c, 8),
            t1: u64_at(c, 16),
            obj: u64_at(c, 24),
            holder: u64_at(c, 32),
            site: u64_at(c, 40),
        }
    }

    /// A death's thread name (16 bytes in `obj` and `holder`).
    pub fn name(&self) -> String {
        let mut name = [0u8; 16];
        name[..8].copy_from_slice(&self.obj.to_ne_bytes());
        name[8..].copy_from_slice(&self.holder.to_ne_bytes());
        let len = name.iter().position(|&c| c == 0).unwrap_or(16);
        String::from_utf8_lossy(&name[..len]).into_owned()
    }
}

/// One lock's aggregates in one process image.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LockStat {
    pub addr: u64,
    /// `W_*` of its first use.
    pub kind: u64,
    /// The call site of its first recorded acquisition.
    pub first_site: u64,
    pub acquisitions: u64,
    /// Contended acquisitions (waits).
    pub contended: u64,
    pub wait_ns: u64,
    pub wait_max: u64,
    /// Holds timed (one acquisition in `hold_every` on average).
    pub hold_samples: u64,
    pub hold_ns: u64,
    pub hold_max: u64,
    /// Waits per call site: (site, waits, ns).
    pub sites: Vec<(u64, u64, u64)>,
    /// Waits at sites past the table's eight: (waits, ns).
    pub other_sites: (u64, u64),
    /// Waits per thread that held the lock when they began: (tid, waits, ns).
    pub holders: Vec<(u64, u64, u64)>,
    /// See `other_sites`.
    pub other_holders: (u64, u64),
    pub wait_hist: Vec<u32>,
    pub hold_hist: Vec<u32>,
}

impl LockStat {
    fn parse(b: &[u8]) -> LockStat {
        let triples = |at: usize, n: usize| -> Vec<(u64, u64, u64)> {
            (0..n)
                .map(|i| {
                    let o = at + i * 24;
                    (u64_at(b, o), u64_at(b, o + 8), u64_at(b, o + 16))
                })
                .filter(|t| t.0 != 0)
                .collect()
        };
        let hist = |at: usize| -> Vec<u32> { (0..HB).map(|i| u32_at(b, at + 4 * i)).collect() };
        LockStat {
            addr: u64_at(b, 0),
            kind: u64_at(b, 8),
            first_site: u64_at(b, 16),
            acquisitions: u64_at(b, 24),
            contended: u64_at(b, 32),
            wait_ns: u64_at(b, 40),
            wait_max: u64_at(b, 48),
            hold_samples: u64_at(b, 56),
            hold_ns: u64_at(b, 64),
            hold_max: u64_at(b, 72),
            other_sites: (u64_at(b, 80), u64_at(b, 88)),
            other_holders: (u64_at(b, 96), u64_at(b, 104)),
            sites: triples(112, SITES),
            holders: triples(112 + 24 * SITES, HOLDERS),
            wait_hist: hist(112 + 24 * (SITES + HOLDERS)),
            hold_hist: hist(112 + 24 * (SITES + HOLDERS) + 4 * HB),
        }
    }

    /// Whether anything was recorded for it.
    pub fn is_used(&self) -> bool {
        self.acquisitions + self.contended + self.hold_samples > 0
    }
}

/// One process image's header.
#[derive(Clone, Debug, Default)]
pub struct Header {
    pub hold_every: u32,
    pub events_cap: u64,
    pub pid: u32,
    /// Inode of its PID namespace.
    pub pidns: u64,
    /// 0 when it was killed (no end recorded).
    pub end_ns: u64,
    /// `F_*`.
    pub flags: u64,
    /// Events claimed (those past `events_cap` were dropped).
    pub ev_next: u64,
    /// Waits not kept one by one (budget spent, or no room on the file system).
    pub ev_dropped: u64,
    /// Acquisitions of locks that found no slot in the table.
    pub locks_dropped: u64,
    pub births: u64,
    pub deaths: u64,
    /// Threads counted without a private cache (more than the interposer's 4,096 at once).
    pub direct_threads: u64,
    /// Its executable.
    pub exe: String,
    /// The locks that found no slot, together.
    pub other: LockStat,
}

/// An open image file.
pub struct ImageFile {
    file: File,
    pub header: Header,
}

impl ImageFile {
    /// Opens `path` and reads its header; `InvalidData` when it is not a finished header of
    /// this version.
    pub fn open(path: &Path) -> std::io::Result<ImageFile> {
        let mut file = File::open(path)?;
        let mut b = vec![0u8; HEADER_SIZE];
        file.read_exact(&mut b)?;
        if u64_at(&b, 0) != MAGIC
            || u32_at(&b, 12) as usize != HEADER_SIZE
            || u32_at(&b, 16) as usize != LOCK_SIZE
            || u32_at(&b, 20) as usize != LOCKS
            || u32_at(&b, 24) as usize != REC_SIZE
            || u32_at(&b, 32) as usize != HB
        {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "not an interposer file of this version",
            ));
        }
        let exe = &b[128..384];
        let len = exe.iter().position(|&c| c == 0).unwrap_or(exe.len());
        let header = Header {
            events_cap: u64::from(u32_at(&b, 28)),
            hold_every: u32_at(&b, 36),
            pid: u32_at(&b, 40),
            pidns: u64_at(&b, 48),
            end_ns: u64_at(&b, 64),
            flags: u64_at(&b, 72),
            ev_next: u64_at(&b, 80),
            ev_dropped: u64_at(&b, 88),
            locks_dropped: u64_at(&b, 96),
            births: u64_at(&b, 104),
            deaths: u64_at(&b, 112),
            direct_threads: u64_at(&b, 120),
            exe: String::from_utf8_lossy(&exe[..len]).into_owned(),
            other: LockStat::parse(&b[384..384 + LOCK_SIZE]),
        };
        Ok(ImageFile { file, header })
    }

    /// The locks of the table that were used.
    pub fn locks(&mut self) -> std::io::Result<Vec<LockStat>> {
        let mut b = vec![0u8; LOCKS * LOCK_SIZE];
        self.file.seek(SeekFrom::Start(HEADER_SIZE as u64))?;
        self.file.read_exact(&mut b)?;
        Ok(b.chunks_exact(LOCK_SIZE)
            .filter(|c| u64_at(c, 0) != 0)
            .map(LockStat::parse)
            .filter(LockStat::is_used)
            .collect())
    }

    /// Calls `each` for every finished event, in the order written, reading [`SLICE`] at a time.
    pub fn events(&mut self, mut each: impl FnMut(Rec)) -> std::io::Result<()> {
        let n = self.header.ev_next.min(self.header.events_cap) as usize;
        let start = (HEADER_SIZE + LOCKS * LOCK_SIZE) as u64;
        self.file.seek(SeekFrom::Start(start))?;
        let mut buf = vec![0u8; SLICE.min(n.max(1)) * REC_SIZE];
        let mut done = 0;
        while done < n {
            let k = (n - done).min(SLICE);
            let b = &mut buf[..k * REC_SIZE];
            self.file.read_exact(b)?;
            for c in b.chunks_exact(REC_SIZE) {
                let r = Rec::parse(c);
                if r.kind != 0 {
                    each(r);
                }
            }
            done += k;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The C file's histograms are read as [`threadlab_trace::Durations`], whose tests check
    /// its buckets against the C file's `bucket`: the two must have as many.
    #[test]
    fn the_c_histograms_have_the_trace_models_buckets() {
        assert_eq!(HB, threadlab_trace::DURATION_BUCKETS);
    }
}
