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
//! by subtracting `BIAS - placed`. Whoever brings `live` to zero pushes the chunk on the arena's
//! returned list, where the owner picks it up again: memory stays bounded by the jobs not yet
//! started (rounded up to chunks), not by the scope's total. The same biased-count idea as the
//! scope's own `CountLatch`.
//!
//! # Chunks outlive scopes
//!
//! The chunks come from, and go back to, the owner worker's [`ChunkCache`], not the allocator: a
//! 64 KiB chunk aligned to 64 KiB is served by glibc with `mmap` and freed with `munmap` (a TLB
//! shoot-down on every CPU), which, once per scope, made nested scopes (skynet: a scope per call,
//! a million calls) spend nearly all their time in the kernel. With the cache, a scope in steady
//! state makes no system call and no `malloc`: the cache keeps up to [`CACHED`] chunks per worker
//! (enough for that many nested scopes on one worker's stack) and frees the rest; the worker frees
//! its cache when it exits. The same idea as a per-thread slab cache (Bonwick, "The Slab
//! Allocator", USENIX 1994; Bonwick and Adams, "Magazines and Vmem", USENIX 2001).
//!
//! Both lists are intrusive (a link in the chunk's header), so neither allocates: the cache is
//! owner-only; the arena's returned list is a stack that any thread pushes onto with a
//! compare-and-swap and only the owner empties, in one swap, so no ABA can occur (a node is never
//! popped by anybody but the owner, who takes them all at once).
//!
//! Jobs larger than [`MAX_JOB`] bytes or aligned to more than a cache line go to the heap as
//! before.

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::cell::Cell;
use std::ptr::{null_mut, NonNull};

use crate::loom::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// Bytes per chunk (and their alignment).
pub(crate) const CHUNK: usize = 64 << 10;
/// The largest job placed in the arena.
pub(crate) const MAX_JOB: usize = 1 << 10;
/// Where a chunk's `live` count starts: more than any chunk can hold.
const BIAS: usize = usize::MAX / 2;
/// The header at the start of each chunk, on a line of its own.
const HEADER: usize = 64;
/// Free chunks a worker keeps for its next scopes (4 MiB of address space at most; pages are
/// touched only as far as jobs were placed).
pub(crate) const CACHED: usize = 64;

#[repr(C, align(64))]
struct ChunkHeader {
    /// `BIAS` minus the jobs that started, minus `BIAS - placed` once sealed.
    live: AtomicUsize,
    /// The arena, to put the chunk on its returned list.
    arena: *const JobArena,
    /// The next chunk on whichever list holds this free chunk (the worker's cache or the arena's
    /// returned list); meaningless while the chunk holds jobs.
    link: *mut ChunkHeader,
}

fn chunk_layout() -> Layout {
    Layout::from_size_align(CHUNK, CHUNK).expect("arena: chunk layout")
}

/// A worker's free chunks, reused by every scope whose body runs on that worker. Owner-only
/// (a field of the worker's state, on its own thread); frees its chunks when dropped.
pub(crate) struct ChunkCache {
    head: Cell<*mut ChunkHeader>,
    len: Cell<usize>,
}

impl ChunkCache {
    pub(crate) const fn new() -> ChunkCache {
        ChunkCache {
            head: Cell::new(null_mut()),
            len: Cell::new(0),
        }
    }

    /// How many free chunks the cache holds (for tests and metrics).
    #[allow(dead_code)]
    pub(crate) fn len(&self) -> usize {
        self.len.get()
    }

    /// A free chunk: from the cache, else from the allocator.
    fn take(&self) -> *mut ChunkHeader {
        let head = self.head.get();
        if head.is_null() {
            // SAFETY: the layout has a non-zero size.
            let p = unsafe { alloc(chunk_layout()) } as *mut ChunkHeader;
            if p.is_null() {
                handle_alloc_error(chunk_layout());
            }
            return p;
        }
        // SAFETY: chunks on the cache are live, free, and owned by it; their `link` was written
        // by `put` on this thread.
        self.head.set(unsafe { (*head).link });
        self.len.set(self.len.get() - 1);
        head
    }

    /// Takes back a chunk that holds no job that has yet to start; frees it if the cache is
    /// full.
    ///
    /// # Safety
    /// `chunk` came from [`ChunkCache::take`] (of any worker), and no job in it can still start.
    unsafe fn put(&self, chunk: *mut ChunkHeader) {
        if self.len.get() >= CACHED {
            // SAFETY: allocated with this layout by `take`; nobody uses it any more (caller).
            unsafe { dealloc(chunk as *mut u8, chunk_layout()) };
            return;
        }
        // SAFETY: the chunk is free and ours (caller); the header's `link` field is ours to
        // write. `addr_of_mut!`: the other header fields may be stale, no reference is formed.
        unsafe { std::ptr::addr_of_mut!((*chunk).link).write(self.head.get()) };
        self.head.set(chunk);
        self.len.set(self.len.get() + 1);
    }
}

impl Drop for ChunkCache {
    fn drop(&mut self) {
        let mut p = self.head.replace(null_mut());
        while !p.is_null() {
            // SAFETY: a cached chunk: live, free, allocated with this layout, on the list once.
            let next = unsafe { (*p).link };
            // SAFETY: as above; freed once, we move past it first.
            unsafe { dealloc(p as *mut u8, chunk_layout()) };
            p = next;
        }
        self.len.set(0);
    }
}

/// A scope's job arena. Owner-only state is in `Cell`s (see `Scope`'s `Sync` argument); the
/// returned list is shared.
pub(crate) struct JobArena {
    /// The owner worker's cache, where chunks come from and go back to.
    cache: *const ChunkCache,
    /// The chunk being filled, its next free byte and how many jobs it holds.
    chunk: Cell<*mut ChunkHeader>,
    next: Cell<usize>,
    placed: Cell<usize>,
    /// Sealed chunks whose jobs all started, pushed by whoever started the last one.
    returned: AtomicPtr<ChunkHeader>,
}

