//! The page: a window-wide drop zone, Browse and Load-example, the file list, the lineage panel,
//! a section per profile, and the sharing actions. Files never leave the browser.

use std::cell::Cell;
use std::rc::Rc;

use gloo::events::{EventListener, EventListenerOptions};
use sloscope_core::view::ReportView;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::spawn_local;
use yew::prelude::*;

use crate::components::canvas::{drawn, Chart, DrawFn};
use crate::components::compare::{sides, Compare};
use crate::components::file_list::FileList;
use crate::components::lineage::Lineage;
use crate::components::placing::Placing;
use crate::components::profile::Profile;
use crate::components::shards::Shards;
use crate::components::stating::Stating;
use crate::components::toolbar::Toolbar;
use crate::engine::Engine;
use crate::report;
use crate::state::State;
use sloscope_core::Analysis;

pub mod print;
mod share;
mod start;

use share::{copy_summary, download_report};
use start::{load_files, load_texts, use_start};

/// The report page.
#[function_component(App)]
pub fn app() -> Html {
    let state = use_reducer(State::default);
    let dragging = use_state(|| false);
    let status = use_state(|| None::<String>);
    let embedded = use_memo((), |_| report::embedded());
    // A downloaded report with its raw files carries the full reader worker inlined; one with
    // the analysis reads nothing and starts none. The page starts the lean reader first.
    let engine = {
        let dispatch = state.dispatcher();
        let url = match embedded.as_ref() {
            Some(e) if e.analysis.is_some() => None,
            Some(e) => e.worker_url().map(|full| (full, None)),
            None => Some((
                crate::engine::LEAN_WORKER_URL.to_string(),
                Some(crate::engine::WORKER_URL.to_string()),
            )),
        };
        (*use_memo((), move |_| Engine::new(dispatch, url))).clone()
    };
    use_start(
        state.dispatcher(),
        embedded.clone(),
        engine.clone(),
        status.clone(),
    );
    use_window_drop(engine.clone(), dragging.clone(), embedded.is_some());
    use_print_opens_details();
    let Handlers {
        on_files,
        on_example,
        on_clear,
        on_cancel,
        on_pool,
        on_side,
        on_place,
        on_state,
    } = handlers(&engine, &status);
    let pool = (state.has_reruns() || state.pool_reruns).then_some(state.pool_reruns);
    let on_copy = copy_summary(state.clone(), status.clone());
    let raw = use_state(|| false);
    let on_download = download_report(state.clone(), engine.clone(), *raw, status.clone());
    let on_raw = {
        let raw = raw.clone();
        Callback::from(move |on: bool| raw.set(on))
    };
    let generation = state.generation as usize;
    let analysis = state.analysis.clone();
    html! {
        <>
        <header class={classes!(analysis.is_some().then_some("loaded"))}>
            <h1>{ "sloscope" }<span class="sub">{ " — serving profiles of a quantized LLM, judged against SLOs" }</span></h1>
            if embedded.is_some() {
                <p class="privacy">{ "A saved report: its data is inside this file, and it fetches nothing." }</p>
            } else {
                <p class="privacy">{ "Files never leave your browser" }<span class="more">{ ": nothing is uploaded; the page fetches only its own files and keeps what you load in this browser until Clear" }</span>{ "." }</p>
            }
        </header>
        <Toolbar on_files={on_files} on_example={on_example} on_download={on_download} on_copy={on_copy} on_clear={on_clear}
            has_report={analysis.is_some() || state.compared_posted.is_some()} can_copy={analysis.is_some() || state.comparison.is_some()} side={state.side} on_side={on_side.clone()} embedded={embedded.is_some()} status={(*status).clone()}
            pool={pool} on_pool={on_pool} raw={*raw} on_raw={on_raw} />
        if *dragging {
            <div class="drop-overlay" id="drop-overlay" aria-hidden="true"><div>{ "Drop result files to analyse them" }</div></div>
        }
        <main data-ready={state.settled().to_string()} data-generation={state.generation.to_string()} data-reader-memory-bytes={state.reader_memory_bytes.to_string()} data-analysis-ms={state.analysis_ms.to_string()} aria-busy={(!state.settled()).to_string()}>
            if state.entries.is_empty() {
                <section class="landing" id="drop">
                    <p>{ "Drop sloscope result files anywhere on this page — run files, the plan, the quality-gate, float-baseline and deployment records, or a whole results folder's files — or use Browse. Load example shows a real collection against llama-server on CPU." }</p>
                    <p class="small">{ "Files are read in the background, in chunks: a million-request run takes a few seconds, and the page stays usable (each file has a Cancel button while it loads)." }</p>
                </section>
            }
            if let (Some(a), Some(v)) = (analysis.clone(), state.view.clone()) {
                { overview(&a, &v, generation) }
            }
            if let Some(a) = state.assignable.clone().filter(|_| embedded.is_none()) {
                if a.profiles.is_empty() || a.stated.is_some() {
                    <Stating assignable={a} error={state.stated_error.clone()} on_state={on_state} />
                } else {
                    <Placing assignable={a} on_place={on_place} />
                }
            }
            if let Some(side) = state.side {
                if embedded.is_none() {
                    { sides(state.side_counts(), side, &on_side) }
                }
                <Compare comparison={state.comparison.clone()} counts={state.side_counts()} generation={generation} />
            }
            if let Some(n) = &state.notice {
                <p class="warn" id="notice">{ n.clone() }</p>
            }
            if let Some(e) = (*embedded).as_ref().filter(|e| e.analysis.is_some() || e.comparison.is_some()) {
                <p class="small" id="report-data">{ e.describe() }</p>
            }
            <FileList entries={state.entries.clone()} on_cancel={on_cancel} analysing={state.analysing} />
            if let Some(v) = state.view.clone().filter(|_| analysis.is_some()) {
                <Lineage view={v.lineage.clone()} />
                if let Some(s) = v.shards.clone() {
                    <Shards view={s} />
                }
                { for state.profiles.iter().map(|(p, pv)| html! {
                    <Profile report={p.clone()} view={pv.clone()} generation={generation} />
                }) }
            }
        </main>
        <footer>{ format!("sloscope {} · numbers recomputed in your browser from the raw per-request data", env!("CARGO_PKG_VERSION")) }</footer>
        </>
    }
}

