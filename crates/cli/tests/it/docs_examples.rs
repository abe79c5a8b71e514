//! The user guide's examples, run: every example marked runnable is run as written, every TOML
//! plan in it (or a part of one, completed) is loaded by the plan parser, and the plan
//! reference names every field the parser knows.

use std::path::{Path, PathBuf};
use std::process::Command;

use sloscope_testkit::docs::guide_dir;

use crate::docs::{blocks, pages, repo, tempfile_dir};

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
