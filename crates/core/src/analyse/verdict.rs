//! The SLO verdict per profile, the seed's rule: drop candidates that miss any declared SLO,
//! then pick by the primary metric (max for higher-is-better, min otherwise) — with each SLO
//! decided from the data's one-sided 95% bound ([`crate::analyse::evidence`]), so that a
//! candidate meets, misses, or cannot be decided from the requests there are:
//!
//! - `not_enough_data` when the best-ranked candidate not shown to miss an SLO has an SLO the
//!   data cannot decide (the limit inside its interval, or no bound from so few requests);
//!   the binding SLO says which, and how many requests would decide it;
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

use crate::analyse::evidence::SloOutcome;
use crate::base::fmt::format_number as fmt_num;
use crate::base::metric::{Direction, Metric};
use crate::base::stats::Interval;
use crate::check::contract::Profile;
use crate::schema::EvidenceLevel;

/// A profile's answer: the seed's three, and the two states that are not a judgement of the
/// configurations — the plan's cells are not all there, or the data cannot decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ProfileDecision {
    /// A candidate meets every SLO, with 95% confidence, on real evidence.
    Accept,
    /// No candidate meets every SLO, or the best one's evidence is not enough to accept on.
    Tune,
    /// Nothing comparable, an invalid profile, a broken lineage.
    Reject,
    /// A planned cell (a candidate, the float baseline, a shard) has no usable run: no verdict
    /// is given over what was not measured.
    Incomplete,
    /// The SLO that decides the verdict cannot be decided from the requests there are.
    NotEnoughData,
}

impl ProfileDecision {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            ProfileDecision::Accept => "accept",
            ProfileDecision::Tune => "tune",
            ProfileDecision::Reject => "reject",
            ProfileDecision::Incomplete => "incomplete",
            ProfileDecision::NotEnoughData => "not_enough_data",
        }
    }

    /// As a reader sees it.
    pub fn label(self) -> &'static str {
        match self {
            ProfileDecision::Accept => "ACCEPT",
            ProfileDecision::Tune => "TUNE",
            ProfileDecision::Reject => "REJECT",
            ProfileDecision::Incomplete => "INCOMPLETE",
            ProfileDecision::NotEnoughData => "NOT ENOUGH DATA",
        }
    }
}

impl std::fmt::Display for ProfileDecision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

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
    /// Whether the limit is met with 95% confidence (`outcome` is `pass`).
    pub pass: bool,
    /// Distance to the limit on the good side (negative: missed by that much).
    pub margin: Option<f64>,
    /// Met, missed, or not decidable from the data.
    pub outcome: SloOutcome,
    /// The one-sided 95% lower bound of the value; `null` where the data give none.
    pub lower_bound: Option<f64>,
    /// The one-sided 95% upper bound of the value; `null` where the data give none.
    pub upper_bound: Option<f64>,
    /// When not decidable: about how many requests would decide it, if the data kept their
    /// shape (`null`: no number would — the value is at the limit — or it is not a sample).
    pub needed_requests: Option<u64>,
    /// When not decidable because the bound comes from the spread of the repeats and there are
    /// too few to have one: the repeats it takes to have a bound at all (`null` otherwise).
    pub needed_repeats: Option<u32>,
    /// What the outcome rests on, in words.
    pub basis: String,
}

impl SloCheck {
    /// A check from a decision of the data.
    pub(crate) fn new(
        metric: Metric,
        limit: f64,
        value: Option<f64>,
        d: Option<crate::analyse::evidence::Decided>,
    ) -> SloCheck {
        // A figure the run does not hold (another tool's file that states no such percentile)
        // is undecided, never a miss: a miss would let another candidate win by default.
        let d = d.unwrap_or_else(|| crate::analyse::evidence::Decided {
            outcome: SloOutcome::NotEnoughData,
            bounds: [None, None],
            needed_requests: None,
            needed_repeats: None,
            basis: "not measured: the run holds no value for it".into(),
        });
        SloCheck {
            metric,
            limit,
            value,
            pass: d.outcome == SloOutcome::Pass,
            margin: value.map(|v| metric.margin(v, limit)),
            outcome: d.outcome,
            lower_bound: d.bounds[0],
            upper_bound: d.bounds[1],
            needed_requests: d.needed_requests,
            needed_repeats: d.needed_repeats,
            basis: d.basis,
        }
    }
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
    /// `fail`: missed with confidence; `not_enough_data`: the data cannot decide it.
    pub outcome: SloOutcome,
    /// When not decidable: about how many requests would decide it.
    pub needed_requests: Option<u64>,
    /// When not decidable for want of repeats to bound it: the repeats it takes to have a
    /// bound at all.
    pub needed_repeats: Option<u32>,
}

