//! The shards panel of a sharded results tree (`sloscope run --shard`): whether the shards
//! stand for the whole plan, one row per shard, what holds the verdict and what was left out.
//! Every word comes from the core's view-model ([`ShardsView`]).

use sloscope_core::view::ShardsView;
use yew::prelude::*;

/// Properties of [`Shards`].
#[derive(Properties, PartialEq)]
pub struct Props {
    /// The shards as every printer shows them.
    pub view: ShardsView,
}

/// Shards panel.
#[function_component(Shards)]
pub fn shards(props: &Props) -> Html {
    let v = &props.view;
    let t = &v.table;
    html! {
        <section class="shards" aria-label="Shards" id="shards">
            <details open={!v.complete}>
            <summary><h2>
                { "Shards " }
                if v.complete { <span class="badge accept" id="shards-status">{ "complete" }</span> }
                else { <span class="badge reject" id="shards-status">{ "incomplete — no verdict" }</span> }
            </h2></summary>
            <p class="small">{ v.status_line.to_string() }</p>
            if !v.problems.is_empty() {
                <ul class="issues" id="shard-problems">{ for v.problems.iter().map(|p| html! { <li>{ format!("✗ {p}") }</li> }) }</ul>
            }
            if !v.left_out.is_empty() {
                <ul class="notes" id="shard-left-out">{ for v.left_out.iter().map(|l| html! { <li>{ format!("– {l}") }</li> }) }</ul>
            }
            <div class="scroll" tabindex="0" role="region" aria-label="Shards table">
            <table id="shards-table">
                <thead><tr>{ for t.columns.iter().map(|c| html! { <th>{ c.title.to_string() }</th> }) }</tr></thead>
                <tbody>
                { for t.rows.iter().map(|r| html! {
                    <tr data-shard={r.key.to_string()}>
                        { for r.cells.iter().enumerate().map(|(i, c)| if i == 0 {
                            html! { <th scope="row">{ c.text.to_string() }</th> }
                        } else {
                            html! { <td>{ c.text.to_string() }</td> }
                        }) }
                    </tr>
                }) }
                </tbody>
            </table>
            </div>
            </details>
        </section>
    }
}
