//! *Rendezvous Benchmark Analysis*'s rendezvous: a producer sends `n` numbers through a zero-capacity channel to
//! a consumer that sums them, on each runtime the `rendezvous` experiment compares — threadlab
//! (through flume's channel or threadlab's own), Tokio, two OS threads, and no runtime at all
//! (one thread polling both futures). Each run is checked (the consumer's sum) and returns its
//! wall and CPU time and what the process allocated meanwhile.

use crate::lab::alloc_count::{self, Counts};
use crate::measure::process_cpu_time;
use std::time::Instant;
use threadlab::Pool;

/// Which channel a threadlab variant passes its messages through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    Flume,
    /// `threadlab::channel::bounded(0)`.
    Threadlab,
}

/// One run's raw figures.
#[derive(Debug, Clone, Copy, Default)]
pub struct Run {
    pub secs: f64,
    pub cpu_secs: f64,
    /// Pool parks and wake-ups during the run (threadlab only; NaN elsewhere).
    pub parks: f64,
    pub wakeups: f64,
    /// Allocations and bytes allocated in the process during the run.
    pub allocs: Counts,
}

impl Run {
    /// A run of a variant without park and wake-up counters (not threadlab).
    pub fn uncounted((secs, cpu_secs, allocs): (f64, f64, Counts)) -> Run {
        Run {
            secs,
            cpu_secs,
            parks: f64::NAN,
            wakeups: f64::NAN,
            allocs,
        }
    }
}

/// The producer and the consumer: `n` numbers through a rendezvous channel; the consumer's sum.
fn endpoints(
    n: u64,
) -> (
    impl std::future::Future<Output = ()> + Send + 'static,
    impl std::future::Future<Output = u64> + Send + 'static,
) {
    let (tx, rx) = flume::bounded::<u64>(0);
    let producer = async move {
        for i in 0..n {
            if tx.send_async(i).await.is_err() {
                return;
            }
        }
    };
    let consumer = async move {
        let mut sum = 0u64;
        for _ in 0..n {
            match rx.recv_async().await {
                Ok(v) => sum = sum.wrapping_add(v),
                Err(_) => break,
            }
        }
        sum
    };
    (producer, consumer)
}

/// The same producer and consumer through `threadlab::channel::bounded(0)`, whose hand-off to
/// a waiting task goes into the waking worker's run-next slot.
fn tl_endpoints(
    n: u64,
) -> (
    impl std::future::Future<Output = ()> + Send + 'static,
    impl std::future::Future<Output = u64> + Send + 'static,
) {
    let (tx, rx) = threadlab::channel::bounded::<u64>(0);
    let producer = async move {
        for i in 0..n {
            if tx.send(i).await.is_err() {
                return;
            }
        }
    };
    let consumer = async move {
        let mut sum = 0u64;
        for _ in 0..n {
            match rx.recv().await {
                Ok(v) => sum = sum.wrapping_add(v),
                Err(_) => break,
            }
        }
        sum
    };
    (producer, consumer)
}

pub fn expected_sum(n: u64) -> u64 {
    if n == 0 {
        0
    } else {
        (n - 1).wrapping_mul(n) / 2
    }
}

/// Times one run of `body`, which returns the consumer's sum: wall and CPU seconds, and what the
/// process allocated meanwhile.
pub fn timed(
    n: u64,
    body: impl FnOnce() -> Result<u64, String>,
) -> Result<(f64, f64, Counts), String> {
    let cpu0 = process_cpu_time();
    let t0 = Instant::now();
    let (sum, allocs) = alloc_count::measure(body);
    let sum = sum?;
    let secs = t0.elapsed().as_secs_f64();
    let cpu = (process_cpu_time() - cpu0).as_secs_f64();
    if sum != expected_sum(n) {
        return Err(format!(
            "the consumer summed {sum}, expected {}",
            expected_sum(n)
        ));
    }
    Ok((secs, cpu, allocs))
}

/// Spawns the producer and the consumer on `pool` and returns the consumer's sum.
fn run_pair<P, C>(pool: &Pool, (producer, consumer): (P, C)) -> u64
where
    P: std::future::Future<Output = ()> + Send + 'static,
    C: std::future::Future<Output = u64> + Send + 'static,
{
    let p = pool.spawn_future(producer);
    let c = pool.spawn_future(consumer);
    let sum = c.join();
    p.join();
    sum
}

