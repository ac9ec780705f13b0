//! A task's spawn location is recorded once per spawning thread and location (with the spawn
//! records that refer to it), not once per task: empty spawns with a recording on write at
//! most three records per task into the buffers (spawn, begin, end), and the decoded trace
//! still gives every spawned task its location, as when each task's run recorded it.
//!
//! The recorder is process-wide: the test runs its body in a child process (this test binary
//! again, this test alone), so no other test's pool records into its recording.

use std::process::Command;

use super::{buffer, raw, recorder, EventKind, TaskKind, Trace};
use crate::context::Tag;

const CHILD: &str = "THREADLAB_TEST_SPAWN_LOCATION_CHILD";
/// Tasks of each kind of spawn (a scope's, `Pool::spawn`'s).
const TASKS: usize = 3000;

/// The kinds of every record the buffers hold now, and their bytes (their encoded length).
fn raw_records() -> (Vec<u32>, usize) {
    let reg = crate::util::lock(&recorder::REGISTRY);
    let mut kinds = Vec::new();
    let mut bytes = 0;
    for b in &reg.bufs {
        let (chunks, _) = b.peek();
        for chunk in chunks {
            bytes += chunk.published_len();
            kinds.extend(buffer::ChunkRecords::new(chunk).map(|r| r.kind));
        }
    }
    (kinds, bytes)
}

/// The locations the decoded trace gives the spawned tasks, in the order they began.
fn spawn_locations(trace: &Trace) -> Vec<String> {
    let key = trace.name_id(super::ARG_TASK_LOCATION);
    let mut out = Vec::new();
    for t in trace.threads() {
        let events: Vec<_> = t.events().iter().collect();
        for (i, e) in events.iter().enumerate() {
            if let EventKind::TaskBegin {
                kind: TaskKind::Spawn,
                ..
            } = e.kind
            {
                let at = events[i + 1..]
                    .iter()
                    .map_while(|e| match e.kind {
                        EventKind::Arg { key: k, value } => Some((k, value)),
                        _ => None,
                    })
                    .find(|&(k, _)| Some(k) == key)
                    .map_or("none".to_owned(), |(_, v)| trace.name(v).to_owned());
                out.push(at);
            }
        }
    }
    out
}

fn child_body() {
    let pool = crate::thread_pool::Pool::builder()
        .threads(2)
        .build()
        .unwrap();
    let rec = super::start();
    // With no spawn-context hook, an unnamed task whose spawn record carries its location has
    // nothing to carry to its run: it is spawned untagged (a job as small as when nothing is
    // recorded). A name still needs the tag, and so does a capture no spawn record follows
    // (`capture`: `join`'s, `install`'s and `spawn_fifo`'s jobs, whose run records the location).
    let here = std::panic::Location::caller();
    assert!(Tag::capture_spawned(None, here).is_none());
    assert!(Tag::capture_spawned(Some("named"), here).is_some());
    assert!(Tag::capture(None, here).is_some());
    let scope_line = line!() + 3;
    pool.scope(|s| {
        for _ in 0..TASKS {
            s.spawn(|_| {});
        }
    });
    let (tx, rx) = std::sync::mpsc::channel();
    let pool_line = line!() + 3;
    for _ in 0..TASKS {
        let tx = tx.clone();
        pool.spawn(move || tx.send(()).unwrap());
    }
    for _ in 0..TASKS {
        rx.recv().unwrap();
    }
    let (kinds, bytes) = raw_records();
    let trace = rec.stop();

    let count = |k: u32| kinds.iter().filter(|&&x| x == k).count();
    let tasks = count(raw::TASK_BEGIN);
    assert!(tasks >= 2 * TASKS, "{tasks} task begins");
    let task_records = count(raw::SPAWN)
        + tasks
        + count(raw::TASK_END)
        + count(raw::TASK_LOCATION)
        + count(raw::SPAWN_LOCATION);
    let per_task = task_records as f64 / tasks as f64;
    println!(
        "{per_task:.3} records and {:.1} bytes per task ({tasks} tasks, {} location records, {} location definitions)",
        bytes as f64 / tasks as f64,
        count(raw::TASK_LOCATION),
        count(raw::SPAWN_LOCATION)
    );
    assert!(
        per_task <= 3.01,
        "{per_task:.3} records per task: the spawn location is recorded per task"
    );

    // Every spawned task still has its location, read from the trace as before.
    let here = file!();
    let want_scope = format!("{here}:{scope_line}:15");
    let want_pool = format!("{here}:{pool_line}:14");
    let mut seen = spawn_locations(&trace);
    seen.sort();
    let scoped = seen.iter().filter(|l| **l == want_scope).count();
    let pooled = seen.iter().filter(|l| **l == want_pool).count();
    assert_eq!(
        (scoped, pooled, seen.len()),
        (TASKS, TASKS, 2 * TASKS),
        "spawn locations: {:?} …",
        &seen[..seen.len().min(4)]
    );
}

