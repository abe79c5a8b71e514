//! The artifact lineage check, stricter than the seed's: gate ↔ float baseline ↔ deployment
//! ↔ runs. Every problem is listed, not only the first; a broken lineage stops the comparison.
//!
//! Rules:
//! - exactly one record of each kind; gate and deployment decided `accept`;
//! - gate, deployment and every candidate run name the same artifact, and the deployment's
//!   `gate_artifact_id` is the gate's artifact; the baseline is a different (float) artifact;
//! - backend, backend_version, hardware, model, revision and tokenizer (id, sha256) agree
//!   across gate, baseline and deployment; format and artifact sha256 agree between gate and
//!   deployment, and the baseline's format is a float format;
//! - an optional field stated by some records but not others is a problem; one stated by none
//!   is a warning (it cannot be checked);
//! - every run is on the deployment's backend, backend_version and hardware.

use serde::{Deserialize, Serialize};

use crate::base::problem::{Problem, ProblemCode};

use crate::schema::{
    ArtifactIdentity, Decision, Deployment, FloatBaseline, PlanGateLimits, QualityGate, Run,
};

/// Comparison state of one lineage field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum FieldStatus {
    /// Equal wherever it must be.
    Match,
    /// Differs, or stated by some records and not others.
    Mismatch,
    /// Stated by no record.
    NotRecorded,
    /// Differs as it should (the float baseline's own artifact and format).
    ExpectedDifference,
}

/// One row of the lineage table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LineageField {
    /// Field name.
    pub field: String,
    /// Value in the quality-gate record.
    pub gate: Option<String>,
    /// Value in the float-baseline record.
    pub baseline: Option<String>,
    /// Value in the deployment record.
    pub deployment: Option<String>,
    /// Outcome.
    pub status: FieldStatus,
    /// The mismatch spelled out.
    pub note: Option<String>,
}

/// The lineage verdict.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LineageReport {
    /// True when nothing blocks the comparison.
    pub ready: bool,
    /// Blocking problems, each with a stable code and the field or record concerned.
    pub issues: Vec<Problem>,
    /// Things that could not be checked (`not_recorded`).
    pub warnings: Vec<Problem>,
    /// The records' own notes (an asserted gate decision, a derived baseline), with the file.
    pub notes: Vec<String>,
    /// Field-by-field table (empty when a record is missing).
    pub fields: Vec<LineageField>,
    /// File of the gate record.
    pub gate_file: Option<String>,
    /// File of the baseline record.
    pub baseline_file: Option<String>,
    /// File of the deployment record.
    pub deployment_file: Option<String>,
    /// The quality gate's measurement (`sloscope gate`), recomputed from its per-position data,
    /// when the gate record carries one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<crate::check::gate::GateReport>,
    /// Gate records of other artifacts than the deployed one (gated, not deployed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_gates: Vec<crate::check::lineage_gate::OtherGate>,
    /// Runs of another lineage than the records' (another backend, version or hardware than the
    /// deployment's; another artifact is the run's own invariant, `artifact_mismatch`): not comparable,
    /// each left out of its profile with this problem (the seed's rule), never blocking the
    /// others.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs_apart: Vec<RunApart>,
}

/// A run of another lineage than the records'.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RunApart {
    /// The run's file.
    pub file: String,
    /// What differs.
    pub problem: Problem,
}

/// Records as loaded, with file names.
#[derive(Debug, Default)]
pub struct LineageInputs<'a> {
    /// Quality-gate records.
    pub gates: Vec<(&'a str, &'a QualityGate)>,
    /// Float-baseline records.
    pub baselines: Vec<(&'a str, &'a FloatBaseline)>,
    /// Deployment records.
    pub deployments: Vec<(&'a str, &'a Deployment)>,
    /// Runs.
    pub runs: Vec<(&'a str, &'a Run)>,
    /// The plan's gate limits, when a plan states them.
    pub plan_gate: Option<PlanGateLimits>,
}

