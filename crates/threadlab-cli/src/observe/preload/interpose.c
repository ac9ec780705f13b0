/* threadlab's interposer: loaded with LD_PRELOAD by `threadlab run`, it counts every pthread
 * mutex and rwlock acquisition of the observed program per lock, times every contended one
 * (the wait, its holder, its call site), samples hold times, and records thread births and
 * deaths - from inside the process, without stopping it (the approach of mutrace by Lennart
 * Poettering and of heaptrack: wrap the library calls, find the real ones with
 * dlsym(RTLD_NEXT)). docs/observer.md states what it promises and what it does to a process.
 *
 * Where the records go. Each process image maps one file, DIR/PID-START.tl (DIR is
 * THREADLAB_INTERPOSE_DIR, START the monotonic time of its start, so an exec'd image and a
 * process in another PID namespace that has the same pid get files of their own), MAP_SHARED,
 * and closes the descriptor at once: the interposer owns no file descriptor while the program
 * runs, so `echo >&3`, `exec 3>f`, closefrom(3) and a RLIMIT_NOFILE of 16 behave as they do
 * unobserved. Whatever is written into the mapping is in the file even if the process is then
 * killed. The file holds:
 * - a header (pid, parent, PID namespace, executable, counters of what was dropped);
 * - a table of locks, exact aggregates per lock: acquisitions, contended waits, wait total and
 *   maximum and a log-scale histogram, sampled holds (total, maximum, histogram), the waits per
 *   call site and per holder (the thread that held the lock while others waited);
 * - individual events (births, deaths, waits) up to a budget of waits shared by the whole run
 *   (the `budget` file of DIR, mapped the same way): past it, waits are only counted (the
 *   aggregates stay exact) and the header says how many were dropped.
 * A new page of the file is touched only after statvfs(2) says the file system has room (a
 * full one would kill the program with SIGBUS through the mapping): else the record is dropped
 * and counted.
 *
 * Hot path (an uncontended lock/unlock pair): each thread counts its acquisitions in a small
 * direct-mapped cache of its own (lock address -> count, non-atomic, as Tokio's per-worker
 * Stats), flushed into the table when an entry is evicted, every 50 ms, at the thread's end and
 * at the process's exit, _exit, abort and exec. A lock is a cache probe, a counter decrement
 * (hold sampling: one acquisition in HOLD_EVERY on average has its hold timed) and the real
 * call; an unlock compares the lock with the one whose hold is being timed. In a process with
 * one thread a process-private default mutex goes straight to the real lock (glibc skips its
 * atomic instructions there, and nobody can wait); otherwise the real trylock comes first, and
 * only when it answers EBUSY is the wait timed and the real lock called. Every other answer of
 * the trylock (EOWNERDEAD of a robust mutex whose owner died, ENOTRECOVERABLE, EAGAIN, EINVAL)
 * is the program's answer, returned as it is: the trylock takes a lock only when the lock call
 * would have taken it at once, with the same result.
 *
 * The per-thread caches live in private memory marked MADV_WIPEONFORK, and so does the state of
 * the process: a child made by fork, _Fork or clone (no fork handlers run for the last two)
 * finds them zeroed, notices on its first slow path, and starts files of its own, forgetting
 * the parent's records. A vfork child shares its parent's memory and is left alone.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/futex.h>
#endif
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 32)
#include <sys/single_threaded.h>
/* glibc's own flag: true until the process starts its second thread; glibc's default mutexes
 * then skip their atomic instructions, and nobody else can take a process-private lock. */
#define SINGLE_THREADED() (__libc_single_threaded)
#else
#define SINGLE_THREADED() 0
#endif

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define RELAXED __ATOMIC_RELAXED
#define TLS __thread __attribute__((tls_model("initial-exec")))

/* ---- The file's layout: mirrored by observe/interpose.rs (checked by its tests) ---- */

#define MAGIC 0x3253504e49544c54ull /* "TLTINPS2" */
#define VERSION 1
#define HEADER_SIZE 4096
#define LOCKS 1024        /* lock table slots */
#define EVENTS (1u << 20) /* per-image cap on events (the run's budget usually ends first) */
#define HB 160            /* histogram buckets: 4 per power of two of ns, up to ~18 minutes */
#define SITES 8
#define HOLDERS 4
#define HOLD_EVERY 1024   /* mean interval between sampled holds, acquisitions (a sample costs
                           * two clock reads, ~57 ns each on the development VM) */
#define FLUSH_NS 50000000ull
#define ROOM 4194304ull   /* free bytes a file system must keep before a new page is written */

/* Kind 5 (a hold) is not written: holds are sampled into the lock table only. */
enum { K_BIRTH = 2, K_DEATH = 3, K_WAIT = 4, K_EXIT = 6 };
enum { W_MUTEX = 0, W_RWLOCK = 1, W_COND = 2, W_SEM = 3 };
enum { F_EXITED = 1, F_EXEC = 2, F_UNDERSCORE_EXIT = 4, F_ABORT = 8, F_FULL = 16 };

/* One event, 48 bytes. `kind` is stored last (release): a record with kind 0 was never
 * finished (its process was killed while writing it) and is skipped. */
struct rec {
    uint32_t kind, tid;
    uint64_t t0, t1;
    uint64_t obj;    /* lock address; BIRTH: the parent tid; DEATH: name bytes 0-7 */
    uint64_t holder; /* WAIT: holder tid | wait kind << 32; BIRTH: start routine; DEATH: name 8-15 */
    uint64_t site;   /* WAIT, HOLD: call site */
};

/* Waits by key: a call site, or the holder's thread id. */
struct keyed_stat { uint64_t key, waits, wait_ns; };

/* One lock's aggregates (exact but for the sampled holds). 1,680 bytes. */
struct lock_stat {
    uint64_t addr;       /* 0: free slot; installed by compare-and-swap */
    uint64_t kind;       /* W_* of the first use */
    uint64_t first_site; /* call site of the first acquisition flushed (names heap locks) */
    uint64_t acquisitions, contended, wait_ns, wait_max;
    uint64_t hold_samples, hold_ns, hold_max;
    uint64_t other_sites_waits, other_sites_ns, other_holders_waits, other_holders_ns;
    struct keyed_stat sites[SITES];
    struct keyed_stat holders[HOLDERS];
    uint32_t wait_hist[HB], hold_hist[HB];
};

