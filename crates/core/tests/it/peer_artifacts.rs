//! A real AIPerf artifact directory (tests/fixtures/peers/aiperf-artifact/c2, written by
//! `aiperf profile … --warmup-request-count 2 --artifact-dir c2`): its records, its summary
//! at the top and per phase, their CSV twins and its helper files are one run, whichever of
//! them are given and in any order.

use sloscope_core::analyse::report::{CandidateReport, SummarySource};
use sloscope_core::{analyze, read_document, Analysis, Document, LoadedFile};

use crate::peers::fixture;

const DIR: &str = "aiperf-artifact/c2";
const RECORDS: &str = "profile_export.jsonl";
const SUMMARY: &str = "profile_export_aiperf.json";
const HELPERS: [&str; 3] = [
    ".aiperf_results_ready.json",
    "inputs.json",
    "phase_manifest.json",
];
const EVERY: [&str; 10] = [
    ".aiperf_results_ready.json",
    "inputs.json",
    "phase_manifest.json",
    "phases/profiling/profile_export_aiperf.csv",
    "phases/profiling/profile_export_aiperf.json",
    "phases/warmup/profile_export_aiperf.csv",
    "phases/warmup/profile_export_aiperf.json",
    "profile_export.jsonl",
    "profile_export_aiperf.csv",
    "profile_export_aiperf.json",
];

fn load(rel: &str, bytes: Vec<u8>) -> LoadedFile {
    let name = format!("c2/{rel}");
    let doc = read_document(&name, bytes).unwrap_or_else(|e| panic!("{e}"));
    LoadedFile { name, doc }
}

fn read(files: &[&str]) -> Vec<LoadedFile> {
    files
        .iter()
        .map(|rel| load(rel, fixture(&format!("{DIR}/{rel}")).1))
        .collect()
}

/// Every candidate of the analysis (summaries only: no plan).
fn candidates(a: &Analysis) -> Vec<&CandidateReport> {
    a.profiles.iter().flat_map(|p| &p.candidates).collect()
}

fn excluded(a: &Analysis) -> usize {
    a.profiles.iter().map(|p| p.excluded.len()).sum()
}

#[test]
fn the_whole_directory_is_one_recomputed_run_checked_against_the_summary() {
    let a = analyze(&read(&EVERY));
    let c = candidates(&a);
    assert_eq!(
        c.len(),
        1,
        "{:?}",
        c.iter().map(|c| &c.name).collect::<Vec<_>>()
    );
    assert_eq!(excluded(&a), 0);
    let c = c[0];
    assert_eq!(c.name, "AIPerf c2 64→32");
    assert_eq!(c.source, SummarySource::Recomputed);
    assert_eq!(c.summary.as_ref().map(|s| s.requests_sent), Some(12));
    assert!(c.reported.get("ttft_p50_ms").copied().flatten().is_some());
    assert!(c.disagreements.is_empty(), "{:?}", c.disagreements);
    let said = a.notes.join("\n");
    for rel in HELPERS
        .iter()
        .chain(&["phases/warmup/profile_export_aiperf.json"])
    {
        assert!(
            said.contains(&format!("c2/{rel}: set aside")),
            "{rel}: {said}"
        );
    }
    assert!(
        said.contains("phases/warmup/profile_export_aiperf.csv: set aside"),
        "{said}"
    );
    for copy in [
        "profile_export_aiperf.csv",
        "phases/profiling/profile_export_aiperf.json",
    ] {
        assert!(
            said.contains(&format!("c2/{copy}: a copy of")),
            "{copy}: {said}"
        );
    }
}

#[test]
fn the_order_and_subset_given_do_not_make_other_runs() {
    let whole = analyze(&read(&EVERY));
    let mut reversed = read(&EVERY);
    reversed.reverse();
    assert_eq!(analyze(&reversed), whole);
    // Records with any profiling summary: the same one run.
    for summary in [SUMMARY, "phases/profiling/profile_export_aiperf.json"] {
        let a = analyze(&read(&[RECORDS, summary]));
        let c = candidates(&a);
        assert_eq!(c.len(), 1, "{summary}");
        assert_eq!(c[0].source, SummarySource::Recomputed);
        assert_eq!(c[0].summary, candidates(&whole)[0].summary, "{summary}");
    }
    // The summaries alone: one run, as reported.
    let a = analyze(&read(&[
        SUMMARY,
        "phases/profiling/profile_export_aiperf.json",
        "profile_export_aiperf.csv",
    ]));
    let c = candidates(&a);
    assert_eq!((c.len(), c[0].source), (1, SummarySource::Reported));
}

