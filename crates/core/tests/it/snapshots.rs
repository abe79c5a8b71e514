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
