//! The sharing actions: the Markdown summary copied, the report or the comparison downloaded
//! as one self-contained HTML file, and a downloaded comparison shown again.

use std::rc::Rc;

use wasm_bindgen_futures::{spawn_local, JsFuture};
use yew::prelude::*;

use crate::engine::Engine;
use crate::report;
use crate::state::{Action, State};

/// "Copy summary": the Markdown report, from the same view-model as the page.
pub(super) fn copy_summary(
    state: UseReducerHandle<State>,
    status: UseStateHandle<Option<String>>,
) -> Callback<()> {
    Callback::from(move |_| {
        let md = match (&state.comparison, &state.markdown) {
            (Some(c), _) => c.markdown.clone(),
            (None, Some(m)) => m.to_string(),
            (None, None) => return,
        };
        let status = status.clone();
        spawn_local(async move {
            let clip = gloo::utils::window().navigator().clipboard();
            match JsFuture::from(clip.write_text(&md)).await {
                Ok(_) => status.set(Some("Copied the Markdown summary".into())),
                Err(e) => status.set(Some(format!(
                    "Clipboard unavailable ({e:?}); use Download report"
                ))),
            }
        });
    })
}

/// "Download report": one self-contained HTML file with the analysis and chart data, or (when
/// asked) the raw files, re-analysed when it opens.
pub(super) fn download_report(
    state: UseReducerHandle<State>,
    engine: Rc<Engine>,
    raw: bool,
    status: UseStateHandle<Option<String>>,
) -> Callback<()> {
    Callback::from(move |_| {
        if state.side.is_some() {
            download_comparison(&state, status.clone());
            return;
        }
        let Some(posted) = state.posted.clone() else {
            return;
        };
        let listing: Vec<(String, String)> = state
            .entries
            .iter()
            .filter_map(|e| match &e.status {
                crate::state::Status::Loaded(kind) => Some((e.name.clone(), kind.clone())),
                _ => None,
            })
            .collect();
        let sources = raw.then(|| engine.sources());
        let pool = state.pool_reruns;
        let name = state.analysis.as_ref().map_or_else(
            || "sloscope-report.html".to_string(),
            |a| format!("{}.html", a.subject.file_stem()),
        );
        let status = status.clone();
        spawn_local(async move {
            status.set(Some("Building the report…".into()));
            let built = report::build(&posted, &listing, sources, "sloscope report", pool).await;
            match built {
                Ok(html) => match report::download_text(&html, &name, "text/html") {
                    Ok(()) => status.set(Some(format!(
                        "Saved {name} ({:.1} MB, {})",
                        html.len() as f64 / 1e6,
                        if raw {
                            "with the raw files"
                        } else {
                            "analysis and chart data only"
                        }
                    ))),
                    Err(e) => status.set(Some(format!("Could not save the report: {e}"))),
                },
                Err(e) => status.set(Some(format!("Could not build the report: {e}"))),
            }
        });
    })
}

/// A downloaded comparison, shown as its author's page showed it: the files of each side
/// listed, the comparison as its reader made it; nothing is read again.
pub(super) fn show_carried_comparison(
    dispatch: &yew::UseReducerDispatcher<State>,
    c: crate::report::CarriedComparison,
) {
    dispatch.dispatch(Action::SetSide(Some(crate::protocol::Side::Before)));
    for (i, (name, kind, side)) in c.listing.into_iter().enumerate() {
        let id = i as u32 + 1;
        dispatch.dispatch(Action::Loading {
            id,
            name,
            size: 0.0,
            side: Some(side),
        });
        dispatch.dispatch(Action::Done {
            id,
            result: Ok(kind),
        });
    }
    dispatch.dispatch(Action::Compared(Some(Rc::new(c.compared)), Some(c.posted)));
}

/// "Download report" in Compare mode: the comparison as the reader made it and the files of
/// each side (named after the after side's subject).
pub(super) fn download_comparison(state: &State, status: UseStateHandle<Option<String>>) {
    let Some(posted) = state.compared_posted.clone() else {
        return;
    };
    let listing: Vec<(String, String, crate::protocol::Side)> = state
        .entries
        .iter()
        .filter_map(|e| match (&e.status, e.side) {
            (crate::state::Status::Loaded(kind), Some(s)) => {
                Some((e.name.clone(), kind.clone(), s))
            }
            _ => None,
        })
        .collect();
    let pool = state.pool_reruns;
    spawn_local(async move {
        status.set(Some("Building the report…".into()));
        let name = "sloscope-comparison.html";
        match report::build_compared(&posted, &listing, "sloscope comparison", pool).await {
            Ok(html) => match report::download_text(&html, name, "text/html") {
                Ok(()) => status.set(Some(format!(
                    "Saved {name} ({:.1} MB, the comparison and its distributions)",
                    html.len() as f64 / 1e6
                ))),
                Err(e) => status.set(Some(format!("Could not save the report: {e}"))),
            },
            Err(e) => status.set(Some(format!("Could not build the report: {e}"))),
        }
    });
}