const FLOAT_FORMATS: [&str; 8] = [
    "f32", "f16", "bf16", "fp16", "fp32", "float16", "float32", "bfloat16",
];

/// Whether a weight format name is a float format.
pub fn is_float_format(format: &str) -> bool {
    FLOAT_FORMATS.contains(&format.to_ascii_lowercase().as_str())
}

/// Checks the lineage of everything loaded.
pub fn check_lineage(inp: &LineageInputs<'_>) -> LineageReport {
    let mut rep = LineageReport::default();
    let (gates, others) = crate::check::lineage_gate::split(&inp.gates, &inp.deployments);
    let gate = deployed_gate(&gates, &others, inp, &mut rep.issues);
    let base = one(&inp.baselines, "float_baseline", &mut rep.issues);
    let mut others = others;
    crate::base::order::sort_by_key(&mut others, |(f, _)| *f);
    let unique: Vec<_> = others
        .iter()
        .enumerate()
        .filter(|(i, (_, g))| !others[..*i].iter().any(|(_, o)| o == g))
        .map(|(_, x)| *x)
        .collect();
    same_positions_elsewhere(gate, &others, &mut rep.issues);
    rep.other_gates = unique
        .iter()
        .map(|(f, g)| crate::check::lineage_gate::other(f, g, base.map(|b| b.1)))
        .collect();
    let dep = one(&inp.deployments, "deployment", &mut rep.issues);
    rep.gate_file = gate.map(|g| g.0.to_string());
    rep.baseline_file = base.map(|b| b.0.to_string());
    rep.deployment_file = dep.map(|d| d.0.to_string());
    if let Some((_, g)) = gate {
        let c = crate::check::lineage_gate::check(
            g,
            base.map(|b| b.1),
            dep.map(|d| d.1),
            inp.plan_gate.as_ref(),
        );
        rep.issues.extend(c.issues);
        rep.warnings.extend(c.warnings);
        rep.gate = c.report;
    }
    let noted = [
        (
            "quality gate",
            gate.and_then(|(f, g)| Some((f, g.notes.as_deref()?))),
        ),
        (
            "float baseline",
            base.and_then(|(f, b)| Some((f, b.notes.as_deref()?))),
        ),
        (
            "deployment",
            dep.and_then(|(f, d)| Some((f, d.notes.as_deref()?))),
        ),
    ];
    for (kind, n) in noted {
        if let Some((_, note)) = n.filter(|(_, n)| !n.trim().is_empty()) {
            rep.notes.push(format!("{kind}: {note}"));
        }
    }
    if let (Some((_, g)), Some((_, b)), Some((_, d))) = (gate, base, dep) {
        compare_records(g, b, d, &mut rep);
    }
    if let Some((_, d)) = dep {
        rep.runs_apart = check_runs(d, &inp.runs);
    }
    // A gate that says `tune` because its measurement is not enough evidence is said once, as
    // that (the profiles then have not enough data, not a rejection).
    if rep
        .issues
        .iter()
        .any(|p| p.code == ProblemCode::GateNotEnoughEvidence)
    {
        rep.issues.retain(|p| {
            !(p.code == ProblemCode::FieldMismatch
                && p.field == "decision"
                && p.message.starts_with("gate decision is \"tune\":"))
        });
    }
    rep.ready = rep.issues.is_empty();
    rep
}

/// The deployed artifact's gate and another artifact's holding the same per-position data: one
/// measurement under two artifacts, so the deployed one's may not be of its artifact.
fn same_positions_elsewhere(
    gate: Option<(&str, &QualityGate)>,
    others: &[(&str, &QualityGate)],
    issues: &mut Vec<Problem>,
) {
    let Some((file, g)) = gate else {
        return;
    };
    let Some(e) = g.evidence.as_deref() else {
        return;
    };
    for (of, o) in others {
        let same = o
            .evidence
            .as_deref()
            .is_some_and(|x| crate::check::gate::same_positions(&e.positions, &x.positions));
        if same && o.artifact.artifact_id != g.artifact.artifact_id {
            issues.push(Problem::new(
                ProblemCode::GateEvidenceContradicted,
                "evidence.positions",
                format!(
                    "{file} (artifact {:?}) and {of} (artifact {:?}) hold the same per-position \
                     measurement: one scoring under two artifacts, so it is not known which it is of",
                    g.artifact.artifact_id, o.artifact.artifact_id
                ),
            ));
        }
    }
}