pub fn run_threadlab(pool: &Pool, n: u64, via: Via) -> Result<Run, String> {
    let before = pool.metrics();
    let (secs, cpu_secs, allocs) = timed(n, || {
        Ok(match via {
            Via::Flume => run_pair(pool, endpoints(n)),
            Via::Threadlab => run_pair(pool, tl_endpoints(n)),
        })
    })?;
    let after = pool.metrics();
    let total = |m: &threadlab::Metrics, f: fn(&threadlab::WorkerMetrics) -> u64| -> f64 {
        m.workers.iter().map(f).sum::<u64>() as f64
    };
    Ok(Run {
        secs,
        cpu_secs,
        parks: total(&after, |w| w.parks) - total(&before, |w| w.parks),
        wakeups: total(&after, |w| w.wakeups) - total(&before, |w| w.wakeups),
        allocs,
    })
}

pub fn run_tokio(rt: &tokio::runtime::Runtime, n: u64) -> Result<Run, String> {
    let measured = timed(n, || {
        let (producer, consumer) = endpoints(n);
        let p = rt.spawn(producer);
        let c = rt.spawn(consumer);
        rt.block_on(async move {
            let sum = c.await.map_err(|e| format!("tokio consumer: {e}"))?;
            p.await.map_err(|e| format!("tokio producer: {e}"))?;
            Ok(sum)
        })
    })?;
    Ok(Run::uncounted(measured))
}

/// A waker that does nothing: the `channel-only` variant polls both futures in turn anyway.
fn noop_waker() -> std::task::Waker {
    use std::task::{RawWaker, RawWakerVTable, Waker};
    const VTABLE: RawWakerVTable = RawWakerVTable::new(|_| RAW, |_| {}, |_| {}, |_| {});
    const RAW: RawWaker = RawWaker::new(std::ptr::null(), &VTABLE);
    // SAFETY: every function of the vtable ignores the (null) data pointer, and cloning returns
    // the same do-nothing waker: the RawWaker contract holds trivially.
    unsafe { Waker::from_raw(RAW) }
}

/// No runtime: this thread polls the producer and the consumer in turn until the consumer is
/// done. Every poll finds work (the other side has just made progress), so this is the
/// channel's own cost per message, the floor under every runtime's figure.
pub fn run_channel_only(n: u64) -> Result<Run, String> {
    use std::future::Future;
    use std::task::{Context, Poll};
    let measured = timed(n, || {
        let (producer, consumer) = endpoints(n);
        let mut producer = Box::pin(producer);
        let mut consumer = Box::pin(consumer);
        let waker = noop_waker();
        let mut cx = Context::from_waker(&waker);
        let mut produced = false;
        loop {
            if !produced {
                produced = producer.as_mut().poll(&mut cx).is_ready();
            }
            if let Poll::Ready(sum) = consumer.as_mut().poll(&mut cx) {
                return Ok(sum);
            }
        }
    })?;
    Ok(Run::uncounted(measured))
}

pub fn run_os_threads(n: u64) -> Result<Run, String> {
    let measured = timed(n, || {
        let (tx, rx) = flume::bounded::<u64>(0);
        let producer = std::thread::Builder::new()
            .name("rendezvous-producer".into())
            .spawn(move || {
                for i in 0..n {
                    if tx.send(i).is_err() {
                        return;
                    }
                }
            })
            .map_err(|e| format!("cannot start the producer thread: {e}"))?;
        let consumer = std::thread::Builder::new()
            .name("rendezvous-consumer".into())
            .spawn(move || rx.iter().take(n as usize).fold(0u64, u64::wrapping_add))
            .map_err(|e| format!("cannot start the consumer thread: {e}"))?;
        let sum = consumer
            .join()
            .map_err(|_| "the consumer thread panicked".to_string())?;
        producer
            .join()
            .map_err(|_| "the producer thread panicked".to_string())?;
        Ok(sum)
    })?;
    Ok(Run::uncounted(measured))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sum_is_checked() {
        assert_eq!(expected_sum(5), 10);
        assert!(timed(5, || Ok(9)).is_err());
        assert!(timed(5, || Ok(10)).is_ok());
    }
}