struct header {
    uint64_t magic;
    uint32_t version, header_size;
    uint32_t lock_size, locks;
    uint32_t rec_size, events;
    uint32_t hb, hold_every;
    uint32_t pid, ppid;
    uint64_t pidns;         /* inode of /proc/self/ns/pid */
    uint64_t start_ns, end_ns;
    uint64_t flags;         /* F_* */
    uint64_t ev_next;       /* events claimed (may pass `events`: the excess were dropped) */
    uint64_t ev_dropped;    /* waits and holds past the run's budget or for want of room */
    uint64_t locks_dropped; /* acquisitions of locks that found no slot (counted in `other`) */
    uint64_t births, deaths;
    uint64_t direct_threads; /* threads with no private cache (counted straight into the table) */
    char exe[256];          /* readlink /proc/self/exe */
    struct lock_stat other; /* every lock that found no slot */
};

#define LOCKS_OFF HEADER_SIZE
#define EVENTS_OFF (LOCKS_OFF + (uint64_t)LOCKS * sizeof(struct lock_stat))
#define FILE_SIZE (EVENTS_OFF + (uint64_t)EVENTS * sizeof(struct rec))

_Static_assert(sizeof(struct rec) == 48, "record layout");
_Static_assert(sizeof(struct lock_stat) == 1680, "lock layout");
_Static_assert(sizeof(struct header) <= HEADER_SIZE, "header fits its page");

/* ---- Per-thread acquisition counters (private, wiped in a forked child) ---- */

#define NC 64
struct ent { uint64_t addr, n, reported, site; /* kind in site's top byte */ };
struct block {
    struct ent c[NC];
    uint32_t magic, tid;
    uint64_t last_flush;
    int lock;             /* taken to flush (by the owner at an eviction, by others at exit) */
    struct block *next, *prev;
};
#define BLOCK_MAGIC 0x7c0ffee5u
#define BLOCKS 4096

/* The state of this process image. On a page of its own marked MADV_WIPEONFORK: a forked
 * child reads zeros and starts again. */
struct proc {
    uint32_t inited, pid;
    struct header *h;
    struct lock_stat *locks;
    struct rec *ev;
    int64_t *budget;
    int list_lock;
    struct block *live, *free_list;
    uint32_t next_block;
    uint64_t next_room_check; /* event index from which the next page needs a statvfs */
};

static struct proc *P;           /* the page; wiped in a forked child */
static struct block *arena;      /* BLOCKS blocks, wiped in a forked child */
static int wipe_ok;              /* MADV_WIPEONFORK took (else fork is seen through getpid) */
static int enabled;              /* THREADLAB_INTERPOSE_DIR given and this copy is the active one */
static char dir[512];
static void *stale_map;          /* the file mapping, kept to unmap it in a forked child */
static pthread_key_t key;
static const struct block dummy; /* never matches a lock: the first acquisition misses */

/* This thread's state, one TLS block (one address computation on the hot path). */
static TLS struct {
    struct block *b;    /* its counters (the never-matching dummy until the first miss) */
    void *held;         /* the lock whose hold is being timed */
    uint32_t countdown; /* acquisitions until the next timed hold */
    uint32_t rng;
    int ended;          /* its end was recorded (later key destructors may still take locks:
                         * they are counted without a block) */
    uint64_t held_t0, held_site;
} T = {(struct block *)&dummy, NULL, 1, 0, 0, 0, 0};
#define tb T.b
#define countdown T.countdown
#define rng T.rng
#define held T.held
#define ended T.ended
#define held_t0 T.held_t0
#define held_site T.held_site

/* The marker another copy of the interposer (another threadlab build) looks up: the first copy
 * loaded stays active, later ones pass every call through. */
__attribute__((visibility("default"))) int threadlab_interpose_v2;

/* ---- The real functions ---- */

