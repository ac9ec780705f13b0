//! `threadlab-rayon-deps blake3|rdst [SIZE]`: runs one of the two crates' parallel work on a
//! fixed input, checks it against the serial result, and prints a line. Run with
//! `THREADLAB_TRACE=run.pftrace` to record it (the tests do).

use threadlab_rayon_deps::{bytes, hash_parallel, hash_serial, numbers, sort_parallel};

fn main() {
    let mut args = std::env::args().skip(1);
    let what = args.next().unwrap_or_default();
    let size: usize = args.next().map_or(1 << 24, |s| {
        s.parse()
            .unwrap_or_else(|_| panic!("SIZE: a number, not {s:?}"))
    });
    match what.as_str() {
        "blake3" => {
            let data = bytes(size, 7);
            let (par, ser) = (hash_parallel(&data), hash_serial(&data));
            assert_eq!(
                par, ser,
                "blake3: update_rayon differs from the serial hash"
            );
            println!("blake3 of {size} bytes: {par}");
        }
        "rdst" => {
            let v = numbers(size, 11);
            let mut want = v.clone();
            want.sort_unstable();
            assert!(
                sort_parallel(v) == want,
                "rdst: the radix sort differs from std's sort"
            );
            println!("rdst sorted {size} u64");
        }
        _ => {
            eprintln!("usage: threadlab-rayon-deps blake3|rdst [SIZE]");
            std::process::exit(2);
        }
    }
}
