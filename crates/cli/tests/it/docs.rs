//! The user guide held to the binary: its command and exit-code references are generated from
//! the CLI's own definitions (`--help`, written by clap from the argument types, ends with the
//! command's exit-code enum), every example marked runnable is run, every TOML plan in it is
//! loaded by the plan parser, and every relative link and anchor resolves.

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
fn pages() -> Vec<(PathBuf, String)> {
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
fn blocks(text: &str) -> Vec<(String, String)> {
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

/// A plan with no profile, against an endpoint nothing listens on: a fragment of the guide
/// (a profile, or a workload) completes it.
const BASE_PLAN: &str = "kind = \"plan\"\nschema_version = \"1.0\"\nname = \"p\"\n\
    knob = \"parallel\"\n[lineage]\ngate = \"lineage/gate.json\"\n\
    baseline = \"lineage/baseline.json\"\ndeployment = \"lineage/deployment.json\"\n\
    [target]\nendpoint = \"http://127.0.0.1:9\"\n[[candidates]]\nname = \"a\"\nvalue = 1\n";

/// The whole plan a TOML block of the guide stands for, or `None` for an included file (a
/// committed example, loaded by the tests of its own).
fn as_plan(body: &str) -> Option<String> {
    let first = body
        .lines()
        .find(|l| !l.trim().is_empty() && !l.starts_with('#'))?;
    if first.starts_with("{{#include") {
        return None;
    }
    Some(if body.contains("kind = \"plan\"") {
        body.to_string()
    } else if first.starts_with("[[profiles]]") {
        format!("{BASE_PLAN}{body}")
    } else if first.starts_with("workload =") || first.starts_with("[profiles.workload]") {
        format!(
            "{BASE_PLAN}[[profiles]]\nname = \"balanced\"\nprimary_metric = \"tpot_p95_ms\"\n\
             slo = {{ tpot_p95_ms = 40 }}\n{body}"
        )
    } else {
        panic!("a TOML block of the guide that is neither a plan nor a part of one:\n{body}")
    })
}

/// A scratch folder laid out as `examples/` is: the plan in a folder of its own beside the
/// datasets and traces it names (`../datasets/…`), with the example set's lineage records.
fn plan_folder(what: &str) -> PathBuf {
    let dir = tempfile_dir(what);
    let plans = dir.join("plans");
    std::fs::create_dir_all(plans.join("lineage")).unwrap();
    for f in ["gate.json", "baseline.json", "deployment.json"] {
        let from = repo().join("static/examples/lineage").join(f);
        std::fs::copy(from, plans.join("lineage").join(f)).unwrap();
    }
    for d in ["datasets", "traces"] {
        let from = repo().join("examples").join(d).canonicalize().unwrap();
        std::os::unix::fs::symlink(from, dir.join(d)).unwrap();
    }
    plans
}

#[test]
fn every_plan_in_the_guide_is_loaded_by_the_plan_parser() {
    let dir = plan_folder("plans");
    let mut n = 0;
    for (page, text) in pages() {
        for (info, body) in blocks(&text) {
            let Some(plan) = info.starts_with("toml").then(|| as_plan(&body)).flatten() else {
                continue;
            };
            let path = dir.join(format!("plan{n}.toml"));
            std::fs::write(&path, &plan).unwrap();
            n += 1;
            let out = Command::new(env!("CARGO_BIN_EXE_sloscope"))
                .args(["run", "--plan"])
                .arg(&path)
                .args(["--out", "unused", "--dry-run"])
                .current_dir(&dir)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}: a plan in the guide does not load:\n{body}\n{}",
                page.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    assert!(n >= 5, "the guide shows {n} plans");
}

fn repo() -> PathBuf {
    guide_dir().join("../..")
}

fn tempfile_dir(what: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sloscope-docs-{what}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs every `sh runnable` block of the guide, a command at a time, in a scratch folder that
/// sees the repository's `examples/` and `static/`: each must exit as its `# exit N` comment
/// says (0 when it says nothing), and each line of a `text output` block right after it must be
/// in what the block printed.
#[test]
fn every_runnable_example_in_the_guide_runs() {
    let scratch = tempfile_dir("examples");
    for name in ["examples", "static", "tests"] {
        std::os::unix::fs::symlink(
            repo().join(name).canonicalize().unwrap(),
            scratch.join(name),
        )
        .unwrap();
    }
    let bin = Path::new(env!("CARGO_BIN_EXE_sloscope"))
        .parent()
        .unwrap()
        .to_path_buf();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut ran = 0;
    for (page, text) in pages() {
        let bs = blocks(&text);
        for (i, (info, body)) in bs.iter().enumerate() {
            if info != "sh runnable" {
                continue;
            }
            let mut printed = String::new();
            for cmd in commands_of(body) {
                let want: i32 = cmd
                    .rsplit_once("# exit ")
                    .map_or(0, |(_, n)| n.trim().parse().unwrap());
                let out = Command::new("sh")
                    .args(["-c", &cmd])
                    .env("PATH", &path)
                    .current_dir(&scratch)
                    .output()
                    .unwrap();
                printed.push_str(&String::from_utf8_lossy(&out.stdout));
                assert_eq!(
                    out.status.code(),
                    Some(want),
                    "{}: `{cmd}` exited {:?}, not {want}:\n{}",
                    page.display(),
                    out.status,
                    String::from_utf8_lossy(&out.stderr)
                );
                ran += 1;
            }
            if let Some((next, shown)) = bs.get(i + 1).filter(|(n, _)| n == "text output") {
                let _ = next;
                for line in shown.lines().map(str::trim).filter(|l| !l.is_empty()) {
                    assert!(
                        printed.contains(line),
                        "{}: the guide shows {line:?}, which the example did not print:\n{printed}",
                        page.display()
                    );
                }
            }
        }
    }
    assert!(ran >= 5, "only {ran} runnable commands in the guide");
}

/// The commands of a shell block: continuation lines joined, comments and blanks left out.
fn commands_of(body: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for line in body.lines() {
        let l = line.trim();
        if cur.is_empty() && (l.is_empty() || l.starts_with('#')) {
            continue;
        }
        match l.strip_suffix('\\') {
            Some(head) => {
                cur.push_str(head);
                cur.push(' ');
            }
            None => {
                cur.push_str(l);
                out.push(std::mem::take(&mut cur));
            }
        }
    }
    out
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

/// The plan reference's table of sections names every field the plan parser knows: each
/// section is given a field it does not know, and the parser's error lists those it does.
#[test]
fn the_plan_reference_names_every_field_the_parser_knows() {
    let page = std::fs::read_to_string(guide_dir().join("reference/plan.md")).unwrap();
    let dir = plan_folder("plan-fields");
    let base = format!(
        "{BASE_PLAN}[baseline]\nvalue = 1\nendpoint = \"http://127.0.0.1:9\"\n[gate]\neval = \"e.txt\"\n"
    );
    for section in ["[lineage]", "[target]", "[baseline]", "[gate]"] {
        let plan = base.replace(
            &format!("{section}\n"),
            &format!("{section}\nzz_unknown = 1\n"),
        );
        let path = dir.join("plan.toml");
        std::fs::write(&path, plan).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_sloscope"))
            .args(["run", "--plan"])
            .arg(&path)
            .args(["--out", "unused", "--dry-run"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let known = err
            .split("expected one of ")
            .nth(1)
            .unwrap_or_else(|| panic!("{section}: the parser named no fields: {err}"));
        let row = page
            .lines()
            .find(|l| l.starts_with(&format!("| `{section}`")))
            .unwrap_or_else(|| panic!("plan.md has no row for {section}"));
        for field in known.lines().next().unwrap().split(", ") {
            let field = field.trim().trim_start_matches("or ");
            assert!(
                row.contains(field),
                "plan.md's {section} row does not name {field}"
            );
        }
    }
}