static int (*real_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static int (*real_mlock)(pthread_mutex_t *), (*real_mtry)(pthread_mutex_t *),
    (*real_munlock)(pthread_mutex_t *);
static int (*real_mtimed)(pthread_mutex_t *, const struct timespec *);
static int (*real_mclock)(pthread_mutex_t *, clockid_t, const struct timespec *);
static int (*real_rdlock)(pthread_rwlock_t *), (*real_wrlock)(pthread_rwlock_t *),
    (*real_tryrd)(pthread_rwlock_t *), (*real_trywr)(pthread_rwlock_t *),
    (*real_rwunlock)(pthread_rwlock_t *);
static int (*real_rdtimed)(pthread_rwlock_t *, const struct timespec *),
    (*real_wrtimed)(pthread_rwlock_t *, const struct timespec *);
static int (*real_rdclock)(pthread_rwlock_t *, clockid_t, const struct timespec *),
    (*real_wrclock)(pthread_rwlock_t *, clockid_t, const struct timespec *);
static int (*real_cwait)(pthread_cond_t *, pthread_mutex_t *);
static int (*real_ctimed)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
static int (*real_cclock)(pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *);
static int (*real_semwait)(sem_t *), (*real_semtry)(sem_t *);
static void (*real__exit)(int) __attribute__((noreturn));
static void (*real__Exit)(int) __attribute__((noreturn));
static void (*real_abort)(void) __attribute__((noreturn));
static int (*real_execve)(const char *, char *const[], char *const[]);
static int (*real_execv)(const char *, char *const[]);
static int (*real_execvp)(const char *, char *const[]);
static int (*real_execvpe)(const char *, char *const[], char *const[]);
static int (*real_fexecve)(int, char *const[], char *const[]);

#define LOAD(var, name) *(void **)&var = dlsym(RTLD_NEXT, name)
#define LOADV(var, name, ver) do { *(void **)&var = dlvsym(RTLD_NEXT, name, ver); if (!var) LOAD(var, name); } while (0)

/* Called by the constructor and, should another library's constructor take a lock before ours
 * ran, by the first wrapper called (ENSURE). */
static void load_all(void) {
    LOAD(real_create, "pthread_create");
    LOAD(real_mlock, "pthread_mutex_lock");
    LOAD(real_mtry, "pthread_mutex_trylock");
    LOAD(real_munlock, "pthread_mutex_unlock");
    LOAD(real_mtimed, "pthread_mutex_timedlock");
    LOAD(real_mclock, "pthread_mutex_clocklock");
    LOAD(real_rdlock, "pthread_rwlock_rdlock");
    LOAD(real_wrlock, "pthread_rwlock_wrlock");
    LOAD(real_tryrd, "pthread_rwlock_tryrdlock");
    LOAD(real_trywr, "pthread_rwlock_trywrlock");
    LOAD(real_rwunlock, "pthread_rwlock_unlock");
    LOAD(real_rdtimed, "pthread_rwlock_timedrdlock");
    LOAD(real_wrtimed, "pthread_rwlock_timedwrlock");
    LOAD(real_rdclock, "pthread_rwlock_clockrdlock");
    LOAD(real_wrclock, "pthread_rwlock_clockwrlock");
    LOADV(real_cwait, "pthread_cond_wait", "GLIBC_2.3.2");
    LOADV(real_ctimed, "pthread_cond_timedwait", "GLIBC_2.3.2");
    LOAD(real_cclock, "pthread_cond_clockwait");
    LOAD(real_semwait, "sem_wait");
    LOAD(real_semtry, "sem_trywait");
    LOAD(real__exit, "_exit");
    LOAD(real__Exit, "_Exit");
    LOAD(real_abort, "abort");
    LOAD(real_execve, "execve");
    LOAD(real_execv, "execv");
    LOAD(real_execvp, "execvp");
    LOAD(real_execvpe, "execvpe");
    LOAD(real_fexecve, "fexecve");
}

#define ENSURE(f) do { if (UNLIKELY(!(f))) load_all(); } while (0)

/* ---- Small helpers ---- */

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint32_t gettid_(void) { return (uint32_t)syscall(SYS_gettid); }

/* A thread block's flush lock. Acquire (in spin_lock and spin_try) pairs with spin_unlock's
 * release: the next taker sees the entries the last holder flushed or installed. */
static void spin_lock(int *l) {
    while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE)) {
    }
}
static int spin_try(int *l) { return !__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE); }
static void spin_unlock(int *l) { __atomic_store_n(l, 0, __ATOMIC_RELEASE); }

/* The table's counters and maxima: relaxed, each is a sum or a maximum of its own, read whole
 * only once the image has ended (nothing else is published through them). */
static void add(uint64_t *p, uint64_t v) { __atomic_fetch_add(p, v, RELAXED); }
static void max_into(uint64_t *p, uint64_t v) {
    uint64_t was = __atomic_load_n(p, RELAXED);
    while (v > was && !__atomic_compare_exchange_n(p, &was, v, 1, RELAXED, RELAXED)) {
    }
}

/* The histogram bucket of `ns`: 0-3 exact, then four per power of two. */
static unsigned bucket(uint64_t ns) {
    if (ns < 4) return (unsigned)ns;
    unsigned p = 63u - (unsigned)__builtin_clzll(ns);
    unsigned b = 4 * (p - 1) + (unsigned)((ns >> (p - 2)) & 3);
    return b < HB ? b : HB - 1;
}

static unsigned hash_of(uint64_t a) { return (unsigned)((a >> 3) ^ (a >> 9)); }
#define H(m) (hash_of((uint64_t)(uintptr_t)(m)) & (NC - 1))

/* Whether the file system of DIR has room for another page. */
static int room(void) {
    struct statvfs s;
    if (statvfs(dir, &s) != 0) return 0;
    return (uint64_t)s.f_bavail * s.f_frsize >= ROOM;
}

/* ---- The process: its file, and a forked child starting again ---- */

static void copy_maps(const char *stem);
static char stem[600];

static int init_process(void) {
    if (!P) return 0;
    memset(P, 0, sizeof *P);
    uint64_t start = now_ns();
    snprintf(stem, sizeof stem, "%s/%d-%llu", dir, (int)getpid(), (unsigned long long)start);
    char path[640];
    snprintf(path, sizeof path, "%s.tl", stem);
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return 0;
    void *map = MAP_FAILED;
    /* The header page is reserved (a full file system fails here, not later with SIGBUS). */
    if (ftruncate(fd, (off_t)FILE_SIZE) == 0 && posix_fallocate(fd, 0, HEADER_SIZE) == 0)
        map = mmap(NULL, FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        unlink(path);
        return 0;
    }
    stale_map = map;
    struct header *h = map;
    h->version = VERSION;
    h->header_size = HEADER_SIZE;
    h->lock_size = sizeof(struct lock_stat);
    h->locks = LOCKS;
    h->rec_size = sizeof(struct rec);
    h->events = EVENTS;
    h->hb = HB;
    h->hold_every = HOLD_EVERY;
    h->pid = (uint32_t)getpid();
    h->ppid = (uint32_t)getppid();
    struct stat ns;
    if (stat("/proc/self/ns/pid", &ns) == 0) h->pidns = ns.st_ino;
    h->start_ns = start;
    ssize_t n = readlink("/proc/self/exe", h->exe, sizeof h->exe - 1);
    if (n < 0) h->exe[0] = 0;
    P->h = h;
    P->locks = (struct lock_stat *)((char *)map + LOCKS_OFF);
    P->ev = (struct rec *)((char *)map + EVENTS_OFF);
    /* The run's budget of events, shared by every process (a file of DIR, one counter). */
    char bpath[600];
    snprintf(bpath, sizeof bpath, "%s/budget", dir);
    int bfd = open(bpath, O_RDWR | O_CLOEXEC);
    if (bfd >= 0) {
        void *b = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, bfd, 0);
        close(bfd);
        if (b != MAP_FAILED) P->budget = b;
    }
    P->pid = (uint32_t)getpid();
    /* Release: the header's fields above are written before the magic that tells `run`'s
     * reader (another process, reading the file) the header is whole; likewise `inited` for the
     * threads this process starts after it (their creation orders it too). */
    __atomic_store_n(&h->magic, MAGIC, __ATOMIC_RELEASE);
    __atomic_store_n(&P->inited, 1, __ATOMIC_RELEASE);
    copy_maps(stem); /* what names addresses if the process is killed; rewritten at its end */
    return 1;
}

