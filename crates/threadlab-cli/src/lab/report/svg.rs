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
        let l = Layout::of(self);
        let mut s = l.header();
        s += &l.y_grid();
        s += &match self.kind {
            Kind::Lines | Kind::Spans => l.numeric_x_ticks(),
            Kind::Bars => l.category_x_ticks(),
        };
        s += &l.axes();
        for (k, ser) in self.series.iter().enumerate() {
            let color = COLORS[k % COLORS.len()];
            s += &match self.kind {
                Kind::Lines => l.line(ser, color),
                Kind::Spans => l.spans(ser, color),
                Kind::Bars => l.bars(k, ser, color),
            };
            s += &l.legend_entry(k, ser, color);
        }
        s += &l.hlines();
        s += "</svg>\n";
        s
    }
}

/// Where a chart's parts go: the plot area, its axes, the whole drawing's size, and whether
/// the category names stand upright.
struct Layout<'c> {
    chart: &'c Chart,
    /// The plot area's width and height.
    pw: f64,
    ph: f64,
    /// The drawing's width and height.
    w: f64,
    h: f64,
    xaxis: Axis,
    yaxis: Axis,
    upright: bool,
}

impl<'c> Layout<'c> {
    fn of(chart: &'c Chart) -> Layout<'c> {
        let pw = W - LEFT - RIGHT;
        let ph = H - TOP - BOTTOM;
        let ys = chart
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .chain(chart.hlines.iter().map(|h| h.1));
        let mut yaxis = Axis::new(ys, chart.log_y, true);
        if chart.kind == Kind::Spans {
            // Rows are centred on their value: half a row of room below the first and above
            // the last, so no bar crosses an axis.
            yaxis.lo -= 0.5;
            yaxis.hi += 0.5;
        }
        // Wide enough for the longest legend entry (about 7 px per character at 12 px).
        let longest = chart
            .series
            .iter()
            .map(|s| s.name.chars().count())
            .max()
            .unwrap_or(0);
        let w = W.max(LEFT + pw + 30.0 + 7.0 * longest as f64 + 10.0);
        let xaxis = match chart.kind {
            Kind::Lines | Kind::Spans => Axis::new(
                chart
                    .series
                    .iter()
                    .flat_map(|s| s.points.iter().map(|p| p.0)),
                chart.log_x,
                false,
            ),
            Kind::Bars => Axis {
                lo: 0.0,
                hi: chart.categories.len().max(1) as f64,
                log: false,
            },
        };
        // Category names that would not fit side by side are set upright (reading upwards),
        // and the chart grows downwards by the longest one.
        let slot = pw / chart.categories.len().max(1) as f64;
        let upright = chart.kind == Kind::Bars
            && chart
                .categories
                .iter()
                .any(|c| label_width(c) + LABEL_GAP > slot);
        let extra = if upright {
            chart
                .categories
                .iter()
                .map(|c| label_width(c))
                .fold(0.0, f64::max)
                - 12.0
        } else {
            0.0
        }
        .max(0.0);
        Layout {
            chart,
            pw,
            ph,
            w,
            h: H + extra,
            xaxis,
            yaxis,
            upright,
        }
    }

    fn px(&self, x: f64) -> f64 {
        LEFT + self.xaxis.frac(x) * self.pw
    }

    fn py(&self, y: f64) -> f64 {
        TOP + (1.0 - self.yaxis.frac(y)) * self.ph
    }

    /// A value the y axis can show.
    fn ok(&self, v: f64) -> bool {
        v.is_finite() && (!self.chart.log_y || v > 0.0)
    }

    /// The document's start, its background and the title.
    fn header(&self) -> String {
        let (w, h) = (self.w, self.h);
        format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
             viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
             <rect width=\"{w}\" height=\"{h}\" fill=\"white\"/>\n\
             <text x=\"{}\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">{}</text>\n",
            LEFT + self.pw / 2.0,
            escape(&self.chart.title)
        )
    }

    /// The y axis's grid lines and tick labels.
    fn y_grid(&self) -> String {
        let mut s = String::new();
        for t in self.yaxis.ticks() {
            let y = self.py(t);
            s += &format!(
                "<line x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n",
                LEFT + self.pw,
                LEFT - 6.0,
                y + 4.0,
                fmt_tick(t)
            );
        }
        s
    }