impl JobArena {
    /// An arena whose chunks come from `cache`, which must outlive it (the worker's own cache,
    /// for a scope on the worker's stack) and belong to the thread that places jobs.
    pub(crate) fn new(cache: &ChunkCache) -> JobArena {
        JobArena {
            cache,
            chunk: Cell::new(null_mut()),
            next: Cell::new(CHUNK),
            placed: Cell::new(0),
            returned: AtomicPtr::new(null_mut()),
        }
    }

    /// An arena nobody places jobs in: a scope whose body runs off the pool's workers (an
    /// `in_place_scope` from a plain thread) has no worker cache, and no owner spawns.
    pub(crate) fn unused() -> JobArena {
        JobArena {
            cache: std::ptr::null(),
            chunk: Cell::new(null_mut()),
            next: Cell::new(CHUNK),
            placed: Cell::new(0),
            returned: AtomicPtr::new(null_mut()),
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
        debug_assert!(
            !self.cache.is_null(),
            "JobArena::start_chunk: a job placed in an unused arena"
        );
        let old = self.chunk.get();
        if !old.is_null() {
            // SAFETY: `old` is a live chunk of this arena; sealing may return it at once.
            unsafe { release(old, BIAS - self.placed.get()) };
        }
        self.reclaim_returned();
        // SAFETY: the cache outlives the arena and belongs to this (the owner's) thread (`new`).
        let chunk = unsafe { &*self.cache }.take();
        // SAFETY: `chunk` is a chunk-sized allocation free of jobs (new, or from the cache, where
        // a chunk goes only after its last job started). The write publishes nothing yet: jobs
        // placed here reach other threads through the deque's Release push.
        unsafe {
            chunk.write(ChunkHeader {
                live: AtomicUsize::new(BIAS),
                arena: self,
                link: null_mut(),
            })
        };
        self.chunk.set(chunk);
        self.next.set(HEADER);
        self.placed.set(0);
    }

    /// Moves the chunks on the returned list to the worker's cache.
    fn reclaim_returned(&self) {
        // Acquire: pairs with the Release compare-and-swap in `release`, so the pusher's `link`
        // write (and, through its AcqRel `live` update, every job's last read of the chunk) is
        // visible before the chunk is reused.
        let mut p = self.returned.swap(null_mut(), Ordering::Acquire);
        while !p.is_null() {
            // SAFETY: a returned chunk is free (its last job started) and now ours alone.
            let next = unsafe { (*p).link };
            // SAFETY: as above; the cache belongs to this thread (`new`).
            unsafe { (*self.cache).put(p) };
            p = next;
        }
    }

    /// Gives every chunk back to the worker's cache. Call it only on the owner's thread, when
    /// every job placed in the arena has started (the scope waited for all of them).
    pub(crate) fn free_all(&self) {
        self.reclaim_returned();
        let current = self.chunk.replace(null_mut());
        if !current.is_null() {
            // SAFETY: every job of the current chunk started (caller), so it is free; the cache
            // belongs to this thread.
            unsafe { (*self.cache).put(current) };
        }
        self.next.set(CHUNK);
        self.placed.set(0);
    }
}

/// A job placed by [`JobArena::place`] has moved its closure out: its memory may be reused.
///
/// # Safety
/// `job` must point into a live chunk of an arena that outlives the call (the scope waits for
/// every job), and each placed job calls this exactly once.
#[inline]
pub(crate) unsafe fn job_started(job: *const u8) {
    // The job's pointer moved back to the chunk's start (its address rounded down to CHUNK): it
    // keeps the chunk's provenance, which Miri then checks, where a round trip through an
    // integer would not.
    let chunk = job
        .wrapping_byte_sub(job as usize & (CHUNK - 1))
        .cast_mut()
        .cast::<ChunkHeader>();
    // SAFETY: forwarded; chunks are CHUNK-aligned and jobs lie inside them, past the header.
    unsafe { release(chunk, 1) };
}

/// Subtracts `n` from `chunk`'s live count; the one that reaches zero returns it to its arena.
///
/// # Safety
/// `chunk` is a live chunk whose arena outlives the call.
unsafe fn release(chunk: *mut ChunkHeader, n: usize) {
    // SAFETY: forwarded from the caller.
    let header = unsafe { &*chunk };
    // AcqRel: each job's reads of its own memory (Release) happen before the one that reaches
    // zero (Acquire), which passes them on to the owner through the returned list's Release.
    if header.live.fetch_sub(n, Ordering::AcqRel) != n {
        return;
    }
    // SAFETY: the arena outlives every job (forwarded).
    let arena = unsafe { &*header.arena };
    // Relaxed: only a snapshot to link to; the compare-and-swap below validates it.
    let mut head = arena.returned.load(Ordering::Relaxed);
    loop {
        // SAFETY: the chunk is free (live reached zero) and only we hold it until it is pushed.
        unsafe { std::ptr::addr_of_mut!((*chunk).link).write(head) };
        // Release: publishes the `link` write and the jobs' last reads to the owner's Acquire
        // swap in `reclaim_returned`. Relaxed on failure: we retry with the fresher head.
        match arena.returned.compare_exchange_weak(
            head,
            chunk,
            Ordering::Release,
            Ordering::Relaxed,
        ) {
            Ok(_) => return,
            Err(now) => head = now,
        }
    }
}

impl Drop for JobArena {
    fn drop(&mut self) {
        self.free_all();
    }
}
