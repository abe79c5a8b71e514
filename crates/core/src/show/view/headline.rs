//! The answer first: one headline per profile (decision, configuration, primary metric with
//! its interval, the binding or tightest SLO) and the caveats that weaken it.

use crate::analyse::report::{Analysis, CandidateReport, ProfileReport};
use crate::base::fmt::{format_number, with_unit};
use crate::base::metric::Metric;

use super::setting;

/// `ttft_p95_ms 457.83 ms (95% 430.1–480.2)`: a candidate's primary metric with its interval.
fn primary_with_interval(p: &ProfileReport, c: &CandidateReport) -> Option<String> {
    let name = p.primary_metric.as_deref()?;
    let unit = Metric::parse(name).map_or("", Metric::unit);
    let value = with_unit(c.primary_value, unit);
    Some(match &c.primary_interval {
        Some(i) => format!(
            "{name} {value} {}",
            crate::base::fmt::interval_note(i, interval_unit(i))
        ),
        None => format!("{name} {value}"),
    })
}

/// What an interval's `n` counts.
pub(crate) fn interval_unit(i: &crate::base::stats::Interval) -> &'static str {
    use crate::base::stats::IntervalMethod as M;
    match i.method {
        M::TOverRepeats | M::Welch => "repeats",
        _ => "values",
    }
}

/// The SLO check closest to its limit, relative to the limit.
pub(super) fn tightest(c: &CandidateReport) -> Option<&crate::analyse::verdict::SloCheck> {
    // Relative to the limit; a limit of 0 (no failures allowed) has no relative margin and
    // is ranked after every other limit.
    let rel = |k: &crate::analyse::verdict::SloCheck| {
        k.margin.map(|m| {
            if k.limit != 0.0 {
                m / k.limit.abs()
            } else {
                f64::MAX
            }
        })
    };
    c.slo_checks
        .iter()
        .filter(|k| rel(k).is_some())
        .min_by(|a, b| {
            rel(a)
                .partial_cmp(&rel(b))
                .unwrap_or(std::cmp::Ordering::Equal)
        })
}

/// ` (95% bound ≤ 131.84)`: the one-sided bound a met SLO rests on, or how it was decided
/// where no sampling bound applies.
fn bound_note(k: &crate::analyse::verdict::SloCheck) -> String {
    use crate::base::metric::Direction;
    let bound = match k.metric.direction() {
        Direction::LowerIsBetter => k.upper_bound.map(|b| format!("≤ {}", format_number(b))),
        Direction::HigherIsBetter => k.lower_bound.map(|b| format!("≥ {}", format_number(b))),
    };
    if k.basis.starts_with("one-sided") {
        bound
            .map(|b| format!(" (95% bound {b})"))
            .unwrap_or_default()
    } else {
        String::new()
    }
}

/// `latency: INCOMPLETE · not measured: candidate np4 (…) · of the measured only, np1 ranks
/// first (provisional)`.
fn incomplete(p: &ProfileReport) -> String {
    let label = super::decision_label(p);
    let mut parts = vec![format!("{}: {label}", p.profile)];
    if p.missing.is_empty() {
        parts.push(p.reason.clone());
    } else {
        let cells: Vec<String> = p
            .missing
            .iter()
            .map(|m| format!("{} {} ({})", m.kind.as_str(), m.name, m.reason))
            .collect();
        parts.push(format!("not measured: {}", cells.join("; ")));
    }
    if let Some(v) = &p.provisional {
        parts.push(match &v.recommended {
            Some(r) => format!(
                "of the measured only, {r} ranks first (provisional: {} over what was measured)",
                v.decision.label().to_lowercase()
            ),
            None => format!(
                "what was measured alone gives {} (provisional)",
                v.decision.label().to_lowercase()
            ),
        });
    }
    parts.join(" · ")
}

