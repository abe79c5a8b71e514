//! Printers of a [`Comparison`]: Markdown for a pull-request comment, plain text for a
//! terminal, both laying out its one view-model ([`view::comparison_view`]); the page lays out
//! the same view. What a reviewer reads first comes first: the answer, what changed, verdict
//! flips and capacity, then the metrics that changed or could not be told, then what was not
//! comparable.

pub mod view;
pub mod words;

pub use view::{comparison_view, ComparisonView};
pub use words::{headline, leads};

use crate::analyse::regression::types::Comparison;
use crate::show::render::md_escape;

/// Which printer.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    Text,
    Markdown,
}

/// The comparison as Markdown (a pull-request comment).
pub fn markdown(c: &Comparison) -> String {
    print(&comparison_view(c), Style::Markdown)
}

/// The comparison as plain text.
pub fn text(c: &Comparison) -> String {
    print(&comparison_view(c), Style::Text)
}

struct Out {
    style: Style,
    s: String,
}

impl Out {
    /// A string of the view (already inert), escaped for Markdown where that is the style.
    fn esc(&self, v: &str) -> String {
        match self.style {
            Style::Markdown => md_escape(v),
            Style::Text => v.to_string(),
        }
    }

    fn heading(&mut self, h: &str) {
        match self.style {
            Style::Markdown => self.s.push_str(&format!("\n### {h}\n\n")),
            Style::Text => self.s.push_str(&format!("\n{h}\n")),
        }
    }

    fn row(&mut self, cells: &[&str]) {
        let cells: Vec<String> = cells.iter().map(|c| self.esc(c)).collect();
        match self.style {
            Style::Markdown => self.s.push_str(&format!("| {} |\n", cells.join(" | "))),
            Style::Text => self.s.push_str(&format!("  {}\n", cells.join("  "))),
        }
    }

    fn header(&mut self, cells: &[&str]) {
        self.row(cells);
        if self.style == Style::Markdown {
            let rule = vec!["---".to_string(); cells.len()];
            self.s.push_str(&format!("| {} |\n", rule.join(" | ")));
        }
    }

    fn bullet(&mut self, line: &str) {
        let line = self.esc(line);
        self.s.push_str(&format!("- {line}\n"));
    }

    fn bullets(&mut self, heading: &str, lines: &[String]) {
        if lines.is_empty() {
            return;
        }
        self.heading(heading);
        for l in lines {
            self.bullet(l);
        }
    }
}

fn print(v: &ComparisonView, style: Style) -> String {
    let mut o = Out {
        style,
        s: String::new(),
    };
    let title = match style {
        Style::Markdown => format!("## sloscope compare: {}\n", o.esc(&v.headline)),
        Style::Text => format!("sloscope compare: {}\n", v.headline),
    };
    o.s.push_str(&title);
    judged(v, &mut o);
    if v.refused.len() > 1 {
        o.bullets("Not compared because", &v.refused);
    }
    changed(v, &mut o);
    verdicts(v, &mut o);
    capacity(v, &mut o);
    changes(v, &mut o);
    o.bullets("Not comparable", &v.not_comparable);
    o.bullets("Notes", &v.notes);
    o.s
}

/// What is judged, a line each (a value that differs as `before X → after Y`).
fn judged(v: &ComparisonView, o: &mut Out) {
    if v.subject.is_empty() {
        return;
    }
    o.s.push('\n');
    for l in &v.subject {
        let line = format!("{}: {}", l.label, l.value);
        match o.style {
            Style::Markdown => o.s.push_str(&format!("{}  \n", o.esc(&line))),
            Style::Text => o.s.push_str(&format!("{line}\n")),
        }
    }
}

fn changed(v: &ComparisonView, o: &mut Out) {
    let Some(rows) = &v.changed else { return };
    o.heading("What changed");
    if rows.is_empty() {
        o.s.push_str(view::NOTHING_CHANGED);
        o.s.push('\n');
        return;
    }
    o.header(&["", "before", "after"]);
    for r in rows {
        o.row(&[&r.what, &r.before, &r.after]);
    }
}

fn verdicts(v: &ComparisonView, o: &mut Out) {
    if v.verdicts.is_empty() {
        return;
    }
    o.heading("Verdicts");
    o.header(&["profile", "before", "after", "binding SLO before", "after"]);
    for r in &v.verdicts {
        let after = format!("{}{}", r.after, if r.flipped { " ⚠ changed" } else { "" });
        o.row(&[
            &r.profile,
            &r.before,
            &after,
            &r.binding_before,
            &r.binding_after,
        ]);
    }
}

fn capacity(v: &ComparisonView, o: &mut Out) {
    if v.capacity.is_empty() {
        return;
    }
    o.heading("Capacity");
    for k in &v.capacity {
        o.bullet(&k.line);
        for (line, _) in &k.candidates {
            o.bullet(line);
        }
    }
}

fn changes(v: &ComparisonView, o: &mut Out) {
    if v.changes.is_empty() {
        return;
    }
    o.heading("Changes (95% intervals; a change counts beyond both parts of its threshold)");
    o.header(&[
        "profile",
        "candidate",
        "metric",
        "before",
        "after",
        "change",
        "interval",
        "detectable",
        "threshold",
        "label",
    ]);
    for r in v.changes.iter().filter(|r| r.leads) {
        o.row(&[
            &r.profile,
            &r.candidate,
            &r.metric,
            &r.before,
            &r.after,
            &r.change,
            &r.interval,
            &r.detectable,
            &r.threshold,
            &r.label,
        ]);
    }
    o.s.push_str(&folded(v));
    o.s.push_str(
        "A change is inconclusive only where the smallest change its interval can detect (80% \
         power) is larger than its threshold; near the threshold otherwise.\n",
    );
    for line in &v.by_shift {
        o.bullet(line);
    }
    shifts(v, o);
    for line in &v.requests {
        o.bullet(line);
    }
}

/// The rows not listed, counted.
fn folded(v: &ComparisonView) -> String {
    let mut s = match v.unchanged {
        0 => "\n".to_string(),
        1 => "\n1 more metric shows no change.\n".to_string(),
        n => format!("\n{n} more metrics show no change.\n"),
    };
    match v.small {
        0 => {}
        1 => {
            s.push_str("1 more metric is undecided with a measured change within its threshold.\n")
        }
        n => s.push_str(&format!(
            "{n} more metrics are undecided with measured changes within their thresholds.\n"
        )),
    }
    s
}

/// Each cell's whole distributions: the Hodges–Lehmann shift of every per-request quantity.
fn shifts(v: &ComparisonView, o: &mut Out) {
    if v.shifts.is_empty() {
        return;
    }
    o.heading("Whole distributions (Hodges–Lehmann shift after − before, 95%, from every request)");
    o.header(&[
        "profile",
        "candidate",
        "quantity",
        "shift",
        "interval",
        "shape",
        "label",
    ]);
    for r in &v.shifts {
        o.row(&[
            &r.profile,
            &r.candidate,
            &r.quantity,
            &r.shift,
            &r.interval,
            &r.shape,
            &r.label,
        ]);
    }
}
