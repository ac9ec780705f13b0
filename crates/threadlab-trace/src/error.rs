//! `TraceError`: what went wrong with a trace file or a recording, and what to do about it.

use std::fmt;
use std::path::{Path, PathBuf};

/// An error from saving, loading or starting a recording. Its message says what to do.
#[derive(Debug)]
pub struct TraceError {
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    Io {
        path: PathBuf,
        doing: &'static str,
        err: std::io::Error,
    },
    Extension {
        path: PathBuf,
    },
    NotLoadable {
        path: PathBuf,
    },
    Corrupt {
        path: PathBuf,
        offset: u64,
        what: String,
    },
    AlreadyRecording,
}

impl TraceError {
    pub(crate) fn io(path: &Path, doing: &'static str, err: std::io::Error) -> TraceError {
        TraceError {
            kind: Kind::Io {
                path: path.to_owned(),
                doing,
                err,
            },
        }
    }
    pub(crate) fn extension(path: &Path) -> TraceError {
        TraceError {
            kind: Kind::Extension {
                path: path.to_owned(),
            },
        }
    }
    pub(crate) fn not_loadable(path: &Path) -> TraceError {
        TraceError {
            kind: Kind::NotLoadable {
                path: path.to_owned(),
            },
        }
    }
    pub(crate) fn corrupt(path: &Path, offset: u64, what: impl Into<String>) -> TraceError {
        TraceError {
            kind: Kind::Corrupt {
                path: path.to_owned(),
                offset,
                what: what.into(),
            },
        }
    }
    /// The error of starting a recording while one is on: made by the runtime's recorder
    /// (`threadlab::trace::try_start`); not part of the stable API.
    #[doc(hidden)]
    pub fn already_recording() -> TraceError {
        TraceError {
            kind: Kind::AlreadyRecording,
        }
    }

    /// The byte offset where a corrupt or truncated file went wrong, if that is the error.
    pub fn offset(&self) -> Option<u64> {
        match &self.kind {
            Kind::Corrupt { offset, .. } => Some(*offset),
            _ => None,
        }
    }
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Io { path, doing, err } => {
                write!(
                    f,
                    "cannot {doing} {}: {err}; check the path and its permissions",
                    path.display()
                )
            }
            Kind::Extension { path } => write!(
                f,
                "cannot tell the trace format of {}: use `.pftrace` (Perfetto protobuf), \
                 `.tltrace` (threadlab's native format) or `.json` \
                 (Chrome JSON, write-only)",
                path.display()
            ),
            Kind::NotLoadable { path } => write!(
                f,
                "cannot load {}: it is neither a `.tltrace` nor a `.pftrace` file (Chrome `.json` \
                 is write-only); save the trace as `.tltrace` or `.pftrace`",
                path.display()
            ),
            Kind::Corrupt { path, offset, what } => write!(
                f,
                "{} is not a valid threadlab trace at byte offset {offset} ({what}); the file is \
                 truncated, corrupt or not written by threadlab: record it again",
                path.display()
            ),
            Kind::AlreadyRecording => write!(
                f,
                "a recording is already on: stop it (`Recording::stop`) before starting another"
            ),
        }
    }
}

impl std::error::Error for TraceError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            Kind::Io { err, .. } => Some(err),
            _ => None,
        }
    }
}