/* In a child made by fork, _Fork or clone: the parent's counters were wiped with the pages
 * that held them; unmap the parent's file and start files of our own. */
static void start_again(void) {
    if (stale_map) munmap(stale_map, FILE_SIZE);
    stale_map = NULL;
    tb = (struct block *)&dummy;
    countdown = 1;
    held = NULL;
    if (!init_process()) enabled = 0;
}

/* The process is ready to record, starting again first in a forked child. */
static int ready(void) {
    if (!enabled) return 0;
    if (LIKELY(P->inited && (wipe_ok || P->pid == (uint32_t)getpid()))) return 1;
    /* A vfork child shares the parent's memory (and so sees it initialised): it never gets
     * here. Without MADV_WIPEONFORK, a forked child is told by its pid. */
    if (!wipe_ok) memset(arena, 0, (size_t)BLOCKS * sizeof(struct block));
    start_again();
    return enabled;
}

static void at_fork_child(void) {
    if (enabled) {
        if (!wipe_ok) {
            memset(P, 0, sizeof *P);
            memset(arena, 0, (size_t)BLOCKS * sizeof(struct block));
        }
        start_again();
    }
}

/* ---- The lock table ---- */

static struct lock_stat *stat_of(uint64_t addr, unsigned kind, uint64_t site) {
    struct lock_stat *t = P->locks;
    unsigned h = hash_of(addr * 0x9e3779b97f4a7c15ull >> 20);
    for (unsigned i = 0; i < 64; i++) {
        struct lock_stat *s = &t[(h + i) % LOCKS];
        /* Acquire: pairs with the compare-and-swap (acq-rel) that installed the slot, so the
         * thread that finds it sees the slot as its installer left it. */
        uint64_t a = __atomic_load_n(&s->addr, __ATOMIC_ACQUIRE);
        if (a == addr) return s;
        if (a == 0) {
            /* A new slot may touch a new page of the file: only with room for it. */
            if (!room()) break;
            uint64_t zero = 0;
            if (__atomic_compare_exchange_n(&s->addr, &zero, addr, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                s->kind = kind;
                s->first_site = site;
                return s;
            }
            if (zero == addr) return s;
        }
    }
    return &P->h->other;
}

/* ---- Events ---- */

static void put(uint32_t kind, uint32_t tid, uint64_t t0, uint64_t t1, uint64_t obj, uint64_t holder, uint64_t site, int budgeted) {
    struct header *h = P->h;
    /* Relaxed: the run's budget (shared by its processes) and the next record's index only
     * count and claim; a record's contents are published by the release store of its kind. */
    if (budgeted && P->budget && __atomic_fetch_sub(P->budget, 1, RELAXED) <= 0) {
        add(&h->ev_dropped, 1);
        return;
    }
    uint64_t i = __atomic_fetch_add(&h->ev_next, 1, RELAXED);
    if (i >= EVENTS || (h->flags & F_FULL)) {
        add(&h->ev_dropped, 1);
        return;
    }
    /* The first record on a new page of the file checks for room first. */
    if ((i * sizeof(struct rec)) % 4096 < sizeof(struct rec) && !room()) {
        __atomic_fetch_or(&h->flags, F_FULL, RELAXED);
        add(&h->ev_dropped, 1);
        return;
    }
    struct rec *r = &P->ev[i];
    r->tid = tid;
    r->t0 = t0;
    r->t1 = t1;
    r->obj = obj;
    r->holder = holder;
    r->site = site;
    __atomic_store_n(&r->kind, kind, __ATOMIC_RELEASE); /* pairs with the reader's check */
}

/* ---- Per-thread counters ---- */

static void flush_ent(struct ent *e) {
    uint64_t n = __atomic_load_n(&e->n, RELAXED);
    uint64_t d = n - e->reported;
    if (!e->addr || !d) return;
    e->reported = n;
    struct lock_stat *s = stat_of(e->addr, (unsigned)(e->site >> 56), e->site & ((1ull << 56) - 1));
    if (s == &P->h->other) add(&P->h->locks_dropped, d);
    add(&s->acquisitions, d);
}

static void flush_block(struct block *b) {
    for (unsigned i = 0; i < NC; i++) flush_ent(&b->c[i]);
}

/* Every thread's counters into the table (exit, _exit, abort, exec). */
static void flush_all(void) {
    spin_lock(&P->list_lock);
    for (struct block *b = P->live; b; b = b->next) {
        spin_lock(&b->lock);
        flush_block(b);
        spin_unlock(&b->lock);
    }
    spin_unlock(&P->list_lock);
}

static uint32_t my_tid(void) { return tb != &dummy ? tb->tid : gettid_(); }

static void put_death(uint32_t kind) {
    uint64_t cpu = 0;
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
        cpu = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    char name[16] = {0};
    prctl(PR_GET_NAME, name, 0, 0, 0);
    uint64_t lo, hi;
    memcpy(&lo, name, 8);
    memcpy(&hi, name + 8, 8);
    add(&P->h->deaths, 1);
    put(kind, my_tid(), now_ns(), cpu, lo, hi, 0, 0);
}

/* A thread's end (pthread_exit, return from its start routine, cancellation): its death, its
 * counters flushed, its block back to the free list. */
static void thread_end(void *v) {
    if (!ready()) return;
    if (!ended) put_death(K_DEATH);
    ended = 1;
    struct block *b = v;
    if (b && b != (struct block *)1 && b->magic == BLOCK_MAGIC) {
        spin_lock(&P->list_lock);
        if (b->prev) b->prev->next = b->next; else P->live = b->next;
        if (b->next) b->next->prev = b->prev;
        spin_lock(&b->lock);
        flush_block(b);
        memset(b->c, 0, sizeof b->c);
        b->magic = 0;
        spin_unlock(&b->lock);
        b->next = P->free_list;
        P->free_list = b;
        spin_unlock(&P->list_lock);
    }
    if (tb == b) tb = (struct block *)&dummy;
    held = NULL;
}

/* This thread's block, registered on its first slow path; NULL when none is left. */
static struct block *register_thread(void) {
    struct block *b = NULL;
    if (ended) return NULL;
    spin_lock(&P->list_lock);
    if (P->free_list) {
        b = P->free_list;
        P->free_list = b->next;
    } else if (P->next_block < BLOCKS) {
        b = &arena[P->next_block++];
    }
    if (b) {
        memset(b, 0, sizeof *b);
        b->magic = BLOCK_MAGIC;
        b->tid = gettid_();
        b->last_flush = now_ns();
        b->next = P->live;
        if (P->live) P->live->prev = b;
        P->live = b;
    }
    spin_unlock(&P->list_lock);
    if (b) {
        tb = b;
        pthread_setspecific(key, b);
    } else if (!ended) {
        add(&P->h->direct_threads, 1);
        pthread_setspecific(key, (void *)1);
    }
    return b;
}

static uint32_t next_interval(void) {
    /* xorshift32; a uniform interval in [1, 2*HOLD_EVERY) so sampling does not lock onto a
     * program's own period. */
    uint32_t x = rng ? rng : (uint32_t)(uintptr_t)&rng | 1;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    rng = x;
    return 1 + x % (2 * HOLD_EVERY - 1);
}

/* A cache miss: evict the entry (its count into the table) and install `m`. */
static __attribute__((noinline)) void miss(uint64_t m, uint64_t site, unsigned kind) {
    if (!ready()) return;
    struct block *b = tb;
    if (b == &dummy || b->magic != BLOCK_MAGIC) b = register_thread();
    struct ent *e = b ? &b->c[H(m)] : NULL;
    /* No block, or a signal handler interrupted this thread's own flush: count directly. */
    if (!b || !spin_try(&b->lock)) {
        add(&stat_of(m, kind, site)->acquisitions, 1);
        return;
    }
    flush_ent(e);
    e->addr = m;
    e->reported = 0;
    e->site = site | (uint64_t)kind << 56;
    __atomic_store_n(&e->n, 1, RELAXED);
    spin_unlock(&b->lock);
}

static __attribute__((noinline)) void sample_start(void *m, uint64_t site) {
    countdown = next_interval();
    if (!ready()) return;
    held = m;
    held_site = site;
    held_t0 = now_ns();
}

static __attribute__((noinline)) void sample_end(void *m) {
    held = NULL;
    if (!ready()) return;
    uint64_t t1 = now_ns(), d = t1 - held_t0;
    struct block *b = tb;
    struct lock_stat *s = stat_of((uint64_t)(uintptr_t)m, W_MUTEX, held_site);
    add(&s->hold_samples, 1);
    add(&s->hold_ns, d);
    max_into(&s->hold_max, d);
    __atomic_fetch_add(&s->hold_hist[bucket(d)], 1, RELAXED);
    /* Counts reach the file at least every FLUSH_NS, so a process killed by a signal loses
     * at most that much of them. */
    if (b != &dummy && t1 - b->last_flush > FLUSH_NS && spin_try(&b->lock)) {
        flush_block(b);
        b->last_flush = t1;
        spin_unlock(&b->lock);
    }
}

/* One acquisition of `m` by this thread: the hot path. */
static inline __attribute__((always_inline)) void count(void *m, uint64_t site, unsigned kind) {
    struct ent *e = &tb->c[H(m)];
    if (LIKELY(e->addr == (uint64_t)(uintptr_t)m))
        __atomic_store_n(&e->n, __atomic_load_n(&e->n, RELAXED) + 1, RELAXED); /* owner only */
    else
        miss((uint64_t)(uintptr_t)m, site, kind);
    if (UNLIKELY(--countdown == 0)) sample_start(m, site);
}

/* A wait of `d` ns into the slot of `key` among `n` (claimed by compare-and-swap when free),
 * or into the `other` counters when all are taken by other keys. */
static void add_keyed(struct keyed_stat *slots, unsigned n, uint64_t key, uint64_t d,
                      uint64_t *other_waits, uint64_t *other_ns) {
    for (unsigned i = 0; i < n; i++) {
        uint64_t was = __atomic_load_n(&slots[i].key, RELAXED);
        if (was == 0) {
            uint64_t zero = 0;
            if (!__atomic_compare_exchange_n(&slots[i].key, &zero, key, 0, RELAXED, RELAXED) && zero != key)
                continue;
        } else if (was != key) {
            continue;
        }
        add(&slots[i].waits, 1);
        add(&slots[i].wait_ns, d);
        return;
    }
    add(other_waits, 1);
    add(other_ns, d);
}

/* A wait of kind `kind` for `obj`, from t0 to t1, while `holder` held it. */
static void waited(void *obj, unsigned kind, uint64_t t0, uint64_t t1, uint64_t holder, uint64_t site) {
    if (!ready()) return;
    uint64_t d = t1 - t0;
    struct lock_stat *s = stat_of((uint64_t)(uintptr_t)obj, kind, site);
    add(&s->contended, 1);
    add(&s->wait_ns, d);
    max_into(&s->wait_max, d);
    __atomic_fetch_add(&s->wait_hist[bucket(d)], 1, RELAXED);
    add_keyed(s->sites, SITES, site, d, &s->other_sites_waits, &s->other_sites_ns);
    if (holder) add_keyed(s->holders, HOLDERS, holder, d, &s->other_holders_waits, &s->other_holders_ns);
    put(K_WAIT, my_tid(), t0, t1, (uint64_t)(uintptr_t)obj, holder | (uint64_t)kind << 32, site, 1);
}

/* ---- Start and end of the process image ---- */

static void copy_maps(const char *st) {
    char path[640], tmp[660], buf[8192];
    snprintf(path, sizeof path, "%s.maps", st);
    snprintf(tmp, sizeof tmp, "%s.maps.part", st);
    int in = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (in < 0) return;
    int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int ok = out >= 0;
    ssize_t n;
    while (ok && (n = read(in, buf, sizeof buf)) > 0) ok = write(out, buf, (size_t)n) == n;
    close(in);
    if (out >= 0) close(out);
    if (ok) rename(tmp, path); else unlink(tmp);
}

/* The image ends (`flag`): every counter into the file, the maps that name its addresses. Only
 * by the process itself: a vfork child sharing its parent's memory leaves the parent's alone. */
static void image_ends(uint64_t flag) {
    if (!ready() || P->pid != (uint32_t)getpid()) return;
    if (held) sample_end(held);
    flush_all();
    __atomic_fetch_or(&P->h->flags, flag, RELAXED);
    P->h->end_ns = now_ns();
    copy_maps(stem);
}

__attribute__((constructor)) static void init(void) {
    load_all();
    if (dlsym(RTLD_DEFAULT, "threadlab_interpose_v2") != &threadlab_interpose_v2) return;
    const char *d = getenv("THREADLAB_INTERPOSE_DIR");
    if (!d || d[0] != '/' || strlen(d) >= sizeof dir) return;
    strcpy(dir, d);
    void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void *blocks = mmap(NULL, (size_t)BLOCKS * sizeof(struct block), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (page == MAP_FAILED || blocks == MAP_FAILED) return;
#ifdef MADV_WIPEONFORK
    wipe_ok = madvise(page, 4096, MADV_WIPEONFORK) == 0 &&
              madvise(blocks, (size_t)BLOCKS * sizeof(struct block), MADV_WIPEONFORK) == 0;
#endif
    P = page;
    arena = blocks;
    if (pthread_key_create(&key, thread_end) != 0) return;
    if (!init_process()) return;
    enabled = 1;
    pthread_atfork(NULL, NULL, at_fork_child);
}

__attribute__((destructor)) static void fini(void) {
    if (!ready() || P->pid != (uint32_t)getpid()) return;
    /* The thread that ends the process lives as long as the process (K_EXIT), unless its own
     * end was recorded already (the last thread of a process whose main thread had left). */
    if (!ended) put_death(K_EXIT);
    image_ends(F_EXITED);
}

/* ---- Threads ---- */

struct start { void *(*fn)(void *); void *arg; uint32_t parent; };

static void *trampoline(void *p) {
    struct start s = *(struct start *)p;
    free(p);
    if (ready()) {
        register_thread();
        add(&P->h->births, 1);
        put(K_BIRTH, my_tid(), now_ns(), 0, s.parent, (uint64_t)(uintptr_t)s.fn, 0, 0);
    }
    return s.fn(s.arg);
}

int pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg) {
    ENSURE(real_create);
    if (!ready()) return real_create(t, a, fn, arg);
    struct start *s = malloc(sizeof *s);
    if (!s) return real_create(t, a, fn, arg);
    s->fn = fn;
    s->arg = arg;
    s->parent = my_tid();
    int r = real_create(t, a, trampoline, s);
    if (r) free(s);
    return r;
}

/* ---- Mutexes ---- */

#ifdef __GLIBC__
#define OWNER(m) ((uint64_t)(uint32_t)(m)->__data.__owner)
/* A process-private default mutex (glibc's kind 0): in a single-threaded process nobody else
 * can hold it, and elsewhere glibc takes it with one compare-and-swap of its lock word from 0
 * (free) to 1. Any other kind (recursive, error-checking, robust, priority-inheritance or
 * -protection, process-shared, elided) goes through the full path. */
#define PLAIN(m) ((m)->__data.__kind == 0)
/* The lock word of a PLAIN mutex: 0 while nobody holds it. */
#define FREE(m) (__atomic_load_n(&(m)->__data.__lock, RELAXED) == 0)
#define RW_OWNER(l) ((uint64_t)(uint32_t)(l)->__data.__cur_writer)
#else
#define OWNER(m) 0
#define PLAIN(m) 0
#define FREE(m) 0
#define RW_OWNER(l) 0
#endif

#define SITE ((uint64_t)(uintptr_t)__builtin_return_address(0))

/* Which blocking call a contended path makes after the trylock answered EBUSY. */
enum { C_LOCK, C_TIMED, C_CLOCK };
struct call {
    int how;
    void *f;
    clockid_t clock;
    const struct timespec *ts;
};

static int call_it(void *obj, const struct call *c) {
    switch (c->how) {
    case C_TIMED: return ((int (*)(void *, const struct timespec *))c->f)(obj, c->ts);
    case C_CLOCK: return ((int (*)(void *, clockid_t, const struct timespec *))c->f)(obj, c->clock, c->ts);
    default: return ((int (*)(void *))c->f)(obj);
    }
}

/* The trylock answered `r`. Anything but EBUSY is the program's answer (EOWNERDEAD took the
 * lock: one acquisition). EBUSY: time the wait in the blocking call, unless this thread holds
 * the lock already (an error-checking mutex answers EDEADLK, a default one deadlocks: no wait
 * to time). Out of line, so the uncontended path stays a few instructions. */
static __attribute__((noinline)) int contended(void *obj, unsigned kind, int r, uint64_t holder,
                                               const struct call *c, uint64_t site) {
    if (r != EBUSY) {
        if (r == 0 || r == EOWNERDEAD) count(obj, site, kind);
        return r;
    }
    if (!enabled || (holder && holder == my_tid())) return call_it(obj, c);
    uint64_t t0 = now_ns();
    r = call_it(obj, c);
    uint64_t t1 = now_ns();
    if (r == 0 || r == EOWNERDEAD) count(obj, site, kind);
    waited(obj, kind, t0, t1, holder, site);
    return r;
}

/* Any lock call that is not a PLAIN mutex found free with its count in its cache entry (see
 * pthread_mutex_lock). */
static __attribute__((noinline)) int lock_slow(pthread_mutex_t *m, uint64_t site) {
    ENSURE(real_mlock);
    if (PLAIN(m)) {
        uint64_t holder = OWNER(m);
        if (SINGLE_THREADED() || FREE(m) || !enabled || (holder && holder == my_tid())) {
            /* Free (a count that missed its cache entry or times this hold), or held by this
             * thread (a default mutex then deadlocks, as it does unobserved: nothing to time). */
            count(m, site, W_MUTEX);
            return real_mlock(m);
        }
        /* Held by another thread: the wait is timed. */
        uint64_t t0 = now_ns();
        int r = real_mlock(m);
        uint64_t t1 = now_ns();
        if (r == 0) count(m, site, W_MUTEX);
        waited(m, W_MUTEX, t0, t1, holder, site);
        return r;
    }
    int r = real_mtry(m);
    if (LIKELY(r == 0)) {
        count(m, site, W_MUTEX);
        return 0;
    }
    struct call c = {C_LOCK, (void *)real_mlock, 0, NULL};
    return contended(m, W_MUTEX, r, OWNER(m), &c, site);
}

#ifdef __GLIBC__
/* glibc's protocol for a PLAIN mutex, facts of its ABI (nptl's pthread_mutex_lock.c and
 * pthread_mutex_unlock.c, lowlevellock.h; the same since glibc 2.3): the lock word is 0 when
 * free, 1 when held, 2 when held and a thread may sleep on it in the kernel; the holder writes
 * its thread id to __owner and counts itself in __nusers, and clears both before it frees the
 * word; in a process with one thread glibc writes the word without an atomic instruction (for
 * a process-private lock nobody else can take). A lock taken here and freed by glibc, or the
 * other way round (a condition variable's wait frees and takes the mutex inside glibc), sees
 * the same states. */
static inline __attribute__((always_inline)) int take_plain(pthread_mutex_t *m, uint32_t tid) {
    if (SINGLE_THREADED()) {
        if (m->__data.__lock != 0) return 0;
        m->__data.__lock = 1;
    } else {
        int free_word = 0;
        /* Acquire: pairs with the release exchange of the unlock (here or in glibc) that freed
         * the word, so the previous holder's writes are seen. */
        if (!__atomic_compare_exchange_n(&m->__data.__lock, &free_word, 1, 0, __ATOMIC_ACQUIRE, RELAXED))
            return 0;
    }
    m->__data.__owner = (int)tid;
    ++m->__data.__nusers;
    return 1;
}

/* glibc's unlock of a PLAIN mutex (see take_plain): a thread that may sleep on the word (it
 * was 2) is woken, one, as glibc wakes it. */
static inline __attribute__((always_inline)) void give_plain(pthread_mutex_t *m) {
    m->__data.__owner = 0;
    --m->__data.__nusers;
    if (SINGLE_THREADED()) {
        m->__data.__lock = 0;
        return;
    }
    /* Release: pairs with the acquire compare-and-swap (here or in glibc) of the next holder. */
    if (__atomic_exchange_n(&m->__data.__lock, 0, __ATOMIC_RELEASE) > 1) {
        int e = errno; /* glibc's wake leaves errno alone */
        syscall(SYS_futex, &m->__data.__lock, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
        errno = e;
    }
}
#else
/* Not glibc: PLAIN is never true, these are never called. */
static inline int take_plain(pthread_mutex_t *m, uint32_t tid) { (void)m; (void)tid; return 0; }
static inline void give_plain(pthread_mutex_t *m) { (void)m; }
#endif

/* The hot path. A free process-private default mutex (PLAIN) whose count is in this thread's
 * cache entry, and whose hold is not to be timed now, is taken here as glibc would take it
 * (take_plain) and counted: no call into glibc, no trylock, no register saved. A wait that
 * begins as this compare-and-swap fails (a few ns) is timed in lock_slow as any other wait.
 * Everything else takes lock_slow. */
int pthread_mutex_lock(pthread_mutex_t *m) {
    struct ent *e = &tb->c[H(m)];
    if (LIKELY(PLAIN(m) && e->addr == (uint64_t)(uintptr_t)m && countdown > 1 && take_plain(m, tb->tid))) {
        __atomic_store_n(&e->n, __atomic_load_n(&e->n, RELAXED) + 1, RELAXED); /* owner only */
        countdown--;
        return 0;
    }
    return lock_slow(m, SITE);
}

int pthread_mutex_trylock(pthread_mutex_t *m) {
    ENSURE(real_mtry);
    int r = real_mtry(m);
    if (r == 0 || r == EOWNERDEAD) count(m, SITE, W_MUTEX);
    return r;
}

int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *ts) {
    ENSURE(real_mtimed);
    struct call c = {C_TIMED, (void *)real_mtimed, 0, ts};
    return contended(m, W_MUTEX, real_mtry(m), OWNER(m), &c, SITE);
}

int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t k, const struct timespec *ts) {
    ENSURE(real_mtry);
    if (!real_mclock) return EINVAL;
    struct call c = {C_CLOCK, (void *)real_mclock, k, ts};
    return contended(m, W_MUTEX, real_mtry(m), OWNER(m), &c, SITE);
}

