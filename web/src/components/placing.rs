//! Other tools' files given a place in the loaded plan, on the page: per file, the profile and
//! candidate it measured, as `sloscope import --plan --profile --candidate` takes them (without
//! a plan, [`super::stating`] states one). Every name from a file is shown inert.

use std::rc::Rc;

use sloscope_core::view::Shown;
use wasm_bindgen::JsCast;
use yew::prelude::*;

use crate::protocol::{Assignable, AssignableFile};

/// Properties of [`Placing`].
#[derive(Properties)]
pub struct Props {
    /// What can be placed.
    pub assignable: Rc<Assignable>,
    /// A file placed (id, profile, candidate; both empty: taken out).
    pub on_place: Callback<(u32, String, String)>,
}

impl PartialEq for Props {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.assignable, &other.assignable) && self.on_place == other.on_place
    }
}

/// The value of the select with this id.
fn chosen(id: &str) -> String {
    gloo::utils::document()
        .get_element_by_id(id)
        .and_then(|e| e.dyn_into::<web_sys::HtmlSelectElement>().ok())
        .map(|s| s.value())
        .unwrap_or_default()
}

fn select(
    id: String,
    label: String,
    options: &[String],
    current: Option<&str>,
    on: Callback<Event>,
) -> Html {
    html! {
        <select id={id} aria-label={label} onchange={on}>
            <option value="" selected={current.is_none()}>{ "choose…" }</option>
            { for options.iter().map(|o| html! {
                <option value={o.clone()} selected={current == Some(o.as_str())}>{ Shown::new(o).to_string() }</option>
            }) }
        </select>
    }
}

/// How much of a placed file is used, where it is not simply all of it.
fn used(f: &AssignableFile) -> String {
    match (f.used, f.benchmarks) {
        (0, n) => format!(
            " — nothing used: none of its {n} benchmark{} ran the profile's workload",
            if n == 1 { "" } else { "s" }
        ),
        (u, n) if u < n || n > 1 => format!(" — {u} of its {n} benchmarks used"),
        _ => String::new(),
    }
}

fn row(a: &Assignable, f: &AssignableFile, on_place: &Callback<(u32, String, String)>) -> Html {
    let (pid, cid) = (
        format!("place-{}-profile", f.id),
        format!("place-{}-candidate", f.id),
    );
    let on = {
        let (on_place, id, pid, cid) = (on_place.clone(), f.id, pid.clone(), cid.clone());
        Callback::from(move |_: Event| {
            let (p, c) = (chosen(&pid), chosen(&cid));
            if p.is_empty() == c.is_empty() {
                on_place.emit((id, p, c));
            }
        })
    };
    let name = Shown::new(&f.name).to_string();
    let placed = f.placed.as_ref();
    html! {
        <tr data-file={f.id.to_string()}>
            <td data-label="file">{ name.clone() }</td>
            <td data-label="profile">{ select(pid, format!("profile {name} measured"), &a.profiles, placed.map(|p| p.0.as_str()), on.clone()) }</td>
            <td data-label="candidate">{ select(cid, format!("candidate {name} measured"), &a.candidates, placed.map(|p| p.1.as_str()), on) }</td>
            <td class="placed" data-label="now">
                { match placed {
                    Some((p, c)) => format!("placed: {} · {}{}", Shown::new(p), Shown::new(c), used(f)),
                    None => "summaries only".to_string(),
                } }
                { for f.said.iter().map(|s| html! { <div class="small">{ Shown::new(s).to_string() }</div> }) }
            </td>
        </tr>
    }
}

/// The placing panel.
#[function_component(Placing)]
pub fn placing(props: &Props) -> Html {
    let a = &props.assignable;
    html! {
        <section class="placing" id="placing" aria-label="Other tools' files in the plan">
            <h2>{ "Other tools' files in the plan" }</h2>
                <p class="small">{ "Choose the profile and candidate each file measured, as sloscope import --plan --profile --candidate does: its runs take the plan's definitions and the deployment record's lineage, and the workload the tool states is checked against the profile's. Choose… in both takes a file out again." }</p>
                <div class="scroll" tabindex="0" role="region" aria-label="Files to place">
                <table id="placing-table">
                    <thead><tr><th>{ "file" }</th><th>{ "profile" }</th><th>{ "candidate" }</th><th>{ "now" }</th></tr></thead>
                    <tbody>{ for a.files.iter().map(|f| row(a, f, &props.on_place)) }</tbody>
                </table>
                </div>
        </section>
    }
}
