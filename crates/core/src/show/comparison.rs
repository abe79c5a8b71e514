//! Printers of a [`Comparison`]: Markdown for a pull-request comment, plain text for a
//! terminal. What a reviewer reads first comes first: the answer, what changed, verdict flips
//! and capacity, then the metrics that changed or could not be told, then what was not
//! comparable. Every string from a file is made inert (Markdown escaped, or shown literally).

use crate::analyse::regression::types::{
    Cell, Comparison, Label, Margin, MetricChange, NotComparableKind, Outcome, VerdictChange,
};
use crate::base::fmt::format_number as num;
use crate::show::render::md_escape;
use crate::show::view::{escaped, inert};

/// Which printer.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    Text,
    Markdown,
}

/// The comparison as Markdown (a pull-request comment).
pub fn markdown(c: &Comparison) -> String {
    print(c, Style::Markdown)
}

/// The comparison as plain text.
pub fn text(c: &Comparison) -> String {
    print(c, Style::Text)
}

/// The cells that got worse, by name with the metrics that did (three at most, the rest
/// counted), and the profiles whose recommendation changed: `: balanced np4 (tpot_p50_ms,
/// e2e_p50_ms); the recommendation changed in latency (np1 → np4)`.
fn what_got_worse(c: &Comparison) -> String {
    let worse: Vec<String> = c
        .cells
        .iter()
        .filter(|x| x.label == Label::Regression)
        .map(|x| {
            let metrics: Vec<String> = x
                .metrics
                .iter()
                .filter(|m| m.label == Label::Regression)
                .map(|m| m.metric.name())
                .chain(
                    x.shifts
                        .iter()
                        .filter(|s| s.label == Label::Regression)
                        .map(|s| format!("{} shift", s.quantity)),
                )
                .collect();
            format!(
                "{} {} ({})",
                inert(&x.profile),
                inert(&x.candidate),
                metrics.join(", ")
            )
        })
        .collect();
    let mut out = String::new();
    if !worse.is_empty() {
        let more = worse.len().saturating_sub(3);
        out = format!(": {}", worse[..worse.len().min(3)].join("; "));
        if more > 0 {
            out.push_str(&format!(" and {more} more"));
        }
    }
    let flips: Vec<String> = c
        .verdicts
        .iter()
        .filter(|v| v.flipped)
        .map(|v| {
            let r = |x: &Option<String>| x.as_deref().map_or("none".to_string(), inert);
            let d = |x: Option<crate::analyse::verdict::ProfileDecision>| {
                x.map_or("none", |d| d.as_str())
            };
            let (a, b) = if v.recommended_before == v.recommended_after {
                (d(v.before).to_string(), d(v.after).to_string())
            } else {
                (r(&v.recommended_before), r(&v.recommended_after))
            };
            format!("{} ({a} → {b})", inert(&v.profile))
        })
        .collect();
    if !flips.is_empty() {
        out.push_str(&format!("; the verdict changed in {}", flips.join(", ")));
    }
    out
}

/// Whether a metric's row leads (is listed first): a change shown past or near its threshold,
/// or an undecided one whose measured change is itself past the threshold. A row shown
/// unchanged, or undecided with a measured change within its threshold, is only counted (and
/// kept under "all metrics" on the page and in the JSON).
pub fn leads(m: &MetricChange) -> bool {
    match m.label {
        Label::NoChange => false,
        Label::Inconclusive => m.difference.is_some_and(|d| {
            let base = m.before.map_or(0.0, f64::abs);
            d.abs() > m.threshold.relative * base && d.abs() > m.threshold.absolute
        }),
        _ => true,
    }
}

