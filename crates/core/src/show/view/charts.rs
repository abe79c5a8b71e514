//! What each chart of a profile draws, decided here rather than in the page: its caption, and
//! which SLO limits apply (a line is drawn only for a limit on the chart's own axis; the
//! capacity chart plots the SLO the best candidate failed on at its first failing load, else
//! the first one checked).

use crate::analyse::report::ProfileReport;
use crate::base::metric::{Direction, Metric};

use crate::base::metric::{Quantity, Stat};

use super::types::{CdfCaptions, ChartKind, ChartsView, Shown, SloLine, TrafficCaptions};

fn limit(p: &ProfileReport, m: Metric) -> Option<SloLine> {
    p.slo.iter().find(|s| s.metric == m).map(|s| SloLine {
        metric: m,
        limit: s.limit,
        higher_is_better: s.direction == Direction::HigherIsBetter,
    })
}

/// The SLO metric the capacity chart plots against load.
fn capacity_metric(p: &ProfileReport) -> Option<Metric> {
    let cap = p.capacity.as_ref()?;
    let best = cap
        .best
        .as_ref()
        .and_then(|b| cap.candidates.iter().find(|c| &c.name == b))
        .or(cap.candidates.first())?;
    let failing = best
        .first_fail
        .and_then(|ff| best.trials.iter().find(|t| t.load == ff && !t.pass))
        .and_then(|t| t.binding);
    failing.or_else(|| {
        best.trials
            .first()
            .and_then(|t| t.checks.first().map(|k| k.metric))
    })
}

/// The profile's charts.
pub(crate) fn charts(p: &ProfileReport) -> ChartsView {
    let ttft = limit(p, Metric::TTFT_P95);
    let tps = limit(p, Metric::THROUGHPUT);
    let lines: Vec<String> = [&ttft, &tps]
        .into_iter()
        .flatten()
        .map(|l| l.metric.name())
        .collect();
    let slo = if lines.is_empty() {
        "no SLO on either axis".to_string()
    } else {
        format!("SLO line for {}", lines.join(" and "))
    };
    let capacity_slo = capacity_metric(p).and_then(|m| limit(p, m));
    let capacity_caption = p.capacity.as_ref().map(|_| match &capacity_slo {
        Some(l) => format!(
            "{}: {} against load per candidate, SLO limit dashed, failing trials ringed, each knee (last passing load) marked",
            p.profile,
            l.metric.name()
        ),
        None => format!("{}: capacity search (no SLO metric measured)", p.profile),
    });
    let first = first_charts(p);
    ChartsView {
        slo_caption: Shown::new(slo_caption(p)),
        tradeoff_caption: Shown::new(format!(
            "{}: TTFT p95 vs output throughput per candidate, {slo}, Pareto front dashed (ringed when one candidate is best on both), the primary metric's 95 % interval as a bar where it is an axis",
            p.profile
        )),
        tradeoff_ttft: ttft.clone(),
        tradeoff_throughput: tps,
        capacity_caption: capacity_caption.map(Shown::new),
        capacity_throughput_caption: p.capacity.as_ref().map(|_| {
            Shown::new(format!(
                "{}: output throughput against load per candidate, each knee marked",
                p.profile
            ))
        }),
        capacity_slo,
        search_caption: p.search.as_ref().map(|s| Shown::new(search_caption(p, s))),
        search_knobs_caption: p.search.as_ref().map(|s| Shown::new(search_knobs_caption(p, s))),
        search_space_caption: p
            .search
            .as_ref()
            .filter(|s| !s.front.is_empty())
            .map(|s| Shown::new(search_space_caption(p, s))),
        search_slo: p.search.as_ref().and_then(|s| limit(p, s.primary)),
        turns_caption: turns_caption(p, ttft.as_ref()).map(Shown::new),
        cdf_captions: CdfCaptions {
            ttft: Shown::new(cdf_caption(p, Quantity::Ttft, "TTFT")),
            tpot: Shown::new(cdf_caption(p, Quantity::Tpot, "TPOT")),
            e2e: Shown::new(cdf_caption(p, Quantity::E2e, "end-to-end")),
        },
        baseline_caption: p.baseline.as_ref().map(|_| {
            Shown::new(format!(
                "{}: quantized / float ratio per metric (1 = the float model's), the line through each bar the 95% interval of the difference over the float value, only the ends the data give",
                p.profile
            ))
        }),
        traffic_captions: traffic_captions(p),
        first: first.0,
        first_reason: Shown::new(first.1),
    }
}

