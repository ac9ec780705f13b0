//! A property test of the `.tltrace` reader with arbitrary bytes: random strings, random
//! strings behind a valid header, and random mutations (flips, insertions, deletions,
//! truncations, varint bombs) of a valid trace holding every event kind and a lock table row. The reader must return
//! a trace or an error whose offset lies within the input, never panic or allocate wildly; and
//! whatever it accepts must be readable to the end (the doctor and `compare` digest the same
//! mutations in their own crate: `threadlab-doctor/tests/mutated_traces.rs`). The generator and
//! the mutations are `threadlab-testkit`'s, with fixed seeds, so a failure replays. The hostile
//! mutations add the two shapes of a file built to exhaust memory (runs of zero bytes, as a
//! sparse file reads, and counts just under the bytes left); that such files are refused in
//! little memory is counted in bytes by `tests/hostile_files.rs`, and here every decoded name table
//! must hold distinct names. Files that only begin like a `.pftrace` (a newline) are
//! told apart from threadlab's own `.pftrace` by their first bytes, before anything else is read.

use super::load::{decode, encode};
use super::sample::every_kind;
use threadlab_testkit::{mutate, mutate_hostile, Rng};

/// Decodes `bytes`; checks the error's offset, or digests the trace (and says it loaded).
fn check(bytes: &[u8]) -> bool {
    match decode(bytes) {
        Ok(t) => {
            let events: usize = t
                .threads()
                .iter()
                .map(|th| th.events().into_iter().count())
                .sum();
            assert_eq!(events, t.event_count());
            for th in t.threads() {
                let _ = (th.name(), th.worker());
            }
            // Its locks' figures, whatever the table and the events hold.
            for l in t.locks() {
                let _ = (
                    t.name(l.name),
                    l.waits.quantile(0.99),
                    l.holds.quantile(0.5),
                );
                let _ = (l.hold_total_ns(), l.contended_share(), l.top_holder());
            }
            true
        }
        Err((offset, what)) => {
            assert!(
                offset <= bytes.len() as u64,
                "offset {offset} past the end {} ({what})",
                bytes.len()
            );
            assert!(!what.is_empty());
            false
        }
    }
}

#[test]
fn round_trip_of_every_kind() {
    let t = every_kind();
    assert_eq!(decode(&encode(&t)).expect("a valid trace decodes"), t);
}

/// A version 2 file (before the lock table: the same layout without it) loads, with an empty
/// lock table; the version 3 encoding of the same trace is that file plus the table.
#[test]
fn a_version_2_file_still_loads() {
    let mut t = every_kind();
    t.locks.clear();
    let v3 = encode(&t);
    assert_eq!(&v3[..8], b"TLTRACE3");
    // The empty table is its count, one zero byte before the end mark.
    let end = v3.len() - b"TLEND".len();
    assert_eq!(v3[end - 1], 0);
    let mut v2 = b"TLTRACE2".to_vec();
    v2.extend_from_slice(&v3[8..end - 1]);
    v2.extend_from_slice(b"TLEND");
    assert_eq!(decode(&v2).expect("a version 2 file"), t);
    // A version 2 file with a table is not one: its table's bytes come after the threads.
    let with_table = encode(&every_kind());
    let mut bad = b"TLTRACE2".to_vec();
    bad.extend_from_slice(&with_table[8..]);
    assert!(decode(&bad).is_err());
}

#[test]
fn arbitrary_bytes_never_panic() {
    let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15);
    let magic = &encode(&every_kind())[..8];
    for i in 0..4000 {
        let len = rng.index(300);
        let mut bytes = rng.bytes(len);
        if i % 2 == 0 {
            // Behind a valid magic, so the reader gets past the first check.
            let mut m = magic.to_vec();
            m.append(&mut bytes);
            bytes = m;
        }
        check(&bytes);
    }
}

#[test]
fn mutations_of_a_valid_trace_never_panic() {
    let valid = encode(&every_kind());
    let mut rng = Rng::new(0xD1B5_4A32_D192_ED03);
    let mut loaded = 0;
    for _ in 0..6000 {
        let mut b = valid.clone();
        mutate(&mut b, &mut rng);
        loaded += check(&b) as u32;
    }
    // Mutated values that still parse hold odd events: make sure many do.
    assert!(loaded > 200, "only {loaded} mutations loaded");
}

#[test]
fn hostile_mutations_never_panic_and_never_admit_repeated_names() {
    let valid = encode(&every_kind());
    let mut rng = Rng::new(0x2545_F491_4F6C_DD1D);
    for _ in 0..3000 {
        let mut b = valid.clone();
        mutate_hostile(&mut b, &mut rng);
        if check(&b) {
            let t = decode(&b).expect("checked");
            let mut names = t.names.clone();
            names.sort();
            names.dedup();
            assert_eq!(
                names.len(),
                t.names.len(),
                "a name table with repeats loaded"
            );
        }
    }
}

#[test]
fn only_threadlab_pftrace_openings_look_like_a_pftrace() {
    use super::pftrace_read::{looks_like_pftrace, SNIFF_BYTES};
    // Threadlab's own `.pftrace`, and its first bytes mutated.
    let pf = super::perfetto::encode(&every_kind());
    assert!(looks_like_pftrace(&pf[..SNIFF_BYTES]));
    // A stream of newlines (`yes ''`), text, and the native format are not.
    assert!(!looks_like_pftrace(&[b'\n'; SNIFF_BYTES]));
    assert!(!looks_like_pftrace(b"\n\n\nnot a trace"));
    assert!(!looks_like_pftrace(&encode(&every_kind())[..SNIFF_BYTES]));
    assert!(!looks_like_pftrace(&pf[..4]), "too short to tell");
    let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15);
    for _ in 0..2000 {
        // Random openings after the packet byte are refused unless they are the encoder's.
        let mut b = vec![0x0a];
        b.extend(rng.bytes(SNIFF_BYTES - 1));
        let len_end = b[1..6].iter().position(|x| x & 0x80 == 0);
        let encoders = len_end.is_some_and(|e| b[e + 2..].starts_with(&[0x50, 0x01, 0x68]));
        assert_eq!(looks_like_pftrace(&b), encoders, "{b:02x?}");
    }
}
