/* threadlab's interposer: loaded with LD_PRELOAD by `threadlab run`, it records thread births
 * and deaths and every *contended* pthread lock acquisition of the observed program, from
 * inside the process and without stopping it (the approach of mutrace by Lennart Poettering and
 * of heaptrack: wrap the library calls, find the real ones with dlsym(RTLD_NEXT)).
 *
 * Hot path: pthread_mutex_lock first calls the real trylock; when it succeeds (the lock was
 * free) the wrapper returns at once - a trylock and a branch, no clock read, no record (in a
 * process that has only one thread it calls the real lock, which is cheaper there). Only
 * when the trylock fails is the wait timed (CLOCK_MONOTONIC), with the holder read from
 * glibc's mutex owner field and the call site (__builtin_return_address(0)). A lock that made
 * someone wait is marked in a small table of waited-for locks, so its owner's unlock times the
 * rest of that hold (from the wait's beginning to the release).
 *
 * Records go into a per-thread buffer (no lock: only the owning thread writes it) flushed with
 * one write(2) to DIR/PID.events (O_APPEND) when full, when the thread ends and when the process
 * exits; DIR is THREADLAB_INTERPOSE_DIR. At exit /proc/self/maps is copied to DIR/PID.maps so
 * `run` can name addresses (module + offset, then ELF symbols) after the process is gone.
 * A forked child starts new files under its own pid; an exec'd program loads the interposer
 * again through the inherited LD_PRELOAD. Without THREADLAB_INTERPOSE_DIR nothing is recorded.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 32)
#include <sys/single_threaded.h>
/* glibc's own flag: true until the process starts its second thread, and glibc's mutexes skip
 * their atomic instructions while it holds (a lock or unlock then costs a few ns). A try-lock
 * is always atomic, so the wrapper hands such a lock straight to the real function: with one
 * thread nobody can wait. */
#define SINGLE_THREADED() (__libc_single_threaded)
#else
#define SINGLE_THREADED() 0
#endif

enum { K_PROCESS = 1, K_BIRTH = 2, K_DEATH = 3, K_WAIT = 4, K_HOLD = 5, K_EXIT = 6 };
enum { W_MUTEX = 0, W_RWLOCK = 1, W_COND = 2, W_SEM = 3 };

/* One record; the layout `run` reads (observe/interpose.rs), 48 bytes, native endianness. */
struct rec {
    uint32_t kind;
    uint32_t tid;
    uint64_t t0, t1;
    uint64_t obj;    /* lock address; for K_BIRTH the parent tid; for K_PROCESS the ppid */
    uint64_t holder; /* holder tid of a wait; the wait's kind in the high 32 bits */
    uint64_t site;   /* call site of a wait */
};

#define TBUF_RECS 170 /* ~8 KiB a thread */
struct tbuf {
    struct tbuf *next, *prev;
    uint32_t n, tid;
    struct rec r[TBUF_RECS];
};

