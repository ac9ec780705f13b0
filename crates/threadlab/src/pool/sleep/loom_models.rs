//! Loom models of the sleep protocol (`mod.rs`, `park.rs`), the elastic pool's retire/restart race
//! (`retire.rs`), lent seats and waiting guests (`guests.rs`) and the monitor's sleep
//! (`monitor.rs`): a lost wake-up shows up as a deadlock or a failed count, which loom reports.

use super::Sleep;
use crate::latch::CoreLatch;
use crate::loom::cell::UnsafeCell;
use crate::loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use crate::loom::sync::Arc;
use crate::loom::thread;
use crate::pool::WakePolicy;

/// The loop of a model's only worker that never retires: sleeps (searching when woken as a
/// searcher) until `done`, with `has_work` what it sees in the queues, then stops searching if it
/// still is.
fn sleep_until(
    s: &Sleep,
    latch: Option<&CoreLatch>,
    done: impl Fn() -> bool,
    has_work: impl Fn() -> bool,
) {
    s.register_thread(0);
    let mut searching = false;
    while !done() {
        let woken = s.sleep(0, searching, latch, None, &has_work, || {});
        searching = woken.searching;
    }
    if searching {
        s.stop_searching();
    }
}

/// A job pushed from outside the pool (the injector's SeqCst length, then `notify_work`)
/// while the only worker goes to sleep, under each wake policy: the worker always ends up
/// seeing it (woken, or, under the lazy policy, at its next poll).
fn outside_push_vs_going_to_sleep(policy: WakePolicy) {
    crate::loom::model(move || {
        let sleep = Arc::new(Sleep::new(1, policy));
        let queue = Arc::new(AtomicUsize::new(0));
        let (s, q) = (Arc::clone(&sleep), Arc::clone(&queue));
        let worker = thread::spawn(move || {
            // SeqCst: the injector's length, as `Registry::has_visible_work` reads it.
            let queued = || q.load(Ordering::SeqCst) > 0;
            sleep_until(&s, None, queued, queued);
        });
        queue.store(1, Ordering::SeqCst);
        sleep.notify_work();
        worker.join().unwrap();
    });
}

#[test]
fn loom_outside_push_vs_going_to_sleep() {
    outside_push_vs_going_to_sleep(WakePolicy::Default);
}

#[test]
fn loom_outside_push_vs_going_to_sleep_eager() {
    outside_push_vs_going_to_sleep(WakePolicy::Eager);
}

#[test]
fn loom_outside_push_vs_going_to_sleep_lazy() {
    outside_push_vs_going_to_sleep(WakePolicy::Lazy);
}

/// A worker waiting for its latch (a stolen `join` half) goes to sleep while the thief sets
/// the latch and wakes it: the waiter always returns.
#[test]
fn loom_latch_set_vs_waiter_going_to_sleep() {
    crate::loom::model(|| {
        let sleep = Arc::new(Sleep::new(1, WakePolicy::Default));
        let latch = Arc::new(CoreLatch::new());
        let (s, l) = (Arc::clone(&sleep), Arc::clone(&latch));
        let waiter = thread::spawn(move || sleep_until(&s, Some(&l), || l.probe(), || false));
        // The thief's `SpinLatch::set`: set the core, wake the target if it announced sleep.
        // SAFETY: `latch` is alive (the Arc) for the whole call.
        if unsafe { CoreLatch::set_core(&*latch) } {
            sleep.wake_specific(0);
        }
        waiter.join().unwrap();
    });
}