/* An unlock that ends a timed hold, or of any mutex but a PLAIN one. */
static __attribute__((noinline)) int unlock_slow(pthread_mutex_t *m) {
    if (held == m) sample_end(m);
    if (PLAIN(m)) {
        give_plain(m);
        return 0;
    }
    ENSURE(real_munlock);
    return real_munlock(m);
}

/* A PLAIN mutex is freed here as glibc frees it (give_plain); everything else in unlock_slow. */
int pthread_mutex_unlock(pthread_mutex_t *m) {
    if (LIKELY(held != m && PLAIN(m))) {
        give_plain(m);
        return 0;
    }
    return unlock_slow(m);
}

/* ---- Reader-writer locks ---- */

static int rw(pthread_rwlock_t *l, int (*try_)(pthread_rwlock_t *), const struct call *c, uint64_t site) {
    int r = try_(l);
    if (LIKELY(r == 0)) {
        count(l, site, W_RWLOCK);
        return 0;
    }
    return contended(l, W_RWLOCK, r, RW_OWNER(l), c, site);
}

#define RW(try_, how, f, k, ts) do { struct call c_ = {how, (void *)(f), k, ts}; return rw(l, try_, &c_, SITE); } while (0)

int pthread_rwlock_rdlock(pthread_rwlock_t *l) { ENSURE(real_rdlock); RW(real_tryrd, C_LOCK, real_rdlock, 0, NULL); }
int pthread_rwlock_wrlock(pthread_rwlock_t *l) { ENSURE(real_wrlock); RW(real_trywr, C_LOCK, real_wrlock, 0, NULL); }
int pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *ts) {
    ENSURE(real_rdtimed);
    RW(real_tryrd, C_TIMED, real_rdtimed, 0, ts);
}
int pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *ts) {
    ENSURE(real_wrtimed);
    RW(real_trywr, C_TIMED, real_wrtimed, 0, ts);
}
int pthread_rwlock_clockrdlock(pthread_rwlock_t *l, clockid_t k, const struct timespec *ts) {
    ENSURE(real_tryrd);
    if (!real_rdclock) return EINVAL;
    RW(real_tryrd, C_CLOCK, real_rdclock, k, ts);
}
int pthread_rwlock_clockwrlock(pthread_rwlock_t *l, clockid_t k, const struct timespec *ts) {
    ENSURE(real_trywr);
    if (!real_wrclock) return EINVAL;
    RW(real_trywr, C_CLOCK, real_wrclock, k, ts);
}
int pthread_rwlock_tryrdlock(pthread_rwlock_t *l) {
    ENSURE(real_tryrd);
    int r = real_tryrd(l);
    if (r == 0) count(l, SITE, W_RWLOCK);
    return r;
}
int pthread_rwlock_trywrlock(pthread_rwlock_t *l) {
    ENSURE(real_trywr);
    int r = real_trywr(l);
    if (r == 0) count(l, SITE, W_RWLOCK);
    return r;
}
int pthread_rwlock_unlock(pthread_rwlock_t *l) {
    if (UNLIKELY(held == l)) sample_end(l);
    ENSURE(real_rwunlock);
    return real_rwunlock(l);
}

