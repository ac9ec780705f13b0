//! `threadlab view FILE [-o OUT.html]`: an offline timeline of a trace, as one self-contained
//! HTML page (the script and the data inline; no network).
//!
//! The page (`page.html`, `viewer.js`) draws on a canvas, in the manner of Tracy's and
//! Superluminal's timelines: a lane per thread with its task spans and zones stacked by depth
//! and coloured by name, a state strip beneath (running, searching, spinning, parked, lock wait
//! in red, lock hold in yellow, preemption over it), arrows for steals, wake-ups and lock
//! hand-offs once few enough are in view, a hover card, the doctor's findings (a click zooms to
//! the threads and time range of one), the four questions' figures and a per-thread summary.
//! `data.rs` assembles the page's data: `rows.rs` turns each thread into rows of intervals,
//! `arrows.rs` finds the arrows between threads, `marks.rs` reads Tracy's frames, plots and
//! messages, and `lod.rs` merges each row per level of detail, so a frame draws about two
//! blocks per pixel column whatever the trace holds.

mod arrows;
mod data;
pub use data::DEFAULT_FRAME_TARGET;
mod lod;
mod marks;
mod rows;

use std::path::Path;
use std::process::ExitCode;

use crate::cli::{usage_error, ViewArgs};
use threadlab::trace::Trace;
use threadlab_doctor::FrameTarget;

/// Runs `threadlab view`.
pub fn view(args: ViewArgs) -> ExitCode {
    let trace = match Trace::load(&args.file) {
        Ok(t) => t,
        Err(e) => return usage_error(&e.to_string()),
    };
    let out = args.out.unwrap_or_else(|| args.file.with_extension("html"));
    let title = args
        .file
        .file_name()
        .map_or_else(|| "trace".to_owned(), |n| n.to_string_lossy().into_owned());
    let target = args.frame_target.unwrap_or(data::DEFAULT_FRAME_TARGET);
    match std::fs::write(&out, page_with_target(&trace, &title, target)) {
        Ok(()) => {
            println!(
                "wrote {} ({} threads, {} events): open it in a browser",
                out.display(),
                trace.threads().len(),
                trace.event_count()
            );
            ExitCode::SUCCESS
        }
        Err(e) => usage_error(&format!("cannot write {}: {e}", out.display())),
    }
}

/// Writes the viewer page of `trace` to `out`.
pub fn write_page(trace: &Trace, title: &str, out: &Path) -> std::io::Result<()> {
    std::fs::write(out, page(trace, title))
}

/// The self-contained page.
pub fn page(trace: &Trace, title: &str) -> String {
    page_with_target(trace, title, data::DEFAULT_FRAME_TARGET)
}

/// The self-contained page, with frames late past `target`.
pub fn page_with_target(trace: &Trace, title: &str, target: FrameTarget) -> String {
    let data = data::page_data(trace, title, target);
    // The data sits in a <script> element: `</` must not end it early.
    let data = data.replace("</", "<\\/");
    let title = crate::markup::escape(title);
    include_str!("page.html")
        .replacen("__TITLE__", &title, 2)
        .replacen("__SCRIPT__", include_str!("viewer.js"), 1)
        .replacen("__DATA__", &data, 1)
}
