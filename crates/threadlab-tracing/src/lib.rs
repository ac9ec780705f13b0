//! A bridge from the `tracing` crate to threadlab's recorder: a program instrumented with
//! `tracing` spans and events gets threadlab's timeline, doctor and `compare` without a
//! `threadlab::zone!` of its own.
//!
//! ```
//! use tracing_subscriber::prelude::*;
//!
//! let subscriber = tracing_subscriber::registry().with(threadlab_tracing::layer());
//! tracing::subscriber::with_default(subscriber, || {
//!     let rec = threadlab::trace::start();
//!     let pool = threadlab::Pool::builder().threads(2).build().unwrap();
//!     let _request = tracing::info_span!("request", path = "/index.html").entered();
//!     pool.install(|| {
//!         let _parse = tracing::info_span!("parse").entered();
//!         tracing::info!(bytes = 512, "parsed");
//!     });
//!     drop(_request);
//!     let trace = rec.stop();
//!     assert!(trace.name_id("request").is_some() && trace.name_id("parse").is_some());
//! });
//! ```
//!
//! # What it records
//!
//! - A span's every entry (`Span::enter`, `entered`, a poll of an `Instrumented` future) is a
//!   zone named after the span, on the track of the thread that entered it, with the span's
//!   fields as arguments ([`threadlab::trace::EventKind::Arg`]) and two more:
//!   [`threadlab::trace::ARG_SPAN_ID`] (the same for every entry of one span, on whichever
//!   thread) and [`threadlab::trace::ARG_SPAN_PARENT`] (the id of the span it was created in).
//! - An event (`tracing::info!` …) is a zone of no length named after its callsite, with its
//!   fields (the message among them) and its level as arguments: an instant on that thread.
//! - Fields are recorded for spans created while a recording is on; a span created before
//!   the recording started has zones but no arguments.
//!
//! # Context carried into tasks
//!
//! [`layer`] also installs a spawn-context hook ([`threadlab::context::SpawnHook`]): a task spawned inside
//! a span (`Pool::spawn`, `scope`'s `spawn`, `spawn_future`, `install`, the second half of a
//! `join` that another worker takes, a parallel loop's split) captures the current span and
//! its subscriber (the thread's default `Dispatch`); the worker that runs it enters that span
//! around the task's body (around each poll, for a future) with that subscriber as its
//! default. So on the other worker's track, the task's span holds a zone of the spawning span
//! (same `span.id`) and the task's own spans nest inside it, with `span.parent` pointing at it;
//! in Perfetto the nesting shows as slices, and the ids as arguments. This is the approach of
//! rayon PR #1282 (rayon-rs/rayon: "jobs capture the current span context when created; when
//! executed, possibly on another thread, they restore it", for issue #1018) and of tracing's
//! `Instrumented` future, which Tokio's `runtime.spawn` span uses (tokio `util/trace.rs`: a
//! span per task with `task.name` and `loc.file`/`loc.line`/`loc.col`, entered on each poll).
//! A task's name and location are recorded by threadlab itself on the task span
//! (`spawn_named`, `#[track_caller]`).
//!
//! # Cost
//!
//! With recording off, each callback reads the recorder's flag (one relaxed load); `on_enter`
//! and `on_exit` also keep one bit per nesting level in a thread-local, so an exit ends a zone
//! only if its entry began one. The spawn hook costs a boxed `(Dispatch, span id)` per spawn
//! made inside a span (and nothing for a spawn outside any span). Figures: the repository's
//! `docs/recording.md` ("With `tracing`") and `examples/span_cost.rs`.

#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]
#![warn(missing_docs)]

mod context;

use std::cell::Cell;
use std::fmt::{self, Write as _};
use std::sync::atomic::{AtomicU64, Ordering};

