//! Pipelines: items from a source pass through a chain of stages on the pool's workers, with a
//! bound on the items in flight. Each stage is *parallel* (any number of items at once),
//! *serial in order* (one item at a time, in the order the source produced them) or *serial out
//! of order* (one at a time, in any order). The shape is that of oneTBB's `parallel_pipeline`
//! (Intel, "Threading Building Blocks", `tbb::filter_mode::{parallel, serial_in_order,
//! serial_out_of_order}` and its token limit); this is our own implementation of the idea on
//! top of [`Scope`].
//!
//! # Algorithm
//!
//! Throughput is bound by the slowest serial stage, not by the sum of the stages, because
//! different items occupy different stages at the same time (the washer washes load 2 while the
//! dryer dries load 1).
//!
//! - **Tokens.** At most `max_in_flight` items exist between the source and the end of the last
//!   stage. Calling the source takes a token (the source is itself serial in order: one call at a
//!   time, and it numbers the items 0, 1, 2, …); an item that leaves the last stage gives its
//!   token back and, if the source is idle, starts the next source call. That is the
//!   back-pressure: when the slowest stage falls behind, items wait in front of it, the tokens
//!   run out, and the source stops being called until one comes back.
//! - **One task carries an item as far as it can.** A source call runs as a scope task; with the
//!   item it made, the task first starts the next source call (another task, if a token is free)
//!   and then runs the item through the stages one after the other. A parallel stage just runs.
//!   At a serial stage the task checks, under the pipeline's one lock, that the stage is free
//!   (and, in order, that this item's number is the one the stage expects next); if not, it
//!   leaves the item in the stage's waiting buffer (a map by number, at most `max_in_flight`
//!   items) and ends. The task that finishes an item at a serial stage takes the next ready
//!   waiting item, marks the stage busy for it, and spawns a task that carries it on; then it
//!   carries its own item on to the next stage.
//! - **Panics.** Every call of user code (source, stages) runs under `catch_unwind`. The first
//!   panic cancels the pipeline: no more source calls, every waiting item is dropped, every task
//!   drops the item it carries at its next step; when all tasks finished, [`Pipeline::run`]
//!   re-raises that first panic. Later panics' payloads are dropped where they are caught. An
//!   item (or the closures) is dropped exactly once: moved into the stage that panicked, it was
//!   dropped by the unwinding; the closures are dropped when the pipeline is.
//! - **Recorder.** Every source call and every stage call is a zone named by the stage on the
//!   running worker's track (the same records as [`zone!`](crate::zone)), so a recording shows
//!   which stage held a worker when; the counter track `pipeline in flight` follows the tokens.
//!
//! Items cross stages as `Box<dyn Any + Send>` (one allocation per item and stage), so item
//! types must be `'static`; the closures may borrow from the caller.

use std::any::Any;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::scope::Scope;
use crate::thread_pool::Pool;
use crate::trace::{hooks, Zone};
use crate::unwind::{resume_unwinding, Payload};

/// An item between two stages, its type erased; the builder's types guarantee the downcasts.
type Item = Box<dyn Any + Send>;
type SourceFn<'env> = Box<dyn FnMut() -> Option<Item> + Send + 'env>;
type SerialFn<'env> = Box<dyn FnMut(Item) -> Item + Send + 'env>;
type ParallelFn<'env> = Box<dyn Fn(Item) -> Item + Send + Sync + 'env>;

/// The name of the counter track that follows the number of items in flight.
const IN_FLIGHT_COUNTER: &str = "pipeline in flight";

/// A pipeline under construction: a source and the stages so far, whose last one yields `T`.
/// Made by [`Pipeline::new`]; run by [`Pipeline::run`] or [`Pipeline::run_on`].
///
/// ```
/// let pool = threadlab::Pool::builder().threads(2).build()?;
/// let mut next = 0;
/// let mut out = Vec::new();
/// let report = threadlab::Pipeline::new("count", 4, || {
///     next += 1;
///     (next <= 5).then_some(next)
/// })
/// .parallel("square", |x| x * x)
/// .serial_in_order("collect", |x| out.push(x))
/// .run_on(&pool);
/// assert_eq!(out, [1, 4, 9, 16, 25]);
/// assert_eq!(report.items, 5);
/// # Ok::<(), threadlab::BuildError>(())
/// ```
#[must_use = "a pipeline does nothing until `run` or `run_on`"]
pub struct Pipeline<'env, T> {
    max_in_flight: usize,
    source_name: &'static str,
    source: SourceFn<'env>,
    stages: Vec<Stage<'env>>,
    marker: std::marker::PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for Pipeline<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline")
            .field("max_in_flight", &self.max_in_flight)
            .field("source", &self.source_name)
            .field(
                "stages",
                &self.stages.iter().map(|s| s.name).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

/// What a finished pipeline did.
///
/// ```
/// // The one source call that returned `None` held a token.
/// let report = threadlab::Pipeline::new("none", 2, || None::<u32>).run();
/// assert_eq!(report, threadlab::PipelineReport { items: 0, peak_in_flight: 1 });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PipelineReport {
    /// Items that went through every stage.
    pub items: u64,
    /// The most tokens taken at once (items in flight, counting a source call under way).
    pub peak_in_flight: usize,
}