/// What the page's controls do, each handed to the reader.
struct Handlers {
    on_files: Callback<web_sys::FileList>,
    on_example: Callback<()>,
    on_clear: Callback<()>,
    on_cancel: Callback<u32>,
    on_pool: Callback<bool>,
    on_side: Callback<Option<crate::protocol::Side>>,
    on_place: Callback<(u32, String, String)>,
    on_state: Callback<crate::components::stating::Statement>,
}

fn handlers(engine: &Rc<Engine>, status: &UseStateHandle<Option<String>>) -> Handlers {
    let on_files = {
        let engine = engine.clone();
        let status = status.clone();
        Callback::from(move |files: web_sys::FileList| {
            if let Some(said) = load_files(files, &engine) {
                status.set(Some(said));
            }
        })
    };
    let on_example = {
        let engine = engine.clone();
        let status = status.clone();
        Callback::from(move |_| {
            let engine = engine.clone();
            let status = status.clone();
            spawn_local(async move {
                match crate::examples::fetch().await {
                    Ok(files) => load_texts(files, &engine),
                    Err(e) => status.set(Some(e)),
                }
            })
        })
    };
    let on_clear = {
        let engine = engine.clone();
        let status = status.clone();
        Callback::from(move |_| {
            status.set(None);
            crate::components::canvas::forget_hidden();
            engine.clear()
        })
    };
    let on_cancel = {
        let engine = engine.clone();
        Callback::from(move |id: u32| engine.cancel(id))
    };
    let on_pool = {
        let engine = engine.clone();
        Callback::from(move |on: bool| engine.set_pool(on))
    };
    let on_side = {
        let engine = engine.clone();
        Callback::from(move |s| engine.set_side(s))
    };
    let on_place = {
        let engine = engine.clone();
        Callback::from(move |(id, p, c): (u32, String, String)| engine.place(id, p, c))
    };
    let on_state = {
        let engine = engine.clone();
        Callback::from(move |(profiles, places)| engine.state(profiles, places))
    };
    Handlers {
        on_files,
        on_example,
        on_clear,
        on_cancel,
        on_pool,
        on_side,
        on_place,
        on_state,
    }
}

