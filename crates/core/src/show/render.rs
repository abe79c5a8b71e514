//! Printers of the report view-model ([`crate::show::view`]): Markdown for review threads (the page's
//! "Copy summary" uses the same function) and aligned plain text for terminals. They only lay
//! out lines and cells; every word and number comes from the view.

use crate::analyse::report::Analysis;
use crate::show::view::{report_view, ProfileView, ReportView, TableView};

/// Which printer.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    Text,
    Markdown,
}

fn cell_text(t: &TableView, row: usize, col: usize) -> &str {
    t.rows[row].cells.get(col).map_or("", |c| c.text.as_str())
}

/// Text from the view made literal in Markdown: no raw HTML reaches a review page (`<`, `>`
/// and `&` become entities) and no character is read as emphasis, code, a link, a table
/// border or a mention (`@team` pings nobody from a comment).
pub fn md_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for ch in s.chars() {
        match ch {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '#' | '~' | '@' => {
                out.push('\\');
                out.push(ch);
            }
            _ => out.push(ch),
        }
    }
    out
}

fn table_markdown(t: &TableView) -> String {
    let esc = md_escape;
    let head: Vec<String> = t.columns.iter().map(|c| esc(&c.title)).collect();
    let mut out = format!("| {} |\n", head.join(" | "));
    out += &format!("|{}\n", "---|".repeat(t.columns.len()));
    for r in 0..t.rows.len() {
        let cells: Vec<String> = (0..t.columns.len())
            .map(|c| esc(cell_text(t, r, c)))
            .collect();
        out += &format!("| {} |\n", cells.join(" | "));
    }
    out
}