    /// The x axis's ticks over numbers: every point's x when they are few, else the axis's.
    fn numeric_x_ticks(&self) -> String {
        let mut xs: Vec<f64> = self
            .chart
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0))
            .collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        let ticks = if xs.len() <= 12 {
            xs
        } else {
            self.xaxis.ticks()
        };
        // Every tick gets its mark; a label that would touch the one before it is left
        // out (values close together on the axis: 1, 2, 3 … beside 1,024).
        let (mut s, mut right_of_last) = (String::new(), f64::NEG_INFINITY);
        let bottom = TOP + self.ph;
        for t in ticks {
            let x = self.px(t);
            let label = fmt_tick(t);
            let half = label_width(&label) / 2.0;
            s += &format!(
                "<line x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#999\"/>",
                bottom,
                bottom + 5.0,
            );
            if x - half >= right_of_last + LABEL_GAP {
                right_of_last = x + half;
                s += &format!(
                    "<text class=\"xt\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                    bottom + 18.0,
                    label
                );
            }
            s.push('\n');
        }
        s
    }

    /// The x axis's category names, side by side or upright.
    fn category_x_ticks(&self) -> String {
        let mut s = String::new();
        let bottom = TOP + self.ph;
        for (i, c) in self.chart.categories.iter().enumerate() {
            let x = self.px(i as f64 + 0.5);
            s += &if self.upright {
                format!(
                    "<text class=\"xt\" transform=\"translate({:.1},{:.1}) rotate(-90)\" \
                     text-anchor=\"end\">{}</text>\n",
                    x + 4.0,
                    bottom + 8.0,
                    escape(c)
                )
            } else {
                format!(
                    "<text class=\"xt\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n",
                    bottom + 18.0,
                    escape(c)
                )
            };
        }
        s
    }

    /// The two axes and their labels.
    fn axes(&self) -> String {
        let (c, pw, ph) = (self.chart, self.pw, self.ph);
        format!(
            "<line x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{LEFT}\" y2=\"{b:.1}\" stroke=\"black\"/>\
             <line x1=\"{LEFT}\" y1=\"{b:.1}\" x2=\"{r:.1}\" y2=\"{b:.1}\" stroke=\"black\"/>\n\
             <text x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n\
             <text transform=\"translate(16,{cy:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
            self.h - 12.0,
            escape(&c.x_label),
            escape(&format!(
                "{}{}",
                c.y_label,
                if c.log_y { " (log scale)" } else { "" }
            )),
            b = TOP + ph,
            r = LEFT + pw,
            cx = LEFT + pw / 2.0,
            cy = TOP + ph / 2.0,
        )
    }

    /// A series as points joined by a line.
    fn line(&self, ser: &Series, color: &str) -> String {
        let pts: Vec<String> = ser
            .points
            .iter()
            .filter(|p| self.ok(p.1) && (!self.chart.log_x || p.0 > 0.0))
            .map(|p| format!("{:.1},{:.1}", self.px(p.0), self.py(p.1)))
            .collect();
        let mut s = format!(
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" points=\"{}\"/>\n",
            pts.join(" ")
        );
        for p in &pts {
            let (x, y) = p.split_once(',').unwrap_or(("0", "0"));
            s += &format!("<circle cx=\"{x}\" cy=\"{y}\" r=\"3\" fill=\"{color}\"/>\n");
        }
        s
    }

    /// A series of spans, a bar per `(start, row)`, `(end, row)` pair.
    fn spans(&self, ser: &Series, color: &str) -> String {
        // Rows are one unit apart; a bar is 70% of a row's height.
        let h = 0.7 * self.ph / (self.yaxis.hi - self.yaxis.lo).max(1.0);
        let mut s = String::new();
        for pair in ser.points.chunks_exact(2) {
            let ((x0, row), x1) = (pair[0], pair[1].0);
            if !(x0.is_finite() && x1.is_finite() && row.is_finite()) {
                continue;
            }
            s += &format!(
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{h:.1}\" \
                 fill=\"{color}\"><title>{} {}: {}–{}</title></rect>\n",
                self.px(x0),
                self.py(row) - h / 2.0,
                (self.px(x1) - self.px(x0)).max(0.5),
                escape(&ser.name),
                fmt_tick(row),
                fmt_tick(x0),
                fmt_tick(x1)
            );
        }
        s
    }

    /// The `k`-th series' bars, one in each category's group.
    fn bars(&self, k: usize, ser: &Series, color: &str) -> String {
        let c = self.chart;
        let base = if c.log_y {
            self.yaxis.lo
        } else {
            0.0f64.max(self.yaxis.lo)
        };
        let slot = self.pw / c.categories.len().max(1) as f64;
        let bw = slot * 0.8 / c.series.len().max(1) as f64;
        let mut s = String::new();
        for &(x, y) in ser.points.iter().filter(|p| self.ok(p.1)) {
            let x0 = LEFT + x * slot + slot * 0.1 + k as f64 * bw;
            let (top, bottom) = (self.py(y), self.py(base));
            s += &format!(
                "<rect x=\"{x0:.1}\" y=\"{top:.1}\" width=\"{bw:.1}\" height=\"{:.1}\" \
                 fill=\"{color}\"><title>{}: {}</title></rect>\n",
                (bottom - top).max(0.5),
                escape(&ser.name),
                fmt_tick(y)
            );
        }
        s
    }

    /// The `k`-th series' legend entry, right of the plot.
    fn legend_entry(&self, k: usize, ser: &Series, color: &str) -> String {
        let ly = TOP + 10.0 + 18.0 * k as f64;
        format!(
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"{color}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\">{}</text>\n",
            LEFT + self.pw + 12.0,
            ly - 10.0,
            LEFT + self.pw + 30.0,
            ly,
            escape(&ser.name)
        )
    }

    /// The dashed reference lines, each with its label.
    fn hlines(&self) -> String {
        let mut s = String::new();
        for (label, y) in self.chart.hlines.iter().filter(|h| self.ok(h.1)) {
            s += &format!(
                "<line x1=\"{LEFT}\" y1=\"{y0:.1}\" x2=\"{:.1}\" y2=\"{y0:.1}\" stroke=\"#444\" \
                 stroke-dasharray=\"6 4\"/><text x=\"{:.1}\" y=\"{:.1}\" fill=\"#444\">{}</text>\n",
                LEFT + self.pw,
                LEFT + 6.0,
                self.py(*y) - 4.0,
                escape(label),
                y0 = self.py(*y),
            );
        }
        s
    }
}
