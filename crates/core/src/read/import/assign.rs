//! Another tool's runs given a place in a plan, as `sloscope import --plan --profile
//! --candidate` writes them: the plan's definitions (the profile, its workload id and spec, the
//! knob and the candidate's value) and the deployment record's lineage (artifact, backend and
//! version, hardware), the measurement and the tool's own statement of its workload kept, so
//! the analysis checks that workload against the profile's. Of a file that holds several
//! benchmarks (a GuideLLM sweep), only those whose stated workload is the profile's are kept;
//! the others are named. The page assigns a dropped file this way; the result is a run the
//! analysis reads like any other.

use crate::schema::{CandidateRef, Deployment, Plan, Run};

/// What an assignment made.
#[derive(Debug, Clone, PartialEq)]
pub struct Assigned {
    /// The runs, each under the name it is reported under.
    pub runs: Vec<(String, Run)>,
    /// Benchmarks left out, with why.
    pub skipped: Vec<String>,
}

/// A name the file states (not the importer's `unknown` placeholder).
fn known(s: &str) -> bool {
    let t = s.trim();
    !t.is_empty() && !t.eq_ignore_ascii_case("unknown")
}

/// Assigns `runs` (one file's, as read without a plan) to `profile` and `candidate` of `plan`.
/// The error names what the plan lacks.
pub fn assign(
    file: &str,
    runs: &[(String, Run)],
    plan: &Plan,
    deployment: Option<&Deployment>,
    (profile, candidate): (&str, &str),
) -> Result<Assigned, String> {
    let spec = plan
        .profiles
        .iter()
        .find(|s| s.name.as_deref() == Some(profile))
        .ok_or_else(|| {
            let names: Vec<&str> = plan
                .profiles
                .iter()
                .filter_map(|s| s.name.as_deref())
                .collect();
            format!(
                "{profile:?} is not a profile of the plan (its profiles: {})",
                names.join(", ")
            )
        })?;
    let cand = plan
        .candidates
        .iter()
        .find(|c| c.name == candidate)
        .ok_or_else(|| {
            let names: Vec<&str> = plan.candidates.iter().map(|c| c.name.as_str()).collect();
            format!(
                "{candidate:?} is not a candidate of the plan (its candidates: {})",
                names.join(", ")
            )
        })?;
    let want = spec.workload.as_ref();
    let mut out = Assigned {
        runs: Vec::new(),
        skipped: Vec::new(),
    };
    for (i, (name, run)) in runs.iter().enumerate() {
        if runs.len() > 1 {
            let stated = run.import.as_ref().map(|s| &s.workload);
            if let (Some(w), Some(s)) = (want, stated) {
                let d = super::workload_diffs(w, s);
                if !d.is_empty() {
                    out.skipped.push(format!(
                        "{file}: benchmark {i} ran another workload: {}",
                        d.join(", ")
                    ));
                    continue;
                }
            }
        }
        let mut r = run.clone();
        r.notes.retain(|n| !n.contains(super::UNPLANNED));
        r.profile = profile.into();
        r.workload_id = want
            .and_then(|w| w.id.clone())
            .unwrap_or_else(|| profile.to_string());
        r.profile_spec = Some(spec.clone());
        r.candidate = CandidateRef {
            name: cand.name.clone(),
            knob: Some(plan.knob.clone()),
            value: Some(cand.value.clone()),
        };
        if let Some(d) = deployment {
            let a = &d.artifact;
            if let Some(i) = r.import.as_mut().filter(|_| known(&run.artifact_id)) {
                i.stated_model
                    .get_or_insert_with(|| run.artifact_id.clone());
            }
            r.artifact_id = a.artifact_id.clone();
            r.backend = a.backend.clone();
            r.backend_version = a.backend_version.clone();
            r.hardware = a.hardware.clone();
        }
        out.runs.push((name.clone(), r));
    }
    Ok(out)
}
