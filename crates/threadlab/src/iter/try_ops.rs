//! The short-circuiting `try_` consumers (`try_for_each`, `try_reduce`, …) over `Option`,
//! `Result` and `ControlFlow`, through [`Try`], a stable stand-in for `std`'s unstable trait
//! of the same name (Rayon keeps a private one for the same reason).

use std::ops::ControlFlow;

/// A value that either goes on (`Some`, `Ok`, `Continue`) with an output, or stops (`None`,
/// `Err`, `Break`).
///
/// ```
/// use threadlab::iter::Try;
/// assert_eq!(Some(3).branch(), Ok(3));
/// assert!(Err::<u8, &str>("no").branch().is_err());
/// ```
pub trait Try: Sized {
    /// What a value that goes on holds.
    type Output;
    /// A value that goes on with `output`.
    fn from_output(output: Self::Output) -> Self;
    /// The output, or the value itself if it stops.
    fn branch(self) -> Result<Self::Output, Self>;
    /// True if this value stops.
    fn is_break(&self) -> bool;
}

impl<T> Try for Option<T> {
    type Output = T;
    fn from_output(output: T) -> Self {
        Some(output)
    }
    fn branch(self) -> Result<T, Self> {
        self.ok_or(None)
    }
    fn is_break(&self) -> bool {
        self.is_none()
    }
}

impl<T, E> Try for Result<T, E> {
    type Output = T;
    fn from_output(output: T) -> Self {
        Ok(output)
    }
    fn branch(self) -> Result<T, Self> {
        match self {
            Ok(t) => Ok(t),
            Err(e) => Err(Err(e)),
        }
    }
    fn is_break(&self) -> bool {
        self.is_err()
    }
}

impl<B, C> Try for ControlFlow<B, C> {
    type Output = C;
    fn from_output(output: C) -> Self {
        ControlFlow::Continue(output)
    }
    fn branch(self) -> Result<C, Self> {
        match self {
            ControlFlow::Continue(c) => Ok(c),
            b => Err(b),
        }
    }
    fn is_break(&self) -> bool {
        matches!(self, ControlFlow::Break(_))
    }
}

/// Combines two results of `try_reduce`: a stop wins (the left one first), else `op`.
pub(crate) fn try_combine<R: Try, OP: Fn(R::Output, R::Output) -> R>(op: &OP, a: R, b: R) -> R {
    match a.branch() {
        Err(stop) => stop,
        Ok(a) => match b.branch() {
            Err(stop) => stop,
            Ok(b) => op(a, b),
        },
    }
}
