//! What is judged: the artifact and its quantization, the float baseline, the backend and its
//! version, the hardware, the plan and when the runs were collected — named above the verdicts
//! in every output, so a reader knows what a verdict is about before reading it.
//!
//! Each field says where it came from: the deployment record first (the artifact as deployed),
//! else the gate record, else what the runs say of themselves when every run says the same
//! (several values are listed, never one picked).

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::check::lineage::LineageInputs;
use crate::schema::{ArtifactIdentity, Plan, Role, Run};

/// What the verdicts are about. Each value from an input file is said as the file says it: one
/// plain token (letters, digits, `.`, `_`, `-`, `/`, `:`, `+`, `@`) as it is, anything else
/// quoted and escaped — so a file's text never reads as sloscope's own words beside it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Subject {
    /// The deployed artifact's id (the runs' when no record is loaded; several, comma-separated,
    /// when the runs disagree).
    pub artifact: Option<String>,
    /// The candidate runs' own artifact ids, when some are not the record's `artifact` (a run of
    /// another artifact): which, and how many of the candidate runs (`x (2 of 3 candidate
    /// runs)`). `None` when every candidate run is of the record's artifact, or no record is
    /// loaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs_artifact: Option<String>,
    /// Its quantization format (`Q4_1`, `AWQ`, …).
    pub format: Option<String>,
    /// The source model it was made from.
    pub model: Option<String>,
    /// The float baseline's artifact id and format.
    pub baseline: Option<String>,
    /// Serving backend and its version.
    pub backend: Option<String>,
    /// Hardware as recorded.
    pub hardware: Option<String>,
    /// The plan's name (its file when it has none).
    pub plan: Option<String>,
    /// sha256 of the plan's content (its canonical JSON, so a YAML, TOML or JSON copy of one
    /// plan hash the same), lower-case hex.
    pub plan_content_sha256: Option<String>,
    /// With a plan loaded: the runs that record another plan's content (`plan_content_sha256`)
    /// than the loaded one's — how many of the runs, and the other hashes' first 12 digits.
    /// `None` when every run that records one names the loaded plan (older runs record none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs_plan: Option<String>,
    /// What the run left out of the plan it was given (`--profiles`, `--candidates`,
    /// `--no-baseline`), as its plan copy records: never measured, so never judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_left_out: Option<String>,
    /// Earliest start of a run, RFC 3339 as recorded.
    pub collected_from: Option<String>,
    /// Latest end of a run.
    pub collected_to: Option<String>,
    /// Runs analysed (trials and baselines included; identical copies counted once).
    pub runs: usize,
    /// Of them, the runs left out of every comparison (another artifact, refused by a check):
    /// loaded, not judged.
    #[serde(default)]
    pub runs_left_out: usize,
}

const NOT_RECORDED: &str = "not recorded";

/// `s`, unless it is the placeholder an importer writes where the tool did not say (`unknown`,
/// empty): a missing value is said as not recorded, never as a value.
fn known(s: &str) -> Option<&str> {
    let t = s.trim();
    (!t.is_empty() && !t.eq_ignore_ascii_case("unknown")).then_some(t)
}

/// `s` as a file says it: one plain token as it is, anything else quoted and escaped.
pub(crate) fn said(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/:+@".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("{s:?}")
    }
}

/// `llama.cpp b6100`; `openai (version not recorded)`; not recorded when neither is.
fn backend(name: &str, version: &str) -> String {
    let (name, version) = (known(name).map(said), known(version).map(said));
    match (name, version) {
        (Some(n), Some(v)) => format!("{n} {v}"),
        (Some(n), None) => format!("{n} (version not recorded)"),
        (None, Some(v)) => format!("backend not recorded, version {v}"),
        (None, None) => NOT_RECORDED.into(),
    }
}