/* ---- Condition variables and semaphores ---- */

/* A condition-variable wait always blocks: each is recorded (the reader decides whether the
 * condition variable is a lock - CPython's GIL - or a place where a thread parks). The wait
 * releases the mutex (a timed hold ends there) and takes it again: one more acquisition. */
#define COND_WAIT(call, c, m)                                                     \
    do {                                                                          \
        if (held == (void *)(m)) sample_end(m);                                   \
        if (!enabled) return call;                                                \
        uint64_t site_ = SITE, t0_ = now_ns();                                    \
        int r_ = call;                                                            \
        uint64_t t1_ = now_ns();                                                  \
        if (r_ == 0 || r_ == ETIMEDOUT || r_ == EOWNERDEAD) count(m, site_, W_MUTEX); \
        waited(c, W_COND, t0_, t1_, 0, site_);                                    \
        return r_;                                                                \
    } while (0)

int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m) {
    ENSURE(real_cwait);
    COND_WAIT(real_cwait(c, m), c, m);
}

int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *ts) {
    ENSURE(real_ctimed);
    COND_WAIT(real_ctimed(c, m, ts), c, m);
}

int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t k, const struct timespec *ts) {
    ENSURE(real_cwait);
    if (!real_cclock) return EINVAL;
    COND_WAIT(real_cclock(c, m, k, ts), c, m);
}

