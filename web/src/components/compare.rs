//! Compare mode's result: the answer, what changed, verdicts before and after, then the metric
//! changes with their intervals (the ones that moved or could not be told first, every metric
//! under "all metrics"), the cells not comparable and the notes. The same comparison the CLI
//! prints (`sloscope compare`); every string from a file is shown inert.

use std::rc::Rc;

use sloscope_core::comparison::headline;
use sloscope_core::comparison::{Cell, Comparison, Label, MetricChange, Outcome};
use sloscope_core::measure::format_number as num;
use sloscope_core::view::Shown;
use yew::prelude::*;

/// Properties of [`Compare`].
#[derive(Properties, PartialEq)]
pub struct Props {
    /// The comparison (`None`: a side holds no file yet).
    pub comparison: Option<Rc<Comparison>>,
    /// Files on each side (before, after).
    pub counts: (usize, usize),
    /// Bumped at every new comparison (charts redraw).
    pub generation: usize,
}

fn shown(s: &str) -> String {
    Shown::new(s).to_string()
}

/// A name from a file shown on its own (cut, see `Shown::input`).
fn name(s: &str) -> String {
    Shown::input(s).to_string()
}

fn label(l: Label) -> (&'static str, &'static str) {
    match l {
        Label::Regression => ("regression", "REGRESSION"),
        Label::Improvement => ("improvement", "improvement"),
        Label::NoChange => ("no-change", "no change"),
        Label::Inconclusive => ("inconclusive", "inconclusive"),
        Label::Borderline => ("borderline", "near the threshold"),
    }
}

fn signed(v: f64) -> String {
    if v > 0.0 {
        format!("+{}", num(v))
    } else {
        num(v)
    }
}

fn row(cell: &Cell, m: &MetricChange) -> Html {
    let unit = m.metric.unit();
    let (class, word) = label(m.label);
    let iv = m.difference_interval.map_or_else(
        || "—".to_string(),
        |iv| {
            let end = |v: Option<f64>, none: &str| v.map_or_else(|| none.to_string(), signed);
            format!(
                "[{}, {}] {unit}",
                end(iv.low, "no lower bound"),
                end(iv.high, "no upper bound")
            )
        },
    );
    // Every number with its unit, as the CLI prints it.
    let with = |v: String| {
        if unit.is_empty() {
            v
        } else {
            format!("{v} {unit}")
        }
    };
    let pct = m.ratio.map_or(String::new(), |r| {
        format!(" ({:+}%)", num((r - 1.0) * 100.0))
    });
    html! {
        <tr class={classes!("change", class)} data-metric={m.metric.name()} data-label={class}>
            <td>{ cell.profile.clone() }</td>
            <td>{ name(&cell.candidate) }</td>
            <td>{ m.metric.name() }</td>
            <td class="num">{ m.before.map_or("—".into(), |v| with(num(v))) }</td>
            <td class="num">{ m.after.map_or("—".into(), |v| with(num(v))) }</td>
            <td class="num">{ format!("{}{pct}", m.difference.map_or("—".into(), |v| with(signed(v)))) }</td>
            <td class="num" title={m.method.clone()}>{ iv }</td>
            <td>{ format!("{}% and {} {unit}", num(m.threshold.relative * 100.0), num(m.threshold.absolute)) }</td>
            <td class="label">{ word }</td>
        </tr>
    }
}

fn table(c: &Comparison, keep: impl Fn(&MetricChange) -> bool) -> Html {
    html! {
        <table class="changes">
            <thead><tr>
                <th>{ "profile" }</th><th>{ "candidate" }</th><th>{ "metric" }</th><th>{ "before" }</th>
                <th>{ "after" }</th><th>{ "change" }</th><th>{ "95% interval" }</th><th>{ "threshold" }</th><th>{ "label" }</th>
            </tr></thead>
            <tbody>
            { for c.cells.iter().flat_map(|cell| cell.metrics.iter().filter(|m| keep(m)).map(move |m| row(cell, m))) }
            </tbody>
        </table>
    }
}

