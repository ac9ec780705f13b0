//! Pre-faulting of full recordings' next chunks, off the recording threads.
//!
//! A full recording touches fresh memory all the time (64 bytes per zone); each first touch of
//! a 4 KiB page is a page fault, which made a zone cost several times what it costs in the
//! flight recorder, whose chunks are reused. So when a thread's buffer takes a new chunk it also
//! allocates the following one and hands it here: one helper thread, started at the first
//! chunk handed over, asks the kernel to populate it (`madvise(MADV_POPULATE_WRITE)`, Linux
//! 5.14+: the page-table work of a write without writing, so the chunk's contents are not
//! touched and its owner may start writing at any time). Where the advice is unsupported, or the
//! helper cannot be started, chunks are simply faulted by their first write as before. The
//! helper holds each chunk's `Arc` while it works on it, so a chunk is never freed under it.

use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex, OnceLock};

use crate::util::lock;

/// Memory the helper may populate: an allocation that stays put while its `Arc` lives.
pub(crate) trait Region: Send + Sync {
    /// The region's address and length in bytes.
    fn memory(&self) -> (*const u8, usize);
}

/// Where chunks go to be populated: the helper thread's queue (`None`: it could not start).
type Queue = Option<Mutex<Sender<Arc<dyn Region>>>>;

static HELPER: OnceLock<Queue> = OnceLock::new();

/// Hands `chunk` to the pre-fault thread (best effort).
pub(crate) fn submit(chunk: Arc<dyn Region>) {
    let helper = HELPER.get_or_init(|| {
        let (tx, rx) = channel::<Arc<dyn Region>>();
        std::thread::Builder::new()
            .name("threadlab-prefault".into())
            .spawn(move || {
                for chunk in rx {
                    populate(&*chunk);
                }
            })
            .ok()
            .map(|_| Mutex::new(tx))
    });
    if let Some(tx) = helper {
        let _ = lock(tx).send(chunk);
    }
}

fn populate(chunk: &dyn Region) {
    let (ptr, len) = chunk.memory();
    // The whole pages inside the chunk (madvise wants a page-aligned start).
    let page = 4096;
    let start = (ptr as usize).next_multiple_of(page);
    let end = (ptr as usize + len) / page * page;
    // Elsewhere the chunk is faulted in by its first writes, as without the helper.
    #[cfg(not(target_os = "linux"))]
    let _ = (start, end);
    #[cfg(target_os = "linux")]
    if end > start {
        // SAFETY: the range lies inside the chunk's allocation, which `chunk` keeps alive;
        // MADV_POPULATE_WRITE only populates page tables and changes no byte of the range.
        unsafe {
            libc::madvise(
                start as *mut libc::c_void,
                end - start,
                libc::MADV_POPULATE_WRITE,
            );
        }
    }
}
