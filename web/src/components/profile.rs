//! One profile: the verdict card, the recomputed summary table with SLO pass/fail per cell,
//! excluded runs with reasons, the float-baseline comparison and the charts. Every word and
//! number comes from the core's view-model ([`sloscope_core::view`]); this only lays it out.

use sloscope_core::view::{Mark, TableView};
use yew::prelude::*;

use crate::components::charts::Charts;

/// Properties of [`Profile`]: the profile's report and view, shared with its charts
/// ([`crate::components::charts::Props`]).
pub use crate::components::charts::Props;

/// A column title that may break after each `_` (`ttft_ p95_ ms`) where a narrow page or paper
/// needs it, and nowhere inside a word (`cand / idat / e`); the text is unchanged.
pub fn breakable(title: &str) -> Html {
    let parts: Vec<&str> = title.split_inclusive(['_', '/']).collect();
    html! { <>{ for parts.iter().map(|p| html! { <>{ p.to_string() }<wbr/></> }) }</> }
}

/// A table of the view-model: `data-metric` on metric cells, SLO marks as classes, the
/// highlighted row marked `chosen`.
pub fn table(t: &TableView, id: String, class: &'static str) -> Html {
    html! {
        // Scrollable, so reachable by keyboard (a focusable region with a name).
        <div class="scroll" tabindex="0" role="region" aria-label={format!("{class} table {id}")}>
        <table class={class} id={id}>
            <thead><tr>
                { for t.columns.iter().map(|c| html! {
                    <th class={classes!(c.numeric.then_some("num"), (!c.decisive).then_some("extra"))}
                        title={(!c.help.is_empty()).then(|| c.help.to_string())}>{ breakable(c.title.as_str()) }</th>
                }) }
            </tr></thead>
            <tbody>
            { for t.rows.iter().map(|r| html! {
                <tr class={classes!(r.highlighted.then_some("chosen"))} data-candidate={r.key.to_string()}>
                    { for r.cells.iter().zip(&t.columns).enumerate().map(|(i, (c, col))| {
                        let class = classes!(
                            col.numeric.then_some("num"),
                            (!col.decisive).then_some("extra"),
                            match c.mark { Mark::Pass => Some("pass"), Mark::Fail => Some("fail"), Mark::Undecided => Some("open"), Mark::None => None },
                        );
                        if i == 0 {
                            html! { <th scope="row" class={class}>{ c.text.to_string() }</th> }
                        } else {
                            let text = if col.numeric { html! { c.text.to_string() } } else { breakable(c.text.as_str()) };
                            html! { <td class={class} data-metric={c.metric.map(|m| m.name())}>{ text }</td> }
                        }
                    }) }
                </tr>
            }) }
            </tbody>
        </table>
        </div>
    }
}

/// One profile section.
#[function_component(Profile)]
pub fn profile(props: &Props) -> Html {
    let p = props.report.clone();
    let v = props.view.clone();
    let decision = if p.summaries_only {
        "none"
    } else {
        p.decision.as_str()
    };
    let wide = use_state(|| false);
    let extra = v.candidates.columns.iter().filter(|c| !c.decisive).count();
    let toggle = {
        let wide = wide.clone();
        Callback::from(move |_| wide.set(!*wide))
    };
    html! {
        <section class="profile" id={format!("profile-{}", v.profile)} aria-label={format!("{} profile", v.profile)}>
            <h2>{ format!("{} profile", v.profile) }</h2>
            <div class={classes!("verdict", decision)} data-profile={v.profile.to_string()}>
                <div class="decision" data-decision={decision}>{ v.decision_label.to_string() }</div>
                <div class="what">
                    <div class="chosen">
                        { "Recommended: " }
                        <strong class="recommended">{ v.recommended.to_string() }</strong>
                        if !v.recommended_setting.is_empty() { { format!(" {}", v.recommended_setting) } }
                    </div>
                    <div class="reason">{ v.reason.to_string() }</div>
                    if !v.missing.is_empty() {
                        <ul class="missing">{ for v.missing.iter().map(|m| html! { <li>{ m.to_string() }</li> }) }</ul>
                    }
                    if let Some(pl) = &v.provisional_line { <div class="provisional">{ pl.to_string() }</div> }
                    if let Some(b) = &v.binding_line { <div class="binding">{ b.to_string() }</div> }
                    if let Some(c) = &v.confidence_line { <div class="confidence">{ c.to_string() }</div> }
                    if let Some(m) = &v.margins_line { <div class="margins">{ m.to_string() }</div> }
                    if let Some(n) = &v.next_step { <div class="next"><strong>{ "Next: " }</strong>{ n.to_string() }</div> }
                </div>
            </div>
            <p class="workload">{ v.workload_line.to_string() }</p>
            <p class="slo">{ v.slo_line.to_string() }</p>
            if !v.contract_issues.is_empty() {
                <ul class="issues">{ for v.contract_issues.iter().map(|i| html! { <li>{ "✗ profile: " }{ i.clone() }</li> }) }</ul>
            }
            if !v.candidates.rows.is_empty() {
                // The columns that decide the verdict always; the rest on request.
                <div class={classes!("table-wrap", (!*wide).then_some("compact"))}>
                    if extra > 0 {
                        <button class="quiet more-columns" id={format!("more-columns-{}", v.profile)} onclick={toggle}
                            aria-expanded={wide.to_string()}>
                            { if *wide { "Fewer columns".to_string() } else { format!("More columns ({extra})") } }
                        </button>
                    }
                    { table(&v.candidates, format!("table-{}", v.profile), "summary") }
                </div>
            }
            { for v.warnings.iter().map(|w| html! { <p class="warn">{ format!("! {w}") }</p> }) }
            if !v.notes.is_empty() {
                <ul class="run-notes" aria-label="Notes of the compared runs">
                    { for v.notes.iter().map(|n| html! { <li>{ n.to_string() }</li> }) }
                </ul>
            }
            if !v.signals.is_empty() {
                <ul class="server-signals" aria-label="What the servers report">
                    { for v.signals.iter().map(|n| html! { <li>{ n.to_string() }</li> }) }
                </ul>
            }
            if !v.excluded.is_empty() {
                <ul class="excluded" aria-label="Runs not compared">
                    { for v.excluded.iter().map(|e| html! { <li>{ e.to_string() }</li> }) }
                </ul>
            }
            if let (Some(title), Some(t)) = (&v.search_title, &v.search) {
                <section class="search" aria-label={format!("{} configuration search", v.profile)}>
                    <h3>{ title.to_string() }</h3>
                    <ul class="search-lines">{ for v.search_lines.iter().map(|l| html! { <li>{ l.to_string() }</li> }) }</ul>
                    <div class="table-wrap">{ table(t, format!("search-{}", v.profile), "search") }</div>
                </section>
            }
            if let (Some(title), Some(t)) = (&v.capacity_title, &v.capacity) {
                <section class="capacity" aria-label={format!("{} capacity", v.profile)}>
                    <h3>{ title.to_string() }</h3>
                    <div class="table-wrap">{ table(t, format!("capacity-{}", v.profile), "capacity") }</div>
                    <ul class="capacity-lines">{ for v.capacity_lines.iter().map(|l| html! { <li>{ l.to_string() }</li> }) }</ul>
                </section>
            }
            if let (Some(title), Some(t)) = (&v.baseline_title, &v.baseline) {
                <h3>{ title.to_string() }</h3>
                { table(t, format!("baseline-{}", v.profile), "baseline") }
            }
            <Charts report={p.clone()} view={v.clone()} generation={props.generation} />
        </section>
    }
}