/// A printed page shows every folded panel (the lineage table, the file list, notes): Chromium
/// does not open `<details>` for print whatever the CSS says, so they are opened before printing
/// and folded again after.
#[hook]
fn use_print_opens_details() {
    use_effect_with((), move |_| {
        let w = gloo::utils::window();
        let each = |f: &dyn Fn(&web_sys::Element)| {
            if let Ok(list) = gloo::utils::document().query_selector_all("details") {
                for i in 0..list.length() {
                    if let Some(el) = list
                        .get(i)
                        .and_then(|n| n.dyn_into::<web_sys::Element>().ok())
                    {
                        f(&el);
                    }
                }
            }
        };
        let before = EventListener::new(&w, "beforeprint", move |_| {
            each(&|el| {
                if !el.has_attribute("open") {
                    let _ = el.set_attribute("open", "");
                    let _ = el.set_attribute("data-print-opened", "");
                }
            })
        });
        let after = EventListener::new(&w, "afterprint", move |_| {
            each(&|el| {
                if el.has_attribute("data-print-opened") {
                    let _ = el.remove_attribute("open");
                    let _ = el.remove_attribute("data-print-opened");
                }
            })
        });
        move || drop_all(vec![before, after])
    });
}

/// The compare side whose drop target a drop landed on (compare mode's two targets).
fn dropped_on_side(e: &web_sys::Event) -> Option<crate::protocol::Side> {
    let zone = e
        .target()?
        .dyn_into::<web_sys::Element>()
        .ok()?
        .closest("[data-drop-side]")
        .ok()??;
    match zone.get_attribute("data-drop-side")?.as_str() {
        "before" => Some(crate::protocol::Side::Before),
        "after" => Some(crate::protocol::Side::After),
        _ => None,
    }
}

/// Window-wide drop zone. A depth counter keeps the overlay from flickering as the pointer
/// crosses child elements; a self-contained report (`is_report`) takes no new files.
#[hook]
fn use_window_drop(engine: Rc<Engine>, dragging: UseStateHandle<bool>, is_report: bool) {
    use_effect_with((), move |_| {
        let depth = Rc::new(Cell::new(0i32));
        let w = gloo::utils::window();
        let opts = EventListenerOptions::enable_prevent_default();
        let (d1, g1) = (depth.clone(), dragging.clone());
        let enter = EventListener::new_with_options(&w, "dragenter", opts, move |e| {
            e.prevent_default();
            d1.set(d1.get() + 1);
            if !is_report {
                g1.set(true);
            }
        });
        let (d2, g2) = (depth.clone(), dragging.clone());
        let leave = EventListener::new_with_options(&w, "dragleave", opts, move |_| {
            d2.set((d2.get() - 1).max(0));
            if d2.get() == 0 {
                g2.set(false);
            }
        });
        let over =
            EventListener::new_with_options(&w, "dragover", opts, move |e| e.prevent_default());
        let (d3, g3) = (depth, dragging);
        let drop = EventListener::new_with_options(&w, "drop", opts, move |e| {
            e.prevent_default();
            d3.set(0);
            g3.set(false);
            if is_report {
                return;
            }
            if let Some(files) = e
                .dyn_ref::<web_sys::DragEvent>()
                .and_then(|d| d.data_transfer())
                .and_then(|t| t.files())
            {
                if let Some(side) = dropped_on_side(e) {
                    engine.set_side(Some(side));
                }
                load_files(files, &engine);
            }
        });
        // Said on the document once the window takes drops, so a test (or a script) that drops
        // files does not drop them before anything listens.
        if let Some(root) = gloo::utils::document().document_element() {
            let _ = root.set_attribute("data-drop-ready", "true");
        }
        move || drop_all(vec![enter, leave, over, drop])
    });
}