impl BindingSlo {
    /// An SLO of `candidate` the data cannot decide.
    fn open(candidate: &str, k: &SloCheck) -> BindingSlo {
        BindingSlo {
            metric: k.metric,
            limit: k.limit,
            candidate: candidate.to_string(),
            value: k.value,
            missed_by: k.margin.filter(|m| *m < 0.0).map(|m| -m),
            missed_by_ratio: None,
            outcome: SloOutcome::NotEnoughData,
            needed_requests: k.needed_requests,
            needed_repeats: k.needed_repeats,
        }
    }
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
    /// Its SLO checks, decided from its data.
    pub checks: &'a [SloCheck],
    /// Per-repeat values of the primary metric (empty for reported-only runs).
    pub primary_interval: Option<Interval>,
    /// Whether its numbers were recomputed from raw requests (false: another tool's summary
    /// taken as reported, which the verdict's reason says).
    pub recomputed: bool,
    /// A figure its file states that its own requests contradict by more than a factor of two
    /// (a unit slip, or figures from another run): such a file is not evidence to accept on.
    pub contradicted: Option<String>,
    /// The knob's name and value, where the value is a number (fewer slots, a smaller batch
    /// cap or memory budget: fewer resources), for the tie rule.
    pub knob: Option<(&'a str, f64)>,
}

/// The verdict of one profile.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// accept / tune / reject / not enough data.
    pub decision: ProfileDecision,
    /// The chosen candidate, if any.
    pub recommended: Option<String>,
    /// Why.
    pub reason: String,
    /// Set when no candidate met every SLO.
    pub binding: Option<BindingSlo>,
    /// Set when repeats allow.
    pub confidence: Option<Confidence>,
}

