//! The user guide held to the binary: its command and exit-code references are generated from
//! the CLI's own definitions (`--help`, written by clap from the argument types, ends with the
//! command's exit-code enum), every relative link and anchor resolves, and the pages the code
//! points to exist. Its examples and plans are run and loaded in `docs_examples`.

use std::path::{Path, PathBuf};
use std::process::Command;

use sloscope_testkit::docs::{guide_dir, guide_section};

fn sloscope(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_sloscope"))
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "sloscope {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The commands `sloscope --help` lists (without `help`).
fn commands() -> Vec<String> {
    let help = sloscope(&["--help"]);
    let list = help.split("Commands:\n").nth(1).unwrap();
    list.lines()
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn the_guide_has_every_commands_help() {
    let mut page = format!("```text\n{}```\n", sloscope(&["--help"]));
    for c in commands() {
        let help = sloscope(&[&c, "--help"]);
        page.push_str(&format!("\n## `sloscope {c}`\n\n```text\n{help}```\n"));
    }
    guide_section("reference/commands.md", "commands", &page);
}

#[test]
fn the_guide_has_every_commands_exit_codes() {
    let mut page = String::from("| command | exit code | meaning |\n|---|---|---|\n");
    for c in commands() {
        let help = sloscope(&[&c, "--help"]);
        let codes = help
            .split("Exit codes:\n")
            .nth(1)
            .unwrap_or_else(|| panic!("`sloscope {c} --help` lists no exit codes"));
        for line in codes.lines().take_while(|l| l.starts_with("  ")) {
            let (code, meaning) = line.trim().split_once("  ").unwrap();
            page.push_str(&format!("| `{c}` | {code} | {} |\n", meaning.trim()));
        }
    }
    guide_section("reference/exit-codes.md", "exit-codes", &page);
}

/// Every Markdown page of the guide, with its path relative to `docs/src`.
pub(crate) fn pages() -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&guide_dir(), &mut files);
    files.sort();
    let root = guide_dir();
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p.strip_prefix(&root).unwrap().to_path_buf(), text)
        })
        .collect()
}

/// The fenced code blocks of a page: (info string, body).
pub(crate) fn blocks(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut open: Option<(String, String)> = None;
    for line in text.lines() {
        match (&mut open, line.trim_start().strip_prefix("```")) {
            (None, Some(info)) => open = Some((info.trim().to_string(), String::new())),
            (Some(_), Some(_)) => out.push(open.take().unwrap()),
            (Some((_, body)), None) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => {}
        }
    }
    out
}

/// A page's text outside code blocks and inline code.
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            let parts: Vec<&str> = line.split('`').collect();
            out.extend(parts.iter().step_by(2).copied());
            out.push('\n');
        }
    }
    out
}

/// The anchors mdbook gives a page's headings (GitHub's rule: lower case, punctuation dropped,
/// spaces to hyphens, repeats numbered).
fn anchors(text: &str) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        let Some(title) = line.strip_prefix('#').filter(|_| !fenced) else {
            continue;
        };
        let id: String = title
            .trim_start_matches('#')
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let n = seen
            .iter()
            .filter(|s| **s == id || s.starts_with(&format!("{id}-")))
            .count();
        seen.push(if n == 0 {
            id.clone()
        } else {
            format!("{id}-{n}")
        });
    }
    seen
}

/// `(target, anchor)` of each relative Markdown link in the prose.
fn links(text: &str) -> Vec<(String, Option<String>)> {
    let prose = prose(text);
    let mut out = Vec::new();
    for part in prose.split("](").skip(1) {
        let Some(end) = part.find(')') else { continue };
        let target = &part[..end];
        if target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let (path, anchor) = match target.split_once('#') {
            Some((p, a)) => (p.to_string(), Some(a.to_string())),
            None => (target.to_string(), None),
        };
        out.push((path, anchor));
    }
    out
}

#[test]
fn every_relative_link_and_anchor_in_the_guide_resolves() {
    let pages = pages();
    let mut broken = Vec::new();
    for (page, text) in &pages {
        let dir = page.parent().unwrap_or(Path::new(""));
        for (path, anchor) in links(text) {
            let target = if path.is_empty() {
                page.clone()
            } else {
                normalize(&dir.join(&path))
            };
            let on_disk = guide_dir().join(&target);
            if !on_disk.exists() {
                broken.push(format!("{}: {path} does not exist", page.display()));
                continue;
            }
            let Some(anchor) = anchor else { continue };
            let Some((_, t)) = pages.iter().find(|(p, _)| *p == target) else {
                broken.push(format!(
                    "{}: #{anchor} on a file that is not a page",
                    page.display()
                ));
                continue;
            };
            if !anchors(t).contains(&anchor) {
                broken.push(format!(
                    "{}: {path}#{anchor}: no such heading",
                    page.display()
                ));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "broken links in the guide:\n{}",
        broken.join("\n")
    );
}

/// `a/../b` → `b` (the link's target inside the guide; a path that leaves it stays out of it).
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            std::path::Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

#[test]
fn every_page_is_in_the_table_of_contents_and_every_entry_exists() {
    let pages = pages();
    let summary = &pages
        .iter()
        .find(|(p, _)| p == Path::new("SUMMARY.md"))
        .unwrap()
        .1;
    let listed: Vec<PathBuf> = links(summary)
        .into_iter()
        .map(|(p, _)| PathBuf::from(p))
        .collect();
    for (page, _) in &pages {
        if page != Path::new("SUMMARY.md") {
            assert!(
                listed.contains(page),
                "{} is not in SUMMARY.md",
                page.display()
            );
        }
    }
    for p in &listed {
        assert!(
            guide_dir().join(p).exists(),
            "SUMMARY.md lists {}, which does not exist",
            p.display()
        );
    }
}

pub(crate) fn repo() -> PathBuf {
    guide_dir().join("../..")
}

pub(crate) fn tempfile_dir(what: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sloscope-docs-{what}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Error messages and help that send a user to the guide name pages that exist.
#[test]
fn pages_the_code_points_to_exist() {
    let root = repo().join("crates");
    let mut missing = Vec::new();
    let mut found = 0;
    for file in rust_files(&root) {
        let text = std::fs::read_to_string(&file).unwrap();
        for part in text.split("docs/src/").skip(1) {
            let page: String = part
                .chars()
                .take_while(|c| c.is_alphanumeric() || matches!(c, '/' | '-' | '_' | '.'))
                .collect();
            let page = page.trim_end_matches('.');
            if !page.ends_with(".md") {
                continue;
            }
            found += 1;
            if !guide_dir().join(page).is_file() {
                missing.push(format!("{}: docs/src/{page}", file.display()));
            }
        }
    }
    assert!(found >= 2, "no code points to the guide");
    assert!(
        missing.is_empty(),
        "the code points to guide pages that do not exist:\n{}",
        missing.join("\n")
    );
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() && !p.ends_with("target") {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out
}