/// The one-line answer.
pub fn headline(c: &Comparison) -> String {
    let regressed = c
        .cells
        .iter()
        .filter(|x| x.label == Label::Regression)
        .count();
    match c.outcome {
        Outcome::Regression => {
            let failed = c
                .not_comparable
                .iter()
                .filter(|n| n.kind == NotComparableKind::FailedAfter)
                .count();
            let mut s = format!(
                "regression: {regressed} of {} compared cells got worse beyond their thresholds",
                c.cells.len()
            );
            if failed > 0 {
                s.push_str(&format!("; {failed} run(s) failed after the change"));
            }
            let fell = c
                .capacity
                .iter()
                .flat_map(|k| &k.candidates)
                .filter(|x| x.worse)
                .count();
            if fell > 0 {
                s.push_str(&format!(
                    "; the sustained load fell for {fell} candidate(s)"
                ));
            }
            s + &what_got_worse(c)
        }
        Outcome::NoRegression => format!(
            "no regression in {} compared cells ({} inconclusive)",
            c.cells.len(),
            c.cells
                .iter()
                .filter(|x| x.label == Label::Inconclusive)
                .count()
        ),
        Outcome::NothingComparable => {
            "nothing comparable: no cell has the same profile, candidate and workload on both sides"
                .into()
        }
        Outcome::Incomplete => format!(
            "incomplete: no compared cell regressed, but {} (each below)",
            incomplete_because(c)
        ),
        Outcome::Inconclusive => format!(
            "inconclusive: {} cell(s) compared, but no metric of any could be decided (every \
             interval is too wide for its threshold; each row says how many requests a side \
             would be): nothing was shown unchanged",
            c.cells.len()
        ),
        Outcome::Refused => format!(
            "not compared: {}",
            match c.refused.as_slice() {
                [one] => one.clone(),
                many => format!("{} reasons, each below", many.len()),
            }
        ),
    }
}

struct Out {
    style: Style,
    s: String,
}

impl Out {
    /// sloscope's own words (which may quote bounded strings of files): escaped, never cut.
    fn esc(&self, v: &str) -> String {
        match self.style {
            Style::Markdown => md_escape(&escaped(v)),
            Style::Text => escaped(v),
        }
    }

    /// A name from a file shown on its own: escaped and cut (see `Shown::input`).
    fn name(&self, v: &str) -> String {
        match self.style {
            Style::Markdown => md_escape(&inert(v)),
            Style::Text => inert(v),
        }
    }

    fn heading(&mut self, h: &str) {
        match self.style {
            Style::Markdown => self.s.push_str(&format!("\n### {h}\n\n")),
            Style::Text => self.s.push_str(&format!("\n{h}\n")),
        }
    }

    fn row(&mut self, cells: &[String]) {
        match self.style {
            Style::Markdown => self.s.push_str(&format!("| {} |\n", cells.join(" | "))),
            Style::Text => self.s.push_str(&format!("  {}\n", cells.join("  "))),
        }
    }

    fn header(&mut self, cells: &[&str]) {
        let owned: Vec<String> = cells.iter().map(|c| c.to_string()).collect();
        self.row(&owned);
        if self.style == Style::Markdown {
            self.row(&vec!["---".to_string(); cells.len()]);
        }
    }

    fn bullet(&mut self, line: &str) {
        self.s.push_str(&format!("- {line}\n"));
    }
}

fn print(c: &Comparison, style: Style) -> String {
    let mut o = Out {
        style,
        s: String::new(),
    };
    let title = match style {
        Style::Markdown => format!("## sloscope compare: {}\n", o.esc(&headline(c))),
        Style::Text => format!("sloscope compare: {}\n", escaped(&headline(c))),
    };
    o.s.push_str(&title);
    if c.refused.len() > 1 {
        o.heading("Not compared because");
        for r in &c.refused {
            let line = o.esc(r);
            o.bullet(&line);
        }
    }
    changed(c, &mut o);
    verdicts(c, &mut o);
    capacity(c, &mut o);
    changes(c, &mut o);
    if !c.not_comparable.is_empty() {
        o.heading("Not comparable");
        for n in &c.not_comparable {
            let line = format!(
                "{} {}: {}",
                n.profile,
                o.name(&n.candidate),
                o.esc(&n.reason)
            );
            o.bullet(&line);
        }
    }
    if !c.notes.is_empty() {
        o.heading("Notes");
        for n in &c.notes {
            let line = o.esc(n);
            o.bullet(&line);
        }
    }
    o.s
}