/// The verdict cards and the cross-profile chart.
/// The answer first: per profile its decision, configuration, primary metric with interval,
/// binding SLO and what weakens the verdict — all from the view-model, as the CLI prints it.
fn overview(a: &Rc<Analysis>, v: &ReportView, generation: usize) -> Html {
    html! {
        <section class="overview" id="verdicts" aria-label="Verdicts">
            <h2>{ "Verdicts" }</h2>
            if !v.subject.is_empty() {
                <style id="print-header">{ print::page_rule(&v.subject, &print::today()) }</style>
                <dl class="subject" id="subject" aria-label="What is judged">
                    { for v.subject.iter().map(|l| html! {
                        <div><dt>{ l.label.to_string() }</dt><dd>{ l.value.to_string() }</dd></div>
                    }) }
                </dl>
            }
            if !v.caveats.is_empty() {
                <ul class="caveats" id="report-caveats">{ for v.caveats.iter().map(|c| html! { <li>{ format!("! {c}") }</li> }) }</ul>
            }
            <div class="cards">
            { for a.profiles.iter().zip(&v.profiles).map(|(p, pv)| html! {
                <a class={classes!("card", if p.summaries_only { "none" } else { p.decision.as_str() })} href={format!("#profile-{}", p.profile)} data-profile={p.profile.clone()}>
                    <span class="profile-name">{ p.profile.clone() }</span>
                    <span class="decision">{ pv.decision_label.to_string() }</span>
                    <span class="recommended">{ pv.recommended.to_string() }</span>
                    <span class="headline" title={pv.card_ids.to_string()}>{ pv.card_line.to_string() }</span>
                    if let Some(n) = &pv.next_step {
                        <span class="next">{ format!("Next: {n}") }</span>
                    }
                    if !pv.caveats.is_empty() {
                        <ul class="caveats">{ for pv.caveats.iter().map(|c| html! { <li>{ format!("! {c}") }</li> }) }</ul>
                    }
                </a>
            }) }
            { for v.unknown_profiles.iter().map(|u| html! {
                <div class="card unknown" data-profile={u.profile.to_string()}>
                    <span class="profile-name">{ u.profile.to_string() }</span>
                    <span class="decision">{ u.decision_label.to_string() }</span>
                    <span class="headline">{ u.line.to_string() }</span>
                </div>
            }) }
            </div>
            <details class="legend" id="legend">
                <summary>{ "What the verdicts mean" }</summary>
                <dl>{ for v.legend.iter().map(|l| html! { <div><dt>{ l.label.to_string() }</dt><dd>{ l.value.to_string() }</dd></div> }) }</dl>
            </details>
            { for v.notes.iter().map(|n| html! { <p class="warn">{ format!("note: {n}") }</p> }) }
            if !v.run_notes.is_empty() {
                <details class="shared-notes" id="shared-notes">
                    <summary>{ format!("Run notes shared by several profiles ({})", v.run_notes.len()) }</summary>
                    <ul>{ for v.run_notes.iter().map(|n| html! { <li>{ n.to_string() }</li> }) }</ul>
                </details>
            }
            <nav class="jump" id="page-nav" aria-label="On this page">
                <span class="small">{ "On this page: " }</span>
                { for v.profiles.iter().map(|pv| html! {
                    <a href={format!("#profile-{}", pv.profile)}>{ format!("{} profile", pv.profile) }</a>
                }) }
                <a href="#lineage">{ "lineage and quality gate" }</a>
                if v.shards.is_some() { <a href="#shards">{ "shards" }</a> }
                <a href="#files">{ "files" }</a>
            </nav>
            // Folded: one point per profile and workload is not a sweep, and decides nothing.
            if let Some(caption) = &v.across_caption {
                <details class="across"><summary>{ "Across profiles: TPOT p95 by concurrency (not a sweep; no verdict rests on it)" }</summary>
                { {
                    let a2 = a.clone();
                    let draw: DrawFn = Rc::new(move |root| drawn(crate::charts::tpot_by_concurrency(root, &a2)));
                    html! { <Chart id="chart-tpot-concurrency" label={caption.to_string()} generation={generation} draw={draw} /> }
                } }
                </details>
            }
        </section>
    }
}

fn drop_all(listeners: Vec<EventListener>) {
    drop(listeners);
}
