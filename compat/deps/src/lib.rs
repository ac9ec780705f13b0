//! Two crates from the registry that parallelise with Rayon inside, `blake3` (its `rayon`
//! feature: `Hasher::update_rayon` splits the input with `rayon_core::join`) and `rdst` (its
//! `multi-threaded` feature: radix sorts over Rayon's parallel iterators and `par_bridge`),
//! built in this workspace, where `[patch.crates-io]` puts the `rayon-core` package in place of
//! Rayon's: their parallel work runs on threadlab's workers. The tests (`tests/deps.rs`) check
//! that they give the serial results, and that a recording shows their tasks on threadlab's
//! workers.

/// Bytes from a fixed xorshift64 sequence (Marsaglia, "Xorshift RNGs", 2003), so every run
/// hashes and sorts the same input.
pub fn bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut next = xorshift(seed);
    (0..len).map(|_| (next() >> 56) as u8).collect()
}

/// `len` numbers from the same generator.
pub fn numbers(len: usize, seed: u64) -> Vec<u64> {
    let mut next = xorshift(seed);
    (0..len).map(|_| next()).collect()
}

fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed.max(1);
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

/// BLAKE3 of `data`, the input split across the pool (`update_rayon`).
pub fn hash_parallel(data: &[u8]) -> blake3::Hash {
    let mut h = blake3::Hasher::new();
    h.update_rayon(data);
    h.finalize()
}

/// BLAKE3 of `data`, on the calling thread only.
pub fn hash_serial(data: &[u8]) -> blake3::Hash {
    blake3::hash(data)
}

/// `v` sorted by rdst's multi-threaded radix sort.
pub fn sort_parallel<T: rdst::RadixKey + Copy + Send + Sync>(mut v: Vec<T>) -> Vec<T> {
    use rdst::RadixSort;
    v.radix_sort_unstable();
    v
}
