//! One AIPerf run is written as several files in its artifact directory: the per-request
//! records (`profile_export.jsonl`), the summary at the top (`profile_export_aiperf.json`, with
//! a CSV twin) and again per phase (`phases/profiling/…`; the warm-up phase's and the helper
//! files are set aside when read, [`super::aiperf::aside`]). Given together — a directory, or
//! files dropped together — they are one run: the records recomputed, the summary's figures
//! kept as what the tool reported (and checked against the records), copies read once.
//!
//! The same holds for any tool's run written in several formats side by side (GuideLLM's
//! JSON, YAML and CSV of one invocation): a file whose every run matches, in order, a run of
//! another file of the same tool in the same directory — the same name, the same request count
//! and every figure both state within 0.5 % — is that file in another format, read once.
//!
//! Files belong to one artifact when they sit in the same directory, a `phases/<name>/`
//! directory counting as its parent's. A summary is a copy of another when every figure both
//! state agrees within 0.5 % (the CSV rounds); records join the summary when their request
//! count is the summary's. Anything else is left as it was read (and compared, or said to
//! conflict, as any runs are).

use std::collections::{BTreeMap, BTreeSet};

use crate::read::document::{Document, LoadedFile};
use crate::schema::Run;

/// What joining changed: files that replace the ones they were made of, the names of the
/// files replaced or folded in, and a note for each.
#[derive(Debug, Default)]
pub struct Joined {
    /// One file per joined run, named as its records file.
    pub files: Vec<LoadedFile>,
    /// The files the joined runs replace, and copies read once.
    pub consumed: BTreeSet<String>,
    /// What was joined or read once, in words.
    pub notes: Vec<String>,
}

const TOOL: &str = "AIPerf";
/// Notes of a lone file that a joined run no longer needs.
const LONE_NOTES: [&str; 2] = ["summaries used as reported", "file read without a plan"];

/// The phase a file's `phases/<name>/` folder names, if it is in one.
fn phase_folder(name: &str) -> Option<&str> {
    let dir = &name[..name.rfind(['/', '\\'])?];
    let (up, last) = dir
        .rfind(['/', '\\'])
        .map_or(("", dir), |i| (&dir[..i], &dir[i + 1..]));
    let phases = up.rfind(['/', '\\']).map_or(up, |i| &up[i + 1..]);
    (phases == "phases" && !last.is_empty()).then_some(last)
}

/// The directory of an artifact a file belongs to (a `phases/<name>/` folder is its parent's).
fn artifact_dir(name: &str) -> &str {
    let dir = name.rfind(['/', '\\']).map_or("", |i| &name[..i]);
    if phase_folder(name).is_none() {
        return dir;
    }
    let up = dir.rfind(['/', '\\']).map_or("", |i| &dir[..i]);
    up.rfind(['/', '\\']).map_or("", |i| &up[..i])
}

/// The one AIPerf run a file holds.
fn aiperf_run(f: &LoadedFile) -> Option<&Run> {
    match &f.doc {
        Document::Imported(runs) if runs.len() == 1 => {
            let run = &runs[0].1;
            (run.import.as_ref()?.tool == TOOL).then_some(run)
        }
        _ => None,
    }
}

/// Every figure both runs report agrees within 0.5 %, and they share at least one.
fn same_figures(a: &Run, b: &Run) -> bool {
    let (Some(ra), Some(rb)) = (&a.reported, &b.reported) else {
        return false;
    };
    let shared: Vec<(f64, f64)> = ra
        .iter()
        .filter_map(|(k, x)| Some(((*x)?, rb.get(k).copied().flatten()?)))
        .collect();
    !shared.is_empty()
        && shared
            .iter()
            .all(|(x, y)| (x - y).abs() <= 0.005 * x.abs().max(y.abs()) + 1e-9)
}

fn requests_sent(run: &Run) -> Option<f64> {
    run.reported
        .as_ref()?
        .get("requests_sent")
        .copied()
        .flatten()
}