/// The retire/return race of an elastic pool: the only worker's keep-alive has run out (its
/// deadline is in the past, so it tries to retire the moment it would park) while a job is
/// pushed from outside (`notify_work`, or `notify_worker` for its inbox). A retired worker is
/// restarted by the wake-up (`Sleep::set_restart`; here the restart spawns a loom thread that
/// runs the same loop). In every interleaving the job runs exactly once, and every thread ends.
fn push_vs_retiring(to_worker: bool) {
    use std::sync::Mutex as StdMutex;
    use std::time::Instant;

    type Cell = std::sync::Arc<StdMutex<Option<Arc<Sleep>>>>;

    /// A worker of the model: take the job if there is one, sleep, retire or go round again.
    fn worker(s: &Sleep, q: &AtomicUsize, ran: &AtomicUsize, mut searching: bool) {
        s.register_thread(0);
        loop {
            // SeqCst: the queue's length, as `Registry::has_visible_work` reads it.
            if q.load(Ordering::SeqCst) > 0 {
                q.fetch_sub(1, Ordering::SeqCst);
                ran.fetch_add(1, Ordering::SeqCst);
            }
            let past = Some(Instant::now());
            let woken = s.sleep(
                0,
                searching,
                None,
                past,
                || q.load(Ordering::SeqCst) > 0,
                || {},
            );
            if woken.retired {
                return;
            }
            searching = woken.searching;
        }
    }

    crate::loom::model(move || {
        let sleep = Arc::new(Sleep::new(1, WakePolicy::Default));
        let queue = Arc::new(AtomicUsize::new(0));
        let ran = Arc::new(AtomicUsize::new(0));
        let cell: Cell = std::sync::Arc::new(StdMutex::new(Some(Arc::clone(&sleep))));
        let restarted = std::sync::Arc::new(StdMutex::new(Vec::new()));
        {
            let (cell, restarted) = (cell.clone(), restarted.clone());
            let (q, r) = (Arc::clone(&queue), Arc::clone(&ran));
            sleep.set_restart(Box::new(move |index, searching| {
                assert_eq!(index, 0);
                let s = cell
                    .lock()
                    .unwrap()
                    .clone()
                    .expect("restart after the model ended");
                let (q, r) = (Arc::clone(&q), Arc::clone(&r));
                let h = thread::spawn(move || worker(&s, &q, &r, searching));
                restarted.lock().unwrap().push(h);
                true
            }));
        }
        let first = {
            let (s, q, r) = (Arc::clone(&sleep), Arc::clone(&queue), Arc::clone(&ran));
            thread::spawn(move || worker(&s, &q, &r, false))
        };
        queue.fetch_add(1, Ordering::SeqCst);
        if to_worker {
            sleep.notify_worker(0);
        } else {
            sleep.notify_work();
        }
        first.join().unwrap();
        loop {
            let h = restarted.lock().unwrap().pop();
            match h {
                Some(h) => h.join().unwrap(),
                None => break,
            }
        }
        assert_eq!(
            ran.load(Ordering::SeqCst),
            1,
            "the job was lost or ran twice"
        );
        assert_eq!(queue.load(Ordering::SeqCst), 0);
        // Break the cycle Sleep → restart → cell → Sleep.
        cell.lock().unwrap().take();
    });
}

#[test]
fn loom_push_vs_last_worker_retiring() {
    push_vs_retiring(false);
}

#[test]
fn loom_inbox_push_vs_its_worker_retiring() {
    push_vs_retiring(true);
}

/// A worker sleeping in its loop (no latch) whose seat a guest borrows: the worker never
/// returns from `sleep` while the seat is lent (also when the lend comes during its re-check
/// before parking), and a job the guest leaves behind, whose push woke nobody, is seen: the
/// worker ends up running it (`give_back`'s re-check wakes it, or its own re-check sees it).
/// When no seat can be lent (the worker has not gone to sleep yet), the guest falls back to
/// the outside push.
#[test]
fn loom_lend_and_give_back_vs_going_to_sleep() {
    crate::loom::model(|| {
        let sleep = Arc::new(Sleep::new(1, WakePolicy::Default));
        let queue = Arc::new(AtomicUsize::new(0));
        let lent = Arc::new(AtomicUsize::new(0));
        let (s, q, l) = (Arc::clone(&sleep), Arc::clone(&queue), Arc::clone(&lent));
        let worker = thread::spawn(move || {
            s.register_thread(0);
            let mut searching = false;
            while q.load(Ordering::SeqCst) == 0 {
                let woken = s.sleep(
                    0,
                    searching,
                    None,
                    None,
                    || q.load(Ordering::SeqCst) > 0,
                    || {},
                );
                assert_eq!(l.load(Ordering::SeqCst), 0, "woke into a lent seat");
                searching = woken.searching;
            }
            if searching {
                s.stop_searching();
            }
        });
        match sleep.lend(thread::current()) {
            Some(index) => {
                assert_eq!(index, 0);
                lent.store(1, Ordering::SeqCst);
                // The guest's leftover job, pushed onto the seat: a local push, no wake.
                queue.store(1, Ordering::SeqCst);
                lent.store(0, Ordering::SeqCst);
                sleep.give_back(0, || queue.load(Ordering::SeqCst) > 0);
            }
            None => {
                queue.store(1, Ordering::SeqCst);
                sleep.notify_work();
            }
        }
        worker.join().unwrap();
    });
}

