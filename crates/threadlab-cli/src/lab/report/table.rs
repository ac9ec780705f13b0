//! Tables: one value type rendered both as aligned terminal text and as HTML.

/// A table with a title, a header row and string cells (already formatted).
#[derive(Debug, Clone, Default)]
pub struct Table {
    /// Shown above the table.
    pub title: String,
    /// Column headers.
    pub headers: Vec<String>,
    /// Rows of cells, each as long as `headers`.
    pub rows: Vec<Vec<String>>,
    /// How many leading columns hold text (left-aligned); the rest are numbers (right-aligned).
    pub text_cols: usize,
}

impl Table {
    /// A table with these headers and no rows.
    pub fn new(title: impl Into<String>, headers: &[&str]) -> Table {
        Table {
            title: title.into(),
            headers: headers.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
            text_cols: 1,
        }
    }

    /// Sets how many leading columns are left-aligned text.
    pub fn text_columns(mut self, n: usize) -> Table {
        self.text_cols = n;
        self
    }

    /// Appends a row; missing cells become `-`.
    pub fn row(&mut self, cells: Vec<String>) {
        let mut cells = cells;
        cells.resize(self.headers.len(), "-".into());
        self.rows.push(cells);
    }

    /// Aligned text: the leading text columns left-aligned, the others right-aligned.
    pub fn render_text(&self) -> String {
        let n = self.headers.len();
        let width = |i: usize| {
            self.rows
                .iter()
                .map(|r| r[i].chars().count())
                .chain([self.headers[i].chars().count()])
                .max()
                .unwrap_or(0)
        };
        let widths: Vec<usize> = (0..n).map(width).collect();
        let line = |cells: &[String]| {
            let mut s = String::from("  ");
            for (i, c) in cells.iter().enumerate() {
                let pad = widths[i] - c.chars().count();
                if i < self.text_cols {
                    if i > 0 {
                        s += "  ";
                    }
                    s += c;
                    s += &" ".repeat(pad);
                } else {
                    s += "  ";
                    s += &" ".repeat(pad);
                    s += c;
                }
            }
            s.trim_end().to_string() + "\n"
        };
        let mut out = format!("{}\n", self.title);
        out += &line(&self.headers);
        let total: usize = widths.iter().sum::<usize>() + 2 * n.saturating_sub(1);
        out += &format!("  {}\n", "-".repeat(total));
        for r in &self.rows {
            out += &line(r);
        }
        out
    }

    /// An HTML `<table>` with a caption (escaped).
    pub fn render_html(&self) -> String {
        use crate::markup::escape;
        let mut s = format!(
            "<table>\n<caption>{}</caption>\n<thead><tr>",
            escape(&self.title)
        );
        for h in &self.headers {
            s += &format!("<th>{}</th>", escape(h));
        }
        s += "</tr></thead>\n<tbody>\n";
        for r in &self.rows {
            s += "<tr>";
            for c in r {
                s += &format!("<td>{}</td>", escape(c));
            }
            s += "</tr>\n";
        }
        s += "</tbody>\n</table>\n";
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align() {
        let mut t = Table::new("t", &["variant", "time"]);
        t.row(vec!["serial".into(), "1.00 ms".into()]);
        t.row(vec!["thread-per-task".into(), "123.45 ms".into()]);
        let text = t.render_text();
        let lines: Vec<&str> = text.lines().skip(2).collect();
        // Right-aligned second column: both rows end at the same column.
        assert_eq!(lines[1].chars().count(), lines[2].chars().count());
        assert!(t.render_html().contains("<td>thread-per-task</td>"));
    }
}
