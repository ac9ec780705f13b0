//! Names for addresses in another process: which mapped file (`/proc/PID/maps`) an address falls
//! in, and which ELF symbol of that file (`.symtab`, else `.dynsym`) covers it — so a futex word
//! inside a `static` mutex or a library's global lock gets the variable's name.
//!
//! A file is loaded at a *bias*: the address of its mapping at file offset 0 minus the virtual
//! address its lowest `PT_LOAD` segment asks for (0 for a position-independent executable or a
//! library); a symbol's run-time address is its `st_value` plus the bias. The ELF layout is the
//! System V gABI's (ELF-64, little-endian only here). Rust's legacy mangling (`_ZN…E` with a
//! trailing `h<hash>`) is undone so the names read as paths.
//!
//! Only regular files are read, and only an ELF file's headers and symbol tables, each read
//! with its size checked ([`MAX_SECTION`]): a mapping of `/dev/zero` (a `MAP_SHARED` anonymous
//! mapping shows as one), a FIFO or a device is never opened, and a large file that is not ELF
//! (the JDK's `modules` image) costs one read of its first 64 bytes. An address in a non-ELF
//! file's own mapping is named `file+offset`; the anonymous mapping after a file is taken for
//! its `.bss` only when the file is ELF and its segments reach that far.

use std::collections::HashMap;

/// One symbol: start, size, name.
type Sym = (u64, u64, String);

/// Symbols per file, parsed once.
#[derive(Default)]
pub struct Symbols {
    files: HashMap<String, Option<Vec<Sym>>>,
    /// Debug information (DWARF) per file, for call sites; `None` when the file has none or
    /// is not a regular ELF file.
    debug: HashMap<String, Option<addr2line::Loader>>,
}

impl std::fmt::Debug for Symbols {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Symbols")
            .field("files", &self.files.len())
            .field("debug", &self.debug.len())
            .finish()
    }
}

impl Symbols {
    /// Names `addr` in process `pid`: `symbol+offset (file)`, or `file+offset` without a covering
    /// symbol, or `None` outside any mapped file (a heap or stack address).
    pub fn name(&mut self, pid: u32, addr: u64) -> Option<String> {
        let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).ok()?;
        self.name_in(&maps, addr)
    }

    /// [`Symbols::name`] from the text of a `/proc/PID/maps` read earlier (the interposer
    /// copies it as its process exits).
    pub fn name_in(&mut self, maps: &str, addr: u64) -> Option<String> {
        let (base, path, own) = mapping_of(maps, addr)?;
        let syms = self
            .files
            .entry(path.clone())
            .or_insert_with(|| read_elf(&path));
        let Some(syms) = syms.as_ref() else {
            // Not a regular ELF file: named by offset inside its own mapping only.
            if !own || !is_regular(&path) {
                return None;
            }
            let short = path.rsplit('/').next().unwrap_or(&path);
            return Some(format!("{short}+{:#x}", addr - base));
        };
        let short = path.rsplit('/').next().unwrap_or(&path).to_owned();
        // The first symbol (sorted by start) is preceded by the bias entry.
        let (low_vaddr, high_vaddr, list) = syms
            .split_first()
            .map_or((0, u64::MAX, &[][..]), |(b, l)| (b.0, b.1, l));
        let vaddr = addr.wrapping_sub(base).wrapping_add(low_vaddr);
        // Past the module's last loaded segment (an anonymous mapping after its .bss: a heap,
        // a Go arena) the address is not the module's: never read it as an offset into it.
        if vaddr >= high_vaddr {
            return None;
        }
        let i = list.partition_point(|s| s.0 <= vaddr);
        match i.checked_sub(1).map(|i| &list[i]) {
            Some((start, size, name)) if vaddr < start + size.max(&1) => {
                Some(format!("{}+{:#x} ({short})", demangle(name), vaddr - start))
            }
            _ => Some(format!("{short}+{:#x}", vaddr.wrapping_sub(low_vaddr))),
        }
    }
}