/// The run of the records, with the summary's figures as reported and its workload.
fn joined_run(records: &Run, summary: &Run, records_name: &str, summary_name: &str) -> Run {
    let mut run = records.clone();
    run.reported.clone_from(&summary.reported);
    run.candidate = summary.candidate.clone();
    run.workload_id.clone_from(&summary.workload_id);
    run.profile.clone_from(&summary.profile);
    if run.artifact_id == "unknown" {
        run.artifact_id.clone_from(&summary.artifact_id);
    }
    if let (Some(mine), Some(theirs)) = (run.import.as_mut(), summary.import.as_ref()) {
        mine.workload = theirs.workload.clone();
        if theirs.tool_version.is_some() {
            mine.tool_version.clone_from(&theirs.tool_version);
        }
    }
    let lone = |n: &String| LONE_NOTES.iter().any(|l| n.contains(l));
    let mut notes: Vec<String> = summary
        .notes
        .iter()
        .filter(|n| !n.contains(LONE_NOTES[0]))
        .cloned()
        .collect();
    notes.extend(records.notes.iter().filter(|n| !lone(n)).cloned());
    notes.push(format!(
        "one AIPerf run: the requests of {records_name} recomputed; {summary_name}'s figures kept as the tool reported them"
    ));
    run.notes = notes;
    run
}

/// Joins the files of each AIPerf artifact given together, then reads once each file that is
/// another format of a file beside it.
pub fn join(files: &[&LoadedFile]) -> Joined {
    let mut out = join_aiperf(files);
    let rest: Vec<&LoadedFile> = files
        .iter()
        .copied()
        .filter(|f| !out.consumed.contains(&f.name))
        .collect();
    twins(&rest, &mut out);
    out
}

/// The runs a file imported from another tool holds.
fn imported(f: &LoadedFile) -> Option<&[(String, Run)]> {
    match &f.doc {
        Document::Imported(runs) if !runs.is_empty() => Some(runs),
        _ => None,
    }
}

fn request_count(run: &Run) -> Option<f64> {
    if run.repeats.is_empty() {
        return requests_sent(run);
    }
    Some(run.repeats.iter().map(|r| r.requests.len()).sum::<usize>() as f64)
}

/// Whether every run of `b` is, in order, the same run as one of `a`: one tool, one name,
/// one request count, the same figures.
fn same_runs(a: &[(String, Run)], b: &[(String, Run)]) -> bool {
    let tool = |r: &Run| r.import.as_ref().map(|i| i.tool.clone());
    a.len() == b.len()
        && a.iter().zip(b).all(|((_, x), (_, y))| {
            tool(x).is_some()
                && tool(x) == tool(y)
                && x.candidate.name == y.candidate.name
                && request_count(x) == request_count(y)
                && same_figures(x, y)
        })
}

/// A file's name and the runs it imported.
type NamedRuns<'a> = (&'a str, &'a [(String, Run)]);

/// Files that are another format of a file beside them: read once (the one with raw
/// requests kept, then JSON, then the shorter name).
fn twins(files: &[&LoadedFile], out: &mut Joined) {
    let mut by_dir: BTreeMap<&str, Vec<NamedRuns<'_>>> = BTreeMap::new();
    for f in files {
        if let Some(runs) = imported(f) {
            by_dir
                .entry(artifact_dir(&f.name))
                .or_default()
                .push((&f.name, runs));
        }
    }
    for (_, mut group) in by_dir {
        group.sort_by_key(|(n, runs)| {
            let raw = runs.iter().any(|(_, r)| !r.repeats.is_empty());
            (!raw, !n.ends_with(".json"), n.len(), *n)
        });
        let mut kept: Vec<NamedRuns<'_>> = Vec::new();
        for (name, runs) in group {
            match kept.iter().find(|(_, k)| same_runs(k, runs)) {
                Some((first, _)) => {
                    out.consumed.insert(name.to_string());
                    out.notes.push(format!(
                        "{name}: the same run{} as {first}, in another format (every figure agrees): read once",
                        if runs.len() == 1 { "" } else { "s" }
                    ));
                }
                None => kept.push((name, runs)),
            }
        }
    }
}

