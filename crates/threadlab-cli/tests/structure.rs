//! The structure of the CLI, the doctor, the trace model and the stress run: no import circle
//! among the files of any (`scripts/import-cycles`, which finds files that reach, through their
//! `use crate::…`/`super::…` imports and paths, a file that reaches them back). The runtime's
//! circles are the ones listed below, no larger, and none of two files. Skipped with a message where `python3`
//! is missing. And the CLI's sizes: no function over 150 lines outside its tests, no file over
//! 800 lines unless its module doc says why.

use std::path::Path;
use std::process::Command;

/// The script's report on the files of `crate_src`, and whether it found no circle; `None` where
/// `python3` cannot be run.
fn import_cycles(crate_src: &str) -> Option<(String, bool)> {
    import_cycles_with(&[], crate_src)
}

/// [`import_cycles`] with the script's options `flags` (`--pairs`: also list the pairs of files
/// that import each other).
fn import_cycles_with(flags: &[&str], crate_src: &str) -> Option<(String, bool)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let script = root.join("scripts/import-cycles");
    let out = match Command::new("python3")
        .arg(&script)
        .args(flags)
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

#[test]
fn no_import_circle_among_the_stress_run_files() {
    no_circle_in("crates/threadlab-stress/src");
}

/// The engine: the registry and the worker, which name each other (rayon-core keeps both in its
/// `registry.rs`), and what holds them back: the latches that wake a worker of a pool
/// (`worker_latch.rs`, as rayon-core's `latch.rs` names its registry), the inboxes (work for
/// one given worker, which the worker runs and the registry holds) and the spare threads
/// (started by the registry, running the worker's loop). Future tasks reach the pool through
/// the `Schedule` trait (`task/schedule.rs`, implemented in `pool/schedule.rs`), so the task
/// files name no part of it; the latch state, the sleep protocol, the seats, the builder's
/// `Config` and the fork counter name nothing of the engine.
const ENGINE_CIRCLE: &[&str] = &[
    "pool/inbox.rs",
    "pool/registry.rs",
    "pool/spare.rs",
    "pool/worker.rs",
    "pool/worker_latch.rs",
];

