//! What the `Debug` impls of the types that had none show: the channel ends their queue length
//! and whether the channel is closed (never the values, which need not be `Debug`), the
//! pending send and receive whether they wait, the `RwLock` guards the data as std's do, and
//! the iterator adapters their base (a closure is not `Debug`). The library denies
//! `missing_debug_implementations`, so a public type without `Debug` does not compile.

use threadlab::prelude::*;

/// A value that is not `Debug`: the channel's `Debug` must not need it.
struct Opaque;

#[test]
fn channel_ends_show_length_and_closed_not_values() {
    let (tx, rx) = threadlab::channel::unbounded::<Opaque>();
    tx.send_blocking(Opaque).unwrap();
    assert_eq!(format!("{tx:?}"), "Sender { len: 1, closed: false, .. }");
    assert_eq!(format!("{rx:?}"), "Receiver { len: 1, closed: false, .. }");
    drop(rx); // the last receiver gone: the channel is closed and its values dropped
    assert_eq!(format!("{tx:?}"), "Sender { len: 0, closed: true, .. }");
}

#[test]
fn pending_send_and_receive_show_whether_they_wait() {
    let (tx, rx) = threadlab::channel::bounded::<Opaque>(0);
    let send = tx.send(Opaque);
    assert_eq!(
        format!("{send:?}"),
        "SendFuture { holds_value: true, waiting: false, .. }"
    );
    let recv = rx.recv();
    assert_eq!(format!("{recv:?}"), "RecvFuture { waiting: false, .. }");
}

#[test]
fn rwlock_guards_show_the_data() {
    let lock = threadlab::sync::RwLock::new(vec![1, 2]);
    assert_eq!(format!("{:?}", lock.read()), "[1, 2]");
    assert_eq!(format!("{:?}", lock.write()), "[1, 2]");
}

#[test]
fn iterator_adapters_show_their_base() {
    let v = [1u32, 2, 3];
    let map = v.par_iter().map(|x| x * 2);
    let shown = format!("{map:?}");
    assert!(
        shown.starts_with("Map { base: ") && shown.ends_with(", .. }"),
        "{shown}"
    );
    let zipped = format!("{:?}", v.par_iter().copied().enumerate().zip(v.par_iter()));
    assert!(
        zipped.starts_with("Zip { a: Enumerate { base: Copied { base: "),
        "{zipped}"
    );
    let fold = format!("{:?}", v.par_iter().fold(|| 0, |a, x| a + x));
    assert!(fold.starts_with("Fold { base: "), "{fold}");
    // Every adapter that holds a closure (or a fn item, which is not `Debug` either).
    let shown = [
        format!("{:?}", v.par_iter().flat_map(Some)),
        format!("{:?}", v.par_iter().fold_with(0, |a, _| a)),
        format!("{:?}", v.par_iter().fold_chunks(2, || 0, |a, _| a)),
        format!("{:?}", v.par_iter().fold_chunks_with(2, 0, |a, _| a)),
        format!("{:?}", v.par_iter().copied().update(|x| *x += 1)),
        format!("{:?}", v.par_iter().map_with(0, |_, x| x)),
        format!("{:?}", v.par_iter().map_init(|| 0, |_, x| x)),
        format!("{:?}", v.par_iter().try_fold(|| 0, |a, _| Some(a))),
        format!("{:?}", v.par_iter().take_any_while(|_| true)),
        format!("{:?}", v.par_iter().positions(|_| true)),
    ];
    for (s, name) in shown.iter().zip([
        "FlatMap",
        "FoldWith",
        "FoldChunks",
        "FoldChunks",
        "Update",
        "MapState",
        "MapState",
        "TryFold",
        "Unordered",
        "Positions",
    ]) {
        assert!(s.starts_with(&format!("{name} {{ base: ")), "{s}");
    }
}