fn changed(c: &Comparison) -> Html {
    if c.changed.is_empty() {
        return html! { <p id="compare-changed">{ "Nothing but the measurements changed: the same lineage, backend, hardware and server commands." }</p> };
    }
    html! {
        <table id="compare-changed" class="changed">
            <thead><tr><th></th><th>{ "before" }</th><th>{ "after" }</th></tr></thead>
            <tbody>
            { for c.changed.iter().map(|ch| html! {
                <tr><th>{ shown(&ch.what) }</th><td>{ shown(&ch.before.join(", ")) }</td><td>{ shown(&ch.after.join(", ")) }</td></tr>
            }) }
            </tbody>
        </table>
    }
}

fn verdicts(c: &Comparison) -> Html {
    let v = |d: Option<sloscope_core::analysis::ProfileDecision>, r: &Option<String>| match (d, r) {
        (Some(d), Some(r)) => format!("{} · {}", d.as_str(), shown(r)),
        (Some(d), None) => d.as_str().to_string(),
        (None, _) => "—".into(),
    };
    let margin = |m: &Option<sloscope_core::comparison::Margin>| {
        m.as_ref().map_or("—".into(), |m| {
            format!(
                "{} {} (limit {}{})",
                m.metric.name(),
                m.value.map_or("—".into(), num),
                num(m.limit),
                m.margin_ratio
                    .map_or(String::new(), |r| format!(", margin {}%", num(r * 100.0)))
            )
        })
    };
    html! {
        <table id="compare-verdicts">
            <thead><tr><th>{ "profile" }</th><th>{ "before" }</th><th>{ "after" }</th><th>{ "binding SLO before" }</th><th>{ "after" }</th></tr></thead>
            <tbody>
            { for c.verdicts.iter().map(|x| html! {
                <tr class={classes!(x.flipped.then_some("flipped"))} data-profile={x.profile.clone()}>
                    <td>{ x.profile.clone() }</td>
                    <td>{ v(x.before, &x.recommended_before) }</td>
                    <td>{ v(x.after, &x.recommended_after) }{ if x.flipped { " ⚠ changed" } else { "" } }</td>
                    <td>{ margin(&x.binding_before) }</td>
                    <td>{ margin(&x.binding_after) }</td>
                </tr>
            }) }
            </tbody>
        </table>
    }
}

/// Per profile the trade-off before → after, per cell its TTFT and TPOT distributions overlaid.
fn charts(c: &Rc<Comparison>, generation: usize) -> Html {
    use crate::charts::{cdf_pair, tradeoff_shift, Quantity};
    use crate::components::canvas::{drawn, Chart, DrawFn};
    let mut profiles: Vec<String> = Vec::new();
    for cell in &c.cells {
        if !profiles.contains(&cell.profile) {
            profiles.push(cell.profile.clone());
        }
    }
    html! {
        <div class="charts" id="compare-charts">
        { for profiles.into_iter().map(|p| {
            let (c1, p1) = (c.clone(), p.clone());
            let draw: DrawFn = Rc::new(move |root| {
                let cells: Vec<&Cell> = c1.cells.iter().filter(|x| x.profile == p1).collect();
                drawn(tradeoff_shift(root, &p1, &cells))
            });
            html! { <Chart id={format!("chart-compare-{p}-tradeoff")} label={format!("{p}: TTFT p95 vs output throughput per candidate, before (hollow) → after (filled)")} draw={draw} generation={generation} height={320} /> }
        }) }
        { for c.cells.iter().enumerate().flat_map(|(i, cell)| [(Quantity::Ttft, "ttft"), (Quantity::Tpot, "tpot")].into_iter().map(move |(q, quantity)| (i, cell, q, quantity))).map(|(i, cell, q, quantity)| {
            let c2 = c.clone();
            let draw: DrawFn = Rc::new(move |root| drawn(cdf_pair(root, &c2.cells[i], q)));
            html! { <Chart id={format!("chart-compare-{i}-{quantity}")} label={format!("{} {}: {} CDF before (dashed) and after (solid)", cell.profile, name(&cell.candidate), q.label())} draw={draw} generation={generation} height={240} /> }
        }) }
        </div>
    }
}