fn changed(c: &Comparison, o: &mut Out) {
    if c.outcome == Outcome::Refused {
        return;
    }
    o.heading("What changed");
    if c.changed.is_empty() {
        o.s.push_str("Nothing but the measurements: the same lineage, backend, hardware and server commands.\n");
        return;
    }
    o.header(&["", "before", "after"]);
    for ch in &c.changed {
        let join = |v: &[String]| {
            if v.is_empty() {
                "—".to_string()
            } else {
                v.join(", ")
            }
        };
        let cells = [
            o.esc(&ch.what),
            o.esc(&join(&ch.before)),
            o.esc(&join(&ch.after)),
        ];
        o.row(&cells);
    }
}

fn margin(m: &Option<Margin>) -> String {
    match m {
        Some(m) => format!(
            "{} {} (limit {}, margin {})",
            m.metric.name(),
            m.value.map_or("—".into(), num),
            num(m.limit),
            m.margin_ratio
                .map_or("—".into(), |r| format!("{}%", num(r * 100.0)))
        ),
        None => "—".into(),
    }
}

fn verdict(d: Option<crate::analyse::verdict::ProfileDecision>, rec: &Option<String>) -> String {
    match (d, rec) {
        (Some(d), Some(r)) => format!("{} · {}", d.as_str(), r),
        (Some(d), None) => d.as_str().to_string(),
        (None, _) => "—".into(),
    }
}

fn verdicts(c: &Comparison, o: &mut Out) {
    if c.verdicts.is_empty() {
        return;
    }
    o.heading("Verdicts");
    o.header(&["profile", "before", "after", "binding SLO before", "after"]);
    for v in &c.verdicts {
        let VerdictChange {
            profile, flipped, ..
        } = v;
        let mark = if *flipped { " ⚠ changed" } else { "" };
        let cells = [
            profile.clone(),
            o.esc(&verdict(v.before, &v.recommended_before)),
            format!("{}{mark}", o.esc(&verdict(v.after, &v.recommended_after))),
            margin(&v.binding_before),
            margin(&v.binding_after),
        ];
        o.row(&cells);
    }
}

fn capacity(c: &Comparison, o: &mut Out) {
    if c.capacity.is_empty() {
        return;
    }
    o.heading("Capacity");
    for k in &c.capacity {
        let line = format!(
            "{}: before {}; after {}",
            k.profile,
            o.esc(k.before.as_deref().unwrap_or("no search")),
            o.esc(k.after.as_deref().unwrap_or("no search"))
        );
        o.bullet(&line);
        for x in &k.candidates {
            let line = format!(
                "{} {}: capacity {} before, {} after{}",
                k.profile,
                o.name(&x.candidate),
                o.esc(&x.said[0]),
                o.esc(&x.said[1]),
                if x.worse { " — REGRESSION" } else { "" }
            );
            o.bullet(&line);
        }
    }
}

fn label(l: Label) -> &'static str {
    match l {
        Label::Regression => "REGRESSION",
        Label::Improvement => "improvement",
        Label::NoChange => "no change",
        Label::Inconclusive => "inconclusive",
        Label::Borderline => "near the threshold",
    }
}

fn change_row(cell: &Cell, m: &MetricChange, o: &Out) -> Vec<String> {
    let unit = m.metric.unit();
    let pct = |r: f64| format!("{:+}%", num((r - 1.0) * 100.0));
    let diff = m.difference.map_or("—".into(), |d| {
        let rel = m.ratio.map_or(String::new(), |r| format!(" ({})", pct(r)));
        format!("{}{d_unit}{rel}", signed(d), d_unit = spaced(unit))
    });
    let iv = m.difference_interval.map_or_else(
        || "—".into(),
        |iv| {
            let end = |v: Option<f64>, none: &str| v.map_or_else(|| none.to_string(), signed);
            format!(
                "[{}, {}]{}",
                end(iv.low, "no lower bound"),
                end(iv.high, "no upper bound"),
                spaced(unit)
            )
        },
    );
    let th = format!(
        "{}% and {}{}",
        num(m.threshold.relative * 100.0),
        num(m.threshold.absolute),
        spaced(unit)
    );
    vec![
        cell.profile.clone(),
        o.name(&cell.candidate),
        m.metric.name(),
        m.before.map_or("—".into(), num),
        m.after.map_or("—".into(), num),
        diff,
        iv,
        m.detectable_change
            .map_or_else(|| "none".into(), |d| format!("±{}{}", num(d), spaced(unit))),
        th,
        label(m.label).to_string(),
    ]
}

