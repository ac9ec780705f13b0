//! [`ThreadPoolBuilder`] and the ways it starts a pool's threads ([`ThreadSpawn`],
//! [`ThreadBuilder`]): Rayon's builder, translated setting by setting into threadlab's
//! `Builder`.

use std::any::Any;
use std::fmt;
use std::io;

use crate::error::ThreadPoolBuildError;
use crate::global;
use crate::pool::ThreadPool;

type NameFn = Box<dyn FnMut(usize) -> String>;
type PanicHandler = Box<dyn Fn(Box<dyn Any + Send>) + Send + Sync>;
type ThreadHandler = Box<dyn Fn(usize) + Send + Sync>;

/// Configures a [`ThreadPool`], or the global pool ([`ThreadPoolBuilder::build_global`]).
///
/// ```
/// let pool = rayon_core::ThreadPoolBuilder::new()
///     .num_threads(2)
///     .thread_name(|i| format!("compute-{i}"))
///     .build()?;
/// let name = pool.install(|| std::thread::current().name().map(str::to_owned));
/// assert!(name.unwrap().starts_with("compute-"));
/// # Ok::<(), rayon_core::ThreadPoolBuildError>(())
/// ```
pub struct ThreadPoolBuilder<S = DefaultSpawn> {
    num_threads: usize,
    use_current_thread: bool,
    thread_name: Option<NameFn>,
    panic_handler: Option<PanicHandler>,
    stack_size: Option<usize>,
    start_handler: Option<ThreadHandler>,
    exit_handler: Option<ThreadHandler>,
    breadth_first: bool,
    spawn: S,
}

impl Default for ThreadPoolBuilder {
    fn default() -> Self {
        ThreadPoolBuilder::new()
    }
}

impl<S> fmt::Debug for ThreadPoolBuilder<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let set = |o: bool| if o { "set" } else { "none" };
        f.debug_struct("ThreadPoolBuilder")
            .field("num_threads", &self.num_threads)
            .field("use_current_thread", &self.use_current_thread)
            .field("thread_name", &set(self.thread_name.is_some()))
            .field("panic_handler", &set(self.panic_handler.is_some()))
            .field("stack_size", &self.stack_size)
            .field("start_handler", &set(self.start_handler.is_some()))
            .field("exit_handler", &set(self.exit_handler.is_some()))
            .field("breadth_first", &self.breadth_first)
            .finish()
    }
}

impl ThreadPoolBuilder {
    /// A builder with the defaults: as many threads as `RAYON_NUM_THREADS` says, else as
    /// threadlab's default pool has (`THREADLAB_NUM_THREADS`, else the CPUs this process may
    /// use); panics of spawned tasks printed and counted; the OS's stack size.
    pub fn new() -> Self {
        ThreadPoolBuilder {
            num_threads: 0,
            use_current_thread: false,
            thread_name: None,
            panic_handler: None,
            stack_size: None,
            start_handler: None,
            exit_handler: None,
            breadth_first: false,
            spawn: DefaultSpawn,
        }
    }

    /// Builds a pool whose threads are scoped threads of the caller (`std::thread::scope`):
    /// each runs `wrapper`, which must call [`ThreadBuilder::run`], so the threads may borrow
    /// from the caller's stack (a scoped thread-local around `run`, say). `with_pool` gets the
    /// pool; once it returns, the pool is dropped and its threads joined, and its value is
    /// returned.
    ///
    /// # Errors
    /// As [`build`](ThreadPoolBuilder::build); an error of starting a thread.
    ///
    /// ```
    /// let started = std::sync::atomic::AtomicUsize::new(0);
    /// let answer = rayon_core::ThreadPoolBuilder::new().num_threads(2).build_scoped(
    ///     |thread| {
    ///         started.fetch_add(1, std::sync::atomic::Ordering::Relaxed); // a borrow
    ///         thread.run()
    ///     },
    ///     |pool| pool.install(|| 6 * 7),
    /// )?;
    /// assert_eq!((answer, started.into_inner()), (42, 2));
    /// # Ok::<(), rayon_core::ThreadPoolBuildError>(())
    /// ```
    pub fn build_scoped<W, F, R>(self, wrapper: W, with_pool: F) -> Result<R, ThreadPoolBuildError>
    where
        W: Fn(ThreadBuilder) + Sync,
        F: FnOnce(&ThreadPool) -> R,
    {
        std::thread::scope(|scope| {
            let wrapper = &wrapper;
            let pool = self
                .spawn_handler(|thread| {
                    let mut b = std::thread::Builder::new();
                    if let Some(name) = thread.name() {
                        b = b.name(name.to_owned());
                    }
                    if let Some(bytes) = thread.stack_size() {
                        b = b.stack_size(bytes);
                    }
                    b.spawn_scoped(scope, move || wrapper(thread))?;
                    Ok(())
                })
                .build()?;
            // The pool goes (its threads told to stop) before the scope joins them, whether
            // `with_pool` returned or panicked.
            let result =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| with_pool(&pool)));
            drop(pool);
            match result {
                Ok(r) => Ok(r),
                Err(p) => std::panic::resume_unwind(p),
            }
        })
    }
}