/// What `inputs` and `plan` say is judged.
pub fn subject(inputs: &LineageInputs<'_>, plan: Option<(&str, &Plan)>) -> Subject {
    let runs: Vec<&Run> = inputs.runs.iter().map(|(_, r)| *r).collect();
    let record: Option<&ArtifactIdentity> = inputs
        .deployments
        .first()
        .map(|d| &d.1.artifact)
        .or_else(|| inputs.gates.first().map(|g| &g.1.artifact));
    let candidates: Vec<&Run> = runs
        .iter()
        .copied()
        .filter(|r| r.role == Role::Candidate)
        .collect();
    let baseline = inputs.baselines.first().map(|b| {
        let a = &b.1.artifact;
        match &a.format {
            Some(f) => format!("{} ({})", said(&a.artifact_id), said(f)),
            None => said(&a.artifact_id),
        }
    });
    let runs_say = |f: &dyn Fn(&Run) -> String| agreed(candidates.iter().map(|r| f(r)));
    Subject {
        artifact: record
            .map(|a| said(&a.artifact_id))
            .or_else(|| runs_say(&|r| said(&r.artifact_id))),
        runs_artifact: record.and_then(|a| other_artifacts(&a.artifact_id, &candidates)),
        format: record.and_then(|a| a.format.as_deref().map(said)),
        model: record.and_then(|a| a.model.as_deref().map(said)),
        baseline: baseline.or_else(|| {
            agreed(
                runs.iter()
                    .filter(|r| r.role == Role::Baseline)
                    .map(|r| said(&r.artifact_id)),
            )
        }),
        backend: record
            .map(|a| backend(&a.backend, &a.backend_version))
            .or_else(|| runs_say(&|r| backend(&r.backend, &r.backend_version)))
            .filter(|b| b != NOT_RECORDED),
        hardware: record
            .map(|a| a.hardware.as_str())
            .filter(|h| known(h).is_some())
            .map(said)
            .or_else(|| runs_say(&|r| known(&r.hardware).map(said).unwrap_or_default())),
        plan: plan.map(|(file, p)| said(p.name.as_deref().unwrap_or(file))),
        plan_content_sha256: plan.and_then(|(_, p)| content_sha256(p)),
        runs_plan: plan
            .and_then(|(_, p)| whole_sha256(p))
            .and_then(|h| other_plans(&h, &runs)),
        plan_left_out: plan
            .and_then(|(_, p)| p.left_out.as_deref())
            .and_then(left_out_words),
        collected_from: runs.iter().filter_map(|r| r.started_at.clone()).min(),
        collected_to: runs.iter().filter_map(|r| r.finished_at.clone()).max(),
        // A file given twice, or a byte-identical copy, is one run (the verdicts count it once).
        runs: runs
            .iter()
            .enumerate()
            .filter(|(i, r)| !runs[..*i].contains(r))
            .count(),
        runs_left_out: 0,
    }
}

/// The candidate runs not of `artifact`: their ids and how many of the candidate runs they are.
fn other_artifacts(artifact: &str, candidates: &[&Run]) -> Option<String> {
    let others: Vec<&&Run> = candidates
        .iter()
        .filter(|r| r.artifact_id != artifact)
        .collect();
    let ids = agreed(
        others
            .iter()
            .map(|r| known(&r.artifact_id).map_or_else(|| NOT_RECORDED.to_string(), said)),
    )?;
    Some(format!(
        "{ids} ({} of {} candidate runs)",
        others.len(),
        candidates.len()
    ))
}

/// The one value every item has, or each different one listed (sorted), or `None` for none.
fn agreed(items: impl Iterator<Item = String>) -> Option<String> {
    let mut all: Vec<String> = items.filter(|s| !s.trim().is_empty()).collect();
    all.sort();
    all.dedup();
    (!all.is_empty()).then(|| all.join(", "))
}

/// The content sha256 of the whole plan `p` is, or was narrowed from: what its runs record.
pub(crate) fn whole_sha256(p: &Plan) -> Option<String> {
    p.left_out
        .as_ref()
        .and_then(|l| l.whole_content_sha256.clone())
        .or_else(|| content_sha256(p))
}

/// `left out when run: profiles balanced, throughput; candidate np1; the float baseline f16`.
fn left_out_words(l: &crate::schema::LeftOut) -> Option<String> {
    let list = |what: &str, names: &[String]| {
        (!names.is_empty()).then(|| {
            let said: Vec<String> = names.iter().map(|n| said(n)).collect();
            format!(
                "{what}{} {}",
                if names.len() == 1 { "" } else { "s" },
                said.join(", ")
            )
        })
    };
    let parts: Vec<String> = [
        list("profile", &l.profiles),
        list("candidate", &l.candidates),
        l.baseline
            .as_ref()
            .map(|b| format!("the float baseline {}", said(b))),
    ]
    .into_iter()
    .flatten()
    .collect();
    (!parts.is_empty()).then(|| format!("left out when run: {}", parts.join("; ")))
}

/// The runs that record a plan content other than `loaded`: how many, and which.
fn other_plans(loaded: &str, runs: &[&Run]) -> Option<String> {
    let runs: Vec<&&Run> = runs
        .iter()
        .enumerate()
        .filter(|(i, r)| !runs[..*i].contains(r))
        .map(|(_, r)| r)
        .collect();
    let others: Vec<&str> = runs
        .iter()
        .filter_map(|r| r.plan_content_sha256.as_deref())
        .filter(|h| *h != loaded)
        .collect();
    let hashes = agreed(others.iter().map(|h| h[..12.min(h.len())].to_string()))?;
    Some(format!(
        "{} of the {} runs were collected under another plan (content sha256 {hashes})",
        others.len(),
        runs.len()
    ))
}

/// sha256 of a plan's content: its canonical JSON (so a YAML, TOML or JSON copy of one plan
/// hash the same), lower-case hex — what a run records of the plan it was collected under.
pub fn content_sha256(p: &Plan) -> Option<String> {
    let bytes = serde_json::to_vec(p).ok()?;
    let digest = Sha256::digest(bytes);
    Some(digest.iter().map(|b| format!("{b:02x}")).collect())
}