/// `balanced: NOT ENOUGH DATA · np4 ranks first on tpot_p95_ms · tpot_p95_ms ≤ 40 ms
/// undecided: 40.05 ms (95% from 30.77, no upper bound) · about 145 requests would decide it`.
fn undecided(p: &ProfileReport) -> String {
    let label = super::decision_label(p);
    let mut parts = vec![format!("{}: {label}", p.profile)];
    let Some(b) = &p.binding_slo else {
        parts.push(p.reason.clone());
        return parts.join(" · ");
    };
    let first = p.candidates.iter().find(|c| c.name == b.candidate);
    let primary = p.primary_metric.as_deref().unwrap_or("its primary metric");
    parts.push(format!("{} ranks first on {primary}", b.candidate));
    let k = first.and_then(|c| c.slo_checks.iter().find(|k| k.metric == b.metric));
    if let Some(k) = k {
        let unit = k.metric.unit();
        let op = match k.metric.direction() {
            crate::base::metric::Direction::LowerIsBetter => "≤",
            crate::base::metric::Direction::HigherIsBetter => "≥",
        };
        parts.push(format!(
            "{} {op} {} undecided: {} {}",
            k.metric,
            with_unit(Some(k.limit), unit),
            with_unit(k.value, unit),
            one_sided(k),
        ));
    }
    parts.push(match (b.value, b.needed_requests, b.needed_repeats) {
        (None, ..) => "the run holds no value for it".into(),
        (_, Some(n), _) => format!("about {n} requests would decide it"),
        (_, None, Some(r)) => crate::analyse::verdict::repeats_words(r),
        (_, None, None) => "no number of requests decides a value this close to its limit".into(),
    });
    parts.join(" · ")
}

/// `(one-sided 95% bounds: ≥ 31.79; no upper bound)`.
fn one_sided(k: &crate::analyse::verdict::SloCheck) -> String {
    let lo = k.lower_bound.map_or_else(
        || "no lower bound".into(),
        |v| format!("≥ {}", format_number(v)),
    );
    let hi = k.upper_bound.map_or_else(
        || "no upper bound".into(),
        |v| format!("≤ {}", format_number(v)),
    );
    format!("(one-sided 95% bounds: {lo}; {hi})")
}

fn percent(r: f64) -> String {
    format!("{}%", format_number(100.0 * r))
}

pub(super) fn headline(p: &ProfileReport) -> String {
    use crate::analyse::verdict::ProfileDecision as D;
    match p.decision {
        D::Incomplete if !p.summaries_only => return incomplete(p),
        D::NotEnoughData if !p.summaries_only => return undecided(p),
        _ => {}
    }
    if let Some(h) = capacity_headline(p) {
        return h;
    }
    let label = super::decision_label(p);
    let chosen = p.candidates.iter().find(|c| c.chosen);
    let mut parts = vec![format!("{}: {label}", p.profile)];
    if let Some(c) = chosen {
        parts.push(format!("{} {}", c.name, setting(c)));
        parts.extend(primary_with_interval(p, c));
        if let Some(k) = tightest(c) {
            let unit = k.metric.unit();
            let rel = k
                .margin
                .filter(|_| k.limit != 0.0)
                .map(|m| format!(" ({} of it)", percent(m / k.limit.abs())))
                .unwrap_or_default();
            let side = match k.metric.direction() {
                crate::base::metric::Direction::LowerIsBetter => "below",
                crate::base::metric::Direction::HigherIsBetter => "above",
            };
            parts.push(format!(
                "tightest SLO {} {}{} against {}: {} {side} the limit{rel}",
                k.metric,
                with_unit(k.value, unit),
                bound_note(k),
                with_unit(Some(k.limit), unit),
                with_unit(k.margin, unit),
            ));
        }
    } else if let Some(b) = &p.binding_slo {
        let closest = p.candidates.iter().find(|c| c.name == b.candidate);
        parts.push(format!("none meets every SLO; closest {}", b.candidate));
        parts.extend(closest.and_then(|c| primary_with_interval(p, c)));
        let unit = b.metric.unit();
        parts.push(format!(
            "binding SLO {} {} against {}{}",
            b.metric,
            with_unit(b.value, unit),
            with_unit(Some(b.limit), unit),
            b.missed_by_ratio
                .map(|r| format!(": missed by {}", percent(r)))
                .unwrap_or_default()
        ));
    } else {
        parts.push(p.reason.clone());
    }
    parts.join(" · ")
}

