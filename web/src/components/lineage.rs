//! The lineage panel: gate, baseline and deployment side by side, each field ✓ or ✗.

use sloscope_core::check::lineage::{FieldStatus, LineageReport};
use sloscope_core::show::view::LineageView;
use yew::prelude::*;

/// Properties of [`Lineage`].
#[derive(Properties, PartialEq)]
pub struct Props {
    /// The check.
    pub report: LineageReport,
    /// Its lines as every printer shows them (strings from files made inert).
    pub view: LineageView,
}

/// Lineage panel.
#[function_component(Lineage)]
pub fn lineage(props: &Props) -> Html {
    let r = &props.report;
    let v = &props.view;
    // Long values (hashes) shortened; the full value on hover and in the copied text.
    let cell = |v: &Option<String>| match v {
        Some(full) if full.chars().count() > 24 => {
            let head: String = full.chars().take(12).collect();
            let tail: String = full
                .chars()
                .rev()
                .take(4)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            html! { <td class="value" title={full.clone()} data-full={full.clone()}>{ format!("{head}…{tail}") }</td> }
        }
        Some(full) => html! { <td class="value">{ full.clone() }</td> },
        None => html! { <td class="value">{ "—" }</td> },
    };
    html! {
        <section class="lineage" aria-label="Artifact lineage">
            // One status line when the lineage holds; open by itself when it is broken.
            <details open={!r.ready}>
            <summary><h2>
                { "Artifact lineage " }
                if r.ready { <span class="badge accept" id="lineage-status">{ "ready" }</span> }
                else { <span class="badge reject" id="lineage-status">{ "broken — comparison stopped" }</span> }
                if !r.warnings.is_empty() { <span class="badge tune">{ format!("{} warning(s)", r.warnings.len()) }</span> }
            </h2></summary>
            if !v.issues.is_empty() {
                <ul class="issues">{ for v.issues.iter().map(|i| html! { <li>{ format!("✗ {i}") }</li> }) }</ul>
            }
            if !v.warnings.is_empty() {
                <ul class="warnings">{ for v.warnings.iter().map(|i| html! { <li>{ format!("! {i}") }</li> }) }</ul>
            }
            if !v.notes.is_empty() {
                <ul class="notes" id="lineage-notes">{ for v.notes.iter().map(|n| html! { <li>{ format!("note: {n}") }</li> }) }</ul>
            }
            if !r.fields.is_empty() {
                <div class="scroll">
                <table id="lineage-table">
                    <thead><tr>
                        <th>{ "field" }</th>
                        <th>{ "quality gate" }<br/><small>{ r.gate_file.clone().unwrap_or_default() }</small></th>
                        <th>{ "float baseline" }<br/><small>{ r.baseline_file.clone().unwrap_or_default() }</small></th>
                        <th>{ "deployment" }<br/><small>{ r.deployment_file.clone().unwrap_or_default() }</small></th>
                        <th>{ "check" }</th>
                    </tr></thead>
                    <tbody>
                    { for r.fields.iter().map(|f| {
                        let (class, mark) = match f.status {
                            FieldStatus::Match => ("ok", "✓ same"),
                            FieldStatus::ExpectedDifference => ("ok", "✓ differs as expected"),
                            FieldStatus::NotRecorded => ("warn", "! not recorded"),
                            FieldStatus::Mismatch => ("bad", "✗"),
                        };
                        html! {
                            <tr class={class}>
                                <th scope="row">{ f.field.clone() }</th>
                                { cell(&f.gate) }{ cell(&f.baseline) }{ cell(&f.deployment) }
                                <td class="check">{ mark }{ f.note.clone().map(|n| format!(" {n}")).unwrap_or_default() }</td>
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