fn table_text(t: &TableView) -> String {
    let width = |s: &str| s.chars().count();
    let mut w: Vec<usize> = t.columns.iter().map(|c| width(&c.title)).collect();
    for r in 0..t.rows.len() {
        for (c, wc) in w.iter_mut().enumerate() {
            *wc = (*wc).max(width(cell_text(t, r, c)));
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::from(" ");
        for (i, c) in cells.iter().enumerate() {
            s += c;
            s += &" ".repeat(w[i] - width(c) + 2);
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(t.columns.iter().map(|c| c.title.as_str()).collect());
    let rule: Vec<String> = w.iter().map(|n| "-".repeat(*n)).collect();
    out += &format!(" {}\n", rule.join("  "));
    for r in 0..t.rows.len() {
        out += &line((0..t.columns.len()).map(|c| cell_text(t, r, c)).collect());
    }
    out
}

fn table(t: &TableView, style: Style) -> String {
    match style {
        Style::Text => table_text(t),
        Style::Markdown => table_markdown(t),
    }
}

/// Lines that must stay separate when Markdown is rendered: a hard line break in Markdown, a
/// plain newline in text.
fn lines<S: AsRef<str>>(items: &[S], style: Style) -> String {
    match style {
        Style::Text => items.iter().map(|l| format!("{}\n", l.as_ref())).collect(),
        Style::Markdown => items
            .iter()
            .map(|l| format!("{}  \n", md_escape(l.as_ref())))
            .collect(),
    }
}

fn lineage(v: &ReportView, style: Style) -> String {
    let mut out = String::new();
    if let Some(g) = &v.lineage.gate {
        out += &lines(&g.lines, style);
        out += &titled_table("Per-position KL divergence", &g.histogram, style);
        out += "\n";
    }
    if !v.lineage.other_gates.is_empty() {
        out += &lines(&v.lineage.other_gates, style);
        out += "\n";
    }
    let mut items = vec![v.lineage.status_line.to_string()];
    items.extend(v.lineage.issues.iter().map(|i| format!("  ✗ {i}")));
    items.extend(v.lineage.warnings.iter().map(|w| format!("  ! {w}")));
    items.extend(v.lineage.notes.iter().map(|n| format!("  note: {n}")));
    out + &lines(&items, style)
}

/// The shards of a sharded results tree: whether they stand for the plan, a row per shard.
fn shards(v: &ReportView, style: Style) -> String {
    let Some(s) = &v.shards else {
        return String::new();
    };
    let mut items = vec![s.status_line.to_string()];
    items.extend(s.problems.iter().map(|p| format!("  ✗ {p}")));
    items.extend(s.left_out.iter().map(|l| format!("  – {l}")));
    let gap = if style == Style::Markdown { "\n" } else { "" };
    format!("\n{}{gap}{}", lines(&items, style), table(&s.table, style))
}

/// What is judged, one labelled line each, above the verdicts.
fn subject(v: &ReportView, style: Style) -> String {
    if v.subject.is_empty() {
        return String::new();
    }
    let items: Vec<String> = v
        .subject
        .iter()
        .map(|l| format!("{}: {}", l.label, l.value))
        .collect();
    lines(&items, style) + "\n"
}

/// The answer first: one line per profile, with what weakens it indented below.
fn headlines(v: &ReportView, style: Style) -> String {
    let mut items: Vec<String> = v.caveats.iter().map(|c| format!("! {c}")).collect();
    for p in &v.profiles {
        items.push(p.headline.to_string());
        items.extend(p.caveats.iter().map(|c| format!("  ! {c}")));
        items.extend(p.next_step.iter().map(|n| format!("  → next: {n}")));
    }
    lines(&items, style)
}

/// A Markdown fold: `summary` (HTML-escaped: a summary is HTML, not Markdown) over `body`.
fn fold(summary: &str, body: &str) -> String {
    if body.trim().is_empty() {
        return String::new();
    }
    let summary = summary
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    format!(
        "\n<details><summary>{summary}</summary>\n\n{}\n\n</details>\n",
        body.trim_matches('\n')
    )
}

fn profile(p: &ProfileView, style: Style) -> String {
    let mut out = match style {
        Style::Markdown => format!("\n### {} — {}\n\n", md_escape(&p.profile), p.decision_label),
        Style::Text => format!("\n== {} — {} ==\n", p.profile, p.decision_label),
    };
    let mut head = vec![p.workload_line.to_string(), p.slo_line.to_string()];
    head.extend(
        p.contract_issues
            .iter()
            .map(|i| format!("  ✗ profile: {i}")),
    );
    head.push(p.verdict_line.to_string());
    head.extend(p.missing.iter().map(|m| format!("  ✗ {m}")));
    head.extend(p.provisional_line.iter().map(|b| b.to_string()));
    head.extend(p.binding_line.iter().map(|b| b.to_string()));
    head.extend(p.margins_line.iter().map(|m| m.to_string()));
    head.extend(p.next_step.iter().map(|n| format!("Next: {n}")));
    out += &lines(&head, style);
    if !p.candidates.rows.is_empty() {
        out += "\n";
        out += &table(&p.candidates, style);
    }
    let mut after: Vec<String> = Vec::new();
    after.extend(p.confidence_line.iter().map(|c| format!("Confidence: {c}")));
    after.extend(p.warnings.iter().map(|w| format!("  ! {w}")));
    after.extend(p.excluded.iter().map(|e| format!("  – {e}")));
    after.extend(p.notes.iter().map(|n| format!("  note: {n}")));
    after.extend(p.signals.iter().map(|n| format!("  server: {n}")));
    if !after.is_empty() {
        out += "\n";
        out += &lines(&after, style);
    }
    if let (Some(title), Some(t)) = (&p.capacity_title, &p.capacity) {
        out += &titled_table(title, t, style);
        out += "\n";
        out += &lines(&p.capacity_lines, style);
    }
    if let (Some(title), Some(t)) = (&p.search_title, &p.search) {
        out += &titled_table(title, t, style);
        out += "\n";
        out += &lines(&p.search_lines, style);
    }
    if let (Some(title), Some(t)) = (&p.baseline_title, &p.baseline) {
        out += &titled_table(title, t, style);
    }
    out
}

/// A titled table after a blank line (Markdown needs a blank line before the table, too).
fn titled_table(title: &str, t: &TableView, style: Style) -> String {
    let title = match style {
        Style::Text => title.to_string(),
        Style::Markdown => md_escape(title),
    };
    let gap = if style == Style::Markdown { "\n" } else { "" };
    format!("\n{title}:\n{gap}{}", table(t, style))
}

fn notes(v: &ReportView, style: Style) -> String {
    let items: Vec<String> = v
        .run_notes
        .iter()
        .map(|n| format!("run note: {n}"))
        .chain(v.notes.iter().map(|n| format!("note: {n}")))
        .collect();
    if items.is_empty() {
        return String::new();
    }
    format!("\n{}", lines(&items, style))
}

/// Markdown for a review thread, sized for a pull-request comment: what is judged, the answer
/// per profile with its next step, then folds (`<details>`) for the verdict table, the lineage
/// and quality gate, each profile's candidates and the run notes.
pub fn markdown(a: &Analysis) -> String {
    let v = report_view(a);
    let md = Style::Markdown;
    let mut out = String::from("## sloscope verdict\n\n");
    out += &subject(&v, md);
    out += &headlines(&v, md);
    out += &fold("Why: the verdict per profile", &table(&v.verdicts, md));
    out += &fold(
        &format!("Lineage and quality gate — {}", v.lineage.status_line),
        &(lineage(&v, md) + &shards(&v, md)),
    );
    for p in &v.profiles {
        out += &fold(
            &format!(
                "{} — {}: candidates, SLO checks, notes",
                p.profile, p.decision_label
            ),
            &profile(p, md),
        );
    }
    out += &fold("Run notes", &notes(&v, md));
    out += &format!("\n<sub>{}</sub>\n", v.footer);
    out
}

/// The short Markdown for a pull-request comment (the page's "Copy summary", `sloscope analyze
/// --format summary`): what is judged, the answer per profile with its decisive figure and next
/// step, and the lineage's state in one line; the rest is in [`markdown`] and the report page.
pub fn summary_markdown(a: &Analysis) -> String {
    let v = report_view(a);
    let md = Style::Markdown;
    let mut out = String::from("## sloscope verdict\n\n");
    out += &subject(&v, md);
    out += &headlines(&v, md);
    out += &format!("\n{}  \n", md_escape(v.lineage.status_line.as_ref()));
    out += "The candidates, SLO checks, quality gate and notes: the full report (`sloscope analyze --format markdown`, or the report page).\n";
    out += &format!("\n<sub>{}</sub>\n", v.footer);
    out
}

/// Plain text for a terminal.
pub fn text(a: &Analysis) -> String {
    let v = report_view(a);
    let mut out = subject(&v, Style::Text);
    out += &headlines(&v, Style::Text);
    out += "\n";
    out += &lineage(&v, Style::Text);
    out += &shards(&v, Style::Text);
    out += "\n";
    out += &table(&v.verdicts, Style::Text);
    for p in &v.profiles {
        out += &profile(p, Style::Text);
    }
    out += &notes(&v, Style::Text);
    out
}