/// Each cell's whole distributions: the Hodges–Lehmann shift of every per-request quantity.
fn shifts(c: &Comparison, o: &mut Out) {
    if c.cells.iter().all(|x| x.shifts.is_empty()) {
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
    for cell in &c.cells {
        for s in &cell.shifts {
            let iv = &s.shift;
            let end = |v: Option<f64>, none: &str| v.map_or_else(|| none.to_string(), signed);
            let row = vec![
                cell.profile.clone(),
                o.name(&cell.candidate),
                format!("{}{}", s.quantity, if s.paired { " (paired)" } else { "" }),
                format!("{} ms", signed(iv.estimate)),
                format!(
                    "[{}, {}] ms",
                    end(iv.low, "no lower bound"),
                    end(iv.high, "no upper bound")
                ),
                if s.shape_p < 0.05 {
                    format!("differs (KS p {:.3})", s.shape_p)
                } else {
                    "same".into()
                },
                label(s.label).to_string(),
            ];
            o.row(&row);
        }
    }
}

fn signed(v: f64) -> String {
    if v > 0.0 {
        format!("+{}", num(v))
    } else {
        num(v)
    }
}

fn spaced(unit: &str) -> String {
    if unit.is_empty() {
        String::new()
    } else {
        format!(" {unit}")
    }
}

fn changes(c: &Comparison, o: &mut Out) {
    if c.cells.is_empty() {
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
    let (mut unchanged, mut small) = (0, 0);
    let mut by_shift = Vec::new();
    for cell in &c.cells {
        for m in &cell.metrics {
            if !leads(m) {
                match m.label {
                    Label::NoChange => unchanged += 1,
                    _ => small += 1,
                }
                continue;
            }
            let row = change_row(cell, m, o);
            o.row(&row);
            if m.method.contains("moved with it") {
                by_shift.push(format!(
                    "{} {} {}: {}",
                    cell.profile,
                    o.name(&cell.candidate),
                    m.metric,
                    m.method
                ));
            }
        }
    }
    match unchanged {
        0 => o.s.push('\n'),
        1 => o.s.push_str("\n1 more metric shows no change.\n"),
        n => {
            o.s.push_str(&format!("\n{n} more metrics show no change.\n"))
        }
    }
    match small {
        0 => {}
        1 => o
            .s
            .push_str("1 more metric is undecided with a measured change within its threshold.\n"),
        n => o.s.push_str(&format!(
            "{n} more metrics are undecided with measured changes within their thresholds.\n"
        )),
    }
    o.s.push_str(
        "A change is inconclusive only where the smallest change its interval can detect (80% \
         power) is larger than its threshold; near the threshold otherwise.\n",
    );
    for line in &by_shift {
        o.bullet(line);
    }
    shifts(c, o);
    for cell in &c.cells {
        let how = match &cell.pairing_note {
            None => "requests paired by index (the same request sequence)".to_string(),
            Some(why) => format!("requests not paired: {}", o.esc(why)),
        };
        let line = format!(
            "{} {}: {} requests before, {} after; {how}",
            cell.profile,
            o.name(&cell.candidate),
            cell.requests_before,
            cell.requests_after
        );
        o.bullet(&line);
    }
}

/// What made a comparison incomplete, counted by kind: cells the after side lost, runs left
/// out, runs holding the other side's measurements; else the after side's own planned cells
/// missing.
fn incomplete_because(c: &Comparison) -> String {
    let count = |k: NotComparableKind| c.not_comparable.iter().filter(|n| n.kind == k).count();
    let said: Vec<String> = [
        (
            NotComparableKind::MissingAfter,
            "cell(s) measured before were not measured after",
        ),
        (
            NotComparableKind::LeftOut,
            "run(s) were left out of a side's analysis",
        ),
        (
            NotComparableKind::SameMeasurements,
            "run(s) hold the other side's measurements",
        ),
    ]
    .into_iter()
    .filter_map(|(k, what)| {
        Some(count(k))
            .filter(|&n| n > 0)
            .map(|n| format!("{n} {what}"))
    })
    .collect();
    if said.is_empty() {
        "the after side's own analysis is incomplete: a planned cell of it has no usable run".into()
    } else {
        said.join(", ")
    }
}
