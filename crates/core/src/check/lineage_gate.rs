//! The quality gate's part of the lineage: a gate measured by `sloscope gate` must hold what it
//! claims and name the very artifacts the deployment and float-baseline records name (id and
//! sha256); a gate without a measurement still works, and is warned as asserted.

use crate::base::fmt::format_number;
use crate::base::problem::{Problem, ProblemCode};
use crate::check::gate::{breaches, contradictions, decide, quality_misstated, report, GateReport};
use crate::schema::{
    Decision, Deployment, FloatBaseline, GateArtifact, GateDecision, GateEvidence, GateThresholds,
    PlanGateLimits, QualityGate,
};

/// A gate record of another artifact than the deployed one (a candidate artifact the team gated
/// and did not deploy — a rejected Q4_0 beside the deployed Q8_0): shown, never hidden, never
/// blocking.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OtherGate {
    /// Its file.
    pub file: String,
    /// The artifact it gated.
    pub artifact_id: String,
    /// Its weight format.
    pub format: Option<String>,
    /// The record's decision.
    pub decision: Decision,
    /// Its measurement, recomputed, when it carries one and it holds.
    pub measured: Option<GateReport>,
    /// What does not hold in it (not blocking: it is not the deployed artifact's gate).
    pub problems: Vec<String>,
}

/// A record with its file name.
pub type Named<'a, T> = (&'a str, &'a T);

