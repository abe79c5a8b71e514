//! One profile: the verdict card, the recomputed summary table with SLO pass/fail per cell,
//! excluded runs with reasons, the float-baseline comparison and the charts.

use std::rc::Rc;

use sloscope_core::analysis::{CandidateReport, ProfileReport, SummarySource};
use sloscope_core::metric::{Direction, Metric};
use sloscope_core::verdict::format_number;
use yew::prelude::*;

use crate::charts::{self, Quantity};
use crate::components::canvas::{drawn, Chart, DrawFn};

/// Properties of [`Profile`].
#[derive(Properties, PartialEq)]
pub struct Props {
    /// The profile.
    pub report: Rc<ProfileReport>,
    /// Redraw key.
    pub generation: usize,
}

/// Columns of the summary table.
pub const COLUMNS: [&str; 10] = [
    "ttft_p50_ms",
    "ttft_p95_ms",
    "tpot_p95_ms",
    "itl_p95_ms",
    "e2e_p95_ms",
    "queue_wait_p95_ms",
    "throughput_tps",
    "goodput_ratio",
    "failure_rate",
    "peak_memory_mb",
];

fn num(v: Option<f64>) -> String {
    v.map(format_number).unwrap_or_else(|| "–".into())
}

fn cell(p: &ProfileReport, c: &CandidateReport, col: &str) -> Html {
    let v = Metric::parse(col).and_then(|m| c.metric(m));
    let check = c.slo_checks.iter().find(|k| k.metric == col);
    let (class, mark) = match check {
        None => ("", ""),
        Some(k) if k.pass => ("pass", " ✓"),
        Some(_) => ("fail", " ✗"),
    };
    let _ = p;
    html! { <td class={classes!("num", class)} data-metric={col.to_string()}>{ num(v) }{ mark }</td> }
}

