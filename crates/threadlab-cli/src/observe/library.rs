//! Where the interposer's library lives: a file that outlives the command (a background job or a
//! daemon it started still has the library mapped, and a process it starts later loads it
//! again through the inherited `LD_PRELOAD`), at a path the dynamic loader accepts.
//!
//! The loader splits `LD_PRELOAD` at spaces and colons and ignores a relative entry in a setuid
//! program, so the path is absolute with neither. It is keyed by the library's content (a
//! 64-bit FNV-1a hash of the bytes: two builds of threadlab with the same interposer share one
//! file, and a different one gets its own), in the per-user cache of the XDG Base Directory
//! Specification (`$XDG_CACHE_HOME`, else `~/.cache`, ignored when relative as the
//! specification says), `…/threadlab/libthreadlab_interpose-HASH.so`. When that directory has
//! a space or a colon in its path, cannot be written, or is on a file system mounted `noexec`
//! (the loader cannot map the library there), the fallback is a directory of this user's
//! under `/tmp`, then `/var/tmp`, `threadlab-UID`, created with mode 0700, and used only if it
//! is a real directory (not a symbolic link) owned by this user that nobody else may write.
//! The file is written under a temporary name and renamed into place, so a concurrent run never
//! maps half a library; an existing file is used only if its bytes are the library's.

use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// A 64-bit FNV-1a hash.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// Whether the dynamic loader can take `p` in `LD_PRELOAD`: absolute, no space or colon.
pub fn preloadable(p: &Path) -> bool {
    p.is_absolute() && p.to_str().is_some_and(|s| !s.contains([' ', ':']))
}

/// Whether the file system of `dir` lets the loader map a library from it (not `noexec`).
fn executable_fs(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a valid C string and `s` a writable statvfs.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
        return false;
    }
    s.f_flag & libc::ST_NOEXEC == 0
}

/// The per-user cache directory of the XDG Base Directory Specification, if absolute.
fn cache_home() -> Option<PathBuf> {
    let abs = |v: std::ffi::OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    std::env::var_os("XDG_CACHE_HOME")
        .and_then(abs)
        .or_else(|| {
            std::env::var_os("HOME")
                .and_then(abs)
                .map(|h| h.join(".cache"))
        })
}

/// A directory of this user's at `dir`: created 0700 if missing; else usable only if a real
/// directory owned by this user and not writable by others.
fn private_dir(dir: &Path) -> Result<(), String> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("{}: {e}", dir.display())),
    }
    let m = std::fs::symlink_metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    if !m.file_type().is_dir() || m.uid() != uid || m.permissions().mode() & 0o022 != 0 {
        return Err(format!(
            "{} is not a private directory of this user (owner {}, mode {:o})",
            dir.display(),
            m.uid(),
            m.permissions().mode() & 0o7777
        ));
    }
    Ok(())
}

/// Writes `bytes` to `dir/name` unless it holds them already; the file's path.
fn place(dir: &Path, name: &str, bytes: &[u8]) -> Result<PathBuf, String> {
    let path = dir.join(name);
    if std::fs::read(&path).is_ok_and(|b| b == bytes) {
        return Ok(path);
    }
    let tmp = dir.join(format!(".{name}.{}.part", std::process::id()));
    let written = std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755)))
        .and_then(|()| std::fs::rename(&tmp, &path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(format!("{}: {e}", path.display()));
    }
    Ok(path)
}

/// `dir/name` holding `bytes` if `dir`'s file system lets the loader map it; else the reason
/// is added to `why`.
fn try_dir(dir: &Path, name: &str, bytes: &[u8], why: &mut Vec<String>) -> Option<PathBuf> {
    if !executable_fs(dir) {
        why.push(format!(
            "{}: its file system is mounted noexec",
            dir.display()
        ));
        return None;
    }
    place(dir, name, bytes).map_err(|e| why.push(e)).ok()
}

/// The library's path, written there if needed, or every reason it could be put nowhere.
pub fn install(bytes: &[u8]) -> Result<PathBuf, String> {
    let name = format!("libthreadlab_interpose-{:016x}.so", fnv1a(bytes));
    let mut why = Vec::new();
    if let Some(cache) = cache_home() {
        let dir = cache.join("threadlab");
        if !preloadable(&dir) {
            why.push(format!(
                "{}: a space or colon in the path (LD_PRELOAD splits there)",
                dir.display()
            ));
        } else {
            match std::fs::create_dir_all(&dir) {
                Ok(()) => {
                    if let Some(p) = try_dir(&dir, &name, bytes, &mut why) {
                        return Ok(p);
                    }
                }
                Err(e) => why.push(format!("{}: {e}", dir.display())),
            }
        }
    }
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    for base in ["/tmp", "/var/tmp"] {
        let dir = Path::new(base).join(format!("threadlab-{uid}"));
        match private_dir(&dir) {
            Ok(()) => {
                if let Some(p) = try_dir(&dir, &name, bytes, &mut why) {
                    return Ok(p);
                }
            }
            Err(e) => why.push(e),
        }
    }
    Err(why.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_with_a_space_or_colon_or_relative_is_not_preloadable() {
        assert!(preloadable(Path::new("/home/u/.cache/threadlab/lib.so")));
        assert!(!preloadable(Path::new("/home/my user/lib.so")));
        assert!(!preloadable(Path::new("/a:b/lib.so")));
        assert!(!preloadable(Path::new("cache/lib.so")));
    }

    #[test]
    fn the_library_is_placed_once_and_kept_by_content() {
        let dir = std::env::temp_dir().join(format!("threadlab-library-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let a = place(&dir, "x.so", b"one").unwrap();
        let mtime = std::fs::metadata(&a).unwrap().modified().unwrap();
        // The same bytes: the file is left alone.
        assert_eq!(place(&dir, "x.so", b"one").unwrap(), a);
        assert_eq!(std::fs::metadata(&a).unwrap().modified().unwrap(), mtime);
        // Other bytes under the same name (a damaged file): rewritten.
        std::fs::write(&a, b"damaged").unwrap();
        place(&dir, "x.so", b"one").unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), b"one");
        assert_ne!(fnv1a(b"one"), fnv1a(b"two"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_directory_others_may_write_is_refused() {
        let dir = std::env::temp_dir().join(format!("threadlab-private-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        private_dir(&dir).unwrap();
        assert_eq!(
            std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
            0o700
        );
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(private_dir(&dir).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