/// What a reader does next, from the decision: deploy what was accepted, retest as the tune
/// advice says, measure the missing cells or as many requests as would decide. `None` for
/// other tools' summaries (no verdict) and a reject with no advice.
pub(super) fn next_step(p: &ProfileReport) -> Option<String> {
    use crate::analyse::report::Code;
    use crate::analyse::verdict::ProfileDecision as D;
    if p.summaries_only {
        return None;
    }
    let advice = || {
        p.flags
            .iter()
            .find(|f| f.code == Code::NextStep)
            .map(|f| f.message.clone())
    };
    match p.decision {
        D::Accept => p
            .candidates
            .iter()
            .find(|c| c.chosen)
            .map(|c| format!("deploy {} {} for this profile", c.name, setting(c))),
        D::Tune | D::Reject => advice(),
        D::Incomplete if !p.missing.is_empty() => Some(format!(
            "{} and analyze again; nothing is decided before",
            measure_missing(&p.missing)
        )),
        D::Incomplete => unjudged_remedy(&p.reason).map(|r| format!("{r}, and analyze again")),
        D::NotEnoughData => Some(match p.binding_slo.as_ref().map(|b| (b, b.needed_requests)) {
            Some((b, _)) if b.value.is_none() => format!(
                "measure {} with per-request data (sloscope run, or the tool's per-request file): its run holds no {}; analyze again",
                b.candidate, b.metric
            ),
            Some((_, Some(n))) => format!("measure about {n} requests per candidate and analyze again"),
            Some((b, None)) if b.needed_repeats.is_some() => format!(
                "measure {} again, with {} repeats or more (its bound comes from how the repeats differ), and analyze again",
                b.candidate,
                b.needed_repeats.unwrap_or(2)
            ),
            Some((_, None)) => "the value sits at its limit, where no number of requests decides it: change the configuration".into(),
            None => format!(
                "measure {} with per-request data (sloscope run, or the tool's per-request file) and analyze again",
                unmeasured(p)
            ),
        }),
    }
}

/// The candidates with no value for the primary metric, listed.
fn unmeasured(p: &ProfileReport) -> String {
    let names: Vec<&str> = p
        .candidates
        .iter()
        .filter(|c| c.primary_value.is_none())
        .map(|c| c.name.as_str())
        .collect();
    match names.as_slice() {
        [] => "the candidates".into(),
        n => n.join(", "),
    }
}

/// What to measure for the missing cells, each kind said once with its names: `measure
/// candidates np1, np4 and the float baseline f16; run the capacity searches of np1, np4`.
fn measure_missing(missing: &[crate::analyse::report::MissingCell]) -> String {
    use crate::analyse::report::CellKind as K;
    let names = |k: K| -> Vec<&str> {
        let mut v: Vec<&str> = missing
            .iter()
            .filter(|m| m.kind == k)
            .map(|m| m.name.as_str())
            .collect();
        v.dedup();
        v
    };
    let list = |v: &[&str]| v.join(", ");
    let mut measure = Vec::new();
    match names(K::Candidate).as_slice() {
        [] => {}
        [one] => measure.push(format!("candidate {one}")),
        many => measure.push(format!("candidates {}", list(many))),
    }
    if let [b, ..] = names(K::Baseline).as_slice() {
        measure.push(format!("the float baseline {b}"));
    }
    let mut parts = Vec::new();
    if !measure.is_empty() {
        parts.push(format!(
            "measure {} (planned, no usable run)",
            measure.join(" and ")
        ));
    }
    match names(K::Trials).as_slice() {
        [] => {}
        [one] => parts.push(format!("run the capacity search of {one}")),
        many => parts.push(format!("run the capacity searches of {}", list(many))),
    }
    if !names(K::Search).is_empty() {
        parts.push(
            "complete the configuration search (`sloscope run` with the same --out resumes it; \
             a trial file left out must be the one the search wrote)"
                .into(),
        );
    }
    parts.join("; ")
}