static int (*real_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static void (*real_exit)(void *);
static int (*real_mlock)(pthread_mutex_t *), (*real_mtry)(pthread_mutex_t *),
    (*real_munlock)(pthread_mutex_t *);
static int (*real_mtimed)(pthread_mutex_t *, const struct timespec *);
static int (*real_rdlock)(pthread_rwlock_t *), (*real_wrlock)(pthread_rwlock_t *),
    (*real_tryrd)(pthread_rwlock_t *), (*real_trywr)(pthread_rwlock_t *),
    (*real_rwunlock)(pthread_rwlock_t *);
static int (*real_cwait)(pthread_cond_t *, pthread_mutex_t *);
static int (*real_ctimed)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
static int (*real_semwait)(sem_t *), (*real_semtry)(sem_t *);

static int enabled;                  /* THREADLAB_INTERPOSE_DIR was set and the file opened */
static int out_fd = -1;
static char dir[512];
static __thread struct tbuf *tb;     /* this thread's buffer */
static struct tbuf *all;             /* every live buffer, for the flush at exit */
static volatile int all_lock;        /* a spin lock taken once per thread birth and death */

/* Locks that made someone wait: address and when the first waiter began. */
#define WAITED 1024
static struct { uint64_t lock, since; } waited[WAITED];
/* How many slots of `waited` are in use: an unlock looks at the table only when some lock is
 * being waited for, so an uncontended unlock reads one shared word that rarely changes. It is a
 * hint: a race between a waiter and an unlocker can leave it off by one; too high only costs the
 * table lookup, too low can miss one hold record (waits are recorded regardless). */
static int waited_any;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint32_t gettid_(void) { return (uint32_t)syscall(SYS_gettid); }

static unsigned slot(const void *p) { return (unsigned)(((uintptr_t)p >> 4) * 2654435761u) % WAITED; }

static void spin_lock(void) {
    while (__atomic_exchange_n(&all_lock, 1, __ATOMIC_ACQUIRE)) {
    }
}
static void spin_unlock(void) { __atomic_store_n(&all_lock, 0, __ATOMIC_RELEASE); }

static void flush(struct tbuf *b) {
    if (b->n && out_fd >= 0) {
        ssize_t len = (ssize_t)(b->n * sizeof(struct rec));
        /* One write of whole records; O_APPEND keeps writers from overwriting each other. */
        (void)!write(out_fd, b->r, (size_t)len);
    }
    b->n = 0;
}

static struct tbuf *mine(void) {
    struct tbuf *b = tb;
    if (b) return b;
    b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->tid = gettid_();
    spin_lock();
    b->next = all;
    if (all) all->prev = b;
    all = b;
    spin_unlock();
    tb = b;
    return b;
}

static void put(uint32_t kind, uint64_t t0, uint64_t t1, uint64_t obj, uint64_t holder, uint64_t site) {
    if (!enabled) return;
    struct tbuf *b = mine();
    if (!b) return;
    struct rec *r = &b->r[b->n++];
    r->kind = kind;
    r->tid = b->tid;
    r->t0 = t0;
    r->t1 = t1;
    r->obj = obj;
    r->holder = holder;
    r->site = site;
    if (b->n == TBUF_RECS) flush(b);
}

/* The thread is ending: flush and forget its buffer. */
static void retire(void) {
    struct tbuf *b = tb;
    if (!b) return;
    flush(b);
    spin_lock();
    if (b->prev) b->prev->next = b->next; else all = b->next;
    if (b->next) b->next->prev = b->prev;
    spin_unlock();
    tb = NULL;
    free(b);
}

static void open_out(void) {
    char path[600];
    snprintf(path, sizeof path, "%s/%d.events", dir, (int)getpid());
    out_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    enabled = out_fd >= 0;
    if (enabled) put(K_PROCESS, now_ns(), 0, (uint64_t)getppid(), 0, 0);
}

static void at_fork_child(void) {
    /* The parent's buffers were copied: the parent flushes them, the child drops them. */
    all = NULL;
    all_lock = 0;
    tb = NULL; /* the copied buffer of this thread leaks in the child: 8 KiB, once per fork */
    if (out_fd >= 0) close(out_fd);
    out_fd = -1;
    if (enabled) open_out();
}

static void copy_maps(void) {
    char path[600], buf[8192];
    snprintf(path, sizeof path, "%s/%d.maps", dir, (int)getpid());
    int in = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    int out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (in >= 0 && out >= 0) {
        ssize_t n;
        while ((n = read(in, buf, sizeof buf)) > 0) (void)!write(out, buf, (size_t)n);
    }
    if (in >= 0) close(in);
    if (out >= 0) close(out);
}

#define LOAD(var, name) var = dlsym(RTLD_NEXT, name)

/* The real functions. Called by the constructor and, should another library's constructor take
 * a lock before ours ran (initialisation order between libraries is not ours to choose), by
 * the first wrapper called. */
static void load_all(void) {
    LOAD(real_create, "pthread_create");
    LOAD(real_exit, "pthread_exit");
    LOAD(real_mlock, "pthread_mutex_lock");
    LOAD(real_mtry, "pthread_mutex_trylock");
    LOAD(real_munlock, "pthread_mutex_unlock");
    LOAD(real_mtimed, "pthread_mutex_timedlock");
    LOAD(real_rdlock, "pthread_rwlock_rdlock");
    LOAD(real_wrlock, "pthread_rwlock_wrlock");
    LOAD(real_tryrd, "pthread_rwlock_tryrdlock");
    LOAD(real_trywr, "pthread_rwlock_trywrlock");
    LOAD(real_rwunlock, "pthread_rwlock_unlock");
    real_cwait = dlvsym(RTLD_NEXT, "pthread_cond_wait", "GLIBC_2.3.2");
    if (!real_cwait) LOAD(real_cwait, "pthread_cond_wait");
    real_ctimed = dlvsym(RTLD_NEXT, "pthread_cond_timedwait", "GLIBC_2.3.2");
    if (!real_ctimed) LOAD(real_ctimed, "pthread_cond_timedwait");
    LOAD(real_semwait, "sem_wait");
    LOAD(real_semtry, "sem_trywait");
}

#define ENSURE(f) do { if (__builtin_expect(!(f), 0)) load_all(); } while (0)

__attribute__((constructor)) static void init(void) {
    load_all();
    const char *d = getenv("THREADLAB_INTERPOSE_DIR");
    if (!d || !*d || strlen(d) >= sizeof dir) return;
    strcpy(dir, d);
    open_out();
    pthread_atfork(NULL, NULL, at_fork_child);
}

/* A thread's death: its time on a CPU (CLOCK_THREAD_CPUTIME_ID: one system call, well under a
 * microsecond) and its name (PR_GET_NAME), so that `run` knows a thread that lived between two
 * of its samples: its birth, death and work. Its time waiting for a CPU is not read here: the
 * scheduler's account of it is /proc/thread-self/schedstat, whose open, read and close cost
 * ~11 us per thread on the development VM (a thread-per-task program ran 1.5x slower);
 * `run --ptrace` reads it at each death instead. t1 = on-CPU ns, obj and holder = the name's
 * 16 bytes. */
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
    put(kind, now_ns(), cpu, lo, hi, 0);
}

