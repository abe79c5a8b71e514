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
    /// Of [`Self::consumed`], each file whose measurement another file's run now holds → that
    /// file (the records file of a joined run, the copy kept of a copy): one measurement, one
    /// run, wherever it is placed. A file set aside, or renamed to conflict, is in none.
    pub part_of: BTreeMap<String, String>,
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
    one_run_of(f, TOOL)
}

/// The one run of `tool` a file holds.
fn one_run_of<'a>(f: &'a LoadedFile, tool: &str) -> Option<&'a Run> {
    match &f.doc {
        Document::Imported(runs) if runs.len() == 1 => {
            let run = &runs[0].1;
            (run.import.as_ref()?.tool == tool).then_some(run)
        }
        _ => None,
    }
}

/// llmperf writes one invocation as `<prefix>_individual_responses.json` (the requests) and
/// `<prefix>_summary.json` (the workload and figures) side by side: the folder and prefix they
/// share name the run.
fn llmperf_run(name: &str) -> Option<&str> {
    name.strip_suffix("_individual_responses.json")
        .or_else(|| name.strip_suffix("_summary.json"))
}

/// Every figure both runs report agrees within 0.5 %, and they share at least one.
fn same_figures(a: &Run, b: &Run) -> bool {
    same_figures_within(a, b, 0.005)
}

