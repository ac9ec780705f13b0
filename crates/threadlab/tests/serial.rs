//! SerialQueue: FIFO order and one task at a time, also under contention from many producers,
//! across batch boundaries, and after a task panics.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};
use threadlab::{Pool, SerialQueue};

const PRODUCERS: usize = 8;
const PER_PRODUCER: usize = if cfg!(miri) { 20 } else { 2_000 };

fn pool(threads: usize) -> Pool {
    Pool::builder().threads(threads).build().expect("pool")
}

/// Pushes a task that reports when everything before it has run.
fn flush(q: &SerialQueue) {
    let (tx, rx) = mpsc::channel();
    q.push(move || tx.send(()).unwrap());
    rx.recv_timeout(Duration::from_secs(60))
        .expect("the queue drains within 60 s");
}

#[test]
fn one_producer_gets_exact_fifo_order() {
    let pool = pool(4);
    let q = SerialQueue::new(&pool);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let n = 10 * threadlab::serial::BATCH + 7; // crosses several re-spawns of the drain
    for i in 0..n {
        let seen = Arc::clone(&seen);
        q.push(move || seen.lock().unwrap().push(i));
    }
    flush(&q);
    assert_eq!(*seen.lock().unwrap(), (0..n).collect::<Vec<_>>());
    assert!(q.is_empty());
}

#[test]
fn many_producers_one_task_at_a_time_and_fifo_per_producer() {
    let pool = pool(4);
    let q = SerialQueue::new(&pool);
    let in_flight = Arc::new(AtomicUsize::new(0));
    let overlaps = Arc::new(AtomicUsize::new(0));
    // The log's Mutex is never contended when the queue works (one task at a time); it only
    // makes the log shareable.
    let seen = Arc::new(Mutex::new(Vec::with_capacity(PRODUCERS * PER_PRODUCER)));
    std::thread::scope(|s| {
        for p in 0..PRODUCERS {
            let (q, in_flight, overlaps, seen) = (&q, &in_flight, &overlaps, &seen);
            s.spawn(move || {
                for i in 0..PER_PRODUCER {
                    let (in_flight, overlaps, seen) = (
                        Arc::clone(in_flight),
                        Arc::clone(overlaps),
                        Arc::clone(seen),
                    );
                    q.push(move || {
                        if in_flight.fetch_add(1, Ordering::SeqCst) != 0 {
                            overlaps.fetch_add(1, Ordering::SeqCst);
                        }
                        seen.lock().unwrap().push((p, i));
                        // Widen the window in which an overlapping task would be caught.
                        let t = Instant::now();
                        while t.elapsed() < Duration::from_micros(2) {
                            std::hint::spin_loop();
                        }
                        in_flight.fetch_sub(1, Ordering::SeqCst);
                    });
                }
            });
        }
        // Meanwhile keep the pool's workers busy with other work too, so drains get stolen
        // and re-spawned on different workers.
        for _ in 0..100 {
            pool.spawn(|| std::thread::sleep(Duration::from_micros(50)));
        }
    });
    flush(&q);
    assert_eq!(
        overlaps.load(Ordering::SeqCst),
        0,
        "two tasks of one queue overlapped"
    );
    let seen = seen.lock().unwrap();
    assert_eq!(
        seen.len(),
        PRODUCERS * PER_PRODUCER,
        "every task ran exactly once"
    );
    let mut next = [0usize; PRODUCERS];
    for &(p, i) in seen.iter() {
        assert_eq!(i, next[p], "producer {p}'s tasks ran out of order");
        next[p] += 1;
    }
}

#[test]
fn queues_share_workers_and_run_in_parallel_with_each_other() {
    // Sixteen queues on two workers: each queue is FIFO on its own, and all of them finish.
    let pool = pool(2);
    let queues: Vec<SerialQueue> = (0..16).map(|_| SerialQueue::new(&pool)).collect();
    let logs: Vec<Arc<Mutex<Vec<usize>>>> = (0..16).map(|_| Arc::default()).collect();
    for i in 0..500 {
        for (q, log) in queues.iter().zip(&logs) {
            let log = Arc::clone(log);
            q.push(move || log.lock().unwrap().push(i));
        }
    }
    for q in &queues {
        flush(q);
    }
    for log in &logs {
        assert_eq!(*log.lock().unwrap(), (0..500).collect::<Vec<_>>());
    }
}

#[test]
fn a_panicking_task_does_not_wedge_the_queue() {
    let pool = pool(2);
    let q = SerialQueue::new(&pool);
    let ran = Arc::new(AtomicUsize::new(0));
    for i in 0..200 {
        let ran = Arc::clone(&ran);
        q.push(move || {
            if i % 50 == 3 {
                panic!("task {i} fails on purpose");
            }
            ran.fetch_add(1, Ordering::SeqCst);
        });
    }
    flush(&q);
    assert_eq!(ran.load(Ordering::SeqCst), 200 - 4);
}

#[test]
fn tasks_can_push_onto_their_own_queue() {
    // *The overhead of spawning threads*'s self-requeueing job.
    let pool = pool(2);
    let q = SerialQueue::new(&pool);
    let (tx, rx) = mpsc::channel();
    fn step(q: SerialQueue, left: usize, tx: mpsc::Sender<()>) {
        let again = q.clone();
        q.push(move || {
            if left == 0 {
                tx.send(()).unwrap();
            } else {
                step(again, left - 1, tx);
            }
        });
    }
    step(q.clone(), 1_000, tx);
    rx.recv_timeout(Duration::from_secs(60))
        .expect("the chain finishes");
}