#[test]
fn helper_files_and_the_warm_up_summary_are_set_aside_when_read() {
    for rel in HELPERS
        .iter()
        .chain(&["phases/warmup/profile_export_aiperf.json"])
    {
        let f = load(rel, fixture(&format!("{DIR}/{rel}")).1);
        assert!(
            matches!(f.doc, Document::Aside(_)),
            "{rel}: {:?}",
            f.doc.kind()
        );
    }
    // A marker that says the run was cancelled says so.
    let f = load(
        "m.json",
        br#"{"ready":true,"was_cancelled":true,"partial":false}"#.to_vec(),
    );
    assert!(
        matches!(&f.doc, Document::Aside(w) if w.contains("cancelled")),
        "{:?}",
        f.doc
    );
}

#[test]
fn a_summary_that_differs_is_not_folded_in() {
    // The summary's TTFT doctored: the records keep their run and the summary's figure is
    // said to disagree with them.
    let (_, bytes) = fixture(&format!("{DIR}/{SUMMARY}"));
    let mut v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let p50 = &mut v["time_to_first_token"]["p50"];
    *p50 = serde_json::json!(p50.as_f64().unwrap() * 1.3);
    let doctored = load(SUMMARY, serde_json::to_vec(&v).unwrap());
    let mut files = read(&[RECORDS]);
    files.push(doctored);
    let a = analyze(&files);
    let c = candidates(&a);
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].disagreements.len(), 1, "{:?}", c[0].disagreements);
    // A summary of another request count is another run: not joined.
    v["request_count"]["avg"] = serde_json::json!(11.0);
    let mut files = read(&[RECORDS]);
    files.push(load(SUMMARY, serde_json::to_vec(&v).unwrap()));
    let a = analyze(&files);
    assert_eq!(candidates(&a).len() + excluded(&a), 2);
}

#[test]
fn one_run_in_two_formats_is_read_once() {
    // GuideLLM wrote one invocation (two benchmarks) as JSON and YAML side by side.
    let files: Vec<LoadedFile> = ["small-benchmarks.json", "small-benchmarks.yaml"]
        .iter()
        .map(|rel| {
            let (_, bytes) = fixture(&format!("guidellm/{rel}"));
            let doc = read_document(rel, bytes).unwrap_or_else(|e| panic!("{e}"));
            LoadedFile {
                name: rel.to_string(),
                doc,
            }
        })
        .collect();
    let a = analyze(&files);
    assert_eq!((candidates(&a).len(), excluded(&a)), (2, 0));
    assert!(
        a.notes.iter().any(|n| n.starts_with("small-benchmarks.yaml: the same runs as small-benchmarks.json")),
        "{:?}",
        a.notes
    );
    // The same files in two folders are not one artifact: a conflict, as before.
    let moved: Vec<LoadedFile> = files
        .iter()
        .enumerate()
        .map(|(i, f)| LoadedFile {
            name: format!("d{i}/{}", f.name),
            doc: f.doc.clone(),
        })
        .collect();
    assert!(excluded(&analyze(&moved)) > 0);
}

/// The artifact's files with `rel` replaced by `bytes`.
fn with(rel: &str, bytes: Vec<u8>, files: &[&str]) -> Vec<LoadedFile> {
    let mut out: Vec<LoadedFile> = read(files)
        .into_iter()
        .filter(|f| f.name != format!("c2/{rel}"))
        .collect();
    out.push(load(rel, bytes));
    out
}

fn notes(a: &Analysis) -> String {
    a.notes.join("\n")
}