int sem_wait(sem_t *s) {
    ENSURE(real_semwait);
    if (LIKELY(real_semtry(s) == 0)) return 0;
    if (errno != EAGAIN || !enabled) return real_semwait(s);
    uint64_t t0 = now_ns();
    int r = real_semwait(s);
    int e = errno;
    waited(s, W_SEM, t0, now_ns(), 0, SITE);
    errno = e;
    return r;
}

/* ---- Ends of the image: records written before they are lost ---- */

void _exit(int status) {
    ENSURE(real__exit);
    image_ends(F_UNDERSCORE_EXIT);
    real__exit(status);
}

void _Exit(int status) {
    ENSURE(real__Exit);
    image_ends(F_UNDERSCORE_EXIT);
    real__Exit(status);
}

void abort(void) {
    ENSURE(real_abort);
    image_ends(F_ABORT);
    real_abort();
}

int execve(const char *path, char *const argv[], char *const envp[]) {
    ENSURE(real_execve);
    image_ends(F_EXEC);
    return real_execve(path, argv, envp);
}

int execv(const char *path, char *const argv[]) {
    ENSURE(real_execv);
    image_ends(F_EXEC);
    return real_execv(path, argv);
}

int execvp(const char *file, char *const argv[]) {
    ENSURE(real_execvp);
    image_ends(F_EXEC);
    return real_execvp(file, argv);
}