/// Decides one profile among comparable candidates.
pub fn decide(profile: &Profile, contenders: &[Contender<'_>]) -> Verdict {
    let pm = profile.primary_metric;
    if contenders.is_empty() {
        return plain(
            ProfileDecision::Reject,
            "no complete, comparable run for this profile".into(),
        );
    }
    let missed = |c: &Contender<'_>| c.checks.iter().any(|k| k.outcome == SloOutcome::Fail);
    // Every candidate the data do not show to miss an SLO, ranked by the primary metric.
    let mut ranked: Vec<(usize, f64)> = (0..contenders.len())
        .filter(|&i| !missed(&contenders[i]))
        .filter_map(|i| (contenders[i].value)(pm).map(|v| (i, v)))
        .collect();
    if ranked.is_empty() {
        if contenders.iter().all(missed) {
            return no_feasible(contenders);
        }
        let open: Vec<&str> = contenders
            .iter()
            .filter(|c| !missed(c))
            .map(|c| c.name)
            .collect();
        return plain(
            ProfileDecision::NotEnoughData,
            format!(
                "no candidate that may meet the SLOs has a value for the primary metric {pm} \
                 ({} {}): which ranks first is not measured",
                open.join(", "),
                if open.len() == 1 {
                    "has none"
                } else {
                    "have none"
                }
            ),
        );
    }
    // Stable sort keeps plan order among ties.
    crate::base::order::sort_by(&mut ranked, |a, b| match pm.direction() {
        Direction::LowerIsBetter => a.1.total_cmp(&b.1),
        Direction::HigherIsBetter => b.1.total_cmp(&a.1),
    });
    let (wi, wv) = ranked[0];
    let winner = &contenders[wi];
    let unit = pm.unit();
    let best = format!("best on {pm} ({} {unit})", fmt_num(wv)).replace(" )", ")");
    let open = winner
        .checks
        .iter()
        .find(|k| k.outcome == SloOutcome::NotEnoughData);
    // Simulation evidence is never accepted, however many requests: the answer is to measure
    // the real backend, not to measure the simulation more.
    if let (Some(open), false) = (open, winner.evidence == EvidenceLevel::RealBackendProfile) {
        return Verdict {
            decision: ProfileDecision::Tune,
            recommended: Some(winner.name.to_string()),
            reason: format!(
                "{} ranks first on {pm}, but the evidence is {} (and its {}): re-measure against \
                 the real backend",
                winner.name,
                winner.evidence.as_str(),
                open_words(open)
            ),
            binding: None,
            confidence: confidence(pm, &ranked, contenders),
        };
    }
    if let Some(open) = open {
        return not_enough(profile, contenders, &ranked, open);
    }
    if let Some(v) = unranked(pm, contenders, winner, &missed) {
        return v;
    }
    // Of the candidates the data cannot tell apart from the best, the cheaper is chosen.
    let (winner, best) = match cheaper_tie(profile, &ranked, contenders) {
        Some((i, words)) => {
            let at = ranked.iter().position(|&(j, _)| j == i).unwrap_or(0);
            let chosen = ranked.remove(at);
            ranked.insert(0, chosen);
            (&contenders[i], words)
        }
        None => (winner, best),
    };
    let confidence = confidence(pm, &ranked, contenders);
    let (decision, reason) = settled(profile, winner, &best);
    Verdict {
        decision,
        recommended: Some(winner.name.to_string()),
        reason,
        binding: None,
        confidence,
    }
}

/// Below 5% a difference of peak memory is within what one sample of RSS or GPU memory moves.
const SAME_MEMORY: f64 = 0.95;

/// The tie rule: a candidate that meets every SLO with confidence, on the same footing as the
/// best (real backend, its own numbers), whose primary metric's 95% interval overlaps the
/// best's, and that is cheaper — a lower knob value with no more memory (within 5%), or the
/// same knob value with clearly less memory. The cheapest such is chosen instead; the words say
/// why, for the verdict's reason.
fn cheaper_tie(
    profile: &Profile,
    ranked: &[(usize, f64)],
    contenders: &[Contender<'_>],
) -> Option<(usize, String)> {
    let best = &contenders[ranked[0].0];
    let best_iv = best.primary_interval?;
    let mem = |c: &Contender<'_>| (c.value)(Metric::PEAK_MEMORY);
    let cheaper = |c: &Contender<'_>| -> Option<String> {
        let ((knob, k), (_, bk)) = (c.knob?, best.knob?);
        let (m, bm) = (mem(c), mem(best));
        let more_memory = matches!((m, bm), (Some(m), Some(bm)) if m * SAME_MEMORY > bm);
        let less_memory = matches!((m, bm), (Some(m), Some(bm)) if m < SAME_MEMORY * bm);
        match (k < bk, k == bk) {
            (true, _) if !more_memory => Some(format!("{knob} {} vs {}", fmt_num(k), fmt_num(bk))),
            (_, true) if less_memory => Some(format!(
                "peak memory {} MB vs {} MB",
                fmt_num(m.unwrap_or_default()),
                fmt_num(bm.unwrap_or_default())
            )),
            _ => None,
        }
    };
    let (i, why) = ranked[1..]
        .iter()
        .map(|&(i, _)| (i, &contenders[i]))
        .filter(|(_, c)| {
            c.checks.iter().all(|k| k.outcome == SloOutcome::Pass)
                && c.evidence == EvidenceLevel::RealBackendProfile
                && c.recomputed == best.recomputed
                && c.contradicted.is_none()
                && c.primary_interval.is_some_and(|iv| iv.overlaps(&best_iv))
        })
        .filter_map(|(i, c)| cheaper(c).map(|w| (i, c, w)))
        .min_by(|a, b| {
            let key = |c: &Contender<'_>| {
                let knob = c.knob.map_or(f64::MAX, |(_, k)| k);
                (knob, mem(c).unwrap_or(f64::MAX))
            };
            let (ka, kb) = (key(a.1), key(b.1));
            ka.0.total_cmp(&kb.0).then(ka.1.total_cmp(&kb.1))
        })
        .map(|(i, _, w)| (i, w))?;
    let pm = profile.primary_metric;
    Some((
        i,
        format!(
            "tied with {}, the best on {pm} ({} {}): the data cannot tell them apart (95% \
             intervals overlap), and it is cheaper ({why}) — of tied candidates the cheaper is \
             chosen",
            best.name,
            fmt_num(ranked[0].1),
            pm.unit()
        )
        .replace(" )", ")"),
    ))
}

fn plain(decision: ProfileDecision, reason: String) -> Verdict {
    Verdict {
        decision,
        recommended: None,
        reason,
        binding: None,
        confidence: None,
    }
}

