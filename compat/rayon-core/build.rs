// `links = "rayon-core"` (in Cargo.toml) needs a build script; there is nothing to build.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
}
