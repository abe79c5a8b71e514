//! What every printed page says at its top: the artifact, the plan and when the runs were
//! collected (the page's own header is on the first page only), and when it was printed — an
//! `@page` rule made from the subject, its values escaped as CSS strings.

use sloscope_core::view::Labelled;

/// Most characters of the running header: a page's top margin holds two lines.
const MOST: usize = 260;

/// The `@page` rule that prints `subject` (and `today`) at the top of every page.
pub fn page_rule(subject: &[Labelled], today: &str) -> String {
    let value = |label: &str| {
        subject
            .iter()
            .find(|l| l.label.as_str() == label)
            .map(|l| l.value.to_string())
    };
    // The plan last: a long plan name is what gets cut, never the artifact or the dates.
    let artifact = value("Artifact").map(|a| match a.split_once(", made from ") {
        Some((head, _)) => head.to_string(),
        None => a,
    });
    let parts: Vec<String> = [
        artifact.map(|a| format!("Artifact: {a}")),
        value("Collected").map(|c| format!("collected {}", whole(&c))),
        Some(format!("printed {}", whole(today))),
        value("Plan").map(|p| format!("Plan: {p}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    let mut line = parts.join(" · ");
    if line.chars().count() > MOST {
        line = line.chars().take(MOST - 1).collect::<String>() + "…";
    }
    format!(
        "@page {{ @top-left {{ content: \"{}\"; font-size: 7.5pt; color: #444; }} }}",
        css_string(&line)
    )
}

/// Today's date in the reader's clock (`2026-12-07`), for the printed pages.
pub fn today() -> String {
    let iso = String::from(js_sys::Date::new_0().to_iso_string());
    iso.chars().take(10).collect()
}

/// Dates kept whole at a line's end ("2026-12-" / "07" was): non-breaking hyphens.
fn whole(s: &str) -> String {
    s.replace('-', "\u{2011}")
}

/// `s` as the inside of a double-quoted CSS string: quotes, backslashes and every control or
/// non-ASCII character escaped, so no text can end the string or the rule.
fn css_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_ascii_graphic() || c == ' ' => out.push(c),
            c => out.push_str(&format!("\\{:x} ", c as u32)),
        }
    }
    out
}
