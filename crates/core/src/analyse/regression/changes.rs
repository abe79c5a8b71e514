//! What a reviewer reads first: what differs between the collections besides the measurements
//! (lineage records, run headers, server commands), every profile's verdict before and after
//! with its binding SLO's margin, and capacity searches before and after.

use std::collections::BTreeSet;

use crate::analyse::report::{Analysis, ProfileReport};
use crate::read::json::{Document, LoadedFile};
use crate::schema::Run;

use super::types::{CapacityChange, Change, Margin, SustainedChange, VerdictChange};

/// One side: its files and its analysis.
pub(crate) struct Side<'a> {
    pub(crate) files: Vec<&'a LoadedFile>,
    pub(crate) analysis: &'a Analysis,
}

impl Side<'_> {
    /// Every run the side holds (imported ones included).
    pub(crate) fn runs(&self) -> Vec<&Run> {
        let mut out = Vec::new();
        for f in &self.files {
            match &f.doc {
                Document::Run(r) => out.push(&**r),
                Document::Imported(runs) => out.extend(runs.iter().map(|(_, r)| r)),
                _ => {}
            }
        }
        out
    }
}

/// Each named property of a side, with its distinct values.
fn properties(side: &Side<'_>) -> Vec<(String, BTreeSet<String>)> {
    let mut out: Vec<(String, BTreeSet<String>)> = Vec::new();
    let mut add = |what: &str, v: String| match out.iter_mut().find(|(w, _)| w == what) {
        Some((_, set)) => {
            set.insert(v);
        }
        None => out.push((what.to_string(), BTreeSet::from([v]))),
    };
    for f in &side.analysis.lineage.fields {
        if let Some(v) = f
            .deployment
            .as_ref()
            .or(f.gate.as_ref())
            .or(f.baseline.as_ref())
        {
            add(&format!("lineage {}", f.field), v.clone());
        }
    }
    for p in &side.analysis.profiles {
        profile_properties(p, &mut add);
    }
    for r in side.runs() {
        add("run artifact_id", r.artifact_id.clone());
        add("run backend", r.backend.clone());
        add("run backend_version", r.backend_version.clone());
        add("run hardware", r.hardware.clone());
        add("collector", format!("{} {}", r.tool.name, r.tool.version));
        add("evidence level", r.evidence_level.as_str().to_string());
        if let Some(i) = &r.import {
            add(
                "imported from",
                format!("{} {}", i.tool, i.tool_version.as_deref().unwrap_or("")),
            );
        }
        if let Some(s) = &r.server {
            add("server command", masked_command(r, &s.command));
        }
        if let Some(m) = r.endpoint.as_ref().and_then(|e| e.model.clone()) {
            add("model sent", m);
        }
    }
    out
}

/// What defines a profile: its SLOs, primary metric, workload, knob and candidates' values.
fn profile_properties(p: &ProfileReport, add: &mut impl FnMut(&str, String)) {
    let name = &p.profile;
    let slo: Vec<String> = p
        .slo
        .iter()
        .map(|s| {
            let op = match s.direction {
                crate::base::metric::Direction::LowerIsBetter => "≤",
                crate::base::metric::Direction::HigherIsBetter => "≥",
            };
            format!("{} {op} {}", s.metric, s.limit)
        })
        .collect();
    add(&format!("{name} SLO"), slo.join(", "));
    if let Some(m) = &p.primary_metric {
        add(&format!("{name} primary metric"), m.clone());
    }
    if let Some(w) = &p.workload {
        add(
            &format!("{name} workload"),
            serde_json::to_string(w).unwrap_or_default(),
        );
    }
    if let Some(k) = &p.knob {
        add(&format!("{name} knob"), k.clone());
    }
    for c in &p.candidates {
        add(&format!("{name} candidates"), candidate_label(c));
    }
}

/// A candidate with its knob value: `np4 (parallel = 4)`.
pub(crate) fn candidate_label(c: &crate::analyse::report::CandidateReport) -> String {
    match (&c.knob, &c.value) {
        (Some(k), Some(v)) => format!("{} ({k} = {v})", c.name),
        _ => c.name.clone(),
    }
}

