//! Metamorphic tests: what does not change the evidence does not change the analysis. The order
//! the files are given in, and the names they are given under, are no evidence: permuting or
//! renaming the example set's files gives the same analysis (the JSON equal but for the paths).
//! (Splitting a directory into several arguments, or reaching files through links, is tested on
//! the CLI, which does the file-system part.)

use sloscope_core::show::view::AnalysisOutput;
use sloscope_core::{analyze, LoadedFile};

use crate::snapshots::example_files;

fn json(files: &[LoadedFile]) -> String {
    serde_json::to_string_pretty(&AnalysisOutput::new(analyze(files))).unwrap()
}

#[test]
fn the_order_of_the_files_changes_nothing() {
    let files = example_files();
    let want = json(&files);
    let n = files.len();
    for k in [1, 3, n / 2, n - 1] {
        let mut rotated = files.clone();
        rotated.rotate_left(k);
        assert_eq!(json(&rotated), want, "rotated by {k}");
    }
    let mut reversed = files.clone();
    reversed.reverse();
    assert_eq!(json(&reversed), want, "reversed");
    // Interleave: odd positions first.
    let mut shuffled: Vec<LoadedFile> = files.iter().skip(1).step_by(2).cloned().collect();
    shuffled.extend(files.iter().step_by(2).cloned());
    assert_eq!(json(&shuffled), want, "interleaved");
}

#[test]
fn the_names_of_the_files_change_nothing_but_the_names() {
    let files = example_files();
    let want = json(&files);
    // Renamed into another directory, in reverse name order: every name still distinct.
    let renamed: Vec<LoadedFile> = files
        .iter()
        .map(|f| LoadedFile {
            name: f.name.replace("static/examples/", "elsewhere/set-b/"),
            doc: f.doc.clone(),
        })
        .rev()
        .collect();
    let got = json(&renamed).replace("elsewhere/set-b/", "static/examples/");
    assert_eq!(got, want);
    // Renamed so that their name order is the reverse of before.
    let n = files.len();
    let new_name = |i: usize| format!("renamed/{:02}-file.json", n - i);
    let renamed: Vec<LoadedFile> = files
        .iter()
        .enumerate()
        .map(|(i, f)| LoadedFile {
            name: new_name(i),
            doc: f.doc.clone(),
        })
        .collect();
    let mut got = json(&renamed);
    for (i, f) in files.iter().enumerate() {
        got = got.replace(&new_name(i), &f.name);
    }
    assert_eq!(got, want);
}