impl<S> ThreadPoolBuilder<S> {
    /// Starts the pool's threads with `spawn` instead of `std::thread::spawn`: it is called
    /// once per thread, during [`build`](ThreadPoolBuilder::build), with a [`ThreadBuilder`],
    /// and must start a thread that calls [`ThreadBuilder::run`] (or return an error, which
    /// `build` returns). The threads it starts are the program's: dropping the pool tells them
    /// to stop; joining them is up to the program.
    ///
    /// ```
    /// let mut handles = Vec::new();
    /// let pool = rayon_core::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .spawn_handler(|thread| {
    ///         handles.push(std::thread::Builder::new().spawn(|| thread.run())?);
    ///         Ok(())
    ///     })
    ///     .build()?;
    /// assert_eq!(pool.install(|| 1 + 1), 2);
    /// drop(pool);
    /// for h in handles {
    ///     h.join().unwrap();
    /// }
    /// # Ok::<(), rayon_core::ThreadPoolBuildError>(())
    /// ```
    pub fn spawn_handler<F>(self, spawn: F) -> ThreadPoolBuilder<CustomSpawn<F>>
    where
        F: FnMut(ThreadBuilder) -> io::Result<()>,
    {
        ThreadPoolBuilder {
            num_threads: self.num_threads,
            use_current_thread: self.use_current_thread,
            thread_name: self.thread_name,
            panic_handler: self.panic_handler,
            stack_size: self.stack_size,
            start_handler: self.start_handler,
            exit_handler: self.exit_handler,
            breadth_first: self.breadth_first,
            spawn: CustomSpawn(spawn),
        }
    }

    /// Names the pool's threads: `closure(index)` for each. Without it, the threads that
    /// threadlab starts are named `threadlab-<index>` (Rayon leaves them unnamed), and
    /// [`ThreadBuilder::name`] is `None`.
    pub fn thread_name<F>(mut self, closure: F) -> Self
    where
        F: FnMut(usize) -> String + 'static,
    {
        self.thread_name = Some(Box::new(closure));
        self
    }

    /// The number of threads; 0 (the default) means `RAYON_NUM_THREADS` if it holds a positive
    /// number, else threadlab's default count.
    pub fn num_threads(mut self, num_threads: usize) -> Self {
        self.num_threads = num_threads;
        self
    }

    /// Makes the building thread the pool's worker 0 (threadlab's
    /// `Builder::use_current_thread`): the pool starts one thread fewer, and the building
    /// thread runs the pool's work while it waits inside the pool. As in Rayon, `build` fails
    /// with "The current thread is already part of another thread pool." when the building
    /// thread is a pool's worker.
    pub fn use_current_thread(mut self) -> Self {
        self.use_current_thread = true;
        self
    }

    /// Receives the panics of spawned tasks ([`ThreadPool::spawn`], [`crate::spawn`],
    /// `spawn_fifo`, `spawn_broadcast`). Without one, such a panic is printed and counted, and
    /// the pool works on (Rayon aborts the process).
    pub fn panic_handler<H>(mut self, panic_handler: H) -> Self
    where
        H: Fn(Box<dyn Any + Send>) + Send + Sync + 'static,
    {
        self.panic_handler = Some(Box::new(panic_handler));
        self
    }