/// A guest waiting on a latch of its borrowed seat (`WorkerThread::guest_wait`) while a thief
/// sets it: the thief's `wake_specific` finds the seat lent and wakes the guest, which
/// always returns; the seat's worker stays parked until the seat is given back.
#[test]
fn loom_guest_latch_wait_vs_set() {
    crate::loom::model(|| {
        let sleep = Arc::new(Sleep::new(1, WakePolicy::Default));
        let queue = Arc::new(AtomicUsize::new(0));
        let (s, q) = (Arc::clone(&sleep), Arc::clone(&queue));
        let worker = thread::spawn(move || {
            let queued = || q.load(Ordering::SeqCst) > 0;
            sleep_until(&s, None, queued, queued);
        });
        // Wait until the worker sleeps, so the seat can be lent.
        let index = loop {
            if let Some(i) = sleep.lend(thread::current()) {
                break i;
            }
            thread::yield_now();
        };
        let latch = Arc::new(CoreLatch::new());
        let (s, l) = (Arc::clone(&sleep), Arc::clone(&latch));
        let thief = thread::spawn(move || {
            // SAFETY: `l` is alive (the Arc) for the whole call.
            if unsafe { CoreLatch::set_core(&*l) } {
                s.wake_specific(index);
            }
        });
        // The guest's wait: announce, park, withdraw the announcement, look again.
        while !latch.probe() {
            if latch.get_sleepy() {
                thread::park();
                latch.wake_up();
            }
        }
        thief.join().unwrap();
        sleep.give_back(index, || queue.load(Ordering::SeqCst) > 0);
        queue.store(1, Ordering::SeqCst);
        sleep.notify_work();
        worker.join().unwrap();
    });
}

/// The stack-resident state of one thread of the seat (its `WorkerThread`), as the model sees
/// it: `alive` from the thread's start until it retires (its stack is freed then), `uses` the
/// seat's state proper, which loom checks is never used by two threads without a
/// happens-before between them (the worker and the guest that borrowed its seat).
struct Frame {
    alive: AtomicBool,
    uses: UnsafeCell<usize>,
}

// SAFETY: `uses` is only reached through `Frame::touch`, whose accesses loom checks for a
// happens-before between any two of them (the model's claim: one user of a seat at a time).
unsafe impl Sync for Frame {}

impl Frame {
    fn new() -> Self {
        Frame {
            alive: AtomicBool::new(false),
            uses: UnsafeCell::new(0),
        }
    }

    /// A use of the state by whoever holds the seat: it must be alive.
    fn touch(&self, who: &str) {
        // SeqCst: a load that comes after the retiring thread's store in loom's order sees it.
        assert!(
            self.alive.load(Ordering::SeqCst),
            "{who} used the seat's stack state after its worker retired"
        );
        // SAFETY: loom checks the claim this model makes (one user at a time, ordered by the
        // sleep protocol); the cell is only counted in.
        self.uses.with_mut(|u| unsafe { *u += 1 });
    }
}

/// Enough threads for the seat: the first and at most two restarts (one per wake-up the model
/// makes: the submitter's and the give-back's).
const SEAT_THREADS: usize = 3;

/// What the model's threads share: the pool's sleep state, one queue (the injector and the
/// seat's deque in one count: `has_visible_work` reads both), the jobs run, and the frames of
/// the seat's successive threads with the index of the current one (`Registry::guest_seats`).
struct Seat {
    sleep: Sleep,
    queue: AtomicUsize,
    ran: AtomicUsize,
    frames: [Frame; SEAT_THREADS],
    current: AtomicUsize,
}

/// A thread of the seat: publish its frame, run what is queued, sleep with its keep-alive
/// already over (it tries to retire the moment it would park), and on retiring free its frame.
fn seat_thread(seat: &Seat, generation: usize, mut searching: bool) {
    use std::time::Instant;
    let frame = &seat.frames[generation];
    frame.alive.store(true, Ordering::SeqCst);
    seat.sleep.register_thread(0);
    // Release: pairs with the guest's Acquire load after `lend` (as `worker::main` publishes
    // its `WorkerThread` in `guest_seats`).
    seat.current.store(generation, Ordering::Release);
    loop {
        // SeqCst: the queue's length, as `Registry::has_visible_work` reads it.
        if seat.queue.load(Ordering::SeqCst) > 0 {
            seat.queue.fetch_sub(1, Ordering::SeqCst);
            frame.touch("the worker");
            seat.ran.fetch_add(1, Ordering::SeqCst);
        }
        let woken = seat.sleep.sleep(
            0,
            searching,
            None,
            Some(Instant::now()),
            || seat.queue.load(Ordering::SeqCst) > 0,
            || {},
        );
        if woken.retired {
            // The thread leaves its loop: its `WorkerThread` goes with its stack.
            frame.alive.store(false, Ordering::SeqCst);
            return;
        }
        searching = woken.searching;
    }
}

