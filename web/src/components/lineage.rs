//! The lineage panel: gate, baseline and deployment side by side, each field ✓ or ✗.

use sloscope_core::lineage::{FieldStatus, LineageReport};
use yew::prelude::*;

/// Properties of [`Lineage`].
#[derive(Properties, PartialEq)]
pub struct Props {
    /// The check.
    pub report: LineageReport,
}

/// Lineage panel.
#[function_component(Lineage)]
pub fn lineage(props: &Props) -> Html {
    let r = &props.report;
    let cell = |v: &Option<String>| html! { <td class="value">{ v.clone().unwrap_or_else(|| "—".into()) }</td> };
    html! {
        <section class="lineage" aria-label="Artifact lineage">
            <h2>
                { "Artifact lineage " }
                if r.ready { <span class="badge accept" id="lineage-status">{ "ready" }</span> }
                else { <span class="badge reject" id="lineage-status">{ "broken — comparison stopped" }</span> }
            </h2>
            if !r.issues.is_empty() {
                <ul class="issues">{ for r.issues.iter().map(|i| html! { <li>{ "✗ " }{ i.clone() }</li> }) }</ul>
            }
            if !r.warnings.is_empty() {
                <ul class="warnings">{ for r.warnings.iter().map(|i| html! { <li>{ "! " }{ i.clone() }</li> }) }</ul>
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
        </section>
    }
}