/// The search chart's caption.
fn search_caption(p: &ProfileReport, s: &crate::analyse::explore::record::SearchReport) -> String {
    format!(
        "{}: the configuration search in the order it ran — {} of each trial with its 95 % interval (pooled over the configuration's trials so far; no whisker on a side the data do not bound), the pick in its own colour, confirmations hollow, infeasible launches crossed at the bottom{}",
        p.profile,
        s.primary.name(),
        if limit(p, s.primary).is_some() { ", SLO limit dashed" } else { "" }
    )
}

/// The knob-by-knob chart's caption.
fn search_knobs_caption(
    p: &ProfileReport,
    s: &crate::analyse::explore::record::SearchReport,
) -> String {
    format!(
        "{}: {} against each knob ({}) — one panel per knob, each configuration measured at its value of that knob (pooled over its trials but the confirmation, point estimates), the pick in its own colour, infeasible launches crossed at the bottom{}",
        p.profile,
        s.primary.name(),
        s.knobs.join(", "),
        if limit(p, s.primary).is_some() { ", SLO limit dashed" } else { "" }
    )
}

/// The memory trade-off chart's caption.
fn search_space_caption(
    p: &ProfileReport,
    s: &crate::analyse::explore::record::SearchReport,
) -> String {
    let infeasible = s.trials.iter().filter(|t| t.infeasible.is_some()).count();
    format!(
        "{}: the explored space — each configuration measured, {} (pooled over its trials but the confirmation, with its 95 % interval) against its highest peak memory; the configurations no other beats on both joined (point estimates), the pick in its own colour{}{}",
        p.profile,
        s.primary.name(),
        if limit(p, s.primary).is_some() { ", SLO limit dashed" } else { "" },
        match infeasible {
            0 => String::new(),
            n => format!("; {n} infeasible launch(es) have no memory to place and are not drawn"),
        }
    )
}

/// The metric that decides the profile: the binding SLO when none met every SLO, else the
/// chosen candidate's tightest SLO, else the primary metric.
fn deciding(p: &ProfileReport) -> Option<Metric> {
    if let Some(b) = &p.binding_slo {
        return Some(b.metric);
    }
    let chosen = p.candidates.iter().find(|c| c.chosen);
    chosen
        .and_then(super::headline::tightest)
        .map(|k| k.metric)
        .or_else(|| p.primary_metric.as_deref().and_then(Metric::parse))
}

/// The charts shown unfolded and why: the SLO chart, then the one that draws the deciding
/// metric (its distribution for a latency, the capacity chart when a capacity search ran on
/// it, else the trade-off chart).
fn first_charts(p: &ProfileReport) -> (Vec<ChartKind>, String) {
    let mut first = vec![ChartKind::Slo];
    if p.search.is_some() {
        first.push(ChartKind::Search);
        return (
            first,
            "decided by a configuration search: the SLO chart of its pick's fresh launch and the search's path first".into(),
        );
    }
    let Some(m) = deciding(p) else {
        first.push(ChartKind::Tradeoff);
        return (
            first,
            "no deciding metric: the SLO chart and the trade-off first".into(),
        );
    };
    let second = match m {
        _ if p.capacity.is_some() && capacity_metric(p) == Some(m) => ChartKind::Capacity,
        Metric::Latency(Quantity::Ttft, _) => ChartKind::CdfTtft,
        Metric::Latency(Quantity::Tpot, _) => ChartKind::CdfTpot,
        Metric::Latency(Quantity::E2e, _) => ChartKind::CdfE2e,
        _ => ChartKind::Tradeoff,
    };
    first.push(second);
    let name = m.short();
    let reason = match second {
        ChartKind::Capacity => {
            format!("decided by {name}: the SLO chart and {name} against load first")
        }
        ChartKind::Tradeoff if matches!(m, Metric::THROUGHPUT | Metric::TTFT_P95) => format!(
            "decided by {name}: the SLO chart and the TTFT–throughput trade-off that draws it first"
        ),
        ChartKind::Tradeoff => {
            format!("decided by {name}, drawn in the SLO chart; the TTFT–throughput trade-off next")
        }
        _ => format!("decided by {name}: the SLO chart and its distribution first"),
    };
    (first, reason)
}

