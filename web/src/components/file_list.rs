//! The loaded files with their kind and ✓, or their specific error.

use yew::prelude::*;

use crate::state::{Entry, Status};

/// Properties of [`FileList`].
#[derive(Properties, PartialEq)]
pub struct Props {
    /// Files in the order given.
    pub entries: Vec<Entry>,
}

/// The list of files.
#[function_component(FileList)]
pub fn file_list(props: &Props) -> Html {
    if props.entries.is_empty() {
        return html! {};
    }
    let bad = props
        .entries
        .iter()
        .filter(|e| matches!(e.status, Status::Failed(_)))
        .count();
    let busy = props.entries.iter().any(|e| e.status == Status::Loading);
    let ok = props.entries.len() - bad;
    let status = match (bad, busy) {
        (_, true) => format!("Files: loading ({} so far)", props.entries.len()),
        (0, false) => format!("Files: {ok} loaded ✓"),
        (b, false) => format!("Files: {ok} loaded, {b} refused ✗"),
    };
    // One status line when all is well; the list opens by itself when a file is refused.
    html! {
        <section class="files" aria-label="Loaded files">
            <details open={bad > 0}>
            <summary id="files-status">{ status }</summary>
            <ul id="file-list">
                { for props.entries.iter().map(|e| {
                    let (class, mark, detail) = match &e.status {
                        Status::Loading => ("loading", "…", format!("reading {:.1} MB", e.size as f64 / 1e6)),
                        Status::Loaded(kind) => ("ok", "✓", kind.clone()),
                        Status::Failed(err) => ("bad", "✗", err.clone()),
                    };
                    html! {
                        <li class={classes!("file", class)} data-name={e.name.clone()}>
                            <span class="mark" aria-hidden="true">{ mark }</span>
                            <span class="name">{ e.name.clone() }</span>
                            <span class="detail">{ detail }</span>
                        </li>
                    }
                }) }
            </ul>
            </details>
        </section>
    }
}