/// The gate records split into those of the deployed artifact (the deployment's
/// `gate_artifact_id`) and those of other artifacts. When no deployment says which (or the
/// deployments disagree), every record stays a candidate for the one gate (and the lineage
/// check reports what is wrong); when none is of the deployed artifact, its gate is missing.
pub fn split<'a>(
    gates: &[Named<'a, QualityGate>],
    deployments: &[Named<'a, Deployment>],
) -> (Vec<Named<'a, QualityGate>>, Vec<Named<'a, QualityGate>>) {
    let Some((_, d)) = deployments.first() else {
        return (gates.to_vec(), Vec::new());
    };
    if deployments
        .iter()
        .any(|(_, o)| o.gate_artifact_id != d.gate_artifact_id)
    {
        return (gates.to_vec(), Vec::new());
    }
    let (ours, others): (Vec<_>, Vec<_>) = gates
        .iter()
        .partition(|(_, g)| g.artifact.artifact_id == d.gate_artifact_id);
    // No gate of the deployed artifact: the others stay others (a Q4_0's gate never stands in
    // for the deployed Q8_0's), and the deployed artifact's gate is missing.
    (ours, others)
}

/// Another artifact's gate as shown: checked against itself and the float baseline.
pub fn other(file: &str, g: &QualityGate, base: Option<&FloatBaseline>) -> OtherGate {
    let c = check(g, base, None, None);
    OtherGate {
        file: file.to_string(),
        artifact_id: g.artifact.artifact_id.clone(),
        format: g.artifact.format.clone(),
        decision: g.decision,
        measured: c.report,
        problems: c.issues.into_iter().map(|p| p.message).collect(),
    }
}

/// Issues and warnings about the gate, and what a reader is shown of its evidence.
pub struct GateCheck {
    /// Blocking.
    pub issues: Vec<Problem>,
    /// Not blocking.
    pub warnings: Vec<Problem>,
    /// The evidence, recomputed, when there is some.
    pub report: Option<GateReport>,
}

/// Checks the gate record against itself, the other records and the plan's limits.
pub fn check(
    g: &QualityGate,
    base: Option<&FloatBaseline>,
    dep: Option<&Deployment>,
    plan: Option<&PlanGateLimits>,
) -> GateCheck {
    let mut c = GateCheck {
        issues: Vec::new(),
        warnings: Vec::new(),
        report: None,
    };
    let Some(e) = g.evidence.as_deref() else {
        let what = if g.quality.is_empty() {
            "with no quality figures"
        } else {
            "with quality figures typed into the record, not measured by `sloscope gate`"
        };
        c.warnings.push(Problem::new(
            ProblemCode::GateWithoutEvidence,
            "quality",
            format!(
                "the quality gate says {:?} {what}: the decision is asserted, not evaluated",
                g.decision.as_str()
            ),
        ));
        return c;
    };
    let contradicted = contradictions(e);
    for m in &contradicted {
        c.issues.push(Problem::new(
            ProblemCode::GateEvidenceContradicted,
            "evidence",
            m.clone(),
        ));
    }
    if g.decision == Decision::Accept && e.decision == GateDecision::Reject {
        c.issues.push(Problem::new(
            ProblemCode::GateEvidenceContradicted,
            "decision",
            "the quality gate says \"accept\" but its own measurement rejects the artifact",
        ));
    }
    served_as_deployed(e, dep, plan, &mut c);
    let quant_sha = dep
        .and_then(|d| d.artifact.artifact_sha256.as_deref())
        .or(g.artifact.artifact_sha256.as_deref());
    let quant_id = dep.map_or(g.artifact.artifact_id.as_str(), |d| {
        d.artifact.artifact_id.as_str()
    });
    same("quantized", &e.quantized, quant_id, quant_sha, &mut c);
    if let Some(b) = base {
        let sha = b.artifact.artifact_sha256.as_deref();
        same("float", &e.float, &b.artifact.artifact_id, sha, &mut c);
    }
    if contradicted.is_empty() {
        let mut r = report(e);
        for (name, stated, real) in quality_misstated(&g.quality, &r.figures) {
            c.issues.push(Problem::new(
                ProblemCode::GateEvidenceContradicted,
                format!("quality.{name}"),
                format!(
                    "the record states {name} {}, but its evidence gives {}",
                    format_number(stated),
                    real.map_or_else(|| "none".into(), format_number)
                ),
            ));
        }
        if let Some(l) = plan {
            held_to_plan(l, &mut r, g.decision, &mut c);
        }
        if matches!(g.decision, Decision::Accept | Decision::Tune)
            && r.decision == GateDecision::NotEnoughEvidence
        {
            c.issues.push(Problem::new(
                ProblemCode::GateNotEnoughEvidence,
                "evidence",
                format!(
                    "the quality gate's measurement is not enough evidence to accept the \
                     artifact on: {}",
                    r.insufficient.join("; ")
                ),
            ));
        }
        c.report = Some(r);
    }
    c
}

/// The gate's evidence judged by the stricter of the plan's limits and the record's own: a record
/// decided against looser limits than the plan's is said, and blocks where the plan's reject it.
fn held_to_plan(l: &PlanGateLimits, r: &mut GateReport, stated: Decision, c: &mut GateCheck) {
    let own = r.thresholds;
    let held = GateThresholds {
        kld_mean_max: l
            .kld_mean_max
            .map_or(own.kld_mean_max, |p| p.min(own.kld_mean_max)),
        top1_min: l.top1_min.map_or(own.top1_min, |p| p.max(own.top1_min)),
        ppl_ratio_max: l
            .ppl_ratio_max
            .map_or(own.ppl_ratio_max, |p| p.min(own.ppl_ratio_max)),
    };
    if held == own {
        return;
    }
    let looser: Vec<String> = [
        ("KL divergence mean ≤", own.kld_mean_max, held.kld_mean_max),
        ("top-1 agreement ≥", own.top1_min, held.top1_min),
        ("perplexity ratio ≤", own.ppl_ratio_max, held.ppl_ratio_max),
    ]
    .iter()
    .filter(|(_, o, h)| o != h)
    .map(|(what, o, h)| format!("{what} {o} where the plan says {h}"))
    .collect();
    r.thresholds = held;
    r.breaches = breaches(&r.figures, &held);
    r.decision = decide(&r.figures, r.intervals.as_ref(), &held, r.partial.is_some());
    r.insufficient = crate::check::gate::insufficient(&r.figures, r.intervals.as_ref(), &held);
    let looser = looser.join(", ");
    if stated == Decision::Accept && r.decision == GateDecision::Reject {
        c.issues.push(Problem::new(
            ProblemCode::GateEvidenceContradicted,
            "evidence.thresholds",
            format!(
                "the quality gate was decided against looser limits than the plan's ({looser}); \
                 by the plan's its own figures reject the artifact: {}",
                r.breaches.join("; ")
            ),
        ));
    } else {
        c.warnings.push(Problem::new(
            ProblemCode::GateEvidenceContradicted,
            "evidence.thresholds",
            format!(
                "the quality gate's limits are looser than the plan's ({looser}); its figures \
                 are shown against the plan's"
            ),
        ));
    }
}

/// What a gate measured through is what the lineage vouches for: the deployment's backend and
/// version, and the evaluation set the plan names (by file name: the plan holds a path).
fn served_as_deployed(
    e: &GateEvidence,
    dep: Option<&Deployment>,
    plan: Option<&PlanGateLimits>,
    c: &mut GateCheck,
) {
    if let Some(d) = dep {
        let a = &d.artifact;
        if !e.backend.trim().eq_ignore_ascii_case(a.backend.trim()) {
            c.issues.push(Problem::new(
                ProblemCode::GateArtifactMismatch,
                "evidence.backend",
                format!(
                    "the gate was measured on backend {:?}, the deployment record serves on {:?}",
                    e.backend, a.backend
                ),
            ));
        }
        if !crate::check::run::record::same_version(&e.backend_version, &a.backend_version) {
            c.issues.push(Problem::new(
                ProblemCode::GateArtifactMismatch,
                "evidence.backend_version",
                format!(
                    "the gate was measured on backend version {:?}, the deployment record serves \
                     on {:?}",
                    e.backend_version, a.backend_version
                ),
            ));
        }
    }
    let planned = plan
        .and_then(|p| p.eval.as_deref())
        .map(|p| p.rsplit(['/', '\\']).next().unwrap_or(p));
    if let Some(name) = planned.filter(|n| *n != e.eval_set.name) {
        c.issues.push(Problem::new(
            ProblemCode::GateArtifactMismatch,
            "evidence.eval_set.name",
            format!(
                "the gate scored the evaluation set {:?}, the plan names {name:?}",
                e.eval_set.name
            ),
        ));
    }
    if let Some(k) = plan.and_then(|p| p.top_k).filter(|&k| e.top_k < k) {
        c.issues.push(Problem::new(
            ProblemCode::GateArtifactMismatch,
            "evidence.top_k",
            format!(
                "the gate listed the top {} tokens per position, the plan asks for {k}: fewer \
                 listed tokens bound less of the KL divergence",
                e.top_k
            ),
        ));
    }
}

/// The gate's artifact is the record's: the same id, and the same sha256 where both say one.
fn same(side: &str, a: &GateArtifact, id: &str, sha: Option<&str>, c: &mut GateCheck) {
    let record = if side == "float" {
        "float-baseline"
    } else {
        "deployment"
    };
    if a.artifact_id != id {
        c.issues.push(Problem::new(
            ProblemCode::GateArtifactMismatch,
            format!("evidence.{side}.artifact_id"),
            format!(
                "the gate measured {side} artifact {:?}, the {record} record names {id:?}",
                a.artifact_id
            ),
        ));
    }
    match (a.artifact_sha256.as_deref(), sha) {
        (Some(x), Some(y)) if !x.eq_ignore_ascii_case(y) => c.issues.push(Problem::new(
            ProblemCode::GateArtifactMismatch,
            format!("evidence.{side}.artifact_sha256"),
            format!("the gate measured a {side} artifact with sha256 {x}, the {record} record names {y}"),
        )),
        (None, _) | (_, None) => c.warnings.push(Problem::new(
            ProblemCode::NotRecorded,
            format!("evidence.{side}.artifact_sha256"),
            format!("the {side} artifact's sha256 is missing from the gate's evidence or the {record} record: the gate is tied to it by id only"),
        )),
        _ => {}
    }
}
