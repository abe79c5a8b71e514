//! The search's answer: the pick (frozen at the first confirmation), why every other measured
//! configuration is not it, and what the fresh launches said.

use super::{apart, bound, frozen, pick, standing, sure, tier, Standing, LIKELY};
use crate::analyse::explore::{Dropped, Estimate, Explorer, Outcome, Purpose, SearchResult};
use crate::base::fmt::format_number;
use crate::check::space::Config;

/// The answer so far.
pub(in crate::analyse::explore) fn result(e: &Explorer) -> SearchResult {
    let confirming = e.trials.iter().any(|t| t.purpose == Purpose::Confirm);
    let (chosen, rival, sure) = if confirming {
        let (c, r) = frozen(e);
        let sure = matches!(c.as_ref().and_then(|c| e.known.get(c)), Some(Outcome::Measured { evidence }) if evidence.meets_all());
        (c, r, sure)
    } else {
        pick(e)
    };
    let (confirmed, confirmation) = confirmation(e, chosen.as_ref(), rival.as_ref());
    let dropped = e
        .known
        .keys()
        .filter_map(|c| match standing(e, c) {
            Standing::Out(reason) => Some(Dropped {
                name: e.space.name(c),
                reason,
            }),
            Standing::Alive if Some(c) != chosen.as_ref() => Some(Dropped {
                name: e.space.name(c),
                reason: not_chosen(e, c, chosen.as_ref()),
            }),
            Standing::Alive => None,
        })
        .collect();
    SearchResult {
        chosen_name: chosen.as_ref().map(|c| e.space.name(c)),
        chosen,
        chosen_meets_all: sure,
        rival,
        confirmed,
        confirmation,
        dropped,
        launches: e.launches_used(),
        requests: e.requests_spent(),
        configurations: e.space.configs.len(),
    }
}

/// Why a configuration still in the running is not the pick: `not chosen: tpot_p95_ms 33.1
/// (95 % interval 31.9–35.2) against the pick's 32.9 (32.2–34.5): not apart with confidence,
/// the pick's point estimate better`.
fn not_chosen(e: &Explorer, c: &Config, chosen: Option<&Config>) -> String {
    let est = |c: &Config| match e.known.get(c) {
        Some(Outcome::Measured { evidence }) => evidence.primary,
        _ => None,
    };
    let (Some(mine), Some(pick)) = (est(c), chosen.and_then(est)) else {
        return "not chosen: no pick to compare it with".into();
    };
    let tiers = chosen.map(|p| (tier(e, p), tier(e, c)));
    // From walk 6 a better point estimate gives way to a pick sure of its SLOs that it cannot
    // be told from.
    let gave_way = chosen.is_some_and(|p| {
        e.settings.walk >= 6
            && sure(e, p)
            && !sure(e, c)
            && !apart(e, c, p)
            && mine.score(e.primary).0 < pick.score(e.primary).0
    });
    let why = match tiers {
        _ if gave_way => "its point estimate better but not apart with confidence; the pick \
                          meets every SLO with confidence, it does not"
            .into(),
        Some((0, t)) if t > 0 && e.settings.walk >= 4 => format!(
            "the pick meets every SLO with a chance of {} % or more by its intervals, it does not",
            format_number(100.0 * LIKELY)
        ),
        Some((0, t)) if t > 0 => "the pick meets every SLO with confidence, it does not".into(),
        Some((1, 2)) => "the pick meets every SLO by its point estimates, it does not".into(),
        _ if mine.score(e.primary).0 == pick.score(e.primary).0 => {
            "level with the pick (a tie goes to the first in the space's order)".into()
        }
        _ => "not apart with confidence, the pick's point estimate better".into(),
    };
    format!(
        "not chosen: {} {} against the pick's {}: {why}",
        e.primary,
        estimate_words(&mine),
        estimate_words(&pick)
    )
}

/// Whether the fresh launches upheld the pick: the chosen configuration served, missed no SLO
/// with confidence, and its rival did not beat it on the primary metric with confidence.
fn confirmation(
    e: &Explorer,
    chosen: Option<&Config>,
    rival: Option<&Config>,
) -> (Option<bool>, Option<String>) {
    let fresh = |c: &Config| {
        e.trials
            .iter()
            .find(|t| t.purpose == Purpose::Confirm && &t.config == c)
            .map(|t| &t.outcome)
    };
    let Some(mine) = chosen.and_then(fresh) else {
        return (None, None);
    };
    let evidence = match mine {
        Outcome::Infeasible { reason } => {
            return (
                Some(false),
                Some(format!("the fresh launch failed: {reason}")),
            )
        }
        Outcome::Measured { evidence } => evidence,
    };
    if let Some(s) = evidence.missed() {
        return (
            Some(false),
            Some(format!(
                "the fresh launch misses {} with confidence",
                s.metric
            )),
        );
    }
    let theirs = rival.and_then(fresh);
    let beaten = match (evidence.primary, theirs) {
        (Some(p), Some(Outcome::Measured { evidence: r })) => r.primary.is_some_and(|q| {
            let (_, lo, _) = p.score(e.primary);
            let (_, _, hi) = q.score(e.primary);
            matches!((hi, lo), (Some(h), Some(l)) if h < l)
        }),
        _ => false,
    };
    // A rival whose fresh launch measured better, though not with confidence: a tie, said.
    let tied = match (evidence.primary, theirs) {
        (Some(p), Some(Outcome::Measured { evidence: r })) => r
            .primary
            .filter(|q| q.score(e.primary).0 < p.score(e.primary).0)
            .map(|q| {
                format!(
                    "; its rival's fresh launch measured {} {} against its {}, not apart with \
                     confidence (a tie)",
                    e.primary,
                    estimate_words(&q),
                    estimate_words(&p)
                )
            }),
        _ => None,
    };
    if beaten {
        return (
            Some(false),
            Some(format!(
                "on fresh launches the rival beats it on {} with confidence",
                e.primary
            )),
        );
    }
    (
        Some(true),
        Some(format!(
            "held on a fresh launch ({} requests, {}){}",
            evidence.requests,
            if evidence.meets_all() {
                "every SLO met with confidence"
            } else {
                "no SLO missed with confidence, not every one decided"
            },
            tied.unwrap_or_default()
        )),
    )
}

/// `32.94 (95 % interval 32.25–34.48)`.
fn estimate_words(x: &Estimate) -> String {
    format!(
        "{} (95 % interval {}–{})",
        format_number(x.value),
        bound(x.lo),
        bound(x.hi)
    )
}
