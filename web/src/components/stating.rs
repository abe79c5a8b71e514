//! SLOs stated in the page for other tools' files loaded without a plan: per file the profile
//! and candidate it measured, per profile the primary metric and the limits. The reader makes a
//! plan of it (`crate::engine::stated`), loaded like a dropped one; shown again with that plan
//! loaded, so the statement can be changed. Every name from a file is shown inert.

use std::rc::Rc;

use sloscope_core::input::{default_candidates, default_primary};
use sloscope_core::view::Shown;
use wasm_bindgen::JsCast;
use yew::prelude::*;

use crate::protocol::{Assignable, AssignableFile, StatedForm};

/// Profiles and places, as the page states them.
pub type Statement = (Vec<StatedForm>, Vec<(u32, String, String)>);

/// Properties of [`Stating`].
#[derive(Properties)]
pub struct Props {
    /// The files, and the statement in force (if a stated plan is loaded).
    pub assignable: Rc<Assignable>,
    /// Why the last statement made no plan.
    pub error: Option<String>,
    /// A statement made.
    pub on_state: Callback<Statement>,
}

impl PartialEq for Props {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.assignable, &other.assignable)
            && self.error == other.error
            && self.on_state == other.on_state
    }
}

const PROFILES: [&str; 3] = ["latency", "balanced", "throughput"];

/// Metrics a limit can be stated on here: name, words, unit, whether it is a floor.
const LIMITS: [(&str, &str, &str, bool); 6] = [
    ("ttft_p95_ms", "time to first token, p95", "ms", false),
    ("tpot_p95_ms", "time per output token, p95", "ms", false),
    ("e2e_p95_ms", "end-to-end time, p95", "ms", false),
    ("queue_wait_p95_ms", "wait before service, p95", "ms", false),
    ("throughput_tps", "output tokens per second", "tok/s", true),
    (
        "failure_rate",
        "share of requests that failed",
        "0–1",
        false,
    ),
];

fn element<T: JsCast>(id: &str) -> Option<T> {
    gloo::utils::document()
        .get_element_by_id(id)
        .and_then(|e| e.dyn_into::<T>().ok())
}

