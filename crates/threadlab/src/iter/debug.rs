//! The `Debug` output of the iterators that hold closures or shared state: their name and their
//! base, the rest (closures are not `Debug`) shown as `..`.

use std::fmt;

/// Writes `name { base: …, .. }`.
pub(super) fn base_only(
    f: &mut fmt::Formatter<'_>,
    name: &str,
    base: &dyn fmt::Debug,
) -> fmt::Result {
    f.debug_struct(name)
        .field("base", base)
        .finish_non_exhaustive()
}