int execvpe(const char *file, char *const argv[], char *const envp[]) {
    ENSURE(real_execvpe);
    image_ends(F_EXEC);
    return real_execvpe(file, argv, envp);
}

int fexecve(int fd, char *const argv[], char *const envp[]) {
    ENSURE(real_fexecve);
    image_ends(F_EXEC);
    return real_fexecve(fd, argv, envp);
}

/* execl, execlp, execle: the arguments gathered into a vector, then the v-form above. */
#define GATHER(first, ap, argv, envp_out)                                         \
    size_t n_ = 1;                                                                \
    va_list cp_;                                                                  \
    va_copy(cp_, ap);                                                             \
    while (va_arg(cp_, char *)) n_++;                                             \
    va_end(cp_);                                                                  \
    char **argv = __builtin_alloca((n_ + 1) * sizeof(char *));                    \
    argv[0] = (char *)(first);                                                    \
    for (size_t i_ = 1; i_ <= n_; i_++) argv[i_] = va_arg(ap, char *);            \
    (void)(envp_out)

int execl(const char *path, const char *arg, ...) {
    va_list ap;
    va_start(ap, arg);
    GATHER(arg, ap, argv, 0);
    va_end(ap);
    return execv(path, argv);
}

int execlp(const char *file, const char *arg, ...) {
    va_list ap;
    va_start(ap, arg);
    GATHER(arg, ap, argv, 0);
    va_end(ap);
    return execvp(file, argv);
}

int execle(const char *path, const char *arg, ...) {
    va_list ap;
    va_start(ap, arg);
    GATHER(arg, ap, argv, 0);
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    return execve(path, argv, envp);
}