/// A server command with its port (which changes at every launch) masked.
fn masked_command(run: &Run, words: &[String]) -> String {
    let port = run
        .endpoint
        .as_ref()
        .and_then(|e| e.url.rsplit(':').next())
        .map(|p| p.trim_end_matches('/').to_string());
    let mut out = Vec::with_capacity(words.len());
    let mut after_port_flag = false;
    for w in words {
        let masked = after_port_flag || port.as_deref() == Some(w.as_str());
        after_port_flag = w == "--port";
        out.push(if masked {
            "{port}".to_string()
        } else {
            w.clone()
        });
    }
    out.join(" ")
}

/// Every property whose values differ between the sides.
pub(crate) fn changed(before: &Side<'_>, after: &Side<'_>) -> Vec<Change> {
    let (b, a) = (properties(before), properties(after));
    let mut whats: Vec<&String> = b.iter().chain(&a).map(|(w, _)| w).collect();
    whats.dedup();
    let mut seen = BTreeSet::new();
    let empty = BTreeSet::new();
    let mut out = Vec::new();
    for w in whats {
        if !seen.insert(w.clone()) {
            continue;
        }
        let get = |side: &[(String, BTreeSet<String>)]| {
            side.iter()
                .find(|(x, _)| x == w)
                .map_or(&empty, |(_, s)| s)
                .clone()
        };
        let (vb, va) = (get(&b), get(&a));
        if vb != va && !only_absent(w, (before, &vb), (after, &va)) {
            out.push(Change {
                what: w.clone(),
                before: vb.into_iter().collect(),
                after: va.into_iter().collect(),
            });
        }
    }
    out
}

/// Whether a profile's candidates differ only by cells one side did not measure (a run missing
/// or left out there): an absence, said as such elsewhere, not a change of the plan's
/// candidates. Each side's candidates by name, with its missing candidate cells added.
fn only_absent(
    what: &str,
    (before, vb): (&Side<'_>, &BTreeSet<String>),
    (after, va): (&Side<'_>, &BTreeSet<String>),
) -> bool {
    let Some(profile) = what.strip_suffix(" candidates") else {
        return false;
    };
    let named = |side: &Side<'_>, labels: &BTreeSet<String>| -> BTreeSet<String> {
        let mut names: BTreeSet<String> = labels
            .iter()
            .map(|l| l.split(" (").next().unwrap_or(l).to_string())
            .collect();
        let missing = side
            .analysis
            .profiles
            .iter()
            .filter(|p| p.profile == profile)
            .flat_map(|p| &p.missing)
            .filter(|m| m.kind == crate::analyse::report::CellKind::Candidate)
            .map(|m| m.name.clone());
        names.extend(missing);
        names
    };
    named(before, vb) == named(after, va)
}

/// The binding SLO of a profile: the chosen candidate's check with the least margin relative
/// to its limit, else the SLO the closest candidate missed.
fn margin(p: &ProfileReport) -> Option<Margin> {
    let ratio = |m: Option<f64>, limit: f64| m.filter(|_| limit != 0.0).map(|m| m / limit.abs());
    if let Some(c) = p.candidates.iter().find(|c| c.chosen) {
        return c
            .slo_checks
            .iter()
            .min_by(|x, y| {
                // A limit of 0 (no failures) has no relative margin: it binds only when missed.
                let key = |s: &&crate::analyse::verdict::SloCheck| match ratio(s.margin, s.limit) {
                    Some(r) => r,
                    None if s.pass => f64::INFINITY,
                    None => f64::NEG_INFINITY,
                };
                key(x).total_cmp(&key(y))
            })
            .map(|s| Margin {
                metric: s.metric,
                limit: s.limit,
                value: s.value,
                margin_ratio: ratio(s.margin, s.limit),
            });
    }
    p.binding_slo.as_ref().map(|b| Margin {
        metric: b.metric,
        limit: b.limit,
        value: b.value,
        margin_ratio: b.missed_by_ratio.map(|r| -r),
    })
}

fn profile_names(before: &Analysis, after: &Analysis) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for p in before.profiles.iter().chain(&after.profiles) {
        if !names.contains(&p.profile) {
            names.push(p.profile.clone());
        }
    }
    names
}