impl Subject {
    /// Whether nothing at all is known of what is judged.
    pub fn is_empty(&self) -> bool {
        self.artifact.is_none() && self.plan.is_none() && self.runs == 0
    }

    /// A file name for a saved report of this subject, without its extension:
    /// `sloscope-<artifact>-<first collection date>` (`sloscope-report` when neither is known),
    /// every run of characters but ASCII letters, digits, `.` and `_` made one `-`, at most 80.
    pub fn file_stem(&self) -> String {
        let parts: Vec<&str> = [
            self.artifact.as_deref(),
            self.collected_from.as_deref().map(date),
        ]
        .into_iter()
        .flatten()
        .collect();
        if parts.is_empty() {
            return "sloscope-report".into();
        }
        let mut safe = String::new();
        for c in format!("sloscope-{}", parts.join("-")).chars() {
            let c = match c {
                'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '_' => c,
                _ => '-',
            };
            if !(c == '-' && safe.ends_with('-')) && safe.len() < 80 {
                safe.push(c);
            }
        }
        safe.trim_end_matches(['-', '.']).to_string()
    }

    /// The lines a reader sees, each `label: value`; values missing are said as not recorded.
    pub fn lines(&self) -> Vec<(&'static str, String)> {
        let or_not = |v: &Option<String>| v.clone().unwrap_or_else(|| "not recorded".into());
        let artifact = match (&self.artifact, &self.format) {
            (Some(a), Some(f)) => format!("{a} ({f})"),
            (a, _) => or_not(a),
        };
        let artifact = match &self.model {
            Some(m) => format!("{artifact}, made from {m}"),
            None => artifact,
        };
        let artifact = match &self.runs_artifact {
            Some(o) => format!("{artifact}, as the records say; the runs measured another: {o}"),
            None => artifact,
        };
        let plan = match (&self.plan, &self.plan_content_sha256) {
            (Some(p), Some(h)) => format!("{p} (content sha256 {})", &h[..12.min(h.len())]),
            (Some(p), None) => p.clone(),
            (None, _) => "none loaded".into(),
        };
        let plan = [&self.plan_left_out, &self.runs_plan]
            .into_iter()
            .flatten()
            .fold(plan, |p, o| format!("{p}; {o}"));
        let n = match self.runs_left_out {
            0 if self.runs == 1 => "1 run".to_string(),
            0 => format!("{} runs", self.runs),
            k => format!("{} runs, {k} of them left out", self.runs),
        };
        let when = match (&self.collected_from, &self.collected_to) {
            (Some(a), Some(b)) if date(a) == date(b) => {
                format!("{} {} to {} ({n})", date(a), clock(a), clock(b))
            }
            (Some(a), Some(b)) => {
                format!("{} {} to {} {} ({n})", date(a), clock(a), date(b), clock(b))
            }
            (Some(a), None) => format!("from {} {} ({n})", date(a), clock(a)),
            _ => format!("not recorded ({n})"),
        };
        vec![
            ("Artifact", artifact),
            ("Float baseline", or_not(&self.baseline)),
            ("Backend", or_not(&self.backend)),
            ("Hardware", or_not(&self.hardware)),
            ("Plan", plan),
            ("Collected", when),
        ]
    }
}

/// The date of an RFC 3339 time (what precedes its `T`), else the whole text.
fn date(t: &str) -> &str {
    t.split_once('T').map_or(t, |(d, _)| d)
}

/// The hours, minutes and zone of an RFC 3339 time (`18:52 UTC`, `18:52+02:00`), else nothing.
fn clock(t: &str) -> String {
    let Some((_, rest)) = t.split_once('T') else {
        return String::new();
    };
    let hm: String = rest.chars().take(5).collect();
    let zone = rest.find(['Z', 'z', '+', '-']).map_or("", |i| &rest[i..]);
    match zone {
        "Z" | "z" => format!("{hm} UTC"),
        z => format!("{hm}{z}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_reports_name_says_what_it_holds_and_is_a_safe_file_name() {
        let mut s = Subject {
            artifact: Some("qwen2.5-0.5b/Q4_K_M: \"x\"".into()),
            collected_from: Some("2026-12-06T18:52:00Z".into()),
            ..Subject::default()
        };
        assert_eq!(s.file_stem(), "sloscope-qwen2.5-0.5b-Q4_K_M-x-2026-12-06");
        s.artifact = Some("../../etc/passwd\u{202e}".repeat(20));
        let stem = s.file_stem();
        assert!(
            stem.len() <= 80 && !stem.contains('/') && stem.is_ascii(),
            "{stem}"
        );
        assert_eq!(Subject::default().file_stem(), "sloscope-report");
    }
}