struct Stage<'env> {
    name: &'static str,
    body: Body<'env>,
}

enum Body<'env> {
    /// One call at a time; the lock is never contended (the stage's `busy` flag admits one
    /// task), it only makes the `FnMut` callable through a shared reference.
    Serial {
        in_order: bool,
        f: Mutex<SerialFn<'env>>,
    },
    Parallel(ParallelFn<'env>),
}

impl<'env, T: Send + 'static> Pipeline<'env, T> {
    /// A pipeline whose source, named `name` in recordings, is called (one call at a time) until
    /// it returns `None`, with at most `max_in_flight` items between the source and the end of
    /// the last stage.
    ///
    /// # Panics
    ///
    /// If `max_in_flight` is 0.
    ///
    /// ```
    /// let mut items = vec!["a", "b"].into_iter();
    /// let mut seen = Vec::new();
    /// threadlab::Pipeline::new("list", 1, move || items.next())
    ///     .serial_in_order("see", |s| seen.push(s))
    ///     .run();
    /// assert_eq!(seen, ["a", "b"]);
    /// ```
    pub fn new<F>(name: &'static str, max_in_flight: usize, mut source: F) -> Self
    where
        F: FnMut() -> Option<T> + Send + 'env,
    {
        assert!(
            max_in_flight > 0,
            "Pipeline::new: max_in_flight must be at least 1"
        );
        Pipeline {
            max_in_flight,
            source_name: name,
            source: Box::new(move || source().map(|t| Box::new(t) as Item)),
            stages: Vec::new(),
            marker: std::marker::PhantomData,
        }
    }

    fn push<U>(mut self, name: &'static str, body: Body<'env>) -> Pipeline<'env, U> {
        self.stages.push(Stage { name, body });
        Pipeline {
            max_in_flight: self.max_in_flight,
            source_name: self.source_name,
            source: self.source,
            stages: self.stages,
            marker: std::marker::PhantomData,
        }
    }

    /// A serial stage: one item at a time, in the source's order if `in_order`.
    fn serial<U, F>(self, name: &'static str, in_order: bool, mut f: F) -> Pipeline<'env, U>
    where
        U: Send + 'static,
        F: FnMut(T) -> U + Send + 'env,
    {
        let f: SerialFn<'env> = Box::new(move |item| Box::new(f(downcast::<T>(item))) as Item);
        self.push(
            name,
            Body::Serial {
                in_order,
                f: Mutex::new(f),
            },
        )
    }

    /// Adds a stage that takes one item at a time, in the order the source produced them.
    ///
    /// ```
    /// let mut n = 0;
    /// let mut order = Vec::new();
    /// threadlab::Pipeline::new("n", 8, || { n += 1; (n <= 100).then_some(n) })
    ///     .parallel("work", |x| x)
    ///     .serial_in_order("write", |x| order.push(x))
    ///     .run();
    /// assert_eq!(order, (1..=100).collect::<Vec<_>>());
    /// ```
    pub fn serial_in_order<U, F>(self, name: &'static str, f: F) -> Pipeline<'env, U>
    where
        U: Send + 'static,
        F: FnMut(T) -> U + Send + 'env,
    {
        self.serial(name, true, f)
    }

    /// Adds a stage that takes one item at a time, in any order.
    ///
    /// ```
    /// let mut n = 0;
    /// let mut sum = 0;
    /// threadlab::Pipeline::new("n", 4, || { n += 1; (n <= 10).then_some(n) })
    ///     .serial_out_of_order("add", |x| sum += x)
    ///     .run();
    /// assert_eq!(sum, 55);
    /// ```
    pub fn serial_out_of_order<U, F>(self, name: &'static str, f: F) -> Pipeline<'env, U>
    where
        U: Send + 'static,
        F: FnMut(T) -> U + Send + 'env,
    {
        self.serial(name, false, f)
    }

    /// Adds a stage that runs on any number of items at once.
    ///
    /// ```
    /// let mut n = 0u64;
    /// let mut total = 0;
    /// threadlab::Pipeline::new("n", 4, || { n += 1; (n <= 4).then_some(n) })
    ///     .parallel("double", |x| 2 * x)
    ///     .serial_out_of_order("sum", |x| total += x)
    ///     .run();
    /// assert_eq!(total, 20);
    /// ```
    pub fn parallel<U, F>(self, name: &'static str, f: F) -> Pipeline<'env, U>
    where
        U: Send + 'static,
        F: Fn(T) -> U + Send + Sync + 'env,
    {
        let f: ParallelFn<'env> = Box::new(move |item| Box::new(f(downcast::<T>(item))) as Item);
        self.push(name, Body::Parallel(f))
    }

    /// Runs the pipeline on `pool` and returns when every item went through every stage (their
    /// last outputs are dropped). Re-raises the first panic of the source or a stage, after every
    /// task of the pipeline finished.
    ///
    /// ```
    /// let pool = threadlab::Pool::builder().threads(2).build()?;
    /// let mut n = 0;
    /// let r = threadlab::Pipeline::new("n", 2, || { n += 1; (n <= 3).then_some(n) }).run_on(&pool);
    /// assert_eq!(r.items, 3);
    /// assert!(r.peak_in_flight <= 2);
    /// # Ok::<(), threadlab::BuildError>(())
    /// ```
    pub fn run_on(self, pool: &Pool) -> PipelineReport {
        let run = Run::new(self);
        pool.scope(|s| run.fill(s));
        run.finish()
    }

    /// Runs the pipeline like [`Pipeline::run_on`], on the current worker's pool (else the
    /// global one).
    ///
    /// ```
    /// let mut n = 0;
    /// let r = threadlab::Pipeline::new("n", 3, || { n += 1; (n <= 7).then_some(n) })
    ///     .parallel("id", |x| x)
    ///     .run();
    /// assert_eq!(r.items, 7);
    /// ```
    pub fn run(self) -> PipelineReport {
        let run = Run::new(self);
        crate::scope(|s| run.fill(s));
        run.finish()
    }
}

fn downcast<T: 'static>(item: Item) -> T {
    match item.downcast::<T>() {
        Ok(t) => *t,
        // The builder chains the types, so a stage always gets what the previous one made.
        Err(_) => unreachable!("pipeline: an item of the wrong type reached a stage"),
    }
}

/// A running pipeline: the closures, and the bookkeeping under one lock.
struct Run<'env> {
    max_in_flight: usize,
    source_name: &'static str,
    source: Mutex<SourceFn<'env>>,
    stages: Vec<Stage<'env>>,
    state: Mutex<State>,
}

struct State {
    /// Tokens taken: items made or being made and not yet through the last stage.
    in_flight: usize,
    peak_in_flight: usize,
    items_done: u64,
    /// The number the source's next item gets.
    next_seq: u64,
    source_busy: bool,
    source_done: bool,
    /// The first panic; set means cancelled.
    panic: Option<Payload>,
    /// One per stage; used by serial stages only.
    serial: Vec<SerialState>,
}

#[derive(Default)]
struct SerialState {
    /// A task holds the stage (is running or about to run an item through it).
    busy: bool,
    /// In order: the number of the item the stage takes next.
    next_seq: u64,
    /// Items that arrived while the stage was busy or (in order) before their turn.
    waiting: BTreeMap<u64, Item>,
}

impl<'env> Run<'env> {
    fn new<T>(p: Pipeline<'env, T>) -> Self {
        let serial = p.stages.iter().map(|_| SerialState::default()).collect();
        Run {
            max_in_flight: p.max_in_flight,
            source_name: p.source_name,
            source: Mutex::new(p.source),
            stages: p.stages,
            state: Mutex::new(State {
                in_flight: 0,
                peak_in_flight: 0,
                items_done: 0,
                next_seq: 0,
                source_busy: false,
                source_done: false,
                panic: None,
                serial,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // No user code runs under this lock, so it cannot be poisoned; be lenient anyway.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn finish(self) -> PipelineReport {
        let mut state = self
            .state
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(p) = state.panic.take() {
            // Items still waiting (none unless a task raced the cancel) drop with `state`.
            drop(state);
            resume_unwinding(p);
        }
        debug_assert!(
            state.serial.iter().all(|s| s.waiting.is_empty()),
            "pipeline: items left"
        );
        PipelineReport {
            items: state.items_done,
            peak_in_flight: state.peak_in_flight,
        }
    }

    /// Starts a source call if a token is free, the source is idle, and nothing failed.
    fn fill<'s>(&'s self, s: &Scope<'s>) {
        let mut st = self.lock();
        if st.panic.is_some()
            || st.source_done
            || st.source_busy
            || st.in_flight >= self.max_in_flight
        {
            return;
        }
        st.source_busy = true;
        st.in_flight += 1;
        st.peak_in_flight = st.peak_in_flight.max(st.in_flight);
        let in_flight = st.in_flight;
        drop(st);
        hooks::queue_depth(IN_FLIGHT_COUNTER, in_flight as i64);
        s.spawn(move |s| self.pull(s));
    }

    /// One source call (this task holds the source), then the item's way through the stages.
    fn pull<'s>(&'s self, s: &Scope<'s>) {
        let made = {
            let _zone = Zone::begin(self.source_name);
            let mut source = self.source.lock().unwrap_or_else(PoisonError::into_inner);
            catch_unwind(AssertUnwindSafe(&mut *source))
        };
        let mut st = self.lock();
        st.source_busy = false;
        match made {
            Ok(Some(item)) => {
                let seq = st.next_seq;
                st.next_seq += 1;
                drop(st);
                self.fill(s);
                self.carry(s, item, seq, 0);
            }
            Ok(None) => {
                st.source_done = true;
                st.in_flight -= 1;
            }
            Err(p) => {
                st.in_flight -= 1;
                self.cancel(st, p);
            }
        }
    }

    /// Carries item `seq` from stage `from` on, until it finishes, waits at a serial stage, or
    /// the pipeline is cancelled.
    fn carry<'s>(&'s self, s: &Scope<'s>, mut item: Item, seq: u64, from: usize) {
        for (i, stage) in self.stages.iter().enumerate().skip(from) {
            item = match &stage.body {
                Body::Parallel(f) => {
                    if self.lock().panic.is_some() {
                        return; // cancelled: `item` drops here
                    }
                    match self.call(stage.name, || f(item)) {
                        Some(next) => next,
                        None => return,
                    }
                }
                Body::Serial { in_order, .. } => {
                    let mut st = self.lock();
                    if st.panic.is_some() {
                        drop(st);
                        return; // cancelled: `item` drops here
                    }
                    let ss = &mut st.serial[i];
                    if ss.busy || (*in_order && seq != ss.next_seq) {
                        ss.waiting.insert(seq, item);
                        return;
                    }
                    ss.busy = true;
                    drop(st);
                    match self.run_serial(s, i, item, seq) {
                        Some(next) => next,
                        None => return,
                    }
                }
            };
        }
        let mut st = self.lock();
        st.in_flight -= 1;
        st.items_done += 1;
        let in_flight = st.in_flight;
        drop(st);
        drop(item); // the last stage's output, outside the lock
        hooks::queue_depth(IN_FLIGHT_COUNTER, in_flight as i64);
        self.fill(s);
    }

    /// Runs item `seq` through serial stage `i`, which this task holds (`busy`); then hands the
    /// stage to the next ready waiting item, in a task of its own. `None` if the stage panicked.
    fn run_serial<'s>(&'s self, s: &Scope<'s>, i: usize, item: Item, seq: u64) -> Option<Item> {
        let Body::Serial { in_order, f } = &self.stages[i].body else {
            unreachable!("pipeline: run_serial on a parallel stage")
        };
        let out = {
            let mut f = f.lock().unwrap_or_else(PoisonError::into_inner);
            self.call(self.stages[i].name, || f(item))
        };
        let mut st = self.lock();
        let ss = &mut st.serial[i];
        ss.busy = false;
        ss.next_seq = seq + 1;
        if out.is_some() && st.panic.is_none() {
            let ss = &mut st.serial[i];
            let ready = if *in_order {
                let key = ss.next_seq;
                ss.waiting.remove(&key).map(|w| (key, w))
            } else {
                ss.waiting.pop_first()
            };
            if let Some((wseq, witem)) = ready {
                ss.busy = true;
                drop(st);
                s.spawn(move |s| {
                    if let Some(next) = self.run_serial(s, i, witem, wseq) {
                        self.carry(s, next, wseq, i + 1);
                    }
                });
            }
        }
        out
    }

    /// Calls user code in a zone named `name`; on a panic, cancels the pipeline and returns None.
    fn call(&self, name: &'static str, f: impl FnOnce() -> Item) -> Option<Item> {
        let result = {
            let _zone = Zone::begin(name);
            catch_unwind(AssertUnwindSafe(f))
        };
        match result {
            Ok(item) => Some(item),
            Err(p) => {
                self.cancel(self.lock(), p);
                None
            }
        }
    }

    /// Records the first panic (dropping later ones) and drops every waiting item.
    #[cold]
    fn cancel(&self, mut st: MutexGuard<'_, State>, p: Payload) {
        let later = if st.panic.is_none() {
            st.panic = Some(p);
            None
        } else {
            Some(p)
        };
        let waiting: Vec<BTreeMap<u64, Item>> = st
            .serial
            .iter_mut()
            .map(|ss| std::mem::take(&mut ss.waiting))
            .collect();
        drop(st);
        // Outside the lock: an item's or a payload's drop is user code.
        drop(waiting);
        drop(later);
    }
}
