//! Hand-written SVG charts: lines over a numeric x axis, or grouped bars over categories; either
//! axis may be logarithmic. No dependencies, self-contained output (no fonts or scripts fetched).

use crate::markup::escape;

/// How the chart draws its series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Points joined by lines; x is numeric.
    Lines,
    /// Grouped bars; x of each point is an index into `categories`.
    Bars,
    /// Horizontal spans (a Gantt chart): each series' points come in pairs, `(start, row)` then
    /// `(end, row)`, drawn as a bar on row `row` from `start` to `end` in the series' colour.
    Spans,
}

/// One named series of (x, y) points.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// The points; NaN or non-positive values on a log axis are skipped.
    pub points: Vec<(f64, f64)>,
}

/// A chart, rendered to a standalone SVG file by [`Chart::render`].
#[derive(Debug, Clone)]
pub struct Chart {
    /// File name stem (no extension), unique within the report.
    pub file: String,
    /// Title drawn above the plot.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// Logarithmic x axis (lines only).
    pub log_x: bool,
    /// Logarithmic y axis.
    pub log_y: bool,
    /// Lines or bars.
    pub kind: Kind,
    /// Category labels for bars.
    pub categories: Vec<String>,
    /// The data.
    pub series: Vec<Series>,
    /// Dashed horizontal reference lines (label, y).
    pub hlines: Vec<(String, f64)>,
}

const W: f64 = 760.0;
const H: f64 = 420.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 200.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 50.0;
/// Room kept between two labels side by side, px.
const LABEL_GAP: f64 = 4.0;

/// A label's width at the charts' 12 px sans-serif, px: a generous estimate (7 px a character;
/// digits and most lower-case letters take 6–7), so labels judged apart are apart.
fn label_width(text: &str) -> f64 {
    7.0 * text.chars().count() as f64
}
const COLORS: [&str; 10] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
}

impl Axis {
    fn new(values: impl Iterator<Item = f64>, log: bool, zero: bool) -> Axis {
        let vals: Vec<f64> = values
            .filter(|v| v.is_finite() && (!log || *v > 0.0))
            .collect();
        let (mut lo, mut hi) = vals
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                (a.min(v), b.max(v))
            });
        if !lo.is_finite() {
            (lo, hi) = (1.0, 10.0);
        }
        if log {
            lo = 10f64.powf(lo.log10().floor());
            hi = 10f64.powf(hi.log10().ceil());
            if hi <= lo {
                hi = lo * 10.0;
            }
        } else {
            if zero {
                lo = lo.min(0.0);
            }
            if hi <= lo {
                hi = lo + 1.0;
            }
            hi += (hi - lo) * 0.05;
        }
        Axis { lo, hi, log }
    }

    /// Position in [0, 1].
    fn frac(&self, v: f64) -> f64 {
        if self.log {
            (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        }
    }

    fn ticks(&self) -> Vec<f64> {
        if self.log {
            let (a, b) = (
                self.lo.log10().round() as i32,
                self.hi.log10().round() as i32,
            );
            let step = ((b - a) / 8).max(1);
            (a..=b)
                .step_by(step as usize)
                .map(|e| 10f64.powi(e))
                .collect()
        } else {
            let raw = (self.hi - self.lo) / 6.0;
            let mag = 10f64.powf(raw.log10().floor());
            let step = [1.0, 2.0, 5.0, 10.0]
                .iter()
                .map(|m| m * mag)
                .find(|s| *s >= raw)
                .unwrap_or(raw);
            let mut t = (self.lo / step).ceil() * step;
            let mut out = Vec::new();
            while t <= self.hi + 1e-9 {
                out.push(t);
                t += step;
            }
            out
        }
    }
}

fn fmt_tick(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 1e4 || v.abs() < 1e-2 {
        format!("{v:.0e}")
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}").trim_end_matches('0').to_string()
    }
}

impl Chart {
    /// A line chart.
    pub fn lines(file: &str, title: &str, x_label: &str, y_label: &str) -> Chart {
        Chart {
            file: file.into(),
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            log_x: false,
            log_y: false,
            kind: Kind::Lines,
            categories: Vec::new(),
            series: Vec::new(),
            hlines: Vec::new(),
        }
    }

    /// A Gantt-like chart of spans (see [`Kind::Spans`]): rows up the y axis, time along x.
    pub fn spans(file: &str, title: &str, x_label: &str, y_label: &str) -> Chart {
        Chart {
            kind: Kind::Spans,
            ..Chart::lines(file, title, x_label, y_label)
        }
    }