/// The verdict of a winner whose every SLO is met with confidence.
fn settled(profile: &Profile, winner: &Contender<'_>, best: &str) -> (ProfileDecision, String) {
    if let Some(why) = &winner.contradicted {
        return (
            ProfileDecision::Tune,
            format!(
                "meets every {} SLO and is {best}, but its file contradicts itself ({why}): \
                 re-measure, or find which of its figures is wrong",
                profile.name
            ),
        );
    }
    if winner.evidence != EvidenceLevel::RealBackendProfile {
        return (
            ProfileDecision::Tune,
            format!(
                "meets every {} SLO and is {best}, but the evidence is {}: re-measure against the real backend",
                profile.name,
                winner.evidence.as_str()
            ),
        );
    }
    // The seed accepts another tool's summary as reported; the reason says that it is only
    // that, so that a reviewer reads it on the verdict's own line.
    let reported = if winner.recomputed {
        ""
    } else {
        " by the numbers its file reports (no per-request data: not recomputed or checked)"
    };
    let as_run = decided_as_run(winner.checks);
    let how = if as_run.is_empty() {
        "with 95% confidence".to_string()
    } else {
        format!(
            "with 95% confidence ({} as the run saw it)",
            as_run.join("; ")
        )
    };
    (
        ProfileDecision::Accept,
        format!(
            "meets every {} SLO {how} and is {best}{reported}",
            profile.name
        ),
    )
}

/// The passing checks whose pass no one-sided 95% bound carries (a maximum, a peak, a limit
/// that allows no exception, a reported figure), each said in a few words.
fn decided_as_run(checks: &[SloCheck]) -> Vec<String> {
    checks
        .iter()
        .filter(|k| k.outcome == SloOutcome::Pass)
        .filter(|k| {
            let bound = match k.metric.direction() {
                Direction::LowerIsBetter => k.upper_bound,
                Direction::HigherIsBetter => k.lower_bound,
            };
            !bound.is_some_and(|b| k.metric.meets(b, k.limit))
        })
        .map(|k| match (k.metric, k.upper_bound) {
            (Metric::Scalar(crate::base::metric::Scalar::FailureRate), Some(h)) => format!(
                "failure_rate: none failed, the rate may still be up to {}%",
                fmt_num(100.0 * h)
            ),
            _ => format!("{}: as observed", k.metric),
        })
        .collect()
}

