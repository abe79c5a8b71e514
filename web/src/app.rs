//! The page: a window-wide drop zone, Browse and Load-example, the file list, the lineage panel,
//! a section per profile, and the sharing actions. Files never leave the browser.

use std::cell::Cell;
use std::rc::Rc;

use gloo::events::{EventListener, EventListenerOptions};
use sloscope_core::view::ReportView;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::{spawn_local, JsFuture};
use yew::prelude::*;

use crate::components::canvas::{drawn, Chart, DrawFn};
use crate::components::file_list::FileList;
use crate::components::lineage::Lineage;
use crate::components::profile::Profile;
use crate::components::toolbar::Toolbar;
use crate::load::{self, MAX_FILE_BYTES};
use crate::report;
use crate::state::{Action, State};
use sloscope_core::Analysis;

/// Reads and parses files one after another, yielding to the browser between them so the page
/// keeps painting progress.
fn load_files(files: web_sys::FileList, dispatch: UseReducerDispatcher<State>) {
    let list: Vec<web_sys::File> = (0..files.length()).filter_map(|i| files.get(i)).collect();
    for f in &list {
        dispatch.dispatch(Action::Loading {
            name: f.name(),
            size: f.size() as usize,
        });
    }
    spawn_local(async move {
        for f in list {
            let name = f.name();
            let size = f.size() as usize;
            gloo::timers::future::TimeoutFuture::new(0).await;
            let result = if size > MAX_FILE_BYTES {
                Err(load::too_big(&name, size))
            } else {
                let blob = gloo::file::File::from(f);
                match gloo::file::futures::read_as_bytes(&blob).await {
                    Ok(bytes) => {
                        gloo::timers::future::TimeoutFuture::new(0).await;
                        load::parse(&name, bytes)
                    }
                    Err(e) => Err(format!("{name}: cannot read: {e}")),
                }
            };
            dispatch.dispatch(Action::Loaded { name, result });
        }
    });
}

fn load_texts(files: Vec<(String, String)>, dispatch: UseReducerDispatcher<State>) {
    for (name, text) in &files {
        dispatch.dispatch(Action::Loading {
            name: name.clone(),
            size: text.len(),
        });
    }
    spawn_local(async move {
        for (name, text) in files {
            gloo::timers::future::TimeoutFuture::new(0).await;
            let result = load::parse(&name, text.into_bytes());
            dispatch.dispatch(Action::Loaded { name, result });
        }
    });
}

/// The report page.
#[function_component(App)]
pub fn app() -> Html {
    let state = use_reducer(State::default);
    let dragging = use_state(|| false);
    let status = use_state(|| None::<String>);
    let embedded = use_memo((), |_| report::embedded_files());
    {
        let dispatch = state.dispatcher();
        let embedded = embedded.clone();
        use_effect_with((), move |_| {
            if report::embedded_pool_reruns() {
                dispatch.dispatch(Action::SetPool(true));
            }
            if let Some(files) = (*embedded).clone().or_else(report::preloaded_files) {
                load_texts(files, dispatch);
            }
        });
    }
    use_window_drop(state.dispatcher(), dragging.clone(), embedded.is_some());
    let on_files = {
        let dispatch = state.dispatcher();
        Callback::from(move |files: web_sys::FileList| load_files(files, dispatch.clone()))
    };
    let on_example = {
        let dispatch = state.dispatcher();
        Callback::from(move |_| {
            let files = load::EXAMPLES
                .iter()
                .map(|(n, t)| (format!("examples/{n}"), t.to_string()))
                .collect();
            load_texts(files, dispatch.clone())
        })
    };
    let on_clear = {
        let dispatch = state.dispatcher();
        let status = status.clone();
        Callback::from(move |_| {
            status.set(None);
            dispatch.dispatch(Action::Clear)
        })
    };
    let on_pool = {
        let dispatch = state.dispatcher();
        Callback::from(move |on: bool| dispatch.dispatch(Action::SetPool(on)))
    };
    let pool = (state.has_reruns() || state.pool_reruns).then_some(state.pool_reruns);
    let on_copy = copy_summary(state.clone(), status.clone());
    let on_download = download_report(state.clone(), status.clone());
    let generation = state.docs.len();
    let analysis = state.analysis.clone();
    html! {
        <>
        <header>
            <h1>{ "sloscope" }<span class="sub">{ " — serving profiles of a quantized LLM, judged against SLOs" }</span></h1>
            <p class="privacy">{ "Files never leave your browser: this page makes no network requests." }</p>
        </header>
        <Toolbar on_files={on_files} on_example={on_example} on_download={on_download} on_copy={on_copy} on_clear={on_clear}
            has_report={analysis.is_some()} embedded={embedded.is_some()} status={(*status).clone()}
            pool={pool} on_pool={on_pool} />
        if *dragging {
            <div class="drop-overlay" id="drop-overlay" aria-hidden="true"><div>{ "Drop result files to analyse them" }</div></div>
        }
        <main>
            if state.entries.is_empty() {
                <section class="landing" id="drop">
                    <p>{ "Drop sloscope result files anywhere on this page — run files, the plan, the quality-gate, float-baseline and deployment records, or a whole results folder's files — or use Browse. Load example shows a real collection against llama-server on CPU." }</p>
                    <p class="small">{ format!("Files up to {} MB each; larger runs: sloscope analyze.", MAX_FILE_BYTES / (1024 * 1024)) }</p>
                </section>
            }
            if let (Some(a), Some(v)) = (analysis.clone(), state.view.clone()) {
                { overview(&a, &v, generation) }
            }
            <FileList entries={state.entries.clone()} />
            if let (Some(a), Some(v)) = (analysis.clone(), state.view.clone()) {
                <Lineage report={a.lineage.clone()} view={v.lineage.clone()} />
                { for a.profiles.iter().zip(&v.profiles).map(|(p, pv)| html! {
                    <Profile report={Rc::new(p.clone())} view={Rc::new(pv.clone())} generation={generation} />
                }) }
            }
        </main>
        <footer>{ format!("sloscope {} · numbers recomputed in your browser from the raw per-request data", env!("CARGO_PKG_VERSION")) }</footer>
        </>
    }
}