fn find<'a>(a: &'a Analysis, name: &str) -> Option<&'a ProfileReport> {
    a.profiles.iter().find(|p| p.profile == name)
}

fn chosen_of(p: Option<&ProfileReport>) -> Option<&crate::analyse::report::CandidateReport> {
    p.and_then(|p| p.candidates.iter().find(|c| c.chosen))
}

/// Every profile's verdict before and after.
pub(crate) fn verdicts(before: &Analysis, after: &Analysis) -> Vec<VerdictChange> {
    profile_names(before, after)
        .into_iter()
        .map(|name| {
            let (b, a) = (find(before, &name), find(after, &name));
            let decision =
                |p: Option<&ProfileReport>| p.filter(|p| !p.summaries_only).map(|p| p.decision);
            let chosen = chosen_of;
            let rec = |p: Option<&ProfileReport>| chosen(p).map(candidate_label);
            // The configuration chosen, by its knob value (a renamed candidate is the same one).
            let config = |p: Option<&ProfileReport>| {
                chosen(p).map(|c| c.value.as_ref().map_or(c.name.clone(), |v| format!("={v}")))
            };
            // A side whose profile is incomplete (a planned run missing or left out there) gave
            // no verdict: the difference is an absence, not a change of verdict.
            let incomplete = |p: Option<&ProfileReport>| {
                decision(p) == Some(crate::analyse::verdict::ProfileDecision::Incomplete)
            };
            let absent = match (incomplete(b), incomplete(a)) {
                (false, true) => Some(crate::analyse::regression::types::WhichSide::After),
                (true, false) => Some(crate::analyse::regression::types::WhichSide::Before),
                _ => None,
            };
            VerdictChange {
                flipped: absent.is_none() && (decision(b) != decision(a) || config(b) != config(a)),
                incomplete_side: absent,
                before: decision(b),
                after: decision(a),
                recommended_before: rec(b),
                recommended_after: rec(a),
                binding_before: b.and_then(margin),
                binding_after: a.and_then(margin),
                profile: name,
            }
        })
        .collect()
}

/// Every capacity search before and after.
pub(crate) fn capacity(before: &Analysis, after: &Analysis) -> Vec<CapacityChange> {
    profile_names(before, after)
        .into_iter()
        .filter_map(|name| {
            let cap = |a: &Analysis| find(a, &name).and_then(|p| p.capacity.clone());
            let (b, a) = (cap(before), cap(after));
            if b.is_none() && a.is_none() {
                return None;
            }
            Some(CapacityChange {
                candidates: sustained(b.as_ref(), a.as_ref()),
                before: b.as_ref().map(|c| c.statement.clone()),
                after: a.as_ref().map(|c| c.statement.clone()),
                best_before: b.and_then(|c| c.best),
                best_after: a.and_then(|c| c.best),
                profile: name,
            })
        })
        .collect()
}

/// Per candidate searched on both sides: the load sustained before and after, and whether it
/// fell by more than the searches can resolve.
fn sustained(
    b: Option<&crate::analyse::capacity::types::CapacityReport>,
    a: Option<&crate::analyse::capacity::types::CapacityReport>,
) -> Vec<SustainedChange> {
    let (Some(b), Some(a)) = (b, a) else {
        return Vec::new();
    };
    let tolerance = b.tolerance.max(a.tolerance);
    b.candidates
        .iter()
        .filter_map(|cb| {
            let ca = a.candidates.iter().find(|x| x.name == cb.name)?;
            let worse = match (cb.last_pass, ca.last_pass) {
                (Some(x), Some(y)) => y < x - tolerance,
                (Some(_), None) => true,
                _ => false,
            };
            Some(SustainedChange {
                candidate: cb.name.clone(),
                before: cb.last_pass,
                after: ca.last_pass,
                said: [cb.text.clone(), ca.text.clone()],
                worse,
            })
        })
        .collect()
}
