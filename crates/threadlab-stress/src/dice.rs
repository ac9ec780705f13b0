//! The stress run's dice: a seeded xorshift64* generator (Vigna, "An experimental exploration
//! of Marsaglia's xorshift generators, scrambled", ACM TOMS 2016: a xorshift64 state, shifts
//! 12/25/27, then a multiply), so a run replays from its `--seed` on every machine.
//!
//! The same generator as `threadlab-testkit`'s `Rng`, which the tests use. This crate is a
//! published package and the testkit is not (it is what the tests share, not something a user
//! installs), so the stress run keeps these few lines of its own; a test below checks that both
//! give the same numbers, so a seed means the same scenarios in either.

/// A seeded xorshift64* generator: the same seed gives the same sequence on every machine.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator for a small or arbitrary seed (a run number, a user's `--seed`): the article
    /// times 2^64 / φ, made odd, so neighbouring seeds start far apart (and the state, which
    /// xorshift needs non-zero, never is zero).
    pub const fn spread(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform enough in `0..n` (a modulo; 0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// In `lo..hi` (`lo` when the range is empty).
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi.saturating_sub(lo))
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    /// The stress run's dice and the tests' generator give the same numbers from the same seed,
    /// for every method the stress run calls.
    #[test]
    fn the_dice_match_the_testkit_generator() {
        for seed in [0, 1, 2, 42, 2026, u64::MAX] {
            let mut ours = Rng::spread(seed);
            let mut kit = threadlab_testkit::Rng::spread(seed);
            for i in 0..1000u64 {
                assert_eq!(ours.next_u64(), kit.next_u64(), "seed {seed}, draw {i}");
                assert_eq!(ours.below(i), kit.below(i), "seed {seed}, draw {i}");
                assert_eq!(
                    ours.range(i, 3 * i),
                    kit.range(i, 3 * i),
                    "seed {seed}, draw {i}"
                );
            }
        }
    }
}
