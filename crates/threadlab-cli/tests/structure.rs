//! The structure of the CLI, the doctor and the trace model: no import circle among the files of
//! any (`scripts/import-cycles`, which finds files that reach, through their `use crate::…`/
//! `super::…` imports and paths, a file that reaches them back). The runtime's circles are the
//! ones listed below, no larger, and none of two files. Skipped with a message where `python3`
//! is missing.

use std::path::Path;
use std::process::Command;

/// The script's report on the files of `crate_src`, and whether it found no circle; `None` where
/// `python3` cannot be run.
fn import_cycles(crate_src: &str) -> Option<(String, bool)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let script = root.join("scripts/import-cycles");
    let out = match Command::new("python3")
        .arg(&script)
        .arg(root.join(crate_src))
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            eprintln!("skipped: cannot run python3 ({e})");
            return None;
        }
    };
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    // Exit 1: circles found (listed on stdout); anything else is the script failing.
    assert!(
        matches!(out.status.code(), Some(0 | 1)) && text.contains(" circle(s)"),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some((text, out.status.success()))
}

fn no_circle_in(crate_src: &str) {
    if let Some((text, none)) = import_cycles(crate_src) {
        assert!(none && text.contains(" 0 circle(s)"), "{text}");
    }
}

#[test]
fn no_import_circle_among_the_cli_files() {
    no_circle_in("crates/threadlab-cli/src");
}

#[test]
fn no_import_circle_among_the_doctor_files() {
    no_circle_in("crates/threadlab-doctor/src");
}

#[test]
fn no_import_circle_among_the_trace_model_files() {
    no_circle_in("crates/threadlab-trace/src");
}

/// The engine: the registry and the worker, which name each other (rayon-core keeps both in its
/// `registry.rs`), and what holds them back: the latches that wake a worker of a pool
/// (`worker_latch.rs`, as rayon-core's `latch.rs` names its registry), the inboxes (work for
/// one given worker, which the worker runs and the registry holds), the spare threads (started
/// by the registry, running the worker's loop), and the run-next slots with the future tasks
/// they keep (`task/cell.rs` holds its `Registry` and pushes to the worker; `task/waker.rs`
/// wakes through the worker). The latch state, the sleep protocol, the seats, the builder's
/// `Config` and the fork counter name nothing of the engine.
const ENGINE_CIRCLE: &[&str] = &[
    "pool/inbox.rs",
    "pool/registry.rs",
    "pool/run_next.rs",
    "pool/spare.rs",
    "pool/worker.rs",
    "pool/worker_latch.rs",
    "task/cell.rs",
    "task/waker.rs",
];

/// The parallel iterators: the traits in `iter/mod.rs` name each adapter as the return type of
/// their methods, and each adapter implements the traits (Rayon's `iter/` is one such circle
/// too). It shrinks only as files leave the traits' signatures.
const ITER_CIRCLE: &[&str] = &[
    "iter/adapters.rs",
    "iter/bounds.rs",
    "iter/chunks_exact.rs",
    "iter/collect.rs",
    "iter/combine.rs",
    "iter/gen.rs",
    "iter/indexed.rs",
    "iter/interleave.rs",
    "iter/intersperse.rs",
    "iter/mod.rs",
    "iter/multizip.rs",
    "iter/owned.rs",
    "iter/panic_fuse.rs",
    "iter/source.rs",
    "iter/strs.rs",
    "iter/try_fold.rs",
    "iter/unordered.rs",
];

/// The most files a circle of the runtime may hold: a ceiling to lower as circles shrink (the
/// iterators' circle is the largest).
const LARGEST_CIRCLE: usize = 17;

/// The runtime's circles are exactly the two listed above: a file that joins one (it imports a
/// file of the circle that reaches it back), a new circle, or a circle of two files fails with
/// the files to look at; a circle that shrank asks for its list (and the ceiling) to be lowered.
#[test]
fn the_runtime_has_only_its_listed_import_circles() {
    let Some((text, _)) = import_cycles("crates/threadlab/src") else {
        return;
    };
    let known = [("engine", ENGINE_CIRCLE), ("iterators", ITER_CIRCLE)];
    let mut seen = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("circle of ") else {
            continue;
        };
        let files: Vec<&str> = rest
            .split_once(" files: ")
            .map_or("", |(_, list)| list)
            .split(", ")
            .collect();
        assert!(
            files.len() > 2,
            "a circle of two files (each imports the other):\n{text}"
        );
        assert!(
            files.len() <= LARGEST_CIRCLE,
            "a circle of {} files, more than the {LARGEST_CIRCLE} allowed:\n{text}",
            files.len()
        );
        let (name, list) = known
            .iter()
            .max_by_key(|(_, list)| files.iter().filter(|f| list.contains(f)).count())
            .unwrap();
        let joined: Vec<_> = files.iter().filter(|f| !list.contains(f)).collect();
        assert!(
            joined.is_empty() || joined.len() < files.len(),
            "a new import circle: {files:?}; break it (name items by the file that defines \
             them, move what the lower file needs below it):\n{text}"
        );
        assert!(
            joined.is_empty(),
            "{joined:?} joined the {name} circle: each imports a file of it that reaches it \
             back; make the import go one way:\n{text}"
        );
        let left: Vec<_> = list.iter().filter(|f| !files.contains(f)).collect();
        assert!(
            left.is_empty(),
            "{left:?} left the {name} circle: remove them from its list in this test (and lower \
             LARGEST_CIRCLE if this was the largest):\n{text}"
        );
        seen.push(*name);
    }
    for (name, _) in known {
        assert!(
            seen.contains(&name),
            "the {name} circle is gone: remove its list from this test:\n{text}"
        );
    }
}
