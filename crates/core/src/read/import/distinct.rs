//! The names sloscope makes for other tools' runs read without a plan (`SGLang c4 64→32`,
//! `GuideLLM #0 c1 64→32`) say the tool and the workload, not the file: two files of one tool
//! and workload — SGLang's Python and Rust clients, two GuideLLM invocations — would read as one
//! candidate's reruns and be dropped as such. Where a made name is shared by runs of different
//! files (different bytes) that each hold their own requests, each such run is named with its
//! file too: made names never merge distinct measurements. A file of summaries only is left
//! under its name: it may be the summary of a records file beside it (one run written as two
//! files), which the checks pair or refuse as a conflict.

use std::collections::BTreeMap;

use crate::read::{Document, LoadedFile};

/// Copies of the files whose runs' made names collide with another file's, the runs renamed
/// `name (file)`; the files not listed are used as they are.
pub fn distinct(files: &[&LoadedFile]) -> Vec<LoadedFile> {
    // Made name → the distinct files (by content) whose runs carry it.
    let mut owners: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for f in files {
        let Document::Imported(runs) = &f.doc else {
            continue;
        };
        for (_, r) in runs
            .iter()
            .filter(|(_, r)| made(r) && !r.repeats.is_empty())
        {
            let sha = r.import.as_ref().map_or("", |i| i.sha256.as_str());
            let who = owners.entry(r.candidate.name.as_str()).or_default();
            if !who.contains(&sha) {
                who.push(sha);
            }
        }
    }
    let shared = |n: &str| owners.get(n).is_some_and(|w| w.len() > 1);
    // Two files of one base name (`c/out.jsonl`, `d/out.jsonl`) are told apart by their folder.
    let bases: Vec<&str> = files
        .iter()
        .filter(|f| matches!(f.doc, Document::Imported(_)))
        .map(|f| base(&f.name))
        .collect();
    let label = |f: &LoadedFile| {
        let b = base(&f.name);
        if bases.iter().filter(|x| **x == b).count() > 1 {
            last_two(&f.name).to_string()
        } else {
            b.to_string()
        }
    };
    let mut out = Vec::new();
    for f in files {
        let Document::Imported(runs) = &f.doc else {
            continue;
        };
        if !runs
            .iter()
            .any(|(_, r)| own(r) && shared(&r.candidate.name))
        {
            continue;
        }
        let mut runs = runs.clone();
        for (_, r) in runs.iter_mut().filter(|(_, r)| own(r)) {
            if shared(&r.candidate.name) {
                r.candidate.name = format!("{} ({})", r.candidate.name, label(f));
            }
        }
        out.push(LoadedFile {
            name: f.name.clone(),
            doc: Document::Imported(runs),
        });
    }
    out
}

/// The file's name without its folders.
fn base(name: &str) -> &str {
    name.rsplit(['/', '\\']).next().unwrap_or(name)
}

/// The file's name with its nearest folder (`d/out.jsonl`).
fn last_two(name: &str) -> &str {
    let mut cuts = name.rmatch_indices(['/', '\\']).map(|(i, _)| i);
    match (cuts.next(), cuts.next()) {
        (Some(_), Some(i)) => &name[i + 1..],
        _ => name,
    }
}

/// A run under a made name that holds its own requests.
fn own(r: &crate::schema::Run) -> bool {
    made(r) && !r.repeats.is_empty()
}

/// Whether the run's candidate name is one sloscope made (a file read without a plan).
fn made(r: &crate::schema::Run) -> bool {
    r.notes.iter().any(|n| n.contains(super::UNPLANNED))
}