    /// The stack size of each of the pool's threads, in bytes.
    pub fn stack_size(mut self, stack_size: usize) -> Self {
        self.stack_size = Some(stack_size);
        self
    }

    /// Rayon's deprecated switch to make a pool's own workers take their oldest task first.
    /// threadlab's workers take their newest (warm in cache) and thieves the oldest, whatever
    /// this says: neither runtime promised an order among tasks that may run in parallel. For
    /// an order that holds, use [`scope_fifo`](crate::scope_fifo) and
    /// [`spawn_fifo`](crate::spawn_fifo).
    #[deprecated(note = "use `scope_fifo` and `spawn_fifo` for similar effect")]
    pub fn breadth_first(mut self) -> Self {
        self.breadth_first = true;
        self
    }

    /// Calls `start_handler(index)` on each of the pool's threads when it starts, before it
    /// runs any task. A panic in it goes to the panic handler.
    pub fn start_handler<H>(mut self, start_handler: H) -> Self
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.start_handler = Some(Box::new(start_handler));
        self
    }

    /// Calls `exit_handler(index)` on each of the pool's threads as it exits. A panic in it
    /// goes to the panic handler.
    pub fn exit_handler<H>(mut self, exit_handler: H) -> Self
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.exit_handler = Some(Box::new(exit_handler));
        self
    }

    /// The thread count asked for: the builder's, else `RAYON_NUM_THREADS`'s, else 0 (threadlab's
    /// default).
    fn threads(&self) -> usize {
        match self.num_threads {
            0 => global::rayon_num_threads().unwrap_or(0),
            n => n,
        }
    }

    /// threadlab's builder with these settings, the spawn handler, and whether threads are
    /// named.
    fn into_threadlab(self) -> (threadlab::Builder, S, bool) {
        let mut b = threadlab::Builder::new()
            .threads(self.threads())
            // Calls from outside the pool run on the pool's threads (Rayon's meaning) unless
            // `THREADLAB_RAYON_GUESTS` turns threadlab's guests on.
            .guests(global::guests_on());
        let named = self.thread_name.is_some();
        if let Some(f) = self.thread_name {
            b = b.thread_name(f);
        }
        if let Some(h) = self.panic_handler {
            b = b.panic_handler(h);
        }
        if let Some(bytes) = self.stack_size {
            b = b.stack_size(bytes);
        }
        if let Some(h) = self.start_handler {
            b = b.start_handler(h);
        }
        if let Some(h) = self.exit_handler {
            b = b.exit_handler(h);
        }
        if self.use_current_thread {
            b = b.use_current_thread();
        }
        (b, self.spawn, named)
    }
}

impl<S: ThreadSpawn> ThreadPoolBuilder<S> {
    /// Starts the pool.
    ///
    /// # Errors
    /// More threads than the system's limits leave room for, the OS refusing to start a thread,
    /// a spawn handler's error (threadlab's messages, which say what to do), or
    /// `use_current_thread` on a thread that is already a pool's worker.
    ///
    /// ```
    /// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(2).build()?;
    /// assert_eq!(pool.current_num_threads(), 2);
    /// # Ok::<(), rayon_core::ThreadPoolBuildError>(())
    /// ```
    pub fn build(self) -> Result<ThreadPool, ThreadPoolBuildError> {
        self.refuse_current_thread_in_pool()?;
        let (b, spawn, named) = self.into_threadlab();
        let pool = spawn.start(b, named)?;
        Ok(ThreadPool::from_parts(pool))
    }

    /// Makes this configuration the global pool: threadlab's global pool, which the free
    /// functions of this package and of threadlab (`threadlab::join`, its `par_iter`) share.
    ///
    /// # Errors
    /// "The global thread pool has already been initialized." when it exists (any free
    /// function of this package or of threadlab, called before, starts it); otherwise as
    /// [`build`](ThreadPoolBuilder::build).
    ///
    /// ```
    /// // Before any parallel call: the global pool gets two threads.
    /// rayon_core::ThreadPoolBuilder::new().num_threads(2).build_global()?;
    /// assert_eq!(rayon_core::current_num_threads(), 2);
    /// assert_eq!(threadlab::current_num_threads(), 2);
    /// # Ok::<(), rayon_core::ThreadPoolBuildError>(())
    /// ```
    pub fn build_global(self) -> Result<(), ThreadPoolBuildError> {
        self.refuse_current_thread_in_pool()?;
        let (b, spawn, named) = self.into_threadlab();
        Ok(spawn.start_global(b, named)?)
    }

