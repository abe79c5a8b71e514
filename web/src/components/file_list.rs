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
    html! {
        <section class="files" aria-label="Loaded files">
            <h2>{ "Files" }</h2>
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
        </section>
    }
}