/// The file whose mappings (and the anonymous .bss right after them) cover `addr`: the address
/// of its mapping at offset 0, its path, and whether `addr` is in one of the file's own
/// mappings.
fn mapping_of(maps: &str, addr: u64) -> Option<(u64, String, bool)> {
    let mut last_file: Option<(u64, String)> = None;
    for line in maps.lines() {
        let mut it = line.split_ascii_whitespace();
        let (lo, hi) = it.next()?.split_once('-')?;
        let lo = u64::from_str_radix(lo, 16).ok()?;
        let hi = u64::from_str_radix(hi, 16).ok()?;
        let offset = u64::from_str_radix(it.nth(1)?, 16).ok()?;
        let path = it.nth(2).unwrap_or("");
        let own = path.starts_with('/');
        if own {
            if offset == 0 && !matches!(&last_file, Some(f) if f.1 == path) {
                last_file = Some((lo, path.to_owned()));
            }
        } else if !path.is_empty() {
            last_file = None; // [heap], [stack]: not a file's .bss
        }
        if (lo..hi).contains(&addr) {
            return last_file.map(|(base, p)| (base, p, own));
        }
    }
    None
}

/// The name of an address in a shared mapping (`rw-s`: a process-shared lock lives there), the
/// same in every process that maps it and across runs: `shared memory NAME+offset`, NAME being
/// the mapped file's name (`/dev/shm/x`: `x`) or `anonymous, N KiB` for a `MAP_SHARED`
/// anonymous mapping (`/dev/zero`, never read).
pub fn shared_mapping(maps: &str, addr: u64) -> Option<String> {
    for line in maps.lines() {
        let mut it = line.split_ascii_whitespace();
        let (lo, hi) = it.next()?.split_once('-')?;
        let (lo, hi) = (
            u64::from_str_radix(lo, 16).ok()?,
            u64::from_str_radix(hi, 16).ok()?,
        );
        if !(lo..hi).contains(&addr) {
            continue;
        }
        let perms = it.next()?;
        let offset = u64::from_str_radix(it.next()?, 16).ok()?;
        let path = it.nth(2).unwrap_or("");
        if !perms.ends_with('s') {
            return None;
        }
        let name = if path.is_empty() || path == "/dev/zero" || path.starts_with("/SYSV") {
            format!("anonymous, {} KiB", (hi - lo) >> 10)
        } else {
            path.rsplit('/').next().unwrap_or(path).to_owned()
        };
        return Some(format!("shared memory {name}+{:#x}", addr - lo + offset));
    }
    None
}

impl Symbols {
    /// Names a call site (a return address `addr`) in a process whose maps are `maps`: the
    /// function and `file:line` of the call from the file's DWARF line tables when it has them
    /// (`insert_item (prog.c:12)`, the innermost inlined function), else as [`Symbols::name_in`]
    /// names an address (`symbol+offset (module)`, `module+offset`).
    pub fn site_in(&mut self, maps: &str, addr: u64) -> Option<String> {
        let fallback = self.name_in(maps, addr);
        let (base, path, _) = mapping_of(maps, addr)?;
        let low = match self.files.get(&path) {
            Some(Some(syms)) => syms.first().map_or(0, |b| b.0),
            _ => return fallback,
        };
        let loader = self
            .debug
            .entry(path.clone())
            .or_insert_with(|| addr2line::Loader::new(&path).ok());
        let Some(loader) = loader.as_ref() else {
            return fallback;
        };
        // The call instruction ends just before the return address.
        let probe = addr.wrapping_sub(base).wrapping_add(low).wrapping_sub(1);
        let mut frames = loader.find_frames(probe).ok()?;
        while let Ok(Some(f)) = frames.next() {
            let (Some(function), Some(loc)) = (f.function.as_ref(), f.location.as_ref()) else {
                continue;
            };
            let name = function.demangle().ok()?.into_owned();
            let file = loc.file.map(|f| f.rsplit('/').next().unwrap_or(f));
            if let (Some(file), Some(line)) = (file, loc.line) {
                return Some(format!("{name} ({file}:{line})"));
            }
        }
        fallback
    }
}

/// A section or table larger than this is not read (a symbol table of 512 MiB would be ~22
/// million symbols).
const MAX_SECTION: u64 = 512 << 20;