/// A CDF's caption: one curve per candidate (and the float baseline), drawn from every
/// successful request (n in the legend), and the percentile SLOs on this quantity marked
/// where the curve must reach their level left of their limit.
fn cdf_caption(p: &ProfileReport, q: Quantity, name: &str) -> String {
    let marks: Vec<String> = p
        .slo
        .iter()
        .filter_map(|s| match s.metric {
            Metric::Latency(x, stat) if x == q && s.direction == Direction::LowerIsBetter => {
                let level = match stat {
                    Stat::P50 => "0.5",
                    Stat::P90 => "0.9",
                    Stat::P95 => "0.95",
                    Stat::P99 => "0.99",
                    _ => return None,
                };
                (s.limit > 0.0).then(|| {
                    format!(
                        "{} ≤ {} ms marked (the curve must reach {level} left of it)",
                        s.metric.name(),
                        crate::base::fmt::format_number(s.limit)
                    )
                })
            }
            _ => None,
        })
        .collect();
    let slo = if marks.is_empty() {
        format!("no percentile SLO on {name}")
    } else {
        format!("SLO {}", marks.join("; "))
    };
    format!(
        "{}: {name} CDF per candidate, from every successful request (n in the legend); {slo}",
        p.profile
    )
}

fn traffic_captions(p: &ProfileReport) -> TrafficCaptions {
    let who = &p.profile;
    TrafficCaptions {
        prefill: Shown::new(format!(
            "{who}: TTFT against prompt length (median per bin of equal count; p90 dashed)"
        )),
        prompt: Shown::new(format!("{who}: prompt tokens measured, per request")),
        output: Shown::new(format!("{who}: output tokens measured, per request")),
        gaps: Shown::new(format!(
            "{who}: gaps between sends (the arrival process as sent)"
        )),
    }
}

/// The SLO chart's caption: which SLOs it draws, which it cannot (a limit of 0 is a rule, not a
/// share) and how the verdict reads off it.
fn slo_caption(p: &ProfileReport) -> String {
    let rules: Vec<String> = p
        .slo
        .iter()
        .filter(|s| s.limit == 0.0)
        .map(|s| s.metric.name())
        .collect();
    let rules = match rules.len() {
        0 => String::new(),
        _ => format!(
            "; {} (limit 0, a rule: no request may fail) is in the table, not drawn",
            rules.join(", ")
        ),
    };
    format!(
        "{}: what decides — each SLO of each candidate as a share of its limit (1 = the limit), a dot for the value and a bar for its one-sided 95% bounds: met when the whole bar is left of the dashed line, missed when it is right of it, undecided when it crosses it or has an open end{rules}",
        p.profile
    )
}

/// The TTFT-by-turn chart's caption: only when some candidate's runs had sessions.
fn turns_caption(p: &ProfileReport, ttft: Option<&SloLine>) -> Option<String> {
    let sessions = p.candidates.iter().any(|c| {
        c.summary
            .as_ref()
            .is_some_and(|s| !s.signals.by_turn.is_empty())
    });
    let slo = match ttft {
        Some(_) => "SLO limit dashed",
        None => "no TTFT p95 SLO",
    };
    sessions.then(|| {
        format!(
            "{}: TTFT p95 by turn of a session per candidate (later turns resend the conversation so far; a prefix cache makes them cheaper), {slo}",
            p.profile
        )
    })
}
