//! Tuples of indexed parallel iterables as one parallel iterator of tuples (Rayon's
//! `MultiZip`): `(a, b, c).into_par_iter()` yields `(a[i], b[i], c[i])`, as long as the
//! shortest. The producer is the tuple of the sides' producers, split at the same position and
//! taken the same number of positions, as `zip`'s pair is.

use super::drive::Producer;
use super::{IndexedParallelIterator, IntoParallelIterator, ParallelIterator};

/// The iterator of a tuple's `into_par_iter()` (up to 12 sides), and its producer.
///
/// ```
/// use threadlab::prelude::*;
/// let (a, b, c) = (vec![1, 2, 3], vec![10, 20, 30], vec![100, 200]);
/// let sums: Vec<i32> = (&a, &b, &c).into_par_iter().map(|(x, y, z)| x + y + z).collect();
/// assert_eq!(sums, [111, 222]);
/// ```
#[derive(Debug, Clone)]
pub struct MultiZip<T> {
    sides: T,
}

/// A block of [`MultiZip`]'s producer: the sides' blocks, stepped together.
#[doc(hidden)]
#[derive(Debug)]
pub struct MultiZipIter<T> {
    sides: T,
}

macro_rules! multizip {
    ($($T:ident $i:tt),+) => {
        impl<$($T: Producer),+> Producer for MultiZip<($($T,)+)> {
            type Item = ($($T::Item,)+);
            type Iter<'s>
                = MultiZipIter<($($T::Iter<'s>,)+)>
            where
                Self: 's;
            fn len(&self) -> usize {
                let mut n = usize::MAX;
                $(n = n.min(self.sides.$i.len());)+
                n
            }
            #[allow(non_snake_case)]
            fn split_at(self, mid: usize) -> (Self, Self) {
                $(let $T = self.sides.$i.split_at(mid);)+
                (
                    MultiZip { sides: ($($T.0,)+) },
                    MultiZip { sides: ($($T.1,)+) },
                )
            }
            fn take(&mut self, n: usize) -> Self::Iter<'_> {
                MultiZipIter { sides: ($(self.sides.$i.take(n),)+) }
            }
            fn min_len(&self) -> usize {
                let mut n = 1;
                $(n = n.max(self.sides.$i.min_len());)+
                n
            }
            fn max_len(&self) -> usize {
                let mut n = usize::MAX;
                $(n = n.min(self.sides.$i.max_len());)+
                n
            }
        }

        impl<$($T: Iterator),+> Iterator for MultiZipIter<($($T,)+)> {
            type Item = ($($T::Item,)+);
            #[inline]
            fn next(&mut self) -> Option<Self::Item> {
                Some(($(self.sides.$i.next()?,)+))
            }
        }

        impl<$($T: IndexedParallelIterator),+> ParallelIterator for MultiZip<($($T,)+)> {
            type Item = ($($T::Item,)+);
            type Producer = MultiZip<($($T::Producer,)+)>;
            fn into_producer(self) -> Self::Producer {
                MultiZip { sides: ($(self.sides.$i.into_producer(),)+) }
            }
        }

        impl<$($T: IndexedParallelIterator),+> IndexedParallelIterator for MultiZip<($($T,)+)> {
            fn len(&self) -> usize {
                let mut n = usize::MAX;
                $(n = n.min(self.sides.$i.len());)+
                n
            }
        }

        impl<$($T: IntoParallelIterator),+> IntoParallelIterator for ($($T,)+)
        where
            $($T::Iter: IndexedParallelIterator,)+
        {
            type Item = ($($T::Item,)+);
            type Iter = MultiZip<($($T::Iter,)+)>;
            fn into_par_iter(self) -> Self::Iter {
                MultiZip { sides: ($(self.$i.into_par_iter(),)+) }
            }
        }
    };
}

multizip!(A 0);
multizip!(A 0, B 1);
multizip!(A 0, B 1, C 2);
multizip!(A 0, B 1, C 2, D 3);
multizip!(A 0, B 1, C 2, D 3, E 4);
multizip!(A 0, B 1, C 2, D 3, E 4, F 5);
multizip!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
multizip!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
multizip!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
multizip!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
multizip!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
multizip!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);