/// Whether `path` is a regular file (not a device, FIFO or socket; `/dev/zero` is one).
fn is_regular(path: &str) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// The symbols of the regular ELF file at `path` (see [`parse`]), reading only its headers and
/// symbol tables; `None` if it is not one.
fn read_elf(path: &str) -> Option<Vec<Sym>> {
    use std::os::unix::fs::{FileExt, OpenOptionsExt};
    // Checked before opening (opening a FIFO for reading waits for a writer), and opened
    // non-blocking in case the path changed in between.
    if !is_regular(path) {
        return None;
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let len = file.metadata().ok()?.len();
    let at = |off: u64, n: u64| -> Option<Vec<u8>> {
        if n > MAX_SECTION || off.checked_add(n)? > len {
            return None;
        }
        let mut b = vec![0u8; n as usize];
        file.read_exact_at(&mut b, off).ok()?;
        Some(b)
    };
    parse(&at)
}

fn u16_at(b: &[u8], o: usize) -> Option<u64> {
    Some(u16::from_le_bytes(b.get(o..o + 2)?.try_into().ok()?) as u64)
}
fn u32_at(b: &[u8], o: usize) -> Option<u64> {
    Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?) as u64)
}
fn u64_at(b: &[u8], o: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(o..o + 8)?.try_into().ok()?))
}

/// The data and function symbols of an ELF-64 little-endian file, read through `at(offset,
/// length)`, sorted by address, preceded by an entry holding the lowest `PT_LOAD` virtual
/// address (page-aligned) and, as its size, the end of the highest `PT_LOAD` segment in memory
/// (`p_vaddr + p_memsz`, .bss included); `None` if not such a file.
fn parse(at: &dyn Fn(u64, u64) -> Option<Vec<u8>>) -> Option<Vec<Sym>> {
    let eh = at(0, 64)?;
    if eh.get(0..4)? != b"\x7fELF" || eh[4] != 2 || eh[5] != 1 {
        return None;
    }
    let (phoff, shoff) = (u64_at(&eh, 0x20)?, u64_at(&eh, 0x28)?);
    let (phnum, shnum) = (u16_at(&eh, 0x38)?, u16_at(&eh, 0x3c)?);
    let ph = at(phoff, phnum * 56)?;
    let (mut low, mut high) = (u64::MAX, 0);
    for i in 0..phnum as usize {
        let p = i * 56;
        if u32_at(&ph, p)? == 1 {
            let vaddr = u64_at(&ph, p + 0x10)?;
            low = low.min(vaddr & !0xfff);
            high = high.max(vaddr.saturating_add(u64_at(&ph, p + 0x28)?));
        }
    }
    let sh = at(shoff, shnum * 64)?;
    let section = |i: usize| -> Option<(u64, u64, u64, usize)> {
        let s = i * 64;
        Some((
            u32_at(&sh, s + 4)?,             // sh_type
            u64_at(&sh, s + 0x18)?,          // sh_offset
            u64_at(&sh, s + 0x20)?,          // sh_size
            u32_at(&sh, s + 0x28)? as usize, // sh_link
        ))
    };
    let mut out = Vec::new();
    // .symtab (2) when present, else .dynsym (11).
    for wanted in [2, 11] {
        for i in 0..shnum as usize {
            let (ty, off, size, link) = section(i)?;
            if ty != wanted {
                continue;
            }
            let (_, str_off, str_size, _) = section(link)?;
            let strtab = at(str_off, str_size)?;
            let table = at(off, size - size % 24)?;
            for e in table.chunks_exact(24) {
                let info = e[4];
                let (value, sz) = (u64_at(e, 8)?, u64_at(e, 16)?);
                // STT_OBJECT (1), STT_FUNC (2), STT_TLS excluded; defined only.
                if !matches!(info & 0xf, 1 | 2) || value == 0 || u16_at(e, 6)? == 0 {
                    continue;
                }
                let n = u32_at(e, 0)? as usize;
                let name = strtab.get(n..)?.split(|&c| c == 0).next()?;
                out.push((value, sz, String::from_utf8_lossy(name).into_owned()));
            }
        }
        if !out.is_empty() {
            break;
        }
    }
    out.sort_by_key(|s| s.0);
    out.insert(
        0,
        (if low == u64::MAX { 0 } else { low }, high, String::new()),
    );
    Some(out)
}