/// One profile section.
#[function_component(Profile)]
pub fn profile(props: &Props) -> Html {
    let p = props.report.clone();
    let decision = p.decision.as_str();
    let slo_text: Vec<String> = p
        .slo
        .iter()
        .map(|s| {
            let op = if s.direction == Direction::LowerIsBetter {
                "≤"
            } else {
                "≥"
            };
            format!("{} {op} {}", s.metric, format_number(s.limit))
        })
        .collect();
    let w = p.workload.clone().unwrap_or_default();
    let workload = format!(
        "workload {}: concurrency {}, prompt {} tokens, max output {} tokens, {} repeats × {} requests{}",
        w.id.clone().unwrap_or_default(),
        w.concurrency.map(|v| v.to_string()).unwrap_or("?".into()),
        w.prompt_tokens.map(|v| v.to_string()).unwrap_or("?".into()),
        w.max_output_tokens.map(|v| v.to_string()).unwrap_or("?".into()),
        w.repeats.map(|v| v.to_string()).unwrap_or("?".into()),
        w.requests_per_repeat.map(|v| v.to_string()).unwrap_or("?".into()),
        w.request_rate_rps.map(|r| format!(", Poisson {r} req/s")).unwrap_or_default(),
    );
    let chosen = p.candidates.iter().find(|c| c.chosen);
    let id = p.profile.clone();
    let chart = |kind: &str, label: String, f: DrawFn, h: u32| {
        html! { <Chart id={format!("chart-{id}-{kind}")} label={label} draw={f} generation={props.generation} height={h} /> }
    };
    let (p1, p2, p3, p4, p5) = (p.clone(), p.clone(), p.clone(), p.clone(), p.clone());
    html! {
        <section class="profile" id={format!("profile-{}", p.profile)} aria-label={format!("{} profile", p.profile)}>
            <h2>{ format!("{} profile", p.profile) }</h2>
            <div class={classes!("verdict", decision)} data-profile={p.profile.clone()}>
                <div class="decision" data-decision={decision}>{ decision.to_uppercase() }</div>
                <div class="what">
                    <div class="chosen">
                        { "Recommended: " }
                        <strong class="recommended">{ p.recommended_name.clone().unwrap_or_else(|| "none".into()) }</strong>
                        if let Some(c) = chosen {
                            { format!(" ({} = {})", c.knob.clone().unwrap_or_default(), c.value.as_ref().map(|v| v.to_string()).unwrap_or_default()) }
                        }
                    </div>
                    <div class="reason">{ p.reason.clone() }</div>
                    if let Some(b) = &p.binding_slo {
                        <div class="binding">{ format!("Binding SLO: {} limit {} — {} has {}{}", b.metric, format_number(b.limit), b.candidate,
                            b.value.map(format_number).unwrap_or_else(|| "no measurement".into()),
                            b.missed_by.map(|m| format!(", missed by {}", format_number(m))).unwrap_or_default()) }</div>
                    }
                    if let Some(c) = &p.confidence {
                        <div class="confidence">{ c.statement.clone() }</div>
                    }
                    if let Some(c) = chosen {
                        <div class="margins">{ "Margins: " }{ c.slo_checks.iter().map(|k| format!("{} {}", k.metric, k.margin.map(format_number).unwrap_or("–".into()))).collect::<Vec<_>>().join(" · ") }</div>
                    }
                </div>
            </div>
            <p class="workload">{ workload }</p>
            <p class="slo">{ "SLO: " }{ slo_text.join(", ") }{ format!("; primary metric {}", p.primary_metric.clone().unwrap_or_default()) }</p>
            if !p.contract_issues.is_empty() {
                <ul class="issues">{ for p.contract_issues.iter().map(|i| html! { <li>{ "✗ profile: " }{ i.clone() }</li> }) }</ul>
            }
            if !p.candidates.is_empty() {
                <div class="scroll">
                <table class="summary" id={format!("table-{}", p.profile)}>
                    <thead><tr>
                        <th>{ "candidate" }</th><th>{ p.knob.clone().unwrap_or("knob".into()) }</th>
                        { for COLUMNS.iter().map(|c| html! { <th class="num">{ c.to_string() }</th> }) }
                        <th>{ "ok / sent" }</th><th>{ "evidence" }</th><th>{ "SLO" }</th>
                    </tr></thead>
                    <tbody>
                    { for p.candidates.iter().map(|c| html! {
                        <tr class={classes!(c.chosen.then_some("chosen"))} data-candidate={c.name.clone()}>
                            <th scope="row">{ c.name.clone() }{ if c.chosen { " ★" } else { "" } }</th>
                            <td>{ c.value.as_ref().map(|v| v.to_string()).unwrap_or("–".into()) }</td>
                            { for COLUMNS.iter().map(|col| cell(&p, c, col)) }
                            <td class="num">{ c.summary.as_ref().map(|s| format!("{}/{}", s.requests_ok, s.requests_sent)).unwrap_or("reported".into()) }</td>
                            <td>{ c.evidence_level.as_str() }{ if c.source == SummarySource::Reported { " (as reported)" } else { "" } }</td>
                            <td class={if c.meets_slo { "pass" } else { "fail" }}>{ if c.meets_slo { "pass" } else { "fail" } }</td>
                        </tr>
                    }) }
                    </tbody>
                </table>
                </div>
            }
            { for p.candidates.iter().flat_map(|c| c.disagreements.iter().map(move |d| html! {
                <p class="warn">{ format!("! {}: reported {} = {} but the raw requests give {}", c.name, d.metric, format_number(d.reported), format_number(d.recomputed)) }</p>
            })) }
            if !p.excluded.is_empty() {
                <ul class="excluded" aria-label="Runs not compared">
                    { for p.excluded.iter().map(|e| html! { <li>{ format!("not compared: {} ({}): {}", e.candidate, e.file, e.reason) }</li> }) }
                </ul>
            }
            if let Some(b) = &p.baseline {
                <h3>{ format!("Quantized {} vs float baseline {}", b.compared_with.clone().unwrap_or("(no candidate chosen)".into()), b.artifact_id) }</h3>
                <div class="scroll">
                <table class="baseline" id={format!("baseline-{}", p.profile)}>
                    <thead><tr><th>{ "metric" }</th><th class="num">{ "quantized" }</th><th class="num">{ "float" }</th><th class="num">{ "difference" }</th><th class="num">{ "ratio" }</th><th>{ "95% interval of difference" }</th></tr></thead>
                    <tbody>{ for b.rows.iter().map(|r| html! {
                        <tr>
                            <th scope="row">{ r.metric.clone() }</th>
                            <td class="num">{ num(r.quantized) }</td><td class="num">{ num(r.baseline) }</td>
                            <td class="num">{ num(r.difference) }</td>
                            <td class="num">{ r.ratio.map(|x| format!("{x:.2}×")).unwrap_or("–".into()) }</td>
                            <td>{ r.difference_interval.map(|i| format!("[{}, {}]", format_number(i.low), format_number(i.high))).unwrap_or("–".into()) }</td>
                        </tr>
                    }) }</tbody>
                </table>
                </div>
            }
            <div class="charts">
                { chart("tradeoff", format!("{}: TTFT p95 vs output throughput, SLO lines and Pareto front", p.profile),
                    Rc::new(move |root| drawn(charts::tradeoff(root, &p1))), 340) }
                { chart("cdf-ttft", format!("{}: TTFT CDF", p.profile), Rc::new(move |root| drawn(charts::cdf(root, &p2, Quantity::Ttft))), 260) }
                { chart("cdf-tpot", format!("{}: TPOT CDF", p.profile), Rc::new(move |root| drawn(charts::cdf(root, &p3, Quantity::Tpot))), 260) }
                { chart("cdf-e2e", format!("{}: end-to-end CDF", p.profile), Rc::new(move |root| drawn(charts::cdf(root, &p4, Quantity::E2e))), 260) }
                if p.baseline.is_some() {
                    { chart("baseline", format!("{}: quantized / float ratios", p.profile), Rc::new(move |root| drawn(charts::baseline_ratios(root, &p5))), 260) }
                }
            </div>
        </section>
    }
}
