//! A profile's decision: what stops a verdict before any candidate is weighed (two plans, a
//! profile the plan does not define, a gate record that cannot be believed, missing or broken
//! lineage), then the verdict over the comparable candidates.

use crate::analyse::compare::Ctx;
use crate::analyse::report::ProfileReport;
use crate::analyse::verdict::{decide, Contender};
use crate::base::metric::Metric;
use crate::base::problem::ProblemCode;
use crate::check::contract::Profile;

/// The measured cells decided, then held as provisional (incomplete) for `why`, followed by
/// the lineage problems `said` keeps.
fn hold_on_lineage(
    ctx: &Ctx<'_>,
    profile: Option<&Profile>,
    report: &mut ProfileReport,
    (why, said): (&str, &dyn Fn(ProblemCode) -> bool),
) {
    if let Some(profile) = profile {
        decide_candidates(profile, report);
    }
    let what: Vec<&str> = ctx
        .lineage
        .issues
        .iter()
        .filter(|p| said(p.code))
        .map(|p| p.message.as_str())
        .collect();
    crate::analyse::complete::hold_for(report, &format!("{why}: {}", what.join("; ")));
}

/// The profile's decision: no verdict where one cannot be given (two plans, an undecidable or
/// unbelievable gate, missing or broken lineage, an invalid profile), else the verdict over
/// the comparable candidates.
pub(super) fn decide_profile(ctx: &Ctx<'_>, profile: Option<&Profile>, report: &mut ProfileReport) {
    if let Some(why) = &ctx.plan_conflict {
        cannot_judge(report, why);
        return;
    }
    if !ctx.lineage.ready && gate_unsure(ctx.lineage) {
        report.decision = crate::analyse::verdict::ProfileDecision::NotEnoughData;
        report.reason = format!(
            "the quality gate cannot be decided from its measurement: {}",
            ctx.lineage
                .issues
                .iter()
                .map(|p| p.message.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        );
        return;
    }
    if !ctx.lineage.ready && gate_unbelievable(ctx.lineage) {
        let said = |c: ProblemCode| {
            matches!(
                c,
                ProblemCode::GateEvidenceContradicted | ProblemCode::GateArtifactMismatch
            )
        };
        let why = "the quality gate record cannot be believed";
        hold_on_lineage(ctx, profile, report, (why, &said));
        return;
    }
    if !ctx.lineage.ready && lineage_missing(ctx.lineage) {
        let why = "the lineage is not complete";
        hold_on_lineage(ctx, profile, report, (why, &|_| true));
        return;
    }
    if !ctx.lineage.ready {
        let first = ctx
            .lineage
            .issues
            .first()
            .map(|p| p.message.clone())
            .unwrap_or_default();
        let more = ctx.lineage.issues.len().saturating_sub(1);
        // The records' own decision is a judgement of the artifact, not a broken record.
        let judged = ctx.lineage.issues.iter().all(|p| p.field == "decision");
        report.reason = if judged {
            format!("the artifact is not accepted by its own records: {first}")
        } else if more > 0 {
            format!("lineage is broken: {first} (and {more} more)")
        } else {
            format!("lineage is broken: {first}")
        };
        return;
    }
    let Some(profile) = profile else {
        let why = format!(
            "the profile definition is invalid: {}",
            report
                .contract_issues
                .iter()
                .map(|p| p.message.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        );
        cannot_judge(report, &why);
        return;
    };
    decide_candidates(profile, report);
}

/// No verdict can be given (two plans, or a profile the plan does not define well enough to
/// judge by): `incomplete` with why, never a reject of the runs — the runs were not judged.
fn cannot_judge(report: &mut ProfileReport, why: &str) {
    report.decision = crate::analyse::verdict::ProfileDecision::Incomplete;
    report.reason = format!("incomplete: {why}");
    for c in &mut report.candidates {
        c.chosen = false;
    }
}

/// The seed's verdict over the profile's candidates.
fn decide_candidates(profile: &Profile, report: &mut ProfileReport) {
    let lookups: Vec<Box<dyn Fn(Metric) -> Option<f64> + '_>> = report
        .candidates
        .iter()
        .map(|c| Box::new(move |m: Metric| c.metric(m)) as Box<dyn Fn(Metric) -> Option<f64>>)
        .collect();
    let contenders: Vec<Contender<'_>> = report
        .candidates
        .iter()
        .zip(&lookups)
        .map(|(c, f)| Contender {
            name: &c.name,
            evidence: c.evidence_level,
            value: f.as_ref(),
            checks: &c.slo_checks,
            primary_interval: c.primary_interval,
            recomputed: c.source == crate::analyse::report::SummarySource::Recomputed,
            contradicted: gross_disagreement(&c.disagreements),
            knob: report.knob.as_deref().zip(
                c.value
                    .as_ref()
                    .and_then(|v| v.to_string().parse::<f64>().ok()),
            ),
        })
        .collect();
    let v = decide(profile, &contenders);
    drop(contenders);
    drop(lookups);
    report.decision = v.decision;
    report.recommended_name = v.recommended.clone();
    report.reason = v.reason;
    report.binding_slo = v.binding;
    report.confidence = v.confidence;
    for c in &mut report.candidates {
        c.chosen = v.recommended.as_deref() == Some(c.name.as_str());
    }
}

/// Whether the lineage is blocked only by what is absent — a record not loaded (with, at most,
/// a gate that is not enough evidence): then the profile is incomplete, not rejected; nothing
/// measured said no.
pub(super) fn lineage_missing(l: &crate::check::lineage::LineageReport) -> bool {
    l.issues
        .iter()
        .any(|p| p.code == ProblemCode::MissingRecord)
        && l.issues.iter().all(|p| {
            matches!(
                p.code,
                ProblemCode::MissingRecord | ProblemCode::GateNotEnoughEvidence
            )
        })
}

/// Whether the lineage is blocked by a gate record that contradicts its own per-position data
/// or measured other artifacts than the records name (and nothing that would reject on its
/// own): a record that cannot be believed is no
/// judgement of the artifact either way, so no verdict is given (incomplete), never a reject.
fn gate_unbelievable(l: &crate::check::lineage::LineageReport) -> bool {
    let unbelievable = |c: ProblemCode| {
        matches!(
            c,
            ProblemCode::GateEvidenceContradicted | ProblemCode::GateArtifactMismatch
        )
    };
    l.issues.iter().any(|p| unbelievable(p.code))
        && l.issues.iter().all(|p| {
            unbelievable(p.code)
                || matches!(
                    p.code,
                    ProblemCode::GateNotEnoughEvidence | ProblemCode::MissingRecord
                )
        })
}

/// Whether the lineage is blocked only by a measured gate that is not enough evidence to accept
/// on: then no verdict is given, and the reason is not enough data rather than a rejection.
fn gate_unsure(l: &crate::check::lineage::LineageReport) -> bool {
    !l.issues.is_empty()
        && l.issues
            .iter()
            .all(|p| p.code == ProblemCode::GateNotEnoughEvidence)
}

/// The first figure a file states that its own requests put off by more than a factor of two,
/// worded; rounding, percentile rules and definitions that differ stay well inside that.
fn gross_disagreement(d: &[crate::analyse::report::Disagreement]) -> Option<String> {
    d.iter()
        .find(|d| {
            let (a, b) = (d.reported.abs(), d.recomputed.abs());
            a.max(b) > 2.0 * a.min(b) && a.max(b) > 0.0
        })
        .map(|d| {
            format!(
                "it states {} = {} where its requests give {}",
                d.metric,
                crate::base::fmt::format_number(d.reported),
                crate::base::fmt::format_number(d.recomputed)
            )
        })
}

#[cfg(test)]
mod tests {
    use super::gross_disagreement;
    use crate::analyse::report::Disagreement;
    use crate::base::metric::Metric;

    #[test]
    fn only_a_figure_off_by_more_than_twice_contradicts_its_file() {
        let d = |reported: f64, recomputed: f64| Disagreement {
            metric: Metric::parse("tpot_p95_ms").unwrap(),
            reported,
            recomputed,
        };
        assert_eq!(gross_disagreement(&[d(100.0, 120.0), d(1.0, 1.9)]), None);
        let why = gross_disagreement(&[d(100.0, 120.0), d(122.1, 0.1221)]).unwrap();
        assert!(
            why.contains("tpot_p95_ms") && why.contains("122.1"),
            "{why}"
        );
        assert!(gross_disagreement(&[d(0.0, 5.0)]).is_some());
    }
}
