//! Loading and sharing: Browse, Load example, Download report, Copy summary, Clear.

use yew::prelude::*;

use crate::protocol::Side;

/// Properties of [`Toolbar`].
#[derive(Properties, PartialEq)]
pub struct Props {
    /// Files chosen with the file picker.
    pub on_files: Callback<web_sys::FileList>,
    /// Load the example set.
    pub on_example: Callback<()>,
    /// Save the self-contained report.
    pub on_download: Callback<()>,
    /// Copy the Markdown verdict table (or the comparison).
    pub on_copy: Callback<()>,
    /// Whether there is something to copy.
    pub can_copy: bool,
    /// Compare mode: the collection new files join (`None`: off).
    pub side: Option<Side>,
    /// Compare mode or its side changed.
    pub on_side: Callback<Option<Side>>,
    /// Forget every file.
    pub on_clear: Callback<()>,
    /// Whether there is an analysis to share.
    pub has_report: bool,
    /// Whether this page is a downloaded report (no loading there).
    pub embedded: bool,
    /// Feedback of the last share action.
    pub status: Option<String>,
    /// `Some(on)` when the analysis has reruns of a candidate: the "Pool reruns" check box.
    pub pool: Option<bool>,
    /// The check box changed.
    pub on_pool: Callback<bool>,
    /// Whether a downloaded report carries the raw files (else the analysis and chart data).
    pub raw: bool,
    /// That check box changed.
    pub on_raw: Callback<bool>,
}

/// The toolbar.
#[function_component(Toolbar)]
pub fn toolbar(props: &Props) -> Html {
    let input = use_node_ref();
    let folder = use_node_ref();
    let click = |r: &NodeRef| {
        let r = r.clone();
        Callback::from(move |_| {
            if let Some(el) = r.cast::<web_sys::HtmlInputElement>() {
                el.click();
            }
        })
    };
    let browse = click(&input);
    let browse_folder = click(&folder);
    let changed = {
        let on_files = props.on_files.clone();
        Callback::from(move |e: Event| {
            if let Some(el) = e.target_dyn_into::<web_sys::HtmlInputElement>() {
                if let Some(files) = el.files() {
                    on_files.emit(files);
                }
                el.set_value("");
            }
        })
    };
    let ex = props.on_example.reform(|_| ());
    let dl = props.on_download.reform(|_| ());
    let cp = props.on_copy.reform(|_| ());
    let cl = props.on_clear.reform(|_| ());
    let checked = |e: Event| {
        e.target_dyn_into::<web_sys::HtmlInputElement>()
            .is_some_and(|el| el.checked())
    };
    let pool_changed = props.on_pool.reform(checked);
    let raw_changed = props.on_raw.reform(checked);
    let compare_changed = props
        .on_side
        .reform(move |e: Event| checked(e).then_some(Side::Before));
    let to = |s: Side| props.on_side.reform(move |_: Event| Some(s));
    html! {
        <nav class="toolbar" aria-label="Actions">
            if !props.embedded {
                <input type="file" id="file-input" ref={input} multiple=true accept=".json,.jsonl,.csv,.yaml,.yml" onchange={changed.clone()} hidden=true />
                <button id="browse" onclick={browse}>{ "Browse…" }</button>
                // A whole results directory (a sharded run's tree, an AIPerf artifact
                // directory): its *.json and *.jsonl files, each named by its path in it.
                <input type="file" id="folder-input" ref={folder} webkitdirectory=true multiple=true onchange={changed} hidden=true />
                <button id="browse-folder" onclick={browse_folder} title="Load every *.json and *.jsonl file under a directory">{ "Folder…" }</button>
                <button id="load-example" onclick={ex}>{ "Load example" }</button>
            }
            <button id="download-report" onclick={dl} disabled={!props.has_report}>{ "Download report" }</button>
            if !props.embedded {
                <label class="raw" title="A downloaded report carries the analysis and the chart data (small); check this to carry the raw result files instead, so the report recomputes every number when opened (as large as the files)">
                    <input type="checkbox" id="report-raw" checked={props.raw} onchange={raw_changed} />{ " with raw files" }
                </label>
            }
            <button id="copy-summary" onclick={cp} disabled={!props.can_copy}>{ "Copy summary" }</button>
            if !props.embedded {
                <label class="compare-mode" title="Compare two collections, before and after a change (sloscope compare): files join the side chosen here; the files already loaded become the before collection, and switching Compare off forgets every file">
                    <input type="checkbox" id="compare-mode" checked={props.side.is_some()} onchange={compare_changed} />{ " Compare" }
                </label>
                if let Some(side) = props.side {
                    <fieldset class="side" aria-label="New files join">
                        <label><input type="radio" name="side" id="side-before" checked={side == Side::Before} onchange={to(Side::Before)} />{ " before" }</label>
                        <label><input type="radio" name="side" id="side-after" checked={side == Side::After} onchange={to(Side::After)} />{ " after" }</label>
                    </fieldset>
                }
            }
            if !props.embedded {
                <button id="clear" class="quiet" onclick={cl}>{ "Clear" }</button>
            }
            if let Some(on) = props.pool {
                <label class="pool" title="Different runs of one candidate under one profile: pool their repeats into one run instead of excluding the candidate (sloscope analyze --pool-reruns)">
                    <input type="checkbox" id="pool-reruns" checked={on} onchange={pool_changed} />{ " Pool reruns" }
                </label>
            }
            if let Some(s) = &props.status {
                <span class="status" role="status" id="share-status">{ s.clone() }</span>
            }
        </nav>
    }
}