/// The deployed artifact's gate record among `gates` (those `split` left as its candidates),
/// or the problem that there is none to be told.
fn deployed_gate<'a>(
    gates: &[(&'a str, &'a QualityGate)],
    others: &[(&'a str, &'a QualityGate)],
    inp: &LineageInputs<'_>,
    issues: &mut Vec<Problem>,
) -> Option<(&'a str, &'a QualityGate)> {
    if inp.deployments.is_empty() && of_several_artifacts(gates) {
        // Which is the deployed artifact's is the deployment record's to say: absent, the
        // gates of several artifacts are not a conflict but a record missing.
        let ids: Vec<String> = gates
            .iter()
            .map(|(f, g)| format!("{f}: {}", g.artifact.artifact_id))
            .collect();
        issues.push(Problem::new(
            ProblemCode::MissingRecord,
            "quality_gate",
            format!(
                "quality_gate records of {} artifacts loaded ({}) and no deployment record to say \
                 which artifact is deployed: load the deployment record",
                gates.len(),
                ids.join(", ")
            ),
        ));
        return None;
    }
    let gate = one(gates, "quality_gate", issues);
    if gates.is_empty() && !others.is_empty() {
        if let Some(p) = issues.last_mut() {
            let of: Vec<&str> = others
                .iter()
                .map(|(_, g)| g.artifact.artifact_id.as_str())
                .collect();
            p.message = format!(
                "no quality_gate record of the deployed artifact {:?} loaded (the gate records \
                 loaded are of {}, shown beside it, never in its place)",
                inp.deployments
                    .first()
                    .map_or("", |d| d.1.gate_artifact_id.as_str()),
                of.join(", ")
            );
        }
    }
    gate
}

/// Whether the gate records are of more than one artifact.
fn of_several_artifacts(gates: &[(&str, &QualityGate)]) -> bool {
    gates
        .iter()
        .any(|(_, g)| g.artifact.artifact_id != gates[0].1.artifact.artifact_id)
}

/// The one record of a kind. Identical copies (every shard's attempt, every output directory
/// copies the plan's records) are one record, the first by file name; two that differ are a
/// conflict no file order may settle.
fn one<'a, T: PartialEq>(
    list: &[(&'a str, &'a T)],
    kind: &str,
    issues: &mut Vec<Problem>,
) -> Option<(&'a str, &'a T)> {
    match list {
        [] => {
            issues.push(Problem::new(
                ProblemCode::MissingRecord,
                kind,
                format!("no {kind} record loaded: expected exactly one"),
            ));
            None
        }
        [x] => Some(*x),
        [first, rest @ ..] if rest.iter().all(|(_, r)| *r == first.1) => {
            list.iter().min_by_key(|(f, _)| *f).copied()
        }
        many => {
            let files: Vec<&str> = many.iter().map(|(f, _)| *f).collect();
            issues.push(Problem::new(
                ProblemCode::DuplicateRecords,
                kind,
                format!(
                    "{} different {kind} records loaded ({}): expected exactly one (identical copies count once)",
                    many.len(),
                    files.join(", ")
                ),
            ));
            None
        }
    }
}