/// What lets a profile that could not be judged be judged: one plan, a plan that defines the
/// profile, the lineage records (`None` for a reason without a remedy here).
fn unjudged_remedy(reason: &str) -> Option<&'static str> {
    if reason.contains("different plans loaded") {
        Some("load one plan, the one the runs were collected under")
    } else if reason.contains("the profile definition is invalid") {
        Some("load the plan the runs were collected under (or define this profile in it)")
    } else if reason.contains("the quality gate record cannot be believed") {
        Some("measure the quality gate again (sloscope gate) and load its record beside the runs")
    } else if reason.contains("the lineage is not complete") {
        Some("load the quality-gate, float-baseline and deployment records beside the runs")
    } else {
        None
    }
}

/// The headline without its leading `profile: DECISION · `, which a card shows apart, with
/// each metric's identifier (`ttft_p95_ms`, kept for [`card_ids`]) said by its short name
/// (`TTFT p95`).
pub(super) fn card_line(p: &ProfileReport) -> String {
    human(&card_ids(p))
}

/// The card's line with the metrics' identifiers, shown on hover.
pub(super) fn card_ids(p: &ProfileReport) -> String {
    let line = headline(p);
    let prefix = format!("{}: {} · ", p.profile, super::decision_label(p));
    match line.strip_prefix(&prefix) {
        Some(rest) => rest.to_string(),
        None => line,
    }
}

/// `line` with every metric identifier replaced by its short name (longest first, so
/// `ttft_p95_ms` is never half-replaced by a shorter name).
fn human(line: &str) -> String {
    let mut names = Metric::all_names();
    crate::base::order::sort_by_key(&mut names, |n| std::cmp::Reverse(n.len()));
    let mut out = line.to_string();
    for n in names {
        if let Some(m) = Metric::parse(&n) {
            out = out.replace(&n, &m.short());
        }
    }
    out
}

/// What weakens every verdict: the lineage's warnings, said once.
pub(super) fn report_caveats(a: &Analysis) -> Vec<String> {
    use crate::base::problem::ProblemCode;
    let mut out: Vec<String> = a.completeness_unchecked.iter().cloned().collect();
    out.extend(apart_caveat(a));
    let unchecked: Vec<&str> = a
        .lineage
        .warnings
        .iter()
        .filter(|w| w.code == ProblemCode::NotRecorded)
        .map(|w| w.field.as_str())
        .collect();
    if !unchecked.is_empty() {
        out.push(format!(
            "lineage: not recorded, so not checked: {}",
            unchecked.join(", ")
        ));
    }
    out.extend(
        a.lineage
            .warnings
            .iter()
            .filter(|w| w.code != ProblemCode::NotRecorded)
            .map(|w| format!("lineage: {}", w.message)),
    );
    out
}

/// Runs of another lineage than the records are left out of every verdict: said once above
/// them, with how many of the runs that is (the header names the records' artifact and, beside
/// it, the runs' own).
fn apart_caveat(a: &Analysis) -> Option<String> {
    let apart = &a.lineage.runs_apart;
    let first = apart.first()?;
    let total = a.subject.runs;
    Some(format!(
        "{} of the {total} run(s) are of another lineage than the records and are left out of \
         every verdict{} (the first, {}: {})",
        apart.len(),
        if apart.len() == total {
            ": nothing below was judged on them"
        } else {
            ""
        },
        first.file,
        first.problem.message
    ))
}