/// `not enough data`: the best-ranked candidate that may meet the SLOs has one the data cannot
/// decide.
/// A candidate not shown to miss an SLO that has no value for the primary metric (another
/// tool's file that states no such figure) may rank first: the leader among those measured on
/// it does not win by default.
fn unranked(
    pm: Metric,
    contenders: &[Contender<'_>],
    leader: &Contender<'_>,
    missed: &dyn Fn(&Contender<'_>) -> bool,
) -> Option<Verdict> {
    let open: Vec<&str> = contenders
        .iter()
        .filter(|c| !missed(c) && (c.value)(pm).is_none())
        .map(|c| c.name)
        .collect();
    let first = open.first()?;
    Some(plain(
        ProfileDecision::NotEnoughData,
        format!(
            "{} {} no value for the primary metric {pm} (the file states none) and {} not shown \
             to miss an SLO, so {} may rank first; {} ranks first among the candidates measured \
             on it",
            open.join(", "),
            if open.len() == 1 { "has" } else { "have" },
            if open.len() == 1 { "is" } else { "are" },
            if open.len() == 1 {
                *first
            } else {
                "one of them"
            },
            leader.name
        ),
    ))
}

fn not_enough(
    profile: &Profile,
    contenders: &[Contender<'_>],
    ranked: &[(usize, f64)],
    open: &SloCheck,
) -> Verdict {
    let pm = profile.primary_metric;
    let winner = &contenders[ranked[0].0];
    let sure = ranked
        .iter()
        .map(|&(i, _)| &contenders[i])
        .find(|c| c.checks.iter().all(|k| k.outcome == SloOutcome::Pass));
    let also = sure.map_or_else(String::new, |c| {
        format!(
            "; {} meets every SLO with confidence but ranks below it on {pm}",
            c.name
        )
    });
    let binding = BindingSlo::open(winner.name, open);
    Verdict {
        decision: ProfileDecision::NotEnoughData,
        recommended: None,
        reason: format!(
            "{} ranks first on {pm}, but its {}{also}",
            winner.name,
            open_words(open)
        ),
        binding: Some(binding),
        confidence: None,
    }
}

/// Why a figure bounded by the spread of its repeats has no bound: too few repeats.
pub(crate) fn repeats_words(r: u32) -> String {
    format!(
        "its bound comes from how the repeats differ, and it takes {r} repeats or more to have one"
    )
}

/// `tpot_p95_ms ≤ 30 cannot be decided from 18 requests (13.7; 95% bound: none): about 59
/// would decide it`.
pub(crate) fn open_words(k: &SloCheck) -> String {
    let side = match k.metric.direction() {
        Direction::LowerIsBetter => "≤",
        Direction::HigherIsBetter => "≥",
    };
    let needed = match (k.value, k.needed_requests, k.needed_repeats) {
        (None, ..) => String::new(),
        (_, Some(n), _) => format!("; about {n} requests would decide it"),
        (_, None, Some(r)) => format!("; {}", repeats_words(r)),
        (_, None, None) => "; no number of requests decides a value this close to the limit".into(),
    };
    if k.value.is_none() {
        return format!(
            "{} {side} {} cannot be decided: {}",
            k.metric,
            fmt_num(k.limit),
            k.basis
        );
    }
    format!(
        "{} {side} {} cannot be decided from its data ({} measured; {}{needed})",
        k.metric,
        fmt_num(k.limit),
        k.value.map_or_else(|| "none".into(), fmt_num),
        k.basis
    )
}

/// `tune`: every candidate misses an SLO with confidence; the binding SLO says which limit is
/// closest.
fn no_feasible(contenders: &[Contender<'_>]) -> Verdict {
    let binding = binding_slo(contenders);
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
        decision: ProfileDecision::Tune,
        recommended: None,
        reason,
        binding,
        confidence: None,
    }
}

fn binding_slo(contenders: &[Contender<'_>]) -> Option<BindingSlo> {
    // Worst relative miss of each candidate; unmeasured counts as an infinite miss.
    let worst = |cs: &[SloCheck]| -> Option<(f64, SloCheck)> {
        cs.iter()
            .filter(|c| c.outcome == SloOutcome::Fail)
            .map(|c| {
                let rel = match c.margin {
                    Some(m) => -m / c.limit.abs().max(f64::MIN_POSITIVE),
                    None => f64::INFINITY,
                };
                (rel, c.clone())
            })
            .max_by(|a, b| a.0.total_cmp(&b.0))
    };
    let (ci, (rel, check)) = contenders
        .iter()
        .enumerate()
        .filter_map(|(i, c)| worst(c.checks).map(|w| (i, w)))
        .min_by(|a, b| a.1 .0.total_cmp(&b.1 .0))?;
    Some(BindingSlo {
        metric: check.metric,
        limit: check.limit,
        candidate: contenders[ci].name.to_string(),
        value: check.value,
        missed_by: check.margin.map(|m| -m),
        missed_by_ratio: (rel.is_finite() && check.limit != 0.0).then_some(rel),
        outcome: SloOutcome::Fail,
        needed_requests: None,
        needed_repeats: None,
    })
}

/// How an interval was computed, for the statement.
fn basis(iv: &Interval) -> String {
    let what = if iv.method == crate::base::stats::IntervalMethod::TOverRepeats {
        "repeats"
    } else {
        "values"
    };
    format!("{} over {} {what}", iv.method.describe(), iv.n)
}

fn span(iv: &Interval) -> String {
    crate::base::fmt::interval(iv.low, iv.high)
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
                "{wname} cannot be told apart from {r} on {pm}: 95% intervals {} and {} overlap ({})",
                span(&w), span(&ri), basis(&w)
            ),
        ),
        (Some(r), Some(ri)) => (
            true,
            format!(
                "{wname} is ahead of {r} on {pm}: 95% intervals {} and {} do not overlap ({})",
                span(&w), span(&ri), basis(&w)
            ),
        ),
        (Some(r), None) => (
            false,
            format!(
                "{wname}: 95% interval {} ({}); {r} has no interval on {pm}",
                span(&w), basis(&w)
            ),
        ),
        (None, _) => (
            true,
            format!(
                "{wname} is the only candidate not shown to miss an SLO: 95% interval {} ({})",
                span(&w), basis(&w)
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
