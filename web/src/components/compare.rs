//! Compare mode's result, laid out from the comparison's one view-model
//! ([`sloscope_core::comparison::ComparisonView`], made in the reader, the same the CLI
//! prints): the answer, what changed, verdicts before and after, then the metric changes with
//! their units and intervals (the ones that moved or could not be told first, every metric
//! under "all metrics"), the cells not comparable and the notes. Nothing here words a result;
//! every string of the view is already inert.

use std::rc::Rc;

use sloscope_core::comparison::{Cell, ChangeRow, ComparisonView, NOTHING_CHANGED};
use yew::prelude::*;

use crate::protocol::{Compared, Side};

/// Compare mode's two drop targets, with the files on each side (`counts`: before, after):
/// files dropped on one join its side (the window's drop handler reads `data-drop-side`);
/// choosing one (`on_side`) makes Browse add to it. A plain function, not a component: the
/// page's payload has no room for another.
pub fn sides(counts: (usize, usize), side: Side, on_side: &Callback<Option<Side>>) -> Html {
    let zone = |s: Side, n: usize| {
        let (word, chosen) = (s.as_str(), side == s);
        html! {
            <button type="button" id={format!("drop-{word}")} data-drop-side={word}
                class={classes!("side-zone", chosen.then_some("chosen"))} aria-pressed={chosen.to_string()}
                onclick={on_side.reform(move |_| Some(s))}>
                { format!("{word} · {n} file(s): drop here") }
            </button>
        }
    };
    html! {
        <div class="sides" role="group" aria-label="Compare: before and after">
            { zone(Side::Before, counts.0) }{ zone(Side::After, counts.1) }
        </div>
    }
}

/// Properties of [`Compare`].
#[derive(Properties)]
pub struct Props {
    /// The comparison and its view (`None`: a side holds no file yet).
    pub comparison: Option<Rc<Compared>>,
    /// Files on each side (before, after).
    pub counts: (usize, usize),
    /// Bumped at every new comparison (charts redraw).
    pub generation: usize,
}

