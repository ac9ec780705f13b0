//! Builds the interposer `threadlab run` loads with `LD_PRELOAD` (src/observe/preload/
//! interpose.c) with the system C compiler (`$CC`, else `cc`) into OUT_DIR, where
//! src/observe/interpose.rs embeds it with `include_bytes!`. Without a C compiler (or off Linux)
//! the build still succeeds with an empty file, and `run` says it observes by sampling only.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let src = "src/observe/preload/interpose.c";
    println!("cargo:rerun-if-changed={src}");
    println!("cargo:rerun-if-env-changed=CC");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let lib = out.join("libthreadlab_interpose.so");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux");
    let host = std::env::var("HOST").ok();
    let target = std::env::var("TARGET").ok();
    let built = linux
        && host == target
        && Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
            .args(["-O2", "-g0", "-shared", "-fPIC", "-Wall", "-o"])
            .arg(&lib)
            .arg(src)
            .args(["-ldl", "-lpthread"])
            .status()
            .is_ok_and(|s| s.success());
    if !built {
        println!(
            "cargo:warning=no C compiler built the interposer: `threadlab run` will sample only"
        );
        std::fs::write(&lib, b"").expect("write an empty interposer");
    }
}