use threadlab::trace::{hooks, is_recording, ARG_SPAN_ID, ARG_SPAN_PARENT};
use tracing_core::field::{Field, Visit};
use tracing_core::{span, Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::registry::LookupSpan;

pub use context::install_context;

/// The layer: add it to a `tracing_subscriber::registry()` (see the crate doc). Made by
/// [`layer`].
#[derive(Debug)]
pub struct ThreadlabLayer {
    _private: (),
}

/// The layer, with the spawn-context hook installed (see the crate doc).
pub fn layer() -> ThreadlabLayer {
    // A process has one spawn hook; if another library installed its own, spans still become
    // zones, only the context is not carried into tasks.
    let _ = install_context();
    ThreadlabLayer { _private: () }
}

/// What the layer keeps in a span's extensions: its identity in the trace and its fields as
/// text (kept only for spans created while a recording is on).
struct SpanData {
    id: u64,
    parent: Option<u64>,
    fields: Vec<(&'static str, String)>,
}

/// `n` in decimal, written into `buf` (no allocation: an id is recorded on every entry).
fn decimal(mut n: u64, buf: &mut [u8; 20]) -> &str {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    std::str::from_utf8(&buf[i..]).expect("decimal: ASCII digits")
}

/// Span ids unique in the process (tracing's own ids are reused after a span closes).
static NEXT_SPAN: AtomicU64 = AtomicU64::new(1);

/// Collects fields as text.
struct Fields<'a>(&'a mut Vec<(&'static str, String)>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name(), value.to_owned()));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.push((field.name(), format!("{value:?}")));
    }
}

/// Records fields straight into the recorder, as arguments of the open zone.
struct Args(String);

impl Visit for Args {
    fn record_str(&mut self, field: &Field, value: &str) {
        hooks::arg(field.name(), value);
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.clear();
        let _ = write!(self.0, "{value:?}");
        hooks::arg(field.name(), &self.0);
    }
}

thread_local! {
    /// One bit per open entry on this thread (innermost lowest): set when its entry began a
    /// zone, so its exit ends one. Deeper than 64 levels the bits fall off and those exits
    /// end a zone if a recording is on.
    static ENTERED: Cell<(u64, u32)> = const { Cell::new((0, 0)) };
}

impl<S> Layer<S> for ThreadlabLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &span::Attributes<'_>, id: &span::Id, ctx: Context<'_, S>) {
        if !is_recording() {
            return;
        }
        let Some(span) = ctx.span(id) else {
            return;
        };
        let parent = span
            .parent()
            .and_then(|p| p.extensions().get::<SpanData>().map(|d| d.id));
        let mut fields = Vec::new();
        attrs.record(&mut Fields(&mut fields));
        let uid = NEXT_SPAN.fetch_add(1, Ordering::Relaxed); // Relaxed: only unique, orders nothing.
        span.extensions_mut().insert(SpanData {
            id: uid,
            parent,
            fields,
        });
    }

    fn on_record(&self, id: &span::Id, values: &span::Record<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else {
            return;
        };
        let mut ext = span.extensions_mut();
        if let Some(data) = ext.get_mut::<SpanData>() {
            values.record(&mut Fields(&mut data.fields));
        }
    }

    fn on_enter(&self, id: &span::Id, ctx: Context<'_, S>) {
        let recording = is_recording();
        ENTERED.with(|e| {
            let (bits, depth) = e.get();
            e.set(((bits << 1) | recording as u64, depth.saturating_add(1)));
        });
        if !recording {
            return;
        }
        let Some(span) = ctx.span(id) else {
            hooks::zone_enter("?");
            return;
        };
        hooks::zone_enter(span.metadata().name());
        let ext = span.extensions();
        if let Some(d) = ext.get::<SpanData>() {
            let mut buf = [0u8; 20];
            hooks::arg(ARG_SPAN_ID, decimal(d.id, &mut buf));
            if let Some(p) = d.parent {
                hooks::arg(ARG_SPAN_PARENT, decimal(p, &mut buf));
            }
            for (k, v) in &d.fields {
                hooks::arg(k, v);
            }
        }
    }

    fn on_exit(&self, _id: &span::Id, _ctx: Context<'_, S>) {
        let began = ENTERED.with(|e| {
            let (bits, depth) = e.get();
            e.set((bits >> 1, depth.saturating_sub(1)));
            if depth > 64 {
                is_recording()
            } else {
                bits & 1 == 1
            }
        });
        if began {
            hooks::zone_exit();
        }
    }

    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        if !is_recording() {
            return;
        }
        let meta = event.metadata();
        hooks::zone_enter(meta.name());
        hooks::arg("level", meta.level().as_str());
        event.record(&mut Args(String::new()));
        hooks::zone_exit();
    }
}
