//! What threadlab's tests share, written once: [`Rng`], a small seeded
//! generator (xorshift64*, Vigna, "An experimental exploration of Marsaglia's xorshift
//! generators, scrambled", ACM TOMS 2016: a xorshift64 state, shifts 12/25/27, then a multiply),
//! so a failure replays from its seed without a dependency; and [`mutate`], the random damage
//! done to a valid trace file by the trace reader's property test and the doctor's test on
//! odd-but-loadable traces; and [`assert_usage_error`], how the programs' tests check that bad
//! arguments are refused.
//!
//! No dependency, not even on threadlab (its own unit tests use it). Not published: the stress
//! run (the published `threadlab-stress`) keeps its own copy of the generator, which a test there
//! checks against this one.

/// A seeded xorshift64* generator: the same seed gives the same sequence on every machine.
///
/// ```
/// let mut a = threadlab_testkit::Rng::new(42);
/// let mut b = threadlab_testkit::Rng::new(42);
/// assert_eq!(a.next_u64(), b.next_u64());
/// assert!(a.below(10) < 10);
/// ```
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// The generator whose state is `seed` (xorshift's state must not be zero: 0 becomes 1).
    pub const fn new(seed: u64) -> Rng {
        Rng(if seed == 0 { 1 } else { seed })
    }

    /// A generator for a small or arbitrary seed (a run number, a user's `--seed`): the article
    /// times 2^64 / φ, made odd, so neighbouring seeds start far apart.
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

    /// [`Rng::below`] for lengths and positions.
    pub fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    /// In `lo..hi` (`lo` when the range is empty).
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi.saturating_sub(lo))
    }

    /// `n` random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}

/// Damages `bytes` (a valid file, usually) the way a bad disk, a bad copy or a hostile user
/// might: one to four of a bit flip, an overwritten byte, an inserted byte, a removed byte and a
/// varint bomb (ten bytes of a varint that does not fit 64 bits, where a count or a timestamp
/// was), then, one time in four, a truncation.
///
/// ```
/// let mut rng = threadlab_testkit::Rng::new(7);
/// let valid = vec![1u8; 64];
/// let mut damaged = valid.clone();
/// threadlab_testkit::mutate(&mut damaged, &mut rng);
/// assert_ne!(damaged, valid);
/// ```
pub fn mutate(bytes: &mut Vec<u8>, rng: &mut Rng) {
    for _ in 0..1 + rng.index(4) {
        let at = rng.index(bytes.len());
        match rng.index(5) {
            0 if !bytes.is_empty() => bytes[at] ^= 1 << rng.index(8),
            1 if !bytes.is_empty() => bytes[at] = rng.next_u64() as u8,
            2 => bytes.insert(at, rng.next_u64() as u8),
            3 if bytes.len() > 1 => {
                bytes.remove(at);
            }
            _ => {
                let bomb = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
                bytes.splice(at..at, bomb);
            }
        }
    }
    if rng.index(4) == 0 {
        bytes.truncate(rng.index(bytes.len() + 1));
    }
}

/// Damages `bytes` like [`mutate`], then adds one of the two shapes of a file built to exhaust
/// a reader's memory: a run of zero bytes (what a sparse file reads as: empty names, empty
/// threads, zero counts) of up to 64 KiB, or a count bomb (a varint, where a count was, whose
/// value is just under the number of bytes after it: one byte per item fits, an item's size in
/// memory does not).
///
/// ```
/// let mut rng = threadlab_testkit::Rng::new(7);
/// let valid = vec![1u8; 64];
/// let mut damaged = valid.clone();
/// threadlab_testkit::mutate_hostile(&mut damaged, &mut rng);
/// assert_ne!(damaged, valid);
/// ```
pub fn mutate_hostile(bytes: &mut Vec<u8>, rng: &mut Rng) {
    mutate(bytes, rng);
    let at = rng.index(bytes.len() + 1);
    if rng.index(2) == 0 {
        let run = 1 + rng.index(64 * 1024);
        bytes.splice(at..at, std::iter::repeat(0).take(run));
    } else {
        let mut count = (bytes.len() - at) as u64;
        count = count.saturating_sub(rng.below(4));
        let mut varint = Vec::new();
        while count >= 0x80 {
            varint.push(count as u8 | 0x80);
            count >>= 7;
        }
        varint.push(count as u8);
        let end = (at + rng.index(3)).min(bytes.len());
        bytes.splice(at..end, varint);
    }
}

/// Checks that a program refused its arguments the way threadlab's programs do: exit code 2,
/// nothing on stdout, one line on stderr that begins `error:` and holds `mention` (a panic
/// would exit 101, over several lines). `call` names the call in a failure's message.
///
/// ```
/// # #[cfg(unix)] {
/// let out = std::process::Command::new("sh")
///     .args(["-c", "echo 'error: --seconds: `0` is too few' >&2; exit 2"])
///     .output()
///     .unwrap();
/// threadlab_testkit::assert_usage_error(&out, "--seconds 0", "--seconds");
/// # }
/// ```
#[track_caller]
pub fn assert_usage_error(out: &std::process::Output, call: &str, mention: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{call}: exit code; stderr: {stderr}"
    );
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "{call}: one line, got: {stderr}"
    );
    assert!(stderr.starts_with("error:"), "{call}: {stderr}");
    assert!(
        stderr.contains(mention),
        "{call}: expected `{mention}` in: {stderr}"
    );
    assert!(out.stdout.is_empty(), "{call}: nothing on stdout");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sequence_is_xorshift64_star() {
        // The first outputs for state 1, from the recurrence by hand: x ^= x >> 12 (1),
        // x ^= x << 25 (1 + 2^25), x ^= x >> 27 (unchanged), times the multiplier.
        let mut r = Rng::new(1);
        assert_eq!(
            r.next_u64(),
            (1u64 + (1 << 25)).wrapping_mul(0x2545_F491_4F6C_DD1D)
        );
        assert_eq!(Rng::new(0).next_u64(), Rng::new(1).next_u64());
    }

    #[test]
    fn ranges_hold() {
        let mut r = Rng::spread(3);
        for _ in 0..1000 {
            assert!(r.below(7) < 7);
            assert!((5..9).contains(&r.range(5, 9)));
            assert_eq!(r.range(4, 4), 4);
            assert_eq!(r.below(0), 0);
        }
    }

    #[test]
    fn mutations_keep_within_bounds_and_change_the_input() {
        let mut r = Rng::new(0xD1B5_4A32_D192_ED03);
        let valid: Vec<u8> = (0..200).map(|i| i as u8).collect();
        let mut changed = 0;
        for _ in 0..2000 {
            let mut b = valid.clone();
            mutate(&mut b, &mut r);
            changed += (b != valid) as u32;
            let mut empty = Vec::new();
            mutate(&mut empty, &mut r);
        }
        assert!(changed > 1900, "{changed}");
    }
}
