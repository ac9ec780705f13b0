//! The repository's pages, their examples compiled and run as this crate's doctests
//! (`cargo test -p threadlab-docs --doc`), so an example cannot drift from the API.
//!
//! The pages live outside every published package (the library's front page, its crate docs,
//! carries the README's first example itself), so a published crate cannot include them; this
//! crate is not published and can. Each page is the doc of an item that exists only while
//! rustdoc collects doctests. A new page under `docs/` gets a line here.

/// `README.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct Readme;

/// `docs/guide.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide.md")]
pub struct Guide;

/// `docs/recording.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/recording.md")]
pub struct Recording;

/// `docs/lab.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/lab.md")]
pub struct Lab;

/// `docs/benchmarks.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/benchmarks.md")]
pub struct Benchmarks;

/// `docs/observer.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/observer.md")]
pub struct Observer;

/// `docs/reliability.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/reliability.md")]
pub struct Reliability;

/// The README stays a front door: short, the newcomer's two commands in it, its articles named
/// by title rather than by a number of our own, and every page it links to present.
#[cfg(test)]
mod front_door {
    const README: &str = include_str!("../../../README.md");

    #[test]
    fn at_most_250_lines_with_the_two_commands() {
        let lines = README.lines().count();
        assert!(
            lines <= 250,
            "README.md has {lines} lines; move detail to docs/"
        );
        for command in ["cargo run --release -- lab", "cargo test"] {
            assert!(README.contains(command), "README.md lacks `{command}`");
        }
    }

    #[test]
    fn no_seed_numbers() {
        assert!(
            !README.to_lowercase().contains("seed"),
            "README.md says \"seed\": name an article by its title and author"
        );
    }

    #[test]
    fn its_local_links_resolve() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        let mut missing = Vec::new();
        for link in README.split("](").skip(1) {
            let target = link.split(')').next().unwrap_or_default();
            let path = target.split('#').next().unwrap_or_default();
            if path.is_empty() || path.contains("://") {
                continue;
            }
            if !std::path::Path::new(root).join(path).exists() {
                missing.push(path.to_owned());
            }
        }
        assert!(
            missing.is_empty(),
            "README.md links to missing files: {missing:?}"
        );
    }
}