/// A symbol's name as its language writes it: Rust (legacy `_ZN…E` and v0 `_R…`) and C++
/// (Itanium ABI) names demangled by `rustc-demangle` and `cpp_demangle` (through `addr2line`);
/// other names as they are. Only a name with a mangled prefix is given to a demangler: a C
/// static named `m` is a valid Itanium type on its own (`unsigned long`), and was shown so.
pub fn demangle(name: &str) -> String {
    if name.starts_with("_Z") || name.starts_with("_R") || name.starts_with("__Z") {
        addr2line::demangle_auto(name.into(), None).into_owned()
    } else {
        name.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demangles_rust_and_cpp_names() {
        assert_eq!(
            demangle("_ZN9threadlab7observe4demo4LOCK17h0123456789abcdefE"),
            "threadlab::observe::demo::LOCK"
        );
        assert_eq!(
            demangle("_ZN5Mutex28lock_without_safepoint_checkEv"),
            "Mutex::lock_without_safepoint_check()"
        );
        assert_eq!(demangle("main_arena"), "main_arena");
        // C names that are also Itanium type codes stay themselves.
        assert_eq!(demangle("m"), "m");
        assert_eq!(demangle("i"), "i");
    }

    #[test]
    fn names_a_static_of_this_process() {
        static PROBE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        // Relaxed: pairs with nothing, only the static's address matters (the store keeps it).
        PROBE.store(1, std::sync::atomic::Ordering::Relaxed);
        let addr = &PROBE as *const _ as u64;
        let name = Symbols::default().name(std::process::id(), addr).unwrap();
        assert!(name.contains("PROBE"), "{name}");
    }

    /// An address in an anonymous mapping right after a module's last segment is not named
    /// as an offset into that module (a heap address once read as `gomutex+0x12caa0536960`).
    #[test]
    fn an_address_past_the_modules_segments_is_not_named_from_it() {
        let exe = std::fs::read_link("/proc/self/exe").unwrap();
        let syms = read_elf(exe.to_str().unwrap()).unwrap();
        let (low, high) = (syms[0].0, syms[0].1);
        assert!(high > low);
        // A fake maps text: the executable at 0x10000, then a large anonymous mapping after it.
        let base = 0x10000u64;
        let end = base + (high - low);
        let maps = format!(
            "{base:x}-{end:x} r--p 00000000 00:00 1 {p}\n{end:x}-{:x} rw-p 00000000 00:00 0\n",
            end + (1 << 30),
            p = exe.display()
        );
        let mut s = Symbols::default();
        assert!(s.name_in(&maps, base + 0x10).is_some());
        assert_eq!(s.name_in(&maps, end + (1 << 20)), None);
    }

    /// A `MAP_SHARED` anonymous mapping shows as `/dev/zero (deleted)`: naming an address in it
    /// must not read the device (it never ends), nor any device or FIFO; and the anonymous
    /// mapping after a file that is not ELF is not that file's.
    #[test]
    fn devices_fifos_and_what_follows_a_non_elf_file_are_not_read_as_modules() {
        let maps = "10000-20000 rw-s 00000000 00:01 5 /dev/zero (deleted)\n";
        assert_eq!(Symbols::default().name_in(maps, 0x10010), None);
        let dir = std::env::temp_dir().join(format!("threadlab-symbols-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: `c` is a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let maps = format!("10000-20000 r--p 00000000 00:01 5 {}\n", fifo.display());
        // Opening a FIFO for reading would block until a writer came: this must return.
        assert_eq!(Symbols::default().name_in(&maps, 0x10010), None);
        let image = dir.join("modules");
        std::fs::write(&image, vec![7u8; 1 << 16]).unwrap();
        let maps = format!(
            "10000-20000 r--s 00000000 00:01 5 {}\n20000-30000 rw-p 00000000 00:00 0\n",
            image.display()
        );
        let mut s = Symbols::default();
        assert_eq!(s.name_in(&maps, 0x10010).as_deref(), Some("modules+0x10"));
        assert_eq!(s.name_in(&maps, 0x20010), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
