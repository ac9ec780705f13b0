//! `threadlab view` in a real browser: headless Chromium opens generated pages and the test
//! reads what the page says it drew (the `#layout` JSON it writes after each frame) and a
//! screenshot. Checks: no script error (the page's own error list and Chromium's console log);
//! one lane per thread of the trace; a known zone drawn at the x its timestamps give; zooming
//! (the page's `#t0=…&t1=…`) changes what is drawn; the screenshot is not blank; frame marks
//! (a late one among them), a plot and messages are drawn on their tracks; the time axis's
//! labels never overlap (two window widths, three zooms); the answer cards are coloured by
//! their figure against its threshold, say "not enough to judge" without one, and cut no text;
//! a lock wait's card names the lock, the thread that held it and, for a wait seen from
//! inside a program, the call site that asked for it.
//! It also prints page load → first full draw for a thread-per-row trace (about 18,000 events,
//! like the lab's image run) and a 1,000,000-event recording (and `THREADLAB_VIEW_TRACE`, if
//! set).
//!
//! Without Chromium (`chromium`, `chromium-browser`, `google-chrome`, or `THREADLAB_CHROMIUM`)
//! the test prints why and passes, unless `THREADLAB_REQUIRE_CHROMIUM=1` (CI sets it) makes
//! that a failure. The recorder is process-wide: this binary has no harness and runs its steps
//! one after another on the main thread.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use threadlab::trace::{EventKind, Trace};

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("THREADLAB_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

fn dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("threadlab-view-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs Chromium headless with `args` on `url`; returns (stdout, stderr). Fails after 90 s.
fn run_chromium(bin: &Path, args: &[&str], url: &str) -> (String, String) {
    let profile = dir().join("profile");
    let mut child = Command::new(bin)
        .args([
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--no-first-run",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1400,900",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let o = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut out, &mut s).ok();
        s
    });
    let e = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut err, &mut s).ok();
        s
    });
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(90) {
            child.kill().ok();
            child.wait().ok();
            panic!("chromium did not finish within 90 s on {url}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    (o.join().unwrap(), e.join().unwrap())
}

/// Opens the page and returns its `#layout` object; fails on any console error.
fn layout(bin: &Path, page: &Path, hash: &str) -> Value {
    layout_with(bin, page, hash, &[])
}

/// [`layout`] with more Chromium switches (a later `--window-size` replaces the default).
fn layout_with(bin: &Path, page: &Path, hash: &str, switches: &[&str]) -> Value {
    let url = format!("file://{}{hash}", page.display());
    let mut args = vec!["--dump-dom"];
    args.extend_from_slice(switches);
    let (dom, log) = run_chromium(bin, &args, &url);
    for line in log.lines() {
        let l = line.to_ascii_lowercase();
        assert!(
            !(l.contains("console") && (l.contains("error") || l.contains("uncaught"))),
            "console error on {url}: {line}"
        );
    }
    let start = dom.find("id=\"layout\">").unwrap_or_else(|| {
        panic!(
            "no #layout in the DOM of {url}: {}",
            &dom[..dom.len().min(400)]
        )
    }) + "id=\"layout\">".len();
    let end = start + dom[start..].find("</script>").expect("end of #layout");
    let v: Value = serde_json::from_str(&dom[start..end]).expect("#layout is JSON");
    assert_eq!(
        v["errors"].as_array().map(Vec::len),
        Some(0),
        "script errors: {v}"
    );
    v
}

fn write_view(trace_path: &Path, html: &Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_threadlab"))
        .args([
            "view",
            trace_path.to_str().unwrap(),
            "-o",
            html.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "threadlab view: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The expected x of time `t` in a layout.
fn x_of(l: &Value, t: f64) -> f64 {
    let (v0, v1) = (
        l["view"]["t0"].as_f64().unwrap(),
        l["view"]["t1"].as_f64().unwrap(),
    );
    let (x0, x1) = (
        l["plot"]["x0"].as_f64().unwrap(),
        l["plot"]["x1"].as_f64().unwrap(),
    );
    x0 + (t - v0) / (v1 - v0) * (x1 - x0)
}

fn known_zone(l: &Value) -> &Value {
    l["drawn"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == "known" && d["count"] == 1)
        .unwrap_or_else(|| panic!("the zone `known` is drawn: {l}"))
}

fn main() {
    let Some(bin) = chromium() else {
        let msg = "view test SKIPPED: no chromium found (install Debian's `chromium`, or set \
                   THREADLAB_CHROMIUM to a Chromium binary)";
        if std::env::var("THREADLAB_REQUIRE_CHROMIUM").as_deref() == Ok("1") {
            panic!("{msg}, and THREADLAB_REQUIRE_CHROMIUM=1");
        }
        println!("{msg}");
        return;
    };
    let d = dir();

    // A small trace: a 20 ms zone `known` on thread `probe`, then a pool and a contended lock.
    let rec = threadlab::trace::start();
    std::thread::spawn(|| {
        threadlab::trace::set_thread_name("probe");
        let _z = threadlab::zone!("known");
        std::thread::sleep(Duration::from_millis(20));
    })
    .join()
    .unwrap();
    let pool = threadlab::Pool::builder().threads(2).build().unwrap();
    let m = threadlab::sync::Mutex::named("shared", 0u64);
    pool.install(|| {
        threadlab::for_each(0..200, |_| {
            let _z = threadlab::zone!("item");
            *m.lock() += 1;
        })
    });
    pool.shutdown();
    {
        let _z = threadlab::zone!("after");
        std::thread::sleep(Duration::from_millis(10));
    }
    // Tracy's vocabulary: 12 frames (the page's default target is their 90th percentile, so
    // the longest is late), a plot, coloured messages and zones with names made at run time.
    threadlab::trace::frame_mark();
    for i in 0..12u64 {
        let z = threadlab::trace::Zone::begin_dynamic(&format!("frame work {i}"));
        z.color(0x3366ff);
        threadlab::trace::plot("fps", 60.0 - i as f64);
        if i % 4 == 0 {
            threadlab::trace::message_color(&format!("checkpoint {i}"), 0xffaa00);
        }
        std::thread::sleep(Duration::from_millis(if i == 9 { 12 } else { 2 }));
        drop(z);
        threadlab::trace::frame_mark();
    }
    let trace = rec.stop();
    let small = d.join("small.pftrace");
    trace.save(&small).unwrap();
    let probe = trace
        .threads()
        .iter()
        .find(|t| t.name() == "probe")
        .unwrap();
    let begin = probe
        .events()
        .iter()
        .find(|e| matches!(e.kind, EventKind::ZoneBegin { .. }))
        .unwrap()
        .ts_ns as f64;
    let html = d.join("small.html");
    write_view(&small, &html);

    let full = layout(&bin, &html, "");
    assert_eq!(
        full["lanes"].as_u64().unwrap() as usize,
        trace.threads().len(),
        "one lane per thread"
    );
    let z = known_zone(&full);
    assert_eq!(z["t0"].as_f64().unwrap(), begin, "the zone's own start");
    let want = x_of(&full, begin).max(full["plot"]["x0"].as_f64().unwrap());
    let got = z["x0"].as_f64().unwrap();
    assert!(
        (got - want).abs() < 1.0,
        "known drawn at x {got}, its timestamps say {want}"
    );
    // Frames, the plot and the messages are drawn; their tracks sit above the lanes.
    let marks = &full["marks"];
    assert!(
        marks["frames"].as_u64().unwrap() >= 1,
        "frames drawn: {marks}"
    );
    assert!(
        marks["lateFrames"].as_u64().unwrap() >= 1,
        "a late frame drawn: {marks}"
    );
    assert!(
        marks["plotPoints"].as_u64().unwrap() >= 2,
        "plot drawn: {marks}"
    );
    assert_eq!(
        marks["messages"].as_u64(),
        Some(3),
        "three messages: {marks}"
    );
    let rows: Vec<(String, String)> = full["markRows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["kind"].as_str().unwrap().to_owned(),
                r["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            ("frames".to_owned(), "frame".to_owned()),
            ("plot".to_owned(), "fps".to_owned())
        ]
    );
    assert!(
        full["drawn"].as_array().unwrap().iter().any(|d| d["name"]
            .as_str()
            .is_some_and(|n| n.starts_with("frame work "))),
        "dynamic zone names drawn"
    );
    let px = &full["pixels"];
    assert!(
        px["lit"].as_f64().unwrap() > 0.01 * px["total"].as_f64().unwrap(),
        "the canvas is not blank: {px}"
    );

    // Zoomed onto the zone's start: it is drawn where the new view puts it, across the rest of
    // the plot, and the drawing differs.
    let hash = format!("#t0={}&t1={}", begin - 1e6, begin + 2e6);
    let zoomed = layout(&bin, &html, &hash);
    let z2 = known_zone(&zoomed);
    let want2 = x_of(&zoomed, begin);
    assert!(
        (z2["x0"].as_f64().unwrap() - want2).abs() < 1.0,
        "zoomed: {z2} vs {want2}"
    );
    // 3 ms of a 20 ms zone: it now runs to the plot's right edge, which it did not before.
    let right = zoomed["plot"]["x1"].as_f64().unwrap();
    assert!(z2["x1"].as_f64().unwrap() >= right - 0.5, "zoomed in: {z2}");
    assert!(z["x1"].as_f64().unwrap() < right - 10.0, "whole trace: {z}");
    assert_ne!(
        zoomed["drawnCount"], full["drawnCount"],
        "zooming changes what is drawn"
    );

    // A screenshot that is not blank: a PNG much larger than a uniform one.
    let shot = d.join("small.png");
    run_chromium(
        &bin,
        &[&format!("--screenshot={}", shot.display())],
        &format!("file://{}", html.display()),
    );
    let png = std::fs::read(&shot).expect("a screenshot");
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    assert!(
        png.len() > 20_000,
        "screenshot of {} bytes looks blank",
        png.len()
    );
    println!(
        "small trace: {} threads, screenshot {}",
        trace.threads().len(),
        shot.display()
    );

    // Load → first full draw: a thread-per-row run and a million events.
    // THREADLAB_VIEW_TRACE=FILE adds a trace of your own (e.g. the lab's
    // traces/image-thread-per-task.pftrace).
    let mut runs = vec![
        ("thread-per-row".to_owned(), record_thread_per_row()),
        ("million".to_owned(), record_million()),
    ];
    if let Some(p) = std::env::var_os("THREADLAB_VIEW_TRACE") {
        let t = Trace::load(&p).unwrap_or_else(|e| panic!("THREADLAB_VIEW_TRACE: {e}"));
        runs.push((
            Path::new(&p).file_stem().unwrap().to_string_lossy().into(),
            t,
        ));
    }
    for (name, t) in runs {
        let path = d.join(format!("{name}.pftrace"));
        t.save(&path).unwrap();
        let html = d.join(format!("{name}.html"));
        write_view(&path, &html);
        let l = layout(&bin, &html, "");
        assert_eq!(l["lanes"].as_u64().unwrap() as usize, t.threads().len());
        println!(
            "{name}: {} events, {} threads, page {:.1} MB: first full draw {:.0} ms after \
             navigation ({:.0} ms of script)",
            t.event_count(),
            t.threads().len(),
            std::fs::metadata(&html).unwrap().len() as f64 / 1e6,
            l["firstDrawMs"].as_f64().unwrap(),
            l["scriptMs"].as_f64().unwrap()
        );
    }
    answer_cards_follow_their_thresholds(&bin, &html, &d);
    // Inside the 20 ms zone `known`.
    axis_labels_never_overlap(&bin, &html, begin + 1e7);
    lock_wait_card_names_the_lock_and_its_holder(&bin, &d);
    observed_wait_card_names_the_holder_and_the_call_site(&bin, &d);
    chart_labels_never_overlap(&bin, &d);
    if std::env::var_os("THREADLAB_VIEW_KEEP").is_some() {
        println!("pages and screenshot kept in {}", d.display());
    } else {
        let _ = std::fs::remove_dir_all(&d);
    }
}

/// The doctor's answer cards as Chromium draws them, on the small trace and on a recording too
/// short to judge, in a wide and a narrow window: a card whose figure is at or above its
/// threshold is marked bad, below it good, one without a figure says "not enough to judge"
/// (never 0), and no card's text is cut.
fn answer_cards_follow_their_thresholds(bin: &Path, small: &Path, d: &Path) {
    let rec = threadlab::trace::start();
    let short = rec.stop();
    let short_path = d.join("short.pftrace");
    short.save(&short_path).unwrap();
    let short_html = d.join("short.html");
    write_view(&short_path, &short_html);
    let (mut judged, mut unjudged) = (0, 0);
    for page in [small, short_html.as_path()] {
        for width in [1400, 800] {
            let l = layout_with(bin, page, "", &[&format!("--window-size={width},700")]);
            let cards = l["answers"]
                .as_array()
                .expect("#layout has the answer cards");
            assert_eq!(cards.len(), 4, "four questions: {cards:?}");
            for c in cards {
                let cls = c["cls"].as_str().unwrap();
                assert_eq!(c["cut"], false, "{width} px: text cut in {c}");
                match (c["value"].as_f64(), c["threshold"].as_f64()) {
                    (None, _) => {
                        unjudged += 1;
                        assert!(cls.contains("unjudged"), "{c}");
                        assert_eq!(c["shown"], "not enough to judge", "{c}");
                    }
                    (Some(v), Some(t)) => {
                        judged += 1;
                        let want = if v >= t { "bad" } else { "good" };
                        assert!(cls.split(' ').any(|k| k == want), "{want}: {c}");
                    }
                    (Some(_), None) => {
                        judged += 1;
                        assert!(!cls.contains("bad") && !cls.contains("good"), "{c}");
                    }
                }
            }
        }
    }
    assert!(
        judged > 0 && unjudged > 0,
        "{judged} judged, {unjudged} unjudged cards"
    );
}

/// The viewer's time axis as Chromium draws it, in a wide and a narrow window (1400 and 800 px,
/// the width of a timeline beside a report) and at three zooms (the whole trace, 1 ms and 10 µs
/// around `at`): at least three labels, each ending before the next begins, no two alike.
fn axis_labels_never_overlap(bin: &Path, page: &Path, at: f64) {
    for width in [1400, 800] {
        let size = format!("--window-size={width},700");
        for (zoom, hash) in [
            ("whole trace", String::new()),
            ("1 ms", format!("#t0={}&t1={}", at - 5e5, at + 5e5)),
            ("10 µs", format!("#t0={}&t1={}", at - 5e3, at + 5e3)),
        ] {
            let l = layout_with(bin, page, &hash, &[&size]);
            let boxes = l["axis"].as_array().expect("#layout has the axis labels");
            let what = format!("{width} px, {zoom}: {boxes:?}");
            assert!(boxes.len() >= 3, "{what}");
            for pair in boxes.windows(2) {
                let (a, b) = (&pair[0], &pair[1]);
                assert!(
                    a["x1"].as_f64().unwrap() < b["x0"].as_f64().unwrap(),
                    "`{}` runs into `{}`: {what}",
                    a["label"],
                    b["label"]
                );
                assert_ne!(a["label"], b["label"], "{what}");
            }
        }
    }
}

/// Every chart of a (tiny) lab report, measured in Chromium: no two x-axis labels overlap.
fn chart_labels_never_overlap(bin: &Path, d: &Path) {
    let out = d.join("tiny-lab");
    let run = Command::new(env!("CARGO_BIN_EXE_threadlab"))
        .args([
            "lab",
            "--tiny",
            "--threads",
            "1,2",
            "--repeat",
            "1",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "threadlab lab --tiny: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let mut svgs: Vec<PathBuf> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "svg"))
        .collect();
    svgs.sort();
    assert!(svgs.len() >= 10, "charts written: {svgs:?}");
    // One page with every chart inline, and a script that writes each x label's box.
    let mut page = String::from("<!doctype html><html><body>");
    for p in &svgs {
        let svg = std::fs::read_to_string(p).unwrap();
        page += &format!(
            "<div data-file=\"{}\">{svg}</div>",
            p.file_name().unwrap().to_string_lossy()
        );
    }
    page += "<script id=\"boxes\" type=\"application/json\"></script><script>\
        const out = [...document.querySelectorAll('div[data-file]')].map((d) => ({ file: d.dataset.file,\
          boxes: [...d.querySelectorAll('text.xt')].map((t) => { const r = t.getBoundingClientRect();\
            return [r.left, r.top, r.right, r.bottom, t.textContent]; }) }));\
        document.getElementById('boxes').textContent = JSON.stringify(out);</script></body></html>";
    let html = d.join("charts.html");
    std::fs::write(&html, page).unwrap();
    let (dom, _) = run_chromium(bin, &["--dump-dom"], &format!("file://{}", html.display()));
    let start = dom
        .find("id=\"boxes\" type=\"application/json\">")
        .expect("the boxes")
        + "id=\"boxes\" type=\"application/json\">".len();
    let end = start + dom[start..].find("</script>").unwrap();
    let charts: Value = serde_json::from_str(&dom[start..end]).expect("boxes are JSON");
    let mut labels = 0;
    for c in charts.as_array().unwrap() {
        let boxes = c["boxes"].as_array().unwrap();
        labels += boxes.len();
        let b = |v: &Value| -> (f64, f64, f64, f64, String) {
            let f = |i: usize| v[i].as_f64().unwrap();
            (f(0), f(1), f(2), f(3), v[4].as_str().unwrap().to_owned())
        };
        for i in 0..boxes.len() {
            for j in i + 1..boxes.len() {
                let (p, q) = (b(&boxes[i]), b(&boxes[j]));
                let apart =
                    p.2 <= q.0 + 0.5 || q.2 <= p.0 + 0.5 || p.3 <= q.1 + 0.5 || q.3 <= p.1 + 0.5;
                assert!(
                    apart,
                    "{}: x labels `{}` and `{}` overlap ({p:?} / {q:?})",
                    c["file"], p.4, q.4
                );
            }
        }
    }
    assert!(labels > 50, "x labels measured: {labels}");
}

/// Hovering a lock wait in the state strip names the lock and the thread that held it.
fn lock_wait_card_names_the_lock_and_its_holder(bin: &Path, d: &Path) {
    use std::sync::{mpsc, Arc};
    let rec = threadlab::trace::start();
    let m = Arc::new(threadlab::sync::Mutex::named("handed", 0));
    let (held_tx, held_rx) = mpsc::channel();
    let m2 = Arc::clone(&m);
    let holder = std::thread::spawn(move || {
        threadlab::trace::set_thread_name("holder");
        let mut g = m2.lock();
        held_tx.send(()).unwrap();
        std::thread::sleep(Duration::from_millis(30));
        *g += 1;
    });
    held_rx.recv().unwrap();
    let m3 = Arc::clone(&m);
    let waiter = std::thread::spawn(move || {
        threadlab::trace::set_thread_name("waiter");
        *m3.lock() += 1;
    });
    holder.join().unwrap();
    waiter.join().unwrap();
    let trace = rec.stop();
    let path = d.join("lock-wait.pftrace");
    trace.save(&path).unwrap();
    let html = d.join("lock-wait.html");
    write_view(&path, &html);
    let (lane, t) = trace
        .threads()
        .iter()
        .enumerate()
        .find(|(_, t)| t.name() == "waiter")
        .map(|(i, t)| {
            let ts = |f: fn(&EventKind) -> bool| {
                t.events().iter().find(|e| f(&e.kind)).unwrap().ts_ns as f64
            };
            let began = ts(|k| matches!(k, EventKind::LockWait { .. }));
            let got = ts(|k| matches!(k, EventKind::LockAcquired { .. }));
            (i, (began + got) / 2.0)
        })
        .expect("the waiter's track");
    let l = layout(bin, &html, &format!("#hover={lane},{t}"));
    let card = l["card"]
        .as_str()
        .unwrap_or_else(|| panic!("no card shown: {l}"));
    assert!(card.contains("state: waiting on a lock"), "{card}");
    assert!(
        card.contains("waiting for lock handed, held by holder (tid "),
        "the card names the lock and its holder: {card}"
    );
}

/// A wait `threadlab run` saw from inside (no hold events, its holder and call site as the
/// wait's arguments): hovering it names the lock, the thread that held it and where it was
/// asked for.
fn observed_wait_card_names_the_holder_and_the_call_site(bin: &Path, d: &Path) {
    use threadlab::trace::{Event, TraceBuilder};
    let mut b = TraceBuilder::new();
    let lock = b.name("heap lock taken at remove_item (queue.c:23)");
    let (site_key, holder_key) = (
        b.name(threadlab_trace::ARG_LOCK_SITE),
        b.name(threadlab_trace::ARG_LOCK_HOLDER),
    );
    let (site, holder) = (b.name("insert_item (queue.c:15)"), b.name("4242"));
    b.thread(4242, "producer_loop");
    let waiter = b.thread(4243, "consumer_loop");
    let ms = 1_000_000;
    for (ts_ns, kind) in [
        (
            10 * ms,
            EventKind::LockWait {
                lock: 9,
                name: lock,
            },
        ),
        (
            10 * ms,
            EventKind::Arg {
                key: site_key,
                value: site,
            },
        ),
        (
            10 * ms,
            EventKind::Arg {
                key: holder_key,
                value: holder,
            },
        ),
        (
            30 * ms,
            EventKind::LockAcquired {
                lock: 9,
                name: lock,
                handoff: None,
            },
        ),
    ] {
        b.push(waiter, Event { ts_ns, kind });
    }
    b.duration_ns(40 * ms);
    let path = d.join("observed-wait.tltrace");
    b.build().save(&path).unwrap();
    let html = d.join("observed-wait.html");
    write_view(&path, &html);
    let l = layout(bin, &html, &format!("#hover=1,{}", 20 * ms));
    let card = l["card"]
        .as_str()
        .unwrap_or_else(|| panic!("no card shown: {l}"));
    assert!(
        card.contains(
            "waiting for lock heap lock taken at remove_item (queue.c:23), held by producer_loop \
             (tid 4242), asked at insert_item (queue.c:15)"
        ),
        "the card names the lock, its holder and the call site: {card}"
    );
}

/// *Multithreading Isn't Free*'s thread per row, scaled like the lab's image run: 3,024 threads, one zone
/// each.
fn record_thread_per_row() -> Trace {
    let rec = threadlab::trace::start();
    for batch in 0..(3024 / 48) {
        let hs: Vec<_> = (0..48)
            .map(|i| {
                std::thread::spawn(move || {
                    let _z = threadlab::zone!("row");
                    let mut row = vec![(batch * 48 + i) as u8; 4032 * 4];
                    for p in &mut row {
                        *p = p.wrapping_mul(2).wrapping_add(1);
                    }
                    std::hint::black_box(row);
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
    }
    rec.stop()
}

/// About a million events: four threads, 125,000 nested zone pairs each.
fn record_million() -> Trace {
    let rec = threadlab::trace::start();
    let hs: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(|| {
                for _ in 0..62_500 {
                    let _a = threadlab::zone!("outer");
                    let _b = threadlab::zone!("inner");
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    rec.stop()
}