/// What the first table leaves to "All metrics", counted.
fn folded(c: &Comparison) -> String {
    let rest: Vec<&MetricChange> = c
        .cells
        .iter()
        .flat_map(|x| &x.metrics)
        .filter(|m| !sloscope_core::comparison::leads(m))
        .collect();
    let unchanged = rest.iter().filter(|m| m.label == Label::NoChange).count();
    format!(
        "Under \"All metrics\": {unchanged} shown unchanged, {} undecided with a measured change within the threshold.",
        rest.len() - unchanged
    )
}

/// The comparison section.
#[function_component(Compare)]
pub fn compare(props: &Props) -> Html {
    let Some(c) = props.comparison.as_ref() else {
        let (b, a) = props.counts;
        return html! {
            <section class="compare" id="compare" aria-label="Comparison">
                <h2>{ "Compare" }</h2>
                <p>{ format!("{b} file(s) before, {a} after: give both collections (choose the side in the toolbar, then drop or browse its files).") }</p>
            </section>
        };
    };
    let outcome = match c.outcome {
        Outcome::Regression => "regression",
        Outcome::NoRegression => "no-regression",
        Outcome::NothingComparable => "nothing-comparable",
        Outcome::Incomplete => "incomplete",
        Outcome::Inconclusive => "inconclusive",
        Outcome::Refused => "refused",
    };
    html! {
        <section class="compare" id="compare" aria-label="Comparison" data-outcome={outcome}>
            <h2>{ "Compare" }</h2>
            <p class={classes!("compare-headline", outcome)} id="compare-headline">{ shown(&headline(c)) }</p>
            if !c.refused.is_empty() {
                <ul class="warn">{ for c.refused.iter().map(|r| html! { <li>{ shown(r) }</li> }) }</ul>
            }
            if c.outcome != Outcome::Refused {
                <h3>{ "What changed" }</h3>
                { changed(c) }
                <h3>{ "Verdicts" }</h3>
                { verdicts(c) }
            }
            if !c.capacity.is_empty() {
                <h3>{ "Capacity" }</h3>
                                <ul id="compare-capacity">{ for c.capacity.iter().map(|k| html! {
                    <li>{ format!("{}: before {}; after {}", k.profile, shown(k.before.as_deref().unwrap_or("no search")), shown(k.after.as_deref().unwrap_or("no search"))) }
                        <ul>{ for k.candidates.iter().map(|x| {
                            html! { <li class={classes!(x.worse.then_some("regression"))}>{ format!("{}: capacity {} before, {} after{}", name(&x.candidate), shown(&x.said[0]), shown(&x.said[1]), if x.worse { " — REGRESSION" } else { "" }) }</li> }
                        }) }</ul>
                    </li>
                }) }</ul>
            }
            if !c.cells.is_empty() {
                <h3>{ "Changes (95% intervals; a change counts beyond both parts of its threshold)" }</h3>
                { table(c, sloscope_core::comparison::leads) }
                <p class="small" id="compare-folded">{ folded(c) }</p>
                <details>
                    <summary>{ "All metrics" }</summary>
                    { table(c, |_| true) }
                </details>
                <ul class="small">{ for c.cells.iter().map(|cell| html! {
                    <li>{ format!("{} {}: {} requests before, {} after; {}", cell.profile, name(&cell.candidate), cell.requests_before, cell.requests_after,
                        cell.pairing_note.as_deref().map_or("requests paired by index (the same request sequence)".to_string(), |w| format!("requests not paired: {}", shown(w)))) }</li>
                }) }</ul>
            }
            if !c.cells.is_empty() {
                { charts(c, props.generation) }
            }
            if !c.not_comparable.is_empty() {
                <h3>{ "Not comparable" }</h3>
                <ul id="compare-not-comparable">{ for c.not_comparable.iter().map(|n| html! {
                    <li>{ format!("{} {}: {}", n.profile, name(&n.candidate), shown(&n.reason)) }</li>
                }) }</ul>
            }
            if !c.notes.is_empty() {
                <details><summary>{ "Notes" }</summary>
                <ul>{ for c.notes.iter().map(|n| html! { <li>{ shown(n) }</li> }) }</ul>
                </details>
            }
        </section>
    }
}