/// A flight recorder drops its oldest chunks: a spawn it kept still has its location, because
/// the spawning thread defines each location again in every chunk it refers to it from.
fn flight_child_body() {
    let pool = crate::thread_pool::Pool::builder()
        .threads(2)
        .build()
        .unwrap();
    let rec = super::flight_recorder(64 << 10);
    // Spawns until the end (scopes one after another), so the chunks kept hold spawns too.
    let line = line!() + 4;
    for _ in 0..200 {
        pool.scope(|s| {
            for _ in 0..TASKS / 10 {
                s.spawn(|_| {});
            }
        });
    }
    let trace = rec.stop();
    assert!(
        trace.dropped_events() > 0,
        "the flight recorder dropped chunks"
    );
    let want = format!("{}:{line}:19", file!());
    // Tasks whose spawn was kept: their begin has a flow.
    let key = trace.name_id(super::ARG_TASK_LOCATION);
    let (mut kept, mut located) = (0, 0);
    for t in trace.threads() {
        let events: Vec<_> = t.events().iter().collect();
        for (i, e) in events.iter().enumerate() {
            if let EventKind::TaskBegin {
                kind: TaskKind::Spawn,
                flow: Some(_),
            } = e.kind
            {
                kept += 1;
                let found = events[i + 1..]
                    .iter()
                    .map_while(|e| match e.kind {
                        EventKind::Arg { key: k, value } => Some((k, value)),
                        _ => None,
                    })
                    .any(|(k, v)| Some(k) == key && trace.name(v) == want);
                located += found as usize;
            }
        }
    }
    println!("flight recorder: {located} of {kept} tasks whose spawn was kept have their location");
    assert!(kept > 0, "some spawns were kept");
    assert_eq!(located, kept, "a kept spawn lost its location");
}

/// More spawn sites than a thread's table of locations holds (four in tests), taken in turn and
/// each several times in a row: every task still gets its own site's location, through the
/// table's restarts and the cache of the previous spawn's location.
fn many_sites_child_body() {
    let pool = crate::thread_pool::Pool::builder()
        .threads(1)
        .build()
        .unwrap();
    let rec = super::start();
    const ROUNDS: usize = 20;
    pool.scope(|s| {
        for _ in 0..ROUNDS {
            for site in 0..6 {
                // Site `site` spawns `site + 1` tasks in a row.
                for _ in 0..=site {
                    match site {
                        0 => s.spawn(|_| {}),
                        1 => s.spawn(|_| {}),
                        2 => s.spawn(|_| {}),
                        3 => s.spawn(|_| {}),
                        4 => s.spawn(|_| {}),
                        _ => s.spawn(|_| {}),
                    }
                }
            }
        }
    });
    let trace = rec.stop();
    let mut per_site = std::collections::BTreeMap::<String, usize>::new();
    for at in spawn_locations(&trace) {
        *per_site.entry(at).or_default() += 1;
    }
    println!("many sites: {per_site:?}");
    assert!(
        per_site.keys().all(|at| at.starts_with(file!())),
        "a task without its location: {per_site:?}"
    );
    // In line order, the sites spawned ROUNDS × 1, × 2, … × 6 tasks.
    let mut by_line: Vec<(u32, usize)> = per_site
        .iter()
        .map(|(at, &n)| (at.split(':').nth(1).unwrap().parse().unwrap(), n))
        .collect();
    by_line.sort();
    let counts: Vec<usize> = by_line.iter().map(|&(_, n)| n).collect();
    let want: Vec<usize> = (1..=6).map(|k| ROUNDS * k).collect();
    assert_eq!(counts, want, "tasks per spawn site: {per_site:?}");
}

/// Runs `body` as the test `test`: in a child process (this test binary again, that test
/// alone, with `CHILD` set to `mode`), which must succeed and print `printed`; in the child,
/// `body` itself.
fn in_child(test: &str, mode: &str, body: fn(), printed: &str) {
    match std::env::var(CHILD) {
        Ok(m) if m == mode => return body(),
        Ok(_) => return,
        Err(_) => {}
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            &format!("trace::spawn_location_tests::{test}"),
            "--test-threads=1",
            "--nocapture",
        ])
        .env(CHILD, mode)
        .output()
        .expect("the test binary runs again");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the child failed:\n{text}");
    println!("{text}");
    assert!(text.contains(printed), "the child ran its body:\n{text}");
}

#[test]
fn a_spawn_location_is_recorded_once_per_thread_and_location() {
    in_child(
        "a_spawn_location_is_recorded_once_per_thread_and_location",
        "full",
        child_body,
        "records and",
    );
}

#[test]
fn a_flight_recorder_keeps_the_locations_of_the_spawns_it_keeps() {
    in_child(
        "a_flight_recorder_keeps_the_locations_of_the_spawns_it_keeps",
        "flight",
        flight_child_body,
        "flight recorder:",
    );
}

#[test]
fn every_task_keeps_its_site_when_sites_outnumber_the_table() {
    in_child(
        "every_task_keeps_its_site_when_sites_outnumber_the_table",
        "many",
        many_sites_child_body,
        "many sites:",
    );
}