/// The same comparison is the same allocation: a new one arrives as a new `Rc` (the derived
/// comparison walked the whole of it, and compiled 5 KB doing so).
impl PartialEq for Props {
    fn eq(&self, other: &Self) -> bool {
        let same = match (&self.comparison, &other.comparison) {
            (Some(a), Some(b)) => Rc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        same && self.counts == other.counts && self.generation == other.generation
    }
}

fn row(r: &ChangeRow) -> Html {
    html! {
        <tr class={classes!("change", r.class.clone())} data-metric={r.metric.clone()} data-label={r.class.clone()}>
            <td>{ r.profile.clone() }</td>
            <td>{ r.candidate.clone() }</td>
            <td>{ crate::components::profile::breakable(&r.metric) }</td>
            <td class="num">{ r.before.clone() }</td>
            <td class="num">{ r.after.clone() }</td>
            <td class="num">{ r.change.clone() }</td>
            <td class="num" title={r.method.clone()}>{ r.interval.clone() }</td>
            <td class="num">{ r.detectable.clone() }</td>
            <td>{ r.threshold.clone() }</td>
            <td class="label">{ r.label.clone() }</td>
        </tr>
    }
}

fn table(v: &ComparisonView, all: bool) -> Html {
    html! {
        <table class="changes">
            <thead><tr>
                <th>{ "profile" }</th><th>{ "candidate" }</th><th>{ "metric" }</th><th>{ "before" }</th>
                <th>{ "after" }</th><th>{ "change" }</th><th>{ "95% interval" }</th>
                <th title="the smallest change this interval detects 80 % of the time">{ "detectable" }</th>
                <th>{ "threshold" }</th><th>{ "label" }</th>
            </tr></thead>
            <tbody>
            { for v.changes.iter().filter(|r| all || r.leads).map(row) }
            </tbody>
        </table>
    }
}

fn changed(v: &ComparisonView) -> Html {
    let rows = v.changed.as_deref().unwrap_or_default();
    if rows.is_empty() {
        return html! { <p id="compare-changed">{ NOTHING_CHANGED }</p> };
    }
    html! {
        <table id="compare-changed" class="changed">
            <thead><tr><th></th><th>{ "before" }</th><th>{ "after" }</th></tr></thead>
            <tbody>
            { for rows.iter().map(|ch| html! {
                <tr><th>{ ch.what.clone() }</th><td>{ ch.before.clone() }</td><td>{ ch.after.clone() }</td></tr>
            }) }
            </tbody>
        </table>
    }
}

fn verdicts(v: &ComparisonView) -> Html {
    html! {
        <table id="compare-verdicts">
            <thead><tr><th>{ "profile" }</th><th>{ "before" }</th><th>{ "after" }</th><th>{ "binding SLO before" }</th><th>{ "after" }</th></tr></thead>
            <tbody>
            { for v.verdicts.iter().map(|x| html! {
                <tr class={classes!(x.flipped.then_some("flipped"))} data-profile={x.profile.clone()}>
                    <td>{ x.profile.clone() }</td>
                    <td>{ x.before.clone() }</td>
                    <td>{ x.after.clone() }{ if x.flipped { " ⚠ changed" } else { "" } }</td>
                    <td>{ x.binding_before.clone() }</td>
                    <td>{ x.binding_after.clone() }</td>
                </tr>
            }) }
            </tbody>
        </table>
    }
}

/// Per profile the trade-off before → after, per cell its TTFT and TPOT distributions overlaid.
fn charts(c: &Rc<Compared>, generation: usize) -> Html {
    use crate::charts::{cdf_pair, tradeoff_shift, Quantity};
    use crate::components::canvas::{drawn, Chart, DrawFn};
    let v = &c.view;
    html! {
        <div class="charts" id="compare-charts">
        { for v.tradeoff_captions.iter().map(|(p, caption)| {
            let (c1, p1) = (c.clone(), p.clone());
            let draw: DrawFn = Rc::new(move |root| {
                let cells: Vec<&Cell> = c1.comparison.cells.iter().filter(|x| x.profile == p1).collect();
                drawn(tradeoff_shift(root, &p1, &cells))
            });
            html! { <Chart id={format!("chart-compare-{p}-tradeoff")} label={caption.clone()} draw={draw} generation={generation} height={320} /> }
        }) }
        { for v.cdf_captions.iter().enumerate().flat_map(|(i, captions)| [(Quantity::Ttft, "ttft", &captions[0]), (Quantity::Tpot, "tpot", &captions[1])].into_iter().map(move |(q, quantity, caption)| (i, q, quantity, caption))).map(|(i, q, quantity, caption)| {
            let c2 = c.clone();
            let draw: DrawFn = Rc::new(move |root| drawn(cdf_pair(root, &c2.comparison.cells[i], q)));
            html! { <Chart id={format!("chart-compare-{i}-{quantity}")} label={caption.clone()} draw={draw} generation={generation} height={240} /> }
        }) }
        </div>
    }
}

/// What the first table leaves to "All metrics", counted.
fn folded(v: &ComparisonView) -> String {
    format!(
        "Under \"All metrics\": {} shown unchanged, {} undecided with a measured change within the threshold.",
        v.unchanged, v.small
    )
}

fn capacity(v: &ComparisonView) -> Html {
    html! {
        <ul id="compare-capacity">{ for v.capacity.iter().map(|k| html! {
            <li>{ k.line.clone() }
                <ul>{ for k.candidates.iter().map(|(line, worse)| html! {
                    <li class={classes!(worse.then_some("regression"))}>{ line.clone() }</li>
                }) }</ul>
            </li>
        }) }</ul>
    }
}

fn changes(c: &Rc<Compared>, generation: usize) -> Html {
    let v = &c.view;
    if v.changes.is_empty() {
        return html! {};
    }
    html! { <>
        <h3>{ "Changes (95% intervals; a change counts beyond both parts of its threshold)" }</h3>
        { table(v, false) }
        <p class="small" id="compare-folded">{ folded(v) }</p>
        <details>
            <summary>{ "All metrics" }</summary>
            { table(v, true) }
        </details>
        <ul class="small" id="compare-by-shift">{ for v.by_shift.iter().map(|l| html! { <li>{ l.clone() }</li> }) }</ul>
        { shifts(v) }
        <ul class="small">{ for v.requests.iter().map(|l| html! { <li>{ l.clone() }</li> }) }</ul>
        { charts(c, generation) }
    </> }
}

/// Whole distributions: the shift of every request's TTFT, TPOT and end to end (what decides
/// a percentile row whose own interval is unbounded), as the CLI and the Markdown show it.
fn shifts(v: &ComparisonView) -> Html {
    if v.shifts.is_empty() {
        return html! {};
    }
    html! { <>
        <h3>{ "Whole distributions (Hodges–Lehmann shift after − before, 95%, from every request)" }</h3>
        <div class="scroll"><table class="changes" id="compare-shifts">
            <thead><tr>
                <th>{ "profile" }</th><th>{ "candidate" }</th><th>{ "quantity" }</th><th>{ "shift" }</th>
                <th>{ "95% interval" }</th><th>{ "shape" }</th><th>{ "label" }</th>
            </tr></thead>
            <tbody>
            { for v.shifts.iter().map(|r| html! {
                <tr class="change" data-label={r.label.clone()}>
                    <td>{ r.profile.clone() }</td><td>{ r.candidate.clone() }</td><td>{ r.quantity.clone() }</td>
                    <td class="num">{ r.shift.clone() }</td><td class="num">{ r.interval.clone() }</td>
                    <td>{ r.shape.clone() }</td><td class="label">{ r.label.clone() }</td>
                </tr>
            }) }
            </tbody>
        </table></div>
    </> }
}

/// The comparison section.
#[function_component(Compare)]
pub fn compare(props: &Props) -> Html {
    let Some(c) = props.comparison.as_ref() else {
        let (b, a) = props.counts;
        return html! {
            <section class="compare" id="compare" aria-label="Comparison">
                <h2>{ "Compare" }</h2>
                <p>{ format!("{b} file(s) before, {a} after: drop each collection on its side above (or choose a side, then Browse).") }</p>
            </section>
        };
    };
    let v = &c.view;
    html! {
        <section class="compare" id="compare" aria-label="Comparison" data-outcome={v.outcome.clone()}>
            <h2>{ "Compare" }</h2>
            <p class={classes!("compare-headline", v.outcome.clone())} id="compare-headline">{ v.headline.clone() }</p>
            if !v.subject.is_empty() {
                <style id="print-header">{ crate::app::print::page_rule(&v.subject, &crate::app::print::today()) }</style>
                <dl class="subject" id="compare-subject" aria-label="What is judged">
                    { for v.subject.iter().map(|l| html! {
                        <div><dt>{ l.label.to_string() }</dt><dd>{ l.value.to_string() }</dd></div>
                    }) }
                </dl>
            }
            if !v.refused.is_empty() {
                <ul class="warn">{ for v.refused.iter().map(|r| html! { <li>{ r.clone() }</li> }) }</ul>
            }
            if v.changed.is_some() {
                <h3>{ "What changed" }</h3>
                { changed(v) }
                <h3>{ "Verdicts" }</h3>
                { verdicts(v) }
            }
            if !v.capacity.is_empty() {
                <h3>{ "Capacity" }</h3>
                { capacity(v) }
            }
            { changes(c, props.generation) }
            if !v.not_comparable.is_empty() {
                <h3>{ "Not comparable" }</h3>
                <ul id="compare-not-comparable">{ for v.not_comparable.iter().map(|n| html! { <li>{ n.clone() }</li> }) }</ul>
            }
            if !v.notes.is_empty() {
                <details><summary>{ "Notes" }</summary>
                <ul>{ for v.notes.iter().map(|n| html! { <li>{ n.clone() }</li> }) }</ul>
                </details>
            }
        </section>
    }
}