fn value(id: &str) -> String {
    element::<web_sys::HtmlSelectElement>(id)
        .map(|s| s.value())
        .or_else(|| element::<web_sys::HtmlInputElement>(id).map(|i| i.value()))
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// What the form says, read from its fields: the profiles some file was given, and the places.
fn read(a: &Assignable) -> Result<Statement, String> {
    let mut places = Vec::new();
    for f in &a.files {
        let profile = value(&format!("state-{}-profile", f.id));
        if profile.is_empty() {
            continue;
        }
        places.push((f.id, profile, value(&format!("state-{}-candidate", f.id))));
    }
    let mut profiles = Vec::new();
    for p in PROFILES
        .iter()
        .filter(|p| places.iter().any(|x| x.1 == **p))
    {
        let limits = LIMITS
            .iter()
            .map(|(metric, ..)| (metric.to_string(), value(&format!("state-{p}-{metric}"))))
            .filter(|(_, text)| !text.is_empty())
            .collect();
        profiles.push(StatedForm {
            name: p.to_string(),
            primary_metric: value(&format!("state-{p}-primary")),
            limits,
        });
    }
    if places.is_empty() {
        return Err("no file is given a profile: choose the profile each file measured".into());
    }
    Ok((profiles, places))
}

/// Each file's default candidate name (the core's: its stem, distinct from the others' and
/// from those placed).
fn default_names(files: &[AssignableFile]) -> Vec<String> {
    let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
    let taken: Vec<&str> = files
        .iter()
        .filter_map(|f| f.placed.as_ref().map(|p| p.1.as_str()))
        .collect();
    let made = default_candidates(&names, &[]);
    // A placed file keeps its name; the others avoid every placed one.
    files
        .iter()
        .zip(made)
        .map(|(f, m)| match &f.placed {
            Some(p) => p.1.clone(),
            None if taken.contains(&m.as_str()) => default_candidates(&[f.name.as_str()], &taken)
                .pop()
                .unwrap_or(m),
            None => m,
        })
        .collect()
}

fn file_row(f: &AssignableFile, default: String) -> Html {
    let name = Shown::new(&f.name).to_string();
    let (profile, candidate) = match &f.placed {
        Some((p, c)) => (p.clone(), c.clone()),
        None => (f.guessed.clone(), default),
    };
    html! {
        <tr data-file={f.id.to_string()}>
            <td data-label="file">{ name.clone() }</td>
            <td data-label="profile">
                <select id={format!("state-{}-profile", f.id)} aria-label={format!("profile {name} measured")}>
                    <option value="" selected={profile.is_empty()}>{ "not judged" }</option>
                    { for PROFILES.iter().map(|p| html! { <option value={*p} selected={profile == *p}>{ *p }</option> }) }
                </select>
            </td>
            <td data-label="candidate">
                <input type="text" id={format!("state-{}-candidate", f.id)} value={candidate} aria-label={format!("candidate {name} measured")} spellcheck="false" />
            </td>
            <td class="placed" data-label="now">
                { match &f.placed {
                    Some((p, c)) => format!("judged as {} · {}", Shown::new(p), Shown::new(c)),
                    None => "summaries only".to_string(),
                } }
                { for f.said.iter().map(|s| html! { <div class="small">{ Shown::new(s).to_string() }</div> }) }
            </td>
        </tr>
    }
}

fn profile_fields(p: &str, stated: Option<&StatedForm>) -> Html {
    let primary = stated.map_or(default_primary(p), |s| s.primary_metric.as_str());
    let limit = |m: &str| -> String {
        match stated {
            Some(s) => s
                .limits
                .iter()
                .find(|l| l.0 == m)
                .map(|l| l.1.clone())
                .unwrap_or_default(),
            None if m == "failure_rate" => "0".into(),
            None => String::new(),
        }
    };
    html! {
        <fieldset id={format!("state-{p}")}>
            <legend>{ p }</legend>
            <label>{ "ranked by " }
                <select id={format!("state-{p}-primary")}>
                    { for LIMITS.iter().take(5).map(|(m, w, ..)| html! { <option value={*m} selected={primary == *m}>{ *w }</option> }) }
                </select>
            </label>
            { for LIMITS.iter().map(|(m, w, unit, floor)| html! {
                <label title={*m}>{ format!("{w} {} ", if *floor { "≥" } else { "≤" }) }
                    <input type="text" inputmode="decimal" size="7" id={format!("state-{p}-{m}")} value={limit(m)} aria-label={format!("{p}: {w} ({m}) limit, {unit}")} />
                    <span class="unit">{ format!("\u{a0}{unit}") }</span>
                </label>
            }) }
        </fieldset>
    }
}

/// The statement form.
#[function_component(Stating)]
pub fn stating(props: &Props) -> Html {
    let a = props.assignable.clone();
    let stated = a.stated.clone().unwrap_or_default();
    let local = use_state(|| None::<String>);
    let on_click = {
        let (a, on_state, local) = (a.clone(), props.on_state.clone(), local.clone());
        Callback::from(move |_: MouseEvent| match read(&a) {
            Ok(s) => {
                local.set(None);
                on_state.emit(s)
            }
            Err(e) => local.set(Some(e)),
        })
    };
    let error = (*local).clone().or_else(|| props.error.clone());
    html! {
        <section class="placing stating" id="placing" aria-label="Other tools' files: state the SLOs">
            <h2>{ "Other tools' files: state what they measured and the SLOs" }</h2>
            <p id="placing-needs-plan">{ "These files came without a plan, so they get summaries only. Drop the plan.json they belong to, or state here the profile and candidate each file measured and the SLOs to judge them by: the page makes a plan of it (plan-stated-in-the-page.json, kept with your files and in a downloaded report). A profile's workload is the one its first file states; every other file under it is held to that workload. A verdict also needs the lineage records (deployment, quality gate, float baseline): without them the answer is provisional." }</p>
            <div class="scroll" tabindex="0" role="region" aria-label="Files to judge">
            <table id="state-files">
                <thead><tr><th>{ "file" }</th><th>{ "profile" }</th><th>{ "candidate" }</th><th>{ "now" }</th></tr></thead>
                <tbody>{ for a.files.iter().zip(default_names(&a.files)).map(|(f, d)| file_row(f, d)) }</tbody>
            </table>
            </div>
            <div class="state-profiles">
                { for PROFILES.iter().map(|p| profile_fields(p, stated.iter().find(|s| s.name == *p))) }
            </div>
            <p class="small">{ "Only the profiles some file is given are judged; a limit left empty is not an SLO. Throughput is a floor, the others ceilings." }</p>
            <button type="button" id="state-judge" onclick={on_click}>{ if stated.is_empty() { "Judge under these SLOs" } else { "Judge again" } }</button>
            if let Some(e) = error {
                <p class="warn" id="state-error" role="alert">
                    { Shown::new(&e).to_string() }
                    if !stated.is_empty() {
                        { " — nothing changed: the verdicts above are still those of the SLOs stated before (shown here as you changed them; Judge again once they make a plan)." }
                    }
                </p>
            }
        </section>
    }
}
