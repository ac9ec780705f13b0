//! The self-contained HTML report: inline CSS, charts as SVG files beside it referenced
//! relatively (and embedded, so the page also works when copied alone), no network.

use super::Setting;
use crate::fmt::fmt_bytes;
use crate::lab::report::table::Table;
use crate::lab::{Report, TraceRun};
use crate::markup::escape;

const CSS: &str = "body{font-family:sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;color:#222}\
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-top:1em}\
table{border-collapse:collapse;margin:1em 0;font-size:0.9em}caption{text-align:left;font-weight:bold;padding:0.3em 0}\
th,td{border:1px solid #ccc;padding:0.25em 0.6em;text-align:right}th:first-child,td:first-child{text-align:left}\
.finding{font-size:1.1em;background:#f4f8ff;border-left:4px solid #1f77b4;padding:0.5em 1em}\
.failed{background:#fff0f0;border-left:4px solid #d62728;padding:0.5em 1em}.note{color:#555}\
.pitfall{background:#fff8e6;border-left:4px solid #ff7f0e;padding:0.3em 1em;margin:0.3em 0}\
.timeline{width:100%;height:560px;border:1px solid #ccc}\
pre{background:#f6f6f6;padding:0.8em;overflow-x:auto}";

/// The report page. Chart `c` is expected at `c.file + ".svg"` beside the page.
pub fn render(setting: &Setting, command: &str, reports: &[Report]) -> String {
    let machine = &setting.machine;
    let mut s =
        String::from("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n");
    s += "<title>threadlab lab report</title>\n";
    s += &format!("<style>{CSS}</style>\n</head>\n<body>\n<h1>threadlab lab report</h1>\n");
    s += &format!(
        "<p>Command: <code>{}</code>. Machine: {} — {} logical CPU(s), {} core(s), {} RAM, kernel {}. \
         Every figure is a median of repeated runs; variants are compared as ratios measured in \
         the same run. Small shared machines are noisy: read differences below ~10% as noise.</p>\n",
        escape(command),
        escape(&machine.cpu_model),
        machine.logical_cpus,
        machine.physical_cores,
        fmt_bytes(machine.memory_bytes),
        escape(&machine.kernel)
    );
    s += &format!("<pre>{}</pre>\n<ul>\n", escape(&setting.render()));
    for r in reports {
        s += &format!(
            "<li><a href=\"#{0}\">{0}</a> — {1}</li>\n",
            r.name,
            escape(r.description)
        );
    }
    s += "</ul>\n";
    for r in reports {
        s += &format!(
            "<section id=\"{0}\">\n<h2>{0}</h2>\n<p>{1} <span class=\"note\">({2:.1} s)</span></p>\n",
            r.name,
            escape(r.description),
            r.seconds
        );
        match &r.result {
            Ok(o) => {
                s += &format!("<p class=\"finding\">{}</p>\n", escape(&o.finding));
                for n in &o.notes {
                    s += &format!("<p class=\"note\">Note: {}</p>\n", escape(n));
                }
                for t in &o.tables {
                    s += &t.render_html();
                }
                for c in &o.charts {
                    s += &format!(
                        "<figure>\n{}<figcaption><a href=\"{}.svg\">{}.svg</a></figcaption>\n</figure>\n",
                        c.render(),
                        c.file,
                        c.file
                    );
                }
            }
            Err(e) => {
                s += &format!(
                    "<p class=\"failed\">This experiment failed: {}</p>\n",
                    escape(e)
                )
            }
        }
        s += &traces(r);
        s += "</section>\n";
    }
    s += "</body>\n</html>\n";
    s
}

/// The traces an experiment recorded: links, the doctor's findings and its four answers.
fn traces(r: &Report) -> String {
    if r.traces.is_empty() {
        return String::new();
    }
    let mut s = String::from("<h3>Traces and the doctor's findings</h3>\n");
    for t in &r.traces {
        s += &trace(t);
    }
    s
}

fn trace(t: &TraceRun) -> String {
    let file = |p: &str| p.rsplit('/').next().unwrap_or(p).to_owned();
    let mut s = format!(
        "<h4>{}</h4>\n<p><a href=\"{}\">{}</a> (open in ui.perfetto.dev) · <a href=\"{}\">{}</a> \
         (<code>threadlab doctor {}</code>) · {} events</p>\n",
        escape(&t.label),
        escape(&t.pftrace),
        escape(&file(&t.pftrace)),
        escape(&t.tltrace),
        escape(&file(&t.tltrace)),
        escape(&t.tltrace),
        t.events
    );
    if let Some(e) = &t.save_error {
        s += &format!(
            "<p class=\"failed\">The trace could not be saved: {}</p>\n",
            escape(e)
        );
    } else {
        // The timeline itself, `threadlab view`'s page (loaded when scrolled to).
        s += &format!(
            "<p><a href=\"{v}\">timeline</a> (opens on its own; wheel to zoom, drag to pan)</p>\n\
             <iframe class=\"timeline\" src=\"{v}\" loading=\"lazy\" title=\"{}\"></iframe>\n",
            escape(&t.label),
            v = escape(&t.viewer),
        );
    }
    let d = &t.diagnosis;
    if d.findings.is_empty() {
        s += "<p>No known pitfall found.</p>\n";
    }
    for f in &d.findings {
        s += &format!(
            "<p class=\"pitfall\"><b>{}</b> ({}): {}. <i>Suggestion:</i> {}.</p>\n",
            f.pitfall,
            escape(&f.subject),
            escape(&f.evidence),
            escape(&f.suggestion)
        );
    }
    let mut answers = Table::new(
        "the four questions of \u{201c}Multithreading Isn\u{2019}t Free\u{201d}",
        &["question", "answer", "figure"],
    )
    .text_columns(2);
    for a in &d.answers {
        answers.row(vec![
            a.question.into(),
            a.answer.clone(),
            a.figure.as_ref().map_or_else(
                || "not enough data to judge".to_owned(),
                |f| format!("{} = {:.3}", f.name, f.value),
            ),
        ]);
    }
    s += &answers.render_html();
    s
}
