//! The `alloc` experiment's allocators and their workload: a size-class allocator behind one
//! lock (the allocator-contention article's persistent allocator), the same with per-thread caches that visit the
//! shared lists only in batches (as tcmalloc's thread caches do), and the system allocator; and
//! tasks that allocate and free many small objects with a little work on each, checking that no
//! block is handed out twice.

use std::alloc::Layout;
use std::time::Instant;
use threadlab::sync::Mutex;
use threadlab::{CachePadded, Pool};

/// The object sizes (bytes); each allocation picks one.
pub const CLASSES: [usize; 5] = [16, 32, 64, 128, 256];
/// Slabs the size-class allocator carves its blocks from.
const SLAB: usize = 64 << 10;
/// Blocks a thread cache moves to or from the shared lists at once.
const BATCH: usize = 32;
/// Objects a task keeps alive at a time (each allocation frees the one made `LIVE` before).
pub const LIVE: usize = 64;
/// Rounds of arithmetic on each new object: the "work" between allocations.
pub const WORK: usize = 16;

/// A size-class allocator on its own (no synchronisation): one free list per class, threaded
/// through the free blocks themselves; an empty list is refilled by carving a 64 KiB slab
/// from the system allocator. Slabs go back when it is dropped.
pub struct FreeLists {
    heads: [*mut u8; CLASSES.len()],
    slabs: Vec<*mut u8>,
}

// SAFETY: the pointers are blocks and slabs this structure owns; moving it moves them.
unsafe impl Send for FreeLists {}

fn slab_layout() -> Layout {
    Layout::from_size_align(SLAB, 4096).expect("slab layout")
}

impl FreeLists {
    fn new() -> Self {
        FreeLists {
            heads: [std::ptr::null_mut(); CLASSES.len()],
            slabs: Vec::new(),
        }
    }

    fn alloc(&mut self, class: usize) -> *mut u8 {
        if self.heads[class].is_null() {
            self.refill(class);
        }
        let p = self.heads[class];
        // SAFETY: `p` is a free block of this class; its first word holds the next free block.
        self.heads[class] = unsafe { p.cast::<*mut u8>().read() };
        p
    }

    /// # Safety
    /// `p` must be a block of class `class` from this allocator (directly or through a thread
    /// cache that drew from it) that nobody uses any more.
    unsafe fn free(&mut self, class: usize, p: *mut u8) {
        // SAFETY: the block is ours and unused (the caller's contract), at least 16 bytes and
        // 16-aligned, so its first word can hold the link.
        unsafe { p.cast::<*mut u8>().write(self.heads[class]) };
        self.heads[class] = p;
    }

    #[cold]
    fn refill(&mut self, class: usize) {
        // SAFETY: the layout has a non-zero size.
        let slab = unsafe { std::alloc::alloc(slab_layout()) };
        if slab.is_null() {
            std::alloc::handle_alloc_error(slab_layout());
        }
        self.slabs.push(slab);
        for offset in (0..SLAB).step_by(CLASSES[class]).rev() {
            // SAFETY: each block lies inside the fresh slab, which nobody else knows of.
            unsafe { self.free(class, slab.add(offset)) };
        }
    }
}

impl Drop for FreeLists {
    fn drop(&mut self) {
        for &slab in &self.slabs {
            // SAFETY: allocated in `refill` with this layout, freed once.
            unsafe { std::alloc::dealloc(slab, slab_layout()) };
        }
    }
}

/// What a task allocates through.
trait Handle {
    fn alloc(&mut self, class: usize) -> *mut u8;
    /// # Safety
    /// `p` came from `alloc(class)` of this handle (or another handle of the same heap) and is
    /// not used any more.
    unsafe fn free(&mut self, class: usize, p: *mut u8);
}

/// One worker's thread cache: free blocks of each class, kept privately.
#[derive(Default)]
pub struct ThreadCache(std::cell::UnsafeCell<[Vec<*mut u8>; CLASSES.len()]>);

// SAFETY: slot `k` is only touched by worker `k`, by the one task it is running (`churn` never
// lets the worker run anything else meanwhile), so no two threads use a slot at once; the slots
// are dropped after every task finished (`run` waits for its scope).
unsafe impl Sync for ThreadCache {}

/// A heap shared by the tasks of one run.
pub enum Heap {
    /// (a) One allocator behind one lock.
    Locked(Mutex<FreeLists>),
    /// (b) Shared lists behind a lock, visited in batches by one cache per worker thread.
    Caching {
        central: Mutex<FreeLists>,
        caches: Vec<CachePadded<ThreadCache>>,
    },
    /// (c) The process's global allocator.
    System,
}

impl Heap {
    pub fn new(variant: &str, workers: usize) -> Heap {
        match variant {
            "locked" => Heap::Locked(Mutex::named("allocator", FreeLists::new())),
            "thread-cache" => Heap::Caching {
                central: Mutex::named("central-free-lists", FreeLists::new()),
                caches: (0..workers).map(|_| CachePadded::default()).collect(),
            },
            _ => Heap::System,
        }
    }

    /// A handle for one task, on the worker running it.
    fn handle(&self) -> Box<dyn Handle + '_> {
        match self {
            Heap::Locked(m) => Box::new(LockedHandle(m)),
            Heap::Caching { central, caches } => {
                let k = threadlab::current_thread_index()
                    .expect("Heap::handle: tasks run on the pool's workers")
                    % caches.len();
                // SAFETY: see `ThreadCache`: only this worker, in this task, uses slot `k` until
                // the handle is dropped at the end of the task.
                let lists = unsafe { &mut *caches[k].0.get() };
                Box::new(CacheHandle { central, lists })
            }
            Heap::System => Box::new(SystemHandle),
        }
    }
}

