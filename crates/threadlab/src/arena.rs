//! A bump arena for the jobs a scope's body spawns: no `malloc` per task, and the jobs lie in
//! memory in the order they were spawned.
//!
//! Why: a scope whose body spawns a million tasks spawns them all before most of them run, so
//! with one heap box per job (as rayon-core does) every job is a separate `malloc`, glibc's
//! per-thread cache cannot help (nothing is freed meanwhile), thieves free boxes another thread
//! allocated, and each job's memory is a cache miss when it finally runs (`perf annotate` on the
//! 2-worker empty-spawn benchmark: 76% of the job's run time on its first load, malloc and free
//! another 40% of the whole run). In the arena, jobs are packed back to back, so the owner (who
//! runs the newest first) and the thieves (who take the oldest first) both walk memory in a
//! straight line that the hardware prefetcher follows.
//!
//! # How
//!
//! Memory comes in [`CHUNK`]-byte chunks aligned to their size, so a job finds its chunk by
//! masking its own address. Only the scope's owner allocates (the body's spawns on its own worker,
//! the case `Scope::count_spawn` already singles out); it bumps a pointer through the current
//! chunk and counts the jobs it placed there without atomics. Each chunk's `live` count starts at
//! a bias ([`BIAS`]); a job that starts running subtracts 1 (it has moved its closure out, so its
//! memory is no longer needed), and when the owner moves on to a new chunk it *seals* the old one
//! by subtracting `BIAS - placed`. Whoever brings `live` to zero puts the chunk on the arena's
//! free list, where the owner picks it up again: memory stays bounded by the jobs not yet started
//! (rounded up to chunks), not by the scope's total. The same biased-count idea as the scope's
//! own `CountLatch`. All chunks are freed when the scope ends, after every job ran.
//!
//! Jobs larger than [`MAX_JOB`] bytes or aligned to more than a cache line go to the heap as
//! before.

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::cell::{Cell, RefCell};
use std::ptr::NonNull;

use crate::loom::sync::atomic::{AtomicUsize, Ordering};
use crate::loom::sync::Mutex;

/// Bytes per chunk (and their alignment).
pub(crate) const CHUNK: usize = 64 << 10;
/// The largest job placed in the arena.
pub(crate) const MAX_JOB: usize = 1 << 10;
/// Where a chunk's `live` count starts: more than any chunk can hold.
const BIAS: usize = usize::MAX / 2;
/// The header at the start of each chunk, on a line of its own.
const HEADER: usize = 64;

#[repr(C, align(64))]
struct ChunkHeader {
    /// `BIAS` minus the jobs that started, minus `BIAS - placed` once sealed.
    live: AtomicUsize,
    /// The arena, to put the chunk on its free list.
    arena: *const JobArena,
}

/// A scope's job arena. Owner-only state is in `Cell`s (see `Scope`'s `Sync` argument); the
/// free list is shared.
pub(crate) struct JobArena {
    /// The chunk being filled, its next free byte and how many jobs it holds.
    chunk: Cell<*mut ChunkHeader>,
    next: Cell<usize>,
    placed: Cell<usize>,
    /// Every chunk allocated, for the final free.
    all: RefCell<Vec<*mut ChunkHeader>>,
    /// Chunks whose jobs all started; the owner reuses them.
    free: Mutex<Vec<*mut ChunkHeader>>,
}

fn chunk_layout() -> Layout {
    Layout::from_size_align(CHUNK, CHUNK).expect("arena: chunk layout")
}

impl JobArena {
    pub(crate) fn new() -> JobArena {
        JobArena {
            chunk: Cell::new(std::ptr::null_mut()),
            next: Cell::new(CHUNK),
            placed: Cell::new(0),
            all: RefCell::new(Vec::new()),
            free: Mutex::new(Vec::new()),
        }
    }