/// An elastic pool's only worker whose keep-alive has run out, a guest (an `install` from a
/// plain thread) that borrows its seat, uses the seat's state, leaves a job on it and gives
/// it back, and a submitter that pushes a job from outside meanwhile. Checks that the guest
/// never uses the worker's stack state once the worker may have retired (`recheck_reads_seat`
/// makes the give-back's re-check read it, as the guest did before it kept to the registry:
/// the model must then fail), that both jobs run (by the worker or a thread restarted for its
/// seat), and that every thread ends (loom reports a deadlock otherwise).
fn guest_gives_back_while_worker_retires(leaves_job: bool, recheck_reads_seat: bool) {
    use std::sync::Mutex as StdMutex;

    type Cell = std::sync::Arc<StdMutex<Option<Arc<Seat>>>>;

    crate::loom::model_with_preemptions(PREEMPTIONS, move || {
        let seat = Arc::new(Seat {
            sleep: Sleep::new(1, WakePolicy::Default),
            queue: AtomicUsize::new(0),
            ran: AtomicUsize::new(0),
            frames: [Frame::new(), Frame::new(), Frame::new()],
            current: AtomicUsize::new(0),
        });
        let cell: Cell = std::sync::Arc::new(StdMutex::new(Some(Arc::clone(&seat))));
        let restarted = std::sync::Arc::new(StdMutex::new((1, Vec::new())));
        {
            let (cell, restarted) = (cell.clone(), restarted.clone());
            seat.sleep.set_restart(Box::new(move |index, searching| {
                assert_eq!(index, 0);
                let s = cell
                    .lock()
                    .unwrap()
                    .clone()
                    .expect("restart after the model ended");
                // The std lock is never held across a loom operation (loom runs every model
                // thread on one OS thread).
                let generation = {
                    let mut r = restarted.lock().unwrap();
                    r.0 += 1;
                    r.0 - 1
                };
                assert!(generation < SEAT_THREADS, "more restarts than wake-ups");
                let h = thread::spawn(move || seat_thread(&s, generation, searching));
                restarted.lock().unwrap().1.push(h);
                true
            }));
        }
        let worker = {
            let s = Arc::clone(&seat);
            thread::spawn(move || seat_thread(&s, 0, false))
        };
        let submitter = {
            let s = Arc::clone(&seat);
            thread::spawn(move || {
                s.queue.fetch_add(1, Ordering::SeqCst);
                s.sleep.notify_work();
            })
        };
        // The guest (`Registry::in_worker_cold`, `worker::run_as_guest`).
        match seat.sleep.lend(thread::current()) {
            Some(index) => {
                assert_eq!(index, 0);
                // Acquire: pairs with the seat thread's Release store of its generation.
                let frame = &seat.frames[seat.current.load(Ordering::Acquire)];
                frame.touch("the guest");
                if leaves_job {
                    // A task it spawned and left on the seat: a local push, no wake-up.
                    seat.queue.fetch_add(1, Ordering::SeqCst);
                }
                // `leave_as_guest`: the guest's last use of the seat's state.
                frame.touch("the guest");
                seat.sleep.give_back(0, || {
                    if recheck_reads_seat {
                        frame.touch("the guest's re-check");
                    }
                    seat.queue.load(Ordering::SeqCst) > 0
                });
            }
            None if leaves_job => {
                // No seat to borrow: the install goes to the injector.
                seat.queue.fetch_add(1, Ordering::SeqCst);
                seat.sleep.notify_work();
            }
            None => {}
        }
        submitter.join().unwrap();
        worker.join().unwrap();
        loop {
            let h = restarted.lock().unwrap().1.pop();
            match h {
                Some(h) => h.join().unwrap(),
                None => break,
            }
        }
        assert_eq!(
            seat.ran.load(Ordering::SeqCst),
            1 + usize::from(leaves_job),
            "a job was lost or ran twice"
        );
        // Break the cycle Sleep → restart → cell → Seat.
        cell.lock().unwrap().take();
    });
}

/// The guest models explore every interleaving with at most four preemptions: with five they
/// take about a minute on two cores and without a bound more than twenty; every defect they
/// were checked against shows within four (the re-check reading the seat's stack state from
/// three on, a give-back without its re-check, a give-back without the elastic pool's unpark,
/// an unpark that disturbs a lock wait).
const PREEMPTIONS: Option<usize> = Some(4);