/// The parallel iterators: the traits in `iter/mod.rs` name each adapter as the return type of
/// their methods, and each adapter implements the traits (Rayon's `iter/` is one such circle
/// too). It shrinks only as files leave the traits' signatures.
const ITER_CIRCLE: &[&str] = &[
    "iter/adapters.rs",
    "iter/bounds.rs",
    "iter/chunks.rs",
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

/// No two runtime files import each other, inside a larger circle either, except a `mod.rs`
/// with its own child (the iterator traits name each adapter they return, and each adapter
/// implements the traits, as in Rayon) and two files of the engine (the registry with a part it
/// holds; the engine's circle is bounded by its list above).
#[test]
fn no_two_runtime_files_import_each_other() {
    let Some((text, _)) = import_cycles_with(&["--pairs"], "crates/threadlab/src") else {
        return;
    };
    let pairs: Vec<(&str, &str)> = text
        .lines()
        .filter_map(|l| l.strip_prefix("pair: "))
        .filter_map(|p| p.split_once(" <-> "))
        .filter(|(a, b)| !(ENGINE_CIRCLE.contains(a) && ENGINE_CIRCLE.contains(b)))
        .collect();
    // The engine's registry and worker name each other: a report without that pair is a script
    // that did not list pairs at all.
    assert!(
        text.contains("pair: pool/registry.rs <-> pool/worker.rs"),
        "the script listed no pairs:\n{text}"
    );
    assert!(
        pairs.is_empty(),
        "files that import each other: {pairs:?}; move what one needs of the other below \
         both (or into it):\n{text}"
    );
}

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

/// The most lines a function of the CLI may span, from its `fn` line to its closing brace
/// (tests aside): past it, a function does several things, which want names of their own.
const LONGEST_FUNCTION: usize = 150;

/// The most lines a file of the CLI may have unless its module doc says why, on a line that
/// begins `(Over 800 lines:`.
const LONGEST_FILE: usize = 800;

/// Every `.rs` file below `dir`.
fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Each line of `text` with comments, string and char literals blanked out (so their braces
/// and semicolons do not count), as a Rust lexer would see the code.
fn code_lines(text: &str) -> Vec<String> {
    let (mut out, mut line) = (Vec::new(), String::new());
    let chars: Vec<char> = text.chars().collect();
    let (mut i, mut block_depth) = (0, 0usize);
    // `Some(hashes)` inside a string: 0 for "…", n for r#…#"…"#….
    let mut string: Option<Option<usize>> = None;
    while i < chars.len() {
        let (c, next) = (chars[i], chars.get(i + 1).copied());
        if c == '\n' {
            out.push(std::mem::take(&mut line));
            i += 1;
            continue;
        }
        if block_depth > 0 {
            if c == '*' && next == Some('/') {
                block_depth -= 1;
                i += 2;
            } else if c == '/' && next == Some('*') {
                block_depth += 1;
                i += 2;
            } else {
                i += 1;
            }
            continue;
        }
        match string {
            Some(None) => {
                match c {
                    // An escape skips the next character, unless it ends the line (a string
                    // continued on the next), whose newline still counts.
                    '\\' if next != Some('\n') => i += 1,
                    '"' => string = None,
                    _ => {}
                }
                i += 1;
                continue;
            }
            Some(Some(hashes)) => {
                if c == '"' && chars[i + 1..].iter().take(hashes).all(|&h| h == '#') {
                    string = None;
                    i += hashes;
                }
                i += 1;
                continue;
            }
            None => {}
        }
        let word_before = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            block_depth = 1;
            i += 2;
        } else if c == '"' {
            string = Some(None);
            i += 1;
        } else if c == 'r' && !word_before && matches!(next, Some('"' | '#')) {
            let hashes = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
            if chars.get(i + 1 + hashes) == Some(&'"') {
                string = Some(Some(hashes));
                i += hashes + 2;
            } else {
                line.push(c);
                i += 1;
            }
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{..}'), else a lifetime or a label.
            let end = if next == Some('\\') {
                chars[i + 2..]
                    .iter()
                    .position(|&q| q == '\'')
                    .map(|p| i + 2 + p)
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(end) => i = end + 1,
                None => {
                    line.push(c);
                    i += 1;
                }
            }
        } else {
            line.push(c);
            i += 1;
        }
    }
    out.push(line);
    out
}

/// Every function of `text` outside `#[cfg(test)]` modules: (name, first line, lines).
fn functions(text: &str) -> Vec<(String, usize, usize)> {
    let (mut found, mut open): (Vec<_>, Vec<(String, usize, i64, bool)>) = (vec![], vec![]);
    let (mut depth, mut parens, mut test_mod_at, mut cfg_test) = (0i64, 0i64, None, false);
    for (n, line) in code_lines(text).iter().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]") {
            cfg_test = true;
        } else if trimmed.starts_with("mod ") || trimmed.starts_with("pub mod ") {
            if cfg_test && test_mod_at.is_none() && trimmed.ends_with('{') {
                test_mod_at = Some(depth);
            }
            cfg_test = false;
        }
        let words: Vec<&str> = line
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .collect();
        if test_mod_at.is_none() {
            if let Some(k) = words.iter().position(|w| *w == "fn") {
                if let Some(name) = words[k + 1..].iter().find(|w| !w.is_empty()) {
                    open.push((name.to_string(), n + 1, depth, false));
                }
            }
        }
        for c in line.chars() {
            match c {
                '(' | '[' => parens += 1,
                ')' | ']' => parens -= 1,
                '{' => {
                    depth += 1;
                    if let Some(f) = open.last_mut().filter(|f| !f.3 && f.2 == depth - 1) {
                        f.3 = true;
                    }
                }
                '}' => {
                    depth -= 1;
                    if open.last().is_some_and(|f| f.3 && f.2 == depth) {
                        let (name, start, _, _) = open.pop().unwrap();
                        found.push((name, start, n + 2 - start));
                    }
                    if test_mod_at == Some(depth) {
                        test_mod_at = None;
                    }
                }
                // A signature without a body (a trait's required method).
                ';' if parens == 0 && open.last().is_some_and(|f| !f.3 && f.2 == depth) => {
                    open.pop();
                }
                _ => {}
            }
        }
    }
    found
}

#[test]
fn the_function_scanner_measures_bodies_and_skips_tests_and_literals() {
    let text = "fn a() {\n    let s = \"{ not a brace \\\n        continued\";\n    let c = '}';\n}\n\
                trait T {\n    fn b(&self, x: [u8; 2]);\n    fn c(&self) -> u8 {\n        1\n    }\n}\n\
                // fn d() {\n#[cfg(test)]\nmod tests {\n    fn e() {\n    }\n}\n\
                fn f<'a>(x: &'a str) -> &'a str {\n    let r = r#\"}\"#;\n    x\n}\n";
    let names: Vec<(String, usize, usize)> = functions(text);
    assert_eq!(
        names,
        [
            ("a".to_string(), 1, 5),
            ("c".to_string(), 8, 3),
            ("f".to_string(), 18, 4)
        ]
    );
}

/// No function of the CLI over [`LONGEST_FUNCTION`] lines, and no file over [`LONGEST_FILE`]
/// without its reason.
#[test]
fn no_cli_function_or_file_is_longer_than_its_limit() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut long = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let rel = path
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let lines = text.lines().count();
        let says_why = text
            .lines()
            .take_while(|l| l.starts_with("//!") || l.is_empty())
            .any(|l| {
                l.trim_start_matches("//!")
                    .trim_start()
                    .starts_with("(Over 800 lines:")
            });
        assert!(
            lines <= LONGEST_FILE || says_why,
            "{rel} has {lines} lines: split it by what each part does, or say why not in its \
             module doc on a line that begins `(Over 800 lines:`"
        );
        for (name, start, n) in functions(&text) {
            if n > LONGEST_FUNCTION {
                long.push(format!("{rel}:{start} {name}: {n} lines"));
            }
        }
    }
    assert!(
        files.len() > 50,
        "only {} files found under {}",
        files.len(),
        src.display()
    );
    assert!(
        long.is_empty(),
        "functions over {LONGEST_FUNCTION} lines (split each by what its parts do):\n{}",
        long.join("\n")
    );
}
