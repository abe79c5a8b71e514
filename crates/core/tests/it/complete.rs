//! Completeness against the plan, generated: every way a planned cell can be without a usable
//! run — no file, a file that cannot be read, a run left out (partial, failed, another
//! workload, an import of another load, a run recovered from a journal), a misspelt profile
//! name, the float baseline's run, a candidate's capacity search, a missing shard — makes its
//! profile `incomplete`, said first in every output (the headline, the text, the Markdown, the
//! JSON view), never `accept` and never `reject`; the clean example set is the control.

use serde_json::Value;
use sloscope_core::analyse::complete::CellKind;
use sloscope_core::analyse::report::Analysis;
use sloscope_core::analyse::verdict::ProfileDecision;
use sloscope_core::show::{render, view};
use sloscope_core::{analyze, analyze_all, read_document, AnalyzeOptions, Document, LoadedFile};

use crate::snapshots::example_files;

/// A way to lose a cell: its name, the file it touches, what happens to that file, the cell
/// lost and a word its reason must hold.
struct Case {
    name: &'static str,
    file: &'static str,
    damage: Damage,
    profile: &'static str,
    kind: CellKind,
    cell: &'static str,
    says: &'static str,
}

enum Damage {
    /// The file is not loaded.
    Gone,
    /// The file's bytes cannot be read as a document.
    Unreadable,
    /// The run's JSON is changed.
    Edit(fn(&mut Value)),
    /// The run is given as the journal the collector leaves when interrupted.
    Journal,
}

/// A case.
fn case(
    name: &'static str,
    file: &'static str,
    damage: Damage,
    (profile, kind, cell): (&'static str, CellKind, &'static str),
    says: &'static str,
) -> Case {
    Case {
        name,
        file,
        damage,
        profile,
        kind,
        cell,
        says,
    }
}

fn cases() -> Vec<Case> {
    let mut out = lost_runs();
    out.extend(left_out_runs());
    out
}

/// Cells whose file is not there, cannot be read, or is not a candidate's run.
fn lost_runs() -> Vec<Case> {
    use CellKind::{Baseline, Candidate, Trials};
    let np4 = ("latency", Candidate, "np4");
    vec![
        case(
            "no file (collected)",
            "runs/latency--np4.json",
            Damage::Gone,
            np4,
            "no run file",
        ),
        case(
            "unreadable file",
            "runs/latency--np4.json",
            Damage::Unreadable,
            np4,
            "could not be read",
        ),
        case(
            "misspelt profile",
            "runs/latency--np4.json",
            Damage::Edit(|v| v["profile"] = "latncy".into()),
            np4,
            "\"latncy\"",
        ),
        case(
            "float baseline",
            "runs/balanced--baseline-f16.json",
            Damage::Gone,
            ("balanced", Baseline, "f16"),
            "no run file",
        ),
        case(
            "capacity search",
            "runs/balanced--np1--trial",
            Damage::Gone,
            ("balanced", Trials, "np1"),
            "no run file",
        ),
    ]
}

/// Cells whose run was loaded and left out, whatever its origin.
fn left_out_runs() -> Vec<Case> {
    use CellKind::Candidate;
    vec![
        case(
            "partial run",
            "runs/latency--np4.json",
            Damage::Edit(|v| {
                v["status"] = "partial".into();
                v["failure"] = "interrupted".into();
            }),
            ("latency", Candidate, "np4"),
            "partial",
        ),
        case(
            "failed run",
            "runs/throughput--np1.json",
            Damage::Edit(|v| {
                v["status"] = "failed".into();
                v["failure"] = "server died".into();
            }),
            ("throughput", Candidate, "np1"),
            "server died",
        ),
        case(
            "another workload",
            "runs/balanced--np4.json",
            Damage::Edit(|v| v["workload_id"] = "other".into()),
            ("balanced", Candidate, "np4"),
            "left out",
        ),
        case(
            "an import of another load",
            "runs/throughput--np4.json",
            Damage::Edit(|v| {
                v["source"] = "imported".into();
                v["profile_spec"]["workload"]["concurrency"] = 64.into();
            }),
            ("throughput", Candidate, "np4"),
            "left out",
        ),
        case(
            "recovered from a journal",
            "runs/latency--np1.json",
            Damage::Journal,
            ("latency", Candidate, "np1"),
            "partial",
        ),
    ]
}