__attribute__((destructor)) static void fini(void) {
    if (!enabled) return;
    /* The thread that ends the process: it lives as long as the process (K_EXIT). */
    put_death(K_EXIT);
    /* Threads still running at exit: their buffers are flushed from here. */
    spin_lock();
    for (struct tbuf *b = all; b; b = b->next) flush(b);
    spin_unlock();
    copy_maps();
}

struct start { void *(*fn)(void *); void *arg; uint32_t parent; };

static void *trampoline(void *p) {
    struct start s = *(struct start *)p;
    free(p);
    put(K_BIRTH, now_ns(), 0, s.parent, 0, 0);
    void *ret = s.fn(s.arg);
    put_death(K_DEATH);
    retire();
    return ret;
}

int pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg) {
    ENSURE(real_create);
    if (!enabled) return real_create(t, a, fn, arg);
    struct start *s = malloc(sizeof *s);
    if (!s) return real_create(t, a, fn, arg);
    s->fn = fn;
    s->arg = arg;
    s->parent = gettid_();
    int r = real_create(t, a, trampoline, s);
    if (r) free(s);
    return r;
}

void pthread_exit(void *ret) {
    ENSURE(real_exit);
    if (enabled) {
        put_death(K_DEATH);
        retire();
    }
    real_exit(ret);
    __builtin_unreachable();
}

static void waited_for(const void *lock, uint64_t t0) {
    unsigned i = slot(lock);
    uint64_t was = __atomic_load_n(&waited[i].lock, __ATOMIC_RELAXED);
    if (was != (uint64_t)(uintptr_t)lock) {
        waited[i].since = t0;
        __atomic_store_n(&waited[i].lock, (uint64_t)(uintptr_t)lock, __ATOMIC_RELEASE);
        if (!was) __atomic_add_fetch(&waited_any, 1, __ATOMIC_RELAXED);
    }
}

static void released(const void *lock) {
    if (__builtin_expect(!__atomic_load_n(&waited_any, __ATOMIC_RELAXED), 1)) return;
    unsigned i = slot(lock);
    if (__builtin_expect(__atomic_load_n(&waited[i].lock, __ATOMIC_RELAXED) == (uint64_t)(uintptr_t)lock, 0)) {
        uint64_t since = waited[i].since;
        __atomic_store_n(&waited[i].lock, 0, __ATOMIC_RELAXED);
        __atomic_sub_fetch(&waited_any, 1, __ATOMIC_RELAXED);
        put(K_HOLD, since, now_ns(), (uint64_t)(uintptr_t)lock, 0, 0);
    }
}

static uint64_t owner_of(pthread_mutex_t *m) {
#ifdef __GLIBC__
    return (uint64_t)(uint32_t)m->__data.__owner;
#else
    (void)m;
    return 0;
#endif
}

#define KIND(k) ((uint64_t)(k) << 32)

