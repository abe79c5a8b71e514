//! The SLO verdict per profile, the seed's rule: drop candidates that miss any declared SLO,
//! then pick by the primary metric (max for higher-is-better, min otherwise).
//!
//! - `accept` only when the chosen candidate's evidence is `real_backend_profile` (another
//!   tool's summary taken as reported is accepted as the seed does, the reason saying so);
//! - `tune` when no candidate meets every SLO (naming the binding SLO and the miss), when the
//!   evidence is not real, or when the chosen candidate's file states a figure its own requests
//!   contradict by more than a factor of two;
//! - `reject` when nothing is comparable, the profile contract fails or the lineage is broken.
//!
//! Confidence: with 3 or more repeats, the primary metric gets a 95% Student-t interval over the
//! per-repeat values; when the winner's and runner-up's intervals overlap, the report says the
//! two cannot be told apart at this sample size.

use serde::{Deserialize, Serialize};

use crate::base::fmt::format_number as fmt_num;
use crate::base::metric::{Direction, Metric};
use crate::base::stats::Interval;
use crate::check::contract::Profile;
use crate::schema::{Decision, EvidenceLevel};

/// One SLO limit checked against one candidate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SloCheck {
    /// Metric name.
    pub metric: Metric,
    /// The limit.
    pub limit: f64,
    /// Candidate's value; `null` when not measured (which fails the check).
    pub value: Option<f64>,
    /// Whether the limit is met.
    pub pass: bool,
    /// Distance to the limit on the good side (negative: missed by that much).
    pub margin: Option<f64>,
}

/// The SLO that decided a `tune`: the candidate closest to feasible and what it missed most.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BindingSlo {
    /// Metric name.
    pub metric: Metric,
    /// The limit.
    pub limit: f64,
    /// Closest candidate.
    pub candidate: String,
    /// Its value (`null`: not measured).
    pub value: Option<f64>,
    /// Missed by (absolute, in the metric's unit).
    pub missed_by: Option<f64>,
    /// Missed by, relative to the limit (0.1 = 10%).
    pub missed_by_ratio: Option<f64>,
}

/// How sure the pick is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Confidence {
    /// Primary metric.
    pub metric: Metric,
    /// Winner's 95% interval over repeats.
    pub winner: Option<Interval>,
    /// Runner-up's name.
    pub runner_up: Option<String>,
    /// Runner-up's interval.
    pub runner_up_interval: Option<Interval>,
    /// False when the intervals overlap (or cannot be computed).
    pub distinguishable: bool,
    /// The sentence shown to reviewers.
    pub statement: String,
}

/// What the verdict needs to know of a candidate.
pub struct Contender<'a> {
    /// Name.
    pub name: &'a str,
    /// Evidence level.
    pub evidence: EvidenceLevel,
    /// Metric lookup (pooled).
    pub value: &'a dyn Fn(Metric) -> Option<f64>,
    /// Per-repeat values of the primary metric (empty for reported-only runs).
    pub primary_interval: Option<Interval>,
    /// Whether its numbers were recomputed from raw requests (false: another tool's summary
    /// taken as reported, which the verdict's reason says).
    pub recomputed: bool,
    /// A figure its file states that its own requests contradict by more than a factor of two
    /// (a unit slip, or figures from another run): such a file is not evidence to accept on.
    pub contradicted: Option<String>,
}

/// The verdict of one profile.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// accept / tune / reject.
    pub decision: Decision,
    /// The chosen candidate, if any.
    pub recommended: Option<String>,
    /// Why.
    pub reason: String,
    /// Set when no candidate met every SLO.
    pub binding: Option<BindingSlo>,
    /// Set when repeats allow.
    pub confidence: Option<Confidence>,
}

