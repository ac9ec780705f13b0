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

/// `docs/reliability.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/reliability.md")]
pub struct Reliability;
