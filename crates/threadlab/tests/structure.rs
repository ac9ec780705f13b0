//! The runtime's import structure (`scripts/import-cycles`, which finds files that reach,
//! through their `use crate::…`/`super::…` imports and paths, a file that reaches them back):
//! the engine's circle stays small, and no two files import each other except a module's
//! `mod.rs` and its own child (the iterator traits name each adapter they return, and each
//! adapter implements the traits, as in Rayon) and the engine's registry with the parts it
//! holds. Skipped with a message where `python3` is missing.

use std::path::Path;
use std::process::Command;

/// The script's report on the runtime's files, with the pairs of files that import each
/// other (`--pairs`); `None` where `python3` cannot be run.
fn report() -> Option<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = match Command::new("python3")
        .arg(root.join("scripts/import-cycles"))
        .arg("--pairs")
        .arg(root.join("crates/threadlab/src"))
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
    // A script that read no file (a wrong path, an option it does not know) reports nothing.
    let files: usize = text
        .lines()
        .last()
        .and_then(|l| l.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(files > 50, "the script read {files} files:\n{text}");
    assert!(
        root.join("crates/threadlab/src/pool/registry.rs").exists(),
        "the engine's registry moved: name its new file in this test"
    );
    Some(text)
}

/// The circles the script found, each as its files.
fn circles(text: &str) -> Vec<Vec<&str>> {
    text.lines()
        .filter_map(|l| l.strip_prefix("circle of "))
        .map(|rest| {
            rest.split_once(" files: ")
                .map_or("", |(_, list)| list)
                .split(", ")
                .collect()
        })
        .collect()
}

/// The engine: the registry (`pool/registry.rs`), the worker's loop, and the parts that both
/// name: the inboxes, the latches that wake a worker, the spare threads. rayon-core's engine
/// circle is four files (its `registry.rs` holds the worker too). The tasks (`task/`), the
/// run-next slots, the sleep protocol, the builder's `Config`, the seats and the public face
/// (`thread_pool/`) name the engine without being named by it, and are outside.
const ENGINE_CIRCLE_MOST: usize = 5;

/// The engine's circle (the one holding `pool/registry.rs`) holds at most
/// [`ENGINE_CIRCLE_MOST`] files; a file that joins it fails with the circle's files.
#[test]
fn the_engine_circle_holds_at_most_five_files() {
    let Some(text) = report() else { return };
    let engine = circles(&text)
        .into_iter()
        .find(|c| c.contains(&"pool/registry.rs"))
        .unwrap_or_default();
    assert!(
        engine.len() <= ENGINE_CIRCLE_MOST,
        "the engine's import circle has {} files, more than {ENGINE_CIRCLE_MOST}: {engine:?}; \
         make the import go one way (a trait the engine implements, as the tasks' `Schedule`, \
         or the type the engine needs moved below it):\n{text}",
        engine.len()
    );
}

/// No circle of two files, and no two files that import each other inside a larger circle,
/// except a `mod.rs` with its own child and the engine's registry with a part it holds (each
/// such pair is in the engine circle, bounded above).
#[test]
fn no_two_files_import_each_other() {
    let Some(text) = report() else { return };
    for c in circles(&text) {
        assert!(c.len() > 2, "a circle of two files: {c:?}:\n{text}");
    }
    let engine: Vec<&str> = circles(&text)
        .into_iter()
        .find(|c| c.contains(&"pool/registry.rs"))
        .unwrap_or_default();
    let pairs: Vec<(&str, &str)> = text
        .lines()
        .filter_map(|l| l.strip_prefix("pair: "))
        .filter_map(|p| p.split_once(" <-> "))
        .filter(|(a, b)| !(engine.contains(a) && engine.contains(b)))
        .collect();
    assert!(
        pairs.is_empty(),
        "files that import each other: {pairs:?}; move what one needs of the other below \
         both (or into it):\n{text}"
    );
}