/// Checks every SLO of `profile` against a candidate's values.
pub fn slo_checks(profile: &Profile, value: &dyn Fn(Metric) -> Option<f64>) -> Vec<SloCheck> {
    profile
        .slo
        .iter()
        .map(|&(m, limit)| {
            let v = value(m);
            SloCheck {
                metric: m,
                limit,
                value: v,
                pass: v.is_some_and(|v| m.meets(v, limit)),
                margin: v.map(|v| m.margin(v, limit)),
            }
        })
        .collect()
}

/// Decides one profile among comparable candidates.
pub fn decide(profile: &Profile, contenders: &[Contender<'_>]) -> Verdict {
    let pm = profile.primary_metric;
    if contenders.is_empty() {
        return Verdict {
            decision: Decision::Reject,
            recommended: None,
            reason: "no complete, comparable run for this profile".into(),
            binding: None,
            confidence: None,
        };
    }
    let checks: Vec<Vec<SloCheck>> = contenders
        .iter()
        .map(|c| slo_checks(profile, c.value))
        .collect();
    let feasible: Vec<usize> = (0..contenders.len())
        .filter(|&i| checks[i].iter().all(|c| c.pass))
        .collect();
    if feasible.is_empty() {
        return no_feasible(contenders, &checks);
    }
    let mut ranked: Vec<(usize, f64)> = feasible
        .iter()
        .filter_map(|&i| (contenders[i].value)(pm).map(|v| (i, v)))
        .collect();
    if ranked.is_empty() {
        return Verdict {
            decision: Decision::Tune,
            recommended: None,
            reason: format!(
                "candidates meet the SLOs but none has a value for the primary metric {pm}"
            ),
            binding: None,
            confidence: None,
        };
    }
    // Stable sort keeps plan order among ties.
    ranked.sort_by(|a, b| match pm.direction() {
        Direction::LowerIsBetter => a.1.total_cmp(&b.1),
        Direction::HigherIsBetter => b.1.total_cmp(&a.1),
    });
    let (wi, wv) = ranked[0];
    let winner = &contenders[wi];
    let confidence = confidence(pm, &ranked, contenders);
    let unit = pm.unit();
    let best = format!("best on {pm} ({} {unit})", fmt_num(wv)).replace(" )", ")");
    let (decision, reason) = if let Some(why) = &winner.contradicted {
        (
            Decision::Tune,
            format!(
                "meets every {} SLO and is {best}, but its file contradicts itself ({why}): \
                 re-measure, or find which of its figures is wrong",
                profile.name
            ),
        )
    } else if winner.evidence == EvidenceLevel::RealBackendProfile {
        // The seed accepts another tool's summary as reported; the reason says that it is
        // only that, so that a reviewer reads it on the verdict's own line.
        let reported = if winner.recomputed {
            ""
        } else {
            " by the numbers its file reports (no per-request data: not recomputed or checked)"
        };
        (
            Decision::Accept,
            format!("meets every {} SLO and is {best}{reported}", profile.name),
        )
    } else {
        (
            Decision::Tune,
            format!(
                "meets every {} SLO and is {best}, but the evidence is {}: re-measure against the real backend",
                profile.name,
                winner.evidence.as_str()
            ),
        )
    };
    Verdict {
        decision,
        recommended: Some(winner.name.to_string()),
        reason,
        binding: None,
        confidence,
    }
}

/// `tune`: no candidate meets every SLO; the binding SLO says which limit is closest.
fn no_feasible(contenders: &[Contender<'_>], checks: &[Vec<SloCheck>]) -> Verdict {
    let binding = binding_slo(contenders, checks);
    let reason = match &binding {
        Some(b) => match (b.value, b.missed_by) {
            (Some(v), Some(m)) => format!(
                "no candidate meets every SLO; closest is {} with {} = {} against the limit {} (missed by {}{})",
                b.candidate,
                b.metric,
                fmt_num(v),
                fmt_num(b.limit),
                fmt_num(m),
                b.missed_by_ratio.map(|r| format!(", {:.1}%", r * 100.0)).unwrap_or_default()
            ),
            _ => format!(
                "no candidate meets every SLO; {} is not measured for {} (limit {})",
                b.metric,
                b.candidate,
                fmt_num(b.limit)
            ),
        },
        None => "no candidate meets every SLO".into(),
    };
    Verdict {
        decision: Decision::Tune,
        recommended: None,
        reason,
        binding,
        confidence: None,
    }
}

fn binding_slo(contenders: &[Contender<'_>], checks: &[Vec<SloCheck>]) -> Option<BindingSlo> {
    // Worst relative miss of each candidate; unmeasured counts as an infinite miss.
    let worst = |cs: &[SloCheck]| -> Option<(f64, SloCheck)> {
        cs.iter()
            .filter(|c| !c.pass)
            .map(|c| {
                let rel = match c.margin {
                    Some(m) => -m / c.limit.abs().max(f64::MIN_POSITIVE),
                    None => f64::INFINITY,
                };
                (rel, c.clone())
            })
            .max_by(|a, b| a.0.total_cmp(&b.0))
    };
    let (ci, (rel, check)) = checks
        .iter()
        .enumerate()
        .filter_map(|(i, cs)| worst(cs).map(|w| (i, w)))
        .min_by(|a, b| a.1 .0.total_cmp(&b.1 .0))?;
    Some(BindingSlo {
        metric: check.metric,
        limit: check.limit,
        candidate: contenders[ci].name.to_string(),
        value: check.value,
        missed_by: check.margin.map(|m| -m),
        missed_by_ratio: (rel.is_finite() && check.limit != 0.0).then_some(rel),
    })
}

/// How an interval of `pm` was computed, for the statement.
fn basis(pm: Metric, iv: &Interval) -> String {
    if pm.per_request_interval() {
        format!("bootstrap over {} requests within repeats", iv.n)
    } else {
        format!("Student t over {} repeats", iv.n)
    }
}

fn confidence(
    pm: Metric,
    ranked: &[(usize, f64)],
    contenders: &[Contender<'_>],
) -> Option<Confidence> {
    let interval = |i: usize| contenders[i].primary_interval;
    let w = interval(ranked[0].0)?;
    let runner = ranked
        .get(1)
        .map(|&(i, _)| (contenders[i].name.to_string(), interval(i)));
    let (runner_up, runner_up_interval) = match runner {
        Some((n, iv)) => (Some(n), iv),
        None => (None, None),
    };
    let wname = contenders[ranked[0].0].name;
    let (distinguishable, statement) = match (&runner_up, runner_up_interval) {
        (Some(r), Some(ri)) if ri.overlaps(&w) => (
            false,
            format!(
                "{wname} cannot be told apart from {r} on {pm}: 95% intervals [{}, {}] and [{}, {}] overlap ({})",
                fmt_num(w.low), fmt_num(w.high), fmt_num(ri.low), fmt_num(ri.high), basis(pm, &w)
            ),
        ),
        (Some(r), Some(ri)) => (
            true,
            format!(
                "{wname} is ahead of {r} on {pm}: 95% intervals [{}, {}] and [{}, {}] do not overlap ({})",
                fmt_num(w.low), fmt_num(w.high), fmt_num(ri.low), fmt_num(ri.high), basis(pm, &w)
            ),
        ),
        (Some(r), None) => (
            false,
            format!(
                "{wname}: 95% interval [{}, {}] ({}); {r} has too little data for an interval",
                fmt_num(w.low), fmt_num(w.high), basis(pm, &w)
            ),
        ),
        (None, _) => (
            true,
            format!(
                "{wname} is the only feasible candidate: 95% interval [{}, {}] ({})",
                fmt_num(w.low), fmt_num(w.high), basis(pm, &w)
            ),
        ),
    };
    Some(Confidence {
        metric: pm,
        winner: Some(w),
        runner_up,
        runner_up_interval,
        distinguishable,
        statement,
    })
}