    /// Moves `value` into the arena, or gives it back if it does not fit the arena's rules.
    /// Only the owner calls this, and the arena must not move while it holds chunks.
    #[inline]
    pub(crate) fn place<T>(&self, value: T) -> Result<NonNull<T>, T> {
        let (size, align) = (std::mem::size_of::<T>(), std::mem::align_of::<T>());
        if size > MAX_JOB || align > HEADER || size == 0 {
            return Err(value);
        }
        let mut at = self.next.get().next_multiple_of(align);
        if at + size > CHUNK {
            self.start_chunk();
            at = HEADER.next_multiple_of(align);
        }
        self.next.set(at + size);
        self.placed.set(self.placed.get() + 1);
        // SAFETY: `chunk` is a live CHUNK-byte allocation (start_chunk ran at least once, since
        // `next` starts at CHUNK), `at + size <= CHUNK` and `at` is a multiple of `align`, and
        // the bytes `[at, at + size)` were handed out to nobody else since the chunk was (re)used.
        unsafe {
            let p = (self.chunk.get() as *mut u8).add(at) as *mut T;
            p.write(value);
            Ok(NonNull::new_unchecked(p))
        }
    }

    /// Seals the current chunk and starts a fresh (or recycled) one.
    #[cold]
    #[inline(never)]
    fn start_chunk(&self) {
        let old = self.chunk.get();
        if !old.is_null() {
            // SAFETY: `old` is a live chunk of this arena; sealing may recycle it at once.
            unsafe { release(old, BIAS - self.placed.get()) };
        }
        let reused = lock(&self.free).pop();
        let chunk = reused.unwrap_or_else(|| {
            // SAFETY: the layout has a non-zero size.
            let p = unsafe { alloc(chunk_layout()) } as *mut ChunkHeader;
            if p.is_null() {
                handle_alloc_error(chunk_layout());
            }
            self.all.borrow_mut().push(p);
            p
        });
        // SAFETY: `chunk` is a chunk-sized allocation of this arena, free of jobs (new, or off the
        // free list, where a chunk goes only after its last job started). The write publishes
        // nothing yet: jobs placed here reach other threads through the deque's Release push.
        unsafe {
            chunk.write(ChunkHeader {
                live: AtomicUsize::new(BIAS),
                arena: self,
            })
        };
        self.chunk.set(chunk);
        self.next.set(HEADER);
        self.placed.set(0);
    }

    /// Frees every chunk. Call it only when every job placed in the arena has started (the scope
    /// waited for all of them).
    pub(crate) fn free_all(&self) {
        for chunk in self.all.borrow_mut().drain(..) {
            // SAFETY: allocated by `start_chunk` with this layout, freed once (drained).
            unsafe { dealloc(chunk as *mut u8, chunk_layout()) };
        }
        lock(&self.free).clear();
        self.chunk.set(std::ptr::null_mut());
        self.next.set(CHUNK);
    }
}

/// A job placed by [`JobArena::place`] has moved its closure out: its memory may be reused.
///
/// # Safety
/// `job` must point into a live chunk of an arena that outlives the call (the scope waits for
/// every job), and each placed job calls this exactly once.
#[inline]
pub(crate) unsafe fn job_started(job: *const u8) {
    let chunk = (job as usize & !(CHUNK - 1)) as *mut ChunkHeader;
    // SAFETY: forwarded; chunks are CHUNK-aligned and jobs lie inside them, past the header.
    unsafe { release(chunk, 1) };
}

/// Subtracts `n` from `chunk`'s live count; the one that reaches zero recycles it.
///
/// # Safety
/// `chunk` is a live chunk whose arena outlives the call.
unsafe fn release(chunk: *mut ChunkHeader, n: usize) {
    // SAFETY: forwarded from the caller.
    let header = unsafe { &*chunk };
    // AcqRel: each job's reads of its own memory (Release) happen before the recycler's reuse,
    // which Acquires here and hands the chunk over through the free list's mutex.
    if header.live.fetch_sub(n, Ordering::AcqRel) == n {
        // SAFETY: the arena outlives every job (forwarded).
        let arena = unsafe { &*header.arena };
        lock(&arena.free).push(chunk);
    }
}

fn lock<T>(m: &Mutex<T>) -> crate::loom::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Drop for JobArena {
    fn drop(&mut self) {
        self.free_all();
    }
}