/// Window-wide drop zone. A depth counter keeps the overlay from flickering as the pointer
/// crosses child elements; a self-contained report (`is_report`) takes no new files.
#[hook]
fn use_window_drop(
    dispatch: UseReducerDispatcher<State>,
    dragging: UseStateHandle<bool>,
    is_report: bool,
) {
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
                load_files(files, dispatch.clone());
            }
        });
        move || drop_all(vec![enter, leave, over, drop])
    });
}

/// "Copy summary": the Markdown report, from the same view-model as the page.
fn copy_summary(
    state: UseReducerHandle<State>,
    status: UseStateHandle<Option<String>>,
) -> Callback<()> {
    Callback::from(move |_| {
        let Some(a) = state.analysis.clone() else {
            return;
        };
        let md = sloscope_core::render::markdown(&a);
        let status = status.clone();
        spawn_local(async move {
            let clip = gloo::utils::window().navigator().clipboard();
            match JsFuture::from(clip.write_text(&md)).await {
                Ok(_) => status.set(Some("Copied the Markdown verdict table".into())),
                Err(e) => status.set(Some(format!(
                    "Clipboard unavailable ({e:?}); use Download report"
                ))),
            }
        });
    })
}

/// "Download report": one self-contained HTML file.
fn download_report(
    state: UseReducerHandle<State>,
    status: UseStateHandle<Option<String>>,
) -> Callback<()> {
    Callback::from(move |_| {
        let docs = state.docs.clone();
        let pool = state.pool_reruns;
        let status = status.clone();
        spawn_local(async move {
            status.set(Some("Building the report…".into()));
            match report::build(&docs, "sloscope report", pool).await {
                Ok(html) => {
                    match report::download_text(&html, "sloscope-report.html", "text/html") {
                        Ok(()) => status.set(Some(format!(
                            "Saved sloscope-report.html ({:.1} MB)",
                            html.len() as f64 / 1e6
                        ))),
                        Err(e) => status.set(Some(format!("Could not save the report: {e}"))),
                    }
                }
                Err(e) => status.set(Some(format!("Could not build the report: {e}"))),
            }
        });
    })
}

/// The verdict cards and the cross-profile chart.
/// The answer first: per profile its decision, configuration, primary metric with interval,
/// binding SLO and what weakens the verdict — all from the view-model, as the CLI prints it.
fn overview(a: &Rc<Analysis>, v: &ReportView, generation: usize) -> Html {
    html! {
        <section class="overview" aria-label="Verdicts">
            <h2>{ "Verdicts" }</h2>
            if !v.caveats.is_empty() {
                <ul class="caveats" id="report-caveats">{ for v.caveats.iter().map(|c| html! { <li>{ format!("! {c}") }</li> }) }</ul>
            }
            <div class="cards">
            { for a.profiles.iter().zip(&v.profiles).map(|(p, pv)| html! {
                <a class={classes!("card", if p.summaries_only { "none" } else { p.decision.as_str() })} href={format!("#profile-{}", p.profile)} data-profile={p.profile.clone()}>
                    <span class="profile-name">{ p.profile.clone() }</span>
                    <span class="decision">{ pv.decision_label.clone() }</span>
                    <span class="recommended">{ p.recommended_name.clone().unwrap_or_else(|| "—".into()) }</span>
                    <span class="headline">{ pv.headline.clone() }</span>
                    if !pv.caveats.is_empty() {
                        <ul class="caveats">{ for pv.caveats.iter().map(|c| html! { <li>{ format!("! {c}") }</li> }) }</ul>
                    }
                </a>
            }) }
            </div>
            { for a.notes.iter().map(|n| html! { <p class="warn">{ format!("note: {n}") }</p> }) }
            if a.profiles.len() > 1 {
                { {
                    let a2 = a.clone();
                    let draw: DrawFn = Rc::new(move |root| drawn(crate::charts::tpot_by_concurrency(root, &a2)));
                    html! { <Chart id="chart-tpot-concurrency" label="TPOT p95 per candidate by concurrency" generation={generation} draw={draw} /> }
                } }
            }
        </section>
    }
}

fn drop_all(listeners: Vec<EventListener>) {
    drop(listeners);
}