/// Joins the files of each AIPerf artifact given together.
fn join_aiperf(files: &[&LoadedFile]) -> Joined {
    let mut by_dir: BTreeMap<&str, Vec<(&str, &Run)>> = BTreeMap::new();
    for f in files {
        if let Some(run) = aiperf_run(f) {
            by_dir
                .entry(artifact_dir(&f.name))
                .or_default()
                .push((&f.name, run));
        }
    }
    let mut out = Joined::default();
    for (_, mut group) in by_dir {
        // The top-level JSON summary first (the shortest name), then its copies.
        group.sort_by_key(|(n, r)| (!r.repeats.is_empty(), !n.ends_with(".json"), n.len(), *n));
        join_group(&group, &mut out);
    }
    out
}

fn join_group(group: &[(&str, &Run)], out: &mut Joined) {
    let (records, summaries): (Vec<_>, Vec<_>) =
        group.iter().partition(|(_, r)| !r.repeats.is_empty());
    // A CSV says nothing of its phase: its folder does (the JSON's content, when read).
    let (other_phase, summaries): (Vec<_>, Vec<_>) = summaries
        .into_iter()
        .partition(|(n, _)| phase_folder(n).is_some_and(|p| p != "profiling"));
    for &(name, _) in &other_phase {
        out.consumed.insert(name.to_string());
        out.notes.push(format!(
            "{name}: set aside: AIPerf's {} phase summary (by its folder): not the measured (profiling) phase",
            phase_folder(name).unwrap_or_default()
        ));
    }
    let Some(&(primary, summary)) = summaries.first() else {
        return;
    };
    for &(name, copy) in &summaries[1..] {
        if same_figures(summary, copy) {
            out.consumed.insert(name.to_string());
            out.notes.push(format!(
                "{name}: the same AIPerf run as {primary} (every figure agrees): read once"
            ));
        }
    }
    let [(records_name, records)] = records[..] else {
        return;
    };
    let rows = records
        .repeats
        .iter()
        .map(|r| r.requests.len())
        .sum::<usize>() as f64;
    if requests_sent(summary) != Some(rows) {
        return;
    }
    out.consumed.insert(records_name.to_string());
    out.consumed.insert(primary.to_string());
    out.notes.push(format!(
        "{primary}: the summary of {records_name}'s run: one AIPerf run, its figures checked against the records"
    ));
    out.files.push(LoadedFile {
        name: records_name.to_string(),
        doc: Document::Imported(vec![(
            records_name.to_string(),
            joined_run(records, summary, records_name, primary),
        )]),
    });
}

#[cfg(test)]
mod tests {
    use super::{artifact_dir, phase_folder};

    #[test]
    fn a_phase_folder_names_its_phase() {
        assert_eq!(phase_folder("c2/phases/warmup/x.csv"), Some("warmup"));
        assert_eq!(phase_folder("phases/profiling/x.json"), Some("profiling"));
        assert_eq!(phase_folder("c2/x.json"), None);
        assert_eq!(phase_folder("x.json"), None);
    }

    #[test]
    fn a_phase_folder_belongs_to_its_artifact() {
        assert_eq!(artifact_dir("c2/profile_export.jsonl"), "c2");
        assert_eq!(
            artifact_dir("c2/phases/profiling/profile_export_aiperf.json"),
            "c2"
        );
        assert_eq!(artifact_dir("a\\c2\\phases\\warmup\\x.json"), "a\\c2");
        assert_eq!(artifact_dir("phases/profiling/x.json"), "");
        assert_eq!(artifact_dir("x.json"), "");
        assert_eq!(artifact_dir("runs/phases.json"), "runs");
        assert_eq!(artifact_dir("out/phases/x.json"), "out/phases");
    }
}
