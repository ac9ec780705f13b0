//! The doctor and `compare` on traces that are odd but loadable: random mutations (flips,
//! insertions, deletions, truncations, varint bombs) of a saved `.tltrace` holding every event
//! kind (`threadlab-trace`'s sample, the one its reader's own property test mutates in
//! `fuzz.rs`), read back with `Trace::load`; whatever loads must be diagnosed, compared and
//! printed without a panic. The generator and the mutations are `threadlab-testkit`'s, with a fixed
//! seed, so a failure replays.

use threadlab_doctor::Diagnose;
use threadlab_testkit::{mutate, Rng};
use threadlab_trace::sample::every_kind;
use threadlab_trace::Trace;

#[test]
fn whatever_loads_is_diagnosed_and_compared() {
    let dir =
        std::env::temp_dir().join(format!("threadlab-doctor-mutations-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("valid.tltrace");
    let reference = every_kind();
    reference.save(&path).unwrap();
    let valid = std::fs::read(&path).unwrap();
    let whole = reference.diagnose();
    assert!(whole.threads.len() == 2 && !whole.to_string().is_empty());
    let mutated = dir.join("mutated.tltrace");
    let mut rng = Rng::new(0xD1B5_4A32_D192_ED03);
    let mut loaded = 0;
    for _ in 0..2000 {
        let mut b = valid.clone();
        mutate(&mut b, &mut rng);
        std::fs::write(&mutated, &b).unwrap();
        if let Ok(t) = Trace::load(&mutated) {
            loaded += 1;
            let d = t.diagnose();
            let _ = d.to_string();
            let _ = d.compare(&whole).to_string();
            let _ = threadlab_doctor::compare(&t, &reference).to_string();
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    // Mutated values that still parse reach the doctor with odd events: make sure many do.
    assert!(loaded > 60, "only {loaded} mutations loaded");
}