fn compare_records(g: &QualityGate, b: &FloatBaseline, d: &Deployment, rep: &mut LineageReport) {
    let (ga, ba, da) = (&g.artifact, &b.artifact, &d.artifact);
    let row = |field: &str, vals: [Option<&str>; 3], rule: Rule, rep: &mut LineageReport| {
        let r = compare(field, vals, rule);
        if r.status == FieldStatus::Mismatch {
            rep.issues.push(Problem::new(
                ProblemCode::FieldMismatch,
                field,
                r.note.clone().unwrap_or_default(),
            ));
        }
        if r.status == FieldStatus::NotRecorded {
            rep.warnings.push(Problem::new(
                ProblemCode::NotRecorded,
                field,
                format!("{field} is recorded in no lineage record; not checked"),
            ));
        }
        rep.fields.push(r);
    };
    fn s(o: &Option<String>) -> Option<&str> {
        o.as_deref()
    }
    row(
        "artifact_id",
        [
            Some(&ga.artifact_id),
            Some(&ba.artifact_id),
            Some(&da.artifact_id),
        ],
        Rule::QuantizedPair,
        rep,
    );
    row(
        "gate_artifact_id",
        [Some(&ga.artifact_id), None, Some(&d.gate_artifact_id)],
        Rule::QuantizedPair,
        rep,
    );
    for (field, get) in [
        (
            "backend",
            (|a: &ArtifactIdentity| Some(a.backend.clone()))
                as fn(&ArtifactIdentity) -> Option<String>,
        ),
        ("backend_version", |a| Some(a.backend_version.clone())),
        ("hardware", |a| Some(a.hardware.clone())),
        ("model", |a| a.model.clone()),
        ("revision", |a| a.revision.clone()),
        ("tokenizer_id", |a| a.tokenizer_id.clone()),
        ("tokenizer_sha256", |a| a.tokenizer_sha256.clone()),
    ] {
        let (x, y, z) = (get(ga), get(ba), get(da));
        row(
            field,
            [x.as_deref(), y.as_deref(), z.as_deref()],
            Rule::AllThree,
            rep,
        );
    }
    row(
        "format",
        [s(&ga.format), s(&ba.format), s(&da.format)],
        Rule::Format,
        rep,
    );
    row(
        "artifact_sha256",
        [
            s(&ga.artifact_sha256),
            s(&ba.artifact_sha256),
            s(&da.artifact_sha256),
        ],
        Rule::QuantizedPairOptional,
        rep,
    );
    let dec = |x: Decision| Some(x.as_str());
    row(
        "decision",
        [dec(g.decision), dec(b.decision), dec(d.decision)],
        Rule::Decisions,
        rep,
    );
}

#[derive(Clone, Copy)]
enum Rule {
    /// Must be equal in all three records.
    AllThree,
    /// Gate and deployment equal (required); baseline must differ.
    QuantizedPair,
    /// Gate and deployment equal where stated; baseline, where stated, must differ.
    QuantizedPairOptional,
    /// Gate = deployment; baseline a float format.
    Format,
    /// Gate and deployment must be accept.
    Decisions,
}