/// Every figure both runs report agrees within `rel` (relative), and they share at least one.
fn same_figures_within(a: &Run, b: &Run, rel: f64) -> bool {
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
            .all(|(x, y)| (x - y).abs() <= rel * x.abs().max(y.abs()) + 1e-9)
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
    // By base name: a copy of the whole directory elsewhere is then the same run (read once).
    let (records_file, summary_file) = (
        super::base_name(records_name),
        super::base_name(summary_name),
    );
    let tool = records.import.as_ref().map_or(TOOL, |i| i.tool.as_str());
    notes.push(format!(
        "one {tool} run: the requests of {records_file} recomputed; {summary_file}'s figures kept as the tool reported them"
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

/// Whether every run of `b` is, in order, the same run as one of `a`: one tool, one name
/// (or the same benchmark where one file holds summaries only and names it by less), one
/// request count, the same figures, and where both hold requests, the same requests.
fn same_runs(a: &[(String, Run)], b: &[(String, Run)]) -> bool {
    let tool = |r: &Run| r.import.as_ref().map(|i| i.tool.clone());
    let index = |r: &Run| r.import.as_ref().map(|i| i.benchmark);
    let summary_only = |r: &Run| r.repeats.is_empty();
    a.len() == b.len()
        && a.iter().zip(b).all(|((_, x), (_, y))| {
            let named = x.candidate.name == y.candidate.name
                || ((summary_only(x) || summary_only(y)) && index(x) == index(y));
            tool(x).is_some()
                && tool(x) == tool(y)
                && named
                && request_count(x) == request_count(y)
                && same_figures(x, y)
                && same_requests(x, y)
        })
}

/// Where both runs hold requests: request by request, the same outcome, output tokens and
/// (within 2 µs, what a format's rounding moves) TTFT and end-to-end time.
fn same_requests(x: &Run, y: &Run) -> bool {
    if x.repeats.is_empty() || y.repeats.is_empty() {
        return true;
    }
    let rows = |r: &Run| {
        r.repeats
            .iter()
            .flat_map(|rep| {
                let q = &rep.requests;
                (0..q.len()).map(move |i| {
                    let at = |v: &Vec<Option<u64>>| v.get(i).copied().flatten();
                    (
                        at(&q.ttft_us),
                        at(&q.e2e_us),
                        q.output_tokens.get(i).copied().flatten(),
                        q.error.get(i).is_some_and(Option::is_some),
                    )
                })
            })
            .collect::<Vec<_>>()
    };
    let near = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (Some(a), Some(b)) => a.abs_diff(b) <= 2,
        (a, b) => a == b,
    };
    let (rx, ry) = (rows(x), rows(y));
    rx.len() == ry.len()
        && rx
            .iter()
            .zip(&ry)
            .all(|(p, q)| near(p.0, q.0) && near(p.1, q.1) && p.2 == q.2 && p.3 == q.3)
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
        crate::base::order::sort_by_key(&mut group, |(n, runs)| {
            let raw = runs.iter().any(|(_, r)| !r.repeats.is_empty());
            (!raw, !n.ends_with(".json"), n.len(), *n)
        });
        let mut kept: Vec<NamedRuns<'_>> = Vec::new();
        for (name, runs) in group {
            match kept.iter().find(|(_, k)| same_runs(k, runs)) {
                // One file given twice under one name is not two formats of a run: the
                // analysis counts it once elsewhere; here it must not consume itself.
                Some((first, _)) if *first == name => {}
                Some((first, _)) => {
                    out.consumed.insert(name.to_string());
                    out.part_of.insert(name.to_string(), first.to_string());
                    out.notes.push(format!(
                        "{name}: the same run{} as {first}, in another file (every figure and request agrees): read once",
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
    // llmperf's two files of one invocation, by their shared prefix.
    for f in files {
        if let (Some(run), Some(prefix)) = (one_run_of(f, "llmperf"), llmperf_run(&f.name)) {
            by_dir.entry(prefix).or_default().push((&f.name, run));
        }
    }
    let mut out = Joined::default();
    for (_, mut group) in by_dir {
        // The top-level JSON summary first (the shortest name), then its copies.
        crate::base::order::sort_by_key(&mut group, |(n, r)| {
            (!r.repeats.is_empty(), !n.ends_with(".json"), n.len(), *n)
        });
        join_group(&group, &mut out);
    }
    out
}

type Named<'a> = (&'a str, &'a Run);

fn is_csv(run: &Run) -> bool {
    run.import
        .as_ref()
        .is_some_and(|i| i.format.contains("csv"))
}

fn cancelled(run: &Run) -> bool {
    run.notes.iter().any(|n| n.contains("cancelled"))
}

/// A copy of the same summary: the same request count, the same cancelled state, and every
/// figure equal (within 0.5 % when one of them is AIPerf's CSV, which rounds).
fn copy_of(a: &Run, b: &Run) -> bool {
    let exact = !is_csv(a) && !is_csv(b);
    requests_sent(a) == requests_sent(b)
        && cancelled(a) == cancelled(b)
        && if exact {
            same_figures_within(a, b, 1e-12)
        } else {
            same_figures(a, b)
        }
}

/// The records' TTFT median (numpy-linear, AIPerf's rule too) agrees with the summary's.
fn median_agrees(records: &Run, summary: &Run) -> bool {
    let mut ttft: Vec<f64> = records
        .repeats
        .iter()
        .flat_map(|r| r.requests.ttft_us.iter().zip(&r.requests.error))
        .filter(|(_, e)| e.is_none())
        .filter_map(|(t, _)| t.map(|t| t as f64 / 1000.0))
        .collect();
    ttft.sort_by(f64::total_cmp);
    let ours = crate::base::stats::percentile_sorted(&ttft, 50.0);
    let theirs = summary
        .reported
        .as_ref()
        .and_then(|r| r.get("ttft_p50_ms").copied().flatten());
    matches!((ours, theirs), (Some(x), Some(y)) if (x - y).abs() <= 0.005 * x.abs().max(y.abs()) + 0.051)
}

/// `run` under `like`'s name, workload and profile, so the analysis sees two runs of one
/// name that differ and says they conflict (instead of counting one measurement twice).
fn renamed(name: &str, run: &Run, like: &Run, why: String, out: &mut Joined) {
    let mut run = run.clone();
    run.candidate.name.clone_from(&like.candidate.name);
    run.workload_id.clone_from(&like.workload_id);
    run.profile.clone_from(&like.profile);
    run.notes.push(why.clone());
    out.consumed.insert(name.to_string());
    out.notes.push(format!("{name}: {why}"));
    out.files.push(LoadedFile {
        name: name.to_string(),
        doc: Document::Imported(vec![(name.to_string(), run)]),
    });
}

fn join_group(group: &[(&str, &Run)], out: &mut Joined) {
    let (records, summaries): (Vec<Named<'_>>, Vec<Named<'_>>) =
        group.iter().partition(|(_, r)| !r.repeats.is_empty());
    // A CSV says nothing of its phase: its folder does (a JSON summary's content does).
    let (other_phase, summaries): (Vec<Named<'_>>, Vec<Named<'_>>) = summaries
        .into_iter()
        .partition(|(n, r)| is_csv(r) && phase_folder(n).is_some_and(|p| p != "profiling"));
    for &(name, _) in &other_phase {
        out.consumed.insert(name.to_string());
        out.notes.push(format!(
            "{name}: set aside: AIPerf's {} phase summary (by its folder): not the measured (profiling) phase",
            phase_folder(name).unwrap_or_default()
        ));
    }
    let [(records_name, records)] = records[..] else {
        read_copies_once(&summaries, out);
        return;
    };
    let rows = request_count(records);
    let same_count: Vec<Named<'_>> = summaries
        .iter()
        .copied()
        .filter(|s| requests_sent(s.1) == rows)
        .collect();
    let chosen = same_count
        .iter()
        .find(|s| median_agrees(records, s.1))
        .or(same_count.first())
        .copied();
    let Some((summary_name, summary)) = chosen else {
        // Records that no summary of their folder describes: the files of one AIPerf run
        // disagree; under the summary's name the analysis says they conflict.
        read_copies_once(&summaries, out);
        if let Some(&(name, primary)) = summaries.first() {
            let why = format!(
                "holds {} requests where {name} (another file of the same run) reports {}: the run's files disagree",
                rows.unwrap_or(0.0),
                requests_sent(primary).map_or("no count".into(), |n| n.to_string())
            );
            renamed(records_name, records, primary, why, out);
        }
        return;
    };
    join_records(records_name, records, summary_name, summary, out);
    for &(name, other) in summaries.iter().filter(|s| s.0 != summary_name) {
        others(name, other, (summary_name, summary), out);
    }
}

/// A summary beside the one joined: a copy is read once; one of the same run (same request
/// count, no other load) that differs conflicts with the joined run; another run keeps its name.
fn others(name: &str, other: &Run, (joined_name, joined): Named<'_>, out: &mut Joined) {
    if copy_of(joined, other) {
        out.consumed.insert(name.to_string());
        out.part_of
            .insert(name.to_string(), joined_name.to_string());
        out.notes.push(format!(
            "{name}: a copy of {joined_name} (every figure agrees): read once"
        ));
        return;
    }
    let load = |r: &Run| r.import.as_ref().and_then(|i| i.workload.concurrency);
    let other_load = matches!((load(joined), load(other)), (Some(a), Some(b)) if a != b);
    if requests_sent(other) == requests_sent(joined) && !other_load {
        let differ: Vec<String> = differing(joined, other);
        let why = format!(
            "a summary of the same run as {joined_name} that differs from it ({}): the run's files disagree",
            differ.join(", ")
        );
        renamed(name, other, joined, why, out);
    }
}

/// The figures two summaries state differently, as `name a vs b`.
fn differing(a: &Run, b: &Run) -> Vec<String> {
    let (Some(ra), Some(rb)) = (&a.reported, &b.reported) else {
        return vec!["no figures".into()];
    };
    let said =
        (cancelled(a) != cancelled(b)).then(|| "only one says the run was cancelled".to_string());
    let figures = ra
        .iter()
        .filter_map(|(k, x)| Some((k, (*x)?, rb.get(k).copied().flatten()?)))
        .filter(|(_, x, y)| (x - y).abs() > 1e-9 * x.abs().max(y.abs()))
        .take(3)
        .map(|(k, x, y)| {
            let n = crate::base::fmt::format_number;
            format!("{k} {} vs {}", n(x), n(y))
        });
    said.into_iter().chain(figures).collect()
}

/// Summaries alone: copies of the first read once.
fn read_copies_once(summaries: &[Named<'_>], out: &mut Joined) {
    let Some(&(primary, summary)) = summaries.first() else {
        return;
    };
    for &(name, copy) in &summaries[1..] {
        if copy_of(summary, copy) {
            out.consumed.insert(name.to_string());
            out.part_of.insert(name.to_string(), primary.to_string());
            out.notes.push(format!(
                "{name}: a copy of {primary} (every figure agrees): read once"
            ));
        }
    }
}

fn join_records(
    records_name: &str,
    records: &Run,
    summary_name: &str,
    summary: &Run,
    out: &mut Joined,
) {
    out.consumed.insert(records_name.to_string());
    out.consumed.insert(summary_name.to_string());
    out.part_of
        .insert(summary_name.to_string(), records_name.to_string());
    let tool = records.import.as_ref().map_or(TOOL, |i| i.tool.as_str());
    out.notes.push(format!(
        "{summary_name}: the summary of {records_name}'s run: one {tool} run, its figures checked against the records"
    ));
    out.files.push(LoadedFile {
        name: records_name.to_string(),
        doc: Document::Imported(vec![(
            records_name.to_string(),
            joined_run(records, summary, records_name, summary_name),
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
