//! User zones: `let _z = threadlab::zone!("decode");` records a span on the calling thread's
//! track from here to the end of the scope (RAII, like Tracy's `ZoneScoped`). The `zone!` macro
//! itself is in `mod.rs`, beside the public path it expands to.

use super::hooks;

/// An open zone; its drop ends the span. Made by [`zone!`](crate::zone).
#[must_use = "a zone ends when dropped: bind it with `let _z = ...`"]
#[derive(Debug)]
pub struct Zone {
    pub(super) recorded: bool,
}

impl Zone {
    /// Begins a zone named `name` (records nothing when no recording is on).
    #[inline(always)]
    pub fn begin(name: &'static str) -> Zone {
        let recorded = hooks::enabled();
        if recorded {
            hooks::zone_begin(name);
        }
        Zone { recorded }
    }
}

impl Drop for Zone {
    #[inline(always)]
    fn drop(&mut self) {
        if self.recorded {
            hooks::zone_end();
        }
    }
}