    fn refuse_current_thread_in_pool(&self) -> Result<(), ThreadPoolBuildError> {
        if self.use_current_thread && threadlab::current_thread_index().is_some() {
            return Err(ThreadPoolBuildError::current_thread_already_in_pool());
        }
        Ok(())
    }
}

/// How a [`ThreadPoolBuilder`] starts its threads: [`DefaultSpawn`], or the handler given to
/// [`ThreadPoolBuilder::spawn_handler`] ([`CustomSpawn`]). Implemented by those two only.
pub trait ThreadSpawn: sealed::Sealed {}

mod sealed {
    /// What a [`ThreadSpawn`](super::ThreadSpawn) does; out of users' reach.
    pub trait Sealed {
        fn start(
            self,
            builder: threadlab::Builder,
            named: bool,
        ) -> Result<threadlab::Pool, threadlab::BuildError>;
        fn start_global(
            self,
            builder: threadlab::Builder,
            named: bool,
        ) -> Result<(), threadlab::BuildError>;
    }
}

/// The pool starts its threads itself (the default).
#[derive(Debug, Default, Clone, Copy)]
pub struct DefaultSpawn;

impl ThreadSpawn for DefaultSpawn {}

impl sealed::Sealed for DefaultSpawn {
    fn start(
        self,
        builder: threadlab::Builder,
        _named: bool,
    ) -> Result<threadlab::Pool, threadlab::BuildError> {
        builder.build()
    }

    fn start_global(
        self,
        builder: threadlab::Builder,
        _named: bool,
    ) -> Result<(), threadlab::BuildError> {
        builder.build_global()
    }
}

/// The threads come from a handler (see [`ThreadPoolBuilder::spawn_handler`]).
#[derive(Debug)]
pub struct CustomSpawn<F>(F);

impl<F> ThreadSpawn for CustomSpawn<F> where F: FnMut(ThreadBuilder) -> io::Result<()> {}

impl<F> sealed::Sealed for CustomSpawn<F>
where
    F: FnMut(ThreadBuilder) -> io::Result<()>,
{
    fn start(
        mut self,
        builder: threadlab::Builder,
        named: bool,
    ) -> Result<threadlab::Pool, threadlab::BuildError> {
        builder
            .spawn_handler(move |inner| (self.0)(ThreadBuilder { inner, named }))
            .build()
    }

    fn start_global(
        mut self,
        builder: threadlab::Builder,
        named: bool,
    ) -> Result<(), threadlab::BuildError> {
        builder
            .spawn_handler(move |inner| (self.0)(ThreadBuilder { inner, named }))
            .build_global()
    }
}

/// One of a pool's threads, for a spawn handler ([`ThreadPoolBuilder::spawn_handler`]) to
/// start: the thread it starts calls [`ThreadBuilder::run`].
pub struct ThreadBuilder {
    inner: threadlab::ThreadBuilder,
    /// The builder had a `thread_name`.
    named: bool,
}

impl fmt::Debug for ThreadBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadBuilder")
            .field("index", &self.index())
            .field("name", &self.name())
            .field("stack_size", &self.stack_size())
            .finish()
    }
}

impl ThreadBuilder {
    /// The thread's index in its pool.
    pub fn index(&self) -> usize {
        self.inner.index()
    }

    /// The name the builder's [`thread_name`](ThreadPoolBuilder::thread_name) gave this
    /// thread; `None` without one.
    pub fn name(&self) -> Option<&str> {
        if self.named {
            self.inner.name()
        } else {
            None
        }
    }

    /// The stack size the builder asked for, if any.
    pub fn stack_size(&self) -> Option<usize> {
        self.inner.stack_size()
    }

    /// Runs the pool's work on the current thread until the pool is dropped.
    pub fn run(self) {
        self.inner.run()
    }
}
