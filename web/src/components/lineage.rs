//! The lineage panel: gate, baseline and deployment side by side, each field ✓ or ✗. Every word
//! comes from the core's view-model ([`LineageView`], strings from files made inert there).

use sloscope_core::view::{LineageView, Mark};
use yew::prelude::*;

/// Properties of [`Lineage`].
#[derive(Properties, PartialEq)]
pub struct Props {
    /// The lineage as every printer shows it.
    pub view: LineageView,
}

/// Lineage panel.
#[function_component(Lineage)]
pub fn lineage(props: &Props) -> Html {
    let v = &props.view;
    let t = &v.table;
    html! {
        <section class="lineage" id="lineage" aria-label="Artifact lineage">
            // One status line when the lineage holds; open by itself when it is broken.
            <details open={!v.ready && !v.absent}>
            <summary><h2>
                { "Artifact lineage " }
                                if v.ready { <span class="badge accept" id="lineage-status">{ "ready" }</span> }
                else if v.absent { <span class="badge none" id="lineage-status">{ "none loaded — summaries only" }</span> }
                else { <span class="badge reject" id="lineage-status">{ "broken — nothing accepted" }</span> }
                if let Some(g) = &v.gate {
                    <span class={classes!("badge", match g.decision_label.as_str() { "ACCEPT" => "accept", "REJECT" => "reject", _ => "none" })} id="gate-status">{ format!("gate measured: {}", g.decision_label) }</span>
                }
                if !v.warnings.is_empty() { <span class="badge tune">{ format!("{} warning(s)", v.warnings.len()) }</span> }
            </h2></summary>
            if v.absent {
                <p class="small" id="lineage-absent">{ v.status_line.to_string() }</p>
            }
            if let Some(g) = &v.gate {
                <div class="gate" id="gate-evidence" data-decision={g.decision_label.to_string()}>
                    <ul class="gate-lines">{ for g.lines.iter().map(|l| html! { <li>{ l.to_string() }</li> }) }</ul>
                    <div class="scroll" tabindex="0" role="region" aria-label="Quality gate: KL divergence per position">
                    <table id="gate-histogram">
                        <caption>{ "Per-position KL divergence" }</caption>
                        <thead><tr>{ for g.histogram.columns.iter().map(|c| html! { <th>{ c.title.to_string() }</th> }) }</tr></thead>
                        <tbody>{ for g.histogram.rows.iter().map(|r| html! {
                            <tr>{ for r.cells.iter().map(|c| html! { <td>{ c.text.to_string() }</td> }) }</tr>
                        }) }</tbody>
                    </table>
                    </div>
                </div>
            }
            if !v.other_gates.is_empty() {
                <ul class="other-gates" id="other-gates">{ for v.other_gates.iter().map(|l| html! { <li>{ l.to_string() }</li> }) }</ul>
            }
            if !v.issues.is_empty() {
                <ul class="issues">{ for v.issues.iter().map(|i| html! { <li>{ format!("✗ {i}") }</li> }) }</ul>
            }
            if !v.warnings.is_empty() {
                <ul class="warnings">{ for v.warnings.iter().map(|i| html! { <li>{ format!("! {i}") }</li> }) }</ul>
            }
            if !v.notes.is_empty() {
                <ul class="notes" id="lineage-notes">{ for v.notes.iter().map(|n| html! { <li>{ format!("note: {n}") }</li> }) }</ul>
            }
            if !t.rows.is_empty() {
                <div class="scroll" tabindex="0" role="region" aria-label="Lineage table">
                <table id="lineage-table">
                    <thead><tr>{ for t.columns.iter().map(|c| html! { <th>{ c.title.to_string() }</th> }) }</tr></thead>
                    <tbody>
                    { for t.rows.iter().map(|r| {
                        let class = match r.cells.last().map(|c| c.mark) {
                            Some(Mark::Pass) => "ok",
                            Some(Mark::Fail) => "bad",
                            _ => "warn",
                        };
                        html! {
                            <tr class={class}>
                                { for r.cells.iter().enumerate().map(|(i, c)| match i {
                                    0 => html! { <th scope="row">{ c.text.to_string() }</th> },
                                    i if i + 1 == r.cells.len() => html! { <td class="check">{ c.text.to_string() }</td> },
                                    _ => html! { <td class="value">{ c.text.to_string() }</td> },
                                }) }
                            </tr>
                        }
                    }) }
                    </tbody>
                </table>
                </div>
            }
            </details>
        </section>
    }
}