    /// A grouped bar chart over `categories`.
    pub fn bars(file: &str, title: &str, categories: Vec<String>, y_label: &str) -> Chart {
        Chart {
            kind: Kind::Bars,
            categories,
            ..Chart::lines(file, title, "", y_label)
        }
    }

    /// Adds a series named `name` with `points`.
    pub fn add(&mut self, name: impl Into<String>, points: Vec<(f64, f64)>) {
        self.series.push(Series {
            name: name.into(),
            points,
        });
    }

    /// Adds a series named `name` whose `i`-th value is at x = `i` (a bar chart's `i`-th
    /// category, or a line's `i`-th step).
    pub fn add_by_index(&mut self, name: impl Into<String>, ys: impl IntoIterator<Item = f64>) {
        let points = ys
            .into_iter()
            .enumerate()
            .map(|(i, y)| (i as f64, y))
            .collect();
        self.add(name, points);
    }

    /// The chart as a standalone SVG document.
    pub fn render(&self) -> String {
        let pw = W - LEFT - RIGHT;
        let ph = H - TOP - BOTTOM;
        let ys = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .chain(self.hlines.iter().map(|h| h.1));
        let mut yaxis = Axis::new(ys, self.log_y, true);
        if self.kind == Kind::Spans {
            // Rows are centred on their value: half a row of room below the first and above
            // the last, so no bar crosses an axis.
            yaxis.lo -= 0.5;
            yaxis.hi += 0.5;
        }
        // Wide enough for the longest legend entry (about 7 px per character at 12 px).
        let longest = self
            .series
            .iter()
            .map(|s| s.name.chars().count())
            .max()
            .unwrap_or(0);
        let w = W.max(LEFT + pw + 30.0 + 7.0 * longest as f64 + 10.0);
        let xaxis = match self.kind {
            Kind::Lines | Kind::Spans => Axis::new(
                self.series
                    .iter()
                    .flat_map(|s| s.points.iter().map(|p| p.0)),
                self.log_x,
                false,
            ),
            Kind::Bars => Axis {
                lo: 0.0,
                hi: self.categories.len().max(1) as f64,
                log: false,
            },
        };
        let px = |x: f64| LEFT + xaxis.frac(x) * pw;
        let py = |y: f64| TOP + (1.0 - yaxis.frac(y)) * ph;
        // Category names that would not fit side by side are set upright (reading upwards),
        // and the chart grows downwards by the longest one.
        let slot = pw / self.categories.len().max(1) as f64;
        let upright = self.kind == Kind::Bars
            && self
                .categories
                .iter()
                .any(|c| label_width(c) + LABEL_GAP > slot);
        let extra = if upright {
            self.categories
                .iter()
                .map(|c| label_width(c))
                .fold(0.0, f64::max)
                - 12.0
        } else {
            0.0
        }
        .max(0.0);
        let h = H + extra;
        let mut s = format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
             viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
             <rect width=\"{w}\" height=\"{h}\" fill=\"white\"/>\n\
             <text x=\"{}\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">{}</text>\n",
            LEFT + pw / 2.0,
            escape(&self.title)
        );
        // Y grid and ticks.
        for t in yaxis.ticks() {
            let y = py(t);
            s += &format!(
                "<line x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n",
                LEFT + pw,
                LEFT - 6.0,
                y + 4.0,
                fmt_tick(t)
            );
        }
        // X ticks.
        match self.kind {
            Kind::Lines | Kind::Spans => {
                let mut xs: Vec<f64> = self
                    .series
                    .iter()
                    .flat_map(|s| s.points.iter().map(|p| p.0))
                    .collect();
                xs.sort_by(f64::total_cmp);
                xs.dedup();
                let ticks = if xs.len() <= 12 { xs } else { xaxis.ticks() };
                // Every tick gets its mark; a label that would touch the one before it is left
                // out (values close together on the axis: 1, 2, 3 … beside 1,024).
                let mut right_of_last = f64::NEG_INFINITY;
                for t in ticks {
                    let x = px(t);
                    let label = fmt_tick(t);
                    let half = label_width(&label) / 2.0;
                    s += &format!(
                        "<line x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#999\"/>",
                        TOP + ph,
                        TOP + ph + 5.0,
                    );
                    if x - half >= right_of_last + LABEL_GAP {
                        right_of_last = x + half;
                        s += &format!(
                            "<text class=\"xt\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                            TOP + ph + 18.0,
                            label
                        );
                    }
                    s.push('\n');
                }
            }
            Kind::Bars => {
                for (i, c) in self.categories.iter().enumerate() {
                    let x = px(i as f64 + 0.5);
                    s += &if upright {
                        format!(
                            "<text class=\"xt\" transform=\"translate({:.1},{:.1}) rotate(-90)\" \
                             text-anchor=\"end\">{}</text>\n",
                            x + 4.0,
                            TOP + ph + 8.0,
                            escape(c)
                        )
                    } else {
                        format!(
                            "<text class=\"xt\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n",
                            TOP + ph + 18.0,
                            escape(c)
                        )
                    };
                }
            }
        }
        // Axes and labels.
        s += &format!(
            "<line x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{LEFT}\" y2=\"{b:.1}\" stroke=\"black\"/>\
             <line x1=\"{LEFT}\" y1=\"{b:.1}\" x2=\"{r:.1}\" y2=\"{b:.1}\" stroke=\"black\"/>\n\
             <text x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n\
             <text transform=\"translate(16,{cy:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
            h - 12.0,
            escape(&self.x_label),
            escape(&format!(
                "{}{}",
                self.y_label,
                if self.log_y { " (log scale)" } else { "" }
            )),
            b = TOP + ph,
            r = LEFT + pw,
            cx = LEFT + pw / 2.0,
            cy = TOP + ph / 2.0,
        );
        let ok = |v: f64| v.is_finite() && (!self.log_y || v > 0.0);
        let base = if self.log_y {
            yaxis.lo
        } else {
            0.0f64.max(yaxis.lo)
        };
        let n = self.series.len().max(1) as f64;
        for (k, ser) in self.series.iter().enumerate() {
            let color = COLORS[k % COLORS.len()];
            match self.kind {
                Kind::Lines => {
                    let pts: Vec<String> = ser
                        .points
                        .iter()
                        .filter(|p| ok(p.1) && (!self.log_x || p.0 > 0.0))
                        .map(|p| format!("{:.1},{:.1}", px(p.0), py(p.1)))
                        .collect();
                    s += &format!(
                        "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" points=\"{}\"/>\n",
                        pts.join(" ")
                    );
                    for p in &pts {
                        let (x, y) = p.split_once(',').unwrap_or(("0", "0"));
                        s += &format!("<circle cx=\"{x}\" cy=\"{y}\" r=\"3\" fill=\"{color}\"/>\n");
                    }
                }
                Kind::Spans => {
                    // Rows are one unit apart; a bar is 70% of a row's height.
                    let h = 0.7 * ph / (yaxis.hi - yaxis.lo).max(1.0);
                    for pair in ser.points.chunks_exact(2) {
                        let ((x0, row), x1) = (pair[0], pair[1].0);
                        if !(x0.is_finite() && x1.is_finite() && row.is_finite()) {
                            continue;
                        }
                        s += &format!(
                            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{h:.1}\" \
                             fill=\"{color}\"><title>{} {}: {}–{}</title></rect>\n",
                            px(x0),
                            py(row) - h / 2.0,
                            (px(x1) - px(x0)).max(0.5),
                            escape(&ser.name),
                            fmt_tick(row),
                            fmt_tick(x0),
                            fmt_tick(x1)
                        );
                    }
                }
                Kind::Bars => {
                    let slot = pw / self.categories.len().max(1) as f64;
                    let bw = slot * 0.8 / n;
                    for &(x, y) in ser.points.iter().filter(|p| ok(p.1)) {
                        let x0 = LEFT + x * slot + slot * 0.1 + k as f64 * bw;
                        let (top, bottom) = (py(y), py(base));
                        s += &format!(
                            "<rect x=\"{x0:.1}\" y=\"{top:.1}\" width=\"{bw:.1}\" height=\"{:.1}\" \
                             fill=\"{color}\"><title>{}: {}</title></rect>\n",
                            (bottom - top).max(0.5),
                            escape(&ser.name),
                            fmt_tick(y)
                        );
                    }
                }
            }
            let ly = TOP + 10.0 + 18.0 * k as f64;
            s += &format!(
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"{color}\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\">{}</text>\n",
                LEFT + pw + 12.0,
                ly - 10.0,
                LEFT + pw + 30.0,
                ly,
                escape(&ser.name)
            );
        }
        for (label, y) in self.hlines.iter().filter(|h| ok(h.1)) {
            s += &format!(
                "<line x1=\"{LEFT}\" y1=\"{y0:.1}\" x2=\"{:.1}\" y2=\"{y0:.1}\" stroke=\"#444\" \
                 stroke-dasharray=\"6 4\"/><text x=\"{:.1}\" y=\"{:.1}\" fill=\"#444\">{}</text>\n",
                LEFT + pw,
                LEFT + 6.0,
                py(*y) - 4.0,
                escape(label),
                y0 = py(*y),
            );
        }
        s += "</svg>\n";
        s
    }
}
