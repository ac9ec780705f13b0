//! `Trace::load` of files built to exhaust memory: a sparse 2 GiB `.tltrace` whose header is
//! valid and whose name count (or lock table row count) is just under the file size, a 1 GiB
//! file that begins with the
//! `.pftrace` packet byte (`0x0a`, a newline) and nothing else of that format, and a FIFO fed an
//! endless stream of newlines (`doctor <(yes '')`). Each must be refused with an error, and the
//! most memory live during the load — counted in bytes by a counting allocator, never timed —
//! must stay far below the file's size.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Mutex, MutexGuard};

use threadlab_trace::{Trace, TraceError};

// The counting allocator the runtime's memory tests use too.
#[path = "../../threadlab/tests/live_bytes/mod.rs"]
mod live_bytes;
use live_bytes::{LIVE, PEAK};

#[global_allocator]
static ALLOC: live_bytes::Counting = live_bytes::Counting;

/// Most bytes a refused load may have live at once beyond what was live before it: the read
/// buffer (64 KiB) and the few items reserved up front, with a wide margin.
const BOUND: usize = 16 << 20;

/// The peak is process-wide: one test at a time.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Loads `path`, returning the error and the most bytes live during the load above those live
/// before it.
fn load_counted(path: &std::path::Path) -> (TraceError, usize) {
    let before = LIVE.load(Relaxed);
    PEAK.store(before, Relaxed);
    let result = Trace::load(path);
    let peak = PEAK.load(Relaxed).saturating_sub(before);
    match result {
        Ok(t) => panic!(
            "a hostile file loaded as a trace of {} threads",
            t.threads().len()
        ),
        Err(e) => (e, peak),
    }
}

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("threadlab-hostile-{}-{name}", std::process::id()))
}

/// LEB128, as the native format writes its integers.
fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The start of a `.tltrace` file (duration, dropped events, CPUs) up to its name count.
fn tltrace_header(name_count: u64) -> Vec<u8> {
    tltrace_header_of(b"TLTRACE2", name_count)
}

/// [`tltrace_header`] of the version whose magic is `magic`.
fn tltrace_header_of(magic: &[u8], name_count: u64) -> Vec<u8> {
    let mut header = magic.to_vec();
    varint(&mut header, 1_000); // duration
    varint(&mut header, 0); // dropped
    varint(&mut header, 2); // CPUs
    varint(&mut header, name_count);
    header
}

/// Writes a sparse file `name` of `size` bytes that begins with `head` (the rest reads as zero
/// bytes), loads it, removes it, checks that the load stayed below [`BOUND`] and returns its
/// error.
fn refused_in_little_memory(name: &str, head: &[u8], size: u64) -> TraceError {
    let path = temp(name);
    let mut f = std::fs::File::create(&path).unwrap();
    f.write_all(head).unwrap();
    f.set_len(size).unwrap();
    drop(f);
    let (err, peak) = load_counted(&path);
    std::fs::remove_file(&path).ok();
    assert!(peak < BOUND, "{peak} bytes live while refusing the file");
    err
}

/// Sparse 2 GiB `.tltrace` files whose name count no memory should be reserved for up front.
#[test]
fn sparse_tltraces_with_hostile_name_counts_are_refused_in_little_memory() {
    let _s = serial();
    let size: u64 = 2 << 30;
    for (file, name_count, says, why) in [
        // A name count just under the file size: one byte per name fits, 24 bytes each in
        // memory (a `String`) would not.
        (
            "names.tltrace",
            size - 64,
            "name count",
            "the error names the count",
        ),
        // A count that a `String` per name would fit in: the names are then the file's zero
        // bytes, all empty.
        (
            "zeros.tltrace",
            size / 32,
            "repeated",
            "the error says a name repeats",
        ),
    ] {
        let err = refused_in_little_memory(file, &tltrace_header(name_count), size);
        assert!(err.to_string().contains(says), "{why}: {err}");
    }
}

/// Sparse 2 GiB `.tltrace` files of the version with a lock table, with one name and no thread,
/// whose lock count no memory should be reserved for up front.
#[test]
fn sparse_tltraces_with_hostile_lock_counts_are_refused_in_little_memory() {
    let _s = serial();
    let size: u64 = 2 << 30;
    for (file, lock_count, says, why) in [
        // A count just under the bytes left: each row's smallest encoding (13 bytes) would
        // fit, its size in memory would not.
        (
            "locks.tltrace",
            (size - 64) / 13,
            "lock count",
            "the error names the count",
        ),
        // A count the rows' memory would fit in: the rows are then the file's zero bytes, each
        // lock 0 of the name 0 with nothing recorded.
        (
            "zero-locks.tltrace",
            size / 512,
            "repeated",
            "the error says a lock repeats",
        ),
    ] {
        let mut head = tltrace_header_of(b"TLTRACE3", 1);
        varint(&mut head, 1); // the one name, "x"
        head.push(b'x');
        varint(&mut head, 0); // no thread
        varint(&mut head, lock_count);
        let err = refused_in_little_memory(file, &head, size);
        assert!(err.to_string().contains(says), "{why}: {err}");
    }
}

#[test]
fn a_large_file_that_only_begins_like_a_pftrace_is_refused_after_its_first_bytes() {
    let _s = serial();
    let err = refused_in_little_memory("newline.pftrace", b"\n\n\nnot a trace\n", 1 << 30);
    assert_eq!(err.offset(), Some(0), "refused at its start: {err}");
}

/// `doctor <(yes '')`: a FIFO that a writer fills with newlines for as long as it is read
/// (bounded at 512 MiB, so that a reader that reads it whole fails the test instead of the
/// machine).
#[test]
fn an_endless_stream_of_newlines_from_a_fifo_is_refused_after_its_first_bytes() {
    let _s = serial();
    let path = temp("newlines.fifo");
    let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path that lives across the call.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0, "mkfifo");
    let writer_path = path.clone();
    let writer = std::thread::spawn(move || {
        // Opening for writing waits for the reader; writes fail (EPIPE) once it has gone.
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(&writer_path)
            .unwrap();
        let chunk = vec![b'\n'; 64 * 1024];
        let mut written = 0usize;
        while written < 512 << 20 {
            if f.write_all(&chunk).is_err() {
                break;
            }
            written += chunk.len();
        }
        written
    });
    let (err, peak) = load_counted(&path);
    let written = writer.join().unwrap();
    std::fs::remove_file(&path).ok();
    assert_eq!(err.offset(), Some(0), "refused at its start: {err}");
    assert!(peak < BOUND, "{peak} bytes live while refusing the stream");
    assert!(
        written < 512 << 20,
        "the stream was read whole ({written} bytes) before the refusal"
    );
}
