//! What people read, snapshot-tested on the committed example set (`static/examples`): the
//! text and Markdown reports and the JSON analysis with its view-model. A change of wording or
//! number shows up as a reviewed diff (`cargo insta review`, or `INSTA_UPDATE=always`), not as a
//! surprise. The version is redacted so a release does not churn the snapshots.

use std::path::{Path, PathBuf};

use sloscope_core::show::render;
use sloscope_core::show::view::AnalysisOutput;
use sloscope_core::{analyze, read_document, Analysis, LoadedFile};

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../static/examples")
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|e| e == "json") {
            out.push(p);
        }
    }
}

/// The example set's files, named as `sloscope analyze static/examples` names them.
pub fn example_files() -> Vec<LoadedFile> {
    let root = examples_dir();
    let mut paths = Vec::new();
    walk(&root, &mut paths);
    paths
        .iter()
        .map(|p| {
            let name = format!(
                "static/examples/{}",
                p.strip_prefix(&root).unwrap().display()
            );
            let doc = read_document(&name, std::fs::read(p).unwrap()).unwrap();
            LoadedFile { name, doc }
        })
        .collect()
}

/// The analysis of the example set.
pub fn example_analysis() -> Analysis {
    analyze(&example_files())
}

fn redact(text: &str) -> String {
    text.replace(env!("CARGO_PKG_VERSION"), "[version]")
}

#[test]
fn text_report() {
    insta::assert_snapshot!(redact(&render::text(&example_analysis())));
}

#[test]
fn markdown_report() {
    insta::assert_snapshot!(redact(&render::markdown(&example_analysis())));
}

#[test]
fn json_analysis_and_view() {
    let out = AnalysisOutput::new(example_analysis());
    insta::assert_snapshot!(redact(&serde_json::to_string_pretty(&out).unwrap()));
}

/// The runs a peer's file becomes, as a reviewed diff: each run's header (tool, workload as the
/// tool stated it, notes, reported summaries), its first requests per repeat and how many there
/// are, and the summary sloscope recomputes from all of them.
fn peer_snapshot(rel: &str) -> String {
    use sloscope_core::Document;
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/peers")
        .join(rel);
    let doc = read_document(rel, std::fs::read(path).unwrap()).unwrap();
    let Document::Imported(runs) = &doc else {
        panic!("{rel}: not imported");
    };
    let mut out = Vec::new();
    for (name, run) in runs {
        let mut v = serde_json::to_value(run).unwrap();
        for r in v["repeats"].as_array_mut().into_iter().flatten() {
            let columns = r["requests"].as_object_mut().unwrap();
            let n = columns
                .get("send_offset_us")
                .and_then(|c| c.as_array())
                .map_or(0, Vec::len);
            for c in columns.values_mut() {
                if let Some(a) = c.as_array_mut() {
                    a.truncate(3);
                }
            }
            columns.insert("requests_in_repeat".into(), n.into());
        }
        out.push(serde_json::json!({ "name": name, "run": v }));
    }
    let a = analyze(&[LoadedFile {
        name: rel.to_string(),
        doc,
    }]);
    let summaries: Vec<serde_json::Value> = a
        .profiles
        .iter()
        .flat_map(|p| &p.candidates)
        .map(|c| serde_json::json!({ "candidate": c.name, "summary": c.summary, "disagreements": c.disagreements }))
        .collect();
    let mut text =
        serde_json::to_string_pretty(&serde_json::json!({ "runs": out, "recomputed": summaries }))
            .unwrap();
    text = redact(&text);
    text
}

#[test]
fn peer_files_become_these_runs() {
    for rel in [
        "vllm/save-detailed.json",
        "vllm/save-result.json",
        "sglang/python-output-details.jsonl",
        "sglang/rust-output-details.jsonl",
        "guidellm/small-benchmarks.json",
        "guidellm/small-benchmarks.csv",
        "aiperf/profile_export.jsonl",
        "aiperf/profile_export_aiperf.json",
        "llmperf/smollm2-q4_64_32_individual_responses.json",
        "llmperf/smollm2-q4_64_32_summary.json",
    ] {
        let name = rel.replace(['/', '.'], "_");
        insta::assert_snapshot!(format!("peer_{name}"), peer_snapshot(rel));
    }
}

/// The example set before, and after a change that slowed its balanced np4 run by 30 %: the
/// comparison a reviewer reads.
pub fn example_comparison() -> sloscope_core::analyse::regression::types::Comparison {
    use crate::regression::{load, stretch};
    use sloscope_core::Document;
    let before = example_files();
    let after: Vec<LoadedFile> = before
        .iter()
        .map(|f| match &f.doc {
            Document::Run(r) if r.trial.is_none() && f.name.ends_with("balanced--np4.json") => {
                load(
                    &f.name,
                    &stretch(&serde_json::to_value(&**r).unwrap(), 1.3, false),
                )
            }
            _ => LoadedFile {
                name: f.name.clone(),
                doc: f.doc.clone(),
            },
        })
        .collect();
    sloscope_core::analyse::regression::compare(&before, &after, &Default::default())
}

#[test]
fn json_comparison() {
    let c = example_comparison();
    insta::assert_snapshot!(redact(&serde_json::to_string_pretty(&c).unwrap()));
}

#[test]
fn comparison_text_and_markdown() {
    let c = example_comparison();
    let both = format!(
        "{}\n=====\n{}",
        sloscope_core::show::comparison::text(&c),
        sloscope_core::show::comparison::markdown(&c)
    );
    insta::assert_snapshot!(redact(&both));
}

#[test]
fn json_comparison_view() {
    let v = sloscope_core::show::comparison::comparison_view(&example_comparison());
    insta::assert_snapshot!(redact(&serde_json::to_string_pretty(&v).unwrap()));
}

/// The pull-request summary: the answer per profile first, under 3 KB for the example set.
#[test]
fn summary_markdown_fits_a_comment() {
    let md = redact(&sloscope_core::show::render::summary_markdown(
        &example_analysis(),
    ));
    assert!(md.len() < 3 * 1024, "{} bytes:\n{md}", md.len());
    for p in [
        "latency:",
        "balanced:",
        "throughput:",
        "→ next:",
        "Lineage: ready",
    ] {
        assert!(md.contains(p), "{p} missing:\n{md}");
    }
    insta::assert_snapshot!(md);
}