#[test]
fn loom_guest_gives_back_while_worker_retires() {
    guest_gives_back_while_worker_retires(true, false);
}

#[test]
fn loom_guest_gives_back_nothing_while_worker_retires() {
    guest_gives_back_while_worker_retires(false, false);
}

#[test]
#[should_panic(expected = "used the seat's stack state after its worker retired")]
fn loom_guest_rechecking_through_the_seat_is_caught() {
    guest_gives_back_while_worker_retires(true, true);
}

/// A guest with nothing to do parks on its own thread, on no sleeper list (its seat's worker
/// stays parked), while another thread publishes work: the count of waiting guests and the
/// fence pair make either the guest's re-check see the work or the pusher's `notify_work`
/// unpark the guest. The guest parks without a timeout here, so a lost wake-up is a deadlock
/// loom reports. Three threads and a lend make the full model take a minute: explored with at
/// most three preemptions (a lost wake-up needs one, between the re-check and the park).
#[test]
fn loom_a_waiting_guest_is_woken_by_new_work() {
    crate::loom::model_with_preemptions(Some(3), || {
        let sleep = Arc::new(Sleep::new(1, WakePolicy::Default));
        let queue = Arc::new(AtomicUsize::new(0));
        let (s, q) = (Arc::clone(&sleep), Arc::clone(&queue));
        let worker = thread::spawn(move || {
            let has_work = || q.load(Ordering::SeqCst) > 0;
            sleep_until(&s, None, has_work, has_work);
        });
        let index = loop {
            if let Some(i) = sleep.lend(thread::current()) {
                break i;
            }
            thread::yield_now();
        };
        let (s, q) = (Arc::clone(&sleep), Arc::clone(&queue));
        let pusher = thread::spawn(move || {
            q.store(1, Ordering::SeqCst);
            s.notify_work();
        });
        // The guest's wait (`WorkerThread::guest_wait`): counted, fence, re-check, park.
        while queue.load(Ordering::SeqCst) == 0 {
            assert!(
                sleep.guest_parks(index),
                "a lent seat's guest was not counted"
            );
            crate::loom::sync::atomic::fence(Ordering::SeqCst);
            if queue.load(Ordering::SeqCst) == 0 {
                thread::park();
            }
            sleep.guest_unparks(index);
        }
        pusher.join().unwrap();
        sleep.give_back(index, || queue.load(Ordering::SeqCst) > 0);
        worker.join().unwrap();
    });
}

/// The spare-thread monitor's sleep (`monitor.rs`): the monitor, looking at the sleeper list,
/// marks itself asleep only while every worker is on it, and a worker that leaves the list
/// afterwards (woken for new work, or its re-check finding the work; with `lend`, its seat
/// lent to a guest) rings the monitor's bell. So a monitor that slept is always rung once a
/// worker may run again: checked through the bell, which must hold a ring at the end.
fn monitor_sleeps_only_while_every_worker_is_listed(lend: bool) {
    crate::loom::model(move || {
        let sleep = Arc::new(Sleep::new(1, WakePolicy::Default));
        let queue = Arc::new(AtomicUsize::new(0));
        let (s, q) = (Arc::clone(&sleep), Arc::clone(&queue));
        let worker = thread::spawn(move || {
            let queued = || q.load(Ordering::SeqCst) > 0;
            sleep_until(&s, None, queued, queued);
        });
        let m = Arc::clone(&sleep);
        let monitor = thread::spawn(move || m.monitor_may_sleep());
        let lent = if lend {
            sleep.lend(thread::current())
        } else {
            None
        };
        queue.store(1, Ordering::SeqCst);
        match lent {
            Some(index) => sleep.give_back(index, || queue.load(Ordering::SeqCst) > 0),
            None => sleep.notify_work(),
        }
        worker.join().unwrap();
        let slept = monitor.join().unwrap();
        if slept {
            // `leave` returns false when a ring is waiting (and consumes it).
            assert!(
                !sleep.bell.leave(),
                "the monitor slept while every worker was listed, and no worker that left the \
                 list rang it"
            );
        }
    });
}

#[test]
fn loom_monitor_is_rung_when_a_worker_leaves_the_list() {
    monitor_sleeps_only_while_every_worker_is_listed(false);
}

#[test]
fn loom_monitor_is_rung_when_a_seat_is_lent() {
    monitor_sleeps_only_while_every_worker_is_listed(true);
}