/// The example set with the case's damage done; the unreadable files' messages.
fn damaged(case: &Case) -> (Vec<LoadedFile>, Vec<String>) {
    let mut files = Vec::new();
    let mut refused = Vec::new();
    for f in example_files() {
        if !f.name.contains(case.file) {
            files.push(f);
            continue;
        }
        let Document::Run(run) = &f.doc else {
            unreachable!()
        };
        // Through text: the gaps column is raw JSON, a string inside a `Value` built directly.
        let mut v: Value = serde_json::from_str(&serde_json::to_string(run).unwrap()).unwrap();
        let (name, bytes) = match &case.damage {
            Damage::Gone => continue,
            Damage::Unreadable => (f.name.clone(), b"{\"kind\": \"run\", \"schema_ver".to_vec()),
            Damage::Edit(edit) => {
                edit(&mut v);
                (f.name.clone(), v.to_string().into_bytes())
            }
            Damage::Journal => (
                f.name.replace(".json", ".journal.jsonl"),
                crate::semantic::as_journal(&v).into_bytes(),
            ),
        };
        match read_document(&name, bytes) {
            Ok(doc) => files.push(LoadedFile { name, doc }),
            Err(e) => refused.push(e.to_string()),
        }
    }
    (files, refused)
}

fn profile<'a>(a: &'a Analysis, name: &str) -> &'a sloscope_core::analyse::report::ProfileReport {
    a.profiles.iter().find(|p| p.profile == name).unwrap()
}

#[test]
fn every_missing_cell_makes_its_profile_incomplete_in_every_output() {
    for case in cases() {
        let (files, refused) = damaged(&case);
        let a = analyze_all(&files, &refused, AnalyzeOptions::default());
        let p = profile(&a, case.profile);
        let what = case.name;
        assert_eq!(
            p.decision,
            ProfileDecision::Incomplete,
            "{what}: {}",
            p.reason
        );
        let m = p
            .missing
            .iter()
            .find(|m| m.kind == case.kind && m.name == case.cell)
            .unwrap_or_else(|| panic!("{what}: {:?}", p.missing));
        assert!(m.reason.contains(case.says), "{what}: {}", m.reason);
        assert!(p.reason.starts_with("incomplete"), "{what}: {}", p.reason);
        assert!(
            p.candidates.iter().all(|c| !c.chosen),
            "{what}: nothing is chosen"
        );
        // Said first, in every output.
        let headline = format!("{}: INCOMPLETE · not measured: ", case.profile);
        let text = render::text(&a);
        let md = render::markdown(&a);
        let json = serde_json::to_string(&view::AnalysisOutput::new(a.clone())).unwrap();
        for (out, body) in [("text", &text), ("markdown", &md), ("json", &json)] {
            assert!(body.contains(&headline), "{what}: {out} lacks {headline:?}");
            assert!(
                body.contains(case.cell),
                "{what}: {out} does not name {}",
                case.cell
            );
        }
        let first = text.lines().find(|l| l.starts_with(case.profile)).unwrap();
        assert!(first.starts_with(&headline), "{what}: {first}");
        assert!(
            !text.contains(&format!("{}: ACCEPT", case.profile)),
            "{what}"
        );
    }
}