/// What weakens one profile's verdict, one line each.
pub(super) fn caveats(p: &ProfileReport) -> Vec<String> {
    use crate::analyse::report::Code;
    let mut out = Vec::new();
    let simulated: Vec<&str> = p
        .candidates
        .iter()
        .filter(|c| c.evidence_level == crate::schema::EvidenceLevel::CpuProfileSimulation)
        .map(|c| c.name.as_str())
        .collect();
    if !simulated.is_empty() {
        out.push(format!(
            "simulation evidence (never accepted): {}",
            simulated.join(", ")
        ));
    }
    let shown: Vec<&crate::analyse::report::Flag> = p
        .flags
        .iter()
        .filter(|f| {
            matches!(
                f.code,
                Code::Invariant(_)
                    | Code::LaterRepeatsFaster
                    | Code::PooledRuns
                    | Code::EquivalentCheaper
                    | Code::SloChanged
                    | Code::PlacedModel
            )
        })
        .collect();
    // One line per kind of flag: the first in full, the others counted (each is listed in the
    // profile's section), so the answer stays on the first screen.
    for group in shown.chunk_by(|a, b| a.code == b.code) {
        let first = group[0].message.clone();
        out.push(match group.len() {
            1 => first,
            n => {
                let mut others: Vec<&str> = group[1..]
                    .iter()
                    .filter_map(|f| f.candidate.as_deref())
                    .collect();
                others.dedup();
                format!(
                    "{first} (and {} more like it: {})",
                    n - 1,
                    others.join(", ")
                )
            }
        });
    }
    if !p.excluded.is_empty() {
        // Each name once, with how many of its runs (several trials of one configuration, or
        // two tools' files of one benchmark, share a name).
        let mut names: Vec<(&str, usize)> = Vec::new();
        for e in &p.excluded {
            match names.iter_mut().find(|(n, _)| *n == e.candidate) {
                Some((_, k)) => *k += 1,
                None => names.push((&e.candidate, 1)),
            }
        }
        let said: Vec<String> = names
            .iter()
            .map(|(n, k)| match k {
                1 => n.to_string(),
                k => format!("{n} ×{k}"),
            })
            .collect();
        out.push(format!(
            "{} run(s) not compared ({}): see below",
            p.excluded.len(),
            said.join(", ")
        ));
    }
    out
}

/// For a profile ranked by capacity: decision, configuration, its capacity and what broke the
/// SLO at the first failing load.
fn capacity_headline(p: &ProfileReport) -> Option<String> {
    let cap = p
        .capacity
        .as_ref()
        .filter(|c| c.rank_by != crate::analyse::capacity::RankBy::FixedLoad)?;
    let label = super::decision_label(p);
    let mut parts = vec![format!("{}: {label}", p.profile)];
    match cap
        .best
        .as_ref()
        .and_then(|b| cap.candidates.iter().find(|c| &c.name == b))
    {
        Some(c) => {
            if let (crate::analyse::capacity::RankBy::Goodput, Some(g), Some(l)) =
                (cap.rank_by, c.goodput_tps, c.goodput_load)
            {
                parts.push(format!(
                    "{} delivers {} tok/s within every SLO at {}",
                    c.name,
                    format_number(g),
                    crate::analyse::capacity::load_text(cap.over, l)
                ));
            }
            parts.push(format!("{} sustains {} under every SLO", c.name, c.text));
            if let Some(b) = &c.binding_at_fail {
                parts.push(format!("at the first failing load {b}"));
            }
            if let Some(n) = cap.nominal_load {
                parts.push(format!(
                    "workload load {}",
                    crate::analyse::capacity::load_text(cap.over, n)
                ));
            }
        }
        None => parts.push(cap.statement.clone()),
    }
    Some(parts.join(" · "))
}