fn compare(field: &str, [g, b, d]: [Option<&str>; 3], rule: Rule) -> LineageField {
    let mk = |status, note: Option<String>| LineageField {
        field: field.to_string(),
        gate: g.map(str::to_string),
        baseline: b.map(str::to_string),
        deployment: d.map(str::to_string),
        status,
        note,
    };
    let stated = |vals: &[(usize, Option<&str>)]| stated(field, vals);
    match rule {
        Rule::AllThree => match stated(&[(0, g), (1, b), (2, d)]) {
            Ok(None) => mk(FieldStatus::NotRecorded, None),
            Ok(Some(_)) => mk(FieldStatus::Match, None),
            Err(e) => mk(FieldStatus::Mismatch, Some(e)),
        },
        Rule::QuantizedPair | Rule::QuantizedPairOptional => {
            let pair = stated(&[(0, g), (2, d)]);
            match pair {
                Err(e) => mk(FieldStatus::Mismatch, Some(format!("{e}: gate and deployment must reference the same quantized artifact"))),
                Ok(None) => mk(FieldStatus::NotRecorded, None),
                Ok(Some(q)) => match (rule, b) {
                    (_, Some(bv)) if bv.trim().eq_ignore_ascii_case(q.trim()) => mk(
                        FieldStatus::Mismatch,
                        Some(format!("{field}: the float baseline names the quantized artifact {q:?}; expected its own float artifact")),
                    ),
                    (_, Some(_)) => mk(FieldStatus::ExpectedDifference, None),
                    (_, None) => mk(FieldStatus::Match, None),
                },
            }
        }
        Rule::Format => {
            let pair = stated(&[(0, g), (2, d)]);
            match (pair, b) {
                (Err(e), _) => mk(FieldStatus::Mismatch, Some(e)),
                (Ok(_), Some(bf)) if !is_float_format(bf) => mk(
                    FieldStatus::Mismatch,
                    Some(format!("format of the float baseline is {bf:?}: expected a float format (F16, BF16, F32)")),
                ),
                (Ok(Some(q)), _) if is_float_format(&q) => mk(
                    FieldStatus::Mismatch,
                    Some(format!("format of the gated artifact is {q:?}, a float format: expected a quantized format")),
                ),
                (Ok(None), None) => mk(FieldStatus::NotRecorded, None),
                (Ok(None), Some(_)) => mk(FieldStatus::ExpectedDifference, Some("quantized format not recorded".into())),
                (Ok(Some(_)), _) => mk(FieldStatus::ExpectedDifference, None),
            }
        }
        Rule::Decisions => {
            let mut bad = Vec::new();
            if g != Some("accept") {
                bad.push(format!("gate decision is {:?}", g.unwrap_or("")));
            }
            if d != Some("accept") {
                bad.push(format!("deployment decision is {:?}", d.unwrap_or("")));
            }
            if bad.is_empty() {
                mk(FieldStatus::Match, None)
            } else {
                mk(
                    FieldStatus::Mismatch,
                    Some(format!(
                        "{}: gate and deployment must be accepted before profile comparison",
                        bad.join(", ")
                    )),
                )
            }
        }
    }
}

/// The one value the records at these positions (0 gate, 1 baseline, 2 deployment) state for
/// `field`; `Ok(None)` when none states it; `Err` when some state it and others do not, or
/// they differ.
fn stated(field: &str, vals: &[(usize, Option<&str>)]) -> Result<Option<String>, String> {
    let names = ["gate", "baseline", "deployment"];
    let present: Vec<_> = vals.iter().filter(|(_, v)| v.is_some()).collect();
    if present.is_empty() {
        return Ok(None);
    }
    if present.len() < vals.len() {
        let missing: Vec<&str> = vals
            .iter()
            .filter(|(_, v)| v.is_none())
            .map(|(i, _)| names[*i])
            .collect();
        let have: Vec<String> = present
            .iter()
            .map(|(i, v)| format!("{} {:?}", names[*i], v.unwrap_or("")))
            .collect();
        return Err(format!(
            "{field} is stated by {} but missing from {}",
            have.join(", "),
            missing.join(", ")
        ));
    }
    let first = present[0].1;
    if present.iter().all(|(_, v)| *v == first) {
        return Ok(first.map(str::to_string));
    }
    let all: Vec<String> = present
        .iter()
        .map(|(i, v)| format!("{} {:?}", names[*i], v.unwrap_or("")))
        .collect();
    Err(format!("{field} differs: {}", all.join(" vs ")))
}

fn check_runs(d: &Deployment, runs: &[(&str, &Run)]) -> Vec<RunApart> {
    let da = &d.artifact;
    let mut out = Vec::new();
    for (file, run) in runs {
        let mut apart = |code, field: &str, message: String| {
            out.push(RunApart {
                file: file.to_string(),
                problem: Problem::new(code, field, message),
            });
        };
        for (field, got, want) in [
            ("backend", &run.backend, &da.backend),
            ("backend_version", &run.backend_version, &da.backend_version),
            ("hardware", &run.hardware, &da.hardware),
        ] {
            if got != want {
                apart(
                    ProblemCode::RunDeploymentMismatch,
                    field,
                    format!(
                        "its {field} is {got:?}, the deployment's {want:?}: another lineage, not \
                         comparable"
                    ),
                );
                break;
            }
        }
    }
    out
}