int pthread_mutex_lock(pthread_mutex_t *m) {
    ENSURE(real_mlock);
    if (SINGLE_THREADED()) return real_mlock(m);
    if (__builtin_expect(real_mtry(m) == 0, 1)) return 0;
    if (!enabled) return real_mlock(m);
    uint64_t t0 = now_ns(), holder = owner_of(m);
    uint64_t site = (uint64_t)(uintptr_t)__builtin_return_address(0);
    waited_for(m, t0);
    int r = real_mlock(m);
    put(K_WAIT, t0, now_ns(), (uint64_t)(uintptr_t)m, holder | KIND(W_MUTEX), site);
    return r;
}

int pthread_mutex_trylock(pthread_mutex_t *m) {
    ENSURE(real_mtry);
    return real_mtry(m);
}

int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *ts) {
    ENSURE(real_mtimed);
    if (real_mtry(m) == 0) return 0;
    if (!enabled) return real_mtimed(m, ts);
    uint64_t t0 = now_ns(), holder = owner_of(m);
    uint64_t site = (uint64_t)(uintptr_t)__builtin_return_address(0);
    waited_for(m, t0);
    int r = real_mtimed(m, ts);
    put(K_WAIT, t0, now_ns(), (uint64_t)(uintptr_t)m, holder | KIND(W_MUTEX), site);
    return r;
}

int pthread_mutex_unlock(pthread_mutex_t *m) {
    ENSURE(real_munlock);
    released(m); /* waited_any is 0 unless enabled */
    return real_munlock(m);
}

static int rw(pthread_rwlock_t *l, int (*try_)(pthread_rwlock_t *), int (*lock)(pthread_rwlock_t *), void *site) {
    if (__builtin_expect(try_(l) == 0, 1)) return 0;
    if (!enabled) return lock(l);
    uint64_t t0 = now_ns();
    waited_for(l, t0);
    int r = lock(l);
    put(K_WAIT, t0, now_ns(), (uint64_t)(uintptr_t)l, KIND(W_RWLOCK), (uint64_t)(uintptr_t)site);
    return r;
}

int pthread_rwlock_rdlock(pthread_rwlock_t *l) { ENSURE(real_rdlock); return rw(l, real_tryrd, real_rdlock, __builtin_return_address(0)); }
int pthread_rwlock_wrlock(pthread_rwlock_t *l) { ENSURE(real_wrlock); return rw(l, real_trywr, real_wrlock, __builtin_return_address(0)); }
int pthread_rwlock_tryrdlock(pthread_rwlock_t *l) { ENSURE(real_tryrd); return real_tryrd(l); }
int pthread_rwlock_trywrlock(pthread_rwlock_t *l) { ENSURE(real_trywr); return real_trywr(l); }
int pthread_rwlock_unlock(pthread_rwlock_t *l) {
    ENSURE(real_rwunlock);
    released(l);
    return real_rwunlock(l);
}

/* A condition-variable wait always blocks: each is recorded (the reader decides whether the
 * condition variable is a lock - CPython's GIL - or a place where a thread parks). */
int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m) {
    ENSURE(real_cwait);
    if (!enabled) return real_cwait(c, m);
    uint64_t t0 = now_ns();
    int r = real_cwait(c, m);
    put(K_WAIT, t0, now_ns(), (uint64_t)(uintptr_t)c, KIND(W_COND),
        (uint64_t)(uintptr_t)__builtin_return_address(0));
    return r;
}

int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *ts) {
    ENSURE(real_ctimed);
    if (!enabled) return real_ctimed(c, m, ts);
    uint64_t t0 = now_ns();
    int r = real_ctimed(c, m, ts);
    put(K_WAIT, t0, now_ns(), (uint64_t)(uintptr_t)c, KIND(W_COND),
        (uint64_t)(uintptr_t)__builtin_return_address(0));
    return r;
}

int sem_wait(sem_t *s) {
    ENSURE(real_semwait);
    if (__builtin_expect(real_semtry(s) == 0, 1)) return 0;
    if (!enabled) return real_semwait(s);
    uint64_t t0 = now_ns();
    int r = real_semwait(s);
    put(K_WAIT, t0, now_ns(), (uint64_t)(uintptr_t)s, KIND(W_SEM),
        (uint64_t)(uintptr_t)__builtin_return_address(0));
    return r;
}
