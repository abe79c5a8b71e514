//! The loaded files with their kind and ✓, or their specific error; while a file is read, its
//! progress (bytes read, requests parsed) and a Cancel button.

use sloscope_core::view::Shown;
use yew::prelude::*;

use crate::state::{Entry, Status};

/// Properties of [`FileList`].
#[derive(Properties, PartialEq)]
pub struct Props {
    /// Files in the order given.
    pub entries: Vec<Entry>,
    /// Stop reading a file (by id).
    pub on_cancel: Callback<u32>,
    /// Files were read since the analysis shown.
    pub analysing: bool,
}

fn mb(bytes: f64) -> String {
    format!("{:.1} MB", bytes / 1e6)
}

/// The list of files.
#[function_component(FileList)]
pub fn file_list(props: &Props) -> Html {
    if props.entries.is_empty() {
        return html! {};
    }
    let count = |f: fn(&Status) -> bool| props.entries.iter().filter(|e| f(&e.status)).count();
    let bad = count(|s| matches!(s, Status::Failed(_)));
    let busy = count(|s| *s == Status::Loading);
    let cancelled = count(|s| *s == Status::Cancelled);
    let ok = count(|s| matches!(s, Status::Loaded(_)));
    let mut status = format!("Files: {ok} loaded");
    if busy > 0 {
        status.push_str(&format!(", {busy} loading"));
    }
    if cancelled > 0 {
        status.push_str(&format!(", {cancelled} cancelled"));
    }
    if bad > 0 {
        status.push_str(&format!(", {bad} refused ✗"));
    } else if props.analysing {
        status.push_str(" · analysing…");
    } else if busy == 0 {
        status.push_str(" ✓");
    }
    // One status line when all is well; the list opens by itself while files load or when one
    // is refused.
    html! {
        <section class="files" id="files" aria-label="Loaded files">
            <details open={bad > 0 || busy > 0}>
            <summary id="files-status">{ status }</summary>
            <ul id="file-list">
                { for props.entries.iter().map(|e| {
                    let (class, mark, detail) = match &e.status {
                        Status::Loading => ("loading", "…", match e.progress {
                            Some(p) => format!("read {} of {} · {} requests parsed", mb(p.bytes), mb(p.total), p.requests),
                            None => format!("reading {}", mb(e.size)),
                        }),
                        Status::Loaded(kind) => ("ok", "✓", kind.clone()),
                        Status::Failed(err) => ("bad", "✗", err.clone()),
                        Status::Cancelled => ("cancelled", "–", "cancelled: not analysed".to_string()),
                    };
                    // The name and the error come from the file: shown inert, as every string is.
                    let name = Shown::input(&e.name).to_string();
                    let detail = Shown::new(detail).to_string();
                    let id = e.id;
                    let cancel = props.on_cancel.reform(move |_: MouseEvent| id);
                    html! {
                        <li class={classes!("file", class)} data-name={e.name.clone()} data-side={e.side.map(|s| s.as_str())}>
                            <span class="mark" aria-hidden="true">{ mark }</span>
                            if let Some(side) = e.side {
                                <span class={classes!("side", side.as_str())}>{ side.as_str() }</span>
                            }
                            <span class="name">{ crate::components::profile::breakable(&name) }</span>
                            <span class="detail">{ detail }</span>
                            if e.status == Status::Loading {
                                if let Some(p) = e.progress {
                                    <progress max={p.total.to_string()} value={p.bytes.to_string()} aria-label={format!("reading {name}")}></progress>
                                }
                                <button class="cancel quiet" onclick={cancel} aria-label={format!("Cancel reading {name}")}>{ "Cancel" }</button>
                            }
                        </li>
                    }
                }) }
            </ul>
            </details>
        </section>
    }
}