#[test]
fn a_missing_shard_is_absence_not_a_rejection() {
    let files = crate::shards::sharded();
    let cells = crate::shards::cells();
    let k = crate::shards::shard_of(&cells, sloscope_core::schema::Role::Candidate, "np4");
    let kept: Vec<LoadedFile> = files
        .into_iter()
        .filter(|f| !f.name.contains(&format!("shard-{k}-of-")))
        .collect();
    let a = sloscope_core::analyze(&kept);
    for p in &a.profiles {
        assert_eq!(p.decision, ProfileDecision::Incomplete, "{}", p.reason);
        assert!(p.reason.contains(&format!("shard {k}")), "{}", p.reason);
    }
}

#[test]
fn the_clean_example_set_is_complete() {
    let a = sloscope_core::analyze(&example_files());
    for p in &a.profiles {
        assert!(p.missing.is_empty(), "{}: {:?}", p.profile, p.missing);
        assert_ne!(p.decision, ProfileDecision::Incomplete, "{}", p.reason);
    }
    assert!(a.completeness_unchecked.is_none());
}

#[test]
fn without_a_plan_completeness_is_said_to_be_unchecked() {
    let files: Vec<LoadedFile> = example_files()
        .into_iter()
        .filter(|f| !matches!(f.doc, Document::Plan(_)))
        .collect();
    let a = sloscope_core::analyze(&files);
    assert!(a.completeness_unchecked.is_some());
    let text = render::text(&a);
    // What is judged comes first, then the caveat, before any verdict.
    let caveat = text.find("! no plan was loaded").expect(&text);
    assert!(text.starts_with("Artifact: "), "{text}");
    assert!(text.contains("Plan: none loaded"), "{text}");
    assert!(caveat < text.find("latency: ").unwrap(), "{text}");
}

/// A lineage record that is not loaded (or cannot be read) is absence: every profile is
/// incomplete with the record named, never rejected — and another artifact's gate beside it
/// never stands in for the deployed artifact's.
#[test]
fn a_missing_lineage_record_is_absence_not_a_rejection() {
    for (gone, says) in [
        ("static/examples/lineage/gate.json", "quality_gate"),
        ("static/examples/lineage/baseline.json", "float_baseline"),
    ] {
        let files: Vec<LoadedFile> = example_files()
            .into_iter()
            .filter(|f| f.name != gone)
            .collect();
        let a = analyze_all(
            &files,
            &[format!("{gone}: not loaded")],
            AnalyzeOptions::default(),
        );
        assert!(a
            .lineage
            .gate
            .as_ref()
            .is_none_or(|_| !gone.ends_with("gate.json")));
        for p in &a.profiles {
            assert_eq!(
                p.decision,
                ProfileDecision::Incomplete,
                "{gone}: {}",
                p.reason
            );
            assert!(p.reason.contains(says), "{gone}: {}", p.reason);
        }
        if gone.ends_with("gate.json") {
            // The Q4_0 gate stays another artifact's, shown beside.
            assert_eq!(a.lineage.other_gates.len(), 1);
            assert!(
                a.profiles[0].reason.contains("never in its place"),
                "{}",
                a.profiles[0].reason
            );
        }
    }
}

/// A candidate's run relabelled as the float baseline's is that run's problem: its own cell is
/// missing (incomplete), the other profiles are untouched.
#[test]
fn a_run_of_another_role_is_left_out_not_the_lineage_broken() {
    let clean = analyze(&example_files());
    let files: Vec<LoadedFile> = example_files()
        .into_iter()
        .map(|mut f| {
            if f.name.ends_with("runs/latency--np4.json") {
                if let Document::Run(r) = &mut f.doc {
                    r.role = sloscope_core::schema::Role::Baseline;
                }
            }
            f
        })
        .collect();
    let a = analyze(&files);
    assert!(a.lineage.ready, "{:?}", a.lineage.issues);
    assert_eq!(profile(&a, "latency").decision, ProfileDecision::Incomplete);
    for name in ["balanced", "throughput"] {
        assert_eq!(profile(&a, name).decision, profile(&clean, name).decision);
    }
}
