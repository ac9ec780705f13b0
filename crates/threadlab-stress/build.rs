//! A build with ThreadSanitizer (scripts/check-unsafe): TSan stops a child of a multithreaded
//! process that starts threads (its `die_after_fork`), which the fork scenario does on purpose;
//! such a build sets `cfg(threadlab_tsan)`, and the mix leaves that scenario out (`mix` in
//! src/lib.rs).

fn main() {
    println!("cargo:rustc-check-cfg=cfg(threadlab_tsan)");
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    if std::env::var("CARGO_ENCODED_RUSTFLAGS")
        .is_ok_and(|f| f.split('\x1f').any(|a| a.contains("sanitizer=thread")))
    {
        println!("cargo:rustc-cfg=threadlab_tsan");
    }
}