struct LockedHandle<'a>(&'a Mutex<FreeLists>);

impl Handle for LockedHandle<'_> {
    fn alloc(&mut self, class: usize) -> *mut u8 {
        self.0.lock().alloc(class)
    }
    unsafe fn free(&mut self, class: usize, p: *mut u8) {
        // SAFETY: forwarded contract; the heap's lists are the block's origin.
        unsafe { self.0.lock().free(class, p) }
    }
}

/// A worker's cache in use: allocations and frees stay in the worker's own lists; the shared
/// lists are visited `BATCH` blocks at a time, to refill an empty list or to return half of a
/// full one (tcmalloc's thread caches work this way).
struct CacheHandle<'a> {
    central: &'a Mutex<FreeLists>,
    lists: &'a mut [Vec<*mut u8>; CLASSES.len()],
}

impl Handle for CacheHandle<'_> {
    fn alloc(&mut self, class: usize) -> *mut u8 {
        if self.lists[class].is_empty() {
            let mut central = self.central.lock();
            for _ in 0..BATCH {
                let p = central.alloc(class);
                self.lists[class].push(p);
            }
        }
        self.lists[class].pop().unwrap_or(std::ptr::null_mut())
    }

    unsafe fn free(&mut self, class: usize, p: *mut u8) {
        self.lists[class].push(p);
        if self.lists[class].len() >= 2 * BATCH {
            let mut central = self.central.lock();
            for p in self.lists[class].drain(..BATCH) {
                // SAFETY: every block in a cache came from the shared lists and is free.
                unsafe { central.free(class, p) };
            }
        }
    }
}

struct SystemHandle;

fn class_layout(class: usize) -> Layout {
    Layout::from_size_align(CLASSES[class], 16).expect("class layout")
}

impl Handle for SystemHandle {
    fn alloc(&mut self, class: usize) -> *mut u8 {
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { std::alloc::alloc(class_layout(class)) };
        if p.is_null() {
            std::alloc::handle_alloc_error(class_layout(class));
        }
        p
    }
    unsafe fn free(&mut self, class: usize, p: *mut u8) {
        // SAFETY: allocated by `alloc` with the same layout (the caller's contract).
        unsafe { std::alloc::dealloc(p, class_layout(class)) };
    }
}

/// One task's work: `ops` allocations, each freeing the object made `LIVE` allocations earlier,
/// with a little arithmetic on every new object. Returns how many freed objects did not hold
/// what was written into them (0 unless the allocator handed one block out twice).
fn churn(heap: &Heap, ops: usize, seed: u64) -> usize {
    let mut h = heap.handle();
    let mut live = [(std::ptr::null_mut::<u8>(), 0usize, 0u64); LIVE];
    let mut next = super::xorshift(seed);
    let mut acc = 0u64;
    let mut corrupt = 0;
    let mut release = |h: &mut Box<dyn Handle + '_>, (p, class, stamp): (*mut u8, usize, u64)| {
        // SAFETY: `p` is a live block of at least 16 bytes, aligned to 16, that we wrote.
        let seen = unsafe { p.cast::<u64>().read() };
        corrupt += usize::from(seen != stamp);
        let _z = threadlab::zone!("free");
        // SAFETY: the block came from this heap and is dropped from `live` right after.
        unsafe { h.free(class, p) };
    };
    for i in 0..ops {
        let slot = i % LIVE;
        if !live[slot].0.is_null() {
            release(&mut h, live[slot]);
        }
        let x = next();
        let class = (x % CLASSES.len() as u64) as usize;
        let p = {
            let _z = threadlab::zone!("alloc");
            h.alloc(class)
        };
        // SAFETY: a fresh block of at least 16 bytes, aligned to 16.
        unsafe { p.cast::<u64>().write(x) };
        for _ in 0..WORK {
            acc = acc.wrapping_mul(0x5851_F42D_4C95_7F2D).wrapping_add(x);
        }
        live[slot] = (p, class, x);
    }
    for entry in live.into_iter().filter(|e| !e.0.is_null()) {
        release(&mut h, entry);
    }
    std::hint::black_box(acc);
    corrupt
}

/// Runs `ops` allocations in all, in `4 × workers` tasks on `pool`; seconds taken.
pub fn run(pool: &Pool, heap: &Heap, ops: usize) -> Result<f64, String> {
    let tasks = 4 * pool.current_num_threads();
    let per_task = ops / tasks;
    let corrupt = std::sync::atomic::AtomicUsize::new(0);
    let start = Instant::now();
    pool.scope(|s| {
        for t in 0..tasks {
            let corrupt = &corrupt;
            s.spawn(move |_| {
                let c = churn(heap, per_task, 0x9E37_79B9_7F4A_7C15 ^ t as u64);
                // Relaxed: read after the scope returned.
                corrupt.fetch_add(c, std::sync::atomic::Ordering::Relaxed);
            });
        }
    });
    let secs = start.elapsed().as_secs_f64();
    match corrupt.into_inner() {
        0 => Ok(secs),
        n => Err(format!(
            "{n} objects were overwritten: an allocator gave a block out twice"
        )),
    }
}
