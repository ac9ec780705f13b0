//! Parallel iteration over a string's parts (`ParallelString`) and a slice's windows, exact
//! chunks, chunks from the end and splits (the rest of `ParallelSlice` / `ParallelSliceMut`).
//!
//! Every one of these is found by `std`'s sequential iterator in one pass that collects
//! references (a pointer and a length per part) into an [`IntoIter`], and the pipeline runs
//! over those in parallel. The pass costs a few nanoseconds a part, against a body that is
//! worth a parallel pipeline; Rayon instead splits the text itself at a separator near the
//! middle. The parts, their order and their count are `std`'s.

use super::owned::IntoIter;

/// A separator for the string splits: a `char`, a `&str`, a slice or array of `char`s, or a
/// `Fn(char) -> bool`.
pub trait Pattern: Sync + Send {
    /// `str::split`.
    #[doc(hidden)]
    fn split_all<'a>(&self, s: &'a str) -> Vec<&'a str>;
    /// `str::split_inclusive`.
    #[doc(hidden)]
    fn split_inclusive_all<'a>(&self, s: &'a str) -> Vec<&'a str>;
    /// `str::split_terminator`.
    #[doc(hidden)]
    fn split_terminator_all<'a>(&self, s: &'a str) -> Vec<&'a str>;
    /// `str::matches`.
    #[doc(hidden)]
    fn matches_all<'a>(&self, s: &'a str) -> Vec<&'a str>;
    /// `str::match_indices`.
    #[doc(hidden)]
    fn match_indices_all<'a>(&self, s: &'a str) -> Vec<(usize, &'a str)>;
}

macro_rules! pattern {
    ($([$($g:tt)*] $ty:ty, $p:ident => $e:expr;)*) => {$(
        impl<$($g)*> Pattern for $ty {
            fn split_all<'a>(&self, s: &'a str) -> Vec<&'a str> {
                let $p = self;
                s.split($e).collect()
            }
            fn split_inclusive_all<'a>(&self, s: &'a str) -> Vec<&'a str> {
                let $p = self;
                s.split_inclusive($e).collect()
            }
            fn split_terminator_all<'a>(&self, s: &'a str) -> Vec<&'a str> {
                let $p = self;
                s.split_terminator($e).collect()
            }
            fn matches_all<'a>(&self, s: &'a str) -> Vec<&'a str> {
                let $p = self;
                s.matches($e).collect()
            }
            fn match_indices_all<'a>(&self, s: &'a str) -> Vec<(usize, &'a str)> {
                let $p = self;
                s.match_indices($e).collect()
            }
        }
    )*};
}

pattern! {
    [] char, p => *p;
    [] &str, p => *p;
    [] String, p => p.as_str();
    [] &[char], p => *p;
    [const N: usize] [char; N], p => *p;
    [const N: usize] &[char; N], p => *p;
    [F: Fn(char) -> bool + Sync + Send] F, p => p;
}

/// Parallel iteration over the parts of a `str`.
///
/// ```
/// use threadlab::prelude::*;
/// let words: Vec<&str> = "a bb  ccc".par_split_whitespace().collect();
/// assert_eq!(words, ["a", "bb", "ccc"]);
/// ```
pub trait ParallelString {
    /// The string itself.
    #[doc(hidden)]
    fn as_par_str(&self) -> &str;

    /// The `char`s.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!("héllo".par_chars().filter(|c| c.is_ascii()).count(), 4);
    /// ```
    fn par_chars(&self) -> IntoIter<char> {
        IntoIter::gather(self.as_par_str().chars())
    }

    /// The `char`s with their byte offsets.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!("ab".par_char_indices().collect::<Vec<_>>(), [(0, 'a'), (1, 'b')]);
    /// ```
    fn par_char_indices(&self) -> IntoIter<(usize, char)> {
        IntoIter::gather(self.as_par_str().char_indices())
    }

    /// The bytes.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!("ab".par_bytes().map(u32::from).sum::<u32>(), 97 + 98);
    /// ```
    fn par_bytes(&self) -> IntoIter<u8> {
        IntoIter::gather(self.as_par_str().bytes())
    }

    /// The UTF-16 code units.
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!("a𝄞".par_encode_utf16().count(), 3);
    /// ```
    fn par_encode_utf16(&self) -> IntoIter<u16> {
        IntoIter::gather(self.as_par_str().encode_utf16())
    }

    /// The parts between separators (`str::split`).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!("a,b,,c".par_split(',').collect::<Vec<_>>(), ["a", "b", "", "c"]);
    /// ```
    fn par_split<P: Pattern>(&self, separator: P) -> IntoIter<&str> {
        separator.split_all(self.as_par_str()).into()
    }

    /// The parts, each with its separator (`str::split_inclusive`).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!("a\nb".par_split_inclusive('\n').collect::<Vec<_>>(), ["a\n", "b"]);
    /// ```
    fn par_split_inclusive<P: Pattern>(&self, separator: P) -> IntoIter<&str> {
        separator.split_inclusive_all(self.as_par_str()).into()
    }

    /// The parts ended by a terminator (`str::split_terminator`).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!("a;b;".par_split_terminator(';').collect::<Vec<_>>(), ["a", "b"]);
    /// ```
    fn par_split_terminator<P: Pattern>(&self, terminator: P) -> IntoIter<&str> {
        terminator.split_terminator_all(self.as_par_str()).into()
    }

    /// The lines (`str::lines`).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!("a\r\nb\n".par_lines().collect::<Vec<_>>(), ["a", "b"]);
    /// ```
    fn par_lines(&self) -> IntoIter<&str> {
        IntoIter::gather(self.as_par_str().lines())
    }

    /// The words between Unicode white space (`str::split_whitespace`).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!(" a  b ".par_split_whitespace().count(), 2);
    /// ```
    fn par_split_whitespace(&self) -> IntoIter<&str> {
        IntoIter::gather(self.as_par_str().split_whitespace())
    }

    /// The words between ASCII white space (`str::split_ascii_whitespace`).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!(" a  b ".par_split_ascii_whitespace().count(), 2);
    /// ```
    fn par_split_ascii_whitespace(&self) -> IntoIter<&str> {
        IntoIter::gather(self.as_par_str().split_ascii_whitespace())
    }

    /// The matches of `pattern` (`str::matches`).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!("abab".par_matches("ab").count(), 2);
    /// ```
    fn par_matches<P: Pattern>(&self, pattern: P) -> IntoIter<&str> {
        pattern.matches_all(self.as_par_str()).into()
    }

    /// The matches of `pattern` with their byte offsets (`str::match_indices`).
    ///
    /// ```
    /// use threadlab::prelude::*;
    /// assert_eq!("abab".par_match_indices('b').collect::<Vec<_>>(), [(1, "b"), (3, "b")]);
    /// ```
    fn par_match_indices<P: Pattern>(&self, pattern: P) -> IntoIter<(usize, &str)> {
        pattern.match_indices_all(self.as_par_str()).into()
    }
}

impl ParallelString for str {
    fn as_par_str(&self) -> &str {
        self
    }
}