#[test]
fn files_of_one_run_that_disagree_conflict_and_are_never_counted_twice() {
    let all = [
        RECORDS,
        SUMMARY,
        "phases/profiling/profile_export_aiperf.json",
    ];
    // Records with one profiling request fewer than the summary says.
    let (_, bytes) = fixture(&format!("{DIR}/{RECORDS}"));
    let text = String::from_utf8(bytes).unwrap();
    let cut = text
        .lines()
        .position(|l| l.contains("\"benchmark_phase\":\"profiling\""))
        .unwrap();
    let fewer: Vec<&str> = text
        .lines()
        .enumerate()
        .filter(|(i, _)| *i != cut)
        .map(|(_, l)| l)
        .collect();
    let a = analyze(&with(RECORDS, (fewer.join("\n") + "\n").into_bytes(), &all));
    assert_eq!(
        (candidates(&a).len(), excluded(&a)),
        (0, 2),
        "{}",
        notes(&a)
    );
    assert!(
        notes(&a).contains("holds 11 requests where"),
        "{}",
        notes(&a)
    );
    // The top summary doctored, its phase copy not: the difference is said, and they conflict.
    let (_, bytes) = fixture(&format!("{DIR}/{SUMMARY}"));
    let mut v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let p50 = v["time_to_first_token"]["p50"].as_f64().unwrap();
    v["time_to_first_token"]["p50"] = serde_json::json!(p50 * 1.05);
    let a = analyze(&with(SUMMARY, serde_json::to_vec(&v).unwrap(), &all));
    assert_eq!(candidates(&a).len(), 0);
    assert!(notes(&a).contains("ttft_p50_ms"), "{}", notes(&a));
    // A copy that says the run was cancelled is not the same summary.
    let mut v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    v["was_cancelled"] = serde_json::json!(true);
    let a = analyze(&with(
        "phases/profiling/profile_export_aiperf.json",
        serde_json::to_vec(&v).unwrap(),
        &all,
    ));
    assert!(
        notes(&a).contains("only one says the run was cancelled"),
        "{}",
        notes(&a)
    );
    // Another run's summary in the folder keeps its own name; this run is still joined.
    let (_, other) = fixture("aiperf/profile_export_aiperf.json");
    let mut files = read(&all);
    files.push(load("other.json", other));
    let a = analyze(&files);
    let names: Vec<&str> = candidates(&a).iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(candidates(&a)
        .iter()
        .any(|c| c.name == "AIPerf c2 64→32" && c.source == SummarySource::Recomputed));
}

#[test]
fn a_second_file_with_other_requests_is_not_a_copy() {
    let (_, bytes) = fixture("guidellm/small-benchmarks.json");
    let mut v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let t = &mut v["benchmarks"][0]["requests"]["successful"][0]["info"]["timings"]
        ["first_token_iteration"];
    *t = serde_json::json!(t.as_f64().unwrap() + 0.02);
    let files: Vec<LoadedFile> = [
        ("g/a.json", bytes),
        ("g/b.json", serde_json::to_vec(&v).unwrap()),
    ]
    .into_iter()
    .map(|(n, b)| LoadedFile {
        name: n.into(),
        doc: read_document(n, b).unwrap(),
    })
    .collect();
    let a = analyze(&files);
    assert!(excluded(&a) >= 2, "{}", notes(&a));
    assert!(!notes(&a).contains("read once"), "{}", notes(&a));
    // The CSV of the same invocation is read once beside its JSON.
    let files: Vec<LoadedFile> = ["small-benchmarks.json", "small-benchmarks.csv"]
        .iter()
        .map(|rel| LoadedFile {
            name: rel.to_string(),
            doc: read_document(rel, fixture(&format!("guidellm/{rel}")).1).unwrap(),
        })
        .collect();
    let a = analyze(&files);
    assert_eq!(
        (candidates(&a).len(), excluded(&a)),
        (2, 0),
        "{}",
        notes(&a)
    );
}

#[test]
fn every_form_of_the_ready_marker_is_set_aside_and_says_what_it_says() {
    for (json, says) in [
        (r#"{"ready":false}"#, "not ready"),
        (
            r#"{"ready":true,"was_cancelled":false,"partial":false,"schema_version":2}"#,
            "",
        ),
        (
            r#"{"ready":true,"was_cancelled":true,"partial":false,"was_cancelled":false}"#,
            "given twice",
        ),
        (
            r#"{"ready":true,"was_cancelled":false,"partial":"yes"}"#,
            "not true or false",
        ),
    ] {
        let f = load(".aiperf_results_ready.json", json.as_bytes().to_vec());
        assert!(
            matches!(&f.doc, Document::Aside(w) if w.contains(says)),
            "{json}: {:?}",
            f.doc
        );
    }
}
