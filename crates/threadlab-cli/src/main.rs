//! `threadlab`: the lab, doctor, compare and topology commands.

fn main() {
    println!("threadlab: the lab is coming; see README.md");
}
